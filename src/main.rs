//! `privmix`: the native command line, a thin layer over the library.

use clap::{Args, Parser, Subcommand};
use privmix::accountant::{Preset, RdpCurve};
use privmix::data::{read_csv_path, CsvOptions, Schema};
use privmix::error::{Error, Result};
use privmix::eval::Model;
use privmix::evaluate::evaluate_tables;
use privmix::federated::{aggregate, contribute, simulate, Contribution, FedOptions, Partition};
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy};
use privmix::mechanisms::federated::pairwise::{PublicKeyFile, SecretKeyFile};
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
    /// Federated DP-CDA (CAPE or conventional): simulate, or run keygen → contribute →
    /// aggregate across real parties with no server.
    #[command(subcommand)]
    Federated(FedCommand),
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

fn read_text(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| Error::io(p.display().to_string(), e))
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
        Command::Federated(FedCommand::Simulate(a)) => a.params.common.json,
        Command::Federated(FedCommand::Keygen(a)) => a.json,
        Command::Federated(FedCommand::Contribute(a)) => a.params.common.json,
        Command::Federated(FedCommand::Aggregate(a)) => a.json,
    };
    let result = match cli.command {
        Command::Rdp(a) => run_rdp(a),
        Command::Account(a) => run_account(a),
        Command::Calibrate(a) => run_calibrate(a),
        Command::Synth(a) => run_synth(a),
        Command::Evaluate(a) => run_evaluate(a),
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
