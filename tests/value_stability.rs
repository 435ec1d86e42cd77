//! Value stability: seeded outputs pinned byte for byte.
//!
//! Every case runs the `privmix` binary (or the library's JS-facing operations) with a fixed
//! seed and compares stdout (`--json`), the output file and the receipt with the files in
//! `tests/fixtures/value_stability/`. Those fixtures were written by the code *before* the
//! application-layer refactor (issue 14), so a refactor that changes a number, a key or a
//! byte of a seeded output fails here. Temporary paths are replaced by `$TMP` and the
//! receipt's `build_id` (the git commit) by `<build>`, since both differ between runs.
//!
//! To re-pin after a deliberate change, run with `PRIVMIX_BLESS=1` and say why in the commit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/value_stability")
}

/// Replaces run-dependent text: the temporary directory and the build id.
fn normalize(text: &str, tmp: &Path) -> String {
    let t = text.replace(tmp.to_str().unwrap(), "$TMP");
    let mut out = String::with_capacity(t.len());
    let mut rest = t.as_str();
    while let Some(i) = rest.find("\"build_id\":") {
        let after = i + "\"build_id\":".len();
        let Some(q) = rest[after..].find('"') else {
            break;
        };
        let start = after + q + 1;
        out.push_str(&rest[..start]);
        let end = rest[start..].find('"').map_or(rest.len(), |j| start + j);
        out.push_str("<build>");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Compares `actual` with the fixture `name` (or writes it under `PRIVMIX_BLESS=1`).
fn check(name: &str, actual: &str) {
    let path = fixtures().join(name);
    if std::env::var_os("PRIVMIX_BLESS").is_some() {
        std::fs::create_dir_all(fixtures()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fixture {} is missing ({e})", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} changed (first differing line {}):\nexpected: {}\nactual:   {}",
            line + 1,
            expected.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>")
        );
    }
}

/// Runs the CLI with `args` (`{tmp}` stands for the temporary directory, `{root}` for the
/// crate root) and pins stdout and the listed files.
fn cli_case(name: &str, args: &[&str], files: &[&str]) {
    cli_case_with(name, args, files, |_| ());
}

/// [`cli_case`] after `setup` has written its inputs into the run's temporary directory.
fn cli_case_with(name: &str, args: &[&str], files: &[&str], setup: impl FnOnce(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    setup(tmp);
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("{tmp}", tmp.to_str().unwrap())
                .replace("{root}", root().to_str().unwrap())
        })
        .collect();
    // PRIVMIX_BIN: run another build (the fixtures were written by the pre-refactor binary).
    let bin = std::env::var("PRIVMIX_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_privmix").into());
    let out = Command::new(bin)
        .args(&args)
        .output()
        .expect("privmix runs");
    assert!(
        out.status.success(),
        "{name}: privmix {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    check(
        &format!("{name}.stdout"),
        &normalize(&stdout, tmp).replace(root().to_str().unwrap(), "$ROOT"),
    );
    for f in files {
        let text = std::fs::read_to_string(tmp.join(f)).unwrap();
        check(&format!("{name}.{f}"), &normalize(&text, tmp));
    }
}

const RDP: &[&str] = &[
    "rdp",
    "--sampling-rate",
    "0.01",
    "--noise-multiplier",
    "1.1",
    "--orders",
    "2..12,16,32",
    "--json",
];

/// The `account` and `calibrate` cases pinned by [`accountant_json`] (each with the same
/// pool, T, δ and `--json`).
const ACCOUNTANT_CASES: &[(&str, &[&str])] = &[
    ("account_cda", &["account", "--mix", "4", "--sigma-x", "2"]),
    (
        "account_cda_paper",
        &[
            "account",
            "--mix",
            "3",
            "--sigma-x",
            "1.5",
            "--sigma-y",
            "2",
            "--preset",
            "paper",
        ],
    ),
    (
        "account_dpmix",
        &[
            "account",
            "--mechanism",
            "dpmix",
            "--mix",
            "4",
            "--dim-x",
            "10",
            "--dim-y",
            "3",
            "--sigma-x",
            "2",
            "--sigma-y",
            "2",
        ],
    ),
    (
        "account_local",
        &["account", "--mechanism", "local", "--sigma-x", "3"],
    ),
    (
        "account_projection",
        &[
            "account",
            "--mechanism",
            "projection",
            "--sigma-x",
            "3",
            "--clip",
            "2",
        ],
    ),
    (
        "calibrate_cda",
        &["calibrate", "--mix", "4", "--epsilon", "1"],
    ),
    (
        "calibrate_cda_paper",
        &[
            "calibrate",
            "--mix",
            "4",
            "--epsilon",
            "2",
            "--sigma-y",
            "3",
            "--orders",
            "2..64",
        ],
    ),
    (
        "calibrate_dpmix",
        &[
            "calibrate",
            "--mechanism",
            "dpmix",
            "--mix",
            "4",
            "--dim-x",
            "10",
            "--dim-y",
            "3",
            "--epsilon",
            "1",
        ],
    ),
    (
        "calibrate_local",
        &["calibrate", "--mechanism", "local", "--epsilon", "4"],
    ),
];

#[test]
fn accountant_json() {
    cli_case("rdp", RDP, &[]);
    let base = [
        "--pool",
        "10000",
        "--samples",
        "5000",
        "--delta",
        "1e-5",
        "--json",
    ];
    for (name, args) in ACCOUNTANT_CASES {
        let mut a: Vec<&str> = args.to_vec();
        a.extend_from_slice(&base);
        cli_case(name, &a, &[]);
    }
}

fn synth_case(name: &str, input: &str, label: &str, extra: &[&str]) {
    let mut a = vec![
        "synth",
        "--input",
        input,
        "--label",
        label,
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
        // Iris at ε = 2 without a schema releases no class on some seeds (a known small-data
        // limit; 5 of seeds 1–12 since the counts' noise moved to the 2^30 grid): 3 does.
        "--seed",
        "3",
        "--output",
        "{tmp}/out.csv",
        "--receipt",
        "{tmp}/receipt.json",
        "--json",
    ];
    a.extend_from_slice(extra);
    cli_case(name, &a, &["out.csv", "receipt.json"]);
}

#[test]
fn synth_iris() {
    let iris = "{root}/demo/iris.csv";
    synth_case("synth_iris_cda", iris, "species", &[]);
    synth_case(
        "synth_iris_cda_paper",
        iris,
        "species",
        &["--sigma-y", "6", "--mix", "3", "--samples", "90"],
    );
    synth_case(
        "synth_iris_dpmix",
        iris,
        "species",
        &["--mechanism", "dpmix"],
    );
    synth_case(
        "synth_iris_dpmix_soft",
        iris,
        "species",
        &["--mechanism", "dpmix", "--labels", "soft"],
    );
    synth_case(
        "synth_iris_dpmix_classwise",
        iris,
        "species",
        &["--mechanism", "dpmix", "--class-wise"],
    );
    synth_case(
        "synth_iris_local",
        iris,
        "species",
        &["--mechanism", "local"],
    );
    synth_case(
        "synth_iris_projection",
        iris,
        "species",
        &["--mechanism", "projection"],
    );
}

/// The GMM route of `synth` on a table wide enough for the tridiagonal eigensolver (more
/// than 64 features): the DP basis, the exact class statistics, the blocked draws and the
/// histogram maps. The input is generated here (2,400 rows of 100 pixel-like integer columns
/// in 3 classes, from a fixed linear congruential sequence); the fixtures were written by
/// bb88f65's build (`PRIVMIX_BIN`), before those steps were rewritten for speed.
#[test]
fn synth_wide_gmm() {
    cli_case_with(
        "synth_wide_gmm",
        &[
            "synth",
            "--input",
            "{tmp}/wide.csv",
            "--label",
            "label",
            "--mechanism",
            "gmm",
            "--epsilon",
            "5",
            "--delta",
            "1e-5",
            "--seed",
            "3",
            "--samples",
            "120",
            "--output",
            "{tmp}/out.csv",
            "--receipt",
            "{tmp}/receipt.json",
            "--json",
        ],
        &["out.csv", "receipt.json"],
        |tmp| {
            let d = 100;
            let mut state: u64 = 12345;
            let mut next = || {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) as u32
            };
            let mut csv: String = (0..d).map(|j| format!("px{j},")).collect();
            csv.push_str("label\n");
            for i in 0..2400 {
                let class = i % 3;
                for j in 0..d {
                    // A class-dependent bar over a noisy background, clipped to 0..=255.
                    let bar = if (j / 10) % 3 == class { 150 } else { 20 };
                    let v = (bar + (next() % 80) as i64 - 40).clamp(0, 255);
                    csv.push_str(&format!("{v},"));
                }
                csv.push_str(["a", "b", "c"][class]);
                csv.push('\n');
            }
            std::fs::write(tmp.join("wide.csv"), csv).unwrap();
        },
    );
}

#[test]
fn synth_digits() {
    let digits = "{root}/demo/digits-8x8.csv";
    synth_case(
        "synth_digits_cda_public",
        digits,
        "label",
        &[
            "--normalize",
            "public",
            "--schema",
            "{root}/demo/digits-8x8.schema.json",
            "--samples",
            "400",
        ],
    );
    synth_case(
        "synth_digits_dpmix",
        digits,
        "label",
        &["--mechanism", "dpmix", "--samples", "300"],
    );
    synth_case(
        "synth_digits_local",
        digits,
        "label",
        &["--mechanism", "local", "--samples", "300"],
    );
    synth_case(
        "synth_digits_projection",
        digits,
        "label",
        &[
            "--mechanism",
            "projection",
            "--projection-dim",
            "12",
            "--samples",
            "300",
        ],
    );
}

#[test]
fn gmm_release_and_sample() {
    cli_case(
        "gmm_iris",
        &[
            "gmm",
            "--input",
            "{root}/demo/iris.csv",
            "--label",
            "species",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--bound",
            "12",
            "--classes",
            "setosa,versicolor,virginica",
            "--model-out",
            "{tmp}/model.json",
            "--samples",
            "40",
            "--output",
            "{tmp}/out.csv",
            "--receipt",
            "{tmp}/receipt.json",
            "--seed",
            "3",
            "--json",
        ],
        &["model.json", "out.csv", "receipt.json"],
    );
}

#[test]
fn federated_simulate() {
    for variant in ["cape", "conventional"] {
        cli_case(
            &format!("federated_simulate_{variant}"),
            &[
                "federated",
                "simulate",
                "--variant",
                variant,
                "--clients",
                "3",
                "--input",
                "{root}/demo/iris.csv",
                "--label",
                "species",
                "--epsilon",
                "5",
                "--delta",
                "1e-5",
                "--samples",
                "60",
                "--output",
                "{tmp}/out.csv",
                "--receipt",
                "{tmp}/receipt.json",
                "--seed",
                "5",
                "--json",
            ],
            &["out.csv", "receipt.json"],
        );
    }
}

/// The JS-facing operations (what `synthesizeCsv`, `account`, `calibrate`, `noisePreview`
/// return), serialized as the bindings serialize them.
#[test]
fn js_operations() {
    use privmix::api as ops;
    let json = |v: serde_json::Value| format!("{v}\n");
    let req: ops::MechanismRequest =
        serde_json::from_str(r#"{"pool":1000,"mix":4,"sigmaX":2,"samples":5000,"delta":1e-5}"#)
            .unwrap();
    check(
        "js_account.json",
        &json(serde_json::to_value(ops::account(&req).unwrap()).unwrap()),
    );
    let req: ops::MechanismRequest = serde_json::from_str(
        r#"{"pool":1000,"mix":4,"epsilon":1,"samples":5000,"delta":1e-5,"sigmaY":3}"#,
    )
    .unwrap();
    check(
        "js_calibrate.json",
        &json(serde_json::to_value(ops::calibrate(&req).unwrap()).unwrap()),
    );
    let req: ops::PreviewRequest = serde_json::from_str(
        r#"{"classSizes":[50,50,50],"epsilon":2,"delta":1e-5,"features":4,"mix":"auto"}"#,
    )
    .unwrap();
    check(
        "js_preview.json",
        &json(serde_json::to_value(ops::preview(&req).unwrap()).unwrap()),
    );
    let iris = std::fs::read(root().join("demo/iris.csv")).unwrap();
    let req: ops::SynthRequest = serde_json::from_str(
        r#"{"label":"species","epsilon":2,"seed":11,"mix":"auto","adjacency":"keep-label"}"#,
    )
    .unwrap();
    let (csv, receipt) = ops::synthesize_csv(&iris, &req, |_| Ok(())).unwrap();
    let tmp = Path::new("/nonexistent-tmp");
    check("js_synth_iris.csv", &String::from_utf8(csv).unwrap());
    check(
        "js_synth_iris.receipt.json",
        &normalize(&receipt.to_json(), tmp),
    );
}

/// The real multi-party protocol through the library (what `federatedKeygen`,
/// `federatedContribute` and `federatedAggregate` return): seeded keys, three parties holding
/// every third row of Iris, seeded CAPE contributions, and their aggregate.
#[test]
fn federated_contribute_aggregate() {
    use privmix::api as ops;
    use privmix::rng::ReleaseRng;
    let iris = std::fs::read_to_string(root().join("demo/iris.csv")).unwrap();
    let mut lines = iris.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let keys: Vec<(String, String)> = (1..=3u32)
        .map(|p| {
            privmix::pipelines::federated::keygen(p, &mut ReleaseRng::seeded(40 + u64::from(p)))
        })
        .collect();
    let mut contributions = Vec::new();
    for (i, (secret, _)) in keys.iter().enumerate() {
        let mut part = format!("{header}\n");
        for r in rows.iter().skip(i).step_by(3) {
            part.push_str(r);
            part.push('\n');
        }
        let peers: Vec<String> = keys
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (_, public))| public.clone())
            .collect();
        let req: ops::FedRequest = serde_json::from_str(&format!(
            r#"{{"label":"species","epsilon":5,"mix":2,"samples":60,"seed":{}}}"#,
            7 + i
        ))
        .unwrap();
        let (c, _) = ops::federated_contribute(part.as_bytes(), secret, &peers, &req).unwrap();
        check(
            &format!("federated_contribution_{}.json", i + 1),
            &format!("{c}\n"),
        );
        contributions.push(c);
    }
    let (csv, receipt) = ops::federated_aggregate(&contributions).unwrap();
    check("federated_aggregate.csv", &csv);
    check(
        "federated_aggregate.receipt.json",
        &normalize(&receipt.to_json(), Path::new("/nonexistent-tmp")),
    );
}
