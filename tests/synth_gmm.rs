//! `synth`'s Gaussian class models in a DP principal subspace (pipelines::synth::gmm_synth)
//! over the real pipeline (`api::synthesize_csv`): chosen by default for a wide numeric
//! table, DP end to end, and output a user would keep (in range, class shapes, backgrounds).

use privmix::api::{synthesize_csv, SynthRequest};
use privmix::error::Result;
use serde_json::{json, Value};

/// Rows (cells as numbers, the label last) and the receipt of a synthesis of `csv`.
fn run(csv: &str, req: Value) -> Result<(Vec<Vec<f64>>, Value)> {
    let req: SynthRequest = serde_json::from_value(req).unwrap();
    let (bytes, receipt) = synthesize_csv(csv.as_bytes(), &req, |_| Ok(()))?;
    let out = String::from_utf8(bytes).unwrap();
    let rows = out
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    Ok((rows, serde_json::to_value(&receipt).unwrap()))
}

/// `n` rows of `d` pixel columns in [0, 255] and a label 0, 1 or 2: class c lights the c-th
/// third of the columns (150–250), the rest are dark (0 with probability 0.8, else 1–40).
/// Returns the CSV and the share of exact zeros among the dark cells.
fn pixels(n: usize, d: usize) -> (String, f64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut csv = (0..d).map(|j| format!("px{j},")).collect::<String>() + "label\n";
    let (mut zeros, mut dark) = (0usize, 0usize);
    for _ in 0..n {
        let c = rng.gen_range(0..3usize);
        for j in 0..d {
            let v = if j * 3 / d == c {
                rng.gen_range(150..=250)
            } else {
                dark += 1;
                if rng.gen_bool(0.8) {
                    zeros += 1;
                    0
                } else {
                    rng.gen_range(1..=40)
                }
            };
            csv.push_str(&format!("{v},"));
        }
        csv.push_str(&format!("{c}\n"));
    }
    (csv, zeros as f64 / dark as f64)
}

/// The default synthesis of a 20,000 × 102 pixel table is the GMM, private end to end, and
/// its rows look like the data's: every value an integer in [0, 255], each class bright in
/// its own third and dark elsewhere with the data's share of exact zeros, the classes in
/// their proportions.
#[test]
fn a_wide_numeric_table_gets_the_dp_gmm_by_default() {
    let d = 102;
    let (csv, zero_share) = pixels(20_000, d);
    let (rows, r) = run(&csv, json!({"label": "label", "epsilon": 5, "seed": 1})).unwrap();
    assert_eq!(r["mechanism"], "dp-gmm", "{}", r["parameters"]);
    let p = &r["parameters"];
    assert_eq!(p["components"], d);
    assert_eq!(p["pooled_share"], 0.6);
    assert!(p["encoding"]["mix_choice"]
        .as_str()
        .unwrap()
        .starts_with("auto: dp-gmm"));
    assert!(p["encoding"]["decoding"]
        .as_str()
        .unwrap()
        .contains("mapped onto its DP histogram"));
    // The whole release is DP: nothing unprotected, ε at most the target and the
    // calibration close to it, by the PLD accountant (the GMM's releases as one Gaussian),
    // the RDP bound above it.
    assert_eq!(r["guarantee"]["unprotected"], json!([]));
    let eps = r["epsilon"].as_f64().unwrap();
    assert!(eps <= 5.0 && eps > 4.95, "{eps}");
    let acc = &r["accountant"];
    assert_eq!(acc["accountant"], "pld");
    assert_eq!(acc["pld"]["epsilon"].as_f64().unwrap(), eps);
    assert!(acc["epsilon_rdp"].as_f64().unwrap() > 5.0, "{acc}");
    assert!(acc["pld"]["delta_charge"].as_f64().unwrap() > 0.0, "{acc}");
    assert_eq!(acc["pld"]["compositions"], 1);
    // RDP alone certifies a smaller ρ (more noise) for the same target.
    let rdp = run(
        &pixels(2_000, d).0,
        json!({"label": "label", "epsilon": 5, "seed": 1, "mechanism": "gmm", "accountant": "rdp"}),
    )
    .unwrap()
    .1;
    let pld = run(
        &pixels(2_000, d).0,
        json!({"label": "label", "epsilon": 5, "seed": 1, "mechanism": "gmm"}),
    )
    .unwrap()
    .1;
    assert_eq!(rdp["accountant"]["accountant"], "rdp");
    let (rho_rdp, rho_pld) = (
        rdp["parameters"]["rho"].as_f64().unwrap(),
        pld["parameters"]["rho"].as_f64().unwrap(),
    );
    assert!(rho_pld > 1.05 * rho_rdp, "{rho_pld} vs {rho_rdp}");
    assert!(rdp["epsilon"].as_f64().unwrap() <= 5.0);
    let names: Vec<&str> = r["accountant"]["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names[0].starts_with("dp-gmm"), "{names:?}");
    assert!(names.contains(&"dp class counts"), "{names:?}");
    assert!(p["bound"].as_f64().unwrap() > 0.0 && p["rho"].as_f64().unwrap() > 0.0);

    let n = rows.len() as f64;
    assert!((n - 20_000.0).abs() < 200.0, "{n}");
    let mut counts = [0usize; 3];
    let mut bright = [[0.0f64; 3]; 3];
    let (mut zeros, mut dark) = (0usize, 0usize);
    for row in &rows {
        assert_eq!(row.len(), d + 1);
        let c = row[d] as usize;
        counts[c] += 1;
        for (j, &v) in row[..d].iter().enumerate() {
            // The DP range the normalization finds is [0, 256] (its grid is powers of two).
            assert!((0.0..=256.0).contains(&v) && v.fract() == 0.0, "{v}");
            bright[c][j * 3 / d] += v;
            if j * 3 / d != c {
                dark += 1;
                zeros += usize::from(v == 0.0);
            }
        }
    }
    for c in 0..3 {
        // Each class about a third of the rows (the data's are 1/3 ± 0.01).
        let share = counts[c] as f64 / n;
        assert!((share - 1.0 / 3.0).abs() < 0.03, "{counts:?}");
        let per_cell = |b: usize| bright[c][b] / (counts[c] as f64 * d as f64 / 3.0);
        for b in 0..3 {
            // The data: 200 in the class's own third, 4.1 elsewhere.
            if b == c {
                assert!(per_cell(b) > 150.0, "class {c}, third {b}: {}", per_cell(b));
            } else {
                assert!(per_cell(b) < 40.0, "class {c}, third {b}: {}", per_cell(b));
            }
        }
    }
    let got = zeros as f64 / dark as f64;
    assert!((got - zero_share).abs() < 0.1, "{got} vs {zero_share}");
}

/// Naming a mechanism or an l keeps DP-CDA on the same table; `gmm` can be named on any
/// numeric table, with its components, and its refusals name the option.
#[test]
fn the_gmm_is_chosen_only_by_default_or_by_name() {
    let (csv, _) = pixels(20_000, 102);
    for req in [
        json!({"label": "label", "epsilon": 5, "seed": 1, "mechanism": "cda"}),
        json!({"label": "label", "epsilon": 5, "seed": 1, "mix": 4}),
    ] {
        let (_, r) = run(&csv, req.clone()).unwrap();
        assert_eq!(r["mechanism"], "dp-cda", "{req}");
    }
    let (small, _) = pixels(3_000, 12);
    let (rows, r) = run(
        &small,
        json!({"label": "label", "epsilon": 8, "seed": 2, "mechanism": "gmm", "components": 4}),
    )
    .unwrap();
    assert_eq!(r["mechanism"], "dp-gmm");
    assert_eq!(r["parameters"]["components"], 4);
    assert!(r["parameters"]["encoding"]["mix_choice"]
        .as_str()
        .unwrap()
        .starts_with("given: dp-gmm"));
    assert!(r["epsilon"].as_f64().unwrap() <= 8.0);
    let off: Vec<f64> = rows
        .iter()
        .flat_map(|row| row[..12].iter().copied())
        .filter(|v| !(0.0..=256.0).contains(v))
        .collect();
    assert!(off.is_empty(), "{:?}", &off[..off.len().min(20)]);
    let param = |req: Value| {
        run(&small, req)
            .unwrap_err()
            .param_id()
            .map(|p| p.as_str().to_string())
    };
    let base = json!({"label": "label", "epsilon": 8, "mechanism": "gmm"});
    let with = |k: &str, v: Value| {
        let mut r = base.clone();
        r[k] = v;
        r
    };
    assert_eq!(
        param(with("components", json!(13))).as_deref(),
        Some("components")
    );
    assert_eq!(
        param(with("components", json!(0))).as_deref(),
        Some("components")
    );
    assert_eq!(
        param(with("sigmaX", json!(1.0))).as_deref(),
        Some("sigma_x")
    );
    assert_eq!(
        param(json!({"label": "label", "mechanism": "gmm", "sigmaX": 1.0})).as_deref(),
        Some("sigma_x")
    );
    assert_eq!(
        param(json!({"label": "label", "epsilon": 8, "components": 3})).as_deref(),
        Some("components")
    );
}

/// The page's readout for a table the defaults give to the GMM shows the GMM's noise as the
/// run calibrates it: the receipt's noise multiplier, ρ and ε, by either accountant. Naming
/// DP-CDA gives DP-CDA's readout; another named mechanism is named, with a warning that the
/// figures are DP-CDA's.
#[test]
fn the_readout_shows_the_gmm_noise_the_run_calibrates() {
    use privmix::api::{preview::dataset_preview, SynthParams};
    use privmix::data::read_csv_bytes;
    let d = 102;
    let (csv, _) = pixels(20_000, d);
    let readout = |req: &Value| {
        let req: SynthRequest = serde_json::from_value(req.clone()).unwrap();
        let p = SynthParams::try_from(&req).unwrap();
        let table = read_csv_bytes(csv.as_bytes(), &p.csv_options("input").unwrap()).unwrap();
        serde_json::to_value(dataset_preview(&table, &p).unwrap()).unwrap()
    };
    let close = |a: &Value, b: &Value| {
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        (a - b).abs() <= 1e-9 * b.abs()
    };
    for accountant in ["pld", "rdp"] {
        let req = json!({"label": "label", "epsilon": 5, "accountant": accountant, "seed": 1});
        let shown = readout(&req);
        assert_eq!(shown["mechanism"], "dp-gmm", "{shown}");
        let g = &shown["gmm"];
        let (_, r) = run(&csv, req.clone()).unwrap();
        let p = &r["parameters"];
        assert_eq!(g["components"], p["components"]);
        assert_eq!(g["accountant"], accountant);
        assert_eq!(r["accountant"]["accountant"], accountant);
        assert!(
            close(&g["noiseMultiplier"], &p["noise_multiplier"]),
            "{g} {p}"
        );
        assert!(close(&g["rho"], &p["rho"]), "{g} {p}");
        assert!(close(&g["epsilon"], &r["epsilon"]), "{g} {}", r["epsilon"]);
        let eps = g["epsilon"].as_f64().unwrap();
        assert!(eps <= 5.0 && eps > 4.9, "{eps}");
        assert!(
            !shown["warnings"].to_string().contains("DP-CDA's"),
            "{shown}"
        );
        // The GMM's ε curve: through the calibrated point, at 0.5 to 2 times its noise
        // multiplier, ε falling as the noise grows. The calibration takes the least noise that
        // meets the target, so every point with less noise is above the target.
        let z = g["noiseMultiplier"].as_f64().unwrap();
        let curve: Vec<(f64, f64)> = serde_json::from_value(g["curve"].clone()).unwrap();
        let factors = [0.5, 0.75, 0.875, 1.0, 1.25, 1.5, 2.0];
        assert_eq!(curve.len(), factors.len(), "{curve:?}");
        assert_eq!(curve[3], (z, eps), "{curve:?}");
        for (&(x, e), f) in curve.iter().zip(factors) {
            assert!((x - z * f).abs() <= 1e-12 * z, "{curve:?}");
            if f < 1.0 {
                assert!(
                    e > 5.0,
                    "{accountant}: less noise, ε {e} at {f}z: {curve:?}"
                );
            }
        }
        assert!(curve.windows(2).all(|w| w[1].1 < w[0].1), "{curve:?}");
        // Without a curve asked for: the same numbers, no curve.
        let view = privmix::api::preview::PreviewView { curve: false };
        let req: SynthRequest = serde_json::from_value(req.clone()).unwrap();
        let p = SynthParams::try_from(&req).unwrap();
        let table = read_csv_bytes(csv.as_bytes(), &p.csv_options("input").unwrap()).unwrap();
        let quick = privmix::api::preview::dataset_preview_as(&table, &p, view).unwrap();
        let qg = quick.gmm.unwrap();
        assert!(qg.curve.is_empty(), "{:?}", qg.curve);
        assert_eq!((qg.noise_multiplier, qg.epsilon), (z, eps));
    }
    let cda = readout(&json!({"label": "label", "epsilon": 5, "mechanism": "cda"}));
    assert_eq!(cda["mechanism"], "dp-cda");
    assert!(cda.get("gmm").is_none(), "{cda}");
    let dpmix = readout(&json!({"label": "label", "epsilon": 5, "mechanism": "dpmix"}));
    assert_eq!(dpmix["mechanism"], "dpmix");
    assert!(dpmix.get("gmm").is_none(), "{dpmix}");
    assert!(
        dpmix["warnings"]
            .to_string()
            .contains("figures are DP-CDA's"),
        "{dpmix}"
    );
}

/// The GMM reports its passes over the rows (the basis and histograms, the projection, the
/// draws) in order, so a bar moves before the first row is drawn, and a cancel during the
/// release stops the run there.
#[test]
fn the_gmm_reports_progress_through_its_release_and_can_be_cancelled() {
    use privmix::error::Error;
    let (csv, _) = pixels(3_000, 12);
    let req: SynthRequest = serde_json::from_value(
        json!({"label": "label", "epsilon": 8, "seed": 2, "mechanism": "gmm", "components": 4}),
    )
    .unwrap();
    let mut seen = Vec::new();
    synthesize_csv(csv.as_bytes(), &req, |p| {
        seen.push(p);
        Ok(())
    })
    .unwrap();
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(seen.last(), Some(&1.0));
    // 3,000 rows: the release's two passes report once per wave of 4,096 rows or more (once
    // each here), the draws every 1,024 rows (three times)
    let release: Vec<f64> = seen.iter().copied().filter(|&p| p < 0.75).collect();
    assert_eq!(release, [0.0, 0.55], "{seen:?}");
    let draws = seen.iter().filter(|&&p| (0.75..1.0).contains(&p)).count();
    assert_eq!(draws, 3, "{seen:?}");
    let mut calls = 0;
    let e = synthesize_csv(csv.as_bytes(), &req, |p| {
        calls += 1;
        if p > 0.0 {
            return Err(Error::Abort("cancelled".into()));
        }
        Ok(())
    })
    .unwrap_err();
    assert!(matches!(e, Error::Abort(_)), "{e}");
    assert_eq!(
        calls, 2,
        "the second report, in the release's projection, cancels"
    );
}
