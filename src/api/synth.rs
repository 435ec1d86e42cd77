//! Tabular synthesis: `synthesizeCsv` / `Dataset.synthesize` in JS, `privmix synth` on a CSV
//! in the CLI. [`SynthRequest`] holds the options as given; [`SynthParams`] is the checked
//! form every pipeline takes, with all defaults applied.

use std::borrow::Cow;

use super::{
    check_seed, csv_write_err, orders_of, preset_of, schema_of, DEFAULT_CLIP, DEFAULT_DELTA,
};
use crate::accountant::{check_delta, check_epsilon, AccountantKind};
use crate::data::{
    read_csv_bytes, Column, ColumnSpec, CsvOptions, CsvOut, MissingPolicy, Pieces, Schema, Table,
};
use crate::error::{Error, Result};
use crate::eval::Model;
use crate::pipelines::synth::{
    synthesize_with, Adjacency, ColumnTypes, DpMixOptions, Mechanism, ProjectionOptions, Sinks,
    SynthOptions,
};
use crate::preprocess::NormalizeMode;
use crate::receipt::Receipt;
use crate::rng::ReleaseRng;
use serde::Deserialize;

/// The default mix order l.
pub const DEFAULT_MIX: u32 = 4;
/// The default share of ε spent on DP normalization.
pub const DEFAULT_NORMALIZE_SHARE: f64 = 0.2;
/// The default held-out share of the utility check.
pub const DEFAULT_TEST_SHARE: f64 = 0.2;

/// A mix order: a number, or `"auto"` (the order [`crate::preprocess::auto::auto_mix`] picks for the data's
/// public shape and the privacy target).
#[derive(Debug, Clone, PartialEq)]
pub enum MixChoice {
    /// l itself.
    Fixed(u32),
    /// `"auto"`.
    Named(String),
}

/// A number (a whole one, up to 2^32 − 1) or a string; anything else is refused saying what a
/// mix order is (serde's untagged enums say only that no variant matched).
impl<'de> Deserialize<'de> for MixChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{Unexpected, Visitor};
        struct Mix;
        impl Visitor<'_> for Mix {
            type Value = MixChoice;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number ≥ 1, or \"auto\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<MixChoice, E> {
                u32::try_from(v)
                    .map(MixChoice::Fixed)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<MixChoice, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<MixChoice, E> {
                if v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v) {
                    Ok(MixChoice::Fixed(v as u32))
                } else {
                    Err(E::invalid_value(Unexpected::Float(v), &self))
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<MixChoice, E> {
                Ok(MixChoice::Named(v.to_owned()))
            }
        }
        d.deserialize_any(Mix)
    }
}

/// Options of `synthesizeCsv` (the JS names of the CLI's `synth` flags).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SynthRequest {
    /// Label column (required for CSV).
    #[serde(default)]
    pub label: Option<String>,
    /// `cda` (default; a wide numeric table gets `gmm` by default:
    /// [`crate::pipelines::synth::auto_gmm`]), `dpmix`, `local`, `projection` or `gmm`.
    #[serde(default)]
    pub mechanism: Option<String>,
    /// dpmix: `hard` (default) or `soft` labels.
    #[serde(default)]
    pub labels: Option<String>,
    /// dpmix: mix within each class.
    #[serde(default)]
    pub class_wise: Option<bool>,
    /// projection: the projected dimension k.
    #[serde(default)]
    pub projection_dim: Option<usize>,
    /// gmm: the number of principal components k.
    #[serde(default)]
    pub components: Option<usize>,
    /// Target ε.
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// δ (default 1e-5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// l (default 4) or `"auto"`.
    #[serde(default)]
    pub mix: Option<MixChoice>,
    /// Clip norm (default 1).
    #[serde(default)]
    pub clip: Option<f64>,
    /// T (default: cda under the standard adjacency, the rounded sum of the DP class counts;
    /// otherwise the input's row count).
    #[serde(default)]
    pub samples: Option<u64>,
    /// `dp` (default), `public` or `data`.
    #[serde(default)]
    pub normalize: Option<String>,
    /// Share of ε for DP normalization (default [`DEFAULT_NORMALIZE_SHARE`], raised
    /// automatically when not given: see [`crate::pipelines::synth::SynthOptions::normalize_share_given`]).
    #[serde(default)]
    pub normalize_share: Option<f64>,
    /// Schema (as the CLI's schema JSON file, parsed).
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
    /// Explicit σx.
    #[serde(default)]
    pub sigma_x: Option<f64>,
    /// σy: paper mode.
    #[serde(default)]
    pub sigma_y: Option<f64>,
    /// Fixed seed (tests only: "seeded, not for release"). A number below 2^53.
    #[serde(default)]
    pub seed: Option<f64>,
    /// `default` or `paper`.
    #[serde(default)]
    pub preset: Option<String>,
    /// RDP orders.
    #[serde(default)]
    pub orders: Option<Vec<u32>>,
    /// Held-out share for `utilityCheck` (default 0.2).
    #[serde(default)]
    pub test_share: Option<f64>,
    /// Model for `utilityCheck`: `logreg` (default) or `tree`.
    #[serde(default)]
    pub model: Option<String>,
    /// `standard` (default: replace one whole record, label included) or `keep-label`.
    #[serde(default)]
    pub adjacency: Option<String>,
    /// A public lower bound on every class's size (cda, standard adjacency).
    #[serde(default)]
    pub pool_floor: Option<u64>,
    /// `dp` (default) or `data`: how columns the schema does not type get their type.
    #[serde(default)]
    pub column_types: Option<String>,
    /// `pld` (default: the privacy-loss-distribution accountant with RDP as a cross-check,
    /// DP-CDA under the default preset) or `rdp`.
    #[serde(default)]
    pub accountant: Option<String>,
}

impl MixChoice {
    /// The automatic choice.
    pub fn auto() -> Self {
        MixChoice::Named("auto".into())
    }

    /// Parses `auto` or a whole number (the CLI's `--mix`).
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim() {
            "auto" => Ok(Self::auto()),
            t => t.parse().map(MixChoice::Fixed).map_err(|_| bad_mix(s)),
        }
    }

    /// `self`, checked: a number, or exactly `"auto"`.
    pub fn checked(&self) -> Result<Self> {
        match self {
            MixChoice::Named(s) if s != "auto" => Err(bad_mix(s)),
            // 0 is the synthesis's internal "auto" sentinel: an explicit 0 is an error.
            MixChoice::Fixed(0) => Err(Error::param(
                "mix",
                0,
                "the mix order l must be at least 1; give l ≥ 1, or \"auto\"",
            )),
            other => Ok(other.clone()),
        }
    }
}

fn bad_mix(s: &str) -> Error {
    Error::param("mix", s, "give a whole number ≥ 1, or \"auto\"")
}

/// Checked synthesis parameters, built once from a [`SynthRequest`] by `TryFrom`: the
/// mechanism, the schema, every default, and the checks that need no data.
#[derive(Debug, Clone)]
pub struct SynthParams {
    /// Label column (CSV input).
    pub label: Option<String>,
    /// The mechanism and its options.
    pub mechanism: Mechanism,
    /// The schema, if any.
    pub schema: Option<Schema>,
    /// The core options; `mix` holds the fixed order, or the default until
    /// [`SynthParams::synth_options`] marks `auto` for the synthesis to resolve.
    pub options: SynthOptions,
    /// Whether the mix order is chosen automatically.
    pub auto_mix: bool,
    /// Fixed seed (tests only).
    pub seed: Option<u64>,
    /// Held-out share of the utility check.
    pub test_share: f64,
    /// Model of the utility check.
    pub model: Model,
}

impl TryFrom<&SynthRequest> for SynthParams {
    type Error = Error;

    fn try_from(r: &SynthRequest) -> Result<Self> {
        let delta = r.delta.unwrap_or(DEFAULT_DELTA);
        check_delta(delta)?;
        if let Some(e) = r.epsilon {
            check_epsilon(e)?;
        }
        let mechanism = mechanism_of(r)?;
        let mix = r.mix.as_ref().map(MixChoice::checked).transpose()?;
        let options = SynthOptions {
            epsilon: r.epsilon,
            delta,
            mix: match mix {
                Some(MixChoice::Fixed(l)) => l as usize,
                _ => crate::preprocess::auto::MIX_AUTO,
            },
            clip: r.clip.unwrap_or(DEFAULT_CLIP),
            samples: r.samples.map(super::check_rows).transpose()?,
            normalize: match &r.normalize {
                None => NormalizeMode::Dp,
                Some(s) => s.parse()?,
            },
            normalize_share: r.normalize_share.unwrap_or(DEFAULT_NORMALIZE_SHARE),
            normalize_share_given: r.normalize_share.is_some(),
            sigma_x: r.sigma_x,
            sigma_y: r.sigma_y,
            preset: preset_of(&r.preset)?,
            orders: orders_of(&r.orders)?,
            adjacency: match &r.adjacency {
                None => Adjacency::default(),
                Some(s) => s.parse()?,
            },
            pool_floor: r
                .pool_floor
                .map(|f| {
                    usize::try_from(f).map_err(|_| {
                        Error::param("pool_floor", f, "give a class-size floor below 2^32")
                    })
                })
                .transpose()?,
            column_types: match &r.column_types {
                None => ColumnTypes::default(),
                Some(s) => s.parse()?,
            },
            accountant: match &r.accountant {
                None => AccountantKind::Pld,
                Some(s) => s.parse()?,
            },
            prior: None,
            mechanism_given: r.mechanism.is_some(),
        };
        let test_share = r.test_share.unwrap_or(DEFAULT_TEST_SHARE);
        if !(test_share > 0.0 && test_share < 1.0) {
            return Err(Error::param(
                "test_share",
                test_share,
                "use a share in (0, 1), e.g. 0.2",
            ));
        }
        Ok(SynthParams {
            label: r.label.clone(),
            mechanism,
            schema: schema_of(&r.schema)?,
            auto_mix: !matches!(mix, Some(MixChoice::Fixed(_))),
            options,
            seed: check_seed(r.seed)?,
            test_share,
            model: r.model.as_deref().unwrap_or("logreg").parse()?,
        })
    }
}

/// The mechanism a request names, with its options; options of another mechanism are refused.
fn mechanism_of(r: &SynthRequest) -> Result<Mechanism> {
    let mut m: Mechanism = r.mechanism.as_deref().unwrap_or("cda").parse()?;
    let misplaced = |name: &str, value: &dyn std::fmt::Display, what: &str| {
        Err(Error::param(
            name,
            value,
            format!("applies to the {what} mechanism only; leave it out"),
        ))
    };
    match &mut m {
        Mechanism::DpMix(o) => {
            *o = DpMixOptions {
                labels: match r.labels.as_deref() {
                    None => o.labels,
                    Some(l) => l.parse()?,
                },
                class_wise: r.class_wise.unwrap_or(false),
            }
        }
        _ => {
            if let Some(l) = &r.labels {
                return misplaced("labels", l, "dpmix");
            }
            if let Some(c) = r.class_wise {
                return misplaced("class_wise", &c, "dpmix");
            }
        }
    }
    match &mut m {
        Mechanism::Projection(p) => {
            *p = ProjectionOptions {
                dim: r.projection_dim,
            }
        }
        _ => {
            if let Some(k) = r.projection_dim {
                return misplaced("projection_dim", &k, "projection");
            }
        }
    }
    match &mut m {
        Mechanism::Gmm(o) => o.components = r.components,
        _ => {
            if let Some(k) = r.components {
                return misplaced("components", &k, "gmm");
            }
        }
    }
    Ok(m)
}

impl SynthParams {
    /// The columns whose cells the output writes as they are in every dialect (a `;`
    /// input's output writes other numbers with decimal commas, `data::CsvOut::semicolon`):
    /// the label and the schema's categorical columns, so that a level such as `250.00`
    /// keeps its point. Public: the options and the schema.
    pub fn text_columns(&self) -> Vec<String> {
        let categorical = self.schema.iter().flat_map(|s| {
            s.columns
                .iter()
                .filter(|(_, c)| matches!(c, ColumnSpec::Categorical { .. }))
                .map(|(n, _)| n.clone())
        });
        self.label.iter().cloned().chain(categorical).collect()
    }

    /// CSV reading options.
    pub fn csv_options(&self, source_name: &str) -> Result<CsvOptions> {
        let label = self.label.clone().ok_or_else(|| {
            Error::param(
                "label",
                "(none)",
                "choose the label column (the class of each row)",
            )
        })?;
        Ok(CsvOptions {
            label: Some(label),
            schema: self.schema.clone(),
            source_name: source_name.to_string(),
            // Every record is kept (missing cells are encoded by the pipeline, which also
            // re-decides the types of columns the schema does not type).
            missing: MissingPolicy::Keep,
            ..CsvOptions::default()
        })
    }

    /// The parameters of a call on a table read once beforehand (the npm `Dataset`) with
    /// the label `label` and the schema `read_with`. The call's label, if it gives one, must
    /// be the table's, and its schema, if it gives one, the one the table was read with:
    /// a schema acts when the table is read (its "ignore" columns are dropped there, its
    /// types applied), so a schema given only to a call on a table read without it was
    /// half applied (its "ignore" columns were synthesized and released, and the utility
    /// check failed on a column it types categorical). Without one, the reading's schema
    /// applies (its bounds and labels used to be dropped).
    pub fn on_table(
        mut self,
        table: &Table,
        label: &str,
        read_with: Option<&Schema>,
    ) -> Result<Self> {
        match self.label.as_deref() {
            Some(l) if l != label => {
                return Err(Error::param(
                    "label",
                    l,
                    format!("the table was read with the label column '{label}'; leave label out, or read the file again with label '{l}'"),
                ))
            }
            _ => self.label = Some(label.to_string()),
        }
        match (&self.schema, read_with) {
            (None, _) => self.schema = read_with.cloned(),
            (Some(given), Some(read)) if given == read => {}
            (Some(given), read) => {
                // Named against the header first: a schema for another file says so.
                given.check_header("input", &table.names, Some(label))?;
                let why = match read {
                    Some(_) => "the table was read with another schema; leave schema out to use that one, or read the file again with the new schema",
                    None => "the table was read without a schema, and a schema acts when the file is read (its \"ignore\" columns are dropped, its types applied); read the file again with the schema (new Dataset(csv, {label, schema}))",
                };
                return Err(Error::param("schema", "(not the table's)", why));
            }
        }
        Ok(self)
    }

    /// The core options of a synthesis, the same for every table: `auto` (the default mix
    /// order) is left for the synthesis to resolve by one rule for every caller
    /// (preprocess::auto), after normalization, from the class sizes it may use.
    pub fn synth_options(&self) -> SynthOptions {
        let mut opts = self.options.clone();
        if self.auto_mix {
            opts.mix = crate::preprocess::auto::MIX_AUTO;
        }
        opts
    }
}

/// Rows per class of a table whose label is set, in level order.
pub fn class_counts(table: &Table) -> Result<Vec<usize>> {
    let li = table
        .label_index
        .ok_or_else(|| Error::param("label", "(none)", "choose the label column"))?;
    match &table.columns[li] {
        Column::Categorical { codes, levels } => {
            let mut n = vec![0usize; levels.len()];
            for &c in codes {
                n[c as usize] += 1;
            }
            Ok(n)
        }
        Column::Numeric { .. } => Err(Error::Internal("the label must be categorical".into())),
    }
}

/// Runs the synthesis of `table` with checked parameters, handing the header and each row
/// to the sinks as they are made (the CLI streams them to a file). Give the table by value
/// when it is not needed afterwards: the pipeline then reuses its memory instead of copying it.
pub fn synthesize_table<'t>(
    table: impl Into<Cow<'t, Table>>,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    mut header: impl FnMut(&[String]) -> Result<()>,
    mut row: impl FnMut(&[String]) -> Result<()>,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<Receipt> {
    let table: Cow<'t, Table> = table.into();
    let opts = p.synth_options();
    let sinks = Sinks {
        header: &mut header,
        row: &mut row,
        progress: &mut progress,
    };
    synthesize_with(table, p.schema.as_ref(), &opts, &p.mechanism, rng, sinks)
}

/// Runs the synthesis of `table` into CSV bytes (header included); by value as in
/// [`synthesize_table`].
pub fn synthesize_table_csv<'t>(
    table: impl Into<Cow<'t, Table>>,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(Vec<u8>, Receipt)> {
    let (pieces, receipt) = synthesize_table_pieces(table, p, rng, progress)?;
    Ok((pieces.concat(), receipt))
}

/// [`synthesize_table_csv`], the bytes held as [`Pieces`]: the output grows without
/// reallocating (a 1,000,000 × 20 table's 115 MB of CSV would otherwise be copied as it
/// grows, its old and new buffers held together), and the caller can copy it out piece by
/// piece.
pub fn synthesize_table_pieces<'t>(
    table: impl Into<Cow<'t, Table>>,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(Pieces, Receipt)> {
    let out = CsvOut::new(Pieces::default());
    let (out, receipt) = synthesize_table_out(table, p, rng, out, csv_write_err, progress)?;
    Ok((out.into_pieces(), receipt))
}

/// [`synthesize_table`] into `out`: the CSV bytes (header included) go to `out`'s writer
/// about 256 KiB at a time as they are made (the bindings hand them on to JavaScript, so the
/// whole output never sits in the wasm memory). Returns the writer, everything written to it
/// (not flushed), and the receipt.
pub fn synthesize_table_to<'t, W: std::io::Write>(
    table: impl Into<Cow<'t, Table>>,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    out: W,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(W, Receipt)> {
    let (out, receipt) =
        synthesize_table_out(table, p, rng, CsvOut::new(out), csv_write_err, progress)?;
    Ok((out.into_inner().map_err(csv_write_err)?, receipt))
}

/// [`synthesize_table`] with its records written to `out` (a writer that has written
/// nothing yet), a write's failure reported as `write_err` of it. A `;` input's output is
/// written in its dialect, `;` and decimal commas ([`CsvOut::semicolon`]), and the receipt
/// says so. Returns the writer, everything written to it (not flushed), and the receipt.
pub fn synthesize_table_out<'t, W: std::io::Write>(
    table: impl Into<Cow<'t, Table>>,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    mut out: CsvOut<W>,
    write_err: impl Fn(std::io::Error) -> Error,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(CsvOut<W>, Receipt)> {
    let table: Cow<'t, Table> = table.into();
    // A `;` input (decimal commas) gets its output in the same dialect.
    let semicolon = table.delimiter == b';';
    if semicolon {
        out.semicolon(&p.text_columns());
    }
    let out = std::cell::RefCell::new(out);
    let mut receipt = synthesize_table(
        table,
        p,
        rng,
        |names| out.borrow_mut().write_record(names).map_err(&write_err),
        |cells| out.borrow_mut().write_record(cells).map_err(&write_err),
        progress,
    )?;
    if semicolon {
        receipt
            .warnings
            .push(crate::data::SEMICOLON_OUTPUT.to_string());
    }
    Ok((out.into_inner(), receipt))
}

/// Reads `csv` and synthesizes from it: `synthesizeCsv`.
pub fn synthesize_csv(
    csv: &[u8],
    req: &SynthRequest,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(Vec<u8>, Receipt)> {
    let p = SynthParams::try_from(req)?;
    let table = read_csv_bytes(csv, &p.csv_options("input")?)?;
    let mut rng = super::rng_for_seed(p.seed)?;
    synthesize_table_csv(table, &p, &mut rng, progress)
}
