//! Times privmix's DP-CDA core on data already parsed into memory.
//!
//! usage: privmix-core-timer INPUT.csv LABEL MIX SIGMA SAMPLES SEED REPEATS
//!
//! Phases (each timed separately, minimum over REPEATS):
//! * `encode_clip_s`: `FeatureSpace::encode` (normalize to the model space; `data` mode
//!   statistics fitted once outside the timer) + `clip_rows` (c = 1);
//! * `generate_s`: `mechanisms::cda::generate` (per-class mixing of l distinct rows + Gaussian
//!   noise), with a sink that copies each row into a preallocated T × d f32 buffer (the same
//!   output numpy's core produces), excluding the map back to original units and the CSV
//!   formatting.
//! Prints one JSON object.
use privmix::data::{read_csv_path, Column, CsvOptions};
use privmix::mechanisms::cda::{generate, CdaConfig, Pools};
use privmix::preprocess::clip::clip_rows;
use privmix::preprocess::{fit_feature_space, NormalizeMode};
use privmix::rng::ReleaseRng;
use std::path::Path;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 8 {
        eprintln!("usage: privmix-core-timer INPUT LABEL MIX SIGMA SAMPLES SEED REPEATS");
        std::process::exit(2);
    }
    let mix: usize = a[3].parse().unwrap();
    let sigma: f64 = a[4].parse().unwrap();
    let samples: usize = a[5].parse().unwrap();
    let seed: u64 = a[6].parse().unwrap();
    let repeats: usize = a[7].parse().unwrap();
    let t0 = Instant::now();
    let opts = CsvOptions {
        label: Some(a[2].clone()),
        ..CsvOptions::default()
    };
    let table = read_csv_path(Path::new(&a[1]), &opts).expect("read");
    let load_s = t0.elapsed().as_secs_f64();
    let li = table.label_index.expect("label");
    let codes = match &table.columns[li] {
        Column::Categorical { codes, .. } => codes.clone(),
        _ => panic!("label not categorical"),
    };
    let k = 1 + *codes.iter().max().unwrap() as usize;
    let mut classes: Vec<Vec<u32>> = vec![Vec::new(); k];
    for (i, &c) in codes.iter().enumerate() {
        classes[c as usize].push(i as u32);
    }
    let mut rng = ReleaseRng::seeded(seed);
    let (space, _) =
        fit_feature_space(&table, None, NormalizeMode::Data, None, &mut rng).expect("fit");
    let d = space.dim;
    let per_class = samples / k;
    let mut out = vec![0f32; per_class * k * d];
    let mut best_enc = f64::INFINITY;
    let mut best_gen = f64::INFINITY;
    let mut checksum = 0f64;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        let mut f = space.encode(&table).expect("encode");
        clip_rows(&mut f, d, 1.0).expect("clip");
        best_enc = best_enc.min(t.elapsed().as_secs_f64());
        let cfg = CdaConfig {
            mix,
            sigma_x: sigma,
            sigma_y: None,
            per_class: vec![per_class; k],
            clip: 1.0,
        };
        let mut rng = ReleaseRng::seeded(seed);
        let mut row = 0usize;
        let t = Instant::now();
        generate(
            &Pools {
                features: privmix::mechanisms::cda::Rows::Dense(&f),
                d,
                classes: &classes,
            },
            &cfg,
            &mut rng,
            |_, r| {
                out[row * d..(row + 1) * d].copy_from_slice(r);
                row += 1;
                Ok(())
            },
            |_| Ok(()),
        )
        .expect("generate");
        best_gen = best_gen.min(t.elapsed().as_secs_f64());
        checksum += out.iter().map(|&x| x as f64).sum::<f64>();
    }
    println!(
        "{}",
        serde_json::json!({"load_s": load_s, "encode_clip_s": best_enc, "generate_s": best_gen,
            "core_s": best_enc + best_gen, "rows": per_class * k, "dim": d, "classes": k,
            "checksum": checksum})
    );
}
