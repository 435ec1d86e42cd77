//! The mixing kernel: one noisy mix of l distinct rows of a pool.
//!
//! DP-CDA ([`super::generate`]), the federated simulation and a federated party's contribution
//! ([`crate::federated`]), and DPMix ([`crate::mechanisms::dpmix::generate`], whose pool is
//! the whole dataset) all make their rows with [`Mixer::draw`]: draw a uniform size-l
//! subset of a pool of row indices (Floyd's algorithm, rand's `index::sample`: O(l), never an
//! n-length weight vector), average those rows' features, and add N(0, σ²) to every
//! coordinate.
//!
//! # Privacy proof note
//!
//! One draw is the subsampled Gaussian mechanism of the DP-CDA proof note ([`super`]): the
//! subset S is uniform over the size-l subsets of the pool (sampling without replacement at
//! rate l/n), the mean (1/l)Σ_{i∈S} x_i of rows clipped to ‖x‖₂ ≤ c moves by at most 2c/l when
//! one row is replaced, and the noise is N(0, σ² I) drawn from the caller's generator, fresh
//! for every draw. The kernel adds no other use of the data or of the randomness, so every
//! caller's accounting (per class, per party) is that of the mechanism it already documents.
//!
//! # Randomness and arithmetic
//!
//! A draw consumes the generator in one fixed order: the subset first, then one standard
//! normal per coordinate, in coordinate order. The arithmetic is the caller's choice of
//! [`MixCell`]: `f32` accumulates and averages in single precision and adds the (f64) noise
//! before rounding to f32 (DP-CDA's rows); `f64` accumulates, averages and adds the noise in
//! double precision (the federated messages, which are summed with further noise before they
//! are rounded, and DPMix's rows). The order and both arithmetics are those the pipelines used
//! before they shared this kernel, so their seeded outputs are unchanged.

use crate::mechanisms::gaussian::Gaussian;
use rand::Rng;

/// The number type a mix is accumulated in (see the module docs).
pub trait MixCell: Copy {
    /// 0.
    const ZERO: Self;
    /// 1/l in this type.
    fn reciprocal(l: usize) -> Self;
    /// Adds one feature value of a drawn row.
    fn accumulate(&mut self, x: f32);
    /// The sum times 1/l, plus one noise draw.
    fn average_plus(self, inv_l: Self, noise: f64) -> Self;
}

impl MixCell for f32 {
    const ZERO: Self = 0.0;
    fn reciprocal(l: usize) -> Self {
        1.0 / l as f32
    }
    #[inline]
    fn accumulate(&mut self, x: f32) {
        *self += x;
    }
    #[inline]
    fn average_plus(self, inv_l: Self, noise: f64) -> Self {
        (f64::from(self * inv_l) + noise) as f32
    }
}

impl MixCell for f64 {
    const ZERO: Self = 0.0;
    fn reciprocal(l: usize) -> Self {
        1.0 / l as f64
    }
    #[inline]
    fn accumulate(&mut self, x: f32) {
        *self += f64::from(x);
    }
    #[inline]
    fn average_plus(self, inv_l: Self, noise: f64) -> Self {
        self * inv_l + noise
    }
}

/// Draws noisy mixes of l distinct rows of a feature matrix.
#[derive(Debug, Clone, Copy)]
pub struct Mixer<'a> {
    features: &'a [f32],
    d: usize,
    mix: usize,
    noise: Gaussian,
}

impl<'a> Mixer<'a> {
    /// A mixer over `features` (row-major n × d, already normalized and clipped) that averages
    /// `mix` = l rows and adds `noise`. The caller has checked l ≥ 1 and that every pool it
    /// draws from has at least l rows ([`super::check_pools`]).
    pub fn new(features: &'a [f32], d: usize, mix: usize, noise: Gaussian) -> Self {
        debug_assert!(d == 0 || features.len() % d == 0);
        Mixer {
            features,
            d,
            mix,
            noise,
        }
    }

    /// The feature dimension d (the length of a mix).
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The mix order l.
    pub fn mix(&self) -> usize {
        self.mix
    }

    /// The noise.
    pub fn noise(&self) -> Gaussian {
        self.noise
    }

    /// Writes one mix of `pool` (row indices into the features, at least l of them) into
    /// `out` (length d): the mean of l distinct rows of the pool drawn uniformly, plus
    /// N(0, σ²) on every coordinate. Draws the subset, then the d noise values in order.
    pub fn draw<C: MixCell, R: Rng + ?Sized>(&self, pool: &[u32], out: &mut [C], rng: &mut R) {
        self.draw_visiting(pool, out, rng, |_| {});
    }

    /// [`Mixer::draw`], also handing each drawn row's index to `visit` (in draw order, before
    /// the noise is drawn): DPMix averages the drawn rows' labels with it.
    pub fn draw_visiting<C: MixCell, R: Rng + ?Sized>(
        &self,
        pool: &[u32],
        out: &mut [C],
        rng: &mut R,
        mut visit: impl FnMut(usize),
    ) {
        let d = self.d;
        debug_assert_eq!(out.len(), d);
        out.fill(C::ZERO);
        for i in rand::seq::index::sample(rng, pool.len(), self.mix).into_iter() {
            let r = pool[i] as usize;
            visit(r);
            for (a, &x) in out.iter_mut().zip(&self.features[r * d..(r + 1) * d]) {
                a.accumulate(x);
            }
        }
        let inv_l = C::reciprocal(self.mix);
        for a in out.iter_mut() {
            *a = a.average_plus(inv_l, self.noise.sample(rng));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use rand_distr::StandardNormal;

    /// Pool rows 0..6 of a 6 × 3 matrix whose row r is (r, 10r, 100r); the pool lists 1..6.
    fn matrix() -> Vec<f32> {
        (0..6)
            .flat_map(|r| [r as f32, 10.0 * r as f32, 100.0 * r as f32])
            .collect()
    }

    /// The draw order is the subset, then one standard normal per coordinate: a draw equals
    /// the mean of the rows `index::sample` picks on a copy of the generator, plus σ times the
    /// standard normals that follow it, and the generator ends where that copy ends.
    #[test]
    fn a_draw_is_the_subset_mean_plus_the_following_normals_f64() {
        let f = matrix();
        let pool: Vec<u32> = (1..6).collect();
        let sigma = 0.25;
        let m = Mixer::new(&f, 3, 3, Gaussian::new("sigma", sigma).unwrap());
        let mut rng = ChaCha20Rng::seed_from_u64(17);
        let mut copy = rng.clone();
        let mut out = [9.0f64; 3];
        m.draw(&pool, &mut out, &mut rng);
        let picked: Vec<usize> = rand::seq::index::sample(&mut copy, 5, 3).into_vec();
        let mut distinct = picked.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{picked:?}");
        for (j, scale) in [1.0f64, 10.0, 100.0].iter().enumerate() {
            let mean = picked
                .iter()
                .map(|&i| f64::from(pool[i]) * scale)
                .sum::<f64>()
                / 3.0;
            let z: f64 = copy.sample(StandardNormal);
            let want = mean + sigma * z;
            assert!((out[j] - want).abs() <= 1e-12 * want.abs().max(1.0), "{j}");
        }
        assert_eq!(
            rng.gen::<u64>(),
            copy.gen::<u64>(),
            "generator positions differ"
        );
    }

    /// The same with f32 cells: mean in single precision, noise added in double and rounded.
    #[test]
    fn a_draw_is_the_subset_mean_plus_the_following_normals_f32() {
        let f = matrix();
        let pool: Vec<u32> = (0..6).collect();
        let sigma = 2.0;
        let m = Mixer::new(&f, 3, 2, Gaussian::new("sigma", sigma).unwrap());
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut copy = rng.clone();
        let mut out = [5.0f32; 3];
        m.draw(&pool, &mut out, &mut rng);
        let picked: Vec<usize> = rand::seq::index::sample(&mut copy, 6, 2).into_vec();
        assert_ne!(picked[0], picked[1]);
        for (j, scale) in [1.0f64, 10.0, 100.0].iter().enumerate() {
            let mean = picked.iter().map(|&i| i as f64 * scale).sum::<f64>() / 2.0;
            let z: f64 = copy.sample(StandardNormal);
            let want = mean + sigma * z;
            assert!(
                (f64::from(out[j]) - want).abs() <= 1e-5 * want.abs().max(1.0),
                "{j}"
            );
        }
        assert_eq!(
            rng.gen::<u64>(),
            copy.gen::<u64>(),
            "generator positions differ"
        );
    }

    /// With l = the pool size every draw is the pool mean plus noise: over 20,000 draws the
    /// mean is within 6 standard errors (α ≈ 2e-9) of it and the spread within 4 % of σ.
    #[test]
    fn full_pool_draws_center_on_the_pool_mean() {
        let f = matrix();
        let pool: Vec<u32> = vec![0, 2, 4];
        let sigma = 0.5;
        let m = Mixer::new(&f, 3, 3, Gaussian::new("sigma", sigma).unwrap());
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let n = 20_000;
        let (mut sum, mut sq) = (0.0f64, 0.0f64);
        let mut out = [0f64; 3];
        for _ in 0..n {
            m.draw(&pool, &mut out, &mut rng);
            sum += out[1];
            sq += (out[1] - 20.0).powi(2);
        }
        let mean = sum / n as f64;
        let sd = (sq / n as f64).sqrt();
        assert!(
            (mean - 20.0).abs() < 6.0 * sigma / (n as f64).sqrt(),
            "{mean}"
        );
        assert!((sd / sigma - 1.0).abs() < 0.04, "{sd}");
    }
}
