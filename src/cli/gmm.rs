//! `privmix gmm` and `privmix gmm sample`: the DP Gaussian-mixture release and sampling
//! from a saved model.

use super::{print_json, rng_for, same_file, Staged};
use clap::{Args, Subcommand, ValueEnum};
use privmix::api::{self, GmmParams, GmmRequest, SampleCount};
use privmix::data::read_csv_path;
use privmix::error::{Error, Result};
use privmix::mechanisms::gmm::{self, Adjacency, GmmModel};
use privmix::rng::ReleaseRng;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The noise of the release.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum NoiseArg {
    /// Algorithm 1.
    Optimized,
    IidGaussian,
    IidLaplace,
    ColoredGaussian,
}

/// Neighbouring datasets.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum AdjacencyArg {
    /// Replace one record, ‖x‖ ≤ B.
    Record,
    /// The paper's (local sensitivity).
    Label,
}

/// Covariance noise of `optimized`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum CovarianceNoiseArg {
    Gaussian,
    Wishart,
}

#[derive(Args)]
#[command(
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct GmmArgs {
    #[command(subcommand)]
    sub: Option<GmmSub>,
    /// Input CSV (optionally gzip-compressed); every column but the label must be numeric.
    #[arg(long, required = true)]
    input: Option<PathBuf>,
    /// Label column name.
    #[arg(long, required = true)]
    label: Option<String>,
    /// Target ε.
    #[arg(long, required = true)]
    epsilon: Option<f64>,
    /// δ.
    #[arg(long, required = true)]
    delta: Option<f64>,
    /// optimized (Algorithm 1), iid-gaussian, iid-laplace or colored-gaussian.
    #[arg(long, value_enum, default_value = "optimized")]
    noise: NoiseArg,
    /// record (default: replace one record, ‖x‖ ≤ B) or label (the paper's; local sensitivity).
    #[arg(long, value_enum, default_value = "record")]
    adjacency: AdjacencyArg,
    /// Public bound B on each row's L2 norm (input units), chosen without looking at the
    /// data; rows above it are clipped. Required under record adjacency (the default); only
    /// under `--adjacency label` (features public) may it be left out, and B is then the
    /// data's largest row norm.
    #[arg(long)]
    bound: Option<f64>,
    /// The class labels, comma-separated, when they are public (known without looking at the
    /// data, e.g. from the study design): the model has one component per listed class, and
    /// records with another label count in N and belong to no class. Without it, a label read
    /// from the data is released only when its noisy count clears a DP threshold (the receipt
    /// gives it), so small classes are left out (record adjacency, the default noise; other
    /// settings declare the label set unprotected).
    #[arg(long, value_delimiter = ',')]
    classes: Option<Vec<String>>,
    /// Project to K principal components first (K ≤ 256); the model stores the basis and `gmm
    /// sample` maps rows back to the input columns. On the default release the basis is a DP
    /// release in the same budget (a share of it); with other options it comes from the data
    /// and is declared unprotected.
    #[arg(long)]
    pca: Option<usize>,
    /// A public centre c, one value per feature (comma-separated), chosen without looking at
    /// the data (e.g. the middle of each column's known range): the release is of x − c, so
    /// --bound bounds ‖x − c‖; the means are moved back by c.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    center: Option<Vec<f64>>,
    /// A public lower bound per feature (comma-separated, with --upper), e.g. each column's
    /// known minimum: the model keeps the box, and its sampled rows (here and in `gmm sample`)
    /// are drawn from each class's Gaussian conditioned on it (post-processing).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    lower: Option<Vec<f64>>,
    /// A public upper bound per feature (comma-separated, with --lower).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    upper: Option<Vec<f64>>,
    /// With --lower/--upper, on the default release: also release each feature's histogram on
    /// BINS equal bins of its interval (DP, in the same budget) and map every sampled value
    /// onto it, instead of drawing within the box; for wide data (images), where drawing
    /// within a box of many features is out of reach. E.g. 32
    #[arg(long, value_name = "BINS")]
    marginals: Option<usize>,
    /// Covariance noise of `optimized`: gaussian (default; a valid (ε, δ) guarantee) or
    /// wishart (the paper's; its support depends on the data, so its receipt
    /// declares the covariances NOT protected by a worst-case guarantee, see the README).
    #[arg(long, value_enum, default_value = "gaussian")]
    covariance_noise: CovarianceNoiseArg,
    /// Smoothing λ of the weight mapping (default 1e-3).
    #[arg(long)]
    lambda: Option<f64>,
    /// Released model JSON.
    #[arg(long, required = true)]
    model_out: Option<PathBuf>,
    /// Synthetic rows to sample from the released model (needs --output; without it, --output
    /// gets as many rows as the released class counts sum to, a DP number).
    #[arg(long)]
    samples: Option<usize>,
    /// Synthetic CSV of rows sampled from the released model (--samples of them).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Privacy receipt JSON.
    #[arg(long, required = true)]
    receipt: Option<PathBuf>,
    /// Fixed seed: for tests only; the receipt then says "seeded, not for release".
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

impl GmmArgs {
    /// Whether the output is JSON.
    pub fn json(&self) -> bool {
        match &self.sub {
            Some(GmmSub::Sample(s)) => s.json,
            None => self.json,
        }
    }
}

#[derive(Subcommand)]
enum GmmSub {
    /// Sample rows from a saved model (post-processing: no privacy cost), within its public
    /// box when it has one (`gmm --lower/--upper`).
    Sample(GmmSampleArgs),
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct GmmSampleArgs {
    /// Model JSON written by `privmix gmm`.
    #[arg(long)]
    model: PathBuf,
    /// Rows to sample.
    #[arg(long)]
    samples: usize,
    /// Output CSV.
    #[arg(long)]
    output: PathBuf,
    /// Fixed seed (tests only).
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Writes `samples` rows sampled from `model` as CSV (see `api::gmm_samples_csv`).
fn write_samples(
    staged: &mut Staged,
    path: &Path,
    model: &GmmModel,
    samples: usize,
    rng: &mut ReleaseRng,
) -> Result<usize> {
    let bytes = api::gmm_samples_csv(model, samples, rng)?;
    let (_, mut f) = staged.file(path)?;
    let name = path.display().to_string();
    f.write_all(&bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(name, e))?;
    Ok(samples)
}

/// The outputs: --samples only with --output, none of them the input, all different.
fn check_outputs(
    input: &Path,
    model_out: &PathBuf,
    receipt: &PathBuf,
    samples: Option<usize>,
    output: Option<&PathBuf>,
) -> Result<()> {
    if let (Some(_), None) = (samples, output) {
        return Err(Error::param(
            "output",
            "(none)",
            "--samples needs --output FILE.csv for the sampled rows",
        ));
    }
    let mut outs = vec![model_out, receipt];
    if let Some(o) = output {
        outs.push(o);
    }
    for (i, o) in outs.iter().enumerate() {
        if same_file(input, o) {
            return Err(Error::param(
                "output",
                o.display(),
                "the outputs must not overwrite the input",
            ));
        }
        if outs[..i].contains(o) {
            return Err(Error::param(
                "output",
                o.display(),
                "--model-out, --receipt and --output must be different files",
            ));
        }
    }
    Ok(())
}

/// What the release reports: the JSON line (--json) or the lines on stderr.
fn report(
    release: &gmm::GmmRelease,
    opts: &gmm::GmmOptions,
    rows: usize,
    model_out: &Path,
    receipt: &Path,
    output: Option<&PathBuf>,
    json: bool,
) {
    super::print_unprotected(&release.receipt.guarantee);
    if json {
        let mut private = match &release.kl_unavailable {
            None => json!({ "kl": release.kl }),
            Some(why) => json!({ "kl": null, "kl_unavailable": why }),
        };
        if !release.filled_cells.is_empty() {
            private["filled_cells"] = json!(release.filled_cells);
        }
        if release.unlabelled > 0 {
            private["unlabelled"] = json!(release.unlabelled);
        }
        if !release.classes_left_out.is_empty() {
            private["classes_left_out"] = json!(release.classes_left_out);
        }
        print_json(&json!({
            "epsilon": release.epsilon, "delta": release.delta,
            "noise": opts.noise.name(),
            "adjacency": match opts.adjacency { Adjacency::Record => "record", Adjacency::Label => "label" },
            "classes": release.model.classes.len(), "features": release.model.means[0].len(),
            "rows": rows, "model": model_out, "receipt": receipt, "output": output,
            "warnings": release.receipt.warnings, "seeded": release.receipt.randomness.seeded,
            // Computed from the data without protection: for the data owner's eyes only.
            "private": private,
        }));
    } else {
        eprintln!(
            "privmix: released a {}-class GMM with (ε = {:.4}, δ = {}) to {}; receipt in {}",
            release.model.classes.len(),
            release.epsilon,
            release.delta,
            model_out.display(),
            receipt.display()
        );
        if let Some(o) = output {
            eprintln!(
                "privmix: sampled {rows} rows from the released model to {}",
                o.display()
            );
        }
        match (release.kl, &release.kl_unavailable) {
            (Some(kl), _) => eprintln!(
                "privmix: private (computed from the data without protection, not for release): KL to the non-private fit = {kl:.6}"
            ),
            (None, why) => eprintln!(
                "privmix: private: no KL to the non-private fit ({}); the release does not depend on it",
                why.as_deref().unwrap_or("not computed")
            ),
        }
        if !release.filled_cells.is_empty() {
            let cols: Vec<String> = release
                .filled_cells
                .iter()
                .map(|f| format!("{} ({} cells)", f.feature, f.cells))
                .collect();
            eprintln!(
                "privmix: private: cells that were missing or not numbers took the centre value in {}; if a column holds text, leave it out of the input",
                cols.join(", ")
            );
        }
        if release.unlabelled > 0 {
            eprintln!(
                "privmix: private: {} record(s) have no label (or one not in --classes); they count in N and belong to no class",
                release.unlabelled
            );
        }
        if !release.classes_left_out.is_empty() {
            eprintln!(
                "privmix: private: the release leaves out the class(es) {}: too few records for this budget (a label read from the data is released only above the threshold in the receipt). If the labels are public, list them with --classes",
                release.classes_left_out.join(", ")
            );
        }
        for w in &release.receipt.warnings {
            eprintln!("privmix: warning: {w}");
        }
    }
}

pub(crate) fn run(a: GmmArgs) -> Result<()> {
    if let Some(GmmSub::Sample(s)) = a.sub {
        return run_gmm_sample(s);
    }
    // clap enforces the required flags when no subcommand is given
    let (Some(input), Some(label), Some(epsilon), Some(delta), Some(model_out), Some(receipt)) =
        (a.input, a.label, a.epsilon, a.delta, a.model_out, a.receipt)
    else {
        return Err(Error::Data(
            "gmm needs --input, --label, --epsilon, --delta, --model-out and --receipt".into(),
        ));
    };
    let params = GmmParams::try_from(&GmmRequest {
        label: label.clone(),
        epsilon,
        delta: Some(delta),
        noise: Some(super::name_of(&a.noise)),
        adjacency: Some(super::name_of(&a.adjacency)),
        bound: a.bound,
        pca: a.pca,
        marginals: a.marginals,
        center: a.center.clone(),
        classes: a.classes.clone(),
        lower: a.lower.clone(),
        upper: a.upper.clone(),
        covariance_noise: Some(super::name_of(&a.covariance_noise)),
        lambda: a.lambda,
        samples: match (a.samples, &a.output) {
            (Some(t), _) => Some(SampleCount::Rows(t as f64)),
            (None, Some(_)) => Some(SampleCount::Named("released".into())),
            (None, None) => None,
        },
        marginal_points: None,
        seed: None,
    })?;
    let opts = &params.options;
    check_outputs(&input, &model_out, &receipt, a.samples, a.output.as_ref())?;
    let table = read_csv_path(&input, &api::gmm_csv_options(&label))?;
    let bytes = std::fs::read(&input).map_err(|e| Error::io(input.display().to_string(), e))?;
    let (data, warning) = api::gmm_data_exact(table, &bytes)?;
    if let Some(w) = warning {
        eprintln!("privmix: warning: {w}");
    }
    drop(bytes);
    let mut rng = rng_for(a.seed)?;
    let release = privmix::pipelines::gmm::release_gmm_data(&data, opts, &mut rng)?;
    let mut staged = Staged::new();
    let (_, mut mf) = staged.file(&model_out)?;
    mf.write_all(
        serde_json::to_string_pretty(&release.model)
            .expect("model serializes")
            .as_bytes(),
    )
    .and_then(|_| mf.sync_all())
    .map_err(|e| Error::io(model_out.display().to_string(), e))?;
    let mut rows = 0;
    if let (Some(t), Some(o)) = (params.samples, &a.output) {
        rows = write_samples(&mut staged, o, &release.model, t.rows(&release), &mut rng)?;
    }
    let (_, mut rf) = staged.file(&receipt)?;
    rf.write_all(release.receipt.to_json().as_bytes())
        .and_then(|_| rf.sync_all())
        .map_err(|e| Error::io(receipt.display().to_string(), e))?;
    staged.commit()?;
    report(
        &release,
        opts,
        rows,
        &model_out,
        &receipt,
        a.output.as_ref(),
        a.json,
    );
    Ok(())
}

fn run_gmm_sample(a: GmmSampleArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.model)
        .map_err(|e| Error::io(a.model.display().to_string(), e))?;
    let model: GmmModel = serde_json::from_str(&text)
        .map_err(|e| Error::Data(format!("{}: not a GMM model JSON: {e}", a.model.display())))?;
    model
        .validate()
        .map_err(|e| Error::Data(format!("{}: {e}", a.model.display())))?;
    if same_file(&a.model, &a.output) {
        return Err(Error::param(
            "output",
            a.output.display(),
            "the output must not overwrite the model",
        ));
    }
    if a.samples == 0 {
        return Err(Error::param("samples", 0, "sample at least 1 row"));
    }
    let mut rng = rng_for(a.seed)?;
    let mut staged = Staged::new();
    let rows = write_samples(&mut staged, &a.output, &model, a.samples, &mut rng)?;
    staged.commit()?;
    if a.json {
        print_json(&json!({"rows": rows, "output": a.output, "model": a.model}));
    } else {
        eprintln!("privmix: wrote {rows} rows to {}", a.output.display());
    }
    Ok(())
}
