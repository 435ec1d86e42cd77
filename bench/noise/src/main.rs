//! 47 M noise draws (60 000 rows × 784 pixels, MNIST-scale DP-CDA) with the exact discrete
//! Gaussian on the default grid and with the float Gaussian, in the same run, from the same
//! ChaCha20 generator. Prints one JSON object with the times and their ratios.
//!
//! usage: privmix-noise-bench [DRAWS] [SIGMA] [REPEATS] [CKS_DRAWS]
//! (defaults: 47 040 000 draws; σ = 2.0 for Δ = 2c/l = 0.5 (c = 1, l = 4), i.e. noise
//! multiplier 4; repeats 3, minimum time kept; the old CKS20 sampler on 4 704 000 draws,
//! scaled)
//!
//! Rows timed (best of REPEATS each, single thread unless noted):
//! * `float`: x + σ·N(0,1) (ziggurat), the baseline every ratio divides by;
//! * `exact`: `GridGaussian::release_bits` (round to the grid, exact discrete Gaussian, back);
//! * `exact_fill`: `DiscreteGaussian::fill` into an i64 buffer (the sampler alone);
//! * `cks`: CKS20 Algorithm 3 (the previous sampler), on CKS_DRAWS draws;
//! * `chacha_u64`: one `next_u64` per draw (the generator's share);
//! * `exact_par` / `float_par`: the same work on all cores, one ChaCha20 stream per block of
//!   784 (`rng::Streams`), so the output does not depend on the thread count.
use privmix::mechanisms::gaussian::Gaussian;
use privmix::mechanisms::noise::{Bits, GridGaussian};
use privmix::rng::{ReleaseRng, Streams};
use rand::RngCore;
use rayon::prelude::*;
use std::time::Instant;

fn best<F: FnMut(u64) -> f64>(repeats: usize, mut f: F) -> (f64, f64) {
    let mut best = f64::INFINITY;
    let mut sink = 0.0;
    for rep in 0..repeats {
        let t = Instant::now();
        sink += f(rep as u64 + 1);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, sink)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let draws: usize = a.get(1).map(|s| s.parse().unwrap()).unwrap_or(47_040_000);
    let sigma: f64 = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(2.0);
    let repeats: usize = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(3);
    let cks_draws: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(draws / 10);
    let sensitivity = 0.5;
    let d = 784;
    let t0 = Instant::now();
    let gg = GridGaussian::new(sigma, sensitivity, d, None).expect("grid");
    let setup_s = t0.elapsed().as_secs_f64();
    let dg = gg.sampler().clone();
    let float = Gaussian::new("sigma", sigma).expect("sigma");
    let row_init: Vec<f64> = (0..d).map(|i| (i as f64) / d as f64).collect();
    let mut sink = 0.0f64;

    let (float_s, s) = best(repeats, |seed| {
        let mut rng = ReleaseRng::seeded(seed);
        let mut row = row_init.clone();
        let mut done = 0;
        let mut acc = 0.0;
        while done < draws {
            let k = d.min(draws - done);
            row[..k].copy_from_slice(&row_init[..k]);
            for x in &mut row[..k] {
                *x += float.sample(&mut rng);
            }
            acc += row[0];
            done += k;
        }
        acc
    });
    sink += s;

    let (exact_s, s) = best(repeats, |seed| {
        let mut rng = ReleaseRng::seeded(seed);
        let mut bits = Bits::new(&mut rng);
        let mut row = row_init.clone();
        let mut done = 0;
        let mut acc = 0.0;
        while done < draws {
            let k = d.min(draws - done);
            row[..k].copy_from_slice(&row_init[..k]);
            for x in &mut row[..k] {
                *x = gg.release_bits(*x, &mut bits).expect("release");
            }
            acc += row[0];
            done += k;
        }
        acc
    });
    sink += s;

    let (fill_s, s) = best(repeats, |seed| {
        let mut rng = ReleaseRng::seeded(seed);
        let mut buf = vec![0i64; d];
        let mut done = 0;
        let mut acc = 0.0;
        while done < draws {
            let k = d.min(draws - done);
            dg.fill(&mut buf[..k], &mut rng);
            acc += buf[0] as f64;
            done += k;
        }
        acc
    });
    sink += s;

    let (chacha_s, s) = best(repeats, |seed| {
        let mut rng = ReleaseRng::seeded(seed);
        let mut acc = 0u64;
        for _ in 0..draws {
            acc = acc.wrapping_add(rng.next_u64());
        }
        acc as f64
    });
    sink += s;

    let (cks_s, s) = best(repeats, |seed| {
        let mut rng = ReleaseRng::seeded(seed);
        let mut bits = Bits::new(&mut rng);
        let mut acc = 0i64;
        for _ in 0..cks_draws {
            acc = acc.wrapping_add(dg.sample_cks_bits(&mut bits));
        }
        acc as f64
    });
    sink += s;
    let cks_s = cks_s * draws as f64 / cks_draws.max(1) as f64;

    // All cores: blocks of one row, one ChaCha20 stream each.
    let rows = draws / d;
    let (exact_par_s, s) = best(repeats, |seed| {
        let streams = Streams::from_rng(&mut ReleaseRng::seeded(seed));
        let mut data: Vec<f64> = row_init.repeat(rows);
        data.par_chunks_mut(d).enumerate().for_each(|(i, row)| {
            let mut rng = streams.stream(i as u64);
            let mut bits = Bits::new(&mut rng);
            for x in row {
                *x = gg.release_bits(*x, &mut bits).expect("release");
            }
        });
        data[0]
    });
    sink += s;
    let (float_par_s, s) = best(repeats, |seed| {
        let streams = Streams::from_rng(&mut ReleaseRng::seeded(seed));
        let mut data: Vec<f64> = row_init.repeat(rows);
        data.par_chunks_mut(d).enumerate().for_each(|(i, row)| {
            let mut rng = streams.stream(i as u64);
            for x in row {
                *x += float.sample(&mut rng);
            }
        });
        data[0]
    });
    sink += s;

    let ns = |t: f64, n: usize| t * 1e9 / n as f64;
    println!(
        "{{\"draws\": {draws}, \"sigma\": {sigma}, \"grid\": {:e}, \"sigma_units\": {}, \"table_bins\": {}, \"setup_ms\": {:.2}, \"effective_sensitivity\": {}, \"threads\": {}, \
\"float_s\": {float_s:.3}, \"exact_s\": {exact_s:.3}, \"exact_fill_s\": {fill_s:.3}, \"cks_s_scaled\": {cks_s:.3}, \"chacha_u64_s\": {chacha_s:.3}, \"exact_par_s\": {exact_par_s:.3}, \"float_par_s\": {float_par_s:.3}, \
\"float_ns\": {:.2}, \"exact_ns\": {:.2}, \"exact_fill_ns\": {:.2}, \"cks_ns\": {:.2}, \"chacha_u64_ns\": {:.2}, \
\"ratio_exact_over_float\": {:.2}, \"ratio_fill_over_float\": {:.2}, \"ratio_cks_over_float\": {:.2}, \"ratio_chacha_over_float\": {:.2}, \"ratio_exact_par_over_float_par\": {:.2}, \"speedup_exact_par_over_exact\": {:.2}, \"checksum\": {sink:.3}}}",
        gg.grid(),
        gg.sigma_units(),
        dg.table_bins(),
        setup_s * 1e3,
        gg.effective_sensitivity(),
        rayon::current_num_threads(),
        ns(float_s, draws),
        ns(exact_s, draws),
        ns(fill_s, draws),
        ns(cks_s, draws),
        ns(chacha_s, draws),
        exact_s / float_s,
        fill_s / float_s,
        cks_s / float_s,
        chacha_s / float_s,
        exact_par_s / float_par_s,
        exact_s / exact_par_s,
    );
}
