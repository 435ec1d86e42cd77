//! `privmix synth`: a DP synthetic CSV (or a ZIP of PNGs from images) and its receipt. The
//! flags become an [`api::SynthRequest`]; this file only reads the input and writes the
//! outputs (atomically: no partial file on error).

use super::{name_of, rng_for, same_file, AccountantArg, Common, NormalizeArg, Staged};
use clap::{Args, ValueEnum};
use privmix::api::{self, MixChoice, SynthParams, SynthRequest};
use privmix::data::{read_csv_path, CsvOut};
use privmix::error::{Error, Result};
use privmix::rng::ReleaseRng;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The mechanisms of `synth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SynthMechanismArg {
    /// DP-CDA.
    Cda,
    /// DPMix.
    Dpmix,
    /// Local perturbation.
    Local,
    /// Random projection.
    Projection,
    /// Gaussian class models in a DP principal subspace.
    Gmm,
}

/// dpmix label output.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum LabelsArg {
    /// argmax (default).
    Hard,
    /// One probability column per class.
    Soft,
}

/// The neighbouring relation.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum AdjacencyArg {
    /// Replace one whole record, label included (default); labels, class counts and pool
    /// sizes under DP.
    Standard,
    /// Replace one record's features, keeping its label (labels and class counts public).
    KeepLabel,
}

/// How columns the schema does not type get their type.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum ColumnTypesArg {
    /// Decided under DP (default).
    Dp,
    /// Inferred from the data (NOT protected).
    Data,
}

/// Image alpha handling.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum AlphaArg {
    /// Composite on white.
    White,
    /// Drop the alpha channel.
    Drop,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct SynthArgs {
    /// Input: a CSV (optionally gzip-compressed), or images: a ZIP of class folders or a
    /// folder of class folders (`<class>/<image>.png|jpg`).
    #[arg(long)]
    input: PathBuf,
    /// Label column name (CSV input; images take their class from the folder name).
    #[arg(long)]
    label: Option<String>,
    /// Mechanism: cda (DP-CDA), dpmix, local (local perturbation), projection
    /// (random projection) or gmm (Gaussian class models in a DP principal subspace). Left
    /// out, a numeric table of at least 100 feature columns and 20,000 rows gets gmm, any
    /// other table cda (the receipt says which); image sets alike (20,000 or more images of
    /// at least 100 pixel values get gmm, with k = min(d, 50) components). Images take cda or
    /// gmm by name.
    #[arg(long, value_enum)]
    mechanism: Option<SynthMechanismArg>,
    /// dpmix: label output, hard (argmax; default) or soft (the label column is replaced by one
    /// probability column per class, named `P(label=class)`).
    #[arg(long, value_enum)]
    labels: Option<LabelsArg>,
    /// dpmix: mix within each class (labels are the class, no label noise).
    #[arg(long)]
    class_wise: bool,
    /// projection: projected dimension k (default ⌈d/2⌉, at most 64).
    #[arg(long)]
    projection_dim: Option<usize>,
    /// gmm: the number of principal components k (default min(d, 150)).
    #[arg(long)]
    components: Option<usize>,
    /// Target ε (the noise is calibrated to it).
    #[arg(long)]
    epsilon: Option<f64>,
    /// δ.
    #[arg(long)]
    delta: f64,
    /// Mix order l (cda and dpmix), or `auto` (the default): DP-CDA chooses l from public
    /// numbers (preprocess::auto) and the receipt states the choice; other mechanisms use 4.
    #[arg(long, value_parser = MixChoice::parse)]
    mix: Option<MixChoice>,
    /// L2 clip norm c, in normalized units (cda, local, projection; default 1; dpmix clamps
    /// features to [0, 1] instead).
    #[arg(long)]
    clip: Option<f64>,
    /// Synthetic rows T. cda (standard adjacency): default the rounded sum of the DP class
    /// counts, split over classes in proportion to them; otherwise default: as many as the
    /// input, each class ⌊T/K⌋.
    #[arg(long)]
    samples: Option<usize>,
    /// Adjacency: standard (default: replace one whole record, label included; labels, class
    /// counts and pool sizes under DP) or keep-label (labels and class counts public).
    #[arg(long, value_enum, default_value = "standard")]
    adjacency: AdjacencyArg,
    /// A public lower bound on every class's size (cda, standard adjacency): used as the pool
    /// size instead of the DP floor.
    #[arg(long)]
    pool_floor: Option<u64>,
    /// Types of columns the schema does not type: dp (default: decided under DP) or data
    /// (inferred from the data, NOT protected).
    #[arg(long, value_enum, default_value = "dp")]
    column_types: ColumnTypesArg,
    /// Accountant: pld (default: privacy-loss distribution for every mechanism under the
    /// default preset, RDP as a cross-check; ε is the smaller bound) or rdp (Rényi DP only).
    #[arg(long, value_enum, default_value = "pld")]
    accountant: AccountantArg,
    /// Normalization: dp (default, protected), public (bounds from --schema) or data (the
    /// paper's exact z-scores, NOT protected).
    #[arg(long, value_enum, default_value = "dp")]
    normalize: NormalizeArg,
    /// Share of ε spent on DP normalization (default 0.2; raised up to 0.5 for a small table
    /// whose ranges the default cannot see, and to 0.3 where the column marginals would hold
    /// fewer than 500 rows per σ; a given share is kept).
    #[arg(long)]
    normalize_share: Option<f64>,
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
    #[arg(long, value_enum, default_value = "white")]
    alpha: AlphaArg,
    /// Images: also write a preview grid PNG of the synthetic images (one row per class).
    #[arg(long)]
    preview: Option<PathBuf>,
    /// Privacy receipt JSON.
    #[arg(long)]
    receipt: PathBuf,
    #[command(flatten)]
    pub common: Common,
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
            let meta = match std::fs::metadata(&path) {
                Ok(m) => m,
                // A link to nothing holds no image.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(path.display().to_string(), e)),
            };
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

impl SynthArgs {
    /// The request these flags make (the seed stays with the CLI, which says it is seeded).
    fn request(&self) -> Result<SynthRequest> {
        Ok(SynthRequest {
            label: self.label.clone(),
            mechanism: self.mechanism.as_ref().map(name_of),
            labels: self.labels.as_ref().map(name_of),
            class_wise: self.class_wise.then_some(true),
            projection_dim: self.projection_dim,
            components: self.components,
            epsilon: self.epsilon,
            delta: Some(self.delta),
            mix: self.mix.clone(),
            clip: self.clip,
            samples: self.samples.map(|t| t as u64),
            normalize: Some(name_of(&self.normalize)),
            normalize_share: self.normalize_share,
            schema: None,
            sigma_x: self.sigma_x,
            sigma_y: self.sigma_y,
            seed: None,
            preset: self.common.preset(),
            orders: self.common.orders()?,
            test_share: None,
            model: None,
            adjacency: Some(name_of(&self.adjacency)),
            pool_floor: self.pool_floor,
            column_types: Some(name_of(&self.column_types)),
            accountant: Some(name_of(&self.accountant)),
        })
    }
}

pub(crate) fn run(a: SynthArgs) -> Result<()> {
    let mut params = SynthParams::try_from(&a.request()?)?;
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
    if !a.input.exists() {
        return Err(Error::param(
            "input",
            a.input.display(),
            "there is no file or folder at this path; check the path (a CSV, a ZIP of class folders, or a folder of class folders)",
        ));
    }
    for (i, (name, p)) in outputs.iter().enumerate() {
        if p.is_dir() {
            return Err(Error::param(*name, p.display(), super::IS_A_FOLDER));
        }
        if outputs[..i].iter().any(|(_, q)| q == p) {
            return Err(Error::param(
                *name,
                p.display(),
                "the output, the receipt and the preview must be different files",
            ));
        }
    }
    let mut rng = rng_for(a.seed)?;
    match input_kind(&a.input) {
        InputKind::Csv => {
            if let Some(path) = &a.schema {
                params.schema = Some(privmix::data::Schema::from_json(&super::read_text(path)?)?);
            }
            run_synth_csv(&a, &params, &mut rng)
        }
        InputKind::Image => Err(Error::param(
            "input",
            a.input.display(),
            "this is a single image; give a ZIP or a folder of class folders (<class>/<image>.png), or a CSV",
        )),
        _ if !matches!(
            a.mechanism,
            None | Some(SynthMechanismArg::Cda | SynthMechanismArg::Gmm)
        ) =>
        {
            Err(Error::param(
                "mechanism",
                a.mechanism.as_ref().map(name_of).unwrap_or_default(),
                "image input supports --mechanism cda (DP-CDA) or gmm; drop --mechanism or give a CSV",
            ))
        }
        kind => run_synth_images(&a, &params, &mut rng, kind),
    }
}

fn run_synth_csv(a: &SynthArgs, params: &SynthParams, rng: &mut ReleaseRng) -> Result<()> {
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
    if a.label.is_none() {
        return Err(Error::param(
            "label",
            "(none)",
            "pass --label COLUMN naming the label column of the CSV (image ZIPs and folders need none)",
        ));
    }
    // Every record is kept (missing cells are encoded by the pipeline): nothing is dropped.
    let table = read_csv_path(&a.input, &params.csv_options("input")?)?;
    let mut staged = Staged::new();
    let (_, out_file) = staged.file(&a.output)?;
    let out_name = a.output.display().to_string();
    let csv_err = |e: std::io::Error| Error::Data(format!("{out_name}: cannot write: {e}"));
    let writer = CsvOut::new(out_file);
    // By value: the pipeline reuses the table's memory rather than copying it.
    let (writer, receipt) =
        api::synthesize_table_out(table, params, rng, writer, csv_err, |_| Ok(()))?;
    writer
        .into_inner()
        .map_err(csv_err)?
        .sync_all()
        .map_err(|e| Error::io(out_name.clone(), e))?;
    let (_, mut rf) = staged.file(&a.receipt)?;
    rf.write_all(receipt.to_json().as_bytes())
        .map_err(|e| Error::io(a.receipt.display().to_string(), e))?;
    staged.commit()?;
    let summary = json!({
        "epsilon": receipt.epsilon, "delta": receipt.delta, "order": receipt.accountant.order,
        "accountant": receipt.accountant.accountant, "epsilon_rdp": receipt.accountant.epsilon_rdp,
        "mechanism": receipt.mechanism,
        "sigma_x": receipt.parameters.sigma_x(), "rows": receipt.parameters.rows_written(),
        "rows_dropped": receipt.data.rows_dropped, "output": a.output, "receipt": a.receipt,
        "seeded": receipt.randomness.seeded,
    });
    super::print_receipt_notes(&receipt.warnings, &receipt.guarantee);
    if a.common.json {
        super::print_json(&summary);
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
    params: &SynthParams,
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
        alpha: name_of(&a.alpha).parse()?,
        ..ImageOptions::default()
    };
    let source = a.input.display().to_string();
    let set = match kind {
        InputKind::Zip => {
            let bytes = std::fs::read(&a.input).map_err(|e| Error::io(source.clone(), e))?;
            images::load_zip_with(
                &bytes,
                &img_opts,
                &source,
                api::images::shape_rule(params, rng),
            )?
        }
        InputKind::Dir => {
            let files = read_image_dir(&a.input, img_opts.max_bytes)?;
            images::load_files_with(
                files,
                &img_opts,
                &source,
                api::images::shape_rule(params, rng),
            )?
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
        api::images::synthesize_image_set_to(&set, params, rng, sink, |_| Ok(()))?;
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
    super::print_receipt_notes(&receipt.warnings, &receipt.guarantee);
    if a.common.json {
        super::print_json(&summary);
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
