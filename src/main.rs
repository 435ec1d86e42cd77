//! `privmix`: the native command line, a thin layer over the library.

use clap::{Args, Parser, Subcommand};
use privmix::accountant::{Preset, RdpCurve};
use privmix::data::{read_csv_path, CsvOptions, Schema};
use privmix::error::{Error, Result};
use privmix::eval::Model;
use privmix::evaluate::evaluate_tables;
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy};
use privmix::mechanisms::gmm::{self, Adjacency, GmmData, GmmModel, GmmOptions};
use privmix::preprocess::NormalizeMode;
use privmix::rng::ReleaseRng;
use privmix::synth::{synthesize, SynthOptions};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "privmix",
    version,
    about = "Differentially private synthetic data (DP-CDA) with a verified RDP accountant"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Raw RDP curve of the subsampled-without-replacement Gaussian.
    Rdp(RdpArgs),
    /// ε of a mechanism with given noise.
    Account(AccountArgs),
    /// Smallest noise meeting a target ε.
    Calibrate(CalibrateArgs),
    /// Make a DP synthetic CSV and its privacy receipt.
    Synth(SynthArgs),
    /// Train on one CSV (e.g. synthetic), test on another (real); prints the accuracy.
    Evaluate(EvaluateArgs),
    /// Release a DP Gaussian mixture model (and sample from it); `gmm sample` samples a saved model.
    Gmm(GmmArgs),
}

#[derive(Args)]
struct Common {
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Accountant preset: default (WBK Thm 27 + improved conversion) or paper (Thm 9 + classic).
    #[arg(long, default_value = "default")]
    preset: String,
    /// RDP orders: a comma list of integers ≥ 2 and/or ranges like 2..256 (default 2..256).
    #[arg(long)]
    orders: Option<String>,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct RdpArgs {
    /// Sampling rate q (mix / pool).
    #[arg(long)]
    sampling_rate: f64,
    /// Noise multiplier z (noise std / L2 sensitivity).
    #[arg(long)]
    noise_multiplier: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct MechArgs {
    /// Mechanism (only `cda` is available in this version).
    #[arg(long, default_value = "cda")]
    mechanism: String,
    /// Pool size n: the class size used for the sampling rate l/n.
    #[arg(long)]
    pool: u64,
    /// Mix order l.
    #[arg(long)]
    mix: u32,
    /// L2 clip norm c.
    #[arg(long, default_value_t = 1.0)]
    clip: f64,
    /// Label noise σy (paper mode); omit for label-free mode.
    #[arg(long)]
    sigma_y: Option<f64>,
    /// Number of mixes T drawn from the pool.
    #[arg(long)]
    samples: u64,
    /// δ.
    #[arg(long)]
    delta: f64,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct AccountArgs {
    #[command(flatten)]
    mech: MechArgs,
    /// Feature noise σx.
    #[arg(long)]
    sigma_x: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct CalibrateArgs {
    #[command(flatten)]
    mech: MechArgs,
    /// Target ε.
    #[arg(long)]
    epsilon: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct SynthArgs {
    /// Input CSV (optionally gzip-compressed).
    #[arg(long)]
    input: PathBuf,
    /// Label column name.
    #[arg(long)]
    label: String,
    /// Mechanism (only `cda` is available in this version).
    #[arg(long, default_value = "cda")]
    mechanism: String,
    /// Target ε (the noise is calibrated to it).
    #[arg(long)]
    epsilon: Option<f64>,
    /// δ.
    #[arg(long)]
    delta: f64,
    /// Mix order l.
    #[arg(long, default_value_t = 4)]
    mix: usize,
    /// L2 clip norm c, in normalized units.
    #[arg(long, default_value_t = 1.0)]
    clip: f64,
    /// Synthetic rows T (default: as many as the input); each class gets ⌊T/K⌋.
    #[arg(long)]
    samples: Option<usize>,
    /// Normalization: dp (default, protected), public (bounds from --schema) or data (the
    /// paper's exact z-scores, NOT protected).
    #[arg(long, default_value = "dp")]
    normalize: String,
    /// Share of ε spent on DP normalization.
    #[arg(long, default_value_t = 0.1)]
    normalize_share: f64,
    /// Schema JSON overriding column types, bounds and categories.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Explicit σx instead of calibrating to --epsilon.
    #[arg(long)]
    sigma_x: Option<f64>,
    /// Label noise σy: paper mode. Omit for label-free mode (default).
    #[arg(long)]
    sigma_y: Option<f64>,
    /// Fixed seed: for tests only; the receipt then says "seeded, not for release".
    #[arg(long)]
    seed: Option<u64>,
    /// Output CSV.
    #[arg(long)]
    output: PathBuf,
    /// Privacy receipt JSON.
    #[arg(long)]
    receipt: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct GmmArgs {
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
    #[arg(long, default_value = "optimized")]
    noise: String,
    /// record (default: replace one record, ‖x‖ ≤ B) or label (the paper's; local sensitivity).
    #[arg(long, default_value = "record")]
    adjacency: String,
    /// Public bound B on each row's L2 norm (input units); rows above it are clipped. Without
    /// it, B is the data's largest row norm, which the receipt declares unprotected.
    #[arg(long)]
    bound: Option<f64>,
    /// Project to K principal components first; the basis comes from the data and is declared
    /// unprotected; the model stores it and `gmm sample` maps rows back to the input columns.
    #[arg(long)]
    pca: Option<usize>,
    /// Covariance noise of `optimized`: wishart (SPEC §1.4; its receipt declares the
    /// covariances unprotected, see the README) or gaussian (a valid (ε, δ) guarantee).
    #[arg(long, default_value = "wishart")]
    covariance_noise: String,
    /// Smoothing λ of the weight mapping.
    #[arg(long, default_value_t = 1e-3)]
    lambda: f64,
    /// Released model JSON.
    #[arg(long, required = true)]
    model_out: Option<PathBuf>,
    /// Synthetic rows to sample from the released model (needs --output).
    #[arg(long)]
    samples: Option<usize>,
    /// Synthetic CSV (with --samples).
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

#[derive(Subcommand)]
enum GmmSub {
    /// Sample rows from a saved model (post-processing: no privacy cost).
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

#[derive(Args)]
struct EvaluateArgs {
    /// Training CSV (e.g. synthetic).
    #[arg(long)]
    train: PathBuf,
    /// Test CSV (real held-out data).
    #[arg(long)]
    test: PathBuf,
    /// Label column.
    #[arg(long)]
    label: String,
    /// logreg (multinomial logistic regression) or tree (CART).
    #[arg(long, default_value = "logreg")]
    model: String,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn parse_orders(spec: &Option<String>) -> Result<Vec<u32>> {
    let Some(s) = spec else {
        return Ok(privmix::accountant::default_orders());
    };
    let mut out = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let bad = || {
            Error::param(
                "orders",
                tok,
                "use integers ≥ 2 separated by commas, or a range like 2..256",
            )
        };
        if let Some((a, b)) = tok.split_once("..") {
            let a: u32 = a.trim().parse().map_err(|_| bad())?;
            let b: u32 = b
                .trim()
                .trim_start_matches('=')
                .parse()
                .map_err(|_| bad())?;
            if a > b {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(tok.parse().map_err(|_| bad())?);
        }
    }
    privmix::accountant::subsampled_gaussian::validate_orders(&out)?;
    Ok(out)
}

fn check_mechanism(m: &str) -> Result<()> {
    if m == "cda" {
        Ok(())
    } else {
        Err(Error::param(
            "mechanism",
            m,
            "this version implements 'cda' (DP-CDA) only",
        ))
    }
}

fn print_json(v: &serde_json::Value) {
    println!("{v}");
}

fn run_rdp(a: RdpArgs) -> Result<()> {
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    if a.noise_multiplier.is_nan() || a.noise_multiplier <= 0.0 {
        return Err(Error::param(
            "noise-multiplier",
            a.noise_multiplier,
            "must be a positive number",
        ));
    }
    let c = RdpCurve::subsampled_gaussian(
        a.sampling_rate,
        a.noise_multiplier,
        &orders,
        preset.bound(),
    )?;
    let v = json!({"orders": c.orders, "rdp": c.rdp, "preset": preset.name(),
                   "sampling_rate": a.sampling_rate, "noise_multiplier": a.noise_multiplier});
    if a.common.json {
        print_json(&v);
    } else {
        for (o, r) in c.orders.iter().zip(&c.rdp) {
            println!("α = {o:>4}  rdp = {r:.12e}");
        }
    }
    Ok(())
}

fn run_account(a: AccountArgs) -> Result<()> {
    check_mechanism(&a.mech.mechanism)?;
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    let m = &a.mech;
    let p = CdaPrivacy {
        pool: m.pool,
        mix: m.mix,
        clip: m.clip,
        sigma_x: a.sigma_x,
        sigma_y: m.sigma_y,
        samples: m.samples,
    };
    let e = p.epsilon(m.delta, &orders, preset, None)?;
    let other = preset.other();
    let e_other = p.epsilon(m.delta, &orders, other, None)?;
    let v = json!({
        "epsilon": e.epsilon, "order": e.order, "delta": m.delta, "preset": preset.name(),
        "mechanism": "cda", "mode": if m.sigma_y.is_some() { "paper" } else { "label-free" },
        "noise_multiplier": p.noise_multiplier()?, "sampling_rate": p.sampling_rate(),
        "epsilon_other_preset": {"preset": other.name(), "epsilon": e_other.epsilon, "order": e_other.order},
    });
    if a.common.json {
        print_json(&v);
    } else {
        println!(
            "ε = {:.6} at δ = {} (order {}, preset {})",
            e.epsilon,
            m.delta,
            e.order,
            preset.name()
        );
    }
    Ok(())
}

fn run_calibrate(a: CalibrateArgs) -> Result<()> {
    check_mechanism(&a.mech.mechanism)?;
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    let m = &a.mech;
    let c = calibrate_sigma_x(
        m.pool, m.mix, m.clip, m.sigma_y, m.samples, m.delta, a.epsilon, &orders, preset, None,
    )?;
    let v = json!({
        "sigma_x": c.sigma_x, "epsilon": c.epsilon, "order": c.order, "target_epsilon": a.epsilon,
        "delta": m.delta, "noise_multiplier": c.noise_multiplier, "preset": preset.name(), "mechanism": "cda",
        "mode": if m.sigma_y.is_some() { "paper" } else { "label-free" },
    });
    if a.common.json {
        print_json(&v);
    } else {
        println!(
            "σx = {:.9} gives ε = {:.6} ≤ {} at δ = {} (preset {})",
            c.sigma_x,
            c.epsilon,
            a.epsilon,
            m.delta,
            preset.name()
        );
    }
    Ok(())
}

/// Temporary files that are removed unless committed (renamed into place).
struct Staged {
    pairs: Vec<(PathBuf, PathBuf)>,
    committed: bool,
}

impl Staged {
    fn new() -> Self {
        Staged {
            pairs: Vec::new(),
            committed: false,
        }
    }
    fn file(&mut self, target: &Path) -> Result<(PathBuf, std::fs::File)> {
        let name = target
            .file_name()
            .ok_or_else(|| Error::param("output", target.display(), "give a file name"))?;
        let tmp = target.with_file_name(format!(
            ".{}.privmix-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let f =
            std::fs::File::create(&tmp).map_err(|e| Error::io(target.display().to_string(), e))?;
        self.pairs.push((tmp.clone(), target.to_path_buf()));
        Ok((tmp, f))
    }
    fn commit(mut self) -> Result<()> {
        for (tmp, target) in &self.pairs {
            std::fs::rename(tmp, target).map_err(|e| Error::io(target.display().to_string(), e))?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            for (tmp, _) in &self.pairs {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn run_synth(a: SynthArgs) -> Result<()> {
    check_mechanism(&a.mechanism)?;
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    let normalize: NormalizeMode = a.normalize.parse()?;
    if same_file(&a.input, &a.output) || same_file(&a.input, &a.receipt) {
        return Err(Error::param(
            "output",
            a.output.display(),
            "the output must not overwrite the input",
        ));
    }
    if a.output == a.receipt {
        return Err(Error::param(
            "receipt",
            a.receipt.display(),
            "the receipt and the output must be different files",
        ));
    }
    let opts = SynthOptions {
        epsilon: a.epsilon,
        delta: a.delta,
        mix: a.mix,
        clip: a.clip,
        samples: a.samples,
        normalize,
        normalize_share: a.normalize_share,
        sigma_x: a.sigma_x,
        sigma_y: a.sigma_y,
        preset,
        orders,
    };
    // Check cheap parameters before reading a large file.
    privmix::accountant::check_delta(opts.delta)?;
    if let Some(e) = opts.epsilon {
        privmix::accountant::check_epsilon(e)?;
    }
    let schema = match &a.schema {
        Some(p) => Some(Schema::from_json(
            &std::fs::read_to_string(p).map_err(|e| Error::io(p.display().to_string(), e))?,
        )?),
        None => None,
    };
    let csv_opts = CsvOptions {
        label: Some(a.label.clone()),
        schema: schema.clone(),
        ..CsvOptions::default()
    };
    let table = read_csv_path(&a.input, &csv_opts)?;
    if table.rows_dropped > 0 {
        eprintln!(
            "privmix: dropped {} row(s) with missing values ('', NA or ?)",
            table.rows_dropped
        );
    }
    let mut rng = match a.seed {
        Some(s) => {
            eprintln!("privmix: --seed {s}: seeded, not for release");
            ReleaseRng::seeded(s)
        }
        None => ReleaseRng::from_entropy()?,
    };
    let mut staged = Staged::new();
    let (_, out_file) = staged.file(&a.output)?;
    let out_name = a.output.display().to_string();
    let writer = std::cell::RefCell::new(csv::Writer::from_writer(
        std::io::BufWriter::with_capacity(1 << 20, out_file),
    ));
    let csv_err = |e: csv::Error| Error::Data(format!("{out_name}: cannot write: {e}"));
    let receipt = synthesize(
        &table,
        schema.as_ref(),
        &opts,
        &mut rng,
        |names| writer.borrow_mut().write_record(names).map_err(csv_err),
        |cells| writer.borrow_mut().write_record(cells).map_err(csv_err),
        |_| {},
    )?;
    drop(table);
    let mut inner = writer
        .into_inner()
        .into_inner()
        .map_err(|e| Error::Data(format!("{out_name}: cannot write: {e}")))?;
    inner.flush().map_err(|e| Error::io(out_name.clone(), e))?;
    inner
        .get_ref()
        .sync_all()
        .map_err(|e| Error::io(out_name.clone(), e))?;
    let (_, mut rf) = staged.file(&a.receipt)?;
    rf.write_all(receipt.to_json().as_bytes())
        .map_err(|e| Error::io(a.receipt.display().to_string(), e))?;
    staged.commit()?;
    let summary = json!({
        "epsilon": receipt.epsilon, "delta": receipt.delta, "order": receipt.accountant.order,
        "sigma_x": receipt.parameters.sigma_x, "rows": receipt.parameters.rows_written,
        "rows_dropped": receipt.data.rows_dropped, "output": a.output, "receipt": a.receipt,
        "seeded": receipt.randomness.seeded,
    });
    if a.common.json {
        print_json(&summary);
    } else {
        eprintln!(
            "privmix: wrote {} synthetic rows to {} with (ε = {:.4}, δ = {}); receipt in {}",
            receipt.parameters.rows_written,
            a.output.display(),
            receipt.epsilon,
            receipt.delta,
            a.receipt.display()
        );
    }
    Ok(())
}

fn run_evaluate(a: EvaluateArgs) -> Result<()> {
    let model: Model = a.model.parse()?;
    let opts = CsvOptions {
        label: Some(a.label.clone()),
        ..CsvOptions::default()
    };
    let train = read_csv_path(&a.train, &opts)?;
    let test = read_csv_path(&a.test, &opts)?;
    let r = evaluate_tables(&train, &test, model)?;
    if a.json {
        print_json(&serde_json::to_value(&r).expect("serializes"));
    } else {
        println!(
            "accuracy = {:.4} ({} on {} training rows, {} test rows)",
            r.accuracy, r.model, r.train_rows, r.test_rows
        );
    }
    Ok(())
}

fn rng_for(seed: Option<u64>) -> Result<ReleaseRng> {
    match seed {
        Some(s) => {
            eprintln!("privmix: --seed {s}: seeded, not for release");
            Ok(ReleaseRng::seeded(s))
        }
        None => ReleaseRng::from_entropy(),
    }
}

/// Writes sampled rows as CSV: the model's feature columns, then the label column.
fn write_samples(
    staged: &mut Staged,
    path: &Path,
    model: &GmmModel,
    samples: usize,
    rng: &mut ReleaseRng,
) -> Result<usize> {
    let (classes, rows) = gmm::sample(model, samples, rng)?;
    let (_, f) = staged.file(path)?;
    let name = path.display().to_string();
    let err = |e: csv::Error| Error::Data(format!("{name}: cannot write: {e}"));
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(f));
    let mut header = model.output_features();
    let d = header.len();
    header.push(if model.label.is_empty() {
        "label".into()
    } else {
        model.label.clone()
    });
    w.write_record(&header).map_err(err)?;
    let mut cells: Vec<String> = Vec::with_capacity(d + 1);
    for (c, r) in classes.iter().zip(&rows) {
        cells.clear();
        cells.extend(r.iter().map(|x| format!("{x}")));
        cells.push(model.classes[*c].clone());
        w.write_record(&cells).map_err(err)?;
    }
    let inner = w
        .into_inner()
        .map_err(|e| Error::Data(format!("{name}: cannot write: {e}")))?;
    let f = inner
        .into_inner()
        .map_err(|e| Error::Data(format!("{name}: cannot write: {e}")))?;
    f.sync_all().map_err(|e| Error::io(name.clone(), e))?;
    Ok(rows.len())
}

fn run_gmm(a: GmmArgs) -> Result<()> {
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
    let opts = GmmOptions {
        epsilon,
        delta,
        noise: a.noise.parse()?,
        adjacency: a.adjacency.parse()?,
        bound: a.bound,
        lambda: a.lambda,
        pca: a.pca,
        covariance_noise: a.covariance_noise.parse()?,
        ..GmmOptions::default()
    };
    privmix::accountant::check_epsilon(epsilon)?;
    privmix::accountant::check_delta(delta)?;
    if a.samples == Some(0) {
        return Err(Error::param(
            "samples",
            0,
            "sample at least 1 row, or leave out --samples",
        ));
    }
    match (a.samples, &a.output) {
        (Some(_), None) => {
            return Err(Error::param(
                "output",
                "(none)",
                "--samples needs --output FILE.csv for the sampled rows",
            ))
        }
        (None, Some(o)) => {
            return Err(Error::param(
                "samples",
                "(none)",
                format!("--output {} needs --samples T", o.display()),
            ))
        }
        _ => {}
    }
    let mut outs = vec![&model_out, &receipt];
    if let Some(o) = &a.output {
        outs.push(o);
    }
    for (i, o) in outs.iter().enumerate() {
        if same_file(&input, o) {
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
    let csv_opts = CsvOptions {
        label: Some(label.clone()),
        ..CsvOptions::default()
    };
    let table = read_csv_path(&input, &csv_opts)?;
    if table.rows_dropped > 0 {
        eprintln!(
            "privmix: dropped {} row(s) with missing values ('', NA or ?)",
            table.rows_dropped
        );
    }
    let mut data = GmmData::from_table(&table)?;
    // exact f64 values of the cells (the table stores f32), so that `kl` refers to the input
    // exactly as written
    let bytes = std::fs::read(&input).map_err(|e| Error::io(input.display().to_string(), e))?;
    match data
        .exact_values_from_csv(&bytes, table.delimiter)
        .and_then(|v| data.clone().with_exact_values(v))
    {
        Ok(d) => data = d,
        Err(e) => eprintln!("privmix: warning: using the f32 values of the input ({e})"),
    }
    drop(bytes);
    drop(table);
    let mut rng = rng_for(a.seed)?;
    let release = gmm::release_gmm_data(&data, &opts, &mut rng)?;
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
    if let (Some(t), Some(o)) = (a.samples, &a.output) {
        rows = write_samples(&mut staged, o, &release.model, t, &mut rng)?;
    }
    let (_, mut rf) = staged.file(&receipt)?;
    rf.write_all(release.receipt.to_json().as_bytes())
        .and_then(|_| rf.sync_all())
        .map_err(|e| Error::io(receipt.display().to_string(), e))?;
    staged.commit()?;
    if a.json {
        print_json(&json!({
            "kl": release.kl, "epsilon": release.epsilon, "delta": release.delta,
            "noise": opts.noise.name(),
            "adjacency": match opts.adjacency { Adjacency::Record => "record", Adjacency::Label => "label" },
            "classes": release.model.classes.len(), "features": release.model.means[0].len(),
            "rows": rows, "model": model_out, "receipt": receipt, "output": a.output,
            "warnings": release.receipt.warnings, "seeded": release.receipt.randomness.seeded,
        }));
    } else {
        eprintln!(
            "privmix: released a {}-class GMM with (ε = {:.4}, δ = {}) to {}; KL to the non-private fit = {:.6}; receipt in {}",
            release.model.classes.len(),
            release.epsilon,
            release.delta,
            model_out.display(),
            release.kl,
            receipt.display()
        );
        for w in &release.receipt.warnings {
            eprintln!("privmix: warning: {w}");
        }
    }
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

fn main() {
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Rdp(a) => a.common.json,
        Command::Account(a) => a.common.json,
        Command::Calibrate(a) => a.common.json,
        Command::Synth(a) => a.common.json,
        Command::Evaluate(a) => a.json,
        Command::Gmm(a) => match &a.sub {
            Some(GmmSub::Sample(s)) => s.json,
            None => a.json,
        },
    };
    let result = match cli.command {
        Command::Rdp(a) => run_rdp(a),
        Command::Account(a) => run_account(a),
        Command::Calibrate(a) => run_calibrate(a),
        Command::Synth(a) => run_synth(a),
        Command::Evaluate(a) => run_evaluate(a),
        Command::Gmm(a) => run_gmm(a),
    };
    if let Err(e) = result {
        eprintln!("privmix: error: {e}");
        if json {
            print_json(&json!({"error": e.to_string()}));
        }
        std::process::exit(1);
    }
}
