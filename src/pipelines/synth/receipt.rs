//! The synthesis's guarantee and receipt: the composed RDP and PLD bounds (the smaller is
//! the guarantee; the target is re-checked), and the receipt assembled from what the
//! pipeline released, with every unprotected number and every caveat stated.
use super::{Adjacency, Classes, Mechanism, Plan, SynthOptions, SynthPld};
use crate::accountant::pld::PldEpsilon;
use crate::accountant::{EpsDelta, Preset, RdpCurve};
use crate::data::decide::DecisionReport;
use crate::error::{Error, Result};
use crate::preprocess::dp_counts::ClassCountReport;
use crate::preprocess::missing::MissingReport;
use crate::preprocess::{NormalizationReport, NormalizeMode};
use crate::receipt::{
    component, preset_parts, AccountantReport, DataReport, EpsByPreset, Guarantee, PldReport,
    Randomness, RdpComponent, Receipt, BUILD_ID, VERSION,
};
use crate::rng::ReleaseRng;

/// The guarantee of a plan composed with the data path's releases.
pub(super) struct Guaranteed {
    /// The full RDP curve (mechanism and releases).
    pub total: RdpCurve,
    /// The guarantee: the smaller of the RDP and PLD bounds, the thresholds' ε terms added.
    pub guarantee: EpsDelta,
    /// The RDP bound alone, and the PLD bound where the PLD accountant covers the mechanism.
    pub epsilon_rdp: f64,
    pub pld: Option<PldEpsilon>,
    pub by_preset: EpsByPreset,
}

/// ε of `plan` composed with `extra_curve` at `delta_rdp`, plus the thresholds' `eps_terms`;
/// an error if a target ε is exceeded (a given σx too small).
pub(super) fn guarantee(
    plan: &Plan,
    extra_curve: &RdpCurve,
    opts: &SynthOptions,
    delta_rdp: f64,
    eps_terms: f64,
) -> Result<Guaranteed> {
    let total = plan.curve.clone().compose(extra_curve)?;
    let mut guarantee = total.epsilon(delta_rdp, opts.preset.conversion())?;
    guarantee.epsilon += eps_terms;
    let epsilon_rdp = guarantee.epsilon;
    // The PLD bound (same δ, same ε terms); the guarantee is the smaller of the two.
    let pld_eps = match &plan.pld {
        Some(p) => {
            let mut e = p.epsilon(plan.sigma_x, delta_rdp)?;
            e.epsilon += eps_terms;
            Some(e)
        }
        None => None,
    };
    if let Some(e) = &pld_eps {
        if e.epsilon < guarantee.epsilon {
            guarantee.epsilon = e.epsilon;
        }
    }
    if let Some(target) = opts.epsilon {
        if guarantee.epsilon > target {
            return Err(Error::param(
                "sigma-x",
                plan.sigma_x,
                format!("this noise gives ε = {:.4} > the target ε = {target}; raise σx or leave it out to calibrate", guarantee.epsilon),
            ));
        }
    }
    let eps_other = plan
        .curve_other
        .clone()
        .compose(extra_curve)?
        .epsilon(delta_rdp, opts.preset.other().conversion())?
        .epsilon
        + eps_terms;
    let by_preset = if opts.preset == Preset::Default {
        EpsByPreset {
            default: epsilon_rdp,
            paper: eps_other,
        }
    } else {
        EpsByPreset {
            default: eps_other,
            paper: epsilon_rdp,
        }
    };
    Ok(Guaranteed {
        total,
        guarantee,
        epsilon_rdp,
        pld: pld_eps,
        by_preset,
    })
}

/// What the receipt is assembled from.
pub(super) struct ReceiptParts<'a> {
    pub opts: &'a SynthOptions,
    pub mechanism: &'a Mechanism,
    /// The DP-CDA standard adjacency is in force.
    pub standard: bool,
    pub plan: Plan,
    pub guaranteed: Guaranteed,
    pub delta_rdp: f64,
    /// The normalization's histograms (when DP) and their curve.
    pub norm_dp: bool,
    pub norm_curve: &'a RdpCurve,
    pub norm_report: NormalizationReport,
    pub decisions: DecisionReport,
    pub types_curve: &'a RdpCurve,
    pub count_report: Option<ClassCountReport>,
    pub counts_curve: &'a RdpCurve,
    /// A release made before the synthesis ([`SynthOptions::prior`]) and its curve.
    pub prior_curve: Option<&'a RdpCurve>,
    pub missing_report: MissingReport,
    pub cls: Classes,
    pub rows_used: usize,
    pub rows_dropped: usize,
    pub label_name: String,
    /// The output's columns (the input's).
    pub columns: Vec<String>,
}

/// The receipt of a finished synthesis.
pub(super) fn assemble(p: ReceiptParts<'_>, rng: &ReleaseRng) -> Receipt {
    let components = components(&p);
    let warnings = warnings(&p, rng);
    let ReceiptParts {
        opts,
        mechanism,
        plan,
        guaranteed:
            Guaranteed {
                total,
                guarantee,
                epsilon_rdp,
                pld: pld_eps,
                by_preset,
            },
        delta_rdp,
        norm_report,
        decisions,
        count_report,
        missing_report,
        cls,
        rows_used,
        rows_dropped,
        label_name,
        columns,
        ..
    } = p;
    let orders = &opts.orders;
    let (bound, conversion) = preset_parts(opts.preset);
    let unprotected = unprotected(rows_dropped, decisions.protected, opts.normalize);
    Receipt {
        epsilon: guarantee.epsilon,
        delta: opts.delta,
        mechanism: mechanism.name(),
        guarantee: Guarantee {
            adjacency: plan.adjacency,
            public_information: plan.public_information,
            unprotected,
            limitations: noise_limitations(mechanism),
        },
        parameters: plan.parameters,
        accountant: AccountantReport {
            preset: opts.preset,
            bound,
            conversion,
            orders: orders.clone(),
            rdp: total.rdp.clone(),
            order: guarantee.order,
            delta_rdp,
            epsilon_by_preset: by_preset,
            components,
            accountant: if pld_eps.is_some() { "pld" } else { "rdp" },
            epsilon_rdp,
            pld: pld_report(pld_eps.as_ref(), plan.pld.as_ref(), mechanism),
        },
        normalization: norm_report,
        data: DataReport {
            rows_used,
            rows_dropped,
            columns,
            label: label_name,
            class_labels: cls.labels,
            class_counts: plan.class_counts_public.then_some(cls.sizes),
        },
        randomness: Randomness::of(rng),
        column_types: Some(decisions),
        missing: Some(missing_report),
        class_counts: count_report,
        warnings,
        version: VERSION,
        build_id: BUILD_ID,
    }
}

/// The receipt's RDP components: the mechanism, and each DP preprocessing step that ran.
fn components(p: &ReceiptParts<'_>) -> Vec<RdpComponent> {
    let mut components = vec![component(p.plan.component, &p.plan.curve)];
    if p.norm_dp {
        components.push(component("dp normalization histograms", p.norm_curve));
    }
    if p.decisions.used_dp() {
        components.push(component(
            "dp column types and missing indicators",
            p.types_curve,
        ));
    }
    if p.count_report.is_some() {
        components.push(component("dp class counts", p.counts_curve));
    }
    if let (Some(prior), Some(curve)) = (p.opts.prior, p.prior_curve) {
        components.push(component(prior.name, curve));
    }
    components
}

/// The receipt's warnings: the column-type decision's, the normalization's, the mechanism
/// plan's, the adjacency's, the class counts' and the seed's.
fn warnings(p: &ReceiptParts<'_>, rng: &ReleaseRng) -> Vec<String> {
    let mut warnings = p.decisions.warnings.clone();
    warnings.extend(p.norm_report.warnings.iter().cloned());
    if p.opts.normalize == NormalizeMode::Data {
        warnings.push(p.norm_report.statement.clone());
    }
    warnings.extend(p.plan.warnings.iter().cloned());
    if p.opts.adjacency == Adjacency::Standard && !p.standard {
        warnings.push(format!(
            "{} does not implement the standard adjacency (label included); its own adjacency is stated in the guarantee",
            p.mechanism.name()
        ));
    }
    if let Some(r) = &p.count_report {
        warnings.extend(class_count_warnings(r, &p.label_name));
    }
    if rng.seed().is_some() {
        warnings.push(crate::receipt::SEEDED_RUN_WARNING.into());
    }
    warnings
}

/// The PLD accountant's part of the receipt, when it ran.
fn pld_report(
    pld_eps: Option<&PldEpsilon>,
    plan: Option<&SynthPld>,
    mechanism: &Mechanism,
) -> Option<PldReport> {
    pld_eps.zip(plan).map(|(e, p)| {
        let (sampling_rate, compositions) = p.rate_and_steps();
        PldReport {
            epsilon: e.epsilon,
            grid_step: e.grid_step,
            fft_len: e.fft_len,
            delta_charge: e.charge,
            sampling_rate,
            compositions,
            scope: pld_scope(mechanism),
        }
    })
}

/// What the synthesis releases without protection: the dropped-row count, column types
/// inferred from the data, exact normalization statistics.
fn unprotected(
    rows_dropped: usize,
    types_protected: bool,
    normalize: NormalizeMode,
) -> Vec<String> {
    let mut unprotected = Vec::new();
    if rows_dropped > 0 {
        unprotected.push(format!(
            "rows_dropped ({}): the table was read with rows with missing values dropped; the count is computed from the raw data",
            rows_dropped
        ));
    }
    if !types_protected {
        unprotected.push(
            "column types and missing indicators: inferred from the data (column types 'data')"
                .into(),
        );
    }
    if normalize == NormalizeMode::Data {
        unprotected.push(crate::receipt::UNPROTECTED_DATA_NORMALIZATION.into());
    }
    unprotected
}

/// The class-count release's warnings: the label set released under DP (a class below the
/// threshold is left out; nothing says which), and classes too small to synthesize.
fn class_count_warnings(r: &ClassCountReport, label_name: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(thr) = r.threshold {
        // The label set itself was released under DP: a class with fewer records than
        // about the threshold is not in the output at all. Says nothing about which or
        // how many classes were left out (that would be the private part).
        warnings.push(format!(
            "the class labels were released under DP: only classes whose noisy count cleared {thr:.1} records are in the output ({} class(es): {}); a smaller class is left out entirely. To keep every class, raise ε, choose the keep-label adjacency (labels and class sizes public, stated in the receipt), or, for a CSV, list the labels in a schema ({{\"{label}\": {{\"type\": \"categorical\", \"categories\": [...]}}}})",
            r.labels.len(),
            r.labels.join(", "),
            label = label_name,
        ));
    }
    if !r.labels_too_small.is_empty() {
        warnings.push(format!(
            "classes released but too small to synthesize at this budget (DP floor below l): {}",
            r.labels_too_small.join(", ")
        ));
    }
    warnings
}

/// What the PLD figure covers, per mechanism.
fn pld_scope(mechanism: &Mechanism) -> &'static str {
    match mechanism {
        Mechanism::Cda => "DP-CDA's mixing charged at the largest per-class rate l/(smallest pool) and the largest per-class T, composed with the Gaussian releases above (types, class counts, normalization); the thresholds' ε terms added. Connect-the-dots discretisation, pessimistic rounding (Doroshenko et al. 2022). The noise is discrete: delta_charge includes the coupling term (1 + e^ε)·T, T ≤ 7.4e-13 for at most 2^48 draws of σ ≥ 2^30 grid units (accountant::pld::coupling)",
        Mechanism::DpMix(_) => "DPMix's T mixes, each one Gaussian step (features and labels scaled together: 1/z² = dx/(l²σx²) + dy/(l²σy²)) on l rows drawn without replacement from the pool (replace-one), composed with the Gaussian releases above; the thresholds' ε terms added. Connect-the-dots discretisation, pessimistic rounding (Doroshenko et al. 2022). The noise is discrete: delta_charge includes the coupling term (1 + e^ε)·T, T ≤ 7.4e-13 for at most 2^48 draws of σ ≥ 2^30 grid units (accountant::pld::coupling)",
        Mechanism::Local | Mechanism::Projection(_) => "one Gaussian step per released row (sampled without replacement when fewer than the input), composed with the Gaussian releases above; the thresholds' ε terms added. Connect-the-dots discretisation, pessimistic rounding (Doroshenko et al. 2022)",
        Mechanism::Gmm(_) => "the GMM's releases (the basis's second moment, the column histograms, every class's sum and second moment) as one Gaussian step of 1/z² = 2ρ, ρ their zCDP figure under the worst neighbour on the grids used (Gaussians compose exactly), composed with the Gaussian releases above; the thresholds' ε terms added. Connect-the-dots discretisation, pessimistic rounding (Doroshenko et al. 2022). The noise is discrete: delta_charge includes the coupling term (1 + e^ε)·T, T ≤ 7.4e-13 for at most 2^48 draws of σ ≥ 2^30 grid units (accountant::pld::coupling)",
    }
}

/// What the receipt says about how the noise is sampled (floating point or exact) and why
/// its ε holds for that noise.
fn noise_limitations(mechanism: &Mechanism) -> Vec<String> {
    let (release, epsilon) = match mechanism {
        Mechanism::Cda => (
            "the mixing noise is exact: each mix sums the drawn rows as integers on a grid 2^k and adds discrete Gaussian noise (Canonne–Kamath–Steinke 2020), so no floating-point noise reaches the rows",
            "the PLD figure (epsilon) is proven for the discrete noise: every draw has σ ≥ 2^30 grid units, within squared Hellinger distance 9.8e-40 of a rounded continuous Gaussian, and a synthesis makes at most 2^48 draws (checked), so the whole output is within total variation T ≤ 7.4e-13 of a release whose privacy-loss distribution is the continuous Gaussian one computed; the accountant charges (1 + e^ε)·T to δ (in accountant.pld.delta_charge; accountant::pld::coupling). Where these conditions fail (a noise multiplier below about 2^-11) the PLD side gives +∞ and epsilon is the RDP bound. The RDP curve, which CKS20 prove holds for the discrete Gaussian, gives the cross-check accountant.epsilon_rdp",
        ),
        Mechanism::DpMix(_) => (
            "the mixing noise is exact: each mix sums the drawn rows as integers on a grid 2^k and adds discrete Gaussian noise (Canonne–Kamath–Steinke 2020), so no floating-point noise reaches the rows",
            "the PLD figure (epsilon) is proven for the discrete noise: every draw (feature sums and label counts) has σ ≥ 2^30 grid units, within squared Hellinger distance 9.8e-40 of a rounded continuous Gaussian, and a synthesis makes at most 2^48 draws (checked), so the whole output is within total variation T ≤ 7.4e-13 of a release whose privacy-loss distribution is the continuous Gaussian one computed; the accountant charges (1 + e^ε)·T to δ (in accountant.pld.delta_charge; accountant::pld::coupling). Where these conditions fail (a noise multiplier below about 2^-11, or σy·l below about 2^-10) the PLD side gives +∞ and epsilon is the RDP bound. The RDP curve, which CKS20 prove holds for the discrete Gaussian, gives the cross-check accountant.epsilon_rdp",
        ),
        Mechanism::Gmm(_) => (
            "the GMM's noise is exact: the basis's second moment, the column histograms and each class's sum and second moment are computed exactly in integers on grids and get discrete Gaussian noise (Canonne–Kamath–Steinke 2020), so no floating-point noise reaches the released statistics",
            "the PLD figure (epsilon) is proven for the discrete noise: every release's grid gives its noise σ ≥ 2^30 grid units (the grids' rounding is in each sensitivity), within squared Hellinger distance 9.8e-40 of a rounded continuous Gaussian per draw, far fewer than 2^48 draws, so the whole output is within total variation T ≤ 7.4e-13 of a release whose privacy-loss distribution is the continuous Gaussian one computed; the accountant charges (1 + e^ε)·T to δ (in accountant.pld.delta_charge; accountant::pld::coupling). The RDP curve (ρ-zCDP: the discrete Gaussian's, CKS20), composed with the data path's curve and converted, gives the cross-check accountant.epsilon_rdp (and the guarantee under the RDP accountant)",
        ),
        _ => (
            "the release noise is exact: each row is rounded to a grid 2^k and gets discrete Gaussian noise (Canonne–Kamath–Steinke 2020), σ raised by at most 2^-10 to cover the rounding",
            "ε is charged with the continuous Gaussian's RDP curve, which CKS20 prove holds for the discrete Gaussian; the PLD figure (epsilon) uses the continuous Gaussian's privacy-loss distribution, which is not a proven bound for this noise: the discrete δ(ε) can exceed it by a gap falling about as 1/σ² in grid units; each row's noise has σ ≥ 2^10·√d·σ/Δ grid units (the counts ≥ 2^30), and the gap is not charged. The proven bound is accountant.epsilon_rdp",
        ),
    };
    vec![
        release.into(),
        "the data path's statistics (DP class counts, column-type decision, DP normalization) get exact discrete Gaussian noise on integer counts (on a grid 2^-k of a count, so the released counts are multiples of 2^-k); their thresholds are one count higher to cover the discrete tail".into(),
        epsilon.into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipelines::synth::DpMixOptions;

    /// The receipts say which ε is proven for the discrete noise and how: DP-CDA's and DPMix's
    /// PLD figures with the coupling charge, local perturbation's RDP bound only.
    #[test]
    fn receipts_state_why_epsilon_holds_for_discrete_noise() {
        let cda = noise_limitations(&Mechanism::Cda).join(" ");
        assert!(cda.contains("is proven for the discrete noise"), "{cda}");
        assert!(cda.contains("T ≤ 7.4e-13"), "{cda}");
        let dpmix = noise_limitations(&Mechanism::DpMix(DpMixOptions::default())).join(" ");
        assert!(
            dpmix.contains("is proven for the discrete noise"),
            "{dpmix}"
        );
        assert!(
            dpmix.contains("label counts") && dpmix.contains("T ≤ 7.4e-13"),
            "{dpmix}"
        );
        let local = noise_limitations(&Mechanism::Local).join(" ");
        assert!(
            !local.contains("is proven for the discrete noise"),
            "{local}"
        );
        assert!(local.contains("not a proven bound"), "{local}");
    }
}
