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
//! * `exact`: `GridGaussian::add_noise` per row of 784 (round to the grid, exact discrete
//!   Gaussian, back: the release path);
//! * `exact_elem`: `GridGaussian::release_bits` one value at a time;
//! * `exact_fill`: `DiscreteGaussian::fill` into an i64 buffer (the sampler alone);
//! * `cks`: CKS20 Algorithm 3 (the previous sampler), on CKS_DRAWS draws;
//! * `chacha_u64`: one `next_u64` per draw (the generator's share);
//! * `exact_par` / `float_par`: the same work on all cores, one ChaCha20 stream per block of
//!   784 (`rng::Streams`), so the output does not depend on the thread count;
//! * `mix_float` / `mix_exact`: DP-CDA's whole mixing kernel, DRAWS/784 mixes of l = 4 rows
//!   drawn from a pool of 6 000 rows of norm 1: `cda::Mixer` (f32 sum + float noise, the
//!   kernel DP-CDA used before) against `cda::ExactMixer` (integer sum on the grid + exact
//!   discrete Gaussian, the release kernel now), both written to an f32 row.
use privmix::mechanisms::cda::{ExactMixer, Mixer};
use privmix::mechanisms::gaussian::Gaussian;
use privmix::mechanisms::noise::{Bits, GridGaussian};
use privmix::rng::{ReleaseRng, Streams};
use rand::RngCore;
use rayon::prelude::*;
use std::time::Instant;

/// Counts the 64-bit words drawn (the generator's share of the exact sampler's cost).
struct Counting<R: RngCore> {
    inner: R,
    words: u64,
}

impl<R: RngCore> RngCore for Counting<R> {
    fn next_u32(&mut self) -> u32 {
        self.words += 1;
        self.inner.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.words += 1;
        self.inner.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.words += dest.len().div_ceil(8) as u64;
        self.inner.fill_bytes(dest)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

type Row<'a> = (&'static str, Box<dyn FnMut(u64) -> f64 + 'a>);

/// Runs every row once per repeat, interleaved (float, exact, … then again), so that a
/// change of machine load hits all rows alike; keeps each row's best time.
/// `PRIVMIX_BENCH_ONLY=name` runs only that row (the others report 0).
/// Releases `draws` values as rows of `row_init.len()` (the last one shorter), each row
/// reset to `row_init` and then passed to `noise`; returns the sum of the rows' first values
/// (a checksum that keeps the work from being optimized away).
fn by_rows(draws: usize, row_init: &[f64], mut noise: impl FnMut(&mut [f64])) -> f64 {
    let d = row_init.len();
    let mut row = row_init.to_vec();
    let (mut done, mut acc) = (0, 0.0);
    while done < draws {
        let k = d.min(draws - done);
        row[..k].copy_from_slice(&row_init[..k]);
        noise(&mut row[..k]);
        acc += row[0];
        done += k;
    }
    acc
}

fn run_rows(repeats: usize, rows: &mut [Row<'_>]) -> (Vec<f64>, f64) {
    let only = std::env::var("PRIVMIX_BENCH_ONLY").ok();
    let mut best = vec![f64::INFINITY; rows.len()];
    let mut sink = 0.0;
    for rep in 0..repeats {
        for (k, (name, f)) in rows.iter_mut().enumerate() {
            if only.as_deref().is_some_and(|o| o != *name) {
                best[k] = 0.0;
                continue;
            }
            let t = Instant::now();
            sink += f(rep as u64 + 1);
            best[k] = best[k].min(t.elapsed().as_secs_f64());
        }
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
    let rows_n = draws / d;
    // The mixing kernel: pool of 6 000 rows of norm 1 (entries 1/28 ± a pattern).
    let pool_n = 6000usize;
    let features: Vec<f32> = (0..pool_n * d)
        .map(|i| {
            let x = if (i / d + i) % 3 == 0 { 1.5 } else { 0.75 };
            x / 28.0
        })
        .collect();
    let pool: Vec<u32> = (0..pool_n as u32).collect();
    let mix_l = 4;
    let fmixer = Mixer::new(&features, d, mix_l, float);
    let xmixer = ExactMixer::new(&features, d, mix_l, sigma, 1.5).expect("exact mixer");
    let mut rows: Vec<Row<'_>> = Vec::new();

    rows.push((
        "float",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            by_rows(draws, &row_init, |row| {
                for x in row {
                    *x += float.sample(&mut rng);
                }
            })
        }),
    ));

    rows.push((
        "exact",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            by_rows(draws, &row_init, |row| {
                gg.add_noise(row, &mut rng).expect("release");
            })
        }),
    ));

    rows.push((
        "exact_elem",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            let mut bits = Bits::new(&mut rng);
            by_rows(draws, &row_init, |row| {
                for x in row {
                    *x = gg.release_bits(*x, &mut bits).expect("release");
                }
            })
        }),
    ));
    rows.push((
        "fill",
        Box::new(|seed| {
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
        }),
    ));

    rows.push((
        "chacha",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            let mut acc = 0u64;
            for _ in 0..draws {
                acc = acc.wrapping_add(rng.next_u64());
            }
            acc as f64
        }),
    ));

    rows.push((
        "cks",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            let mut bits = Bits::new(&mut rng);
            let mut acc = 0i64;
            for _ in 0..cks_draws {
                acc = acc.wrapping_add(dg.sample_cks_bits(&mut bits));
            }
            acc as f64
        }),
    ));
    // All cores: blocks of one row, one ChaCha20 stream each.
    rows.push((
        "exact_par",
        Box::new(|seed| {
            let streams = Streams::from_rng(&mut ReleaseRng::seeded(seed));
            let mut data: Vec<f64> = row_init.repeat(rows_n);
            data.par_chunks_mut(d).enumerate().for_each(|(i, row)| {
                let mut rng = streams.stream(i as u64);
                gg.add_noise(row, &mut rng).expect("release");
            });
            data[0]
        }),
    ));
    rows.push((
        "float_par",
        Box::new(|seed| {
            let streams = Streams::from_rng(&mut ReleaseRng::seeded(seed));
            let mut data: Vec<f64> = row_init.repeat(rows_n);
            data.par_chunks_mut(d).enumerate().for_each(|(i, row)| {
                let mut rng = streams.stream(i as u64);
                for x in row {
                    *x += float.sample(&mut rng);
                }
            });
            data[0]
        }),
    ));

    rows.push((
        "mix_float",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            let mut out = vec![0f32; d];
            let mut acc = 0.0;
            for _ in 0..rows_n {
                fmixer.draw(&pool, &mut out, &mut rng);
                acc += f64::from(out[0]);
            }
            acc
        }),
    ));
    rows.push((
        "mix_exact",
        Box::new(|seed| {
            let mut rng = ReleaseRng::seeded(seed);
            let (mut mix, mut sum, mut out) = (vec![0f64; d], vec![0i64; d], vec![0f32; d]);
            let mut acc = 0.0;
            for _ in 0..rows_n {
                xmixer.draw(&pool, &mut mix, &mut sum, &mut rng, |_| {});
                for (o, &m) in out.iter_mut().zip(&mix) {
                    *o = m as f32;
                }
                acc += f64::from(out[0]);
            }
            acc
        }),
    ));

    let (times, sink) = run_rows(repeats, &mut rows);
    // Words per draw (untimed): the sampler alone, then CKS20.
    let count_n = 1_000_000usize;
    let mut c = Counting {
        inner: ReleaseRng::seeded(99),
        words: 0,
    };
    let mut buf = vec![0i64; count_n];
    dg.fill(&mut buf, &mut c);
    let words_exact = c.words as f64 / count_n as f64;
    c.words = 0;
    {
        let mut bits = Bits::new(&mut c);
        for _ in 0..count_n / 10 {
            dg.sample_cks_bits(&mut bits);
        }
    }
    let words_cks = c.words as f64 / (count_n / 10) as f64;
    drop(rows);
    let [float_s, exact_s, elem_s, fill_s, chacha_s, cks_s, exact_par_s, float_par_s, mix_float_s, mix_exact_s] =
        times[..]
    else {
        unreachable!()
    };
    let cks_s = cks_s * draws as f64 / cks_draws.max(1) as f64;
    let ns = |t: f64, n: usize| t * 1e9 / n as f64;
    println!(
        "{{\"draws\": {draws}, \"sigma\": {sigma}, \"grid\": {:e}, \"sigma_units\": {}, \"table_bins\": {}, \"setup_ms\": {:.2}, \"effective_sensitivity\": {}, \"threads\": {}, \
\"float_s\": {float_s:.3}, \"exact_s\": {exact_s:.3}, \"exact_elem_s\": {elem_s:.3}, \"exact_fill_s\": {fill_s:.3}, \"cks_s_scaled\": {cks_s:.3}, \"chacha_u64_s\": {chacha_s:.3}, \"exact_par_s\": {exact_par_s:.3}, \"float_par_s\": {float_par_s:.3}, \
\"float_ns\": {:.2}, \"exact_ns\": {:.2}, \"exact_elem_ns\": {:.2}, \"exact_fill_ns\": {:.2}, \"cks_ns\": {:.2}, \"chacha_u64_ns\": {:.2}, \
\"ratio_exact_over_float\": {:.2}, \"ratio_elem_over_float\": {:.2}, \"ratio_fill_over_float\": {:.2}, \"ratio_cks_over_float\": {:.2}, \"ratio_chacha_over_float\": {:.2}, \"ratio_exact_par_over_float_par\": {:.2}, \"speedup_exact_par_over_exact\": {:.2}, \"mix_float_s\": {mix_float_s:.3}, \"mix_exact_s\": {mix_exact_s:.3}, \"ratio_mix_exact_over_mix_float\": {:.2}, \"words_per_draw_exact\": {words_exact:.4}, \"words_per_draw_cks\": {words_cks:.3}, \"checksum\": {sink:.3}}}",
        gg.grid(),
        gg.sigma_units(),
        dg.table_bins(),
        setup_s * 1e3,
        gg.effective_sensitivity(),
        rayon::current_num_threads(),
        ns(float_s, draws),
        ns(exact_s, draws),
        ns(elem_s, draws),
        ns(fill_s, draws),
        ns(cks_s, draws),
        ns(chacha_s, draws),
        exact_s / float_s,
        elem_s / float_s,
        fill_s / float_s,
        cks_s / float_s,
        chacha_s / float_s,
        exact_par_s / float_par_s,
        exact_s / exact_par_s,
        mix_exact_s / mix_float_s,
    );
}
