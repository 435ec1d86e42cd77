//! The audit of federated DP-CDA (`mechanism: "federated"`): the audit's neighbouring datasets
//! through a federated simulation ([`crate::api::federated_simulate`], CAPE, two parties, the
//! party-aggregator guarantee) with the feature types decided as a party's defaults decide
//! them: under DP (public normalization gets them, with their bounds, from a schema).
//! `types_from_data` leaves them to the data instead (`columnTypes: "data"`, declared
//! unprotected in the receipt): the unparsable-cell canary then flips a column's type, which
//! the audit must catch.
//!
//! `multi_party` runs the path real parties take instead: the audit's rows are split between
//! two parties (alternately, so the canary's record is party 1's), each makes its key pair
//! and its own contribution file, and the two files are aggregated; the outcome is the
//! aggregate's CSV and receipt.
//!
//! The federated adjacency replaces one record's features and keeps its label and party, so
//! the class-change canary is not a neighbour there and is refused. Each run's outcome is the
//! output CSV (header, rows, column kinds; the score along the canary's direction over the
//! canary's class) and every receipt field but the randomness and version.

use super::{conclude, dataset, read_output, run_pairs};
use super::{AuditOptions, AuditReport, Canary, Claim, Outcome};
use crate::api::federated::{
    federated_aggregate, federated_contribute, federated_simulate, FedRequest,
};
use crate::api::synth::MixChoice;
use crate::error::{Error, Result};
use crate::pipelines::federated::FedReceipt;
use crate::rng::ReleaseRng;

/// Parties of the simulation.
const PARTIES: usize = 2;

/// The request every run makes, with `seed`.
fn request(opts: &AuditOptions, mix: usize, seed: u64) -> Result<FedRequest> {
    let r = &opts.request;
    let public = r.normalize.as_deref() == Some("public");
    let mut cols = serde_json::Map::new();
    // Public normalization needs the bounds; otherwise the feature types are left to the
    // run's decision (under DP by default, from the data with `types_from_data`).
    if public && !opts.types_from_data {
        for j in 1..=opts.features {
            cols.insert(
                format!("x{j}"),
                serde_json::json!({"type": "numeric", "min": -1, "max": 1}),
            );
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
    if opts.types_from_data {
        v["columnTypes"] = serde_json::json!("data");
    }
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
            match k.as_str() {
                "randomness" | "seeded" | "version" | "build_id" => {}
                // The decisions (each column's kind and how it was decided), not the noisy
                // statistics they were read off (fresh noise in every run).
                "column_types" => {
                    let mut kinds = Vec::new();
                    decided_kinds(&v, &mut kinds);
                    parts.push(format!("column_types={}", kinds.join("|")));
                }
                _ => parts.push(format!("{k}={v}")),
            }
        }
    }
    Outcome::new(parts, score)
}

/// Every `name:kind:type_source` in a receipt's `column_types` (one report, or one per party).
fn decided_kinds(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Array(a) => a.iter().for_each(|x| decided_kinds(x, out)),
        serde_json::Value::Object(m) => {
            if let (Some(n), Some(k)) = (m.get("name"), m.get("kind")) {
                out.push(format!(
                    "{n}:{k}:{}",
                    m.get("type_source").unwrap_or(&"".into())
                ));
            } else {
                m.values().for_each(|x| decided_kinds(x, out));
            }
        }
        _ => {}
    }
}

/// Runs the federated audit. `progress` gets the finished fraction.
pub(super) fn run_federated_audit(
    opts: &AuditOptions,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<AuditReport> {
    if matches!(
        opts.canary,
        Canary::ClassChange | Canary::MissingLabel | Canary::AddedRecord
    ) {
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
    let one = |data: &[u8], seed: u64| -> Result<Result<(String, FedReceipt)>> {
        let req = request(&opts, mix, seed)?;
        Ok(if opts.multi_party {
            parties(data, &req, seed)
        } else {
            federated_simulate(data, &req)
        })
    };
    let (_, claim) = one(&base, opts.seed)??;
    let (base_out, nb_out) = run_pairs(&opts, &base, &nb, &mut progress, |data, seed| {
        Ok(outcome(one(data, seed)?))
    })?;
    Ok(conclude(
        Claim::without_sigma(&claim.mechanism, opts.canary, claim.epsilon, claim.delta),
        &base_out,
        &nb_out,
        opts.alpha,
    ))
}

/// The multi-party path on `data`: rows dealt alternately to the parties (the canary, the
/// first row, is party 1's), a key pair per party, one contribution file per party (T = all
/// rows, unless the request gives T), and their aggregation. Keys and contributions are seeded
/// from `seed` (the audit releases nothing).
fn parties(data: &[u8], req: &FedRequest, seed: u64) -> Result<(String, FedReceipt)> {
    let text = std::str::from_utf8(data)
        .map_err(|e| Error::Internal(format!("internal: the audit's dataset: {e}")))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let mut parts = vec![format!("{header}\n"); PARTIES];
    let mut rows = 0usize;
    for (i, line) in lines.enumerate() {
        parts[i % PARTIES].push_str(line);
        parts[i % PARTIES].push('\n');
        rows += 1;
    }
    // Seeds kept apart from the runs' (which step by 1): 4s for the keys, 4s + p for party p.
    let base = seed.wrapping_mul(4) % (1u64 << 52);
    let mut key_rng = ReleaseRng::seeded(base);
    let keys: Vec<(String, String)> = (1..=PARTIES as u32)
        .map(|p| crate::pipelines::federated::keygen(p, &mut key_rng))
        .collect();
    let publics: Vec<String> = keys.iter().map(|(_, p)| p.clone()).collect();
    let mut files = Vec::with_capacity(PARTIES);
    for (p, (part, (secret, _))) in parts.iter().zip(&keys).enumerate() {
        let req = FedRequest {
            clients: None,
            samples: Some(req.samples.unwrap_or(rows as u64)),
            seed: Some(((base + 1 + p as u64) % (1u64 << 52)) as f64),
            ..req.clone()
        };
        files.push(federated_contribute(part.as_bytes(), secret, &publics, &req)?.0);
    }
    federated_aggregate(&files)
}
