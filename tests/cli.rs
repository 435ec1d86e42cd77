//! The CLI contract, end to end: JSON shapes, synthesis on messy input, seeds, and one test
//! per bad input (non-zero exit, a message naming the value, and no output left behind).

mod common;
use common::{iris_at_5, json, run, s, shared};

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_privmix"))
}

/// A messy CSV: BOM, `;` delimiter, CRLF, quoted fields, missing values, a categorical column.
const MESSY: &str = "\u{feff}age;\"city, region\";income;grade\r\n\
34;\"Paris, IDF\";52000.5;A\r\n\
41;Lyon;NA;B\r\n\
29;\"Paris, IDF\";48000;A\r\n\
?;Nice;39000;B\r\n\
52;Lyon;61000.25;A\r\n\
47;Nice;58000;B\r\n\
38;\"Paris, IDF\";45500;A\r\n\
33;Lyon;47000;B\r\n\
45;Nice;53000;A\r\n\
36;Lyon;50500;B\r\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn synth_args<'a>(
    input: &'a str,
    out: &'a str,
    receipt: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut v = vec![
        "synth",
        "--input",
        input,
        "--label",
        "grade",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
    ];
    v.extend_from_slice(extra);
    v.extend_from_slice(&["--output", out, "--receipt", receipt]);
    v
}

#[test]
fn rdp_json_shape() {
    let v = json(&run(&[
        "rdp",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1.0",
        "--orders",
        "2,3,8",
        "--json",
    ]));
    assert_eq!(v["orders"], serde_json::json!([2, 3, 8]));
    let rdp = v["rdp"].as_array().unwrap();
    assert_eq!(rdp.len(), 3);
    assert!(rdp.iter().all(|x| x.as_f64().unwrap() > 0.0));
}

#[test]
fn account_and_calibrate_round_trip_through_the_cli() {
    let c = json(&run(&[
        "calibrate",
        "--mechanism",
        "cda",
        "--pool",
        "6000",
        "--mix",
        "4",
        "--clip",
        "1",
        "--samples",
        "6000",
        "--delta",
        "1e-5",
        "--epsilon",
        "2",
        "--json",
    ]));
    let sx = c["sigma_x"].as_f64().unwrap();
    assert!(c["epsilon"].as_f64().unwrap() <= 2.0);
    let a = json(&run(&[
        "account",
        "--mechanism",
        "cda",
        "--pool",
        "6000",
        "--mix",
        "4",
        "--clip",
        "1",
        "--sigma-x",
        &sx.to_string(),
        "--samples",
        "6000",
        "--delta",
        "1e-5",
        "--json",
    ]));
    let e = a["epsilon"].as_f64().unwrap();
    assert!(e <= 2.0 && e > 1.99, "{e}");
    assert!(a["order"].as_u64().unwrap() >= 2);
    // Paper preset is looser: more ε for the same σ.
    let p = json(&run(&[
        "account",
        "--mechanism",
        "cda",
        "--pool",
        "6000",
        "--mix",
        "4",
        "--clip",
        "1",
        "--sigma-x",
        &sx.to_string(),
        "--samples",
        "6000",
        "--delta",
        "1e-5",
        "--preset",
        "paper",
        "--json",
    ]));
    assert!(p["epsilon"].as_f64().unwrap() > e);
}

#[test]
fn synth_on_messy_csv_with_defaults_keeps_the_promise() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "messy.csv", MESSY);
    let schema = write(
        dir.path(),
        "schema.json",
        r#"{"columns": {"age": {"type": "numeric", "min": 0, "max": 128, "integer": true}, "income": {"type": "numeric", "min": 0, "max": 131072}, "city, region": {"type": "categorical", "categories": ["Paris, IDF", "Lyon", "Nice"]}}}"#,
    );
    let (out, rec) = (dir.path().join("out.csv"), dir.path().join("r.json"));
    let o = run(&[
        "synth",
        "--input",
        s(&input),
        "--label",
        "grade",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--mix",
        "2",
        // 10 records are far too few for DP class counts: the label-keeping adjacency
        // (class sizes public, declared) is an explicit option.
        "--adjacency",
        "keep-label",
        // Issue 12: 10 rows are too few to find a numeric range under DP, which is a loud
        // error (never a silent [0, 1]); the public bounds come from a schema.
        "--schema",
        s(&schema),
        "--output",
        s(&out),
        "--receipt",
        s(&rec),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("dropped"));
    let text = std::fs::read_to_string(&out).unwrap();
    // The input is `;`-delimited: so is the output, its numbers with decimal commas, and the
    // user is told.
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(text.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, vec!["age", "city, region", "income", "grade"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("decimal comma"));
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(
        rows.len(),
        10,
        "no record is dropped for a missing cell: T defaults to the 10 records, 5 per class"
    );
    for r in &rows {
        // An empty cell is a missing value written back; nothing else is non-numeric.
        assert!(r.iter().all(|c| c != "NaN"), "{r:?}");
        assert!(r[3] == *"A" || r[3] == *"B");
        if !r[0].is_empty() {
            // Integral, whatever its magnitude (a DP range can be wide: this run is unseeded).
            let age: f64 = r[0].parse::<f64>().expect("age is a number");
            assert_eq!(age.fract(), 0.0, "age stays an integer column: {}", &r[0]);
        }
        if !r[2].is_empty() {
            assert!(!r[2].contains('.'), "a decimal comma: {}", &r[2]);
            r[2].replace(',', ".").parse::<f64>().unwrap();
        }
    }
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert!(receipt["epsilon"].as_f64().unwrap() <= 5.0);
    assert_eq!(receipt["delta"].as_f64().unwrap(), 1e-5);
    assert_eq!(receipt["normalization"]["mode"], "dp");
    assert_eq!(receipt["normalization"]["protected"], true);
    assert_eq!(receipt["data"]["rows_dropped"], 0);
    assert_eq!(receipt["data"]["rows_used"], 10);
    assert_eq!(receipt["randomness"]["seeded"], false);
    assert!(receipt["accountant"]["rdp"].as_array().unwrap().len() == 255);
    assert!(!receipt["version"].as_str().unwrap().is_empty());
    // Nothing else is left in the folder.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, vec!["messy.csv", "out.csv", "r.json", "schema.json"]);
}

#[test]
fn seeded_runs_reproduce_and_unseeded_runs_differ() {
    let dir = tempfile::tempdir().unwrap();
    let iris = shared("data/iris.csv");
    let go = |name: &str, seed: Option<&str>| -> (String, serde_json::Value) {
        let out = dir.path().join(format!("{name}.csv"));
        let rec = dir.path().join(format!("{name}.json"));
        let mut args = vec![
            "synth",
            "--input",
            s(&iris),
            "--label",
            "species",
            "--epsilon",
            "8",
            "--delta",
            "1e-5",
            "--normalize",
            "data",
            "--output",
            s(&out),
            "--receipt",
            s(&rec),
        ];
        if let Some(sd) = seed {
            args.extend_from_slice(&["--seed", sd]);
        }
        let o = bin().args(&args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            std::fs::read_to_string(&out).unwrap(),
            serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap(),
        )
    };
    let (a, ra) = go("a", Some("42"));
    let (b, _) = go("b", Some("42"));
    let (c, rc) = go("c", None);
    let (d, _) = go("d", None);
    assert_eq!(a, b, "same seed, same output");
    assert_ne!(c, d, "unseeded runs differ");
    assert_ne!(a, c);
    assert_eq!(ra["randomness"]["seeded"], true);
    assert!(ra["randomness"]["source"]
        .as_str()
        .unwrap()
        .contains("seeded, not for release"));
    assert!(ra["warnings"]
        .to_string()
        .contains("seeded, not for release"));
    assert_eq!(rc["randomness"]["seeded"], false);
    // --normalize data is loudly unprotected.
    assert_eq!(ra["normalization"]["protected"], false);
    assert!(ra["guarantee"]["unprotected"]
        .to_string()
        .contains("normalization statistics"));
}

#[test]
fn evaluate_prints_accuracy() {
    let iris = shared("data/iris.csv");
    for model in ["logreg", "tree"] {
        let v = json(&run(&[
            "evaluate",
            "--train",
            s(&iris),
            "--test",
            s(&iris),
            "--label",
            "species",
            "--model",
            model,
            "--json",
        ]));
        assert!(v["accuracy"].as_f64().unwrap() > 0.9, "{model}: {v}");
    }
}

/// `evaluate` scores every row, one with a missing number included, and a test file whose
/// labels the training file does not have fails with the fix instead of reporting 0 (UCI
/// Adult's `adult.test` writes `<=50K.` where `adult.data` writes `<=50K`); a test file with
/// some such labels gets a warning naming them.
#[test]
fn evaluate_keeps_every_row_and_refuses_labels_it_cannot_score() {
    let dir = tempfile::tempdir().unwrap();
    let iris = std::fs::read_to_string(shared("data/iris.csv")).unwrap();
    let write = |name: &str, f: &dyn Fn(usize, &str) -> String| {
        let text: String = iris
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("{l}\n")
                } else {
                    f(i, l) + "\n"
                }
            })
            .collect();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    // Every 5th row loses its first cell.
    let holes = write("holes.csv", &|i, l| {
        if i % 5 == 0 {
            l[l.find(',').unwrap()..].to_string()
        } else {
            l.to_string()
        }
    });
    let dots = write("dots.csv", &|_, l| format!("{l}."));
    let some = write("some.csv", &|i, l| {
        if i <= 50 {
            format!("{l}.")
        } else {
            l.to_string()
        }
    });
    let v = json(&run(&[
        "evaluate",
        "--train",
        s(&holes),
        "--test",
        s(&holes),
        "--label",
        "species",
        "--json",
    ]));
    assert_eq!(
        (v["train_rows"].as_u64(), v["test_rows"].as_u64()),
        (Some(150), Some(150))
    );
    assert!(v["accuracy"].as_f64().unwrap() > 0.9, "{v}");
    let iris_path = shared("data/iris.csv");
    let o = run(&[
        "evaluate",
        "--train",
        s(&iris_path),
        "--test",
        s(&dots),
        "--label",
        "species",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("'setosa.'") && err.contains("remove the trailing '.'"),
        "{err}"
    );
    let o = run(&[
        "evaluate",
        "--train",
        s(&iris_path),
        "--test",
        s(&some),
        "--label",
        "species",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let v = json(&o);
    assert_eq!(v["test_rows_unseen_label"].as_u64(), Some(50), "{v}");
    assert!(
        err.contains("50 of 150 test rows") && err.contains("'setosa.'"),
        "{err}"
    );
    assert!(v["accuracy"].as_f64().unwrap() <= 100.0 / 150.0, "{v}");
}

/// Runs a synth that must fail; checks exit code, that stderr names `needle`, and that the
/// folder holds nothing but `keep`.
fn assert_fails_cleanly(dir: &Path, args: &[&str], needle: &str, keep: &[&str]) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "expected failure for {args:?}");
    assert!(
        err.contains(needle),
        "stderr does not name {needle:?}: {err}"
    );
    assert!(!err.contains("panicked"), "a panic reached the user: {err}");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want, "output or temporary files were left behind");
}

/// Writes `csv` to a fresh folder, runs `synth` with the standard flags plus `extra`, and
/// checks that it fails cleanly naming `needle`.
fn expect_synth_error(csv: &str, extra: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.csv", csv);
    let (out, rec) = (dir.path().join("o.csv"), dir.path().join("r.json"));
    assert_fails_cleanly(
        dir.path(),
        &synth_args(s(&input), s(&out), s(&rec), extra),
        needle,
        &["in.csv"],
    );
}

#[test]
fn bad_input_malformed_csv() {
    expect_synth_error("a,b,grade\n1,2,A\n3,\"4,B\n5,6,A\n", &[], "quote");
    expect_synth_error("a,b,grade\n1,2,A\n3,4,5,B\n", &[], "row 2");
}

#[test]
fn an_output_folder_that_does_not_exist_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.csv", "a,b,grade\n1,2,A\n3,4,B\n");
    let out = dir.path().join("no-such-folder").join("o.csv");
    let rec = dir.path().join("r.json");
    assert_fails_cleanly(
        dir.path(),
        &synth_args(s(&input), s(&out), s(&rec), &["--adjacency", "keep-label"]),
        "no-such-folder' does not exist; create it",
        &["in.csv"],
    );
}

#[test]
fn an_input_that_does_not_exist_and_an_output_that_is_a_folder_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.csv", "a,b,grade\n1,2,A\n3,4,B\n");
    let rec = dir.path().join("r.json");
    let missing = dir.path().join("nope.csv");
    let out = dir.path().join("o.csv");
    assert_fails_cleanly(
        dir.path(),
        &synth_args(s(&missing), s(&out), s(&rec), &[]),
        "--input",
        &["in.csv"],
    );
    let o = run(&synth_args(s(&missing), s(&out), s(&rec), &[]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no file or folder at this path"), "{err}");
    std::fs::create_dir(dir.path().join("outdir")).unwrap();
    let folder = dir.path().join("outdir");
    assert_fails_cleanly(
        dir.path(),
        &synth_args(s(&input), s(&folder), s(&rec), &[]),
        "this is a folder; give a file path",
        &["in.csv", "outdir"],
    );
}

#[test]
fn bad_input_missing_label_column() {
    expect_synth_error("a,b,class\n1,2,A\n3,4,B\n", &[], "'grade'");
}

#[test]
fn bad_input_class_smaller_than_l() {
    expect_synth_error(
        "a,b,grade\n1,2,A\n3,4,A\n5,6,A\n7,8,B\n9,1,B\n",
        &["--mix", "3", "--adjacency", "keep-label"],
        "class 'B' has only 2 rows",
    );
}

#[test]
fn bad_input_epsilon_not_positive() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.csv", MESSY);
    let (out, rec) = (dir.path().join("o.csv"), dir.path().join("r.json"));
    for eps in ["0", "-1"] {
        let mut args = vec![
            "synth",
            "--input",
            s(&input),
            "--label",
            "grade",
            "--epsilon",
            eps,
            "--delta",
            "1e-5",
        ];
        args.extend_from_slice(&["--output", s(&out), "--receipt", s(&rec)]);
        assert_fails_cleanly(dir.path(), &args, &format!("epsilon = {eps}"), &["in.csv"]);
    }
}

#[test]
fn bad_input_delta_outside_unit_interval() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.csv", MESSY);
    let (out, rec) = (dir.path().join("o.csv"), dir.path().join("r.json"));
    for delta in ["0", "1", "1.5", "-0.1"] {
        let args = [
            "synth",
            "--input",
            s(&input),
            "--label",
            "grade",
            "--epsilon",
            "1",
            "--delta",
            delta,
            "--output",
            s(&out),
            "--receipt",
            s(&rec),
        ];
        assert_fails_cleanly(dir.path(), &args, &format!("delta = {delta}"), &["in.csv"]);
    }
}

#[test]
fn bad_input_empty_file() {
    expect_synth_error("", &[], "empty");
}

#[test]
fn bad_input_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.csv");
    let (out, rec) = (dir.path().join("o.csv"), dir.path().join("r.json"));
    assert_fails_cleanly(
        dir.path(),
        &synth_args(s(&missing), s(&out), s(&rec), &[]),
        "nope.csv",
        &[],
    );
}

#[test]
fn nan_or_inf_in_a_numeric_column_is_a_missing_value() {
    // Issue 11 item 2: an unparsable cell is a missing value, never an error or a type flip
    // (an error would itself tell neighbours apart).
    for bad in ["NaN", "inf", "-Infinity", "N/A", "oops"] {
        let dir = tempfile::tempdir().unwrap();
        let csv = format!("a,b,grade\n1,2,A\n3,{bad},B\n5,6,A\n7,8,B\n");
        let input = write(dir.path(), "in.csv", &csv);
        // Public bounds: 4 rows cannot find a range under DP (a loud error, issue 12).
        let schema = write(
            dir.path(),
            "schema.json",
            r#"{"columns": {"a": {"type": "numeric", "min": 0, "max": 8}, "b": {"type": "numeric", "min": 0, "max": 8}}}"#,
        );
        let (out, rec) = (dir.path().join("o.csv"), dir.path().join("r.json"));
        let o = run(&synth_args(
            s(&input),
            s(&out),
            s(&rec),
            &[
                "--mix",
                "1",
                "--adjacency",
                "keep-label",
                "--schema",
                s(&schema),
            ],
        ));
        assert!(
            o.status.success(),
            "{bad}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 5, "{bad}: {text}");
    }
}

#[test]
fn bad_input_samples_below_classes_and_bad_mix() {
    expect_synth_error(
        MESSY,
        &["--mix", "2", "--samples", "1", "--adjacency", "keep-label"],
        "samples = 1",
    );
    expect_synth_error(MESSY, &["--mix", "0"], "mix = 0");
    expect_synth_error(MESSY, &["--mix", "2", "--clip", "-1"], "clip = -1");
}

/// Non-negotiable 2, out loud: every item the receipt declares unprotected is also said on
/// stderr (in `--json` mode too), and a default run, which keeps the whole promise, says none.
#[test]
fn unprotected_items_are_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let iris = shared("data/iris.csv");
    let (out, rec) = (dir.path().join("out.csv"), dir.path().join("r.json"));
    let said = |o: &std::process::Output| -> Vec<String> {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter_map(|l| {
                l.strip_prefix(
                    "privmix: warning: NOT protected by DP (the receipt's guarantee.unprotected): ",
                )
            })
            .map(str::to_string)
            .collect()
    };
    let declared = || -> Vec<String> {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
        r["guarantee"]["unprotected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap().to_string())
            .collect()
    };
    // `command` on Iris at ε = 5, writing `out` and `rec`, with `extra` flags.
    let iris_run = |command: &[&str], extra: &[&str]| {
        let mut a = command.to_vec();
        a.extend_from_slice(&iris_at_5(&iris, &out, &rec));
        a.extend_from_slice(extra);
        run(&a)
    };
    let synth = |extra: &[&str]| iris_run(&["synth"], extra);
    // Defaults: nothing unprotected, nothing said.
    assert!(said(&synth(&[])).is_empty());
    assert!(declared().is_empty());
    // Column types from the data (an explicit option): declared and said, also with --json.
    let lines = said(&synth(&["--column-types", "data", "--json"]));
    assert_eq!(lines, declared());
    assert!(
        lines.len() == 1 && lines[0].contains("column types"),
        "{lines:?}"
    );
    // A federated simulation: its defaults decide the types under DP and declare nothing;
    // with the types from the data, the item is declared and said.
    let fed = |extra: &[&str]| {
        let mut a = vec!["--clients", "2"];
        a.extend_from_slice(extra);
        iris_run(&["federated", "simulate"], &a)
    };
    assert!(said(&fed(&[])).is_empty());
    assert!(declared().is_empty());
    let lines = said(&fed(&["--column-types", "data"]));
    assert_eq!(lines, declared());
    assert!(
        lines.len() == 1 && lines[0].starts_with("column types"),
        "{lines:?}"
    );
    // A schema that types every feature column leaves the data nothing to decide: with the
    // types "from the data" nothing is declared, in synth and federated alike.
    let schema = write(
        dir.path(),
        "schema.json",
        r#"{"columns": {"sepal_length": {"type": "numeric"}, "sepal_width": {"type": "numeric"}, "petal_length": {"type": "numeric"}, "petal_width": {"type": "numeric"}}}"#,
    );
    let typed = ["--column-types", "data", "--schema", s(&schema)];
    assert!(said(&synth(&typed)).is_empty());
    assert!(declared().is_empty());
    assert!(said(&fed(&typed)).is_empty());
    assert!(declared().is_empty());
}

/// A small table with text columns and no schema types: at ε = 5 the type decision gets the
/// larger share 120 rows need to tell text (2.9 % of ε instead of 2 %) and decides both text
/// columns categorical; at ε = 1 no share up to 10 % would do, so the columns are treated as
/// numeric and the run says so on stderr and in the receipt, likeliest text column first.
#[test]
fn a_small_table_gets_the_type_share_it_needs_or_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("small.csv");
    let mut text = String::from("age,sex,city,y\n");
    for i in 0..120 {
        let sex = ["M", "F"][i % 2];
        let city = ["Oslo", "Bergen", "Tromso"][i % 3];
        text.push_str(&format!(
            "{},{sex},{city},{}\n",
            18 + i % 60,
            ["a", "b"][(i / 2) % 2]
        ));
    }
    std::fs::write(&input, text).unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"columns": {"y": {"type": "categorical", "categories": ["a", "b"]}}}"#,
    )
    .unwrap();
    let (out, rec) = (dir.path().join("out.csv"), dir.path().join("r.json"));
    let synth = |epsilon: &str| {
        let o = run(&[
            "synth",
            "--input",
            s(&input),
            "--label",
            "y",
            "--schema",
            s(&schema),
            "--pool-floor",
            "40",
            "--epsilon",
            epsilon,
            "--delta",
            "1e-5",
            "--seed",
            "4",
            "--output",
            s(&out),
            "--receipt",
            s(&rec),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
        let kinds: Vec<String> = r["column_types"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["kind"].as_str().unwrap().to_string())
            .collect();
        (String::from_utf8_lossy(&o.stderr).into_owned(), r, kinds)
    };
    let (err, r, kinds) = synth("5");
    assert_eq!(kinds, ["numeric", "categorical", "categorical", "label"]);
    let z = r["column_types"]["noise_multiplier"].as_f64().unwrap();
    // 2.9 % of ε: α/(2z²ε) with α = 1 + 2 ln(1e5)/5.
    let share = (1.0 + 2.0 * 1e5f64.ln() / 5.0) / (2.0 * z * z * 5.0);
    assert!(share > 0.028 && share < 0.03, "{share}");
    assert!(!err.contains("column types:"), "{err}");
    let (err, r, kinds) = synth("1");
    assert_eq!(kinds, ["numeric", "numeric", "numeric", "label"]);
    let w = r["warnings"][0].as_str().unwrap();
    assert!(w.starts_with("column types: 120 rows are too few"), "{w}");
    assert!(err.contains(&format!("privmix: warning: {w}")), "{err}");
}

/// A `;` input's output is `;`-delimited with decimal commas, but the label and a schema's
/// categorical column keep their cells as they are: a code `250.00` and a label `1.5` are
/// levels, not numbers.
#[test]
fn a_semicolon_input_keeps_its_text_columns_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("x;code;y\n");
    for i in 0..200 {
        let code = ["250.00", "401.9"][i % 2];
        let y = ["0.5", "1.5"][(i / 2) % 2];
        text.push_str(&format!("{},{};{code};{y}\n", i % 10, i % 7));
    }
    let input = write(dir.path(), "in.csv", &text);
    let schema = write(
        dir.path(),
        "schema.json",
        r#"{"columns": {"x": {"type": "numeric", "min": 0, "max": 10, "integer": false}, "code": {"type": "categorical"}}}"#,
    );
    let (out, rec) = (dir.path().join("out.csv"), dir.path().join("r.json"));
    let o = run(&[
        "synth",
        "--input",
        s(&input),
        "--label",
        "y",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--schema",
        s(&schema),
        "--seed",
        "1",
        "--output",
        s(&out),
        "--receipt",
        s(&rec),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = std::fs::read_to_string(&out).unwrap();
    let mut lines = got.lines();
    assert_eq!(lines.next(), Some("x;code;y"));
    let mut commas = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(';').collect();
        assert_eq!(cells.len(), 3, "{line}");
        assert!(["250.00", "401.9"].contains(&cells[1]), "{line}");
        assert!(["0.5", "1.5"].contains(&cells[2]), "{line}");
        assert!(!cells[0].contains('.'), "{line}");
        commas += usize::from(cells[0].contains(','));
        cells[0].replace(',', ".").parse::<f64>().unwrap();
    }
    assert!(commas > 100, "{commas} decimal commas in x");
}
