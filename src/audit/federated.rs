//! The audit of federated DP-CDA (`mechanism: "federated"`): the audit's neighbouring datasets
//! through a federated simulation ([`crate::api::federated_simulate`], CAPE, two parties, the
//! party-aggregator guarantee) with the column types given by a schema, as the federated
//! guarantee asks. `types_from_data` leaves the feature types to the data instead (declared
//! unprotected in the receipt): the unparsable-cell canary then flips a column's type, which
//! the audit must catch.
//!
//! The federated adjacency replaces one record's features and keeps its label and party, so
//! the class-change canary is not a neighbour there and is refused. Each run's outcome is the
//! output CSV (header, rows, column kinds; the score along the canary's direction over the
//! canary's class) and every receipt field but the randomness and version.

use super::{conclude, dataset, read_output, run_pairs};
use super::{AuditOptions, AuditReport, Canary, Claim, Outcome};
use crate::api::federated::{federated_simulate, FedRequest};
use crate::api::synth::MixChoice;
use crate::error::{Error, Result};
use crate::pipelines::federated::FedReceipt;

/// Parties of the simulation.
const PARTIES: usize = 2;

/// The request every run makes, with `seed`.
fn request(opts: &AuditOptions, mix: usize, seed: u64) -> Result<FedRequest> {
    let r = &opts.request;
    let public = r.normalize.as_deref() == Some("public");
    let mut cols = serde_json::Map::new();
    if !opts.types_from_data {
        for j in 1..=opts.features {
            let spec = if public {
                serde_json::json!({"type": "numeric", "min": -1, "max": 1})
            } else {
                serde_json::json!({"type": "numeric"})
            };
            cols.insert(format!("x{j}"), spec);
        }
    }
    cols.insert(
        "y".into(),
        serde_json::json!({"type": "categorical", "categories": ["a", "b"]}),
    );
    let mut v = serde_json::json!({
        "label": "y",
        "epsilon": r.epsilon.unwrap_or(1.0),
        "delta": r.delta.unwrap_or(crate::api::DEFAULT_DELTA),
        "mix": mix,
        "clients": PARTIES,
        "schema": { "columns": cols },
        "seed": (seed % (1u64 << 52)) as f64,
    });
    if let Some(n) = &r.normalize {
        v["normalize"] = serde_json::json!(n);
    }
    if let Some(c) = r.clip {
        v["clip"] = serde_json::json!(c);
    }
    serde_json::from_value(v)
        .map_err(|e| Error::Internal(format!("internal: the audit's federated request: {e}")))
}

fn outcome(result: Result<(String, FedReceipt)>) -> Outcome {
    let (csv, receipt) = match result {
        Ok(x) => x,
        Err(e) => return Outcome::failed(&e),
    };
    let (header, rows, kinds, score) = read_output(csv.as_bytes(), "a", false);
    let mut parts = vec![
        format!("header={}", header.join("|")),
        format!("rows={rows}"),
        format!("kinds={kinds}"),
    ];
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&receipt) {
        for (k, v) in m {
            if !matches!(k.as_str(), "randomness" | "seeded" | "version" | "build_id") {
                parts.push(format!("{k}={v}"));
            }
        }
    }
    Outcome::new(parts, score)
}

/// Runs the federated audit. `progress` gets the finished fraction.
pub(super) fn run_federated_audit(
    opts: &AuditOptions,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<AuditReport> {
    if matches!(opts.canary, Canary::ClassChange | Canary::MissingLabel) {
        return Err(Error::param(
            "canary",
            opts.canary.as_str(),
            "federated DP-CDA's adjacency keeps each record's label (class sizes are public there); audit it with extreme, unparsable-cell or missing-cell",
        ));
    }
    if opts.planted_noise_scale.is_some() {
        return Err(Error::param(
            "planted-noise-scale",
            "federated",
            "plant a bug in a synthesis mechanism; the federated audit has none to plant",
        ));
    }
    let mix = match &opts.request.mix {
        Some(MixChoice::Fixed(l)) => *l as usize,
        _ => 4,
    };
    // Every party needs l rows of each class.
    let opts = AuditOptions {
        rows_per_class: Some(opts.rows_per_class.unwrap_or(PARTIES * mix)),
        ..opts.clone()
    };
    let base = dataset(&opts, mix, false);
    let nb = dataset(&opts, mix, true);
    let (_, claim) = federated_simulate(&base, &request(&opts, mix, opts.seed)?)?;
    let (base_out, nb_out) = run_pairs(&opts, &base, &nb, &mut progress, |data, seed| {
        Ok(outcome(federated_simulate(
            data,
            &request(&opts, mix, seed)?,
        )))
    })?;
    Ok(conclude(
        Claim::without_sigma(&claim.mechanism, opts.canary, claim.epsilon, claim.delta),
        &base_out,
        &nb_out,
        opts.alpha,
    ))
}
