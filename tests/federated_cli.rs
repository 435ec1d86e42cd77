//! `privmix federated`: simulate, and the three-party keygen → contribute → aggregate run with
//! no schema, plus the rejections (tampered, mismatched, duplicated, reused key) and the report
//! of a missing party.

mod common;
use common::{fails, iris_at_5, json as ok, run, s, shared};

use std::path::{Path, PathBuf};
use std::process::Output;

/// Splits iris into three party files (rows dealt round-robin) and returns the header.
fn split_iris(dir: &Path) -> (String, Vec<PathBuf>) {
    let text = std::fs::read_to_string(shared("data/iris.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().trim_end().to_string();
    let rows: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let paths: Vec<PathBuf> = (0..3)
        .map(|i| {
            let mut body = header.clone() + "\n";
            for r in rows.iter().skip(i).step_by(3) {
                body.push_str(r.trim_end());
                body.push('\n');
            }
            let p = dir.join(format!("part{}.csv", i + 1));
            std::fs::write(&p, body).unwrap();
            p
        })
        .collect();
    (header, paths)
}

struct Fed {
    dir: tempfile::TempDir,
    parts: Vec<PathBuf>,
    header: String,
}

fn keys(f: &Fed) {
    for i in 1..=3 {
        let k = f.dir.path().join(format!("k{i}"));
        let j = ok(&run(&[
            "federated",
            "keygen",
            "--party",
            &i.to_string(),
            "--out",
            s(&k),
            "--json",
        ]));
        assert_eq!(j["party"], i);
        assert!(f.dir.path().join(format!("k{i}.pub")).exists());
    }
}

fn contribute(f: &Fed, i: usize, extra: &[&str]) -> Output {
    let d = f.dir.path();
    let peers: Vec<String> = (1..=3)
        .filter(|&p| p != i)
        .map(|p| d.join(format!("k{p}.pub")).display().to_string())
        .collect();
    let key = d.join(format!("k{i}"));
    let out = d.join(format!("c{i}.json"));
    let part = &f.parts[i - 1];
    let mut args = vec![
        "federated",
        "contribute",
        "--party",
        &*Box::leak(i.to_string().into_boxed_str()),
        "--key",
        s(&key),
        "--peers",
        &*Box::leak(peers.join(",").into_boxed_str()),
        "--input",
        s(part),
        "--label",
        "species",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--mix",
        "2",
        "--samples",
        "60",
        "--output",
        s(&out),
        "--json",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn setup() -> Fed {
    let dir = tempfile::tempdir().unwrap();
    let (header, parts) = split_iris(dir.path());
    let f = Fed { dir, parts, header };
    keys(&f);
    f
}

fn aggregate(f: &Fed, which: &[usize], extra: &[&str]) -> (Output, PathBuf, PathBuf) {
    let d = f.dir.path();
    let inputs: Vec<String> = which
        .iter()
        .map(|i| d.join(format!("c{i}.json")).display().to_string())
        .collect();
    let out = d.join("out.csv");
    let rec = d.join("receipt.json");
    let mut args = vec![
        "federated".to_string(),
        "aggregate".into(),
        "--inputs".into(),
        inputs.join(","),
        "--output".into(),
        out.display().to_string(),
        "--receipt".into(),
        rec.display().to_string(),
        "--json".into(),
    ];
    args.extend(extra.iter().map(|x| x.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    (run(&a), out, rec)
}

#[test]
fn three_parties_without_schema_make_a_well_formed_csv() {
    let f = setup();
    // Without a schema each party decides its column types under DP: nothing is declared
    // or said. (With `--column-types data`, see `unprotected_items_are_said_on_stderr` in
    // tests/cli.rs.)
    let unprotected = |o: &Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| {
                l.starts_with("privmix: warning: NOT protected by DP") && l.contains("column types")
            })
            .count()
    };
    for i in 1..=3 {
        let o = contribute(&f, i, &[]);
        assert_eq!(unprotected(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        // A party of 50 rows is too small for its type decision to tell a text column at
        // ε = 5: it is told so (its file carries the warning to the aggregate receipt, which
        // names the parties; see below).
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("privmix: warning: column types: 50 rows are too few"),
            "{err}"
        );
        let j = ok(&o);
        assert_eq!(j["rows"], 60);
        assert!(j["tau_e"].as_f64().unwrap() > 0.0);
    }
    let (o, out, rec) = aggregate(&f, &[1, 2, 3], &[]);
    assert_eq!(unprotected(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let j = ok(&o);
    assert_eq!(j["rows"], 60);
    assert_eq!(j["mode"], "multi-party");
    assert!(j["parties_missing"].as_array().unwrap().is_empty());
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), f.header);
    let classes = ["setosa", "versicolor", "virginica"];
    let mut n = 0;
    for l in lines {
        let cells: Vec<&str> = l.split(',').collect();
        assert_eq!(cells.len(), 5, "{l}");
        for c in &cells[..4] {
            assert!(c.parse::<f64>().unwrap().is_finite(), "{l}");
        }
        assert!(classes.contains(&cells[4]), "{l}");
        n += 1;
    }
    assert_eq!(n, 60);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    for v in [
        "client",
        "aggregate",
        "aggregator",
        "party_aggregator",
        "collusion",
        "paper_claim",
    ] {
        assert!(r["views"][v]["epsilon"].as_f64().unwrap() > 0.0, "{v}");
        assert!(
            r["views"][v]["sampling_rate"].as_f64().unwrap() > 0.0,
            "{v}"
        );
    }
    assert_eq!(r["per_party"].as_array().unwrap().len(), 3);
    // Each party's decisions: the four measurements numeric, decided under DP.
    let decided = r["column_types"].as_array().unwrap();
    assert_eq!(decided.len(), 3);
    for p in decided {
        let cols = p["report"]["columns"].as_array().unwrap();
        for c in &cols[..4] {
            assert_eq!(c["kind"], "numeric", "{c}");
            assert_eq!(c["type_source"], "dp", "{c}");
        }
    }
    assert_eq!(r["epsilon"], r["views"]["party_aggregator"]["epsilon"]);
    assert_eq!(r["parameters"]["aggregator_seeds"], 1);
    // No agreed pool: every party relies on its own noise only, so the target holds even
    // though the parties' class sizes differ.
    assert_eq!(r["meets_target"], true);
    assert!(r["epsilon"].as_f64().unwrap() <= 5.0);
    assert!(r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("agree on a pool size (pool")));
    // The parties' own warnings reach whoever aggregates, each once, naming the parties: every
    // party's type decision's (their column lists differ: ordered by noisy counts), and the
    // ranges left at the default [0, 1] (50 rows a party at ε = 5 rarely show a range: those
    // columns are wrong in the output).
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let typed: Vec<&str> = warnings
        .iter()
        .filter_map(|w| w.split_once(": column types: 50 rows are too few"))
        .map(|(who, _)| who)
        .collect();
    for p in ["1", "2", "3"] {
        let named = |who: &&str| who.split(|c: char| !c.is_ascii_digit()).any(|t| t == p);
        assert!(typed.iter().any(named), "party {p}: {warnings:#?}");
    }
    assert!(typed.iter().all(|who| who.starts_with("part")), "{typed:?}");
    let defaults: Vec<&&str> = warnings
        .iter()
        .filter(|w| w.contains("DEFAULT range [0, 1]"))
        .collect();
    assert!(!defaults.is_empty(), "{warnings:#?}");
    assert!(
        defaults.iter().all(|w| w.starts_with("part")),
        "{defaults:#?}"
    );
    assert_eq!(
        warnings
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len(),
        warnings.len(),
        "{warnings:#?}"
    );
    // Each party's key now records the run: contributing again with the same key and
    // parameters is refused (the correlated noise would repeat).
    fails(
        &contribute(&f, 1, &[]),
        &["already contributed", "new session label"],
    );
    // A new session is a new context.
    ok(&contribute(&f, 1, &["--session", "second"]));
}

#[test]
fn tampered_mismatched_and_missing_contributions() {
    let f = setup();
    for i in 1..=2 {
        ok(&contribute(&f, i, &[]));
    }
    // Party 3 uses another session label: rejected, naming the parameter; no output left.
    ok(&contribute(&f, 3, &["--session", "x"]));
    let (o, out, rec) = aggregate(&f, &[1, 2, 3], &[]);
    fails(&o, &["disagrees", "'session'"]);
    assert!(!out.exists() && !rec.exists());
    // Party 2's file edited by hand: integrity check fails.
    let c2 = f.dir.path().join("c2.json");
    let text = std::fs::read_to_string(&c2).unwrap();
    let i = text.find("\"values\":\"").unwrap() + 10;
    let mut bytes = text.into_bytes();
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let good = f.dir.path().join("c2.good");
    std::fs::rename(&c2, &good).unwrap();
    std::fs::write(&c2, &bytes).unwrap();
    let (o, out, _) = aggregate(&f, &[1, 2], &[]);
    fails(&o, &["integrity check failed", "party 2"]);
    assert!(!out.exists());
    std::fs::rename(&good, &c2).unwrap();
    // The same file twice.
    let (o, _, _) = aggregate(&f, &[1, 1], &[]);
    fails(&o, &["twice"]);
    // Party 3 missing: the run succeeds and says so.
    let (o, out, rec) = aggregate(&f, &[1, 2], &[]);
    let j = ok(&o);
    assert_eq!(j["parties_missing"], serde_json::json!([3]));
    assert!(out.exists());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(r["parameters"]["parties_missing"], serde_json::json!([3]));
    assert!(r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("did not contribute")));
    assert!(!r["residual_noise"].as_array().unwrap().is_empty());
}

/// `federated contribute` of Iris's first part by `party` with the key `key` and the peer
/// file `peer` (in the fixture's folder), at ε = 5, with T = 30 when `samples`.
fn contribute_args(f: &Fed, party: &str, key: &str, peer: &str, samples: bool) -> Vec<String> {
    let d = f.dir.path();
    let mut a: Vec<String> = [
        "federated",
        "contribute",
        "--party",
        party,
        "--key",
        s(&d.join(key)),
        "--peers",
        s(&d.join(peer)),
        "--input",
        s(&f.parts[0]),
        "--label",
        "species",
        "--epsilon",
        "5",
        "--delta",
        "1e-5",
        "--output",
        s(&d.join("c.json")),
    ]
    .map(String::from)
    .to_vec();
    if samples {
        a.extend(["--samples".to_string(), "30".to_string()]);
    }
    a
}

#[test]
fn bad_inputs_are_named() {
    let f = setup();
    let d = f.dir.path();
    // keygen refuses to overwrite a key.
    fails(
        &run(&[
            "federated",
            "keygen",
            "--party",
            "1",
            "--out",
            s(&d.join("k1")),
        ]),
        &["out", "exists"],
    );
    for (party, key, peer, samples, needles) in [
        // Wrong party for the key.
        (
            "2",
            "k1",
            "k2.pub",
            true,
            &["party = 2", "belongs to party 1"][..],
        ),
        // A private key passed as a peer.
        ("1", "k1", "k2", true, &["public key"]),
        // No T.
        (
            "1",
            "k1",
            "k2.pub",
            false,
            &["samples", "invalid --samples"],
        ),
    ] {
        let a = contribute_args(&f, party, key, peer, samples);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        fails(&run(&refs), needles);
        assert!(!d.join("c.json").exists());
    }
}

/// `federated simulate` names a bad variant, one client and a bad partition, and writes
/// nothing.
#[test]
fn bad_simulations_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("o.csv");
    let r = dir.path().join("r.json");
    let iris = shared("data/iris.csv");
    for (args, needle) in [
        (
            vec!["--variant", "magic", "--clients", "3"],
            "invalid value 'magic' for '--variant",
        ),
        (vec!["--variant", "cape", "--clients", "1"], "clients = 1"),
        (
            vec![
                "--variant",
                "cape",
                "--clients",
                "3",
                "--partition",
                "weird",
            ],
            "invalid value 'weird' for '--partition",
        ),
    ] {
        let mut a = vec!["federated", "simulate"];
        a.extend(iris_at_5(&iris, &o, &r));
        a.extend(args);
        fails(&run(&a), &[needle]);
        assert!(!o.exists() && !r.exists());
    }
}

#[test]
fn simulate_gives_both_views_and_meets_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("o.csv");
    let r = dir.path().join("r.json");
    let digits = shared("data/digits-8x8.csv");
    let header = std::fs::read_to_string(&digits)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim_end()
        .to_string();
    let label = header.split(',').next().unwrap().to_string();
    for variant in ["cape", "conventional"] {
        let j = ok(&run(&[
            "federated",
            "simulate",
            "--variant",
            variant,
            "--clients",
            "5",
            "--input",
            s(&digits),
            "--label",
            &label,
            "--epsilon",
            "10",
            "--delta",
            "1e-5",
            "--mix",
            "4",
            "--samples",
            "500",
            "--output",
            s(&o),
            "--receipt",
            s(&r),
            "--seed",
            "1",
            "--json",
        ]));
        assert!(j["epsilon"].as_f64().unwrap() <= 10.0);
        assert_eq!(j["meets_target"], true);
        let rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
        assert_eq!(rec["variant"], variant);
        for v in ["client", "aggregate"] {
            assert!(rec["views"][v]["epsilon"].as_f64().unwrap() <= 10.0);
            assert!(rec["views"][v]["sampling_rate"].as_f64().unwrap() > 0.0);
        }
        assert!(rec["views"]["paper_claim"]["epsilon"].as_f64().unwrap() > 0.0);
        assert!(rec["views"]["paper_claim"]["statement"]
            .as_str()
            .unwrap()
            .contains("paper's claim"));
        let text = std::fs::read_to_string(&o).unwrap();
        assert_eq!(text.lines().next().unwrap(), header);
        assert_eq!(text.lines().count(), 501);
    }
    // Skewed partition runs too.
    ok(&run(&[
        "federated",
        "simulate",
        "--variant",
        "cape",
        "--clients",
        "3",
        "--partition",
        "skewed",
        "--input",
        s(&digits),
        "--label",
        &label,
        "--epsilon",
        "10",
        "--delta",
        "1e-5",
        "--samples",
        "100",
        "--output",
        s(&o),
        "--receipt",
        s(&r),
        "--seed",
        "2",
        "--json",
    ]));
}

/// What an aggregator that is party `agg` sees about a record of party `target`, re-derived
/// here by brute force from the protocol (independent of the library's closed form): latent
/// noises g_1..g_S (τ_g²) and pair terms r_ab (τ_e²/(S−1)); observed: its own g, every r
/// touching it (its seeds), and the other parties' messages g_k + Σ_{b>k} r_kb − Σ_{b<k} r_bk.
/// Returns the noise multiplier 1/(Δ·√(uᵀC⁻¹u)).
fn party_view_z(s: usize, tau_g: f64, tau_e: f64, d: f64, agg: usize, target: usize) -> f64 {
    let pairs: Vec<(usize, usize)> = (0..s)
        .flat_map(|a| (a + 1..s).map(move |b| (a, b)))
        .collect();
    let nl = s + pairs.len();
    let var: Vec<f64> = (0..nl)
        .map(|l| {
            if l < s {
                tau_g * tau_g
            } else {
                tau_e * tau_e / (s as f64 - 1.0)
            }
        })
        .collect();
    let mut rows: Vec<Vec<f64>> = vec![(0..nl).map(|l| f64::from(l == agg)).collect()];
    for (i, &(a, b)) in pairs.iter().enumerate() {
        if a == agg || b == agg {
            rows.push((0..nl).map(|l| f64::from(l == s + i)).collect());
        }
    }
    let mut at = 0;
    for k in (0..s).filter(|&k| k != agg) {
        let mut r = vec![0.0; nl];
        r[k] = 1.0;
        for (i, &(a, b)) in pairs.iter().enumerate() {
            r[s + i] = if a == k {
                1.0
            } else if b == k {
                -1.0
            } else {
                0.0
            };
        }
        if k == target {
            at = rows.len();
        }
        rows.push(r);
    }
    let n = rows.len();
    // [C | I] → [I | C⁻¹] by Gauss–Jordan.
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut row: Vec<f64> = (0..n)
                .map(|j| (0..nl).map(|l| rows[i][l] * rows[j][l] * var[l]).sum())
                .collect();
            row.extend((0..n).map(|j| f64::from(i == j)));
            row
        })
        .collect();
    for c in 0..n {
        let p = m[c][c];
        m[c].iter_mut().for_each(|v| *v /= p);
        for r in 0..n {
            if r != c {
                let f = m[r][c];
                let row = m[c].clone();
                m[r].iter_mut().zip(row).for_each(|(v, w)| *v -= f * w);
            }
        }
    }
    1.0 / (d * m[at][n + at].sqrt())
}

/// ε at δ = 1e-5 of T_k = `t_k` rounds of a mix sampled at rate `q` with noise multiplier `z`,
/// composed with the column-type decision (a Gaussian release with noise multiplier
/// `types_z`), under the default preset's bound and conversion on the default orders: a
/// party's view, re-accounted here independently of the receipt.
fn view_epsilon(q: f64, z: f64, t_k: u64, types_z: f64) -> f64 {
    use privmix::accountant::{default_orders, Preset, RdpCurve};
    let orders = default_orders();
    RdpCurve::subsampled_gaussian(q, z, &orders, Preset::Default.bound())
        .unwrap()
        .times(t_k)
        .compose(&RdpCurve::gaussian(types_z, &orders).unwrap())
        .unwrap()
        .epsilon(1e-5, Preset::Default.conversion())
        .unwrap()
        .epsilon
}

#[test]
fn cape_receipt_holds_against_a_party_as_aggregator_reaccounted_independently() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("o.csv");
    let r = dir.path().join("r.json");
    let iris = shared("data/iris.csv");
    let sim = |clients: &str, extra: &[&str]| {
        let mut a = vec![
            "federated",
            "simulate",
            "--clients",
            clients,
            "--input",
            s(&iris),
            "--label",
            "species",
            "--epsilon",
            "4",
            "--delta",
            "1e-5",
            "--mix",
            "2",
            "--samples",
            "150",
            "--normalize",
            "data",
            "--output",
            s(&o),
            "--receipt",
            s(&r),
            "--seed",
            "3",
            "--json",
        ];
        a.extend_from_slice(extra);
        run(&a)
    };
    for clients in [2usize, 3, 5] {
        ok(&sim(&clients.to_string(), &[]));
        let rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
        let p = &rec["parameters"];
        assert_eq!(p["aggregator_seeds"], 1);
        assert!(p["aggregator_trust"]
            .as_str()
            .unwrap()
            .contains("one of the parties"));
        assert_eq!(rec["epsilon"], rec["views"]["party_aggregator"]["epsilon"]);
        let d = p["sensitivity"].as_f64().unwrap();
        let tau_e = p["tau_e"].as_f64().unwrap();
        let tau_g = rec["per_party"][0]["tau_g"].as_f64().unwrap();
        let q = rec["per_party"][0]["sampling_rate"].as_f64().unwrap();
        let t_k = p["samples_per_class"].as_u64().unwrap();
        // Independent re-accounting: the worst (aggregating party, target party) pair.
        let z = (0..clients)
            .flat_map(|agg| {
                (0..clients)
                    .filter(move |&t| t != agg)
                    .map(move |t| (agg, t))
            })
            .map(|(agg, t)| party_view_z(clients, tau_g, tau_e, d, agg, t))
            .fold(f64::INFINITY, f64::min);
        // No schema: the column types were decided under DP (`--normalize data` makes it the
        // data path's only release; the test's own tool, not a default).
        let types_z = rec["column_types"]["noise_multiplier"].as_f64().unwrap();
        let eps = view_epsilon(q, z, t_k, types_z);
        assert!(eps <= 4.0, "S = {clients}: party-aggregator ε = {eps}");
        assert!(
            (eps - rec["epsilon"].as_f64().unwrap()).abs() < 1e-6,
            "S = {clients}: {eps} vs the receipt's {}",
            rec["epsilon"]
        );
        // A seedless aggregator, chosen explicitly, is stated as an assumption, and its
        // receipt would not hold against a party aggregating.
        ok(&sim(&clients.to_string(), &["--aggregator-seeds", "0"]));
        let rec0: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
        assert_eq!(rec0["parameters"]["aggregator_seeds"], 0);
        assert!(rec0["parameters"]["aggregator_trust"]
            .as_str()
            .unwrap()
            .contains("ASSUMES"));
        let tau_g0 = rec0["per_party"][0]["tau_g"].as_f64().unwrap();
        let z0 = party_view_z(clients, tau_g0, tau_e, d, clients - 1, 0);
        let eps0 = view_epsilon(q, z0, t_k, types_z);
        assert!(eps0 > 4.0, "S = {clients}: {eps0}");
    }
    // t must leave the target party's own seeds unknown.
    fails(
        &sim("3", &["--aggregator-seeds", "3"]),
        &["invalid --aggregator-seeds = 3"],
    );
}

#[test]
fn seeded_keys_mark_everything_derived_as_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let (header, parts) = split_iris(dir.path());
    let f = Fed { dir, parts, header };
    for i in 1..=3 {
        let k = f.dir.path().join(format!("k{i}"));
        ok(&run(&[
            "federated",
            "keygen",
            "--party",
            &i.to_string(),
            "--out",
            s(&k),
            "--seed",
            &(40 + i).to_string(),
            "--json",
        ]));
        let key: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&k).unwrap()).unwrap();
        assert_eq!(key["seeded"], true, "the key file says it was seeded");
    }
    // Contributions made without --seed, but from seeded keys: seeded, and so is the release.
    for i in 1..=3 {
        ok(&contribute(&f, i, &[]));
        let c: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(f.dir.path().join(format!("c{i}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(c["seeded"], true);
    }
    let (o, _, rec) = aggregate(&f, &[1, 2, 3], &[]);
    ok(&o);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(r["seeded"], true);
    assert!(r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("seeded, not for release")));
}
