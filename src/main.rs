//! `privmix`: the native command line, a thin layer over the library.

use clap::{Args, Parser, Subcommand};
use privmix::accountant::{Preset, RdpCurve};
use privmix::data::{read_csv_path, CsvOptions, Schema};
use privmix::error::{Error, Result};
use privmix::eval::Model;
use privmix::evaluate::evaluate_tables;
use privmix::federated::{aggregate, contribute, simulate, Contribution, FedOptions, Partition};
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy};
use privmix::mechanisms::dpmix::accounting::{calibrate_dpmix, DpMixPrivacy};
use privmix::mechanisms::federated::pairwise::{PublicKeyFile, SecretKeyFile};
use privmix::mechanisms::gmm::{self, Adjacency, GmmModel, GmmOptions};
use privmix::mechanisms::local::{calibrate_local, LocalPrivacy};
use privmix::preprocess::NormalizeMode;
use privmix::rng::ReleaseRng;
use privmix::synth::{synthesize_with, DpMixOptions, Mechanism, ProjectionOptions, SynthOptions};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "privmix",
    version,
    about = "Differentially private synthetic data (DP-CDA, DPMix, baselines) with a verified RDP accountant"
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
    /// Make a DP synthetic CSV (or a ZIP of PNGs from images) and its privacy receipt.
    Synth(Box<SynthArgs>),
    /// Train on one CSV (e.g. synthetic), test on another (real); prints the accuracy.
    Evaluate(EvaluateArgs),
    /// Release a DP Gaussian mixture model (and sample from it); `gmm sample` samples a saved model.
    Gmm(Box<GmmArgs>),
    /// Federated DP-CDA (CAPE or conventional): simulate, or run keygen → contribute →
    /// aggregate across real parties with no server.
    #[command(subcommand)]
    Federated(FedCommand),
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
    /// Mechanism: cda (DP-CDA), dpmix, local (local perturbation) or projection (random
    /// projection; accounted exactly like local).
    #[arg(long, default_value = "cda")]
    mechanism: String,
    /// Pool size n: cda: the class size used for the sampling rate l/n; dpmix: the rows the
    /// mixes are drawn from; local/projection: the input rows.
    #[arg(long)]
    pool: u64,
    /// Mix order l (cda and dpmix).
    #[arg(long)]
    mix: Option<u32>,
    /// L2 clip norm c (cda, local, projection; not used by dpmix, whose features lie in [0, 1]).
    #[arg(long, default_value_t = 1.0)]
    clip: f64,
    /// cda: label noise σy (paper mode; omit for label-free mode). dpmix: label noise σy
    /// (account: required unless --dim-y 0; calibrate: held fixed, or omit to calibrate a
    /// shared σ = σx = σy).
    #[arg(long)]
    sigma_y: Option<f64>,
    /// dpmix: feature dimension dx (features in [0, 1]^dx).
    #[arg(long)]
    dim_x: Option<u64>,
    /// dpmix: label dimension dy (number of classes; 0 for the class-wise variant, whose
    /// labels carry no noise).
    #[arg(long)]
    dim_y: Option<u64>,
    /// Number of mixes T drawn from the pool (local/projection: rows released, T ≤ n).
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
    /// Input: a CSV (optionally gzip-compressed), or images: a ZIP of class folders or a
    /// folder of class folders (`<class>/<image>.png|jpg`).
    #[arg(long)]
    input: PathBuf,
    /// Label column name (CSV input; images take their class from the folder name).
    #[arg(long)]
    label: Option<String>,
    /// Mechanism: cda (DP-CDA, default), dpmix, local (local perturbation) or projection
    /// (random projection). Images take cda only.
    #[arg(long, default_value = "cda")]
    mechanism: String,
    /// dpmix: label output, hard (argmax; default) or soft (the label column is replaced by one
    /// probability column per class, named `P(label=class)`).
    #[arg(long, default_value = "hard")]
    labels: String,
    /// dpmix: mix within each class (labels are the class, no label noise).
    #[arg(long)]
    class_wise: bool,
    /// projection: projected dimension k (default ⌈d/2⌉, at most 64).
    #[arg(long)]
    projection_dim: Option<usize>,
    /// Target ε (the noise is calibrated to it).
    #[arg(long)]
    epsilon: Option<f64>,
    /// δ.
    #[arg(long)]
    delta: f64,
    /// Mix order l (cda and dpmix), or `auto` (default: DP-CDA chooses l from public numbers
    /// and the receipt states the choice; other mechanisms use 4).
    #[arg(long, default_value = "auto", value_parser = parse_mix)]
    mix: usize,
    /// L2 clip norm c, in normalized units (cda, local, projection; dpmix clamps features to
    /// [0, 1] instead).
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
    #[arg(long, default_value_t = 0.2)]
    normalize_share: f64,
    /// Schema JSON overriding column types, bounds and categories.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Explicit σx instead of calibrating to --epsilon.
    #[arg(long)]
    sigma_x: Option<f64>,
    /// Label noise σy. cda: paper mode (omit for label-free mode, the default). dpmix: held
    /// fixed while σx is calibrated (omit: one shared σ = σx = σy).
    #[arg(long)]
    sigma_y: Option<f64>,
    /// Fixed seed: for tests only; the receipt then says "seeded, not for release".
    #[arg(long)]
    seed: Option<u64>,
    /// Output: a CSV, or for image input a ZIP of PNGs in class folders.
    #[arg(long)]
    output: PathBuf,
    /// Images: output width in pixels (default: the most common input size, longer side
    /// capped at 32).
    #[arg(long)]
    width: Option<usize>,
    /// Images: output height in pixels.
    #[arg(long)]
    height: Option<usize>,
    /// Images: 1 (grayscale) or 3 (RGB) (default: 1 when every input file is grayscale).
    #[arg(long)]
    channels: Option<usize>,
    /// Images: alpha handling, white (composite on white) or drop.
    #[arg(long, default_value = "white")]
    alpha: String,
    /// Images: also write a preview grid PNG of the synthetic images (one row per class).
    #[arg(long)]
    preview: Option<PathBuf>,
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
    /// Covariance noise of `optimized`: gaussian (default; a valid (ε, δ) guarantee) or
    /// wishart (SPEC §1.4 and the paper; its support depends on the data, so its receipt
    /// declares the covariances NOT protected by a worst-case guarantee, see the README).
    #[arg(long, default_value = "gaussian")]
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

fn need_mix(m: &MechArgs) -> Result<u32> {
    m.mix.ok_or_else(|| {
        Error::param(
            "mix",
            "(none)",
            format!("--mechanism {} needs the mix order --mix L", m.mechanism),
        )
    })
}

fn need_dims(m: &MechArgs) -> Result<(u64, u64)> {
    match (m.dim_x, m.dim_y) {
        (Some(x), Some(y)) => Ok((x, y)),
        (None, _) => Err(Error::param(
            "dim-x",
            "(none)",
            "--mechanism dpmix needs the feature dimension --dim-x DX",
        )),
        (_, None) => Err(Error::param(
            "dim-y",
            "(none)",
            "--mechanism dpmix needs the label dimension --dim-y DY (the number of classes; 0 for the class-wise variant)",
        )),
    }
}

/// Rejects flags that the chosen mechanism does not use, so nothing is silently ignored.
fn reject_unused(m: &MechArgs) -> Result<()> {
    let dpmix = m.mechanism == "dpmix";
    if !dpmix {
        if let Some(x) = m.dim_x {
            return Err(Error::param(
                "dim-x",
                x,
                "--dim-x applies to --mechanism dpmix only",
            ));
        }
        if let Some(y) = m.dim_y {
            return Err(Error::param(
                "dim-y",
                y,
                "--dim-y applies to --mechanism dpmix only",
            ));
        }
    }
    if matches!(m.mechanism.as_str(), "local" | "projection") {
        if let Some(l) = m.mix {
            return Err(Error::param(
                "mix",
                l,
                "local perturbation and projection do not mix rows; drop --mix",
            ));
        }
        if let Some(s) = m.sigma_y {
            return Err(Error::param(
                "sigma-y",
                s,
                "local perturbation and projection add no label noise; drop --sigma-y",
            ));
        }
    }
    Ok(())
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
    let mechanism: Mechanism = a.mech.mechanism.parse()?;
    reject_unused(&a.mech)?;
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    let m = &a.mech;
    let other = preset.other();
    let v = match mechanism {
        Mechanism::Cda => {
            let p = CdaPrivacy {
                pool: m.pool,
                mix: need_mix(m)?,
                clip: m.clip,
                sigma_x: a.sigma_x,
                sigma_y: m.sigma_y,
                samples: m.samples,
            };
            let e = p.epsilon(m.delta, &orders, preset, None)?;
            let e_other = p.epsilon(m.delta, &orders, other, None)?;
            json!({
                "epsilon": e.epsilon, "order": e.order, "delta": m.delta, "preset": preset.name(),
                "mechanism": "cda", "mode": if m.sigma_y.is_some() { "paper" } else { "label-free" },
                "noise_multiplier": p.noise_multiplier()?, "sampling_rate": p.sampling_rate(),
                "epsilon_other_preset": {"preset": other.name(), "epsilon": e_other.epsilon, "order": e_other.order},
            })
        }
        Mechanism::DpMix(_) => {
            let (dim_x, dim_y) = need_dims(m)?;
            let sigma_y = match (dim_y, m.sigma_y) {
                (0, _) => m.sigma_y.unwrap_or(f64::NAN),
                (_, Some(s)) => s,
                (_, None) => {
                    return Err(Error::param(
                        "sigma-y",
                        "(none)",
                        "--mechanism dpmix needs the label noise --sigma-y S (or --dim-y 0 for the class-wise variant)",
                    ))
                }
            };
            let p = DpMixPrivacy {
                pool: m.pool,
                mix: need_mix(m)?,
                dim_x,
                dim_y,
                sigma_x: a.sigma_x,
                sigma_y,
                samples: m.samples,
            };
            let e = p.epsilon(m.delta, &orders, preset, None)?;
            let e_other = p.epsilon(m.delta, &orders, other, None)?;
            json!({
                "epsilon": e.epsilon, "order": e.order, "delta": m.delta, "preset": preset.name(),
                "mechanism": "dpmix", "sigma_x": a.sigma_x, "sigma_y": (dim_y > 0).then_some(sigma_y),
                "dim_x": dim_x, "dim_y": dim_y, "delta_squared": p.delta_squared()?,
                "noise_multiplier": p.noise_multiplier()?, "sampling_rate": p.sampling_rate(),
                "samples": m.samples, "pool": m.pool, "mix": p.mix,
                "epsilon_other_preset": {"preset": other.name(), "epsilon": e_other.epsilon, "order": e_other.order},
            })
        }
        Mechanism::Local | Mechanism::Projection(_) => {
            let p = LocalPrivacy {
                rows: m.pool,
                samples: m.samples,
                clip: m.clip,
                sigma: a.sigma_x,
            };
            let e = p.epsilon(m.delta, &orders, preset, None)?;
            let e_other = p.epsilon(m.delta, &orders, other, None)?;
            json!({
                "epsilon": e.epsilon, "order": e.order, "delta": m.delta, "preset": preset.name(),
                "mechanism": m.mechanism, "sigma_x": a.sigma_x, "clip": m.clip,
                "noise_multiplier": p.noise_multiplier()?, "sampling_rate": p.sampling_rate(),
                "epsilon_other_preset": {"preset": other.name(), "epsilon": e_other.epsilon, "order": e_other.order},
            })
        }
    };
    if a.common.json {
        print_json(&v);
    } else {
        println!(
            "ε = {:.6} at δ = {} (order {}, preset {})",
            v["epsilon"].as_f64().unwrap_or(f64::INFINITY),
            m.delta,
            v["order"],
            preset.name()
        );
    }
    Ok(())
}

fn run_calibrate(a: CalibrateArgs) -> Result<()> {
    let mechanism: Mechanism = a.mech.mechanism.parse()?;
    reject_unused(&a.mech)?;
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    let m = &a.mech;
    let v = match mechanism {
        Mechanism::Cda => {
            let c = calibrate_sigma_x(
                m.pool,
                need_mix(m)?,
                m.clip,
                m.sigma_y,
                m.samples,
                m.delta,
                a.epsilon,
                &orders,
                preset,
                None,
            )?;
            json!({
                "sigma_x": c.sigma_x, "epsilon": c.epsilon, "order": c.order, "target_epsilon": a.epsilon,
                "delta": m.delta, "noise_multiplier": c.noise_multiplier, "preset": preset.name(), "mechanism": "cda",
                "mode": if m.sigma_y.is_some() { "paper" } else { "label-free" },
            })
        }
        Mechanism::DpMix(_) => {
            let (dim_x, dim_y) = need_dims(m)?;
            let c = calibrate_dpmix(
                m.pool,
                need_mix(m)?,
                dim_x,
                dim_y,
                m.sigma_y,
                m.samples,
                m.delta,
                a.epsilon,
                &orders,
                preset,
                None,
            )?;
            json!({
                "sigma_x": c.sigma_x, "sigma_y": (dim_y > 0).then_some(c.sigma_y),
                "shared_sigma": c.shared, "epsilon": c.epsilon, "order": c.order,
                "target_epsilon": a.epsilon, "delta": m.delta, "noise_multiplier": c.noise_multiplier,
                "preset": preset.name(), "mechanism": "dpmix", "dim_x": dim_x, "dim_y": dim_y,
            })
        }
        Mechanism::Local | Mechanism::Projection(_) => {
            let c = calibrate_local(
                m.pool, m.samples, m.clip, m.delta, a.epsilon, &orders, preset, None,
            )?;
            json!({
                "sigma_x": c.sigma, "epsilon": c.epsilon, "order": c.order, "target_epsilon": a.epsilon,
                "delta": m.delta, "noise_multiplier": c.noise_multiplier, "preset": preset.name(),
                "mechanism": m.mechanism, "clip": m.clip,
            })
        }
    };
    if a.common.json {
        print_json(&v);
    } else {
        println!(
            "σx = {:.9} gives ε = {:.6} ≤ {} at δ = {} (preset {})",
            v["sigma_x"].as_f64().unwrap_or(f64::NAN),
            v["epsilon"].as_f64().unwrap_or(f64::INFINITY),
            a.epsilon,
            m.delta,
            preset.name()
        );
        if let Some(sy) = v["sigma_y"].as_f64() {
            println!(
                "σy = {sy:.9}{}",
                if v["shared_sigma"] == json!(true) {
                    " (shared with σx)"
                } else {
                    ""
                }
            );
        }
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

/// What `synth --input` points at.
enum InputKind {
    Csv,
    Zip,
    Dir,
    Image,
}

/// A directory, a ZIP or a single image (by their magic bytes), or else a CSV. Unreadable paths count as CSV so that
/// the CSV reader reports them as before.
fn input_kind(p: &Path) -> InputKind {
    use std::io::Read;
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => return InputKind::Dir,
        Ok(_) => {}
        Err(_) => return InputKind::Csv,
    }
    let mut magic = [0u8; 8];
    let n = std::fs::File::open(p)
        .and_then(|mut f| f.read(&mut magic))
        .unwrap_or(0);
    if n >= 4 && (magic.starts_with(b"PK\x03\x04") || magic.starts_with(b"PK\x05\x06")) {
        InputKind::Zip
    } else if privmix::images::decode::sniff(&magic[..n]).is_some() {
        InputKind::Image
    } else {
        InputKind::Csv
    }
}

/// Reads the image files under `root` as (relative path with `/`, bytes); hidden and
/// `__MACOSX` folders and non-image files are not read.
fn read_image_dir(root: &Path, max_bytes: u64) -> Result<Vec<(String, Vec<u8>)>> {
    fn walk(
        dir: &Path,
        rel: &str,
        depth: usize,
        total: &mut u64,
        max_bytes: u64,
        out: &mut Vec<(String, Vec<u8>)>,
    ) -> Result<()> {
        if depth > 32 {
            return Err(Error::Data(format!(
                "{}: folders nested more than 32 deep; point --input at the folder of class folders",
                dir.display()
            )));
        }
        let io = |e| Error::io(dir.display().to_string(), e);
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(io)?
            .collect::<std::io::Result<_>>()
            .map_err(io)?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__MACOSX" {
                continue;
            }
            let path = e.path();
            let rel_path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let meta =
                std::fs::metadata(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
            if meta.is_dir() {
                walk(&path, &rel_path, depth + 1, total, max_bytes, out)?;
            } else if meta.is_file() && privmix::images::input::is_image_name(&name) {
                *total += meta.len();
                if *total > max_bytes {
                    return Err(Error::Data(format!(
                        "{}: the images add up to more than {max_bytes} bytes; use fewer or smaller images",
                        dir.display()
                    )));
                }
                let bytes =
                    std::fs::read(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
                out.push((rel_path, bytes));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let mut total = 0;
    walk(root, "", 0, &mut total, max_bytes, &mut out)?;
    Ok(out)
}

fn run_synth(a: SynthArgs) -> Result<()> {
    let mut mechanism: Mechanism = a.mechanism.parse()?;
    match &mut mechanism {
        Mechanism::DpMix(o) => {
            *o = DpMixOptions {
                labels: a.labels.parse()?,
                class_wise: a.class_wise,
            };
        }
        _ if a.labels != "hard" || a.class_wise => {
            return Err(Error::param(
                if a.class_wise { "class-wise" } else { "labels" },
                if a.class_wise {
                    "true".to_string()
                } else {
                    a.labels.clone()
                },
                "--labels and --class-wise apply to --mechanism dpmix only",
            ))
        }
        _ => {}
    }
    match &mut mechanism {
        Mechanism::Projection(p) => {
            *p = ProjectionOptions {
                dim: a.projection_dim,
            }
        }
        _ => {
            if let Some(k) = a.projection_dim {
                return Err(Error::param(
                    "projection-dim",
                    k,
                    "--projection-dim applies to --mechanism projection only",
                ));
            }
        }
    }
    let preset: Preset = a.common.preset.parse()?;
    let orders = parse_orders(&a.common.orders)?;
    let normalize: NormalizeMode = a.normalize.parse()?;
    let mut outputs = vec![("output", &a.output), ("receipt", &a.receipt)];
    if let Some(p) = &a.preview {
        outputs.push(("preview", p));
    }
    for (name, p) in &outputs {
        if same_file(&a.input, p) {
            return Err(Error::param(
                *name,
                p.display(),
                "the output must not overwrite the input",
            ));
        }
    }
    for (i, (name, p)) in outputs.iter().enumerate() {
        if outputs[..i].iter().any(|(_, q)| q == p) {
            return Err(Error::param(
                *name,
                p.display(),
                "the output, the receipt and the preview must be different files",
            ));
        }
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
    let mut rng = match a.seed {
        Some(s) => {
            eprintln!("privmix: --seed {s}: seeded, not for release");
            ReleaseRng::seeded(s)
        }
        None => ReleaseRng::from_entropy()?,
    };
    match input_kind(&a.input) {
        InputKind::Csv => run_synth_csv(&a, &opts, &mechanism, &mut rng),
        InputKind::Image => Err(Error::param(
            "input",
            a.input.display(),
            "this is a single image; give a ZIP or a folder of class folders (<class>/<image>.png), or a CSV",
        )),
        _ if !matches!(mechanism, Mechanism::Cda) => Err(Error::param(
            "mechanism",
            &a.mechanism,
            "image input supports --mechanism cda (DP-CDA) only; drop --mechanism or give a CSV",
        )),
        kind => run_synth_images(&a, &opts, &mut rng, kind),
    }
}

fn run_synth_csv(
    a: &SynthArgs,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    rng: &mut ReleaseRng,
) -> Result<()> {
    let image_flags = [
        ("width", a.width.is_some()),
        ("height", a.height.is_some()),
        ("channels", a.channels.is_some()),
        ("preview", a.preview.is_some()),
    ];
    if let Some((name, _)) = image_flags.iter().find(|(_, given)| *given) {
        return Err(Error::param(
            *name,
            "(given)",
            format!("--{name} applies to image input (a ZIP or a folder of class folders), but {} is read as a CSV; drop --{name}", a.input.display()),
        ));
    }
    let label = a.label.clone().ok_or_else(|| {
        Error::param(
            "label",
            "(none)",
            "pass --label COLUMN naming the label column of the CSV (image ZIPs and folders need none)",
        )
    })?;
    let schema = match &a.schema {
        Some(p) => Some(Schema::from_json(
            &std::fs::read_to_string(p).map_err(|e| Error::io(p.display().to_string(), e))?,
        )?),
        None => None,
    };
    let csv_opts = CsvOptions {
        label: Some(label),
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
    let mut staged = Staged::new();
    let (_, out_file) = staged.file(&a.output)?;
    let out_name = a.output.display().to_string();
    let writer = std::cell::RefCell::new(csv::Writer::from_writer(
        std::io::BufWriter::with_capacity(1 << 20, out_file),
    ));
    let csv_err = |e: csv::Error| Error::Data(format!("{out_name}: cannot write: {e}"));
    let receipt = synthesize_with(
        &table,
        schema.as_ref(),
        opts,
        mechanism,
        rng,
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
        "mechanism": receipt.mechanism,
        "sigma_x": receipt.parameters.sigma_x(), "rows": receipt.parameters.rows_written(),
        "rows_dropped": receipt.data.rows_dropped, "output": a.output, "receipt": a.receipt,
        "seeded": receipt.randomness.seeded,
    });
    if a.common.json {
        print_json(&summary);
    } else {
        eprintln!(
            "privmix: wrote {} synthetic rows to {} with (ε = {:.4}, δ = {}); receipt in {}",
            receipt.parameters.rows_written(),
            a.output.display(),
            receipt.epsilon,
            receipt.delta,
            a.receipt.display()
        );
    }
    Ok(())
}

fn run_synth_images(
    a: &SynthArgs,
    opts: &SynthOptions,
    rng: &mut ReleaseRng,
    kind: InputKind,
) -> Result<()> {
    use privmix::images::{self, ImageOptions};
    if a.label.is_some() {
        eprintln!("privmix: --label is not used for images: the class is the folder name");
    }
    if a.schema.is_some() {
        return Err(Error::param(
            "schema",
            a.schema
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string()),
            "images have the public pixel range 0..255 and need no schema; drop --schema",
        ));
    }
    let img_opts = ImageOptions {
        width: a.width,
        height: a.height,
        channels: a.channels,
        alpha: a.alpha.parse()?,
        ..ImageOptions::default()
    };
    let source = a.input.display().to_string();
    let set = match kind {
        InputKind::Zip => {
            let bytes = std::fs::read(&a.input).map_err(|e| Error::io(source.clone(), e))?;
            images::load_zip(&bytes, &img_opts, &source)?
        }
        InputKind::Dir => {
            let files = read_image_dir(&a.input, img_opts.max_bytes)?;
            images::load_files(files, &img_opts, &source)?
        }
        InputKind::Csv | InputKind::Image => unreachable!("handled in run_synth"),
    };
    for w in &set.warnings {
        eprintln!("privmix: {w}");
    }
    if !a.common.json {
        eprintln!(
            "privmix: read {} images in {} classes, shape {}×{}×{}",
            set.len(),
            set.class_names.len(),
            set.width,
            set.height,
            set.channels
        );
    }
    let mut staged = Staged::new();
    let (_, out_file) = staged.file(&a.output)?;
    let out_name = a.output.display().to_string();
    let sink = std::io::BufWriter::with_capacity(1 << 20, out_file);
    let (sink, preview_png, receipt, files) =
        images::synthesize_images_to(&set, opts, rng, sink, images::PREVIEW_PER_CLASS, |_| {})?;
    let shape = [set.width, set.height, set.channels];
    let (n_images, n_classes) = (set.len(), set.class_names.len());
    drop(set);
    let file = sink
        .into_inner()
        .map_err(|e| Error::Data(format!("{out_name}: cannot write: {e}")))?;
    file.sync_all()
        .map_err(|e| Error::io(out_name.clone(), e))?;
    if let Some(p) = &a.preview {
        let (_, mut pf) = staged.file(p)?;
        pf.write_all(&preview_png)
            .map_err(|e| Error::io(p.display().to_string(), e))?;
    }
    let (_, mut rf) = staged.file(&a.receipt)?;
    rf.write_all(receipt.to_json().as_bytes())
        .map_err(|e| Error::io(a.receipt.display().to_string(), e))?;
    staged.commit()?;
    let summary = json!({
        "epsilon": receipt.epsilon, "delta": receipt.delta, "order": receipt.accountant.order,
        "sigma_x": receipt.parameters.sigma_x(), "rows": receipt.parameters.rows_written(),
        "rows_dropped": receipt.data.rows_dropped, "output": a.output, "receipt": a.receipt,
        "seeded": receipt.randomness.seeded, "images": n_images, "classes": n_classes,
        "shape": shape, "files": files, "preview": a.preview,
    });
    if a.common.json {
        print_json(&summary);
    } else {
        eprintln!(
            "privmix: wrote {} synthetic {}×{} images to {} with (ε = {:.4}, δ = {}); receipt in {}",
            files,
            shape[0],
            shape[1],
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

/// Writes `samples` rows sampled from `model` as CSV (see `ops::gmm_samples_csv`).
fn write_samples(
    staged: &mut Staged,
    path: &Path,
    model: &GmmModel,
    samples: usize,
    rng: &mut ReleaseRng,
) -> Result<usize> {
    let bytes = privmix::ops::gmm_samples_csv(model, samples, rng)?;
    let (_, mut f) = staged.file(path)?;
    let name = path.display().to_string();
    f.write_all(&bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(name, e))?;
    Ok(samples)
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
    let bytes = std::fs::read(&input).map_err(|e| Error::io(input.display().to_string(), e))?;
    let (data, warning) = privmix::ops::gmm_data_exact(&table, &bytes)?;
    if let Some(w) = warning {
        eprintln!("privmix: warning: {w}");
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

#[derive(Subcommand)]
enum FedCommand {
    /// Simulate S parties on one CSV and release their aggregate.
    Simulate(FedSimulateArgs),
    /// Make this party's key pair: PATH (private, keep it) and PATH.pub (share it).
    Keygen(FedKeygenArgs),
    /// Make this party's contribution file from its own CSV.
    Contribute(FedContributeArgs),
    /// Average the parties' contribution files into the synthetic CSV and its receipt.
    Aggregate(FedAggregateArgs),
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct FedParams {
    /// cape (correlated noise that cancels in the average) or conventional.
    #[arg(long, default_value = "cape")]
    variant: String,
    /// Input CSV (optionally gzip-compressed).
    #[arg(long)]
    input: PathBuf,
    /// Label column name.
    #[arg(long)]
    label: String,
    /// Target ε.
    #[arg(long)]
    epsilon: f64,
    /// δ.
    #[arg(long)]
    delta: f64,
    /// Mix order l.
    #[arg(long, default_value_t = 4)]
    mix: usize,
    /// L2 clip norm c, in normalized units (default: max(1, √(feature columns)/8)).
    #[arg(long)]
    clip: Option<f64>,
    /// Released rows T; each class gets ⌊T/K⌋.
    #[arg(long)]
    samples: Option<usize>,
    /// Normalization: dp (default) or public (bounds from --schema); simulate also takes data.
    #[arg(long, default_value = "dp")]
    normalize: String,
    /// Share of ε spent on DP normalization.
    #[arg(long, default_value_t = 0.1)]
    normalize_share: f64,
    /// Schema JSON overriding column types, bounds and categories.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Fixed seed: for tests only; the receipt then says "seeded, not for release".
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct FedSimulateArgs {
    /// Number of parties S.
    #[arg(long)]
    clients: usize,
    /// iid (default) or skewed (half of each class at one party).
    #[arg(long, default_value = "iid")]
    partition: String,
    #[command(flatten)]
    params: FedParams,
    /// Output CSV.
    #[arg(long)]
    output: PathBuf,
    /// Privacy receipt JSON.
    #[arg(long)]
    receipt: PathBuf,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct FedKeygenArgs {
    /// This party's id (distinct within the federation).
    #[arg(long)]
    party: u32,
    /// Private key path; the public key goes to PATH.pub.
    #[arg(long)]
    out: PathBuf,
    /// Fixed seed: for tests only.
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct FedContributeArgs {
    /// This party's id (must match the key).
    #[arg(long)]
    party: u32,
    /// This party's private key file.
    #[arg(long)]
    key: PathBuf,
    /// The other parties' public key files, comma-separated.
    #[arg(long, value_delimiter = ',')]
    peers: Vec<PathBuf>,
    /// Agreed floor on every party's smallest class size (so all parties calibrate alike).
    #[arg(long)]
    pool: Option<usize>,
    /// Agreed session label (bound into the correlated noise streams).
    #[arg(long)]
    session: Option<String>,
    #[command(flatten)]
    params: FedParams,
    /// Contribution file to send to the aggregator.
    #[arg(long)]
    output: PathBuf,
}

#[derive(Args)]
struct FedAggregateArgs {
    /// Contribution files, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    inputs: Vec<PathBuf>,
    /// Output CSV.
    #[arg(long)]
    output: PathBuf,
    /// Privacy receipt JSON.
    #[arg(long)]
    receipt: PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn read_text(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| Error::io(p.display().to_string(), e))
}

/// Options, schema and table of a federated run.
fn fed_inputs(p: &FedParams) -> Result<(FedOptions, Option<Schema>, privmix::data::Table)> {
    let opts = FedOptions {
        variant: p.variant.parse()?,
        epsilon: p.epsilon,
        delta: p.delta,
        mix: p.mix,
        clip: p.clip,
        samples: p.samples,
        normalize: p.normalize.parse()?,
        normalize_share: p.normalize_share,
        preset: p.common.preset.parse()?,
        orders: parse_orders(&p.common.orders)?,
        pool: None,
        session: None,
    };
    privmix::accountant::check_delta(opts.delta)?;
    privmix::accountant::check_epsilon(opts.epsilon)?;
    let schema = match &p.schema {
        Some(path) => Some(Schema::from_json(&read_text(path)?)?),
        None => None,
    };
    let table = read_csv_path(
        &p.input,
        &CsvOptions {
            label: Some(p.label.clone()),
            schema: schema.clone(),
            ..CsvOptions::default()
        },
    )?;
    if table.rows_dropped > 0 {
        eprintln!(
            "privmix: dropped {} row(s) with missing values ('', NA or ?)",
            table.rows_dropped
        );
    }
    Ok((opts, schema, table))
}

fn check_distinct(input: &Path, outputs: &[&Path]) -> Result<()> {
    for (i, o) in outputs.iter().enumerate() {
        if same_file(input, o) {
            return Err(Error::param(
                "output",
                o.display(),
                "the output must not overwrite the input",
            ));
        }
        if outputs[..i].contains(o) {
            return Err(Error::param(
                "receipt",
                o.display(),
                "the receipt and the output must be different files",
            ));
        }
    }
    Ok(())
}

/// Writes a CSV through `fill` and a receipt, atomically.
fn write_csv_and_receipt(
    output: &Path,
    receipt_path: &Path,
    fill: impl FnOnce(&mut dyn FnMut(&[String]) -> Result<()>) -> Result<privmix::federated::FedReceipt>,
) -> Result<privmix::federated::FedReceipt> {
    let mut staged = Staged::new();
    let (_, out_file) = staged.file(output)?;
    let out_name = output.display().to_string();
    let mut writer = csv::Writer::from_writer(std::io::BufWriter::with_capacity(1 << 20, out_file));
    let receipt = {
        let mut put = |cells: &[String]| {
            writer
                .write_record(cells)
                .map_err(|e| Error::Data(format!("{out_name}: cannot write: {e}")))
        };
        fill(&mut put)?
    };
    let mut inner = writer
        .into_inner()
        .map_err(|e| Error::Data(format!("{out_name}: cannot write: {e}")))?;
    inner.flush().map_err(|e| Error::io(out_name.clone(), e))?;
    inner
        .get_ref()
        .sync_all()
        .map_err(|e| Error::io(out_name.clone(), e))?;
    let (_, mut rf) = staged.file(receipt_path)?;
    rf.write_all(receipt.to_json().as_bytes())
        .map_err(|e| Error::io(receipt_path.display().to_string(), e))?;
    staged.commit()?;
    Ok(receipt)
}

fn fed_summary(
    r: &privmix::federated::FedReceipt,
    output: &Path,
    receipt: &Path,
) -> serde_json::Value {
    json!({
        "epsilon": r.epsilon, "delta": r.delta, "variant": r.variant, "mode": r.mode,
        "meets_target": r.meets_target,
        "epsilon_client": r.views.client.epsilon, "epsilon_aggregate": r.views.aggregate.epsilon,
        "epsilon_paper_claim": r.views.paper_claim.epsilon,
        "rows": r.parameters.rows_written, "parties_missing": r.parameters.parties_missing,
        "output": output, "receipt": receipt, "seeded": r.seeded,
    })
}

fn print_fed_summary(
    json_out: bool,
    r: &privmix::federated::FedReceipt,
    output: &Path,
    receipt: &Path,
) {
    if json_out {
        print_json(&fed_summary(r, output, receipt));
    } else {
        eprintln!(
            "privmix: wrote {} rows to {} ({} {}, ε = {:.4} [client view {:.4}, aggregate view {:.4}], δ = {}); receipt in {}",
            r.parameters.rows_written,
            output.display(),
            r.variant.name(),
            r.mode,
            r.epsilon,
            r.views.client.epsilon,
            r.views.aggregate.epsilon,
            r.delta,
            receipt.display()
        );
        for w in &r.warnings {
            eprintln!("privmix: warning: {w}");
        }
    }
}

fn run_fed_simulate(a: FedSimulateArgs) -> Result<()> {
    let partition: Partition = a.partition.parse()?;
    privmix::mechanisms::federated::check_clients(a.clients)?;
    check_distinct(&a.params.input, &[&a.output, &a.receipt])?;
    let (opts, schema, table) = fed_inputs(&a.params)?;
    let mut rng = rng_for(a.params.seed)?;
    let receipt = write_csv_and_receipt(&a.output, &a.receipt, |put| {
        let put = std::cell::RefCell::new(put);
        simulate(
            &table,
            schema.as_ref(),
            &opts,
            a.clients,
            partition,
            &mut rng,
            |names| (put.borrow_mut())(names),
            |cells| (put.borrow_mut())(cells),
        )
    })?;
    print_fed_summary(a.params.common.json, &receipt, &a.output, &a.receipt);
    Ok(())
}

fn run_fed_keygen(a: FedKeygenArgs) -> Result<()> {
    let mut rng = rng_for(a.seed)?;
    let (secret, public) = privmix::federated::keygen(a.party, &mut rng);
    let pub_path = PathBuf::from(format!("{}.pub", a.out.display()));
    for p in [&a.out, &pub_path] {
        if p.exists() {
            return Err(Error::param(
                "out",
                p.display(),
                "the file exists; keys must be fresh, so choose a new path (or delete the old key)",
            ));
        }
    }
    let mut staged = Staged::new();
    let (tmp, mut f) = staged.file(&a.out)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(a.out.display().to_string(), e))?;
    }
    let _ = &tmp;
    f.write_all(secret.as_bytes())
        .map_err(|e| Error::io(a.out.display().to_string(), e))?;
    let (_, mut g) = staged.file(&pub_path)?;
    g.write_all(public.as_bytes())
        .map_err(|e| Error::io(pub_path.display().to_string(), e))?;
    staged.commit()?;
    if a.json {
        print_json(&json!({"party": a.party, "private_key": a.out, "public_key": pub_path}));
    } else {
        eprintln!(
            "privmix: party {}: private key in {} (keep it), public key in {} (share it with the other parties)",
            a.party,
            a.out.display(),
            pub_path.display()
        );
    }
    Ok(())
}

fn run_fed_contribute(a: FedContributeArgs) -> Result<()> {
    let mut key = SecretKeyFile::from_json(&read_text(&a.key)?)?;
    if key.party != a.party {
        return Err(Error::param(
            "party",
            a.party,
            format!(
                "the key {} belongs to party {}; pass your own key or --party {}",
                a.key.display(),
                key.party,
                key.party
            ),
        ));
    }
    if a.peers.is_empty() {
        return Err(Error::param(
            "peers",
            "(none)",
            "list the other parties' public key files: --peers A.pub,B.pub",
        ));
    }
    let peers = a
        .peers
        .iter()
        .map(|p| {
            PublicKeyFile::from_json(&read_text(p)?)
                .map_err(|e| Error::Data(format!("{}: {e}", p.display())))
        })
        .collect::<Result<Vec<_>>>()?;
    check_distinct(&a.params.input, &[&a.output, &a.key])?;
    let (mut opts, schema, table) = fed_inputs(&a.params)?;
    opts.pool = a.pool;
    opts.session = a.session.clone();
    let mut rng = rng_for(a.params.seed)?;
    let c = contribute(&table, schema.as_ref(), &key, &peers, &opts, &mut rng)?;
    key.used_contexts.push(c.context.clone());
    let mut staged = Staged::new();
    let (_, mut f) = staged.file(&a.output)?;
    f.write_all(c.to_json().as_bytes())
        .map_err(|e| Error::io(a.output.display().to_string(), e))?;
    f.sync_all()
        .map_err(|e| Error::io(a.output.display().to_string(), e))?;
    let (ktmp, mut kf) = staged.file(&a.key)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ktmp, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(a.key.display().to_string(), e))?;
    }
    let _ = &ktmp;
    kf.write_all(
        serde_json::to_string_pretty(&key)
            .expect("serializes")
            .as_bytes(),
    )
    .map_err(|e| Error::io(a.key.display().to_string(), e))?;
    staged.commit()?;
    if a.params.common.json {
        print_json(&json!({
            "party": c.party, "context": c.context, "rows": c.rows, "coordinates": c.coordinates.len(),
            "tau_g": c.accounting.tau_g, "tau_e": c.accounting.tau_e, "pool": c.accounting.pool,
            "output": a.output, "seeded": c.seeded,
        }));
    } else {
        eprintln!(
            "privmix: party {}: wrote its contribution ({} rows × {} coordinates) to {}; send it to the aggregator",
            c.party,
            c.rows,
            c.coordinates.len(),
            a.output.display()
        );
    }
    Ok(())
}

fn run_fed_aggregate(a: FedAggregateArgs) -> Result<()> {
    for i in &a.inputs {
        check_distinct(i, &[&a.output, &a.receipt])?;
    }
    let contributions = a
        .inputs
        .iter()
        .map(|p| Contribution::from_json(&read_text(p)?, &p.display().to_string()))
        .collect::<Result<Vec<_>>>()?;
    let receipt = write_csv_and_receipt(&a.output, &a.receipt, |put| {
        let put = std::cell::RefCell::new(put);
        aggregate(
            &contributions,
            |names| (put.borrow_mut())(names),
            |cells| (put.borrow_mut())(cells),
        )
    })?;
    print_fed_summary(a.json, &receipt, &a.output, &a.receipt);
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
        Command::Federated(FedCommand::Simulate(a)) => a.params.common.json,
        Command::Federated(FedCommand::Keygen(a)) => a.json,
        Command::Federated(FedCommand::Contribute(a)) => a.params.common.json,
        Command::Federated(FedCommand::Aggregate(a)) => a.json,
    };
    let result = match cli.command {
        Command::Rdp(a) => run_rdp(a),
        Command::Account(a) => run_account(a),
        Command::Calibrate(a) => run_calibrate(a),
        Command::Synth(a) => run_synth(*a),
        Command::Evaluate(a) => run_evaluate(a),
        Command::Gmm(a) => run_gmm(*a),
        Command::Federated(FedCommand::Simulate(a)) => run_fed_simulate(a),
        Command::Federated(FedCommand::Keygen(a)) => run_fed_keygen(a),
        Command::Federated(FedCommand::Contribute(a)) => run_fed_contribute(a),
        Command::Federated(FedCommand::Aggregate(a)) => run_fed_aggregate(a),
    };
    if let Err(e) = result {
        eprintln!("privmix: error: {e}");
        if json {
            print_json(&json!({"error": e.to_string()}));
        }
        std::process::exit(1);
    }
}

/// `--mix`: a whole number ≥ 1, or `auto` (0 inside the library).
fn parse_mix(s: &str) -> std::result::Result<usize, String> {
    if s == "auto" {
        return Ok(privmix::preprocess::auto::MIX_AUTO);
    }
    match s.parse::<usize>() {
        Ok(l) if l >= 1 => Ok(l),
        _ => Err(format!(
            "'{s}' is not a mix order; give a whole number ≥ 1, or auto"
        )),
    }
}
