//! `privmix`: the native command line, a thin layer over the library.

use clap::{Args, Parser, Subcommand};
use privmix::accountant::{Preset, RdpCurve};
use privmix::data::{read_csv_path, CsvOptions, Schema};
use privmix::error::{Error, Result};
use privmix::eval::Model;
use privmix::evaluate::evaluate_tables;
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy};
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
    /// Make a DP synthetic CSV (or a ZIP of PNGs from images) and its privacy receipt.
    Synth(Box<SynthArgs>),
    /// Train on one CSV (e.g. synthetic), test on another (real); prints the accuracy.
    Evaluate(EvaluateArgs),
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
    /// Input: a CSV (optionally gzip-compressed), or images: a ZIP of class folders or a
    /// folder of class folders (`<class>/<image>.png|jpg`).
    #[arg(long)]
    input: PathBuf,
    /// Label column name (CSV input; images take their class from the folder name).
    #[arg(long)]
    label: Option<String>,
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
    check_mechanism(&a.mechanism)?;
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
        InputKind::Csv => run_synth_csv(&a, &opts, &mut rng),
        InputKind::Image => Err(Error::param(
            "input",
            a.input.display(),
            "this is a single image; give a ZIP or a folder of class folders (<class>/<image>.png), or a CSV",
        )),
        kind => run_synth_images(&a, &opts, &mut rng, kind),
    }
}

fn run_synth_csv(a: &SynthArgs, opts: &SynthOptions, rng: &mut ReleaseRng) -> Result<()> {
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
    let receipt = synthesize(
        &table,
        schema.as_ref(),
        opts,
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
        "sigma_x": receipt.parameters.sigma_x, "rows": receipt.parameters.rows_written,
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

fn main() {
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Rdp(a) => a.common.json,
        Command::Account(a) => a.common.json,
        Command::Calibrate(a) => a.common.json,
        Command::Synth(a) => a.common.json,
        Command::Evaluate(a) => a.json,
    };
    let result = match cli.command {
        Command::Rdp(a) => run_rdp(a),
        Command::Account(a) => run_account(a),
        Command::Calibrate(a) => run_calibrate(a),
        Command::Synth(a) => run_synth(*a),
        Command::Evaluate(a) => run_evaluate(a),
    };
    if let Err(e) = result {
        eprintln!("privmix: error: {e}");
        if json {
            print_json(&json!({"error": e.to_string()}));
        }
        std::process::exit(1);
    }
}
