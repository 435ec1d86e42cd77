//! The operations the JavaScript API offers (`rdp`, `account`, `calibrate`, `synthesizeCsv`,
//! the utility check, ...), with serde request and response types in camelCase.
//!
//! Everything here is plain Rust over bytes and structs: the wasm bindings in `src/wasm.rs`
//! only convert JS values to these types and errors to JS `Error`s. The receipt is the same
//! document the CLI writes (snake_case keys), so a receipt from the browser and one from the
//! CLI can be compared field by field.

use crate::accountant::subsampled_gaussian::validate_orders;
use crate::accountant::{check_delta, check_epsilon, default_orders, Preset, RdpCurve};
use crate::data::{read_csv_bytes, Column, CsvOptions, Schema, Table};
use crate::error::{Error, Result};
use crate::eval::Model;
use crate::evaluate::{evaluate_tables, EvalReport};
use crate::images::{self, ImageOptions, ImageSet, ImageSetSummary};
use crate::mechanisms::cda::accounting::{calibrate_sigma_x, suggest_mix, CdaPrivacy};
use crate::preprocess::NormalizeMode;
use crate::receipt::Receipt;
use crate::rng::ReleaseRng;
use crate::synth::{synthesize_with, DpMixOptions, Mechanism, ProjectionOptions, SynthOptions};
use serde::{Deserialize, Serialize};

fn preset_of(p: &Option<String>) -> Result<Preset> {
    match p {
        None => Ok(Preset::Default),
        Some(s) => s.parse(),
    }
}

fn orders_of(o: &Option<Vec<u32>>) -> Result<Vec<u32>> {
    match o {
        None => Ok(default_orders()),
        Some(v) => {
            validate_orders(v)?;
            Ok(v.clone())
        }
    }
}

fn check_mechanism(m: &Option<String>) -> Result<()> {
    match m.as_deref() {
        None | Some("cda") => Ok(()),
        Some(other) => Err(Error::param(
            "mechanism",
            other,
            "this operation supports 'cda' (DP-CDA)",
        )),
    }
}

/// `rdp(params)`: the raw subsampled-Gaussian RDP curve.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RdpRequest {
    /// Sampling rate q.
    pub sampling_rate: f64,
    /// Noise multiplier z.
    pub noise_multiplier: f64,
    /// `default` or `paper`.
    #[serde(default)]
    pub preset: Option<String>,
    /// RDP orders (default 2..=256).
    #[serde(default)]
    pub orders: Option<Vec<u32>>,
}

/// The result of [`rdp`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RdpResponse {
    /// Orders.
    pub orders: Vec<u32>,
    /// RDP at each order.
    pub rdp: Vec<f64>,
    /// Preset name.
    pub preset: &'static str,
}

/// The raw RDP curve of the subsampled-without-replacement Gaussian.
pub fn rdp(r: &RdpRequest) -> Result<RdpResponse> {
    let preset = preset_of(&r.preset)?;
    let orders = orders_of(&r.orders)?;
    if r.noise_multiplier.is_nan() || r.noise_multiplier <= 0.0 {
        return Err(Error::param(
            "noiseMultiplier",
            r.noise_multiplier,
            "must be a positive number",
        ));
    }
    let c = RdpCurve::subsampled_gaussian(
        r.sampling_rate,
        r.noise_multiplier,
        &orders,
        preset.bound(),
    )?;
    Ok(RdpResponse {
        orders: c.orders,
        rdp: c.rdp,
        preset: preset.name(),
    })
}

/// `account(params)` and `calibrate(params)`: DP-CDA parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MechanismRequest {
    /// Only `cda`.
    #[serde(default)]
    pub mechanism: Option<String>,
    /// Pool size n (smallest class).
    pub pool: u64,
    /// Mix order l.
    pub mix: u32,
    /// Clip norm c (default 1).
    #[serde(default)]
    pub clip: Option<f64>,
    /// Feature noise σx (for `account`).
    #[serde(default)]
    pub sigma_x: Option<f64>,
    /// Label noise σy: paper mode.
    #[serde(default)]
    pub sigma_y: Option<f64>,
    /// Number of mixes T.
    pub samples: u64,
    /// δ.
    pub delta: f64,
    /// Target ε (for `calibrate`).
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// `default` or `paper`.
    #[serde(default)]
    pub preset: Option<String>,
    /// RDP orders.
    #[serde(default)]
    pub orders: Option<Vec<u32>>,
}

/// ε under the other preset.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OtherPreset {
    /// Preset name.
    pub preset: &'static str,
    /// ε.
    pub epsilon: f64,
    /// Optimal order.
    pub order: u32,
}

/// The result of [`account`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountResponse {
    /// ε.
    pub epsilon: f64,
    /// Optimal order.
    pub order: u32,
    /// δ.
    pub delta: f64,
    /// Preset.
    pub preset: &'static str,
    /// `cda`.
    pub mechanism: &'static str,
    /// `label-free` or `paper`.
    pub mode: &'static str,
    /// z of one step.
    pub noise_multiplier: f64,
    /// l / n.
    pub sampling_rate: f64,
    /// The same under the other preset.
    pub epsilon_other_preset: OtherPreset,
}

fn mode(sigma_y: Option<f64>) -> &'static str {
    if sigma_y.is_some() {
        "paper"
    } else {
        "label-free"
    }
}

/// ε of DP-CDA with the given noise.
pub fn account(r: &MechanismRequest) -> Result<AccountResponse> {
    check_mechanism(&r.mechanism)?;
    let preset = preset_of(&r.preset)?;
    let orders = orders_of(&r.orders)?;
    let sigma_x = r
        .sigma_x
        .ok_or_else(|| Error::param("sigmaX", "(none)", "give the feature noise sigmaX"))?;
    let p = CdaPrivacy {
        pool: r.pool,
        mix: r.mix,
        clip: r.clip.unwrap_or(1.0),
        sigma_x,
        sigma_y: r.sigma_y,
        samples: r.samples,
    };
    let e = p.epsilon(r.delta, &orders, preset, None)?;
    let o = p.epsilon(r.delta, &orders, preset.other(), None)?;
    Ok(AccountResponse {
        epsilon: e.epsilon,
        order: e.order,
        delta: r.delta,
        preset: preset.name(),
        mechanism: "cda",
        mode: mode(r.sigma_y),
        noise_multiplier: p.noise_multiplier()?,
        sampling_rate: p.sampling_rate(),
        epsilon_other_preset: OtherPreset {
            preset: preset.other().name(),
            epsilon: o.epsilon,
            order: o.order,
        },
    })
}

/// The result of [`calibrate`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalibrateResponse {
    /// The smallest σx found whose ε ≤ the target.
    pub sigma_x: f64,
    /// Its ε (re-accounted).
    pub epsilon: f64,
    /// Optimal order.
    pub order: u32,
    /// The target.
    pub target_epsilon: f64,
    /// δ.
    pub delta: f64,
    /// z of one step.
    pub noise_multiplier: f64,
    /// Preset.
    pub preset: &'static str,
    /// `cda`.
    pub mechanism: &'static str,
    /// `label-free` or `paper`.
    pub mode: &'static str,
}

/// The smallest σx whose ε is at most the target.
pub fn calibrate(r: &MechanismRequest) -> Result<CalibrateResponse> {
    check_mechanism(&r.mechanism)?;
    let preset = preset_of(&r.preset)?;
    let orders = orders_of(&r.orders)?;
    let target = r
        .epsilon
        .ok_or_else(|| Error::param("epsilon", "(none)", "give the target epsilon"))?;
    let c = calibrate_sigma_x(
        r.pool,
        r.mix,
        r.clip.unwrap_or(1.0),
        r.sigma_y,
        r.samples,
        r.delta,
        target,
        &orders,
        preset,
        None,
    )?;
    Ok(CalibrateResponse {
        sigma_x: c.sigma_x,
        epsilon: c.epsilon,
        order: c.order,
        target_epsilon: target,
        delta: r.delta,
        noise_multiplier: c.noise_multiplier,
        preset: preset.name(),
        mechanism: "cda",
        mode: mode(r.sigma_y),
    })
}

/// A mix order: a number, or `"auto"` (see [`suggest_mix`]).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum MixChoice {
    /// l itself.
    Fixed(u32),
    /// `"auto"`.
    Named(String),
}

/// Options of `synthesizeCsv` (the JS names of the CLI's `synth` flags).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SynthRequest {
    /// Label column (required for CSV).
    #[serde(default)]
    pub label: Option<String>,
    /// `cda` (default), `dpmix`, `local` or `projection`.
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
    /// T (default: the input's row count).
    #[serde(default)]
    pub samples: Option<u64>,
    /// `dp` (default), `public` or `data`.
    #[serde(default)]
    pub normalize: Option<String>,
    /// Share of ε for DP normalization (default 0.1).
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
}

/// A schema given as an object or as JSON text (the CLI's schema file format).
fn schema_of(v: &Option<serde_json::Value>) -> Result<Option<Schema>> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Schema::from_json(s).map(Some),
        Some(v) => Schema::from_json(&v.to_string()).map(Some),
    }
}

/// The random generator a request asks for.
pub fn rng_for(seed: Option<f64>) -> Result<ReleaseRng> {
    match seed {
        None => ReleaseRng::from_entropy(),
        Some(s) => {
            if !(s.is_finite() && s >= 0.0 && s.fract() == 0.0 && s < 9_007_199_254_740_992.0) {
                return Err(Error::param(
                    "seed",
                    s,
                    "a seed is an integer in [0, 2^53); leave it out for a release",
                ));
            }
            Ok(ReleaseRng::seeded(s as u64))
        }
    }
}

impl SynthRequest {
    /// The schema, if any.
    pub fn schema(&self) -> Result<Option<Schema>> {
        schema_of(&self.schema)
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
            schema: self.schema()?,
            source_name: source_name.to_string(),
            ..CsvOptions::default()
        })
    }

    /// The mechanism and its options.
    pub fn mechanism(&self) -> Result<Mechanism> {
        let mut m: Mechanism = self.mechanism.as_deref().unwrap_or("cda").parse()?;
        let misplaced = |name: &str, what: &str| {
            Err(Error::param(
                name,
                what,
                format!("{name} applies to another mechanism; drop it"),
            ))
        };
        match &mut m {
            Mechanism::DpMix(o) => {
                *o = DpMixOptions {
                    labels: match self.labels.as_deref() {
                        None => o.labels,
                        Some(l) => l.parse()?,
                    },
                    class_wise: self.class_wise.unwrap_or(false),
                }
            }
            _ if self.labels.is_some() => return misplaced("labels", "dpmix"),
            _ if self.class_wise.is_some() => return misplaced("classWise", "dpmix"),
            _ => {}
        }
        match &mut m {
            Mechanism::Projection(p) => {
                *p = ProjectionOptions {
                    dim: self.projection_dim,
                }
            }
            _ if self.projection_dim.is_some() => return misplaced("projectionDim", "projection"),
            _ => {}
        }
        Ok(m)
    }

    /// The core options, resolving `mix: "auto"` from the table's class sizes (public
    /// information under the adjacency) and the privacy target.
    pub fn synth_options(&self, table: &Table) -> Result<SynthOptions> {
        let sizes = match (&self.mix, table.label_index) {
            (Some(MixChoice::Named(_)), Some(_)) => class_counts(table)?,
            _ => Vec::new(),
        };
        self.synth_options_for(&sizes, table.n_rows, table.n_cols().saturating_sub(1))
    }

    /// [`Self::synth_options`] from the public shape of the data: class sizes (needed only
    /// for `mix: "auto"`), the row count and the number of feature columns.
    pub fn synth_options_for(
        &self,
        class_sizes: &[usize],
        n_rows: usize,
        n_features: usize,
    ) -> Result<SynthOptions> {
        // The shape is no longer needed here: `auto` is resolved inside the synthesis.
        let _ = (class_sizes, n_rows, n_features);
        let d = SynthOptions::default();
        let delta = self.delta.unwrap_or(d.delta);
        check_delta(delta)?;
        if let Some(e) = self.epsilon {
            check_epsilon(e)?;
        }
        let mut opts = SynthOptions {
            epsilon: self.epsilon,
            delta,
            mix: d.mix,
            clip: self.clip.unwrap_or(d.clip),
            samples: self.samples.map(|s| s as usize),
            normalize: match &self.normalize {
                None => NormalizeMode::Dp,
                Some(s) => s.parse()?,
            },
            normalize_share: self.normalize_share.unwrap_or(d.normalize_share),
            sigma_x: self.sigma_x,
            sigma_y: self.sigma_y,
            preset: preset_of(&self.preset)?,
            orders: orders_of(&self.orders)?,
        };
        opts.mix = match &self.mix {
            None => d.mix,
            Some(MixChoice::Fixed(l)) => *l as usize,
            // One rule for every caller: the synthesis resolves it (preprocess::auto).
            Some(MixChoice::Named(s)) if s == "auto" => crate::preprocess::auto::MIX_AUTO,
            Some(MixChoice::Named(s)) => {
                return Err(Error::param(
                    "mix",
                    s,
                    "give a whole number ≥ 1, or \"auto\"",
                ))
            }
        };
        Ok(opts)
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
        Column::Numeric { .. } => Err(Error::Data(
            "internal: the label must be categorical".into(),
        )),
    }
}

/// Runs the synthesis of `table` into CSV bytes (header included).
pub fn synthesize_table_csv(
    table: &Table,
    req: &SynthRequest,
    rng: &mut ReleaseRng,
    progress: impl FnMut(f64),
) -> Result<(Vec<u8>, Receipt)> {
    let opts = req.synth_options(table)?;
    let mechanism = req.mechanism()?;
    let schema = req.schema()?;
    let out = std::cell::RefCell::new(csv::Writer::from_writer(Vec::with_capacity(
        table
            .n_rows
            .saturating_mul(table.n_cols())
            .saturating_mul(4)
            .min(1 << 30),
    )));
    let csv_err = |e: csv::Error| Error::Data(format!("cannot write the output: {e}"));
    let receipt = synthesize_with(
        table,
        schema.as_ref(),
        &opts,
        &mechanism,
        rng,
        |names| out.borrow_mut().write_record(names).map_err(csv_err),
        |cells| out.borrow_mut().write_record(cells).map_err(csv_err),
        progress,
    )?;
    let bytes = out
        .into_inner()
        .into_inner()
        .map_err(|e| Error::Data(format!("cannot write the output: {e}")))?;
    Ok((bytes, receipt))
}

/// Reads `csv` and synthesizes from it: `synthesizeCsv`.
pub fn synthesize_csv(
    csv: &[u8],
    req: &SynthRequest,
    progress: impl FnMut(f64),
) -> Result<(Vec<u8>, Receipt)> {
    // Cheap checks before parsing a large input.
    check_delta(req.delta.unwrap_or(1e-5))?;
    if let Some(e) = req.epsilon {
        check_epsilon(e)?;
    }
    let table = read_csv_bytes(csv, &req.csv_options("input")?)?;
    let mut rng = rng_for(req.seed)?;
    synthesize_table_csv(&table, req, &mut rng, progress)
}

/// The `utilityCheck` result: train on synthetic, test on a held-out real split, beside the
/// same model trained on the real training split.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UtilityReport {
    /// Accuracy of the model trained on synthetic data (from the training split only).
    pub synthetic_accuracy: f64,
    /// Accuracy of the model trained on the real training split.
    pub real_accuracy: f64,
    /// Accuracy of always predicting the most common training class.
    pub majority_accuracy: f64,
    /// Real training rows (the synthesizer saw only these).
    pub train_rows: usize,
    /// Held-out real rows.
    pub test_rows: usize,
    /// Synthetic rows.
    pub synthetic_rows: usize,
    /// Model.
    pub model: String,
    /// ε of the check's own synthesis (it is a separate run on the training split; its
    /// output is used only for this number and is not released).
    pub epsilon: f64,
}

/// Splits `table` (stratified by class, shuffled with `rng`), synthesizes from the training
/// split with `req`, and scores a model trained on the synthetic rows on the held-out split.
pub fn utility_check(
    table: &Table,
    req: &SynthRequest,
    rng: &mut ReleaseRng,
    mut progress: impl FnMut(f64),
) -> Result<UtilityReport> {
    use rand::seq::SliceRandom;
    let share = req.test_share.unwrap_or(0.2);
    if !(share > 0.0 && share < 1.0) {
        return Err(Error::param(
            "testShare",
            share,
            "use a share in (0, 1), e.g. 0.2",
        ));
    }
    let model: Model = req.model.as_deref().unwrap_or("logreg").parse()?;
    let li = table
        .label_index
        .ok_or_else(|| Error::param("label", "(none)", "choose the label column"))?;
    let Column::Categorical { codes, levels } = &table.columns[li] else {
        return Err(Error::Data(
            "internal: the label must be categorical".into(),
        ));
    };
    let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); levels.len()];
    for (i, &c) in codes.iter().enumerate() {
        by_class[c as usize].push(i as u32);
    }
    let (mut train_idx, mut test_idx) = (Vec::new(), Vec::new());
    for rows in &mut by_class {
        rows.shuffle(rng);
        let n_test = ((rows.len() as f64) * share).round() as usize;
        let n_test = n_test.min(rows.len().saturating_sub(1));
        test_idx.extend_from_slice(&rows[..n_test]);
        train_idx.extend_from_slice(&rows[n_test..]);
    }
    if test_idx.is_empty() {
        return Err(Error::Data(
            "the data is too small to hold out a test split; the utility check needs more rows"
                .into(),
        ));
    }
    train_idx.sort_unstable();
    test_idx.sort_unstable();
    let train = table.select_rows(&train_idx);
    let test = table.select_rows(&test_idx);
    let (bytes, receipt) = synthesize_table_csv(&train, req, rng, |f| progress(0.8 * f))?;
    let synth = read_csv_bytes(
        &bytes,
        &CsvOptions {
            label: Some(table.names[li].clone()),
            source_name: "synthetic".into(),
            ..CsvOptions::default()
        },
    )?;
    progress(0.85);
    let s: EvalReport = evaluate_tables(&synth, &test, model)?;
    progress(0.95);
    let r: EvalReport = evaluate_tables(&train, &test, model)?;
    let train_counts = class_counts(&train)?;
    let majority = train_counts
        .iter()
        .enumerate()
        .max_by_key(|(_, n)| **n)
        .map(|(c, _)| c as u32)
        .unwrap_or(0);
    let Column::Categorical { codes: tcodes, .. } = &test.columns[li] else {
        unreachable!("same table");
    };
    let majority_accuracy =
        tcodes.iter().filter(|&&c| c == majority).count() as f64 / tcodes.len() as f64;
    progress(1.0);
    Ok(UtilityReport {
        synthetic_accuracy: s.accuracy,
        real_accuracy: r.accuracy,
        majority_accuracy,
        train_rows: train.n_rows,
        test_rows: test.n_rows,
        synthetic_rows: synth.n_rows,
        model: s.model,
        epsilon: receipt.epsilon,
    })
}

/// One column's histogram, real against synthetic, on shared bins.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnHistogram {
    /// Column name.
    pub name: String,
    /// `numeric` or `categorical`.
    pub kind: &'static str,
    /// Bin labels (categories, or bin lower edges for numbers).
    pub bins: Vec<String>,
    /// Real counts per bin.
    pub real: Vec<u32>,
    /// Synthetic counts per bin.
    pub synthetic: Vec<u32>,
}

const HIST_BINS: usize = 20;

/// Per-column histograms of `real` and `synthetic` (same header) for the preview. The bins
/// come from the real data; this is for the data owner's eyes only and is never part of a
/// download.
pub fn histograms(real: &Table, synthetic: &Table) -> Result<Vec<ColumnHistogram>> {
    if real.names != synthetic.names {
        return Err(Error::Data(
            "internal: the synthetic header differs from the input's".into(),
        ));
    }
    let mut out = Vec::with_capacity(real.n_cols());
    for (j, name) in real.names.iter().enumerate() {
        match (&real.columns[j], &synthetic.columns[j]) {
            (Column::Numeric { values: a, .. }, Column::Numeric { values: b, .. }) => {
                let lo = a.iter().copied().fold(f32::INFINITY, f32::min) as f64;
                let hi = a.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
                let (lo, hi) = if lo.is_finite() && hi > lo {
                    (lo, hi)
                } else {
                    (lo - 0.5, lo + 0.5)
                };
                let w = (hi - lo) / HIST_BINS as f64;
                let bin = |v: f32| -> usize {
                    let i = ((v as f64 - lo) / w).floor();
                    if i.is_nan() || i < 0.0 {
                        0
                    } else {
                        (i as usize).min(HIST_BINS - 1)
                    }
                };
                let mut r = vec![0u32; HIST_BINS];
                let mut s = vec![0u32; HIST_BINS];
                a.iter().for_each(|&v| r[bin(v)] += 1);
                b.iter().for_each(|&v| s[bin(v)] += 1);
                out.push(ColumnHistogram {
                    name: name.clone(),
                    kind: "numeric",
                    bins: (0..HIST_BINS)
                        .map(|i| format_edge(lo + w * i as f64))
                        .collect(),
                    real: r,
                    synthetic: s,
                });
            }
            (
                Column::Categorical {
                    codes: a,
                    levels: la,
                },
                sb,
            ) => {
                let mut bins = la.clone();
                let mut r = vec![0u32; la.len()];
                a.iter().for_each(|&c| r[c as usize] += 1);
                let mut s = vec![0u32; la.len()];
                let sv: Vec<String> = match sb {
                    Column::Categorical { codes, levels } => {
                        codes.iter().map(|&c| levels[c as usize].clone()).collect()
                    }
                    Column::Numeric { values, .. } => {
                        values.iter().map(|v| v.to_string()).collect()
                    }
                };
                for v in sv {
                    match bins.iter().position(|b| *b == v) {
                        Some(i) => s[i] += 1,
                        None => {
                            bins.push(v);
                            r.push(0);
                            s.push(1);
                        }
                    }
                }
                out.push(ColumnHistogram {
                    name: name.clone(),
                    kind: "categorical",
                    bins,
                    real: r,
                    synthetic: s,
                });
            }
            (Column::Numeric { .. }, Column::Categorical { .. }) => {
                // A numeric input column that decoded to text (e.g. suppressed): show counts only.
                continue;
            }
        }
    }
    Ok(out)
}

fn format_edge(x: f64) -> String {
    if x.abs() >= 1000.0 || x == x.trunc() {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// What the page shows before a run: the header, each column's inferred type, and a guess
/// of the label column. Reads at most `max_rows` rows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CsvSummary {
    /// Columns in order.
    pub columns: Vec<ColumnSummary>,
    /// Rows read for this summary (at most `max_rows`).
    pub rows_read: usize,
    /// Whether the file has more rows than were read.
    pub truncated: bool,
    /// The detected delimiter.
    pub delimiter: String,
    /// A guess of the label column (a column named like a label, else the last categorical
    /// or integer column with few values).
    pub suggested_label: Option<String>,
    /// When every non-label column is a pixel (a square number of columns, integers 0..255):
    /// the side length, so the page can preview rows as images.
    pub image_side: Option<usize>,
}

/// One column of a [`CsvSummary`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnSummary {
    /// Name.
    pub name: String,
    /// `numeric`, `integer` or `categorical`.
    pub kind: &'static str,
    /// Distinct values among the rows read (categorical and integer columns; capped at 1000).
    pub distinct: usize,
}

/// Summarizes the first `max_rows` rows of a CSV for the page's label picker.
pub fn inspect_csv(csv: &[u8], max_rows: usize) -> Result<CsvSummary> {
    // Cut after `max_rows` + 1 line breaks (a quoted field may contain one; the summary is
    // only a guess and the full file is read again for the run).
    let mut cut = csv.len();
    let mut seen = 0usize;
    for (i, &b) in csv.iter().enumerate() {
        if b == b'\n' {
            seen += 1;
            if seen > max_rows {
                cut = i + 1;
                break;
            }
        }
    }
    // The caller may pass only the head of a large file: drop a trailing partial line.
    if cut == csv.len() && !csv.ends_with(b"\n") {
        if let Some(last_nl) = csv.iter().rposition(|&b| b == b'\n') {
            if csv[..last_nl].contains(&b'\n') {
                cut = last_nl + 1;
            }
        }
    }
    let truncated = cut < csv.len();
    let table = read_csv_bytes(&csv[..cut], &CsvOptions::default())?;
    let mut columns = Vec::with_capacity(table.n_cols());
    for (name, col) in table.names.iter().zip(&table.columns) {
        let (kind, distinct) = match col {
            Column::Categorical { levels, .. } => ("categorical", levels.len()),
            Column::Numeric { values, integer } => {
                if *integer {
                    let mut d: Vec<i64> = values.iter().map(|&v| v as i64).collect();
                    d.sort_unstable();
                    d.dedup();
                    ("integer", d.len().min(1000))
                } else {
                    ("numeric", 0)
                }
            }
        };
        columns.push(ColumnSummary {
            name: name.clone(),
            kind,
            distinct,
        });
    }
    let named = columns.iter().find(|c| {
        matches!(
            c.name.to_ascii_lowercase().as_str(),
            "label" | "class" | "target" | "y" | "outcome" | "diagnosis" | "income" | "species"
        )
    });
    let suggested_label = named
        .or_else(|| {
            columns
                .iter()
                .rev()
                .find(|c| c.kind != "numeric" && c.distinct >= 2 && c.distinct <= 50)
        })
        .map(|c| c.name.clone());
    let image_side = suggested_label.as_ref().and_then(|label| {
        let others: Vec<usize> = (0..table.n_cols())
            .filter(|&j| table.names[j] != *label)
            .collect();
        let side = (others.len() as f64).sqrt().round() as usize;
        let pixels_ok = side >= 4
            && side * side == others.len()
            && others.iter().all(|&j| match &table.columns[j] {
                Column::Numeric { values, integer } => {
                    *integer && values.iter().all(|&v| (0.0..=255.0).contains(&v))
                }
                Column::Categorical { .. } => false,
            });
        pixels_ok.then_some(side)
    });
    Ok(CsvSummary {
        columns,
        rows_read: table.n_rows,
        truncated,
        delimiter: (table.delimiter as char).to_string(),
        suggested_label,
        image_side,
    })
}

/// The page's live readout: the calibrated noise for the current controls. Uses only public
/// information (class sizes, which the adjacency keeps fixed; T; the privacy target).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreviewRequest {
    /// Rows per class (class sizes).
    pub class_sizes: Vec<u64>,
    /// Target ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Feature columns (header columns minus the label).
    pub features: u64,
    /// l or "auto".
    #[serde(default)]
    pub mix: Option<MixChoice>,
    /// T (default: the sum of class sizes).
    #[serde(default)]
    pub samples: Option<u64>,
    /// Clip (default 1).
    #[serde(default)]
    pub clip: Option<f64>,
    /// Normalization share of ε when DP normalization runs (default 0.1; 0 for none).
    #[serde(default)]
    pub normalize_share: Option<f64>,
    /// Preset.
    #[serde(default)]
    pub preset: Option<String>,
}

/// The live readout.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewResponse {
    /// l used (the suggestion when "auto").
    pub mix: u32,
    /// The suggested l for these settings.
    pub suggested_mix: u32,
    /// Calibrated σx for the mixing step (with the normalization share set aside).
    pub sigma_x: f64,
    /// Noise multiplier of one step.
    pub noise_multiplier: f64,
    /// ε of the mixing step alone at that σx.
    pub epsilon_mixing: f64,
    /// Rows per class T_k.
    pub samples_per_class: u64,
    /// The ε curve: ε of the mixing step against σx around the calibrated value.
    pub curve: Vec<(f64, f64)>,
}

/// Calibrates the noise for the page's live readout. The synthesis itself re-calibrates with
/// the normalization step composed in, so its σx can be a little larger than this preview.
pub fn preview(r: &PreviewRequest) -> Result<PreviewResponse> {
    check_epsilon(r.epsilon)?;
    check_delta(r.delta)?;
    let preset = preset_of(&r.preset)?;
    let orders = default_orders();
    if r.class_sizes.is_empty() {
        return Err(Error::Data("no classes: choose a label column".into()));
    }
    let pool = *r.class_sizes.iter().min().expect("non-empty");
    let k = r.class_sizes.len() as u64;
    let t = r.samples.unwrap_or_else(|| r.class_sizes.iter().sum());
    if t < k {
        return Err(Error::param(
            "samples",
            t,
            format!("T must be at least the number of classes K = {k}"),
        ));
    }
    let per_class = t / k;
    let clip = r.clip.unwrap_or(1.0);
    let share = r.normalize_share.unwrap_or(0.1);
    if !(0.0..1.0).contains(&share) {
        return Err(Error::param(
            "normalizeShare",
            share,
            "use a share in [0, 1)",
        ));
    }
    let eps = r.epsilon * (1.0 - share);
    let suggested = suggest_mix(
        pool, per_class, r.features, r.delta, eps, clip, preset, &orders,
    )?;
    let mix = match &r.mix {
        None => 4,
        Some(MixChoice::Fixed(l)) => *l,
        Some(MixChoice::Named(s)) if s == "auto" => suggested,
        Some(MixChoice::Named(s)) => {
            return Err(Error::param(
                "mix",
                s,
                "give a whole number ≥ 1, or \"auto\"",
            ))
        }
    };
    let c = calibrate_sigma_x(
        pool, mix, clip, None, per_class, r.delta, eps, &orders, preset, None,
    )?;
    let mut curve = Vec::with_capacity(9);
    for f in [0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 1.75, 2.0] {
        let p = CdaPrivacy {
            pool,
            mix,
            clip,
            sigma_x: c.sigma_x * f,
            sigma_y: None,
            samples: per_class,
        };
        let e = p.epsilon(r.delta, &orders, preset, None)?;
        curve.push((p.sigma_x, e.epsilon));
    }
    Ok(PreviewResponse {
        mix,
        suggested_mix: suggested,
        sigma_x: c.sigma_x,
        noise_multiplier: c.noise_multiplier,
        epsilon_mixing: c.epsilon,
        samples_per_class: per_class,
        curve,
    })
}

/// Image input from JS: a ZIP, or (relative path, bytes) pairs from a folder pick.
pub enum ImageInput {
    /// A ZIP of class folders.
    Zip(Vec<u8>),
    /// Files whose paths end in `<class>/<name>.png|jpg`.
    Files(Vec<(String, Vec<u8>)>),
}

/// Splits an options object (JSON text) into the image keys ([`ImageOptions`]) and the
/// synthesis keys ([`SynthRequest`]).
pub fn image_request(json: &str) -> Result<(ImageOptions, SynthRequest)> {
    let bad = |e: serde_json::Error| {
        Error::param("options", e.to_string(), "check the option names and types")
    };
    let mut all: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(bad)?;
    let mut img = serde_json::Map::new();
    for key in [
        "width", "height", "channels", "alpha", "maxSide", "maxBytes",
    ] {
        if let Some(v) = all.remove(key) {
            img.insert(key.to_string(), v);
        }
    }
    // Both halves go through `from_str`, the one deserializer the wasm build already has.
    let image: ImageOptions =
        serde_json::from_str(&serde_json::Value::Object(img).to_string()).map_err(bad)?;
    let synth: SynthRequest =
        serde_json::from_str(&serde_json::Value::Object(all).to_string()).map_err(bad)?;
    if synth.label.is_some() {
        return Err(Error::param(
            "label",
            synth.label.clone().unwrap_or_default(),
            "images take their class from the folder name; drop label",
        ));
    }
    Ok((image, synth))
}

/// Reads an image set.
pub fn load_images(input: ImageInput, opts: &ImageOptions) -> Result<ImageSet> {
    match input {
        ImageInput::Zip(bytes) => images::load_zip(&bytes, opts, "the ZIP"),
        ImageInput::Files(files) => images::load_files(files, opts, "the chosen files"),
    }
}

/// `inspectImages`: what the page shows after loading images.
pub fn inspect_images(input: ImageInput, opts: &ImageOptions) -> Result<ImageSetSummary> {
    Ok(load_images(input, opts)?.summary())
}

/// The result of [`synthesize_images`].
pub struct ImagesResult {
    /// ZIP of PNGs in class folders.
    pub zip: Vec<u8>,
    /// Preview grid of synthetic images.
    pub preview: Vec<u8>,
    /// The same grid of real images (for the data owner's eyes only).
    pub real_preview: Vec<u8>,
    /// The receipt.
    pub receipt: Receipt,
}

/// `synthesizeImages`: DP-CDA on images (the pixel range 0..255 is public).
pub fn synthesize_images(
    input: ImageInput,
    image: &ImageOptions,
    req: &SynthRequest,
    progress: impl FnMut(f64),
) -> Result<ImagesResult> {
    check_delta(req.delta.unwrap_or(1e-5))?;
    if let Some(e) = req.epsilon {
        check_epsilon(e)?;
    }
    if !matches!(req.mechanism()?, Mechanism::Cda) {
        return Err(Error::param(
            "mechanism",
            req.mechanism.clone().unwrap_or_default(),
            "images support the cda mechanism (DP-CDA) only",
        ));
    }
    if req.schema.is_some() {
        return Err(Error::param(
            "schema",
            "(given)",
            "images use the public pixel range 0..255; drop schema",
        ));
    }
    let set = load_images(input, image)?;
    let summary = set.summary();
    let opts = req.synth_options_for(
        &summary.class_counts,
        summary.images,
        set.width * set.height * set.channels,
    )?;
    let mut rng = rng_for(req.seed)?;
    let real_preview = images::preview_grid(&set, images::PREVIEW_PER_CLASS)?;
    let out = images::synthesize_images(&set, &opts, &mut rng, progress)?;
    Ok(ImagesResult {
        zip: out.zip,
        preview: out.preview_png,
        real_preview,
        receipt: out.receipt,
    })
}

// ---------------------------------------------------------------------------------------
// DP Gaussian-mixture release (`gmmRelease`, `gmmSample`)

/// Options of `gmmRelease` (the JS names of the CLI's `gmm` flags).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GmmRequest {
    /// Label column.
    pub label: String,
    /// Target ε.
    pub epsilon: f64,
    /// δ (default 1e-5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// `optimized` (default), `iid-gaussian`, `iid-laplace` or `colored-gaussian`.
    #[serde(default)]
    pub noise: Option<String>,
    /// `record` (default) or `label`.
    #[serde(default)]
    pub adjacency: Option<String>,
    /// Public bound B on each row's L2 norm.
    #[serde(default)]
    pub bound: Option<f64>,
    /// Project to K principal components first.
    #[serde(default)]
    pub pca: Option<usize>,
    /// `gaussian` (default) or `wishart`.
    #[serde(default)]
    pub covariance_noise: Option<String>,
    /// Smoothing λ of the weight mapping (default 1e-3).
    #[serde(default)]
    pub lambda: Option<f64>,
    /// Rows to sample from the released model (none by default).
    #[serde(default)]
    pub samples: Option<u64>,
    /// Grid points of the marginal-density curves for the page (default 0: none).
    #[serde(default)]
    pub marginal_points: Option<usize>,
    /// Fixed seed (tests only).
    #[serde(default)]
    pub seed: Option<f64>,
}

/// The result of [`gmm_release`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GmmReleaseResult {
    /// The released model (the CLI's model JSON).
    pub model: crate::mechanisms::gmm::GmmModel,
    /// Exact KL(released ‖ non-private fit).
    pub kl: f64,
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The receipt.
    pub receipt: crate::mechanisms::gmm::GmmReceipt,
    /// Sampled rows as CSV (when `samples` was given).
    pub csv: Option<String>,
    /// Per-feature, per-class marginal densities of the released model on a grid.
    pub marginals: Option<Vec<crate::mechanisms::gmm::MarginalCurves>>,
    /// The same curves for the non-private fit (for the data owner's eyes only).
    pub reference_marginals: Option<Vec<crate::mechanisms::gmm::MarginalCurves>>,
}

/// Sampled rows as CSV: the model's feature columns, then the label column. The CLI's
/// `gmm --samples` and `gmm sample` write these bytes too.
pub fn gmm_samples_csv(
    model: &crate::mechanisms::gmm::GmmModel,
    samples: usize,
    rng: &mut ReleaseRng,
) -> Result<Vec<u8>> {
    let (classes, rows) = crate::mechanisms::gmm::sample(model, samples, rng)?;
    let err = |e: csv::Error| Error::Data(format!("cannot write the samples: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
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
    w.into_inner()
        .map_err(|e| Error::Data(format!("cannot write the samples: {e}")))
}

/// The GMM input of a table read from `csv`, with the cells' exact f64 values (the table
/// stores f32) so that `kl` refers to the input as written. When the exact values cannot be
/// read, the f32 values are used and the reason is returned as a warning.
pub fn gmm_data_exact(
    table: &Table,
    csv: &[u8],
) -> Result<(crate::mechanisms::gmm::GmmData, Option<String>)> {
    let data = crate::mechanisms::gmm::GmmData::from_table(table)?;
    match data
        .exact_values_from_csv(csv, table.delimiter)
        .and_then(|v| data.clone().with_exact_values(v))
    {
        Ok(d) => Ok((d, None)),
        Err(e) => Ok((
            data,
            Some(format!("using the f32 values of the input ({e})")),
        )),
    }
}

/// `gmmRelease`: fits the per-class GMM of a CSV and releases it under (ε, δ)-DP.
pub fn gmm_release(csv: &[u8], r: &GmmRequest) -> Result<GmmReleaseResult> {
    use crate::mechanisms::gmm::{self, GmmOptions};
    check_epsilon(r.epsilon)?;
    let delta = r.delta.unwrap_or(1e-5);
    check_delta(delta)?;
    let d = GmmOptions::default();
    let opts = GmmOptions {
        epsilon: r.epsilon,
        delta,
        noise: match &r.noise {
            Some(s) => s.parse()?,
            None => d.noise,
        },
        adjacency: match &r.adjacency {
            Some(s) => s.parse()?,
            None => d.adjacency,
        },
        bound: r.bound,
        lambda: r.lambda.unwrap_or(d.lambda),
        pca: r.pca,
        covariance_noise: match &r.covariance_noise {
            Some(s) => s.parse()?,
            None => d.covariance_noise,
        },
        ..d
    };
    if r.samples == Some(0) {
        return Err(Error::param(
            "samples",
            0,
            "sample at least 1 row, or leave samples out",
        ));
    }
    let table = read_csv_bytes(
        csv,
        &CsvOptions {
            label: Some(r.label.clone()),
            ..CsvOptions::default()
        },
    )?;
    let (data, _) = gmm_data_exact(&table, csv)?;
    drop(table);
    let mut rng = rng_for(r.seed)?;
    let release = gmm::release_gmm_data(&data, &opts, &mut rng)?;
    let csv_out = match r.samples {
        Some(t) => Some(
            String::from_utf8(gmm_samples_csv(&release.model, t as usize, &mut rng)?)
                .map_err(|_| Error::Data("internal: the samples are not UTF-8".into()))?,
        ),
        None => None,
    };
    let (marginals, reference_marginals) = match r.marginal_points {
        Some(p) if p > 0 => {
            let reference = gmm::reference_model(&data)?;
            let reference = match &release.model.projection {
                // Curves are drawn in the model's own coordinates.
                Some(_) => None,
                None => Some(gmm::all_marginals(&reference, p)?),
            };
            (Some(gmm::all_marginals(&release.model, p)?), reference)
        }
        _ => (None, None),
    };
    Ok(GmmReleaseResult {
        model: release.model,
        kl: release.kl,
        epsilon: release.epsilon,
        delta: release.delta,
        receipt: release.receipt,
        csv: csv_out,
        marginals,
        reference_marginals,
    })
}

/// `gmmSample`: rows sampled from a released model (post-processing).
pub fn gmm_sample(model_json: &str, samples: usize, seed: Option<f64>) -> Result<String> {
    let model: crate::mechanisms::gmm::GmmModel = serde_json::from_str(model_json)
        .map_err(|e| Error::Data(format!("not a GMM model JSON: {e}")))?;
    model
        .validate()
        .map_err(|e| Error::Data(format!("the model: {e}")))?;
    if samples == 0 {
        return Err(Error::param("samples", 0, "sample at least 1 row"));
    }
    let mut rng = rng_for(seed)?;
    String::from_utf8(gmm_samples_csv(&model, samples, &mut rng)?)
        .map_err(|_| Error::Data("internal: the samples are not UTF-8".into()))
}

// ---------------------------------------------------------------------------------------
// Federated DP-CDA (`federatedSimulate`, `federatedKeygen`, `federatedContribute`,
// `federatedAggregate`)

/// Options shared by `federatedSimulate` and `federatedContribute`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FedRequest {
    /// Label column.
    pub label: String,
    /// `cape` (default) or `conventional`.
    #[serde(default)]
    pub variant: Option<String>,
    /// Target ε.
    pub epsilon: f64,
    /// δ (default 1e-5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// l (default 4).
    #[serde(default)]
    pub mix: Option<usize>,
    /// Clip norm (default: automatic from the header).
    #[serde(default)]
    pub clip: Option<f64>,
    /// T (required to contribute).
    #[serde(default)]
    pub samples: Option<usize>,
    /// `dp` (default) or `public` (with a schema).
    #[serde(default)]
    pub normalize: Option<String>,
    /// Share of ε for DP normalization.
    #[serde(default)]
    pub normalize_share: Option<f64>,
    /// Schema.
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
    /// Preset.
    #[serde(default)]
    pub preset: Option<String>,
    /// Simulation: number of parties S.
    #[serde(default)]
    pub clients: Option<usize>,
    /// Simulation: `iid` (default) or `skewed`.
    #[serde(default)]
    pub partition: Option<String>,
    /// Multi-party: agreed floor on every party's smallest class (CAPE's gain needs it).
    #[serde(default)]
    pub pool: Option<usize>,
    /// Multi-party: agreed session label.
    #[serde(default)]
    pub session: Option<String>,
    /// Fixed seed (tests only).
    #[serde(default)]
    pub seed: Option<f64>,
}

impl FedRequest {
    fn options(&self) -> Result<(crate::federated::FedOptions, Option<Schema>)> {
        let d = crate::federated::FedOptions::default();
        let opts = crate::federated::FedOptions {
            variant: match &self.variant {
                Some(v) => v.parse()?,
                None => d.variant,
            },
            epsilon: self.epsilon,
            delta: self.delta.unwrap_or(1e-5),
            mix: self.mix.unwrap_or(d.mix),
            clip: self.clip,
            samples: self.samples,
            normalize: match &self.normalize {
                Some(s) => s.parse()?,
                None => d.normalize,
            },
            normalize_share: self.normalize_share.unwrap_or(d.normalize_share),
            preset: preset_of(&self.preset)?,
            orders: d.orders,
            pool: self.pool,
            session: self.session.clone(),
        };
        check_delta(opts.delta)?;
        check_epsilon(opts.epsilon)?;
        Ok((opts, schema_of(&self.schema)?))
    }

    fn table(&self, csv: &[u8], schema: &Option<Schema>) -> Result<Table> {
        read_csv_bytes(
            csv,
            &CsvOptions {
                label: Some(self.label.clone()),
                schema: schema.clone(),
                ..CsvOptions::default()
            },
        )
    }
}

fn csv_sink() -> std::cell::RefCell<csv::Writer<Vec<u8>>> {
    std::cell::RefCell::new(csv::Writer::from_writer(Vec::new()))
}

fn csv_string(w: std::cell::RefCell<csv::Writer<Vec<u8>>>) -> Result<String> {
    let bytes = w
        .into_inner()
        .into_inner()
        .map_err(|e| Error::Data(format!("cannot write the output: {e}")))?;
    String::from_utf8(bytes).map_err(|_| Error::Data("internal: the output is not UTF-8".into()))
}

/// `federatedSimulate`: S parties in one process; `{csv, receipt}` with both views.
pub fn federated_simulate(
    csv: &[u8],
    r: &FedRequest,
) -> Result<(String, crate::federated::FedReceipt)> {
    let (opts, schema) = r.options()?;
    let clients = r.clients.ok_or_else(|| {
        Error::param(
            "clients",
            "(none)",
            "give the number of simulated parties, e.g. clients: 10",
        )
    })?;
    let partition: crate::federated::Partition = match &r.partition {
        Some(p) => p.parse()?,
        None => crate::federated::Partition::Iid,
    };
    let table = r.table(csv, &schema)?;
    let mut rng = rng_for(r.seed)?;
    let w = csv_sink();
    let err = |e: csv::Error| Error::Data(format!("cannot write the output: {e}"));
    let receipt = crate::federated::simulate(
        &table,
        schema.as_ref(),
        &opts,
        clients,
        partition,
        &mut rng,
        |h| w.borrow_mut().write_record(h).map_err(err),
        |row| w.borrow_mut().write_record(row).map_err(err),
    )?;
    Ok((csv_string(w)?, receipt))
}

/// `federatedKeygen`: `(secretKey, publicKey)` as JSON texts (keep the first, share the
/// second).
pub fn federated_keygen(party: u32) -> Result<(String, String)> {
    let mut rng = ReleaseRng::from_entropy()?;
    Ok(crate::federated::keygen(party, &mut rng))
}

/// `federatedContribute`: this party's contribution file (JSON) and its secret key updated
/// with the run it was used for (a key is refused for a run it already contributed to).
pub fn federated_contribute(
    csv: &[u8],
    secret_key: &str,
    peers: &[String],
    r: &FedRequest,
) -> Result<(String, String)> {
    use crate::mechanisms::federated::pairwise::{PublicKeyFile, SecretKeyFile};
    let mut key = SecretKeyFile::from_json(secret_key)?;
    if peers.is_empty() {
        return Err(Error::param(
            "peers",
            "(none)",
            "load the other parties' public keys",
        ));
    }
    let peers = peers
        .iter()
        .enumerate()
        .map(|(i, p)| {
            PublicKeyFile::from_json(p)
                .map_err(|e| Error::Data(format!("public key {}: {e}", i + 1)))
        })
        .collect::<Result<Vec<_>>>()?;
    let (opts, schema) = r.options()?;
    let table = r.table(csv, &schema)?;
    let mut rng = rng_for(r.seed)?;
    let c = crate::federated::contribute(&table, schema.as_ref(), &key, &peers, &opts, &mut rng)?;
    key.used_contexts.push(c.context.clone());
    let key_json = serde_json::to_string_pretty(&key)
        .map_err(|e| Error::Data(format!("internal: cannot write the key: {e}")))?;
    Ok((c.to_json(), key_json))
}

/// `federatedAggregate`: averages contribution files into `{csv, receipt}`.
pub fn federated_aggregate(
    contributions: &[String],
) -> Result<(String, crate::federated::FedReceipt)> {
    let parsed = contributions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            crate::federated::Contribution::from_json(c, &format!("contribution {}", i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    let w = csv_sink();
    let err = |e: csv::Error| Error::Data(format!("cannot write the output: {e}"));
    let receipt = crate::federated::aggregate(
        &parsed,
        |h| w.borrow_mut().write_record(h).map_err(err),
        |row| w.borrow_mut().write_record(row).map_err(err),
    )?;
    Ok((csv_string(w)?, receipt))
}
