//! Bad input never panics: 600 damaged CSVs (rows removed, duplicated, cut or emptied; quotes
//! left open; NaN, ±∞, 1e308 and NUL in cells; stray delimiters; a BOM mid-file; a few rows
//! of one class only; CRLF) go through `inspectCsv`, `synthesizeCsv` with every mechanism and
//! random options, `gmmRelease` and `federatedSimulate`. Each call must return: a result, or
//! an error of a user-facing kind (parameter or data), never a panic and never an internal
//! error. The cases come from a fixed seed, so a failure names a case that replays.

use privmix::api::{self, SynthRequest};
use privmix::error::{Error, ErrorKind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};

const CASES: u64 = 600;

/// `base` with up to seven random damages.
fn damage(base: &str, r: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<String> = base.lines().map(str::to_string).collect();
    for _ in 0..r.gen_range(0..8) {
        if lines.is_empty() {
            break;
        }
        let i = r.gen_range(0..lines.len());
        match r.gen_range(0..14) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => lines[i].push(','),
            3 => lines[i] = lines[i].replacen(',', ",\"", 1),
            4 => lines[i] = lines[i].replacen(char::is_numeric, "NaN", 1),
            5 => lines[i] = lines[i].replacen(char::is_numeric, "1e308", 1),
            6 => lines[i] = lines[i].replacen(char::is_numeric, "-inf", 1),
            7 => lines[i] = lines[i].replacen(',', ",,", 1),
            8 => lines[i].clear(),
            9 => lines[i] = lines[i].replacen(char::is_alphabetic, "", 1),
            10 => lines.truncate(r.gen_range(0..lines.len())),
            11 => lines[i] = lines[i].replacen(char::is_numeric, "\u{0}", 1),
            12 => lines[i].push('\u{feff}'),
            _ => {
                let keep = r.gen_range(1..6);
                lines = lines.iter().take(1 + keep).cloned().collect();
            }
        }
    }
    let mut s = lines.join(if r.gen_bool(0.2) { "\r\n" } else { "\n" });
    if r.gen_bool(0.5) {
        s.push('\n');
    }
    s
}

/// What one case returned: Ok, or the error (a panic fails the test before this).
fn run_case(csv: &str, label: &str, r: &mut ChaCha8Rng) -> (String, Result<(), Error>) {
    let epsilon = [0.5, 1.0, 5.0, 50.0, 1e-3][r.gen_range(0..5)];
    let op = r.gen_range(0..4);
    let mut req = serde_json::json!({ "label": label, "epsilon": epsilon, "seed": 1 });
    let out = match op {
        0 | 1 => {
            req["mechanism"] = ["cda", "dpmix", "local", "projection"][r.gen_range(0..4)].into();
            if r.gen_bool(0.3) {
                req["mix"] = r.gen_range(1..40).into();
            }
            if r.gen_bool(0.2) {
                req["samples"] = r.gen_range(0..50).into();
            }
            if r.gen_bool(0.2) {
                req["adjacency"] = "keep-label".into();
            }
            if r.gen_bool(0.15) {
                req["normalize"] = "data".into();
            }
            if r.gen_bool(0.1) {
                req["columnTypes"] = "data".into();
            }
            let q: SynthRequest = serde_json::from_value(req.clone()).expect("a valid request");
            api::inspect_csv(csv.as_bytes(), 100)
                .and_then(|_| api::synthesize_csv(csv.as_bytes(), &q, |_| Ok(())))
                .map(|_| ())
        }
        2 => {
            req["bound"] = [1.0, 10.0, 1e4][r.gen_range(0..3)].into();
            let q: api::gmm::GmmRequest = serde_json::from_value(req.clone()).expect("valid");
            api::gmm::gmm_release(csv.as_bytes(), &q).map(|_| ())
        }
        _ => {
            req["clients"] = r.gen_range(1..6).into();
            let q: api::federated::FedRequest = serde_json::from_value(req.clone()).expect("valid");
            api::federated::federated_simulate(csv.as_bytes(), &q).map(|_| ())
        }
    };
    (req.to_string(), out)
}

#[test]
fn damaged_csvs_get_errors_not_panics() {
    let root = env!("CARGO_MANIFEST_DIR");
    let iris = std::fs::read_to_string(format!("{root}/demo/iris.csv")).unwrap();
    let digits: String = std::fs::read_to_string(format!("{root}/demo/digits-8x8.csv"))
        .unwrap()
        .lines()
        .take(300)
        .collect::<Vec<_>>()
        .join("\n");
    let messy = "age;\"city, region\";income;grade\n34;\"Paris, IDF\";52000.5;A\n41;Lyon;NA;B\n\
                 29;\"Paris, IDF\";48000;A\n?;Nice;39000;B\n52;Lyon;61000.25;A\n47;Nice;58000;B\n\
                 38;\"Paris, IDF\";45500;A\n33;Lyon;47000;B\n45;Nice;53000;A\n36;Lyon;50500;B\n"
        .repeat(4);
    let bases = [
        (iris.as_str(), "species"),
        (digits.as_str(), "label"),
        (messy.as_str(), "grade"),
    ];
    let (mut ok, mut errors) = (0, 0);
    for case in 0..CASES {
        let mut r = ChaCha8Rng::seed_from_u64(case);
        let (base, label) = bases[r.gen_range(0..bases.len())];
        let csv = damage(base, &mut r);
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(&csv, label, &mut r)));
        let (req, out) = outcome.unwrap_or_else(|_| {
            panic!("case {case} panicked; its CSV:\n{csv}");
        });
        match out {
            Ok(()) => ok += 1,
            Err(e) => {
                assert!(
                    matches!(e.kind(), ErrorKind::Parameter | ErrorKind::Data),
                    "case {case} ({req}): an internal error reached the user: {e}"
                );
                assert!(!e.to_string().is_empty(), "case {case}: an empty message");
                errors += 1;
            }
        }
    }
    // The damages must leave some inputs usable, or the test exercises only the reader.
    assert!(ok >= CASES / 10, "only {ok} of {CASES} cases ran through");
    eprintln!("{ok} cases synthesized, {errors} refused with a message");
}

/// Extreme option values (each the edge of its type or far past any sensible value) get a
/// result or a user-facing error through the API, never a panic, an internal error or an
/// allocation the machine cannot make: in wasm32 `samples: 1e12` and `clients: 1e9` were
/// panics ("capacity overflow").
#[test]
fn extreme_options_get_errors_not_panics() {
    let root = env!("CARGO_MANIFEST_DIR");
    let iris = std::fs::read_to_string(format!("{root}/demo/iris.csv")).unwrap();
    let synth = [
        r#"{"samples":1000000000000}"#,
        r#"{"samples":2147483648}"#,
        r#"{"samples":0}"#,
        r#"{"mix":4294967295}"#,
        r#"{"epsilon":1e-300}"#,
        r#"{"epsilon":1e300}"#,
        r#"{"delta":1e-300}"#,
        r#"{"clip":1e-300}"#,
        r#"{"clip":1e300}"#,
        r#"{"sigmaX":1e-300}"#,
        r#"{"sigmaX":1e300}"#,
        r#"{"normalizeShare":1e-300}"#,
        r#"{"poolFloor":1000000000000}"#,
        r#"{"mechanism":"projection","projectionDim":4294967295}"#,
        r#"{"mechanism":"dpmix","mix":1000000}"#,
        // Schema bounds whose span overflowed (a panic in decoding), and the widest allowed.
        r#"{"schema":{"columns":{"sepal_length":{"type":"numeric","min":-1e308,"max":1e308}}}}"#,
        r#"{"schema":{"columns":{"sepal_length":{"type":"numeric","min":-3.4028234663852886e38,"max":3.4028234663852886e38},"sepal_width":{"type":"numeric","min":3.4028234663852886e38,"max":3.4028234663852886e38,"integer":true}}}}"#,
        r#"{"mechanism":"local","samples":1000000000000}"#,
    ];
    let fed = [
        r#"{"clients":1000000000}"#,
        r#"{"clients":2,"samples":1000000000000}"#,
        r#"{"clients":2,"pool":1000000000000}"#,
        r#"{"clients":2,"mix":4294967295}"#,
    ];
    let gmm = [
        r#"{"bound":1e300,"samples":1000000000000}"#,
        r#"{"bound":1e-300}"#,
        // Within the row limit, beyond the memory (was a wasm panic, "capacity overflow").
        r#"{"bound":15,"samples":2147483648}"#,
        // Public boxes for the samples: the widest finite one, one no class reaches, and
        // intervals of width zero.
        r#"{"bound":15,"samples":100,"lower":[-1e308,-1e308,-1e308,-1e308],"upper":[1e308,1e308,1e308,1e308]}"#,
        r#"{"bound":15,"samples":100,"lower":[0,0,0,0],"upper":[1e-300,1e-300,1e-300,1e-300]}"#,
        r#"{"bound":15,"samples":10,"lower":[1,1,1,1],"upper":[1,1,1,1]}"#,
    ];
    let with = |extra: &str| {
        let mut v: serde_json::Value =
            serde_json::json!({ "label": "species", "epsilon": 5, "seed": 1 });
        let e: serde_json::Value = serde_json::from_str(extra).unwrap();
        for (k, x) in e.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    // A result, or an error of a user-facing kind; a panic fails with the call's name.
    let check = |what: String, call: &dyn Fn() -> Result<(), Error>| {
        let out =
            catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|_| panic!("{what} panicked"));
        if let Err(e) = out {
            assert!(
                matches!(e.kind(), ErrorKind::Parameter | ErrorKind::Data),
                "{what}: an internal error reached the user: {e}"
            );
        }
    };
    let csv = iris.as_bytes();
    for extra in synth {
        let q: SynthRequest = serde_json::from_value(with(extra)).expect(extra);
        check(format!("synthesizeCsv {extra}"), &|| {
            api::synthesize_csv(csv, &q, |_| Ok(())).map(|_| ())
        });
    }
    for extra in fed {
        let q: api::federated::FedRequest = serde_json::from_value(with(extra)).expect(extra);
        check(format!("federatedSimulate {extra}"), &|| {
            api::federated::federated_simulate(csv, &q).map(|_| ())
        });
    }
    for extra in gmm {
        let q: api::gmm::GmmRequest = serde_json::from_value(with(extra)).expect(extra);
        check(format!("gmmRelease {extra}"), &|| {
            api::gmm::gmm_release(csv, &q).map(|_| ())
        });
    }
}
