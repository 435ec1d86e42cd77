//! What the CLI tests share: running the binary, reading its one JSON object, paths as
//! arguments, the shared data beside the checkout, and the check of a clean failure.
//!
//! Each test crate compiles this module for itself and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `privmix` binary built for these tests with `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_privmix"))
        .args(args)
        .output()
        .expect("privmix runs")
}

/// The one JSON object a successful `--json` run prints on stdout (fails the test on a
/// non-zero exit, naming stdout and stderr, or on any other stdout line).
pub fn json(out: &Output) -> serde_json::Value {
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "failed: {s}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one JSON object on stdout, got: {s}"
    );
    serde_json::from_str(lines[0]).expect("valid JSON")
}

/// Asserts a failed run whose stderr contains every one of `needles`.
pub fn fails(out: &Output, needles: &[&str]) {
    assert!(!out.status.success(), "should fail");
    let e = String::from_utf8_lossy(&out.stderr);
    for n in needles {
        assert!(e.contains(n), "stderr lacks '{n}': {e}");
    }
}

/// A file of `../shared` beside the checkout (or of `$PRIVMIX_SHARED`), which must exist.
pub fn shared(rel: &str) -> PathBuf {
    let p = std::env::var("PRIVMIX_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
        .join(rel);
    assert!(p.exists(), "test data {} is required", p.display());
    p
}

/// The arguments an Iris run at ε = 5, δ = 1e-5 shares: the input and its label, the target,
/// and where the output and the receipt go.
pub fn iris_at_5<'a>(iris: &'a Path, out: &'a Path, rec: &'a Path) -> [&'a str; 12] {
    [
        "--input",
        s(iris),
        "--label",
        "species",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--output",
        s(out),
        "--receipt",
        s(rec),
    ]
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
