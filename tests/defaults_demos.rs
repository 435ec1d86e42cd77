//! Issue 12, "defaults are the product": the Iris demo (demo/iris.csv with its public schema)
//! at ε = 5 and every other setting at its default (standard adjacency, DP column types,
//! `mix` auto, DP normalization) gives values inside the schema's public ranges and a
//! logistic regression, trained on the synthetic rows and tested on held-out real rows, that
//! clears a stated bar.
//!
//! The digits-images demo (the app's ZIP of PNGs) at ε = 5 and the defaults gives images whose
//! per-class mean correlates with the real per-class mean.
//!
//! On main before this change (linear decoding without clamping, Δ = √2·c/l for rows in the
//! box, l ≤ pool/2) Iris values left the ranges (petal_length 17.8, negative widths), the
//! Iris check gave a mean accuracy of 0.37–0.44 and the digits images' class-mean correlation
//! was 0.69–0.72, so these tests fail there.

use privmix::api::{synthesize_csv, SynthRequest};
use privmix::data::{read_csv_bytes, CsvOptions};
use privmix::eval::{evaluate_tables, Model};
use serde_json::Value;

const IRIS: &str = include_str!("../demo/iris.csv");
const IRIS_SCHEMA: &str = include_str!("../demo/iris.schema.json");

/// Deterministic 80/20 split of a demo CSV: every 5th data row is held out (Iris is ordered
/// by class, so its test set has 10 rows of each class).
fn split(csv: &str) -> (String, String) {
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let (mut train, mut test) = (format!("{header}\n"), format!("{header}\n"));
    for (i, l) in lines.filter(|l| !l.trim().is_empty()).enumerate() {
        let dst = if i % 5 == 4 { &mut test } else { &mut train };
        dst.push_str(l);
        dst.push('\n');
    }
    (train, test)
}

fn synth(train: &str, seed: f64) -> (String, Value) {
    let schema: Value = serde_json::from_str(IRIS_SCHEMA).unwrap();
    let req: SynthRequest = serde_json::from_value(serde_json::json!({
        "label": "species", "epsilon": 5.0, "delta": 1e-5, "seed": seed, "schema": schema
    }))
    .unwrap();
    let (bytes, receipt) = synthesize_csv(train.as_bytes(), &req, |_| Ok(())).unwrap();
    (
        String::from_utf8(bytes).unwrap(),
        serde_json::to_value(&receipt).unwrap(),
    )
}

fn table(csv: &str, label: &str) -> privmix::data::Table {
    read_csv_bytes(
        csv.as_bytes(),
        &CsvOptions {
            label: Some(label.into()),
            ..CsvOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn iris_default_values_stay_in_the_public_ranges() {
    let schema: Value = serde_json::from_str(IRIS_SCHEMA).unwrap();
    let (train, _) = split(IRIS);
    for seed in 1..=4 {
        let (out, _) = synth(&train, f64::from(seed));
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert!(rows.len() > 60, "{} rows", rows.len());
        for (j, name) in header.iter().enumerate() {
            let spec = &schema["columns"][*name];
            if spec["type"] != "numeric" {
                continue;
            }
            let (lo, hi) = (spec["min"].as_f64().unwrap(), spec["max"].as_f64().unwrap());
            let vals: Vec<f64> = rows.iter().map(|r| r[j].parse().unwrap()).collect();
            for v in &vals {
                assert!(
                    (lo..=hi).contains(v),
                    "seed {seed}: {name} = {v} outside [{lo}, {hi}]"
                );
            }
            // Not collapsed: the values spread over more than a tenth of the range.
            let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
            let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert!(
                max - min > (hi - lo) / 10.0,
                "seed {seed}: {name} spans [{min}, {max}]"
            );
        }
    }
}

#[test]
fn iris_default_utility_check_clears_the_bar() {
    // The app's utility check: train on the synthetic rows, test on the held-out real rows
    // (30, 10 per class). Bar: mean over seeds 1..=20 ≥ 0.85 (main before this change
    // 0.37–0.44 on bench/utility, real rows 0.96). On bench/utility's 10 random splits the
    // mean is 0.847, below the goal of 0.90: see bench/utility/README.md.
    // Seeds 1..=20, not 1..=6: one seed's accuracy has sd ≈ 0.07–0.10, so a 6-seed mean
    // (sd ≈ 0.035) passed or failed on the draw; with exact (discrete) noise the first 6
    // seeds gave 0.839, 20 give 0.865 and 40 give 0.869 (float noise: 0.894, 0.882, 0.847).
    let (train, test) = split(IRIS);
    let test = table(&test, "species");
    let mut accs = Vec::new();
    for seed in 1..=20 {
        let (out, _) = synth(&train, f64::from(seed));
        let r = evaluate_tables(&table(&out, "species"), &test, Model::LogReg).unwrap();
        accs.push(r.accuracy);
    }
    let mean = accs.iter().sum::<f64>() / accs.len() as f64;
    eprintln!("iris utility per seed {accs:?}, mean {mean:.3}");
    assert!(mean >= 0.85, "mean accuracy {mean:.3} < 0.85: {accs:?}");
}

const DIGITS: &str = include_str!("../demo/digits-8x8.csv");

/// The app's `digits-images` demo (scripts/make-demo-data.mjs): the first 60 digits of each
/// class of demo/digits-8x8.csv as 8×8 grayscale PNGs, pixels round(v·255/16), in class
/// folders. Returns the ZIP and, per class, the pixels of its images.
fn digits_images_zip() -> (Vec<u8>, std::collections::BTreeMap<String, Vec<Vec<f64>>>) {
    use privmix::images::output::{encode_png, PngZip};
    let mut lines = DIGITS.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let li = header.iter().position(|h| *h == "label").unwrap();
    let mut per_class: std::collections::BTreeMap<String, Vec<Vec<f64>>> = Default::default();
    let mut zip = PngZip::new(Vec::new());
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').collect();
        let label = cells[li].to_string();
        let imgs = per_class.entry(label.clone()).or_default();
        if imgs.len() >= 60 {
            continue;
        }
        let px: Vec<u8> = cells
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != li)
            .map(|(_, v)| (v.parse::<f64>().unwrap() * 255.0 / 16.0).round() as u8)
            .collect();
        let name = format!("digits/{label}/{:03}.png", imgs.len());
        zip.add(&name, &encode_png(8, 8, 1, &px).unwrap()).unwrap();
        imgs.push(px.iter().map(|&p| f64::from(p)).collect());
    }
    (zip.finish().unwrap(), per_class)
}

fn mean_image(imgs: &[Vec<f64>]) -> Vec<f64> {
    let mut m = vec![0.0; imgs[0].len()];
    for im in imgs {
        for (a, b) in m.iter_mut().zip(im) {
            *a += b / imgs.len() as f64;
        }
    }
    m
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn digits_images_demo_default_class_means_look_like_the_real_ones() {
    // Synthetic images at ε = 5 and the defaults: per class, the mean synthetic image
    // correlates with the real class's mean image. Bar: the mean over the 10 classes ≥ 0.80
    // for each seed (this change measured 0.86–0.88 on bench/utility/images.py; main before
    // it 0.69–0.72, with 40 % of the pixels saturated: noise, not digits).
    use privmix::api::{synthesize_images, ImageInput};
    use privmix::images::{load_zip, ImageOptions};
    let (zip, real) = digits_images_zip();
    for seed in [1.0, 2.0] {
        let req: SynthRequest = serde_json::from_value(serde_json::json!({
            "epsilon": 5.0, "delta": 1e-5, "seed": seed
        }))
        .unwrap();
        let out = synthesize_images(
            ImageInput::Zip(zip.clone()),
            &ImageOptions::default(),
            &req,
            |_| Ok(()),
        )
        .unwrap();
        let syn = load_zip(&out.zip, &ImageOptions::default(), "synthetic").unwrap();
        assert_eq!((syn.width, syn.height, syn.channels), (8, 8, 1));
        let mut corrs = Vec::new();
        for (k, name) in syn.class_names.iter().enumerate() {
            let imgs: Vec<Vec<f64>> = (0..syn.len())
                .filter(|&i| syn.labels[i] as usize == k)
                .map(|i| syn.image(i).iter().map(|&p| f64::from(p)).collect())
                .collect();
            assert!(imgs.len() >= 20, "class {name}: {} images", imgs.len());
            corrs.push(pearson(&mean_image(&imgs), &mean_image(&real[name])));
        }
        assert_eq!(corrs.len(), 10);
        let mean = corrs.iter().sum::<f64>() / corrs.len() as f64;
        eprintln!("seed {seed}: per-class correlations {corrs:.2?}, mean {mean:.3}");
        assert!(
            mean >= 0.80,
            "seed {seed}: mean correlation {mean:.3} < 0.80: {corrs:.2?}"
        );
    }
}

const DIGITS_SCHEMA: &str = include_str!("../demo/digits-8x8.schema.json");

/// The digits 8×8 CSV demo with its schema (every pixel an integer in [0, 16]) at ε = 5 and
/// the defaults. At the demo's size no pixel column gets a DP marginal, so each is decoded from
/// the mixed rows; left linear (main before this change) 52 % of the synthetic pixels lay
/// outside [0, 16] (−13, 31, …) and the mean 1-way TVD to the real pixels was 0.30
/// (bench/utility's 10 splits). Now every value is a whole number inside the schema's range,
/// the columns' marginals are closer to the real ones, and the utility check keeps its level.
#[test]
fn digits_demo_default_values_stay_in_the_schema_and_keep_their_utility() {
    let schema: Value = serde_json::from_str(DIGITS_SCHEMA).unwrap();
    let header = DIGITS.lines().next().unwrap();
    let (train, test) = split(DIGITS);
    let pixels = |csv: &str| -> Vec<Vec<f64>> {
        csv.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                c[1..].iter().map(|v| v.parse().unwrap()).collect()
            })
            .collect()
    };
    assert!(
        header.starts_with("label,px0,") && header.ends_with(",px63"),
        "{header}"
    );
    let real = pixels(&train);
    let test_table = table(&test, "label");
    let (mut accs, mut tvds) = (Vec::new(), Vec::new());
    for seed in 1..=3 {
        let req: SynthRequest = serde_json::from_value(serde_json::json!({
            "label": "label", "epsilon": 5.0, "delta": 1e-5, "seed": f64::from(seed), "schema": schema
        }))
        .unwrap();
        let (bytes, _) = synthesize_csv(train.as_bytes(), &req, |_| Ok(())).unwrap();
        let out = String::from_utf8(bytes).unwrap();
        assert_eq!(out.lines().next(), Some(header));
        let syn = pixels(&out);
        assert!(syn.len() > 1000, "{} rows", syn.len());
        let outside: Vec<f64> = syn
            .iter()
            .flatten()
            .copied()
            .filter(|v| !(0.0..=16.0).contains(v) || v.fract() != 0.0)
            .collect();
        assert!(
            outside.is_empty(),
            "seed {seed}: {} of {} pixels are not whole numbers in [0, 16]: {:?}",
            outside.len(),
            syn.len() * 64,
            &outside[..outside.len().min(8)]
        );
        // Mean over the 64 columns of the total variation distance between the synthetic
        // and the real training values (17 levels each).
        let mut tvd = 0.0;
        for j in 0..64 {
            let share = |rows: &[Vec<f64>], v: f64| {
                rows.iter().filter(|r| r[j] == v).count() as f64 / rows.len() as f64
            };
            tvd += (0..=16)
                .map(|v| (share(&syn, f64::from(v)) - share(&real, f64::from(v))).abs())
                .sum::<f64>()
                / 2.0;
        }
        tvds.push(tvd / 64.0);
        let r = evaluate_tables(&table(&out, "label"), &test_table, Model::LogReg).unwrap();
        accs.push(r.accuracy);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    eprintln!("digits demo: accuracy {accs:.3?}, 1-way TVD {tvds:.3?}");
    // Bars: bench/utility's 10 random splits give 0.891 (left linear: 0.894) and a TVD of
    // 0.210; this split and these seeds stay within about 0.04 of those.
    assert!(mean(&accs) >= 0.85, "accuracy {accs:.3?}");
    assert!(mean(&tvds) <= 0.25, "1-way TVD {tvds:.3?}");
}
