//! Issue 11, items 2–4, over the real pipeline (`api::synthesize_csv`, what the CLI's CSV path
//! and the npm `synthesizeCsv` run): neighbouring inputs that differ by one unparsable cell,
//! one missing cell, one record moved to another class, or one record with a label of its own
//! must give outputs and receipts that no deterministic field tells apart (row counts, column
//! kinds, σx, class counts, q, the set of output labels).
//!
//! On the code before this change every test here fails: an unparsable cell turned the column
//! categorical, a missing cell dropped the row (150 → 149 rows), the receipt published the
//! exact class counts, and a label held by one record was an error ("fewer than l rows").

use privmix::api::{synthesize_csv, SynthRequest};
use serde_json::Value;

/// 2 classes × 300 rows; x and z numeric, c categorical. Deterministic (no RNG).
fn base_rows() -> Vec<[String; 4]> {
    (0..600)
        .map(|i| {
            let y = if i % 2 == 0 { "a" } else { "b" };
            let x = format!(
                "{}",
                (i * 37 % 101) as f64 / 10.0 + if y == "a" { 0.0 } else { 5.0 }
            );
            let z = format!("{}", i * 13 % 17);
            let c = if i % 3 == 0 { "u" } else { "v" };
            [x, z, c.to_string(), y.to_string()]
        })
        .collect()
}

fn csv(rows: &[[String; 4]]) -> String {
    let mut s = String::from("x,z,c,y\n");
    for r in rows {
        s.push_str(&r.join(","));
        s.push('\n');
    }
    s
}

struct Run {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    receipt: Value,
}

fn run(text: &str, seed: u64) -> Run {
    let req: SynthRequest = serde_json::from_value(serde_json::json!({
        "label": "y", "epsilon": 2.0, "delta": 1e-5, "seed": seed as f64
    }))
    .unwrap();
    let (bytes, receipt) = synthesize_csv(text.as_bytes(), &req, |_| Ok(())).unwrap();
    let out = String::from_utf8(bytes).unwrap();
    let mut lines = out.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    Run {
        header,
        rows,
        receipt: serde_json::to_value(&receipt).unwrap(),
    }
}

fn sigma_x(r: &Value) -> f64 {
    r["parameters"]["sigma_x"].as_f64().unwrap()
}

/// The deterministic shape of a run: header, row count, rows_used, the class labels, the
/// exact class counts if published, and each output column's kind (numeric if every cell
/// parses as a number).
fn shape(r: &Run) -> (Vec<String>, usize, Value, Value, Value, Vec<bool>) {
    let numeric: Vec<bool> = (0..r.header.len())
        .map(|j| {
            r.rows
                .iter()
                .all(|row| row[j].is_empty() || row[j].parse::<f64>().is_ok())
        })
        .collect();
    (
        r.header.clone(),
        r.rows.len(),
        r.receipt["data"]["rows_used"].clone(),
        r.receipt["data"]["class_labels"].clone(),
        r.receipt["data"]["class_counts"].clone(),
        numeric,
    )
}

fn assert_same_shape(d: &Run, e: &Run, what: &str) {
    assert_eq!(shape(d), shape(e), "{what}: the shapes differ");
    assert_eq!(
        sigma_x(&d.receipt),
        sigma_x(&e.receipt),
        "{what}: σx differs"
    );
    assert_eq!(
        d.receipt["parameters"]["sampling_rate"], e.receipt["parameters"]["sampling_rate"],
        "{what}: q differs"
    );
}

#[test]
fn one_unparsable_cell_changes_no_type_and_no_shape() {
    let rows = base_rows();
    let d = csv(&rows);
    for token in ["oops", "N/A", "null", "-"] {
        let mut r2 = rows.clone();
        r2[7][0] = token.to_string();
        let e = csv(&r2);
        for seed in [1u64, 2] {
            let (a, b) = (run(&d, seed), run(&e, seed));
            assert_same_shape(&a, &b, token);
            // x stays numeric: no '(suppressed)', no category names in the output.
            assert!(shape(&b).5[0], "{token}: x is not numeric in the output");
            let kinds = &b.receipt["column_types"]["columns"];
            assert_eq!(kinds[0]["kind"], "numeric", "{token}");
            assert_eq!(kinds[0]["type_source"], "dp", "{token}");
        }
    }
}

#[test]
fn one_missing_cell_drops_no_row() {
    let rows = base_rows();
    let d = csv(&rows);
    for (col, token) in [(0usize, ""), (1, "NA"), (2, "?"), (2, "")] {
        let mut r2 = rows.clone();
        r2[11][col] = token.to_string();
        let e = csv(&r2);
        let (a, b) = (run(&d, 3), run(&e, 3));
        assert_same_shape(&a, &b, &format!("column {col} = '{token}'"));
        assert_eq!(b.receipt["data"]["rows_used"], 600);
        assert_eq!(b.receipt["data"]["rows_dropped"], 0);
    }
}

#[test]
fn a_record_moved_to_another_class_publishes_no_class_count() {
    let rows = base_rows();
    let mut r2 = rows.clone();
    r2[0][3] = "b".to_string(); // 300/300 → 299/301
    let (d, e) = (csv(&rows), csv(&r2));
    let mut sig_d = Vec::new();
    let mut sig_e = Vec::new();
    for seed in 0..6u64 {
        let (a, b) = (run(&d, seed), run(&e, seed));
        // No exact count anywhere in the receipt; labels and row counts agree.
        assert!(a.receipt["data"]["class_counts"].is_null());
        assert!(b.receipt["data"]["class_counts"].is_null());
        assert_eq!(shape(&a), shape(&b));
        assert!(a.receipt["guarantee"]["adjacency"]
            .as_str()
            .unwrap()
            .contains("label included"));
        sig_d.push(sigma_x(&a.receipt));
        sig_e.push(sigma_x(&b.receipt));
    }
    // σx follows the DP counts: it varies from run to run (not a function of the data), and
    // the neighbours' values overlap (within 2% of each other for the same noise).
    assert!(sig_d.iter().any(|s| *s != sig_d[0]), "{sig_d:?}");
    for (a, b) in sig_d.iter().zip(&sig_e) {
        assert!((a / b - 1.0).abs() < 0.02, "{a} {b}");
    }
}

/// The skeleton of a JSON value: its keys, array lengths and value kinds, with no value.
fn skeleton(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), skeleton(x))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(skeleton).collect()),
        Value::Number(_) => Value::from("number"),
        Value::String(_) => Value::from("string"),
        Value::Bool(_) => Value::from("bool"),
        Value::Null => Value::Null,
    }
}

/// With a public pool floor equal to the classes' size (300), the data's pools need no
/// padding, and the neighbour's (one record moved: 299/301) pads one pool with a zero row.
/// Whether a pool was padded is a function of the exact class counts: the receipts must not
/// tell it. Their warnings are equal and their skeletons (keys, array lengths, kinds) too.
/// On the code before this change the neighbour's receipt said "1 zero rows were added to
/// pools whose DP floor exceeded the class", in every run, and the data's never did.
#[test]
fn whether_a_pool_was_padded_is_not_published() {
    let rows = base_rows();
    let mut r2 = rows.clone();
    r2[0][3] = "b".to_string(); // 300/300 → 299/301
    let (d, e) = (csv(&rows), csv(&r2));
    let run_floor = |text: &str, seed: u64| {
        let req: SynthRequest = serde_json::from_value(serde_json::json!({
            "label": "y", "epsilon": 2.0, "delta": 1e-5, "seed": seed as f64,
            "poolFloor": 300
        }))
        .unwrap();
        let receipt = synthesize_csv(text.as_bytes(), &req, |_| Ok(())).unwrap().1;
        serde_json::to_value(&receipt).unwrap()
    };
    for seed in 0..4u64 {
        let (a, b) = (run_floor(&d, seed), run_floor(&e, seed));
        assert_eq!(a["warnings"], b["warnings"], "seed {seed}");
        assert_eq!(skeleton(&a), skeleton(&b), "seed {seed}");
        assert_eq!(a["parameters"]["pool"], 300);
        assert_eq!(b["parameters"]["pool"], 300);
        let text = b.to_string();
        assert!(!text.contains("zero rows"), "seed {seed}: {text}");
    }
}

#[test]
fn a_label_held_by_one_record_is_not_published() {
    let rows = base_rows();
    let mut r2 = rows.clone();
    r2[5][3] = "rare".to_string();
    let (d, e) = (csv(&rows), csv(&r2));
    for seed in 0..4u64 {
        let (a, b) = (run(&d, seed), run(&e, seed));
        assert_eq!(
            b.receipt["data"]["class_labels"],
            serde_json::json!(["a", "b"])
        );
        let labels: std::collections::BTreeSet<&str> =
            b.rows.iter().map(|r| r[3].as_str()).collect();
        assert_eq!(labels.into_iter().collect::<Vec<_>>(), ["a", "b"]);
        // T is the rounded sum of the DP counts (one record fewer in class a): random, and
        // the same up to that one record for the same noise.
        assert!(a.rows.len().abs_diff(b.rows.len()) <= 1);
    }
}

#[test]
fn many_missing_cells_come_back_as_missing() {
    // 40% of x missing: the DP decision gives x an indicator, and the output has empty
    // x cells in about that share (restored from the noisy indicator).
    let mut rows = base_rows();
    for (i, r) in rows.iter_mut().enumerate() {
        if i % 5 < 2 {
            r[0] = "NA".to_string();
        }
    }
    let out = run(&csv(&rows), 5);
    assert_eq!(out.header, ["x", "z", "c", "y"]);
    assert_eq!(
        out.receipt["column_types"]["columns"][0]["missing_indicator"],
        true
    );
    let empty = out.rows.iter().filter(|r| r[0].is_empty()).count() as f64;
    let share = empty / out.rows.len() as f64;
    assert!(share > 0.05 && share < 0.6, "{share}");
}

/// Exact noise (issue 11, "Exact noise"): every noisy count the receipt publishes — the DP
/// class counts and the column-type decision statistics — lies on a count grid 2^-k, k ≤ 30
/// (count + 2^-k·discrete Gaussian), never count + fl(σz), whose low bits would leak the
/// count (Mironov 2012).
#[test]
fn published_noisy_counts_lie_on_the_count_grid() {
    let on_grid = |v: f64| (v * 2f64.powi(30)).fract() == 0.0;
    let rows = base_rows();
    let d = csv(&rows);
    for seed in 0..3u64 {
        let r = run(&d, seed).receipt;
        let counts = r["class_counts"]["noisy_counts"].as_array().unwrap();
        assert_eq!(counts.len(), 2);
        for c in counts {
            let c = c.as_f64().unwrap();
            assert!(on_grid(c), "seed {seed}: class count {c}");
        }
        let cols = r["column_types"]["columns"].as_array().unwrap();
        let mut seen = 0;
        for c in cols {
            for key in ["noisy_text_minus_numeric", "noisy_missing"] {
                if let Some(v) = c[key].as_f64() {
                    assert!(on_grid(v), "seed {seed}: {key} {v}");
                    seen += 1;
                }
            }
        }
        // x and z (numeric: both statistics) and c (categorical: the type statistic).
        assert!(seen >= 5, "{seen}");
    }
}

/// The GMM release reads its CSV as the synthesis does (issue 11, items 2, 3 and 6): a
/// missing or unparsable feature cell is missing (it takes the public centre), never a dropped
/// row or a refused column, and a class too small to fit only leaves the owner's KL undefined.
/// Neighbours that differ by one such cell, or by one record moved into a class of 5 rows
/// (d = 4: the old code refused a class below d + 2 = 6 rows, naming its size), give receipts
/// with the same skeleton, no N (the default adjacency also adds or removes a record) and
/// nothing declared unprotected; two inputs one record apart give identical receipts.
#[test]
fn gmm_release_neither_drops_nor_refuses_by_the_data() {
    use privmix::api::{gmm_release, GmmRequest};
    let iris = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/iris.csv"
    ))
    .unwrap();
    let lines: Vec<&str> = iris.lines().collect();
    let header = lines[0];
    let label = header.rsplit(',').next().unwrap().to_string();
    let with = |row: usize, f: &dyn Fn(&str) -> String| -> String {
        let mut out = vec![header.to_string()];
        for (i, l) in lines[1..].iter().enumerate() {
            out.push(if i == row { f(l) } else { l.to_string() });
        }
        out.join("\n") + "\n"
    };
    let cell0 = |tok: &'static str| {
        move |l: &str| {
            let rest = l.split_once(',').unwrap().1;
            format!("{tok},{rest}")
        }
    };
    let base = with(usize::MAX, &|l| l.to_string());
    let missing = with(3, &cell0(""));
    let na = with(3, &cell0("N/A"));
    let oops = with(3, &cell0("oops"));
    let req: GmmRequest = serde_json::from_value(serde_json::json!({
        "label": label, "epsilon": 1.0, "delta": 1e-5, "bound": 10.0, "seed": 1.0,
        // Iris's species are public (its schema lists them); labels read from the data have
        // their own test (`pipelines::gmm::tests`, the labels' threshold).
        "classes": ["setosa", "versicolor", "virginica"]
    }))
    .unwrap();
    let receipt = |text: &str| {
        let r = gmm_release(text.as_bytes(), &req).unwrap();
        serde_json::to_value(&r.receipt).unwrap()
    };
    let a = receipt(&base);
    assert!(a["data"].get("rows_used").is_none(), "{a}");
    let first = header.split(',').next().unwrap();
    for (what, text) in [("empty", &missing), ("N/A", &na), ("oops", &oops)] {
        // The owner is told which column had a cell filled, outside the receipt.
        let r = gmm_release(text.as_bytes(), &req).unwrap();
        assert_eq!(
            serde_json::to_value(&r.private).unwrap()["filledCells"],
            serde_json::json!([{"feature": first, "cells": 1}]),
            "{what}"
        );
        let b = receipt(text);
        assert_eq!(skeleton(&a), skeleton(&b), "{what}");
        assert!(b["data"].get("rows_used").is_none(), "{what}");
        assert_eq!(b["data"]["rows_dropped"], 0, "{what}");
        assert_eq!(
            b["guarantee"]["unprotected"],
            serde_json::json!([]),
            "{what}"
        );
    }
    // A record without a label belongs to no class, never a class of its own. The receipt
    // cannot tell it from a labelled record: only the owner is told.
    let no_label = with(3, &|l: &str| {
        let (rest, _) = l.rsplit_once(',').unwrap();
        format!("{rest},")
    });
    let r = gmm_release(base.as_bytes(), &req).unwrap();
    let private = serde_json::to_value(&r.private).unwrap();
    assert!(private["filledCells"].is_null() && private["unlabelled"].is_null());
    let r = gmm_release(no_label.as_bytes(), &req).unwrap();
    assert_eq!(serde_json::to_value(&r.private).unwrap()["unlabelled"], 1);
    assert_eq!(r.model.weights.iter().sum::<f64>().round(), 1.0);
    let c = receipt(&no_label);
    assert_eq!(skeleton(&a), skeleton(&c));
    assert_eq!(c["data"]["classes"], a["data"]["classes"]);
    assert!(c["data"].get("rows_used").is_none());
    assert_eq!(c["data"]["rows_dropped"], 0);
    assert_eq!(c["guarantee"]["unprotected"], serde_json::json!([]));
    for field in ["guarantee", "protected", "budget", "warnings"] {
        assert_eq!(c[field], a[field], "{field}");
    }
    // Classes of 6 and 5 rows (the rest of Iris dropped from the input): both release.
    let small = |n_last: usize| {
        let mut out = vec![header.to_string()];
        let mut seen = std::collections::HashMap::new();
        for l in &lines[1..] {
            let class = l.rsplit(',').next().unwrap().to_string();
            let c = seen.entry(class.clone()).or_insert(0usize);
            let cap = if class.contains("virginica") {
                n_last
            } else {
                50
            };
            if *c < cap {
                *c += 1;
                out.push(l.to_string());
            }
        }
        out.join("\n") + "\n"
    };
    let (six, five) = (receipt(&small(6)), receipt(&small(5)));
    assert_eq!(skeleton(&six), skeleton(&five));
    // Six and five virginica rows: neighbours under add/remove, with identical receipts.
    assert_eq!(six, five);
    assert_eq!(five["guarantee"]["unprotected"], serde_json::json!([]));
}

/// Federated (simulation, and a party's contribution file): a missing cell, a missing token
/// or, in a column the schema types numeric, an unparsable cell drops no record, changes no
/// row count and no receipt field's kind; only a record without a label is dropped, and that
/// follows from the labels, public under the federated adjacency. On the code before this
/// change the one-cell neighbours dropped the record (rows_used 599, rows_dropped 1, a
/// different τ_g) and the receipt declared rows_dropped unprotected.
#[test]
fn federated_records_drop_nothing_for_a_missing_cell() {
    use privmix::api::{federated_contribute, federated_keygen, federated_simulate, FedRequest};
    let schema = serde_json::json!({"columns": {
        "x": {"type": "numeric", "min": 0, "max": 16},
        "z": {"type": "numeric", "min": 0, "max": 16},
        "c": {"type": "categorical"}
    }});
    let req: FedRequest = serde_json::from_value(serde_json::json!({
        "label": "y", "epsilon": 4.0, "delta": 1e-5, "clients": 3, "seed": 5.0,
        "schema": schema
    }))
    .unwrap();
    let rows = base_rows();
    let with = |r: usize, c: usize, v: &str| {
        let mut t = rows.clone();
        t[r][c] = v.to_string();
        csv(&t)
    };
    let sim = |text: &str| {
        let (out, receipt) = federated_simulate(text.as_bytes(), &req).unwrap();
        (out, serde_json::to_value(&receipt).unwrap())
    };
    let (out_a, a) = sim(&csv(&rows));
    assert_eq!(a["data"]["rows_used"], 600);
    assert_eq!(a["guarantee"]["unprotected"], serde_json::json!([]));
    for (what, text) in [
        ("empty", with(4, 0, "")),
        ("N/A", with(4, 1, "N/A")),
        ("oops", with(4, 0, "oops")),
        ("categorical empty", with(4, 2, "")),
    ] {
        let (out_b, b) = sim(&text);
        assert_eq!(skeleton(&a), skeleton(&b), "{what}");
        assert_eq!(b["data"]["rows_used"], 600, "{what}");
        assert_eq!(b["data"]["rows_dropped"], 0, "{what}");
        assert_eq!(a["parameters"]["tau_g"], b["parameters"]["tau_g"], "{what}");
        assert_eq!(a["epsilon"], b["epsilon"], "{what}");
        assert_eq!(out_a.lines().count(), out_b.lines().count(), "{what}");
        assert_eq!(
            b["guarantee"]["unprotected"],
            serde_json::json!([]),
            "{what}"
        );
    }
    // A record without a label is dropped; the labels are public, so it is not declared.
    let (_, c) = sim(&with(4, 3, ""));
    assert_eq!(c["data"]["rows_dropped"], 1);
    assert_eq!(c["data"]["class_labels"], a["data"]["class_labels"]);
    assert_eq!(c["guarantee"]["unprotected"], serde_json::json!([]));
    // A contribution file carries the same counts for a one-cell neighbour.
    let (k1, p1) = federated_keygen(1.0).unwrap();
    let (_, p2) = federated_keygen(2.0).unwrap();
    let mut creq = req.clone();
    creq.samples = Some(600);
    let contribution = |text: &str| {
        let (file, _) =
            federated_contribute(text.as_bytes(), &k1, &[p1.clone(), p2.clone()], &creq).unwrap();
        serde_json::from_str::<Value>(&file).unwrap()["accounting"].clone()
    };
    let (fa, fb) = (contribution(&csv(&rows)), contribution(&with(4, 0, "")));
    assert_eq!(fa, fb);
    assert_eq!(fa["missing_encoded"], true);
    assert_eq!(fa["rows_used"], 600);
}
