//! Times the page's live readout (`api::preview`, mix "auto") and its automatic-l
//! ranking against the previous ranking (every candidate calibrated on all RDP orders to
//! full precision), measured in the same run; prints a table with the ratio.
//!
//!     cargo run --release --example readout_speed
//!
//! With `--json` it prints, instead of the table, one line per case: the `noisePreview`
//! request, the whole readout's native time and the time of its numbers alone (`curve:
//! false`; best of 3 each), which `bench/browser/readout.mjs` replays through the app's worker
//! in Chromium.
//!
//! With `--dataset FILE.csv --label COLUMN` it times the readout of a loaded table instead
//! (`api::dataset_preview`, the npm `Dataset.noisePreview`) at ε = 1, 5 and 10, best of 3,
//! against reading the table (the baseline, measured in the same run).
use privmix::accountant::calibrate::Goal;
use privmix::accountant::default_orders;
use privmix::api::preview::{preview, PreviewRequest};
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaShape};
use privmix::preprocess::auto::{auto_mix, CANDIDATES, FULL_POOL_BELOW};
use std::time::Instant;

fn best_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            // Each repetition computes: the accountant remembers its last compositions.
            privmix::accountant::forget_remembered();
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

/// `--dataset FILE --label COLUMN`: the loaded table's readout.
fn dataset(path: &str, label: &str) {
    use privmix::api::{dataset_preview, SynthParams, SynthRequest};
    use privmix::data::read_csv_path;
    let params = |eps: f64| {
        let req = serde_json::json!({"label": label, "epsilon": eps, "delta": 1e-5});
        let req: SynthRequest = serde_json::from_value(req).unwrap();
        SynthParams::try_from(&req).unwrap()
    };
    let opts = params(1.0).csv_options("input").unwrap();
    let mut table = None;
    let read = best_ms(1, || {
        table = Some(read_csv_path(std::path::Path::new(path), &opts).unwrap());
    });
    let table = table.unwrap();
    println!("| ε | l | σx | the run's mechanism (its noise multiplier) | readout (ms) | reading the table (ms) | ratio |");
    println!("|---|---|---|---|---|---|---|");
    for eps in [1.0, 5.0, 10.0] {
        let p = params(eps);
        let mut shown = None;
        let ms = best_ms(3, || shown = Some(dataset_preview(&table, &p).unwrap()));
        let shown = shown.unwrap();
        let z = shown
            .gmm
            .as_ref()
            .map_or(shown.noise_multiplier, |g| g.noise_multiplier);
        println!(
            "| {eps} | {} | {:.4} | {} ({z:.4}) | {ms:.1} | {read:.0} | {:.3} |",
            shown.mix,
            shown.sigma_x,
            shown.mechanism,
            ms / read
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        let i = args.iter().position(|a| a == name)?;
        args.get(i + 1).cloned()
    };
    if let Some(path) = flag("--dataset") {
        return dataset(&path, &flag("--label").unwrap_or_else(|| "label".into()));
    }
    let json = std::env::args().any(|a| a == "--json");
    let orders = default_orders();
    let acc = std::f64::consts::FRAC_1_SQRT_2;
    if !json {
        println!("| classes × size | d | ε | l | previous ranking (ms) | ranking now (ms) | ratio | whole readout now (ms) |");
        println!("|---|---|---|---|---|---|---|---|");
    }
    for (sizes, d) in [
        (vec![6000u64; 10], 784u64),
        // MNIST's real training-set class sizes (T = 60,000): ten different floors.
        (
            vec![5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949],
            784,
        ),
        (vec![1000u64; 10], 784u64),
        (vec![50, 50, 50], 4),
        (vec![7841, 24720], 14),
        (vec![900, 1000], 64),
    ] {
        for eps in [1.0, 5.0, 10.0] {
            let req = serde_json::json!({
                "classSizes": sizes, "epsilon": eps, "delta": 1e-5, "features": d, "mix": "auto"
            });
            let parsed: PreviewRequest = serde_json::from_value(req.clone()).unwrap();
            if json {
                let whole = best_ms(3, || {
                    preview(&parsed).unwrap();
                });
                // The numbers alone (`curve: false`), as the page asks for them first.
                let mut first = parsed.clone();
                first.curve = Some(false);
                let numbers = best_ms(3, || {
                    preview(&first).unwrap();
                });
                println!(
                    "{}",
                    serde_json::json!({ "request": req, "nativeMs": whole, "nativeNumbersMs": numbers })
                );
                continue;
            }
            let pool = *sizes.iter().min().unwrap();
            let per = sizes.iter().sum::<u64>() / sizes.len() as u64;
            let target = eps * 0.9;
            let mut l = 0;
            let now = best_ms(3, || {
                l = auto_mix(pool, per, d, 1.0, acc, &Goal::new(target, 1e-5, &orders))
                    .unwrap()
                    .0;
            });
            let full = (2..FULL_POOL_BELOW).contains(&pool).then_some(pool as u32);
            let mut l_prev = 0;
            let prev = best_ms(3, || {
                let mut best = (f64::INFINITY, 0);
                for c in CANDIDATES
                    .iter()
                    .copied()
                    .filter(|&c| c == 1 || u64::from(c) * 2 <= pool)
                    .chain(full)
                {
                    let s = calibrate_sigma_x(
                        &CdaShape {
                            pool,
                            mix: c,
                            clip: acc,
                            sigma_y: None,
                            samples: per,
                        },
                        &Goal::new(target, 1e-5, &orders),
                    )
                    .unwrap();
                    let score = 1.0 / f64::from(c) + d as f64 * s.sigma_x * s.sigma_x;
                    if score < best.0 {
                        best = (score, c);
                    }
                }
                l_prev = best.1;
            });
            let whole = best_ms(3, || {
                preview(&parsed).unwrap();
            });
            let same = if l as u32 == l_prev {
                String::new()
            } else {
                format!(" (previous: {l_prev})")
            };
            println!(
                "| {}×{} | {d} | {eps} | {l}{same} | {prev:.1} | {now:.1} | {:.2}× | {whole:.1} |",
                sizes.len(),
                pool,
                prev / now
            );
        }
    }
}
