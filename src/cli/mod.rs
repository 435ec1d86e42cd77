//! The native command line: a thin layer over [`privmix::api`]. One file per subcommand;
//! this module holds the parser, the arguments several subcommands share, file staging (no
//! partial output file on error) and the error rendering (`--flag` names).

mod account;
mod audit;
mod calibrate;
mod evaluate;
mod federated;
mod gmm;
mod rdp;
mod synth;

use clap::{Args, Parser, Subcommand, ValueEnum};
use privmix::error::{Error, ParamStyle, Result};
use privmix::rng::ReleaseRng;
use serde::Serialize;
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
    Rdp(rdp::RdpArgs),
    /// ε of a mechanism with given noise.
    Account(account::AccountArgs),
    /// Smallest noise meeting a target ε.
    Calibrate(calibrate::CalibrateArgs),
    /// Make a DP synthetic CSV (or a ZIP of PNGs from images) and its privacy receipt.
    Synth(Box<synth::SynthArgs>),
    /// Train on one CSV (e.g. synthetic), test on another (real); prints the accuracy.
    Evaluate(evaluate::EvaluateArgs),
    /// Release a DP Gaussian mixture model (and sample from it); `gmm sample` samples a saved model.
    Gmm(Box<gmm::GmmArgs>),
    /// Federated DP-CDA (CAPE or conventional): simulate, or run keygen → contribute →
    /// aggregate across real parties with no server.
    #[command(subcommand)]
    Federated(federated::FedCommand),
    /// Privacy audit: run the pipeline on neighbouring datasets with a canary many times and
    /// report a Clopper–Pearson lower bound on ε beside the claimed ε.
    Audit(audit::AuditArgs),
}

/// Accountant preset.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum PresetArg {
    /// WBK Thm 27 + the improved conversion.
    Default,
    /// The DP-CDA paper's Thm 9 + the classic conversion.
    Paper,
}

/// A mechanism of `account`, `calibrate` and `synth`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum MechanismArg {
    /// DP-CDA.
    Cda,
    /// DPMix.
    Dpmix,
    /// Local perturbation.
    Local,
    /// Random projection (accounted like local).
    Projection,
}

/// The accountant of `account`, `calibrate` and `synth`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum AccountantArg {
    /// Rényi DP (WBK Theorem 27 + conversion).
    Rdp,
    /// Privacy-loss distribution (DP-CDA label-free); ε is the smaller of PLD and RDP.
    Pld,
}

/// Normalization of the features.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum NormalizeArg {
    /// DP bounds (protected; default).
    Dp,
    /// Bounds from the schema.
    Public,
    /// The data's exact z-scores (NOT protected).
    Data,
}

/// The canonical name of a value of a `ValueEnum` flag (the name the library parses).
pub(crate) fn name_of<E: ValueEnum>(e: &E) -> String {
    e.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

#[derive(Args)]
pub(crate) struct Common {
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Accountant preset: default (WBK Thm 27 + improved conversion) or paper (Thm 9 + classic).
    #[arg(long, value_enum, default_value = "default")]
    pub preset: PresetArg,
    /// RDP orders: a comma list of integers ≥ 2 and/or ranges like 2..256 (default 2..256).
    #[arg(long)]
    pub orders: Option<String>,
}

impl Common {
    /// The preset's name, as requests take it.
    pub fn preset(&self) -> Option<String> {
        Some(name_of(&self.preset))
    }

    /// The parsed order list, if given.
    pub fn orders(&self) -> Result<Option<Vec<u32>>> {
        self.orders
            .as_deref()
            .map(privmix::api::parse_orders)
            .transpose()
    }
}

/// Says on stderr every receipt warning (a column on a default range, a class too small to
/// release, …; the seed note is printed at the start) and every unprotected item
/// ([`print_unprotected`]).
pub(crate) fn print_receipt_notes(warnings: &[String], g: &privmix::receipt::Guarantee) {
    print_warnings(warnings.iter().map(String::as_str));
    print_unprotected(g);
}

/// Says each warning on stderr (the seed note is left out: it is printed at the start).
pub(crate) fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a str>) {
    for w in warnings
        .into_iter()
        .filter(|w| !w.starts_with("seeded, not for release"))
    {
        eprintln!("privmix: warning: {w}");
    }
}

/// Says on stderr, in every output mode, each data-dependent number the receipt declares
/// unprotected (`guarantee.unprotected`): a run that does not keep the whole promise says so
/// where the user sees it, not only in the receipt file.
pub(crate) fn print_unprotected(g: &privmix::receipt::Guarantee) {
    for u in &g.unprotected {
        say_unprotected(u, "the receipt's");
    }
}

/// The stderr line for one unprotected item, filed in `whose` guarantee.unprotected.
pub(crate) fn say_unprotected(item: &str, whose: &str) {
    eprintln!("privmix: warning: NOT protected by DP ({whose} guarantee.unprotected): {item}");
}

/// Prints one JSON value on stdout.
pub(crate) fn print_json(v: &serde_json::Value) {
    println!("{v}");
}

/// Prints a typed response as JSON with snake_case keys (the CLI's convention; the library's
/// responses are camelCase for JS).
pub(crate) fn print_snake<T: Serialize>(v: &T) -> Result<()> {
    let v = serde_json::to_value(v)
        .map_err(|e| Error::Internal(format!("cannot serialize the result: {e}")))?;
    print_json(&snake_keys(v));
    Ok(())
}

fn snake_keys(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| {
                    (
                        privmix::error::Param::new(&k).as_str().to_string(),
                        snake_keys(v),
                    )
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

/// The random generator: the CSPRNG, or a seeded one (tests only, said on stderr).
pub(crate) fn rng_for(seed: Option<u64>) -> Result<ReleaseRng> {
    match seed {
        Some(s) => {
            eprintln!("privmix: --seed {s}: seeded, not for release");
            Ok(ReleaseRng::seeded(s))
        }
        None => ReleaseRng::from_entropy(),
    }
}

/// Reads a text file.
pub(crate) fn read_text(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| Error::io(p.display().to_string(), e))
}

/// Why an output path that is a folder is refused, with the fix.
pub(crate) const IS_A_FOLDER: &str =
    "this is a folder; give a file path (for example a new file name inside that folder)";

/// Temporary files that are removed unless committed (renamed into place).
pub(crate) struct Staged {
    pairs: Vec<(PathBuf, PathBuf)>,
    committed: bool,
}

impl Staged {
    pub fn new() -> Self {
        Staged {
            pairs: Vec::new(),
            committed: false,
        }
    }

    /// A temporary file beside `target`, renamed onto it by [`Staged::commit`].
    pub fn file(&mut self, target: &Path) -> Result<(PathBuf, std::fs::File)> {
        let name = target
            .file_name()
            .ok_or_else(|| Error::param("output", target.display(), "give a file name"))?;
        // Refused here, before anything is written: renaming onto a folder would fail only at
        // commit, after an earlier output of the same run had been put in place.
        if target.is_dir() {
            return Err(Error::io(
                target.display().to_string(),
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, IS_A_FOLDER),
            ));
        }
        let tmp = target.with_file_name(format!(
            ".{}.privmix-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let f = std::fs::File::create(&tmp).map_err(|e| cannot_create(target, e))?;
        self.pairs.push((tmp.clone(), target.to_path_buf()));
        Ok((tmp, f))
    }

    pub fn commit(mut self) -> Result<()> {
        for (tmp, target) in &self.pairs {
            std::fs::rename(tmp, target).map_err(|e| Error::io(target.display().to_string(), e))?;
        }
        self.committed = true;
        Ok(())
    }
}

/// Why an output file could not be created, with the fix: the folder that is missing or not
/// writable is named (the OS error alone, "No such file or directory", does not say which part
/// of the path is at fault).
fn cannot_create(target: &Path, e: std::io::Error) -> Error {
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
        _ => ".".to_string(),
    };
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("cannot create the file: the folder '{folder}' does not exist; create it or choose an output path in an existing folder")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot create the file: no permission to write in '{folder}'; choose a folder you can write to")
        }
        _ => format!("cannot create the file ({e})"),
    };
    Error::io(
        target.display().to_string(),
        std::io::Error::new(e.kind(), why),
    )
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

/// Whether two paths name the same existing file.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Parses the command line, runs the subcommand, and renders an error with `--flag` names
/// (also as `{"error": ...}` on stdout under `--json`).
pub fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Under --json a bad flag value is reported as JSON too.
            if e.use_stderr() && std::env::args().any(|a| a == "--json") {
                print_json(&serde_json::json!({ "error": e.to_string().trim_end() }));
            }
            e.exit()
        }
    };
    let json = match &cli.command {
        Command::Rdp(a) => a.common.json,
        Command::Account(a) => a.common.json,
        Command::Calibrate(a) => a.common.json,
        Command::Synth(a) => a.common.json,
        Command::Evaluate(a) => a.json,
        Command::Gmm(a) => a.json(),
        Command::Federated(f) => f.json(),
        Command::Audit(a) => a.json,
    };
    let result = match cli.command {
        Command::Rdp(a) => rdp::run(a),
        Command::Account(a) => account::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Synth(a) => synth::run(*a),
        Command::Evaluate(a) => evaluate::run(a),
        Command::Gmm(a) => gmm::run(*a),
        Command::Federated(f) => federated::run(f),
        Command::Audit(a) => audit::run(a),
    };
    if let Err(e) = result {
        let message = e.render(ParamStyle::Cli);
        eprintln!("privmix: error: {message}");
        if json {
            print_json(&serde_json::json!({ "error": message }));
        }
        std::process::exit(1);
    }
}
