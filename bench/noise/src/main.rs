//! 47 M noise draws (60 000 rows × 784 pixels, MNIST-scale DP-CDA) with the exact discrete
//! Gaussian on the default grid and with the float Gaussian, in the same run, from the same
//! ChaCha20 generator. Prints one JSON object with the times and their ratio.
//!
//! usage: privmix-noise-bench [DRAWS] [SIGMA] [REPEATS]
//! (defaults: 47 040 000 draws; σ = 2.0 for Δ = 2c/l = 0.5 (c = 1, l = 4), i.e. noise
//! multiplier 4; repeats 3, minimum time kept)
use privmix::mechanisms::gaussian::Gaussian;
use privmix::mechanisms::noise::{Bits, GridGaussian};
use privmix::rng::ReleaseRng;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let draws: usize = a.get(1).map(|s| s.parse().unwrap()).unwrap_or(47_040_000);
    let sigma: f64 = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(2.0);
    let repeats: usize = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(3);
    let sensitivity = 0.5;
    let d = 784;
    let gg = GridGaussian::new(sigma, sensitivity, d, None).expect("grid");
    let float = Gaussian::new("sigma", sigma).expect("sigma");
    let row_init: Vec<f64> = (0..d).map(|i| (i as f64) / d as f64).collect();
    let mut row = row_init.clone();
    let mut best_exact = f64::INFINITY;
    let mut best_float = f64::INFINITY;
    let mut sink = 0.0f64;
    for rep in 0..repeats {
        let mut rng = ReleaseRng::seeded(rep as u64 + 1);
        let t = Instant::now();
        let mut done = 0;
        let mut bits = Bits::new(&mut rng);
        while done < draws {
            let k = d.min(draws - done);
            row[..k].copy_from_slice(&row_init[..k]);
            for x in &mut row[..k] {
                *x = gg.release_bits(*x, &mut bits).expect("release");
            }
            sink += row[0];
            done += k;
        }
        best_exact = best_exact.min(t.elapsed().as_secs_f64());

        let mut rng = ReleaseRng::seeded(rep as u64 + 1);
        let t = Instant::now();
        let mut done = 0;
        while done < draws {
            let k = d.min(draws - done);
            row[..k].copy_from_slice(&row_init[..k]);
            for x in &mut row[..k] {
                *x += float.sample(&mut rng);
            }
            sink += row[0];
            done += k;
        }
        best_float = best_float.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{{\"draws\": {draws}, \"sigma\": {sigma}, \"grid\": {:e}, \"sigma_units\": {}, \"effective_sensitivity\": {}, \"exact_s\": {best_exact:.3}, \"float_s\": {best_float:.3}, \"exact_ns_per_draw\": {:.2}, \"float_ns_per_draw\": {:.2}, \"ratio_exact_over_float\": {:.2}, \"checksum\": {sink:.3}}}",
        gg.grid(),
        gg.sigma_units(),
        gg.effective_sensitivity(),
        best_exact * 1e9 / draws as f64,
        best_float * 1e9 / draws as f64,
        best_exact / best_float,
    );
}
