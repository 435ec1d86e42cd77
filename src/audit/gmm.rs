//! The audit of the GMM release's default path (`mechanism: "gmm"`): the same neighbouring
//! datasets, tests and bound as the synthesis audit ([`super::run_audit`]), run through the
//! GMM release ([`crate::api::gmm_release`]) with the audit's public bound and its public
//! classes (`a`, `b`).
//!
//! The audit's rows lie in [−1, 1]^d, so B = √d bounds every row's norm without looking at
//! them (the release's `bound`, chosen as a user must choose it). Each run's outcome is the
//! released mean of the canary's class along the canary's direction (the score), and every
//! deterministic field an observer sees (the receipt's data report, guarantee, parameters,
//! budget, protected items and warnings; the model's classes and features) as the signature.

use super::{conclude, dataset, run_pairs, AuditOptions, AuditReport, Canary, Claim, Outcome};
use crate::api::{gmm_release, GmmReleaseResult, GmmRequest};
use crate::error::{Error, Result};

/// Rows per class of the GMM audit's datasets (unless the options give them).
const ROWS_PER_CLASS: usize = 10;

/// The request every run makes: the configuration under audit (ε, δ) at the audit's public
/// bound, with `seed`.
fn request(opts: &AuditOptions, seed: u64) -> Result<GmmRequest> {
    let r = &opts.request;
    serde_json::from_value(serde_json::json!({
        "label": "y",
        "epsilon": r.epsilon.unwrap_or(1.0),
        "delta": r.delta.unwrap_or(crate::api::DEFAULT_DELTA),
        "bound": (opts.features as f64).sqrt(),
        // The audit's classes are public (it makes them); read from the data, classes of
        // ten rows would be left out under the labels' threshold and nothing released.
        "classes": ["a", "b"],
        "seed": (seed % (1u64 << 52)) as f64,
    }))
    .map_err(|e| Error::Internal(format!("internal: the audit's GMM request: {e}")))
}

fn outcome(result: Result<GmmReleaseResult>, class: &str) -> Outcome {
    let r = match result {
        Ok(r) => r,
        Err(e) => return Outcome::failed(&e),
    };
    // The canary's direction: −x1 + x2 + … + xd.
    let score = r
        .model
        .classes
        .iter()
        .position(|c| c == class)
        .map_or(0.0, |k| {
            r.model.means[k]
                .iter()
                .enumerate()
                .map(|(j, m)| if j == 0 { -m } else { *m })
                .sum()
        });
    let receipt = serde_json::to_value(&r.receipt).unwrap_or_default();
    let mut parts = vec![
        format!("classes={}", r.model.classes.join("|")),
        format!("features={}", r.model.features.join("|")),
    ];
    for key in [
        "data",
        "guarantee",
        "parameters",
        "budget",
        "protected",
        "warnings",
    ] {
        parts.push(format!("{key}={}", receipt[key]));
    }
    Outcome::new(parts, score)
}

/// Runs the GMM audit. `progress` gets the finished fraction.
pub(super) fn run_gmm_audit(
    opts: &AuditOptions,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<AuditReport> {
    if opts.planted_noise_scale.is_some() {
        return Err(Error::param(
            "planted-noise-scale",
            "gmm",
            "the GMM release has no σx to scale; plant a bug in a synthesis mechanism",
        ));
    }
    let opts = AuditOptions {
        rows_per_class: Some(opts.rows_per_class.unwrap_or(ROWS_PER_CLASS)),
        ..opts.clone()
    };
    // `dataset` makes mix + 1 rows per class unless rows_per_class is set (it is).
    let base = dataset(&opts, 0, false);
    let nb = dataset(&opts, 0, true);
    let claim = gmm_release(&base, &request(&opts, opts.seed)?)?;
    let class = if opts.canary == Canary::ClassChange {
        "b"
    } else {
        "a"
    };
    let (base_out, nb_out) = run_pairs(&opts, &base, &nb, &mut progress, |data, seed| {
        Ok(outcome(gmm_release(data, &request(&opts, seed)?), class))
    })?;
    Ok(conclude(
        Claim::without_sigma("gmm", opts.canary, claim.epsilon, claim.delta),
        &base_out,
        &nb_out,
        opts.alpha,
    ))
}
