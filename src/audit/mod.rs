//! A built-in privacy audit: an empirical lower bound on ε for a mechanism and
//! configuration, reported beside the ε its receipt claims.
//!
//! # Method
//!
//! 1. **Neighbours with a canary.** The audit builds its own small dataset D (two classes
//!    `a`, `b`; numeric features `x1..xd` near the corner (1, −1, …, −1); no user data is involved) and a
//!    neighbour D' that differs in one record, the canary ([`Canary`]): a record replaced by
//!    one at the opposite corner (−1, 1, …, 1); with
//!    the public bounds [−1, 1] the audit supplies for `normalize: public`, a min–max map
//!    sends the two to orthogonal corners of [0, 1]^d, the farthest apart two rows can be
//!    there), the same record moved to the other class, or one cell made unparsable or
//!    missing (issue 11 items 2–4: the data path must not tell these apart).
//! 2. **The real pipeline.** Each run feeds CSV bytes through [`crate::api::synth::synthesize_csv`]
//!    — parsing, type inference, normalization, calibration, the noise step, decoding and the
//!    receipt — with its own seed, N times on D and N times on D'.
//! 3. **Tests.** What an observer sees is the output CSV and the receipt. The audit scores
//!    each run two ways: a *signature* (header, row count, which columns hold only numbers,
//!    the column types and indicators the receipt states, the receipt's ε, its deterministic parameters σx, pool, classes, rows, and its warnings in full) and a *score*
//!    (the sum of the numeric cells of the rows labelled with the canary's class, a
//!    likelihood-ratio statistic for a mean shift along the canary's direction). On the first
//!    half of the runs it picks the best test (a threshold on the score in either direction,
//!    "the signature equals S", or "one component of the signature equals v"); on the second half, which that choice never saw, it counts
//!    true and false positives.
//! 4. **Bound.** For an (ε, δ)-DP mechanism every test satisfies TPR ≤ e^ε·FPR + δ (and the
//!    same with the roles of the outcomes exchanged). With Clopper–Pearson bounds at overall
//!    confidence 1 − α (α/2 for each proportion), ε ≥ ln((TPR_lo − δ)/FPR_hi) holds with
//!    probability ≥ 1 − α if the claim is right. The audit **fails** when this bound exceeds
//!    the claimed ε.
//!
//! A pass is not a proof (an audit can only find violations its tests see); a failure is a
//! bug, at the stated confidence.
//!
//! `mechanism: "gmm"` audits the GMM release's default path the same way (`gmm`: the score is
//! the released mean of the canary's class along its direction), and `mechanism: "federated"`
//! a federated DP-CDA simulation (`federated`).

mod federated;
mod gmm;
pub mod stats;

use crate::api::synth::{synthesize_csv, MixChoice, SynthRequest};
use crate::enums::named_enum;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

named_enum! {
    /// How the neighbouring dataset D' differs from D.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Canary: "canary" {
        /// One record of class `a` replaced by one with every feature at 1 (far corner).
        #[default]
        Extreme = "extreme" ("default"),
        /// The same record moved to class `b` at the far corner (the standard adjacency).
        ClassChange = "class-change",
        /// One numeric cell of one record replaced by an unparsable token (`oops`).
        UnparsableCell = "unparsable-cell",
        /// One numeric cell of one record left empty (missing).
        MissingCell = "missing-cell",
        /// One record of class `a` replaced by one at the far corner with no label: it
        /// belongs to no class (the standard adjacency: the label is part of the record).
        MissingLabel = "missing-label",
        /// One record more, at the far corner in class `a` (add/remove adjacency: the GMM
        /// release's default path only; the synthesis and federated guarantees are for a
        /// replaced record, with N public).
        AddedRecord = "added-record",
    }
}

/// What to audit and how hard.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// The synthesis configuration under audit (mechanism, ε or σx, δ, mix, normalize, …);
    /// `label`, `seed` and `schema` are set by the audit.
    pub request: SynthRequest,
    /// The canary.
    pub canary: Canary,
    /// Runs on each of D and D' (half choose the test, half measure it). At least 20.
    pub runs: usize,
    /// 1 − confidence of the bound (default 0.05).
    pub alpha: f64,
    /// Numeric feature columns of the audit dataset (default 2).
    pub features: usize,
    /// Rows per class (default: the mix order l + 1). From [`DP_COUNT_ROWS`] on, DP-CDA's
    /// pools and T come from the noisy class counts, as on the default path.
    pub rows_per_class: Option<usize>,
    /// First seed s of the runs (run i uses s + 1 + 2i on D and s + 2 + 2i on D').
    pub seed: u64,
    /// Planted bug for self-tests: run the mechanism with σx·f while the claim stays that
    /// of the unmodified configuration. None in a real audit. The runs then have no ε target
    /// (σx·f would exceed it and be refused), so it needs `normalize: public`. Through the
    /// decoded pipeline σx/2 is not caught at 600 runs (clamping and the quantile map hide
    /// the noise's scale); [`run_noise_step_audit`] catches it.
    pub planted_noise_scale: Option<f64>,
    /// Federated only: leave the feature columns' types to the data (`columnTypes: "data"`,
    /// declared unprotected) instead of the DP decision the parties make by default; a
    /// self-test of the type flip.
    pub types_from_data: bool,
    /// Federated only: run the multi-party path — each party's key, its own contribution
    /// file, and the aggregation of the files — instead of the one-process simulation.
    pub multi_party: bool,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            request: SynthRequest::default(),
            canary: Canary::Extreme,
            runs: 500,
            alpha: 0.05,
            features: 2,
            rows_per_class: None,
            seed: 1,
            planted_noise_scale: None,
            types_from_data: false,
            multi_party: false,
        }
    }
}

/// Counts of the chosen test on the held-out half.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HoldoutCounts {
    /// Runs on D' the test flagged.
    pub true_positives: usize,
    /// Runs on D'.
    pub runs_neighbour: usize,
    /// Runs on D the test flagged.
    pub false_positives: usize,
    /// Runs on D.
    pub runs_base: usize,
}

/// The audit's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    /// The mechanism (receipt name).
    pub mechanism: String,
    /// The canary.
    pub canary: Canary,
    /// ε the receipt claims (for D).
    pub claimed_epsilon: f64,
    /// δ of the claim.
    pub delta: f64,
    /// The Clopper–Pearson lower bound on ε at confidence 1 − alpha.
    pub epsilon_lower_bound: f64,
    /// 1 − confidence.
    pub alpha: f64,
    /// True when the bound does not exceed the claim.
    pub passed: bool,
    /// The test chosen on the calibration half.
    pub test: String,
    /// The bound the chosen test certified on the calibration half (the selection criterion).
    pub calibration_estimate: f64,
    /// Its counts on the held-out half.
    pub holdout: HoldoutCounts,
    /// Runs per dataset.
    pub runs: usize,
    /// σx of the claim (when the mechanism has one).
    pub sigma_x: Option<f64>,
    /// The planted noise scale, if any (self-tests).
    pub planted_noise_scale: Option<f64>,
}

struct Outcome {
    signature: String,
    /// The signature's components ("rows=10", "types=…", "sigma_x=…"): a test may look at one.
    parts: Vec<String>,
    score: f64,
    /// The error of a run that failed.
    failure: Option<String>,
}

fn dataset(opts: &AuditOptions, mix: usize, neighbour: bool) -> Vec<u8> {
    let d = opts.features;
    let r = opts.rows_per_class.unwrap_or(mix + 1);
    let mut s = String::new();
    for j in 1..=d {
        s.push_str(&format!("x{j},"));
    }
    s.push_str("y\n");
    for (k, class) in ["a", "b"].iter().enumerate() {
        for i in 0..r {
            let canary_row = neighbour && k == 0 && i == 0;
            // Base rows near the corner (1, −1, …, −1); the canary at the opposite corner
            // (−1, 1, …, 1). Under a min–max map onto [0, 1]^d these are orthogonal corners,
            // the farthest apart two clipped rows can be in the non-negative orthant.
            let mut cells: Vec<String> = (0..d)
                .map(|j| {
                    let wobble = 0.05 * ((i + j) % 3) as f64;
                    format!("{}", if j == 0 { 1.0 - wobble } else { -1.0 + wobble })
                })
                .collect();
            let mut label = class.to_string();
            if canary_row {
                match opts.canary {
                    Canary::Extreme | Canary::ClassChange | Canary::MissingLabel => {
                        for (j, c) in cells.iter_mut().enumerate() {
                            *c = if j == 0 { "-1" } else { "1" }.into();
                        }
                        label = match opts.canary {
                            Canary::ClassChange => "b".into(),
                            Canary::MissingLabel => String::new(),
                            _ => label,
                        };
                    }
                    Canary::UnparsableCell => cells[0] = "oops".into(),
                    Canary::MissingCell => cells[0] = String::new(),
                    // Nothing replaced: the record is added after the class's rows.
                    Canary::AddedRecord => {}
                }
            }
            s.push_str(&cells.join(","));
            s.push(',');
            s.push_str(&label);
            s.push('\n');
            if neighbour && opts.canary == Canary::AddedRecord && k == 0 && i + 1 == r {
                // The added record: the far corner (−1, 1, …, 1) in class a.
                let far: Vec<&str> = (0..d).map(|j| if j == 0 { "-1" } else { "1" }).collect();
                s.push_str(&far.join(","));
                s.push_str(",a\n");
            }
        }
    }
    s.into_bytes()
}

/// The receipt parameters that are deterministic functions of the configuration (and must
/// therefore not depend on the data): compared across D and D'.
const SIGNATURE_KEYS: &[&str] = &[
    "sigma_x",
    "sigma_y",
    "pool",
    "classes",
    "rows_written",
    "samples_per_class",
    "feature_dim",
    "compositions",
    "dim_x",
];

fn collect_keys(v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if SIGNATURE_KEYS.contains(&k.as_str()) && !x.is_object() {
                    out.insert(k.clone(), x.to_string());
                } else {
                    collect_keys(x, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
        _ => {}
    }
}

/// What an observer reads off an output CSV: its header, row count and column kinds (`n`:
/// every cell a number, `c` otherwise), and the score: the sum, over the rows labelled
/// `score_label` (every row with `score_all_rows`), of the cells along the canary's direction
/// −x1 + x2 + … + xd.
fn read_output(
    bytes: &[u8],
    score_label: &str,
    score_all_rows: bool,
) -> (Vec<String>, usize, String, f64) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(bytes);
    let header: Vec<String> = rdr
        .headers()
        .map(|h| h.iter().map(str::to_string).collect())
        .unwrap_or_default();
    let label_col = header.iter().position(|h| h == "y");
    let mut numeric = vec![true; header.len()];
    let mut rows = 0usize;
    let mut score = 0.0f64;
    for rec in rdr.records().flatten() {
        rows += 1;
        let counted =
            score_all_rows || label_col.map_or(true, |li| rec.get(li) == Some(score_label));
        for (j, cell) in rec.iter().enumerate() {
            let v = cell.trim().parse::<f64>().ok().filter(|v| v.is_finite());
            if let Some(n) = numeric.get_mut(j) {
                *n &= v.is_some();
            }
            if counted && Some(j) != label_col {
                // The canary's direction: −x1 + x2 + … + xd.
                match header.get(j).map(String::as_str) {
                    Some("x1") => score -= v.unwrap_or(0.0),
                    Some(h) if h.starts_with('x') => score += v.unwrap_or(0.0),
                    _ => {}
                }
            }
        }
    }
    let kinds: String = numeric.iter().map(|&n| if n { 'n' } else { 'c' }).collect();
    (header, rows, kinds, score)
}

impl Outcome {
    /// A run's outcome from the components of its signature and its score.
    fn new(parts: Vec<String>, score: f64) -> Outcome {
        Outcome {
            signature: parts.join(" "),
            parts,
            score,
            failure: None,
        }
    }

    /// A run that failed: its message is what an observer sees.
    fn failed(e: &Error) -> Outcome {
        Outcome {
            signature: format!("error: {e}"),
            parts: vec![format!("error: {e}")],
            score: f64::NEG_INFINITY,
            failure: Some(e.to_string()),
        }
    }
}

fn outcome(
    result: Result<(Vec<u8>, crate::receipt::Receipt)>,
    score_label: &str,
    score_all_rows: bool,
) -> Outcome {
    let (bytes, receipt) = match result {
        Ok(x) => x,
        Err(e) => return Outcome::failed(&e),
    };
    let (header, rows, kinds, score) = read_output(&bytes, score_label, score_all_rows);
    let mut params = BTreeMap::new();
    if let Ok(v) = serde_json::to_value(&receipt.parameters) {
        collect_keys(&v, &mut params);
    }
    // The receipt states each column's type and indicator: part of what an observer sees.
    let types: String = receipt
        .column_types
        .as_ref()
        .map(|t| {
            t.columns
                .iter()
                .map(|c| {
                    format!(
                        "{}:{}{}",
                        c.name,
                        c.kind,
                        if c.missing_indicator { "+m" } else { "" }
                    )
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let mut parts = vec![
        format!("header={}", header.join("|")),
        format!("rows={rows}"),
        format!("kinds={kinds}"),
        format!("types={types}"),
        format!("epsilon={}", receipt.epsilon),
        // Every warning, in full: a warning that depends on the data (such as a count of
        // padded rows) tells the neighbours apart as surely as a parameter.
        format!("warnings={}", receipt.warnings.join(" | ")),
    ];
    parts.extend(params.iter().map(|(k, v)| format!("{k}={v}")));
    Outcome::new(parts, score)
}

/// A test: which runs it flags as "D'".
#[derive(Debug, Clone)]
enum Test {
    Above(f64),
    Below(f64),
    Signature(String),
    Part(String),
}

impl Test {
    fn flags(&self, o: &Outcome) -> bool {
        match self {
            Test::Above(t) => o.score >= *t,
            Test::Below(t) => o.score <= *t,
            Test::Signature(s) => &o.signature == s,
            Test::Part(p) => o.parts.contains(p),
        }
    }
    fn describe(&self) -> String {
        match self {
            Test::Above(t) => format!("score ≥ {t}"),
            Test::Below(t) => format!("score ≤ {t}"),
            Test::Signature(s) => format!("signature = {s}"),
            Test::Part(p) => format!("signature has {p}"),
        }
    }
}

fn counts(test: &Test, base: &[Outcome], nb: &[Outcome]) -> (usize, usize) {
    (
        nb.iter().filter(|o| test.flags(o)).count(),
        base.iter().filter(|o| test.flags(o)).count(),
    )
}

fn choose_test(base: &[Outcome], nb: &[Outcome], delta: f64) -> (Test, f64) {
    let mut cands: Vec<Test> = Vec::new();
    let mut sigs: Vec<&String> = base.iter().chain(nb).map(|o| &o.signature).collect();
    sigs.sort();
    sigs.dedup();
    cands.extend(sigs.into_iter().map(|s| Test::Signature(s.clone())));
    let mut parts: Vec<&String> = base.iter().chain(nb).flat_map(|o| &o.parts).collect();
    parts.sort();
    parts.dedup();
    cands.extend(parts.into_iter().map(|p| Test::Part(p.clone())));
    let mut scores: Vec<f64> = base.iter().chain(nb).map(|o| o.score).collect();
    scores.sort_by(|a, b| a.total_cmp(b));
    scores.dedup();
    // At most ~200 thresholds (quantiles of the pooled scores).
    let step = (scores.len() / 200).max(1);
    for s in scores.iter().step_by(step) {
        cands.push(Test::Above(*s));
        cands.push(Test::Below(*s));
    }
    // The criterion is (an approximation of) the bound the test would certify on this half:
    // it favours tests whose rates are both extreme and well estimated (a raw ratio would
    // chase the tails).
    let mut best = (Test::Above(f64::INFINITY), f64::NEG_INFINITY);
    for t in cands {
        let (tp, fp) = counts(&t, base, nb);
        let e = stats::epsilon_lower_bound_approx(tp, nb.len(), fp, base.len(), delta);
        if e > best.1 {
            best = (t, e);
        }
    }
    best
}

fn sigma_of(receipt: &crate::receipt::Receipt) -> Option<f64> {
    let s = receipt.parameters.sigma_x();
    (s.is_finite() && s > 0.0).then_some(s)
}

/// The audit's own parameters: enough runs, an error rate in (0, 1), 1 to 1000 features and
/// a positive planted-noise factor.
fn check_options(opts: &AuditOptions) -> Result<()> {
    if opts.runs < 20 {
        return Err(Error::param(
            "runs",
            opts.runs,
            "an audit needs at least 20 runs per dataset (500 or more for a useful bound)",
        ));
    }
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(Error::param(
            "alpha",
            opts.alpha,
            "the audit's error rate must lie in (0, 1), e.g. 0.05",
        ));
    }
    if opts
        .rows_per_class
        .is_some_and(|r| !(1..=100_000).contains(&r))
    {
        return Err(Error::param(
            "rows_per_class",
            opts.rows_per_class.unwrap_or(0),
            "1 to 100 000 rows per class",
        ));
    }
    if opts.multi_party && opts.request.mechanism.as_deref() != Some("federated") {
        return Err(Error::param(
            "multi_party",
            "true",
            "the multi-party path belongs to federated DP-CDA: audit mechanism federated, or turn the multi-party option off",
        ));
    }
    if opts.features == 0 || opts.features > 1000 {
        return Err(Error::param(
            "features",
            opts.features,
            "the audit dataset needs 1 to 1000 feature columns",
        ));
    }
    if let Some(f) = opts.planted_noise_scale {
        if !(f > 0.0 && f.is_finite()) {
            return Err(Error::param(
                "planted-noise-scale",
                f,
                "a positive factor, e.g. 0.5",
            ));
        }
    }
    Ok(())
}

/// Rows per class from which the audit leaves pools and T to the noisy class counts (below,
/// it states the class size as a public pool floor and T = 2 × rows per class).
pub const DP_COUNT_ROWS: usize = 64;

/// The synthesis request every run makes (the configuration under audit with the audit's
/// public label, schema, pool floor and T filled in) and the mix size l its datasets use.
fn audit_request(opts: &AuditOptions) -> (SynthRequest, usize) {
    let mut req = opts.request.clone();
    req.label = Some("y".into());
    let mix = match &req.mix {
        Some(MixChoice::Fixed(l)) => *l as usize,
        _ => 4,
    };
    let public = req.normalize.as_deref() == Some("public");
    if public && req.schema.is_none() {
        let mut cols = serde_json::Map::new();
        for j in 1..=opts.features {
            cols.insert(
                format!("x{j}"),
                serde_json::json!({"type": "numeric", "min": -1, "max": 1}),
            );
        }
        cols.insert(
            "y".into(),
            serde_json::json!({"type": "categorical", "categories": ["a", "b"]}),
        );
        req.schema = Some(serde_json::json!({ "columns": cols }));
    }
    if req.schema.is_none() {
        // The audit's own labels are public: naming them keeps the label set out of the test.
        req.schema = Some(serde_json::json!({
            "columns": { "y": {"type": "categorical", "categories": ["a", "b"]} }
        }));
    }
    let cda = matches!(req.mechanism.as_deref(), None | Some("cda"));
    let rows = opts.rows_per_class.unwrap_or(mix + 1);
    // With `DP_COUNT_ROWS` rows per class or more the run is the whole default path: pools
    // and T from the noisy class counts.
    let tiny = rows < DP_COUNT_ROWS;
    if cda && tiny && req.pool_floor.is_none() && req.adjacency.as_deref() != Some("keep-label") {
        // The standard adjacency sizes each class's pool from noisy counts, which need a few
        // dozen rows per class; the audit's classes are tiny, so it states their size as a
        // public floor (the rest of the path — fixed-size pools, DP proportions, the type
        // decisions, the accountant — is the default one).
        req.pool_floor = Some(rows as u64);
    }
    if cda && tiny && req.samples.is_none() {
        // T from the noisy counts would make every run's row count different and blunt the
        // signature test; a public T keeps it sharp.
        req.samples = Some(2 * rows as u64);
    }
    (req, mix)
}

/// Runs the audit. `progress` gets the finished fraction.
pub fn run_audit(
    opts: &AuditOptions,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<AuditReport> {
    check_options(opts)?;
    match opts.request.mechanism.as_deref() {
        Some("gmm") => return gmm::run_gmm_audit(opts, progress),
        Some("federated") => return federated::run_federated_audit(opts, progress),
        _ if opts.canary == Canary::AddedRecord => {
            return Err(Error::param(
                "canary",
                opts.canary.as_str(),
                "the synthesis mechanisms' guarantee is for a replaced record (the number of records is public there); audit an added record on mechanism gmm, or use another canary",
            ))
        }
        _ => {}
    }
    let (mut req, mix) = audit_request(opts);
    if let Some(f) = opts.planted_noise_scale {
        if req.normalize.as_deref() != Some("public") {
            return Err(Error::param(
                "planted-noise-scale",
                f,
                "a planted σx runs without an ε target (it would exceed it and be refused), and DP normalization needs one: plant it with public normalization (the audit supplies the bounds)",
            ));
        }
    }
    let base = dataset(opts, mix, false);
    let nb = dataset(opts, mix, true);

    // The claim: one run on D with the configuration as given.
    req.seed = Some(opts.seed as f64);
    let (_, claim_receipt) = synthesize_csv(&base, &req, |_| Ok(()))?;
    let claimed = claim_receipt.epsilon;
    let sigma_x = sigma_of(&claim_receipt);
    if let Some(f) = opts.planted_noise_scale {
        let s = sigma_x.ok_or_else(|| {
            Error::param(
                "planted-noise-scale",
                f,
                "this mechanism reports no σx to scale",
            )
        })?;
        // The claim stays the unmodified configuration's; the runs use σx·f and no target.
        req.sigma_x = Some(s * f);
        req.epsilon = None;
    }
    // σx is never pinned to the claim run's: each run calibrates its own, as a release does.
    // The DP decisions before the calibration (column types, missing indicators, ranges) are
    // random, and σx follows their outcome, so the claim run's σx can fall short of the target
    // in another run (which then fails: 2.52 gave ε = 1.26–1.41 > 1 in most runs).
    let mechanism = claim_receipt.mechanism.to_string();
    let score_label = if opts.canary == Canary::ClassChange {
        "b"
    } else {
        "a"
    };
    let all_rows = mechanism != "dp-cda";

    let (base_out, nb_out) = run_pairs(opts, &base, &nb, &mut progress, |data, seed| {
        let mut r = req.clone();
        r.seed = Some(seed as f64);
        Ok(outcome(
            synthesize_csv(data, &r, |_| Ok(())),
            score_label,
            all_rows,
        ))
    })?;
    Ok(conclude(
        Claim {
            mechanism,
            canary: opts.canary,
            epsilon: claimed,
            delta: claim_receipt.delta,
            sigma_x,
            planted_noise_scale: opts.planted_noise_scale,
        },
        &base_out,
        &nb_out,
        opts.alpha,
    ))
}

/// Runs the mechanism `opts.runs` times on each of D (`base`) and D' (`nb`), run i on D with
/// seed s + 1 + 2i and on D' with s + 2 + 2i (s = `opts.seed`; every seed below 2^52, exact as
/// a JS number), reporting progress after each pair; returns the outcomes on D and on D'.
fn run_pairs(
    opts: &AuditOptions,
    base: &[u8],
    nb: &[u8],
    progress: &mut impl FnMut(f64) -> Result<()>,
    mut run: impl FnMut(&[u8], u64) -> Result<Outcome>,
) -> Result<(Vec<Outcome>, Vec<Outcome>)> {
    let n = opts.runs;
    let mut base_out = Vec::with_capacity(n);
    let mut nb_out = Vec::with_capacity(n);
    for i in 0..n as u64 {
        for (j, (data, out)) in [(base, &mut base_out), (nb, &mut nb_out)]
            .into_iter()
            .enumerate()
        {
            let seed = opts.seed.wrapping_add(1 + 2 * i + j as u64) % (1u64 << 52);
            out.push(run(data, seed)?);
        }
        progress((i + 1) as f64 / n as f64)?;
    }
    // A run that fails on D' alone tells the neighbours apart, and counts. A configuration
    // that fails in most runs on D, whose claim run succeeded, leaves the audit nothing to
    // measure: say so instead of passing on identical error messages.
    let failed: Vec<&String> = base_out.iter().filter_map(|o| o.failure.as_ref()).collect();
    if failed.len() * 2 > n {
        return Err(Error::Data(format!(
            "the configuration failed in {} of {n} runs on the audit's own dataset, so the audit measured nothing; the first failure: {}",
            failed.len(),
            failed[0]
        )));
    }
    Ok((base_out, nb_out))
}

/// What a report states besides the test: the claim under audit.
struct Claim {
    mechanism: String,
    canary: Canary,
    epsilon: f64,
    delta: f64,
    sigma_x: Option<f64>,
    planted_noise_scale: Option<f64>,
}

impl Claim {
    /// The claim of a mechanism that reports no σx (and has no bug to plant).
    fn without_sigma(mechanism: &str, canary: Canary, epsilon: f64, delta: f64) -> Claim {
        Claim {
            mechanism: mechanism.to_string(),
            canary,
            epsilon,
            delta,
            sigma_x: None,
            planted_noise_scale: None,
        }
    }
}

/// The report of runs on D (`base_out`) and D' (`nb_out`): the best test chosen on the first
/// half of the runs, its counts on the second half, and the Clopper–Pearson bound at 1 − α.
fn conclude(claim: Claim, base_out: &[Outcome], nb_out: &[Outcome], alpha: f64) -> AuditReport {
    let n = base_out.len().min(nb_out.len());
    let half = n / 2;
    let (test, est) = choose_test(&base_out[..half], &nb_out[..half], claim.delta);
    let (tp, fp) = counts(&test, &base_out[half..n], &nb_out[half..n]);
    let m = n - half;
    let lb = stats::epsilon_lower_bound(tp, m, fp, m, claim.delta, alpha);
    AuditReport {
        mechanism: claim.mechanism,
        canary: claim.canary,
        claimed_epsilon: claim.epsilon,
        delta: claim.delta,
        epsilon_lower_bound: lb,
        alpha,
        passed: lb <= claim.epsilon,
        test: test.describe(),
        calibration_estimate: est,
        holdout: HoldoutCounts {
            true_positives: tp,
            runs_neighbour: m,
            false_positives: fp,
            runs_base: m,
        },
        runs: n,
        sigma_x: claim.sigma_x,
        planted_noise_scale: claim.planted_noise_scale,
    }
}

/// An audit of DP-CDA's noise step alone ([`crate::mechanisms::cda::generate`]), in the
/// normalized space where the canary can sit at the full distance 2c from the other rows
/// (base rows at −c·e₁, the canary at +c·e₁; pool = l, so every mix holds the canary). The
/// decoded pipeline clamps rows to their public range, which hides part of the noise; this
/// entry point sees the mechanism as its accountant does, so a wrong σ shows at once.
#[derive(Debug, Clone)]
pub struct NoiseStepAudit {
    /// Mix order l (= the pool).
    pub mix: usize,
    /// Clip norm c.
    pub clip: f64,
    /// σx of the claim.
    pub sigma_x: f64,
    /// Rows released, T (compositions).
    pub samples: usize,
    /// δ of the claim.
    pub delta: f64,
    /// Runs per dataset.
    pub runs: usize,
    /// 1 − confidence.
    pub alpha: f64,
    /// First seed.
    pub seed: u64,
    /// Planted bug: the noise step runs with σx·f.
    pub planted_noise_scale: Option<f64>,
}

/// Runs a [`NoiseStepAudit`].
pub fn run_noise_step_audit(a: &NoiseStepAudit) -> Result<AuditReport> {
    use crate::accountant::{default_orders, Preset};
    use crate::mechanisms::cda::accounting::CdaPrivacy;
    use crate::mechanisms::cda::{generate, CdaConfig, Pools};
    if a.runs < 20 {
        return Err(Error::param("runs", a.runs, "at least 20 runs per dataset"));
    }
    let claim = CdaPrivacy {
        pool: a.mix as u64,
        mix: a.mix as u32,
        clip: a.clip,
        sigma_x: a.sigma_x,
        sigma_y: None,
        samples: a.samples as u64,
    }
    .epsilon(a.delta, &default_orders(), Preset::Default, None)?
    .epsilon;
    let sigma = a.sigma_x * a.planted_noise_scale.unwrap_or(1.0);
    let cfg = CdaConfig {
        mix: a.mix,
        sigma_x: sigma,
        sigma_y: None,
        per_class: vec![a.samples],
        clip: a.clip,
    };
    let classes = vec![(0..a.mix as u32).collect::<Vec<u32>>()];
    let base: Vec<f32> = vec![-a.clip as f32; a.mix];
    let mut nb = base.clone();
    nb[0] = a.clip as f32;
    let run = |data: &[f32], seed: u64| -> Result<Outcome> {
        let mut rng = crate::rng::ReleaseRng::seeded(seed);
        let mut score = 0.0f64;
        generate(
            &Pools {
                features: crate::mechanisms::cda::Rows::Dense(data),
                d: 1,
                classes: &classes,
            },
            &cfg,
            &mut rng,
            |_, row| {
                score += f64::from(row[0]);
                Ok(())
            },
            |_| Ok(()),
        )?;
        Ok(Outcome {
            signature: String::new(),
            parts: Vec::new(),
            score,
            failure: None,
        })
    };
    let mut base_out = Vec::with_capacity(a.runs);
    let mut nb_out = Vec::with_capacity(a.runs);
    for i in 0..a.runs as u64 {
        base_out.push(run(&base, a.seed.wrapping_add(2 * i))?);
        nb_out.push(run(&nb, a.seed.wrapping_add(2 * i + 1))?);
    }
    Ok(conclude(
        Claim {
            mechanism: "dp-cda (noise step)".into(),
            canary: Canary::Extreme,
            epsilon: claim,
            delta: a.delta,
            sigma_x: Some(a.sigma_x),
            planted_noise_scale: a.planted_noise_scale,
        },
        &base_out,
        &nb_out,
        a.alpha,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A configuration that fails in most runs on D leaves nothing to measure: the audit says
    /// so instead of passing on identical error messages (which it did while it pinned σx to
    /// the claim run's, and every run exceeded its target).
    #[test]
    fn runs_that_fail_on_d_are_an_error_not_a_pass() {
        let opts = AuditOptions {
            runs: 20,
            ..Default::default()
        };
        let fail = |_: &[u8], _: u64| Ok(Outcome::failed(&Error::Data("refused".into())));
        let e = run_pairs(&opts, b"d", b"d'", &mut |_| Ok(()), fail)
            .err()
            .expect("an error");
        let e = e.to_string();
        assert!(e.contains("20 of 20 runs") && e.contains("refused"), "{e}");
        // Failing on D' alone tells the neighbours apart: it is measured, not an error.
        let only_nb = |d: &[u8], _: u64| {
            Ok(if d == b"d'" {
                Outcome::failed(&Error::Data("refused".into()))
            } else {
                Outcome::new(vec!["ok".into()], 0.0)
            })
        };
        let (base, nb) = run_pairs(&opts, b"d", b"d'", &mut |_| Ok(()), only_nb).unwrap();
        let report = conclude(
            Claim::without_sigma("test", Canary::Extreme, 1.0, 1e-5),
            &base,
            &nb,
            0.05,
        );
        assert!(report.holdout.true_positives == 10 && report.holdout.false_positives == 0);
    }
}
