//! `privmix gmm` and `privmix gmm sample`, end to end: the JSON contract, the model and
//! receipt files, an independent KL computation from the files, sampling, seeds, and one
//! test per bad input (non-zero exit, a message naming the problem, no output left behind).
#![allow(clippy::needless_range_loop)]

mod common;
use common::{json, run, s, shared};

use privmix::mechanisms::gmm::synthetic_paper_data;
use privmix::rng::ReleaseRng;
use std::path::{Path, PathBuf};

/// §V-A-style data (K = 5, d = 3, N = 1000) written at full precision.
/// `gmm --input <csv> --label class --epsilon 1 --delta 1e-5 --bound <bound> <rest> --json`:
/// the release the JSON-contract tests share.
fn gmm_args<'a>(csv: &'a Path, bound: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "gmm",
        "--input",
        s(csv),
        "--label",
        "class",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--bound",
        bound,
        // The classes are public (the test made them; see `paper_csv`).
        "--classes",
        "k0,k1,k2,k3,k4",
    ];
    a.extend_from_slice(rest);
    a.push("--json");
    a
}

fn paper_csv(dir: &Path, seed: u64) -> PathBuf {
    let data = synthetic_paper_data(5, 3, 1000, &mut ReleaseRng::seeded(seed));
    let mut text = String::from("x0,x1,class,x2\n");
    for (r, &c) in data.rows.iter().zip(&data.labels) {
        text.push_str(&format!("{},{},k{c},{}\n", r[0], r[1], r[2]));
    }
    let p = dir.join("data.csv");
    std::fs::write(&p, text).unwrap();
    p
}

/// Reads the CSV back (independently of privmix) as (rows in x0,x1,x2 order, labels).
fn read_back(p: &Path) -> (Vec<[f64; 3]>, Vec<String>) {
    let text = std::fs::read_to_string(p).unwrap();
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        rows.push([
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[3].parse().unwrap(),
        ]);
        labels.push(f[2].to_string());
    }
    (rows, labels)
}

type M3 = [[f64; 3]; 3];

fn det3(m: &M3) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

fn inv3(m: &M3) -> M3 {
    let d = det3(m);
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let (a, b) = ((j + 1) % 3, (j + 2) % 3);
            let (c, e) = ((i + 1) % 3, (i + 2) % 3);
            r[i][j] = (m[a][c] * m[b][e] - m[a][e] * m[b][c]) / d;
        }
    }
    r
}

/// Independent KL(released ‖ eq. 2 fit) for d = 3 via cofactor inverses and determinants.
fn independent_kl(model: &serde_json::Value, rows: &[[f64; 3]], labels: &[String]) -> f64 {
    let classes: Vec<String> = model["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let n = rows.len() as f64;
    let mut total = 0.0;
    for (k, c) in classes.iter().enumerate() {
        let xs: Vec<&[f64; 3]> = rows
            .iter()
            .zip(labels)
            .filter(|(_, l)| *l == c)
            .map(|(r, _)| r)
            .collect();
        let nk = xs.len() as f64;
        let mut mu = [0.0; 3];
        for x in &xs {
            for j in 0..3 {
                mu[j] += x[j] / nk;
            }
        }
        let mut s0 = [[0.0; 3]; 3];
        for x in &xs {
            for i in 0..3 {
                for j in 0..3 {
                    s0[i][j] += (x[i] - mu[i]) * (x[j] - mu[j]) / (nk - 1.0);
                }
            }
        }
        let w1 = model["weights"][k].as_f64().unwrap();
        let m1: Vec<f64> = (0..3)
            .map(|j| model["means"][k][j].as_f64().unwrap())
            .collect();
        let mut s1 = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                s1[i][j] = model["covariances"][k][i][j].as_f64().unwrap();
            }
        }
        let inv0 = inv3(&s0);
        let mut tr = 0.0;
        let mut maha = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                tr += inv0[i][j] * s1[j][i];
                maha += (mu[i] - m1[i]) * inv0[i][j] * (mu[j] - m1[j]);
            }
        }
        let kl = 0.5 * (tr + maha - 3.0 + det3(&s0).ln() - det3(&s1).ln());
        total += w1 * ((w1 / (nk / n)).ln() + kl);
    }
    total
}

#[test]
fn release_json_contract_files_and_independent_kl() {
    let dir = tempfile::tempdir().unwrap();
    let csv = paper_csv(dir.path(), 3);
    let (rows, labels) = read_back(&csv);
    // A bound the test chooses in public (it generated the data): the largest norm, rounded up.
    let bound = rows
        .iter()
        .map(|r| r.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max)
        .ceil()
        .to_string();
    for (adjacency, noise) in [
        ("record", "optimized"),
        ("label", "optimized"),
        ("record", "iid-laplace"),
        ("label", "colored-gaussian"),
    ] {
        let m = dir.path().join("m.json");
        let r = dir.path().join("r.json");
        let o = dir.path().join("o.csv");
        let v = json(&run(&gmm_args(
            &csv,
            &bound,
            &[
                "--noise",
                noise,
                "--adjacency",
                adjacency,
                "--model-out",
                s(&m),
                "--samples",
                "50",
                "--output",
                s(&o),
                "--receipt",
                s(&r),
                "--seed",
                "9",
            ],
        )));
        // The KL is computed from the data without protection: only under `private`.
        assert!(v.get("kl").is_none(), "kl must not be top level: {v}");
        let kl = v["private"]["kl"].as_f64().unwrap();
        assert!(v["epsilon"].as_f64().unwrap() <= 1.0);
        assert_eq!(v["rows"], 50);
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        for key in ["classes", "weights", "means", "covariances"] {
            assert!(model[key].is_array(), "model lacks {key}");
        }
        assert_eq!(model["classes"].as_array().unwrap().len(), 5);
        let want = independent_kl(&model, &rows, &labels);
        assert!(
            (kl - want).abs() <= 1e-6 * want.max(1.0),
            "kl {kl} vs independent {want}"
        );
        let receipt: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
        assert!(receipt["epsilon"].as_f64().unwrap() <= 1.0);
        let warned = receipt["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == "local sensitivity: not a worst-case DP guarantee");
        assert_eq!(warned, adjacency == "label");
        assert!(receipt["randomness"]["source"]
            .as_str()
            .unwrap()
            .contains("seeded, not for release"));
        let out = std::fs::read_to_string(&o).unwrap();
        let mut lines = out.lines();
        assert_eq!(lines.next().unwrap(), "x0,x1,x2,class");
        assert_eq!(lines.count(), 50);
    }
}

#[test]
fn sample_subcommand_and_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let csv = paper_csv(dir.path(), 4);
    let release = |m: &Path, r: &Path| {
        json(&run(&[
            "gmm",
            "--input",
            s(&csv),
            "--label",
            "class",
            "--epsilon",
            "2",
            "--delta",
            "1e-5",
            "--bound",
            "40",
            "--model-out",
            s(m),
            "--receipt",
            s(r),
            "--seed",
            "1",
            "--json",
        ]))
    };
    let (m1, r1, m2, r2) = (
        dir.path().join("m1.json"),
        dir.path().join("r1.json"),
        dir.path().join("m2.json"),
        dir.path().join("r2.json"),
    );
    release(&m1, &r1);
    release(&m2, &r2);
    assert_eq!(std::fs::read(&m1).unwrap(), std::fs::read(&m2).unwrap());
    let o = dir.path().join("s.csv");
    let v = json(&run(&[
        "gmm",
        "sample",
        "--model",
        s(&m1),
        "--samples",
        "200",
        "--output",
        s(&o),
        "--json",
    ]));
    assert_eq!(v["rows"], 200);
    let text = std::fs::read_to_string(&o).unwrap();
    assert_eq!(text.lines().count(), 201);
    let classes = ["k0", "k1", "k2", "k3", "k4"];
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 4);
        assert!(f[..3].iter().all(|x| x.parse::<f64>().unwrap().is_finite()));
        assert!(classes.contains(&f[3]));
    }
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&r1).unwrap()).unwrap();
    assert_eq!(receipt["parameters"]["bound"], 40.0);
}

/// A `gmm` run on a small CSV in a temporary folder: its model, receipt and output paths.
struct GmmCase {
    dir: tempfile::TempDir,
    m: std::path::PathBuf,
    r: std::path::PathBuf,
    o: std::path::PathBuf,
}

impl GmmCase {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (m, r, o) = (
            dir.path().join("m.json"),
            dir.path().join("r.json"),
            dir.path().join("o.csv"),
        );
        GmmCase { dir, m, r, o }
    }

    fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// 20 rows of class `big` and 2 of class `tiny` (fewer than d + 2).
    fn small(&self) -> std::path::PathBuf {
        let mut t = String::from("a,b,y\n");
        for i in 0..20 {
            t.push_str(&format!("{},{},big\n", i, (i * 7) % 5));
        }
        t.push_str("1,2,tiny\n3,1,tiny\n");
        self.write("small.csv", &t)
    }

    /// `gmm` on `input` at ε = 1, δ = 1e-5, label `y`, writing the model and the receipt.
    fn args(&self, input: &Path) -> Vec<String> {
        [
            "gmm",
            "--input",
            s(input),
            "--label",
            "y",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--model-out",
            s(&self.m),
            "--receipt",
            s(&self.r),
        ]
        .iter()
        .map(|x| x.to_string())
        .collect()
    }

    /// The run with `extra` (and `--bound 1000` unless given) fails naming `needle` and
    /// leaves no file behind.
    fn call(&self, input: &Path, extra: &[&str], needle: &str) {
        let mut a = self.args(input);
        if !extra.contains(&"--bound") {
            a.extend(["--bound".to_string(), "1000".to_string()]);
        }
        a.extend(extra.iter().map(|x| x.to_string()));
        let refs: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
        fails(&refs, needle, &[&self.m, &self.r, &self.o]);
    }
}

/// A class too small and a singular covariance where the fit is used, and too many features
/// for N where N is public: named errors, no output. (A class too small or singular for the fit only leaves the
/// default release's KL undefined.)
#[test]
fn bad_data_fails_with_named_errors_and_no_output() {
    let g = GmmCase::new();
    // a class with fewer than d + 2 rows, where the fit is used
    let small = g.small();
    g.call(
        &small,
        &["--noise", "iid-gaussian"],
        "class 'tiny' has 2 row(s)",
    );
    // a singular covariance (second feature constant within a class)
    let mut t = String::from("a,b,y\n");
    for i in 0..20 {
        t.push_str(&format!("{},{},p\n", i, (i * 7) % 5));
        t.push_str(&format!("{},3,q\n", i));
    }
    let flat = g.write("flat.csv", &t);
    // ... refused where the fit is used (a baseline perturbs it, the paper's design inverts
    // it); the default release needs no fit: it releases, and only the owner's KL is undefined.
    g.call(
        &flat,
        &["--noise", "iid-gaussian"],
        "class 'q': its covariance is singular",
    );
    let mut a = g.args(&flat);
    a.extend(["--bound", "1000", "--classes", "p,q"].map(String::from));
    let refs: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    let out = run(&refs);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no KL to the non-private fit") && err.contains("class 'q'"),
        "{err}"
    );
    std::fs::remove_file(&g.m).unwrap();
    std::fs::remove_file(&g.r).unwrap();
    // d too large for N
    let mut t = String::from("a,b,c,d,e,f,y\n");
    for i in 0..6 {
        t.push_str(&format!(
            "{i},{},{},{},{},{},u\n",
            i * i,
            i % 3,
            i + 7,
            i * 3 % 4,
            i % 2
        ));
    }
    let wide = g.write("wide.csv", &t);
    // Where N is public (the baselines' i.i.d. noise): refused on N.
    g.call(
        &wide,
        &["--noise", "iid-gaussian"],
        "too few for 6 features",
    );
    // The default release refuses nothing on N (its adjacency also adds or removes a record,
    // so N is private): here the label read from the data does not clear its DP threshold.
    g.call(&wide, &[], "no class has enough records");
}

/// Bad parameters are named (in the CLI's flags) and leave no output.
#[test]
fn bad_parameters_fail_with_named_errors_and_no_output() {
    let g = GmmCase::new();
    let small = g.small();
    g.call(
        &small,
        &["--noise", "magic"],
        "invalid value 'magic' for '--noise",
    );
    g.call(
        &small,
        &["--adjacency", "row"],
        "invalid value 'row' for '--adjacency",
    );
    g.call(&small, &["--bound", "-2"], "invalid --bound = -2");
    // Record adjacency (the default) without a public bound: refused, naming the flag.
    let mut a = g.args(&small);
    a.extend(["--samples", "5", "--output", s(&g.o)].map(String::from));
    let refs: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    fails(&refs, "invalid --bound = (none)", &[&g.m, &g.r, &g.o]);
    g.call(&small, &["--pca", "3"], "invalid --pca = 3");
    g.call(&small, &["--samples", "10"], "invalid --output");
    g.call(&small, &["--lambda", "1.5"], "invalid --lambda = 1.5");
    let mut a = g.args(&small);
    a[6] = "0".into(); // --epsilon 0
    let refs: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    fails(&refs, "invalid --epsilon = 0", &[&g.m, &g.r]);
    // A receipt path that is a folder is refused before the model file is put in place (it
    // used to fail only when the receipt was renamed, after the model was written).
    let mut t = String::from("a,b,y\n");
    for i in 0..40 {
        t.push_str(&format!(
            "{},{},{}\n",
            i % 9,
            (i * 7) % 5,
            ["u", "v"][i % 2]
        ));
    }
    let two = g.write("two.csv", &t);
    let folder = g.dir.path().join("rdir");
    std::fs::create_dir(&folder).unwrap();
    let mut a = g.args(&two);
    a[12] = s(&folder).to_string();
    a.extend(["--bound", "30", "--classes", "u,v"].map(String::from));
    let refs: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    fails(&refs, "this is a folder; give a file path", &[&g.m]);
    a[12] = s(&g.r).to_string();
    let refs: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    assert!(
        run(&refs).status.success(),
        "the same release with a file receipt"
    );
}

/// `gmm sample` refuses a model that is not positive definite, or not a model, and writes
/// nothing.
#[test]
fn sampling_a_bad_model_fails_and_writes_nothing() {
    let g = GmmCase::new();
    let bad = g.write(
        "bad.json",
        r#"{"classes":["a"],"weights":[1.0],"means":[[0.0,0.0]],"covariances":[[[1.0,2.0],[2.0,1.0]]]}"#,
    );
    fails(
        &[
            "gmm",
            "sample",
            "--model",
            s(&bad),
            "--samples",
            "5",
            "--output",
            s(&g.o),
        ],
        "positive definite",
        &[&g.o],
    );
    let notjson = g.write("x.json", "hello");
    fails(
        &[
            "gmm",
            "sample",
            "--model",
            s(&notjson),
            "--samples",
            "5",
            "--output",
            s(&g.o),
        ],
        "not a GMM model JSON",
        &[&g.o],
    );
}

/// `gmm` on Iris at ε = 2, δ = 1e-5, the public bound 15 and seed 3, writing the model to
/// `m` and the receipt to `r`, plus `extra`.
fn iris_gmm(iris: &Path, m: &Path, r: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "gmm",
        "--input",
        s(iris),
        "--label",
        "species",
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
        "--bound",
        "15",
        "--model-out",
        s(m),
        "--receipt",
        s(r),
        "--seed",
        "3",
        // Iris's species are public (its schema lists them): classes of 50 records.
        "--classes",
        "setosa,versicolor,virginica",
    ]
    .map(String::from)
    .to_vec();
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

#[test]
fn iris_release_with_a_public_bound() {
    let iris = shared("data/iris.csv");
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.json");
    let r = dir.path().join("r.json");
    let call = |m: &Path, r: &Path, extra: &[&str]| {
        let a = iris_gmm(&iris, m, r, extra);
        run(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let v = json(&call(&m, &r, &["--json"]));
    assert!(v.get("kl").is_none());
    assert!(v["private"]["kl"].as_f64().unwrap() > 0.0);
    // The plain output prints the KL only on a line labelled as unprotected, not for release.
    let m2 = dir.path().join("m2.json");
    let r2 = dir.path().join("r2.json");
    let out = call(&m2, &r2, &[]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // "KL to": a random temporary directory name can contain "KL" (it did: /tmp/.tmpKLNOv0).
    let kl_lines: Vec<&str> = err.lines().filter(|l| l.contains("KL to")).collect();
    assert_eq!(kl_lines.len(), 1, "{err}");
    assert!(
        kl_lines[0].contains("without protection, not for release"),
        "{err}"
    );
    assert_eq!(v["classes"], 3);
    assert_eq!(v["features"], 4);
    // with --pca 2: the model is 2-dimensional with its projection; sampling gives the 4 columns
    let o = dir.path().join("o.csv");
    let v = json(&call(
        &m,
        &r,
        &["--pca", "2", "--samples", "30", "--output", s(&o), "--json"],
    ));
    assert_eq!(v["features"], 2);
    let text = std::fs::read_to_string(&o).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "sepal_length,sepal_width,petal_length,petal_width,species"
    );
    assert_eq!(text.lines().count(), 31);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    assert_eq!(
        model["projection"]["components"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn a_text_column_is_reported_to_the_owner_only() {
    // Iris with a text column left in: its cells take the centre (no record is dropped and
    // nothing is refused by the data), and the owner is told, outside the receipt.
    let iris = shared("data/iris.csv");
    let text = std::fs::read_to_string(&iris).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let with_city: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let (rest, label) = l.rsplit_once(',').unwrap();
            let city = if i == 0 { "city" } else { "Rome" };
            format!("{rest},{city},{label}\n")
        })
        .collect();
    let input = dir.path().join("iris_city.csv");
    std::fs::write(&input, with_city).unwrap();
    let (m, r) = (dir.path().join("m.json"), dir.path().join("r.json"));
    let a = iris_gmm(&input, &m, &r, &["--json"]);
    let v = json(&run(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(
        v["private"]["filled_cells"],
        serde_json::json!([{"feature": "city", "cells": 150}])
    );
    let receipt = std::fs::read_to_string(&r).unwrap();
    assert!(!receipt.contains("filled") && !receipt.contains("150 cells"));
    let a = iris_gmm(&input, &m, &r, &[]);
    let out = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("privmix: private:") && l.contains("city (150 cells)")),
        "{err}"
    );
    // Iris itself has no such cells: nothing is said.
    let a = iris_gmm(&iris, &m, &r, &["--json"]);
    let v = json(&run(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(v["private"].get("filled_cells").is_none());
    assert!(v["private"].get("unlabelled").is_none());
    // Two records without a label: in no class, counted in N, told to the owner only.
    let no_label: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            1 | 2 => format!("{},\n", l.rsplit_once(',').unwrap().0),
            _ => format!("{l}\n"),
        })
        .collect();
    let input = dir.path().join("iris_no_label.csv");
    std::fs::write(&input, no_label).unwrap();
    let a = iris_gmm(&input, &m, &r, &["--json"]);
    let v = json(&run(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(v["private"]["unlabelled"], 2);
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
    // N is not public in the default release (its adjacency also adds or removes a record).
    assert!(receipt["data"].get("rows_used").is_none(), "{receipt}");
    assert_eq!(receipt["data"]["rows_dropped"], 0);
    assert_eq!(receipt["guarantee"]["unprotected"], serde_json::json!([]));
    let a = iris_gmm(&input, &m, &r, &[]);
    let out = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("privmix: private: 2 record(s) have no label")),
        "{err}"
    );
    // Every label missing: an error that names the column and the fix (it said "no rows or
    // no features to model"), and no model or receipt is left behind.
    let no_labels: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!("{l}\n"),
            _ => format!("{},\n", l.rsplit_once(',').unwrap().0),
        })
        .collect();
    let input = dir.path().join("iris_no_labels.csv");
    std::fs::write(&input, no_labels).unwrap();
    let (m2, r2) = (
        dir.path().join("none.json"),
        dir.path().join("none.receipt.json"),
    );
    let a = iris_gmm(&input, &m2, &r2, &[]);
    let out = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("label column 'species' is missing in every record (150 read)")
            && err.contains("fill in the labels"),
        "{err}"
    );
    assert!(!m2.exists() && !r2.exists());
}

/// Distance of x/g to the nearest integer.
fn off_grid(x: f64, g: f64) -> f64 {
    let u = x / g;
    (u - u.round()).abs()
}

/// The model file holds only post-processing of released grid multiples (issue 11, exact
/// noise), never μ + fl(σz): with the receipt's `parameters.noise_grids`, the default release's
/// sums Ñ_k·μ̃_k/B (Ñ_k = π̃_k·N) and the Wishart and i.i.d. paths' means μ̃_k/B are integer
/// multiples of their grids, to float round-off (1e-6 grid units; a float Gaussian lands
/// that close with probability 2e-6 per coordinate, 15 coordinates per file).
#[test]
fn model_file_holds_released_grid_multiples() {
    let dir = tempfile::tempdir().unwrap();
    let csv = paper_csv(dir.path(), 4);
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    let bound = 10.0f64;
    let bs = bound.to_string();
    for (noise, cov, grid_name) in [
        ("optimized", "gaussian", "class sums"),
        ("optimized", "wishart", "mean (unit ball)"),
        ("iid-gaussian", "gaussian", "means"),
    ] {
        let m = dir.path().join("m.json");
        let r = dir.path().join("r.json");
        json(&run(&gmm_args(
            &csv,
            &bs,
            &[
                "--noise",
                noise,
                "--covariance-noise",
                cov,
                "--model-out",
                s(&m),
                "--receipt",
                s(&r),
                "--seed",
                "5",
            ],
        )));
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        let receipt: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
        let grids = receipt["parameters"]["noise_grids"].as_array().unwrap();
        assert!(
            grids
                .iter()
                .all(|g| g["noise"].as_str().unwrap().starts_with("discrete ")),
            "{grids:?}"
        );
        // Σ Ñ_k, for the default release's sums (its weights are ratios of released counts;
        // the test knows N).
        let n = || released_total(model["weights"].as_array().unwrap(), rows);
        let classes = model["classes"].as_array().unwrap();
        for (c, mean) in model["means"].as_array().unwrap().iter().enumerate() {
            let class = classes[c].as_str().unwrap();
            let g = grids
                .iter()
                .find(|g| {
                    let w = g["what"].as_str().unwrap();
                    w.contains(grid_name)
                        && (!w.starts_with("class '") || w.starts_with(&format!("class '{class}'")))
                })
                .unwrap_or_else(|| panic!("{noise}/{cov}: no grid '{grid_name}' in {grids:?}"))
                ["grid"]
                .as_f64()
                .unwrap();
            assert!(g > 0.0 && g < 1e-3, "{g}");
            let scale = if grid_name == "class sums" {
                (model["weights"][c].as_f64().unwrap() * n()).round()
            } else {
                1.0
            };
            for x in mean.as_array().unwrap() {
                let x = x.as_f64().unwrap() / bound * scale;
                assert!(
                    off_grid(x, g) < 1e-6,
                    "{noise}/{cov}: class {class}: {x} is not a multiple of {g}"
                );
            }
        }
    }
}

/// Runs `args`, which must fail with `needle` in the message and leave none of `outputs`.
fn fails(args: &[&str], needle: &str, outputs: &[&Path]) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {args:?}");
    assert!(err.contains(needle), "message lacks {needle:?}: {err}");
    for p in outputs {
        assert!(!p.exists(), "{} left behind", p.display());
    }
}

/// `--center` takes one comma-separated value per feature (negatives included): the receipt
/// names it as public information, and the model's means lie near the data's class means (in
/// the input's units, not shifted); a centre of the wrong length fails naming it, leaving
/// no file behind.
#[test]
fn a_public_center_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = paper_csv(dir.path(), 6);
    let (m, r) = (dir.path().join("m.json"), dir.path().join("r.json"));
    let mut args = gmm_args(&csv, "40", &["--center", "-1.5,0,2.25", "--seed", "1"]);
    args.extend_from_slice(&["--model-out", s(&m), "--receipt", s(&r)]);
    // At ε = 20 a class mean's noise is about 0.13 (σ_S·B/N_k), so a tolerance of 1, below
    // the centre's 1.5 and 2.25, sees a mean left shifted. (At ε = 1 it is about 2.5, and the
    // old tolerance of 3 held by the seed's luck.)
    let e = args.iter().position(|a| *a == "--epsilon").unwrap();
    args[e + 1] = "20";
    json(&run(&args));
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
    let public = receipt["guarantee"]["public_information"].to_string();
    assert!(public.contains("center c = [-1.5, 0.0, 2.25]"), "{public}");
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    let (rows, labels) = read_back(&csv);
    let class0 = model["classes"][0].as_str().unwrap().to_string();
    let mine: Vec<&[f64; 3]> = rows
        .iter()
        .zip(&labels)
        .filter(|(_, l)| **l == class0)
        .map(|(x, _)| x)
        .collect();
    for j in 0..3 {
        let data_mean = mine.iter().map(|x| x[j]).sum::<f64>() / mine.len() as f64;
        let released = model["means"][0][j].as_f64().unwrap();
        assert!(
            (released - data_mean).abs() < 1.0,
            "feature {j}: released {released}, data {data_mean}"
        );
    }
    let (m2, r2) = (dir.path().join("m2.json"), dir.path().join("r2.json"));
    let mut bad = gmm_args(&csv, "40", &["--center", "1,2"]);
    bad.extend_from_slice(&["--model-out", s(&m2), "--receipt", s(&r2)]);
    fails(&bad, "center", &[&m2, &r2]);
}

/// `gmm sample` of the saved model `model`: `samples` rows to `out`, seed 4.
fn sample_saved(model: &Path, samples: &str, out: &Path) {
    json(&run(&[
        "gmm",
        "sample",
        "--model",
        s(model),
        "--samples",
        samples,
        "--output",
        s(out),
        "--seed",
        "4",
        "--json",
    ]));
}

/// `--lower`/`--upper` (the demo's public ranges): the model keeps the box, the receipt names
/// it, and the rows sampled by `gmm --samples` and later by `gmm sample` from the saved model
/// all lie inside it (without the box, at ε = 2, many rows do not: negative petal widths).
/// Only one of the two fails naming the other, leaving no file behind.
#[test]
fn a_public_box_keeps_the_sampled_rows_inside_it() {
    let iris = shared("data/iris.csv");
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let (lower, upper) = ([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.5]);
    let outside = |csv: &Path| {
        let text = std::fs::read_to_string(csv).unwrap();
        text.lines()
            .skip(1)
            .filter(|l| {
                let v: Vec<f64> = l.split(',').take(4).map(|x| x.parse().unwrap()).collect();
                (0..4).any(|j| v[j] < lower[j] || v[j] > upper[j])
            })
            .count()
    };
    // Centred on the box's middle with B = 5 bounding the distance from it, as the GMM page
    // sets up a box from a schema. (Uncentred with B = 15, a class's released Gaussian put
    // under 1/10,000 of its mass in the box in 3 to 5 of 20 seeds at ε = 2, which the sampler
    // refuses with a named error; centred: none of 30.)
    let centred = |mut a: Vec<String>| {
        let b = a.iter().position(|x| x == "--bound").unwrap();
        a[b + 1] = "5".into();
        a.extend(["--center", "6,3.25,4,1.25"].map(String::from));
        a
    };
    let box_args = ["--lower", "4,2,1,0", "--upper", "8,4.5,7,2.5"];
    let rows = ["--json", "--samples", "2000", "--output"];
    let mut a = centred(iris_gmm(&iris, &p("m.json"), &p("r.json"), &box_args));
    a.extend(rows.iter().map(|x| x.to_string()));
    a.push(s(&p("o.csv")).to_string());
    json(&run(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(outside(&p("o.csv")), 0);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("m.json")).unwrap()).unwrap();
    assert_eq!(model["support"]["lower"], serde_json::json!(lower));
    let receipt = std::fs::read_to_string(p("r.json")).unwrap();
    assert!(receipt.contains("lower = [4.0, 2.0, 1.0, 0.0], upper = [8.0, 4.5, 7.0, 2.5]"));
    sample_saved(&p("m.json"), "2000", &p("s.csv"));
    assert_eq!(outside(&p("s.csv")), 0);
    let mut free = centred(iris_gmm(&iris, &p("m2.json"), &p("r2.json"), &[]));
    free.extend(rows.iter().map(|x| x.to_string()));
    free.push(s(&p("o2.csv")).to_string());
    json(&run(&free.iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(outside(&p("o2.csv")) > 100, "the box must matter here");
    let half = iris_gmm(&iris, &p("m3.json"), &p("r3.json"), &["--lower", "4,2,1,0"]);
    fails(
        &half.iter().map(String::as_str).collect::<Vec<_>>(),
        "--upper",
        &[&p("m3.json"), &p("r3.json")],
    );
}

/// Σ_k Ñ_k of a release from its weights Ñ_k / Σ_j Ñ_j: the smallest M ≥ N/2 at which every
/// weight times M is an integer (the released counts are noisy, near N here).
fn released_total(weights: &[serde_json::Value], n: usize) -> f64 {
    let w: Vec<f64> = weights.iter().map(|x| x.as_f64().unwrap()).collect();
    (n / 2..=2 * n)
        .map(|m| m as f64)
        .find(|m| w.iter().all(|w| ((w * m) - (w * m).round()).abs() < 1e-6))
        .expect("the weights are ratios of counts summing to near N")
}

/// Labels read from the data (no `--classes`): a class of 3 records among two of 2,000 is left
/// out at ε = 5 (threshold 58), told to the owner only (a "private:" line, or
/// `private.classes_left_out` with `--json`), never in the model or the receipt; listed with
/// `--classes`, it is released and the labels are public.
#[test]
fn a_class_too_small_for_the_labels_threshold_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = String::from("u,v,y\n");
    for i in 0..4000 {
        let (c, m) = if i % 2 == 0 { ("a", -1.0) } else { ("b", 1.0) };
        t.push_str(&format!(
            "{},{},{c}\n",
            m + 0.001 * (i % 97) as f64,
            m - 0.002 * (i % 13) as f64
        ));
    }
    t.push_str("0,0,rare\n0.5,0.1,rare\n0.2,0.3,rare\n");
    let input = dir.path().join("d.csv");
    std::fs::write(&input, t).unwrap();
    let (m, r) = (dir.path().join("m.json"), dir.path().join("r.json"));
    let base = [
        "gmm",
        "--input",
        s(&input),
        "--label",
        "y",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--bound",
        "3",
        "--model-out",
        s(&m),
        "--receipt",
        s(&r),
        "--seed",
        "1",
    ];
    let out = run(&base);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("private: the release leaves out the class(es) rare"),
        "{err}"
    );
    let v = json(&run(&[&base[..], &["--json"]].concat()));
    assert_eq!(
        v["private"]["classes_left_out"],
        serde_json::json!(["rare"])
    );
    assert_eq!(v["classes"], 2);
    let receipt = std::fs::read_to_string(&r).unwrap();
    let model = std::fs::read_to_string(&m).unwrap();
    assert!(!receipt.contains("rare") && !model.contains("rare"));
    assert!(receipt.contains("the set of class labels (read from the data)"));
    let v = json(&run(
        &[&base[..], &["--classes", "a,b,rare", "--json"]].concat()
    ));
    assert_eq!(v["classes"], 3);
    assert!(v["private"]["classes_left_out"].is_null());
    assert!(std::fs::read_to_string(&r)
        .unwrap()
        .contains("listed with the request"));
}

/// `--output` without `--samples` samples as many rows as the released class counts sum to
/// (a DP number; the default release's receipt has no N), and says how many; `--samples`
/// without `--output` is refused naming the missing file, leaving nothing behind.
#[test]
fn output_without_samples_takes_the_released_counts_total() {
    let iris = shared("data/iris.csv");
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let mut a = iris_gmm(&iris, &p("m.json"), &p("r.json"), &["--json", "--output"]);
    a.push(s(&p("o.csv")).to_string());
    let v = json(&run(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    let written = std::fs::read_to_string(p("o.csv")).unwrap().lines().count() - 1;
    assert_eq!(v["rows"].as_u64().unwrap() as usize, written);
    // 150 records, three counts with noise of scale 10 each (ε_counts = 0.2).
    assert!((30..=270).contains(&written), "{written}");
    let receipt = std::fs::read_to_string(p("r.json")).unwrap();
    assert!(!receipt.contains("rows_used"), "{receipt}");
    let mut plain = iris_gmm(&iris, &p("m2.json"), &p("r2.json"), &["--output"]);
    plain.push(s(&p("o2.csv")).to_string());
    let out = run(&plain.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("sampled {written} rows from the released model")),
        "{err}"
    );
    let lone = iris_gmm(&iris, &p("m3.json"), &p("r3.json"), &["--samples", "5"]);
    fails(
        &lone.iter().map(String::as_str).collect::<Vec<_>>(),
        "--samples needs --output",
        &[&p("m3.json"), &p("r3.json")],
    );
}

/// `--pca` with `--marginals` on the 8×8 digits (64 pixel columns in 0..16, 1,797 rows): the
/// DP basis and the DP pixel marginals are in the receipt (nothing unprotected, ε within the
/// target), the model holds both, and every sampled pixel, from `gmm` and later from
/// `gmm sample`, lies in [0, 16]. The background keeps its zeros: the share of exact 0s in the
/// output is within 0.08 of the data's (about half), where the model's Gaussians alone give
/// none.
#[test]
fn dp_pixel_marginals_keep_digits_in_range_with_their_background() {
    let digits = shared("data/digits-8x8.csv");
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let zeros = |csv: &Path| {
        let text = std::fs::read_to_string(csv).unwrap();
        let (mut z, mut all) = (0usize, 0usize);
        for l in text.lines().skip(1) {
            // Every column but the label (the data's first, the output's last) is a pixel.
            let cells: Vec<&str> = l.split(',').collect();
            let pix = if csv == digits.as_path() {
                &cells[1..]
            } else {
                &cells[..cells.len() - 1]
            };
            for c in pix {
                let v: f64 = c.parse().unwrap();
                assert!((0.0..=16.0).contains(&v), "{v} outside [0, 16]");
                z += usize::from(v == 0.0);
                all += 1;
            }
        }
        z as f64 / all as f64
    };
    let lower = vec!["0"; 64].join(",");
    let upper = vec!["16"; 64].join(",");
    let out = json(&run(&[
        "gmm",
        "--input",
        s(&digits),
        "--label",
        "label",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--bound",
        "60",
        "--pca",
        "20",
        "--classes",
        "0,1,2,3,4,5,6,7,8,9",
        "--lower",
        &lower,
        "--upper",
        &upper,
        "--marginals",
        "16",
        "--model-out",
        s(&p("m.json")),
        "--receipt",
        s(&p("r.json")),
        "--output",
        s(&p("o.csv")),
        "--seed",
        "2",
        "--json",
    ]));
    assert!(out["epsilon"].as_f64().unwrap() <= 5.0, "{out}");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("r.json")).unwrap()).unwrap();
    assert_eq!(receipt["guarantee"]["unprotected"], serde_json::json!([]));
    let whats: Vec<&str> = receipt["protected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["what"].as_str().unwrap())
        .collect();
    assert!(whats[0].contains("principal subspace"), "{whats:?}");
    assert!(whats[1].contains("feature marginals"), "{whats:?}");
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("m.json")).unwrap()).unwrap();
    assert_eq!(model["marginals"]["probs"].as_array().unwrap().len(), 64);
    assert_eq!(
        model["projection"]["components"].as_array().unwrap().len(),
        20
    );
    let data_zeros = zeros(&digits);
    let out_zeros = zeros(&p("o.csv"));
    assert!(data_zeros > 0.3, "{data_zeros}");
    assert!(
        (out_zeros - data_zeros).abs() < 0.08,
        "{out_zeros} vs {data_zeros}"
    );
    sample_saved(&p("m.json"), "500", &p("s.csv"));
    let again = zeros(&p("s.csv"));
    assert!((again - data_zeros).abs() < 0.08, "{again} vs {data_zeros}");
}
