//! Normalization statistics, with the privacy of each one stated.
//!
//! * `public`: bounds and categories come from the schema; nothing is learned from the data.
//! * `dp` (default): every statistic the schema does not give is read off one Gaussian
//!   mechanism over per-column histograms, whose RDP is composed into the accountant:
//!   - numeric columns: counts over a fixed, data-independent grid of 1,185 bins (sign ×
//!     power of two × quarter, plus a bin for |x| < 2⁻²⁰), plus a count of non-integral values;
//!     the range is the span of the bins whose noisy count clears a threshold (false
//!     detections across all bins and columns ≤ 0.1%: one false bin far out would stretch a
//!     range to ±1e38), and the column is integral when the noisy
//!     non-integral count does not;
//!   - categorical columns: counts of the observed levels; a level is released only if its
//!     noisy count exceeds τ = 1 + σ·t with P(N(0,1) > t) ≤ δ_cat / (#categorical columns), so a
//!     level held by a single record appears with probability ≤ δ_cat in total, which is added
//!     to δ (the standard thresholded-histogram argument). Conditioning on that event not
//!     happening also scales the other direction's probabilities by at most 1/(1 − δ_cat), so
//!     ln(1/(1 − δ_cat)) is added to ε ([`DpHistogramReport::epsilon_categories`], computed by
//!     [`crate::preprocess::dp_counts::threshold_epsilon`]; the pipeline adds it to the
//!     receipt's ε and subtracts it from the target before calibrating).
//!
//!   Replacing one record moves one count between two bins of each histogram and changes each
//!   non-integral count by at most one, so the L2 sensitivity is √(3·m_num + 2·m_cat).
//! * `data`: the paper's exact z-scores and all observed levels. NOT protected; the receipt says
//!   so.

use super::encode::{ColumnCodec, FeatureSpace};
use crate::data::{Column, ColumnSpec, Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::gaussian::{upper_quantile_conservative, Gaussian};
use rand::Rng;
use serde::Serialize;

/// Normalization mode (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NormalizeMode {
    /// Bounds and categories from the schema.
    Public,
    /// Statistics estimated under DP with a share of the budget (default).
    Dp,
    /// The paper's exact statistics, not protected.
    Data,
}

impl std::str::FromStr for NormalizeMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "public" => Ok(NormalizeMode::Public),
            "dp" => Ok(NormalizeMode::Dp),
            "data" => Ok(NormalizeMode::Data),
            other => Err(Error::param(
                "normalize",
                other,
                "use 'dp' (default), 'public' (bounds from --schema) or 'data'",
            )),
        }
    }
}

/// The DP histogram mechanism's parameters (set by the caller from its budget split).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DpHistogramBudget {
    /// Noise multiplier of the joint Gaussian mechanism (σ / L2 sensitivity).
    pub noise_multiplier: f64,
    /// δ spent on releasing categorical levels through the threshold.
    pub delta_categories: f64,
}

/// How one column's statistics were obtained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnReport {
    /// Column name.
    pub name: String,
    /// "numeric", "categorical" or "label".
    pub kind: &'static str,
    /// "schema" (public), "dp" (protected), "data" (unprotected) or "public (class labels)".
    pub source: &'static str,
    /// Numeric range used, in original units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Categorical: number of levels released / observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels_released: Option<usize>,
}

/// What the receipt says about normalization.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormalizationReport {
    /// The mode used.
    pub mode: NormalizeMode,
    /// True when every statistic is public or DP (accounted).
    pub protected: bool,
    /// A sentence for people.
    pub statement: String,
    /// The DP histogram mechanism, when used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dp_histogram: Option<DpHistogramReport>,
    /// Per-column details.
    pub columns: Vec<ColumnReport>,
    /// Things the user should know (e.g. a range that had to fall back).
    pub warnings: Vec<String>,
}

/// Parameters of the DP histogram mechanism as released.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DpHistogramReport {
    /// Noise multiplier (σ / sensitivity).
    pub noise_multiplier: f64,
    /// L2 sensitivity √(3·m_num + 2·m_cat).
    pub l2_sensitivity: f64,
    /// Noise standard deviation on each count.
    pub noise_std: f64,
    /// Numeric columns estimated.
    pub numeric_columns: usize,
    /// Categorical columns estimated.
    pub categorical_columns: usize,
    /// δ spent on the categorical thresholds.
    pub delta_categories: f64,
    /// ε term of the categorical thresholds, ln(1/(1 − δ_cat)) (0 without categorical columns).
    pub epsilon_categories: f64,
}

/// Numbers of (numeric, categorical) feature columns whose statistics `dp` mode must estimate.
pub fn dp_columns(table: &Table, schema: Option<&Schema>) -> (usize, usize) {
    let mut num = 0;
    let mut cat = 0;
    for (j, (name, col)) in table.names.iter().zip(&table.columns).enumerate() {
        if Some(j) == table.label_index {
            continue;
        }
        let spec = schema.and_then(|s| s.columns.get(name));
        match col {
            Column::Numeric { .. } => {
                let public = matches!(
                    spec,
                    Some(ColumnSpec::Numeric {
                        min: Some(_),
                        max: Some(_),
                        integer: Some(_)
                    })
                );
                if !public {
                    num += 1;
                }
            }
            Column::Categorical { .. } => {
                if !matches!(
                    spec,
                    Some(ColumnSpec::Categorical {
                        categories: Some(_)
                    })
                ) {
                    cat += 1;
                }
            }
        }
    }
    (num, cat)
}

// ---- the fixed numeric grid -------------------------------------------------------------

const MIN_EXP: i32 = -20;
const MAX_EXP: i32 = 127;
const SUB: usize = 4;
const HALF: usize = ((MAX_EXP - MIN_EXP + 1) as usize) * SUB;
/// Number of bins of the numeric grid.
pub const GRID_BINS: usize = 2 * HALF + 1;

/// Chance, per run, that noise alone puts a bin (or a non-integral count) over the threshold
/// in any numeric column.
pub const FALSE_DETECTION_RATE: f64 = 1e-3;

fn bin_of(x: f32) -> usize {
    let a = x.abs();
    if a < 2f32.powi(MIN_EXP) {
        return HALF;
    }
    let bits = a.to_bits();
    let exp = (((bits >> 23) & 0xff) as i32 - 127).clamp(MIN_EXP, MAX_EXP);
    let sub = ((bits >> 21) & 3) as usize;
    let off = (exp - MIN_EXP) as usize * SUB + sub;
    if x > 0.0 {
        HALF + 1 + off
    } else {
        HALF - 1 - off
    }
}

/// [lower, upper] edges of a bin.
fn bin_edges(b: usize) -> (f64, f64) {
    if b == HALF {
        let e = 2f64.powi(MIN_EXP);
        return (-e, e);
    }
    let (off, sign) = if b > HALF {
        (b - HALF - 1, 1.0)
    } else {
        (HALF - 1 - b, -1.0)
    };
    let exp = (off / SUB) as i32 + MIN_EXP;
    let sub = (off % SUB) as f64;
    let lo = 2f64.powi(exp) * (1.0 + sub / SUB as f64);
    let hi = 2f64.powi(exp) * (1.0 + (sub + 1.0) / SUB as f64);
    if sign > 0.0 {
        (lo, hi)
    } else {
        (-hi, -lo)
    }
}

// ---- fitting ---------------------------------------------------------------------------

/// Learns the feature space of `table` under `mode`.
///
/// `budget` must be given when `mode` is `Dp` and [`dp_columns`] is non-zero.
pub fn fit_feature_space<R: Rng + ?Sized>(
    table: &Table,
    schema: Option<&Schema>,
    mode: NormalizeMode,
    budget: Option<&DpHistogramBudget>,
    rng: &mut R,
) -> Result<(FeatureSpace, NormalizationReport)> {
    let (m_num, m_cat) = dp_columns(table, schema);
    let dp_hist = if mode == NormalizeMode::Dp && m_num + m_cat > 0 {
        let b = budget
            .ok_or_else(|| Error::Data("internal: dp normalization needs a budget".into()))?;
        let sens = ((3 * m_num + 2 * m_cat) as f64).sqrt();
        Some((
            b,
            sens,
            Gaussian::new("normalization noise", b.noise_multiplier * sens)?,
        ))
    } else {
        None
    };
    let t_num =
        upper_quantile_conservative(FALSE_DETECTION_RATE / ((GRID_BINS + 1) * m_num.max(1)) as f64);
    let t_cat = dp_hist
        .as_ref()
        .filter(|_| m_cat > 0)
        .map(|(b, _, _)| upper_quantile_conservative(b.delta_categories / m_cat as f64));

    let mut codecs = Vec::with_capacity(table.n_cols());
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    let mut dim = 0usize;
    for (j, (name, col)) in table.names.iter().zip(&table.columns).enumerate() {
        if Some(j) == table.label_index {
            codecs.push(ColumnCodec::Label);
            reports.push(ColumnReport {
                name: name.clone(),
                kind: "label",
                source: "public (class labels)",
                range: None,
                levels_released: None,
            });
            continue;
        }
        let spec = schema.and_then(|s| s.columns.get(name));
        match col {
            Column::Numeric { values, integer } => {
                let (s_int, s_min, s_max) = match spec {
                    Some(ColumnSpec::Numeric { integer, min, max }) => (*integer, *min, *max),
                    _ => (None, None, None),
                };
                let (lo, hi, int, source) = match (mode, s_min, s_max) {
                    (NormalizeMode::Data, _, _) => {
                        let (mean, std, mn, mx) = moments(values);
                        let scale = if std > 0.0 { std } else { 1.0 };
                        codecs.push(ColumnCodec::Numeric {
                            offset: mean,
                            scale,
                            lo: mn,
                            hi: mx,
                            integer: *integer,
                            start: dim,
                        });
                        dim += 1;
                        reports.push(ColumnReport {
                            name: name.clone(),
                            kind: "numeric",
                            source: "data",
                            range: Some([mn, mx]),
                            levels_released: None,
                        });
                        continue;
                    }
                    (_, Some(mn), Some(mx)) if mode == NormalizeMode::Public || s_int.is_some() => {
                        (mn, mx, s_int.unwrap_or(false), "schema")
                    }
                    (NormalizeMode::Public, _, _) => {
                        return Err(Error::param(
                            "normalize",
                            "public",
                            format!(
                                "column '{name}' has no public bounds; add {{\"{name}\": {{\"type\": \"numeric\", \"min\": …, \"max\": …}}}} to the schema, or use --normalize dp"
                            ),
                        ));
                    }
                    (NormalizeMode::Dp, _, _) => {
                        let (_, _, g) = dp_hist.as_ref().expect("dp columns imply a budget");
                        let (lo, hi, int_dp, warn) = dp_range(values, g, t_num, rng);
                        if let Some(w) = warn {
                            warnings.push(format!("column '{name}': {w}"));
                        }
                        match (s_min, s_max) {
                            (Some(mn), Some(mx)) => (mn, mx, s_int.unwrap_or(int_dp), "schema"),
                            _ => (lo, hi, s_int.unwrap_or(int_dp), "dp"),
                        }
                    }
                };
                let (offset, scale) = if hi > lo { (lo, hi - lo) } else { (lo, 1.0) };
                codecs.push(ColumnCodec::Numeric {
                    offset,
                    scale,
                    lo,
                    hi,
                    integer: int,
                    start: dim,
                });
                dim += 1;
                reports.push(ColumnReport {
                    name: name.clone(),
                    kind: "numeric",
                    source,
                    range: Some([lo, hi]),
                    levels_released: None,
                });
            }
            Column::Categorical { codes, levels } => {
                let schema_levels = match spec {
                    Some(ColumnSpec::Categorical {
                        categories: Some(c),
                    }) => Some(c.clone()),
                    _ => None,
                };
                let (released, source): (Vec<String>, &'static str) = match (mode, schema_levels) {
                    (NormalizeMode::Data, _) => (levels.clone(), "data"),
                    (_, Some(c)) => (c, "schema"),
                    (NormalizeMode::Public, None) => {
                        return Err(Error::param(
                            "normalize",
                            "public",
                            format!(
                                "column '{name}' has no public categories; add {{\"{name}\": {{\"type\": \"categorical\", \"categories\": […]}}}} to the schema, or use --normalize dp"
                            ),
                        ));
                    }
                    (NormalizeMode::Dp, None) => {
                        let (_, _, g) = dp_hist.as_ref().expect("dp columns imply a budget");
                        let t = t_cat.expect("categorical dp columns imply a threshold");
                        let mut counts = vec![0f64; levels.len()];
                        for &c in codes {
                            counts[c as usize] += 1.0;
                        }
                        let tau = 1.0 + g.sigma() * t;
                        let kept: Vec<String> = levels
                            .iter()
                            .zip(&counts)
                            .filter(|&(_, &c)| c + g.sample(rng) > tau)
                            .map(|(l, _)| l.clone())
                            .collect();
                        if kept.is_empty() {
                            warnings.push(format!(
                                "column '{name}': no category was frequent enough to release under DP; it is written as '{}'. Give its categories in a schema to keep it",
                                super::encode::SUPPRESSED
                            ));
                        }
                        (kept, "dp")
                    }
                };
                let slot_of_code = levels
                    .iter()
                    .map(|l| released.iter().position(|r| r == l))
                    .collect();
                let width = released.len();
                reports.push(ColumnReport {
                    name: name.clone(),
                    kind: "categorical",
                    source,
                    range: None,
                    levels_released: Some(width),
                });
                codecs.push(ColumnCodec::Categorical {
                    levels: released,
                    slot_of_code,
                    start: dim,
                });
                dim += width;
            }
        }
    }
    let protected = mode != NormalizeMode::Data;
    let statement = match mode {
        NormalizeMode::Dp => "Normalization statistics (ranges, integrality, categories) the schema does not give were estimated under differential privacy; their cost is composed into ε and δ.".to_string(),
        NormalizeMode::Public => "Normalization uses only public bounds and categories from the schema; nothing was learned from the data.".to_string(),
        NormalizeMode::Data => "WARNING: normalization statistics (means, standard deviations, ranges, categories) were computed exactly from the data and are NOT protected by differential privacy; the output reveals them. Use --normalize dp (default) or public for a release.".to_string(),
    };
    let dp_histogram = dp_hist.map(|(b, sens, g)| DpHistogramReport {
        noise_multiplier: b.noise_multiplier,
        l2_sensitivity: sens,
        noise_std: g.sigma(),
        numeric_columns: m_num,
        categorical_columns: m_cat,
        delta_categories: if m_cat > 0 { b.delta_categories } else { 0.0 },
        epsilon_categories: if m_cat > 0 {
            super::dp_counts::threshold_epsilon(b.delta_categories)
        } else {
            0.0
        },
    });
    Ok((
        FeatureSpace {
            names: table.names.clone(),
            codecs,
            dim,
        },
        NormalizationReport {
            mode,
            protected,
            statement,
            dp_histogram,
            columns: reports,
            warnings,
        },
    ))
}

/// Mean, std (population), min, max in f64.
fn moments(values: &[f32]) -> (f64, f64, f64, f64) {
    let n = values.len().max(1) as f64;
    let mut sum = 0.0;
    let mut mn = f64::INFINITY;
    let mut mx = f64::NEG_INFINITY;
    for &v in values {
        let v = f64::from(v);
        sum += v;
        mn = mn.min(v);
        mx = mx.max(v);
    }
    let mean = sum / n;
    let var = values
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean, var.sqrt(), mn, mx)
}

/// DP range and integrality of one numeric column from its noisy grid histogram.
fn dp_range<R: Rng + ?Sized>(
    values: &[f32],
    g: &Gaussian,
    t: f64,
    rng: &mut R,
) -> (f64, f64, bool, Option<String>) {
    let mut counts = vec![0f64; GRID_BINS];
    let mut non_integral = 0f64;
    for &v in values {
        counts[bin_of(v)] += 1.0;
        if v.fract() != 0.0 {
            non_integral += 1.0;
        }
    }
    let tau = g.sigma() * t;
    let mut first = None;
    let mut last = None;
    for (b, c) in counts.iter().enumerate() {
        let noisy = c + g.sample(rng);
        if noisy > tau {
            first.get_or_insert(b);
            last = Some(b);
        }
    }
    let integral = non_integral + g.sample(rng) <= tau;
    let (b0, b1) = match (first, last) {
        (Some(a), Some(b)) => (a, b),
        // Nothing stands out of the noise: the data cannot tell us its range at this budget.
        // Fall back to the data-independent range [0, 1] rather than a noise-picked bin.
        _ => {
            return (
                0.0,
                1.0,
                integral,
                Some(
                    "too few rows for the normalization budget to estimate its range; used the default range [0, 1]. \
                     Give min/max in a --schema, raise --normalize-share, or use more rows"
                        .to_string(),
                ),
            )
        }
    };
    let lo = bin_edges(b0).0;
    let hi = bin_edges(b1).1;
    if b0 == HALF && b1 == HALF {
        return (0.0, 0.0, integral, None);
    }
    (lo, hi, integral, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn grid_bins_contain_their_values() {
        for &x in &[
            0.0f32, 1e-9, 3e-6, 0.3, 1.0, 1.3, 7.9, 255.0, 256.0, 1e6, 3e38, -0.3, -255.0, -1e20,
        ] {
            let (lo, hi) = bin_edges(bin_of(x));
            let x = f64::from(x);
            assert!(lo <= x && x <= hi, "{x} not in [{lo}, {hi}]");
        }
        assert!(
            bin_of(-3e38) < bin_of(-1.0) && bin_of(-1.0) < bin_of(0.0) && bin_of(0.0) < bin_of(1.0)
        );
        assert_eq!(GRID_BINS, 1185);
    }

    fn table(values: Vec<f32>, cats: Vec<u32>, levels: Vec<&str>) -> Table {
        let n = values.len();
        Table {
            names: vec!["x".into(), "c".into(), "y".into()],
            columns: vec![
                Column::Numeric {
                    integer: values.iter().all(|v| v.fract() == 0.0),
                    values,
                },
                Column::Categorical {
                    codes: cats,
                    levels: levels.into_iter().map(String::from).collect(),
                },
                Column::Categorical {
                    codes: vec![0; n],
                    levels: vec!["a".into()],
                },
            ],
            n_rows: n,
            rows_dropped: 0,
            label_index: Some(2),
            delimiter: b',',
        }
    }

    #[test]
    fn dp_mode_finds_the_range_and_frequent_levels_only() {
        // 20,000 integer values in 0..=255; a common level and a level held by one record.
        let values: Vec<f32> = (0..20000).map(|i| (i % 256) as f32).collect();
        let mut cats = vec![0u32; 20000];
        cats[7] = 1;
        let t = table(values, cats, vec!["common", "unique"]);
        let b = DpHistogramBudget {
            noise_multiplier: 2.0,
            delta_categories: 1e-6,
        };
        let (fs, rep) = fit_feature_space(
            &t,
            None,
            NormalizeMode::Dp,
            Some(&b),
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        match &fs.codecs[0] {
            ColumnCodec::Numeric {
                lo, hi, integer, ..
            } => {
                assert!(*lo <= 0.0 && *lo > -1e-5, "lo {lo}");
                assert_eq!(*hi, 256.0);
                assert!(*integer);
            }
            c => panic!("{c:?}"),
        }
        match &fs.codecs[1] {
            ColumnCodec::Categorical { levels, .. } => {
                assert_eq!(levels, &vec!["common".to_string()])
            }
            c => panic!("{c:?}"),
        }
        assert!(rep.protected);
        let h = rep.dp_histogram.unwrap();
        assert!((h.l2_sensitivity - 5f64.sqrt()).abs() < 1e-12);
        assert_eq!(fs.dim, 2);
    }

    #[test]
    fn data_mode_is_the_papers_z_score_and_says_unprotected() {
        let t = table(vec![1.0, 3.0, 5.0, 7.0], vec![0, 1, 0, 1], vec!["p", "q"]);
        let (fs, rep) = fit_feature_space(
            &t,
            None,
            NormalizeMode::Data,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        match &fs.codecs[0] {
            ColumnCodec::Numeric { offset, scale, .. } => {
                assert_eq!(*offset, 4.0);
                assert!((scale - 5f64.sqrt()).abs() < 1e-12);
            }
            c => panic!("{c:?}"),
        }
        assert!(!rep.protected && rep.statement.contains("NOT protected"));
    }

    #[test]
    fn constant_column_is_left_unscaled() {
        let t = table(vec![0.0; 8], vec![0; 8], vec!["p"]);
        let (fs, _) = fit_feature_space(
            &t,
            None,
            NormalizeMode::Data,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert!(matches!(fs.codecs[0], ColumnCodec::Numeric { scale, .. } if scale == 1.0));
    }

    #[test]
    fn public_mode_requires_schema_bounds_and_names_the_column() {
        let t = table(vec![1.0, 2.0], vec![0, 0], vec!["p"]);
        let e = fit_feature_space(
            &t,
            None,
            NormalizeMode::Public,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("column 'x'") && e.contains("schema"), "{e}");
        let schema = Schema::from_json(
            r#"{"columns": {"x": {"type": "numeric", "min": 0, "max": 10}, "c": {"type": "categorical", "categories": ["p", "z"]}}}"#,
        )
        .unwrap();
        let (fs, rep) = fit_feature_space(
            &t,
            Some(&schema),
            NormalizeMode::Public,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert!(
            matches!(fs.codecs[0], ColumnCodec::Numeric { lo, hi, .. } if lo == 0.0 && hi == 10.0)
        );
        assert_eq!(fs.dim, 3);
        assert!(rep.protected && rep.dp_histogram.is_none());
    }

    #[test]
    fn mode_parsing() {
        assert_eq!("dp".parse::<NormalizeMode>().unwrap(), NormalizeMode::Dp);
        assert!("zscore"
            .parse::<NormalizeMode>()
            .unwrap_err()
            .to_string()
            .contains("normalize = zscore"));
    }
}
