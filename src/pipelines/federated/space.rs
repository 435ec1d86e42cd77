//! The common feature space of a federation: each run's normalization (DP, public or, in a
//! simulation only, the data's), and the snapping of a party's DP ranges to powers of two so
//! that parties with similar data agree (see the module docs of [`super`], "Common space").

use super::options::FedOptions;
use crate::accountant::calibrate::smallest_z;
use crate::accountant::RdpCurve;
use crate::data::{Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::federated::{public_tau_e, Accounting, Variant};
use crate::preprocess::normalize::{
    dp_columns, fit_feature_space_with, plan_extras, ColumnMarginal, DpHistogramBudget, ExtraStats,
    NormPlan,
};
use crate::preprocess::{ColumnCodec, FeatureSpace, NormalizeMode};
use crate::rng::ReleaseRng;

/// Share of δ spent on releasing categorical levels through the DP threshold.
pub(super) const DELTA_CATEGORY_SHARE: f64 = 0.1;

/// The normalization step, its RDP cost and the δ left for the RDP conversion.
pub(super) struct Norm {
    pub(super) space: FeatureSpace,
    pub(super) report: crate::preprocess::NormalizationReport,
    /// The RDP curve of the data path: the normalization histograms and the column-type
    /// decision, composed.
    pub(super) curve: RdpCurve,
    /// The noise multiplier of that composition ([`combined_z`]; None: no DP release).
    pub(super) z: Option<f64>,
    pub(super) delta_rdp: f64,
    /// The DP marginals released with the ranges, one entry per input column (all None
    /// unless asked for and worth their noise: [`plan_extras`]).
    pub(super) marginals: Vec<Option<ColumnMarginal>>,
}

impl Norm {
    /// The accounting of T_k = `per_class` mixes at sampling rate l/`pool`, composed with
    /// this normalization's cost.
    pub(super) fn accounting<'a>(
        &'a self,
        opts: &'a FedOptions,
        pool: usize,
        per_class: usize,
    ) -> Accounting<'a> {
        Accounting {
            sampling_rate: opts.mix as f64 / pool as f64,
            compositions: per_class as u64,
            delta_rdp: self.delta_rdp,
            orders: &opts.orders,
            preset: opts.preset,
            extra: Some(&self.curve),
            threshold_epsilon: self.threshold_epsilon(),
        }
    }

    /// The categorical levels' DP threshold's ε term, ln(1/(1 − δ_cat)) (0 without one).
    pub(super) fn threshold_epsilon(&self) -> f64 {
        self.report
            .dp_histogram
            .as_ref()
            .map_or(0.0, |h| h.epsilon_categories)
    }
}

/// CAPE's correlated noise std τ_e for T_k = `per_class` mixes of sensitivity `delta_l2`,
/// calibrated at δ = `delta` (0 for the conventional variant).
pub(super) fn tau_e_for(
    opts: &FedOptions,
    delta_l2: f64,
    per_class: usize,
    delta: f64,
) -> Result<f64> {
    match opts.variant {
        Variant::Cape => public_tau_e(
            delta_l2,
            per_class as u64,
            opts.epsilon,
            delta,
            &opts.orders,
            opts.preset,
        ),
        Variant::Conventional => Ok(0.0),
    }
}

/// The noise multiplier of two Gaussian mechanisms (noise multipliers `a`, `b`) run on the
/// same records: their composition is exactly a Gaussian mechanism with 1/z² = 1/a² + 1/b²
/// (the RDP curves α/(2z²) add; so do the squared GDP parameters 1/z²), which a contribution
/// file states as one number. Rounded down (more privacy loss) by a relative 10⁻¹⁰: far
/// above the few ulps of the formula's rounding, and enough that its curve stays on or above
/// the composition of the two curves as the accountant rounds them (each up by 10⁻¹¹).
pub(super) fn combined_z(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let z = 1.0 / (a.powi(-2) + b.powi(-2)).sqrt();
            Some(z * (1.0 - 1e-10))
        }
        (a, b) => a.or(b),
    }
}

/// The normalization of `table`, with the data path's cost: its histograms' and, when
/// `types_z` is given, the column-type decision's ([`super::records::prepare`]).
/// `want` asks for more than ranges and categories in the same release (the marginals, for
/// decoding: the simulation's, and a party's for the aggregator's mixture of the parties'
/// marginals; each judged worth its noise on its own rows, [`plan_extras`]).
pub(super) fn normalize(
    table: &Table,
    schema: Option<&Schema>,
    opts: &FedOptions,
    types_z: Option<f64>,
    want: ExtraStats,
    rng: &mut ReleaseRng,
) -> Result<Norm> {
    let (m_num, m_cat) = dp_columns(table, schema);
    let dp_norm = opts.normalize == NormalizeMode::Dp && m_num + m_cat > 0;
    let delta_cat = if dp_norm && m_cat > 0 {
        opts.delta * DELTA_CATEGORY_SHARE
    } else {
        0.0
    };
    let delta_rdp = opts.delta - delta_cat;
    let (budget, norm_z) = if dp_norm {
        let cal = smallest_z(
            opts.epsilon * opts.normalize_share,
            delta_rdp,
            opts.preset.conversion(),
            |z| RdpCurve::gaussian(z, &opts.orders),
        )?;
        (
            Some(DpHistogramBudget {
                noise_multiplier: cal.z,
                delta_categories: delta_cat,
            }),
            Some(cal.z),
        )
    } else {
        (None, None)
    };
    let z = combined_z(norm_z, types_z);
    let curve = RdpCurve::gaussian_or_zero(z, &opts.orders)?;
    // The ranges and categories, and the marginals when `want` asks for them and their noise
    // leaves them worth it: one Gaussian mechanism at the noise multiplier charged above
    // (the marginals widen its sensitivity, not its curve). No pooled range histogram: the
    // parties' ranges are snapped to powers of two instead ([`snap_dp_ranges`]).
    let plan = match norm_z {
        Some(z) => NormPlan {
            pooled_range: false,
            ..plan_extras(table, schema, want, z)
        },
        None => NormPlan::ranges_only(m_num, m_cat),
    };
    let (space, report, released) =
        fit_feature_space_with(table, schema, opts.normalize, budget.as_ref(), &plan, rng)?;
    if space.dim == 0 {
        return Err(Error::Data(
            "there are no feature columns besides the label; add at least one feature column"
                .into(),
        ));
    }
    Ok(Norm {
        space,
        report,
        curve,
        z,
        delta_rdp,
        marginals: released.marginals,
    })
}

/// Rounds x outward to a power of two (toward +∞ when `up`), with |x| ≤ 2⁻²⁰ mapped to 0.
fn snap(x: f64, up: bool) -> f64 {
    let tiny = 2f64.powi(-20);
    if x.abs() <= tiny {
        return 0.0;
    }
    let mag = x.abs().log2();
    // Away from zero when x has the sign we round toward, toward zero otherwise.
    let away = (x > 0.0) == up;
    let e = if away { mag.ceil() } else { mag.floor() };
    x.signum() * 2f64.powf(e)
}

/// Rounds every DP-estimated numeric range outward to powers of two and to include 0
/// (post-processing), so that parties with similar data end up with the same ranges. A column whose range DP could
/// not see (the data-independent fallback [0, 1]), or of which it saw only the bin around 0,
/// borrows the widest range estimated for the party's other numeric columns (still
/// post-processing of DP outputs): for images, where all pixels share a range and most pixels
/// are mostly 0, this keeps the parties' spaces equal so the correlated noise cancels.
/// Returns a warning per borrowed range.
pub(super) fn snap_dp_ranges(
    space: &mut FeatureSpace,
    report: &crate::preprocess::NormalizationReport,
) -> Vec<String> {
    let mut fallback = Vec::new();
    let mut wide: Option<(f64, f64)> = None;
    for (i, (codec, col)) in space.codecs.iter_mut().zip(&report.columns).enumerate() {
        if let ColumnCodec::Numeric {
            offset,
            scale,
            lo,
            hi,
            ..
        } = codec
        {
            if col.source != "dp" {
                continue;
            }
            if *lo == 0.0 && *hi == 1.0 {
                fallback.push(i);
                continue;
            }
            // Outward to powers of two, and to include 0 (at most a factor 2 in scale): the
            // coarser the grid, the likelier parties agree.
            let l = snap(*lo, false).min(0.0);
            let h = snap(*hi, true).max(0.0);
            if h <= l {
                // Only the bin around 0 was seen: a (mostly) zero column whose other values
                // DP could not see; it borrows too.
                fallback.push(i);
                continue;
            }
            *lo = l;
            *hi = h;
            *offset = l;
            *scale = if h > l { h - l } else { 1.0 };
            wide = Some(wide.map_or((l, h), |(a, b)| (a.min(l), b.max(h))));
        }
    }
    let mut warnings = Vec::new();
    if let Some((l, h)) = wide.filter(|(l, h)| h > l) {
        for i in fallback {
            if let ColumnCodec::Numeric {
                offset,
                scale,
                lo,
                hi,
                ..
            } = &mut space.codecs[i]
            {
                *lo = l;
                *hi = h;
                *offset = l;
                *scale = h - l;
                warnings.push(format!(
                    "column '{}': DP saw too little of its range at this party; it uses the widest range estimated for the other numeric columns, [{l}, {h}]",
                    space.names[i]
                ));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one noise multiplier a file states for two Gaussian releases is never less
    /// private than their composition: its RDP curve lies on or above the sum of theirs at
    /// every order, and within 10⁻⁹ relative of it (the formula is exact up to rounding).
    #[test]
    fn combined_z_is_the_composition_rounded_toward_more_loss() {
        let orders = crate::accountant::default_orders();
        for (a, b) in [
            (7.667, 24.5),
            (0.5, 0.5),
            (1e-3, 1e3),
            (3.0, 3.0000001),
            (40.0, 0.9),
        ] {
            let z = combined_z(Some(a), Some(b)).unwrap();
            let sum = RdpCurve::gaussian(a, &orders)
                .unwrap()
                .compose(&RdpCurve::gaussian(b, &orders).unwrap())
                .unwrap();
            let one = RdpCurve::gaussian(z, &orders).unwrap();
            for (x, y) in one.rdp.iter().zip(&sum.rdp) {
                assert!(x >= y, "{a} {b}: {x} < {y}");
                assert!((x - y) / y <= 1e-9, "{a} {b}: {x} vs {y}");
            }
        }
        assert_eq!(combined_z(Some(2.0), None), Some(2.0));
        assert_eq!(combined_z(None, Some(3.0)), Some(3.0));
        assert_eq!(combined_z(None, None), None);
    }

    #[test]
    fn dp_ranges_are_snapped_and_blind_columns_borrow_the_widest() {
        use crate::preprocess::normalize::ColumnReport;
        let num = |lo: f64, hi: f64| ColumnCodec::Numeric {
            offset: lo,
            scale: hi - lo,
            lo,
            hi,
            integer: true,
            start: 0,
        };
        let rep = |name: &str, source: &'static str| ColumnReport {
            name: name.into(),
            kind: "numeric",
            source,
            range: None,
            levels_released: None,
        };
        let mut space = FeatureSpace {
            names: vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()],
            codecs: vec![
                num(-2f64.powi(-20), 240.0),          // → [0, 256]
                num(128.0, 256.0),                    // → [0, 256]
                num(0.0, 1.0),                        // DP fallback → borrows
                num(-2f64.powi(-20), 2f64.powi(-20)), // only the zero bin → borrows
                num(3.0, 7.0),                        // schema: untouched
            ],
            dim: 5,
        };
        let report = crate::preprocess::NormalizationReport {
            mode: NormalizeMode::Dp,
            protected: true,
            statement: String::new(),
            dp_histogram: None,
            columns: vec![
                rep("a", "dp"),
                rep("b", "dp"),
                rep("c", "dp"),
                rep("d", "dp"),
                rep("e", "schema"),
            ],
            warnings: vec![],
        };
        let w = snap_dp_ranges(&mut space, &report);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("'c'") && w[1].contains("'d'"));
        for i in 0..4 {
            match &space.codecs[i] {
                ColumnCodec::Numeric {
                    lo,
                    hi,
                    offset,
                    scale,
                    ..
                } => {
                    assert_eq!(
                        (*lo, *hi, *offset, *scale),
                        (0.0, 256.0, 0.0, 256.0),
                        "column {i}"
                    );
                }
                _ => unreachable!(),
            }
        }
        assert_eq!(space.codecs[4], num(3.0, 7.0));
    }

    #[test]
    fn snapping_rounds_outward_to_powers_of_two() {
        assert_eq!(snap(200.0, true), 256.0);
        assert_eq!(snap(256.0, true), 256.0);
        assert_eq!(snap(3.0, false), 2.0);
        assert_eq!(snap(-3.0, false), -4.0);
        assert_eq!(snap(-3.0, true), -2.0);
        assert_eq!(snap(1e-9, false), 0.0);
        assert_eq!(snap(0.3, true), 0.5);
    }
}
