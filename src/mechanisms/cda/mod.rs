//! DP-CDA: class-centric data aggregation (Saha, Tonoy and Imtiaz, "DP-CDA: An Algorithm for
//! Enhanced Privacy Preservation in Dataset Synthesis Through Randomized Mixing",
//! arXiv:2411.16121, Algorithm 1).
//!
//! For each class k, each synthetic row averages l distinct rows of class k (drawn uniformly
//! without replacement inside the draw) and adds N(0, σx² I) to the average. In label-free
//! mode (the default) the label is k itself; in paper mode the averaged one-hot label gets
//! N(0, σy² I) and the label is its argmax. The noise step is [`generate`].
//!
#![doc = include_str!("PROOF.md")]

pub mod accounting;
pub mod mixer;

pub(crate) use mixer::exact_sum_noise;
pub use mixer::{exact_grid, unit_box_radius, ExactMixer, MixCell, Mixer, Rows};

use super::gaussian::Gaussian;
use crate::error::{Error, Result};
use rand::Rng;

/// What the noise step needs.
#[derive(Debug, Clone)]
pub struct CdaConfig {
    /// Mix order l ≥ 1.
    pub mix: usize,
    /// Feature noise std σx > 0.
    pub sigma_x: f64,
    /// Label noise std σy (paper mode) or None (label-free).
    pub sigma_y: Option<f64>,
    /// Rows to make for each class, T_k.
    pub per_class: Vec<usize>,
    /// A bound on every row's L2 norm (the clip norm c; √d for rows in the unit box): the
    /// exact noise's grid and integer norm check ([`ExactMixer::new`]).
    pub clip: f64,
}

/// T rows are split evenly over the K classes, so T must be at least K: the `samples`
/// error otherwise.
pub fn check_samples(t: u64, k: u64) -> Result<()> {
    if t < k {
        return Err(Error::param(
            "samples",
            t,
            format!("T must be at least the number of classes K = {k} so that every class gets a row; ask for {k} rows or more"),
        ));
    }
    Ok(())
}

/// Validates the class pools against the config: every class needs at least l rows.
pub fn check_pools(class_sizes: &[usize], class_names: &[String], mix: usize) -> Result<()> {
    accounting::check_mix(mix as u64)?;
    for (k, &n) in class_sizes.iter().enumerate() {
        if n == 0 {
            return Err(Error::Data(format!(
                "class '{}' has no rows; remove it from the schema or the data",
                class_names.get(k).map_or("?", |s| s)
            )));
        }
        if n < mix {
            return Err(Error::param(
                "mix",
                mix,
                format!(
                    "class '{}' has only {n} rows, fewer than l = {mix}; use a mix order of {n} or smaller, or add rows to that class",
                    class_names.get(k).map_or("?", |s| s)
                ),
            ));
        }
    }
    Ok(())
}

/// Rows per block: each block of the output draws from its own CSPRNG stream.
pub const BLOCK_ROWS: usize = 256;

/// Blocks made per wave: natively a wave is made in parallel while the previous one is handed
/// to the sink, so two waves are in memory; two blocks per thread keep every thread busy and
/// the buffers small (2 threads, d = 784: 6.4 MB). The output does not depend on it.
fn wave_blocks(parallel: bool) -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    if parallel {
        return (2 * rayon::current_num_threads()).max(4);
    }
    let _ = parallel;
    4
}

/// The rows DP-CDA mixes: `features` n rows of width `d` (dense or compact), already
/// normalized and clipped to norm ≤ c, and `classes[k]` the row indices of class k (its pool).
#[derive(Debug, Clone, Copy)]
pub struct Pools<'a> {
    /// n rows of width d.
    pub features: Rows<'a>,
    /// Columns per row.
    pub d: usize,
    /// Each class's row indices.
    pub classes: &'a [Vec<u32>],
}

/// The DP-CDA noise step on `pools`.
/// Rows are emitted round-robin over classes
/// through `sink(label, row)`, on the calling thread; `progress` gets the finished fraction
/// now and then. An error from `sink` or `progress` stops the generation and is returned. Work per row is O(l·d): the l indices are drawn by Floyd's algorithm
/// (rand's `index::sample`), never by materialising an n-length weight vector.
///
/// Randomness: one key is drawn from `rng` and output row j uses the CSPRNG stream
/// [`crate::rng::Streams`] `j / BLOCK_ROWS` (its subset, its noise, its label noise, in
/// that order), so the rows do not depend on how many threads make them. Natively the blocks
/// are made on all cores (rayon) while the calling thread runs the sink; on wasm32 they are
/// made in order on the calling thread, with the same result.
pub fn generate<R: Rng + ?Sized>(
    pools: &Pools<'_>,
    cfg: &CdaConfig,
    rng: &mut R,
    sink: impl FnMut(usize, &[f32]) -> Result<()>,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    generate_with(
        pools,
        cfg,
        rng,
        cfg!(not(target_arch = "wasm32")),
        sink,
        progress,
    )
}

/// [`generate`], choosing whether the blocks are made in parallel (`parallel` has no effect on
/// wasm32, and none on the output).
pub fn generate_with<R: Rng + ?Sized>(
    pools: &Pools<'_>,
    cfg: &CdaConfig,
    rng: &mut R,
    parallel: bool,
    mut sink: impl FnMut(usize, &[f32]) -> Result<()>,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    let mut done = 0usize;
    let total: usize = cfg.per_class.iter().sum();
    let step = (total / 100).max(1);
    drive(pools, cfg, rng, parallel, None, |wave| {
        for (label, row) in wave.labels.iter().zip(wave.rows.chunks_exact(pools.d)) {
            sink(*label as usize, row)?;
            done += 1;
            if done % step == 0 {
                progress(done as f64 / total as f64)?;
            }
        }
        Ok(())
    })?;
    progress(1.0)?;
    Ok(())
}

/// A formatter of one output row (its label and features) into output bytes, run on the
/// worker threads.
pub type RowFormatter<'a> = &'a (dyn Fn(usize, &[f32], &mut Vec<u8>) + Sync);

/// [`generate`] with the rows turned into bytes by `format` on the worker threads as well
/// (natively; in order on wasm32): `sink` gets the bytes of consecutive rows, in output order,
/// a block at a time, on the calling thread. The rows are those of [`generate`] with the same
/// generator state.
pub fn generate_text<R: Rng + ?Sized>(
    pools: &Pools<'_>,
    cfg: &CdaConfig,
    rng: &mut R,
    parallel: bool,
    format: RowFormatter<'_>,
    mut sink: impl FnMut(&[u8]) -> Result<()>,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    let mut done = 0usize;
    let total: usize = cfg.per_class.iter().sum();
    drive(pools, cfg, rng, parallel, Some(format), |wave| {
        for text in &wave.text {
            sink(text)?;
        }
        done += wave.labels.len();
        progress(done as f64 / total.max(1) as f64)?;
        Ok(())
    })?;
    progress(1.0)?;
    Ok(())
}

/// The shared driver: validates, makes the schedule and the streams, and makes the waves
/// (the next one in parallel while `emit` handles the current one on this thread).
fn drive<R: Rng + ?Sized>(
    pools: &Pools<'_>,
    cfg: &CdaConfig,
    rng: &mut R,
    parallel: bool,
    format: Option<RowFormatter<'_>>,
    mut emit: impl FnMut(&Wave) -> Result<()>,
) -> Result<()> {
    let &Pools {
        features,
        d,
        classes,
    } = pools;
    let k_count = classes.len();
    if cfg.per_class.len() != k_count {
        return Err(Error::Data(
            "internal: per-class counts do not match the classes".into(),
        ));
    }
    if !features.fits(d) {
        return Err(Error::Data(
            "there are no feature columns besides the label".into(),
        ));
    }
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    let names: Vec<String> = (0..k_count).map(|k| k.to_string()).collect();
    check_pools(&sizes, &names, cfg.mix)?;
    let gy = cfg
        .sigma_y
        .map(|s| Gaussian::new("sigma-y", s))
        .transpose()?;
    // The class of every output row, round-robin over the classes that still need rows.
    let total: usize = cfg.per_class.iter().sum();
    let mut schedule: Vec<u32> = Vec::with_capacity(total);
    let mut remaining = cfg.per_class.clone();
    while schedule.len() < total {
        for (k, r) in remaining.iter_mut().enumerate() {
            if *r > 0 {
                *r -= 1;
                schedule.push(k as u32);
            }
        }
    }
    let streams = crate::rng::Streams::from_rng(rng);
    let gen = Blocks {
        mixer: ExactMixer::over(features, d, cfg.mix, cfg.sigma_x, cfg.clip)?,
        classes,
        gy,
        schedule: &schedule,
        streams,
        format,
    };
    let wave_rows = BLOCK_ROWS * wave_blocks(parallel);
    let n_waves = total.div_ceil(wave_rows);
    let mut cur = Wave::default();
    let mut next = Wave::default();
    if n_waves > 0 {
        gen.make(0, wave_rows, &mut cur, parallel);
    }
    for w in 0..n_waves {
        let more = w + 1 < n_waves;
        #[cfg(not(target_arch = "wasm32"))]
        let r = if parallel && more {
            rayon::in_place_scope(|s| {
                let gen = &gen;
                let next = &mut next;
                s.spawn(move |_| gen.make((w + 1) * wave_rows, wave_rows, next, true));
                emit(&cur)
            })
        } else {
            let r = emit(&cur);
            if more {
                gen.make((w + 1) * wave_rows, wave_rows, &mut next, parallel);
            }
            r
        };
        #[cfg(target_arch = "wasm32")]
        let r = {
            let r = emit(&cur);
            if more {
                gen.make((w + 1) * wave_rows, wave_rows, &mut next, parallel);
            }
            r
        };
        r?;
        std::mem::swap(&mut cur, &mut next);
    }
    Ok(())
}

/// Rows made but not yet handed to the sink.
#[derive(Default)]
struct Wave {
    rows: Vec<f32>,
    labels: Vec<u32>,
    /// With a formatter: the bytes of each block.
    text: Vec<Vec<u8>>,
}

/// One block's work: its index in the wave, its rows, its labels and (with a formatter) its
/// text.
type BlockJob<'w> = (
    usize,
    ((&'w mut [f32], &'w mut [u32]), Option<&'w mut Vec<u8>>),
);

/// Everything a block needs; shared read-only across threads.
struct Blocks<'a> {
    mixer: ExactMixer<'a>,
    classes: &'a [Vec<u32>],
    gy: Option<Gaussian>,
    schedule: &'a [u32],
    streams: crate::rng::Streams,
    format: Option<RowFormatter<'a>>,
}

impl Blocks<'_> {
    /// Makes output rows [first, first + count) (clamped to the total) into `wave`; `first`
    /// is a multiple of [`BLOCK_ROWS`].
    fn make(&self, first: usize, count: usize, wave: &mut Wave, parallel: bool) {
        let d = self.mixer.dim();
        let end = (first + count).min(self.schedule.len());
        let rows = end.saturating_sub(first);
        wave.rows.clear();
        wave.rows.resize(rows * d, 0.0);
        wave.labels.clear();
        wave.labels.resize(rows, 0);
        let block_cells = BLOCK_ROWS * d;
        let n_blocks = rows.div_ceil(BLOCK_ROWS);
        if self.format.is_some() {
            wave.text.resize_with(n_blocks, Vec::new);
        }
        wave.text
            .truncate(if self.format.is_some() { n_blocks } else { 0 });
        let one = |(b, ((out, labels), text)): BlockJob<'_>| {
            self.block(first / BLOCK_ROWS + b, out, labels);
            if let (Some(f), Some(text)) = (self.format, text) {
                text.clear();
                for (label, row) in labels.iter().zip(out.chunks_exact(d)) {
                    f(*label as usize, row, text);
                }
            }
        };
        let texts: Vec<Option<&mut Vec<u8>>> = if self.format.is_some() {
            wave.text.iter_mut().map(Some).collect()
        } else {
            (0..n_blocks).map(|_| None).collect()
        };
        #[cfg(not(target_arch = "wasm32"))]
        if parallel {
            use rayon::prelude::*;
            wave.rows
                .par_chunks_mut(block_cells)
                .zip(wave.labels.par_chunks_mut(BLOCK_ROWS))
                .zip(texts)
                .enumerate()
                .for_each(one);
            return;
        }
        let _ = parallel;
        wave.rows
            .chunks_mut(block_cells)
            .zip(wave.labels.chunks_mut(BLOCK_ROWS))
            .zip(texts)
            .enumerate()
            .for_each(one);
    }

    /// Makes the rows of block `b` from its own stream: for each row its mix
    /// ([`Mixer::draw`]: subset, then feature noise), then in paper mode its label noise.
    fn block(&self, b: usize, out: &mut [f32], labels: &mut [u32]) {
        let d = self.mixer.dim();
        let mut rng = self.streams.stream(b as u64);
        let k_count = self.classes.len();
        let mut label_scores = vec![0f64; if self.gy.is_some() { k_count } else { 0 }];
        let (mut mix, mut sum) = (vec![0f64; d], vec![0i64; d]);
        let first = b * BLOCK_ROWS;
        for (j, (acc, label)) in out.chunks_exact_mut(d).zip(labels.iter_mut()).enumerate() {
            let k = self.schedule[first + j] as usize;
            self.mixer
                .draw(&self.classes[k], &mut mix, &mut sum, &mut rng, |_| {});
            for (a, &m) in acc.iter_mut().zip(&mix) {
                *a = m as f32;
            }
            *label = match &self.gy {
                None => k as u32,
                Some(g) => {
                    // Averaged one-hot of class k is e_k; add noise and take the argmax.
                    for (j, s) in label_scores.iter_mut().enumerate() {
                        *s = if j == k { 1.0 } else { 0.0 } + g.sample(&mut rng);
                    }
                    argmax(&label_scores) as u32
                }
            };
        }
    }
}

fn argmax(xs: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in xs.iter().enumerate() {
        if x > xs[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn check_samples_refuses_fewer_rows_than_classes() {
        assert!(check_samples(3, 3).is_ok());
        assert!(check_samples(60_000, 10).is_ok());
        let e = check_samples(2, 3).unwrap_err();
        assert_eq!(e.param_id().map(|p| p.as_str()), Some("samples"));
        assert!(e.to_string().contains("K = 3"), "{e}");
    }

    /// Runs [`generate`] on dense rows `f` (`d` per row) with `cfg`, seeded with `seed`,
    /// handing each synthetic row and its class to `row`.
    fn run_dense(
        f: &[f32],
        d: usize,
        classes: &[Vec<u32>],
        cfg: &CdaConfig,
        seed: u64,
        mut row: impl FnMut(usize, &[f32]),
    ) {
        generate(
            &Pools {
                features: Rows::Dense(f),
                d,
                classes,
            },
            cfg,
            &mut ReleaseRng::seeded(seed),
            |k, r| {
                row(k, r);
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
    }

    fn toy() -> (Vec<f32>, Vec<Vec<u32>>) {
        // Class 0 rows near (1, 0), class 1 rows near (0, 1).
        let mut f = Vec::new();
        for i in 0..50 {
            f.extend_from_slice(&[1.0, 0.01 * i as f32]);
        }
        for i in 0..30 {
            f.extend_from_slice(&[0.01 * i as f32, 1.0]);
        }
        (f, vec![(0..50).collect(), (50..80).collect()])
    }

    #[test]
    fn label_free_labels_equal_their_class_and_counts_match() {
        let (f, classes) = toy();
        let cfg = CdaConfig {
            mix: 4,
            sigma_x: 0.1,
            sigma_y: None,
            per_class: vec![7, 5],
            clip: 4.0,
        };
        let mut counts = [0usize; 2];
        run_dense(&f, 2, &classes, &cfg, 1, |k, row| {
            counts[k] += 1;
            // Mixed features stay near the class mean (σx = 0.1).
            let own = if k == 0 { row[0] } else { row[1] };
            assert!((own - 1.0).abs() < 0.6, "class {k} row {row:?}");
        });
        assert_eq!(counts, [7, 5]);
    }

    #[test]
    fn mixes_are_means_of_distinct_rows_plus_noise() {
        // With l = n every mix must be the exact class mean plus noise; the empirical mean
        // over many rows converges to it and the spread matches σx.
        let f: Vec<f32> = vec![0.0, 1.0, 2.0, 3.0];
        let classes = vec![vec![0, 1, 2, 3]];
        let cfg = CdaConfig {
            mix: 4,
            sigma_x: 0.5,
            sigma_y: None,
            per_class: vec![20000],
            clip: 4.0,
        };
        let mut sum = 0.0f64;
        let mut sq = 0.0f64;
        run_dense(&f, 1, &classes, &cfg, 3, |_, r| {
            sum += f64::from(r[0]);
            sq += f64::from(r[0]) * f64::from(r[0]);
        });
        let mean = sum / 20000.0;
        let var = sq / 20000.0 - mean * mean;
        // Std error of the mean is 0.5/sqrt(20000) = 0.0035; 6 std errors ≈ 0.021.
        assert!((mean - 1.5).abs() < 0.021, "{mean}");
        assert!((var.sqrt() - 0.5).abs() < 0.02, "{}", var.sqrt());
    }

    #[test]
    fn paper_mode_flips_labels_only_through_noise() {
        let (f, classes) = toy();
        let quiet = CdaConfig {
            mix: 2,
            sigma_x: 0.1,
            sigma_y: Some(1e-3),
            per_class: vec![50, 50],
            clip: 4.0,
        };
        let mut wrong = 0;
        run_dense(&f, 2, &classes, &quiet, 5, |k, r| {
            if (k == 0) != (r[0] > r[1]) {
                wrong += 1;
            }
        });
        assert_eq!(wrong, 0);
        let loud = CdaConfig {
            sigma_y: Some(10.0),
            ..quiet
        };
        let mut labels = [0usize; 2];
        run_dense(&f, 2, &classes, &loud, 5, |k, _| {
            labels[k] += 1;
        });
        // With σy = 10 labels are nearly coin flips: both appear, far from 50/50 by class.
        assert!(labels[0] > 25 && labels[1] > 25, "{labels:?}");
    }

    #[test]
    fn class_smaller_than_l_is_rejected_naming_it() {
        let e = check_pools(&[10, 3], &["cat".into(), "dog".into()], 4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'dog'") && e.contains("only 3 rows") && e.contains("mix = 4"),
            "{e}"
        );
        assert!(check_pools(&[10, 0], &["a".into(), "b".into()], 1).is_err());
    }

    /// Runs `generate_with` in a rayon pool of `threads` threads (0: the sequential path).
    fn run_in(
        threads: usize,
        f: &[f32],
        d: usize,
        classes: &[Vec<u32>],
        cfg: &CdaConfig,
        seed: u64,
    ) -> (Vec<f32>, Vec<usize>) {
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        let mut go = || {
            generate_with(
                &Pools {
                    features: Rows::Dense(f),
                    d,
                    classes,
                },
                cfg,
                &mut ReleaseRng::seeded(seed),
                threads > 0,
                |k, r| {
                    labels.push(k);
                    rows.extend_from_slice(r);
                    Ok(())
                },
                |_| Ok(()),
            )
            .unwrap()
        };
        if threads == 0 {
            go();
        } else {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(go);
        }
        (rows, labels)
    }

    /// Same seed, sequential vs 1, 2 and 4 threads: identical rows and labels, across several
    /// waves of blocks and with unequal class counts (and in paper mode, whose label noise
    /// also comes from the block streams).
    #[test]
    fn seeded_output_does_not_depend_on_the_thread_count() {
        let (f, classes) = toy();
        for sigma_y in [None, Some(0.5)] {
            let cfg = CdaConfig {
                mix: 3,
                sigma_x: 0.3,
                sigma_y,
                per_class: vec![9000, 3001],
                clip: 4.0,
            };
            let base = run_in(0, &f, 2, &classes, &cfg, 42);
            assert_eq!(base.1.len(), 12001);
            if sigma_y.is_none() {
                assert_eq!(base.1.iter().filter(|&&k| k == 1).count(), 3001);
            }
            for threads in [1, 2, 4] {
                let got = run_in(threads, &f, 2, &classes, &cfg, 42);
                assert!(
                    got == base,
                    "{threads} threads differ from the sequential run"
                );
            }
            assert!(run_in(2, &f, 2, &classes, &cfg, 43) != base);
        }
    }

    /// `generate_text` hands over, in order, exactly the formatted rows of `generate` with
    /// the same seed, on any number of threads.
    #[test]
    fn text_output_equals_formatted_rows() {
        let (f, classes) = toy();
        let cfg = CdaConfig {
            mix: 2,
            sigma_x: 0.2,
            sigma_y: None,
            per_class: vec![5000, 4321],
            clip: 4.0,
        };
        let fmt = |k: usize, r: &[f32], out: &mut Vec<u8>| {
            out.extend_from_slice(format!("{k}:{}:{}\n", r[0], r[1]).as_bytes());
        };
        let (rows, labels) = run_in(0, &f, 2, &classes, &cfg, 11);
        let mut want = Vec::new();
        for (k, r) in labels.iter().zip(rows.chunks_exact(2)) {
            fmt(*k, r, &mut want);
        }
        for threads in [0, 1, 3] {
            let mut got = Vec::new();
            let mut last = 0.0;
            let mut go = || {
                generate_text(
                    &Pools {
                        features: Rows::Dense(&f),
                        d: 2,
                        classes: &classes,
                    },
                    &cfg,
                    &mut ReleaseRng::seeded(11),
                    threads > 0,
                    &fmt,
                    |b| {
                        got.extend_from_slice(b);
                        Ok(())
                    },
                    |p| {
                        assert!(p >= last);
                        last = p;
                        Ok(())
                    },
                )
                .unwrap()
            };
            if threads == 0 {
                go();
            } else {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(go);
            }
            assert!(got == want, "{threads} threads");
            assert_eq!(last, 1.0);
        }
    }

    /// The parallel sampler's noise is N(0, σ²): all rows of the class are 0, so every output
    /// entry is pure noise. Kolmogorov–Smirnov against Φ at α = 1e-6 (critical value
    /// sqrt(ln(2/α)/(2n))), fixed seed, 4 threads, 160,000 draws over 79 blocks.
    #[test]
    fn parallel_noise_is_gaussian_ks() {
        use crate::math::DetFloat;
        use crate::mechanisms::gaussian::normal_cdf;
        let d = 8;
        let n_rows = 50;
        let f = vec![0f32; n_rows * d];
        let classes = vec![(0..n_rows as u32).collect::<Vec<u32>>()];
        let sigma = 0.7;
        let cfg = CdaConfig {
            mix: 4,
            sigma_x: sigma,
            sigma_y: None,
            per_class: vec![20_000],
            clip: 4.0,
        };
        let (rows, _) = run_in(4, &f, d, &classes, &cfg, 20261124);
        let mut xs: Vec<f64> = rows.iter().map(|&x| f64::from(x) / sigma).collect();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let nf = xs.len() as f64;
        let mut ks = 0.0f64;
        for (i, &x) in xs.iter().enumerate() {
            let c = normal_cdf(x);
            ks = ks
                .max((c - i as f64 / nf).abs())
                .max(((i + 1) as f64 / nf - c).abs());
        }
        let crit = ((2.0f64 / 1e-6).dln() / (2.0 * nf)).sqrt();
        assert!(ks < crit, "KS statistic {ks} ≥ critical {crit}");
    }

    /// The parallel sampler's mixes are uniform over the distinct l-subsets: pool of 6 rows
    /// e_0..e_5, l = 3, σ tiny, so each mix reveals its subset (entries 1/3 where chosen; a
    /// repeated row would show as 2/3). Chi-square over the C(6,3) = 20 subsets, 40,000 mixes,
    /// 19 degrees of freedom, critical value 63.68 at α = 1e-6; fixed seed, 4 threads.
    #[test]
    fn parallel_mixes_are_uniform_over_distinct_subsets() {
        let n = 6;
        let mut f = vec![0f32; n * n];
        for i in 0..n {
            f[i * n + i] = 1.0;
        }
        let classes = vec![(0..n as u32).collect::<Vec<u32>>()];
        let t = 40_000;
        let cfg = CdaConfig {
            mix: 3,
            sigma_x: 1e-3,
            sigma_y: None,
            per_class: vec![t],
            clip: 4.0,
        };
        let (rows, _) = run_in(4, &f, n, &classes, &cfg, 7);
        let mut counts = std::collections::HashMap::new();
        for r in rows.chunks_exact(n) {
            let mut mask = 0u32;
            for (j, &x) in r.iter().enumerate() {
                let m = (x * 3.0).round();
                assert!(m == 0.0 || m == 1.0, "entry {x}: a row drawn twice or lost");
                if m == 1.0 {
                    mask |= 1 << j;
                }
            }
            assert_eq!(mask.count_ones(), 3, "{r:?}");
            *counts.entry(mask).or_insert(0usize) += 1;
        }
        assert_eq!(counts.len(), 20, "every 3-subset must occur");
        let e = t as f64 / 20.0;
        let chi2: f64 = counts.values().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 63.68, "chi-square {chi2} ≥ 63.68 (α = 1e-6, 19 df)");
    }

    #[test]
    fn seeded_runs_reproduce() {
        let (f, classes) = toy();
        let cfg = CdaConfig {
            mix: 3,
            sigma_x: 1.0,
            sigma_y: None,
            per_class: vec![4, 4],
            clip: 4.0,
        };
        let run = |seed| {
            let mut out = Vec::new();
            run_dense(&f, 2, &classes, &cfg, seed, |_, r| {
                out.extend_from_slice(r);
            });
            out
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }
}
