//! DP-CDA: class-centric data aggregation (SPEC §1.1; `papers/dp-cda-2026-v3.txt`,
//! Algorithm 1).
//!
//! For each class k, each synthetic row averages l distinct rows of class k (drawn uniformly
//! without replacement inside the draw) and adds N(0, σx² I) to the average. In label-free
//! mode (the default) the label is k itself; in paper mode the averaged one-hot label gets
//! N(0, σy² I) and the label is its argmax. The noise step is [`generate`].
//!
//! # Privacy proof note
//!
//! *Adjacency.* Datasets are neighbours when one record's feature vector is replaced and its
//! label kept (so the class sizes n_k are the same in both; they, the label set and the row
//! count are public under this adjacency and the receipt says so). In paper mode we follow the
//! paper's accounting, which also charges the label noise.
//!
//! *One row.* Every input row is clipped to ‖x‖₂ ≤ c before mixing (`preprocess::clip`). A mix
//! is f(S) = (1/l)Σ_{i∈S} x_i for a size-l subset S; replacing one x_i by x_i' moves it by
//! ‖x_i − x_i'‖/l ≤ 2c/l. Adding N(0, σx² I) is the Gaussian mechanism with noise multiplier
//! z = σx/(2c/l) (with the label term in paper mode: 1/z² = (2c/l)²/σx² + (√2/l)²/σy²), which is
//! (α, α/(2z²))-RDP (Mironov 2017, Prop. 7). The label-free label k is the same for neighbours,
//! and the average of l one-hot vectors of class k is always e_k, so it costs nothing.
//!
//! *Subsampling.* S is a uniform size-l subset of class k's n_k rows, i.e. sampling without
//! replacement at rate q = l/n_k under replace-one adjacency, which is exactly the setting of
//! Wang–Balle–Kasiviswanathan 2019, Theorems 9/27 ([`crate::accountant::subsampled_gaussian`]).
//! The bound grows with q, so using q = l/min_k n_k is conservative for every class.
//!
//! *Composition.* Each mix uses fresh randomness (subset and noise), so T_k mixes of class k
//! compose to T_k × ε'(α). A replaced record belongs to exactly one class and the other
//! classes' outputs do not depend on it, so in label-free mode the release is
//! max_k T_k × ε'_k(α)-RDP ≤ T_max × ε'(α; q = l/n_min) (parallel composition). Paper mode
//! charges all T rows, as the paper does. Releases made before the mixing (DP normalization
//! statistics) are added order by order. Conversion to (ε, δ) and the choice of orders are in
//! [`crate::accountant`].
//!
//! *Post-processing.* Mapping back to original units, one-hot argmax decoding and rounding
//! touch only the noisy output and public (or separately accounted) statistics.

pub mod accounting;

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

/// The DP-CDA noise step.
///
/// `features` is row-major n × d, already normalized and clipped to norm ≤ c;
/// `classes[k]` lists the row indices of class k. Rows are emitted round-robin over classes
/// through `sink(label, row)`; `progress` gets the finished fraction now and then.
/// Work per row is O(l·d): the l indices are drawn by Floyd's algorithm (rand's
/// `index::sample`), never by materialising an n-length weight vector.
pub fn generate<R: Rng + ?Sized>(
    features: &[f32],
    d: usize,
    classes: &[Vec<u32>],
    cfg: &CdaConfig,
    rng: &mut R,
    mut sink: impl FnMut(usize, &[f32]) -> Result<()>,
    mut progress: impl FnMut(f64),
) -> Result<()> {
    let k_count = classes.len();
    if cfg.per_class.len() != k_count {
        return Err(Error::Data(
            "internal: per-class counts do not match the classes".into(),
        ));
    }
    if d == 0 || features.len() % d != 0 {
        return Err(Error::Data(
            "there are no feature columns besides the label".into(),
        ));
    }
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    let names: Vec<String> = (0..k_count).map(|k| k.to_string()).collect();
    check_pools(&sizes, &names, cfg.mix)?;
    let gx = Gaussian::new("sigma-x", cfg.sigma_x)?;
    let gy = cfg
        .sigma_y
        .map(|s| Gaussian::new("sigma-y", s))
        .transpose()?;
    let total: usize = cfg.per_class.iter().sum();
    let inv_l = 1.0 / cfg.mix as f32;
    let mut acc = vec![0f32; d];
    let mut label_scores = vec![0f64; k_count];
    let mut remaining = cfg.per_class.clone();
    let mut done = 0usize;
    let step = (total / 100).max(1);
    while done < total {
        for k in 0..k_count {
            if remaining[k] == 0 {
                continue;
            }
            remaining[k] -= 1;
            let pool = &classes[k];
            acc.iter_mut().for_each(|a| *a = 0.0);
            for i in rand::seq::index::sample(rng, pool.len(), cfg.mix).into_iter() {
                let r = pool[i] as usize;
                let row = &features[r * d..(r + 1) * d];
                for (a, &x) in acc.iter_mut().zip(row) {
                    *a += x;
                }
            }
            for a in acc.iter_mut() {
                *a *= inv_l;
            }
            gx.add_to(&mut acc, rng);
            let label = match &gy {
                None => k,
                Some(g) => {
                    // Averaged one-hot of class k is e_k; add noise and take the argmax.
                    for (j, s) in label_scores.iter_mut().enumerate() {
                        *s = if j == k { 1.0 } else { 0.0 } + g.sample(rng);
                    }
                    argmax(&label_scores)
                }
            };
            sink(label, &acc)?;
            done += 1;
            if done % step == 0 {
                progress(done as f64 / total as f64);
            }
        }
    }
    progress(1.0);
    Ok(())
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
        };
        let mut counts = [0usize; 2];
        let mut rng = ReleaseRng::seeded(1);
        generate(
            &f,
            2,
            &classes,
            &cfg,
            &mut rng,
            |k, row| {
                counts[k] += 1;
                // Mixed features stay near the class mean (σx = 0.1).
                let own = if k == 0 { row[0] } else { row[1] };
                assert!((own - 1.0).abs() < 0.6, "class {k} row {row:?}");
                Ok(())
            },
            |_| {},
        )
        .unwrap();
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
        };
        let mut sum = 0.0f64;
        let mut sq = 0.0f64;
        generate(
            &f,
            1,
            &classes,
            &cfg,
            &mut ReleaseRng::seeded(3),
            |_, r| {
                sum += f64::from(r[0]);
                sq += f64::from(r[0]) * f64::from(r[0]);
                Ok(())
            },
            |_| {},
        )
        .unwrap();
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
        };
        let mut wrong = 0;
        generate(
            &f,
            2,
            &classes,
            &quiet,
            &mut ReleaseRng::seeded(5),
            |k, r| {
                if (k == 0) != (r[0] > r[1]) {
                    wrong += 1;
                }
                Ok(())
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(wrong, 0);
        let loud = CdaConfig {
            sigma_y: Some(10.0),
            ..quiet
        };
        let mut labels = [0usize; 2];
        generate(
            &f,
            2,
            &classes,
            &loud,
            &mut ReleaseRng::seeded(5),
            |k, _| {
                labels[k] += 1;
                Ok(())
            },
            |_| {},
        )
        .unwrap();
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

    #[test]
    fn seeded_runs_reproduce() {
        let (f, classes) = toy();
        let cfg = CdaConfig {
            mix: 3,
            sigma_x: 1.0,
            sigma_y: None,
            per_class: vec![4, 4],
        };
        let run = |seed| {
            let mut out = Vec::new();
            generate(
                &f,
                2,
                &classes,
                &cfg,
                &mut ReleaseRng::seeded(seed),
                |_, r| {
                    out.extend_from_slice(r);
                    Ok(())
                },
                |_| {},
            )
            .unwrap();
            out
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }
}
