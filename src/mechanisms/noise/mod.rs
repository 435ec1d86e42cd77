//! Exact noise: the discrete Gaussian and discrete Laplace on a grid 2^k, sampled in integer
//! arithmetic (Canonne, Kamath, Steinke 2020, "The discrete Gaussian for differential
//! privacy", NeurIPS), as OpenDP does.
//!
//! Floating-point Gaussian noise x + fl(σ·z) leaks through the pattern of representable
//! values (Mironov 2012, "On significance of the least significant bits for differential
//! privacy"; Jin et al. 2022, "Are we there yet? Timing and floating-point attacks on
//! differential privacy systems"). This module removes the floating point from the noise:
//!
//! * [`exact`]: the samplers. Every coin is a Bernoulli of a rational number (or of e^{−γ}
//!   with γ rational, CKS20 Algorithm 1) resolved by comparing lazily drawn random bits with
//!   the exact binary expansion of the rational, or of a number M·e^{−γ}/n (M, n integers,
//!   γ rational) resolved by comparing random bits with rigorous bounds on it; the discrete
//!   Laplace is CKS20 Algorithm 2 (exact geometric sampling), the discrete Gaussian a discrete
//!   ziggurat (`table.rs`: about 14 ns/draw at σ = 2^17 grid units, 2× the float ziggurat;
//!   CKS20 Algorithm 3 is kept as the reference).
//! * [`GridGaussian`]: the release helper. A statistic x ∈ ℝ^m is released as
//!   `g·(round(x/g) + Z)` with g = 2^k and Z a vector of independent discrete Gaussians of
//!   scale σ/g; the arithmetic g·(integer) is exact in f64, so the released number is a
//!   deterministic, injective function of the integer r + Z.
//! * [`GridLaplace`]: the same for counts and weights with discrete Laplace noise.
//!
#![doc = include_str!("PROOF.md")]

pub mod exact;
mod expbounds;
mod table;

pub use exact::{Bits, DiscreteGaussian, DiscreteLaplace};

use crate::error::{Error, Result};
use rand::RngCore;

/// Largest |x/g| that is released (beyond it, g·(r + Z) might not be exact in f64).
const MAX_UNITS: f64 = (1u64 << 52) as f64;

/// 2^k for the largest k with 2^k ≤ x (x > 0 finite), by exponent arithmetic only.
pub(crate) fn pow2_floor(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    let mut g = 1.0f64;
    while g > x {
        g *= 0.5;
    }
    while g * 2.0 <= x {
        g *= 2.0;
    }
    g
}

/// g = 2^k with g ≥ 2^-1000 and g ≤ 2^1000, or an error naming the parameter.
fn check_grid(g: f64) -> Result<f64> {
    if g.is_finite()
        && g > 0.0
        && g == pow2_floor(g)
        && g >= 2f64.powi(-1000)
        && g <= 2f64.powi(1000)
    {
        Ok(g)
    } else {
        Err(Error::param(
            "grid",
            g,
            "the grid must be a power of two (2^k, |k| ≤ 1000)",
        ))
    }
}

fn check_positive(name: &str, x: f64, what: &str) -> Result<f64> {
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(Error::param(
            name,
            x,
            format!("{what} must be a positive finite number"),
        ))
    }
}

/// The next f64 above a positive finite x (f64::next_up is newer than the crate's MSRV).
pub(crate) fn up(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    f64::from_bits(x.to_bits() + 1)
}

/// The next f64 below a positive finite x.
fn down(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    f64::from_bits(x.to_bits() - 1)
}

/// round(x/g), half away from zero, as an integer (x/g is exact: g is a power of two).
#[inline]
fn to_units(x: f64, g: f64) -> Result<i64> {
    to_units_inv(x, g, 1.0 / g)
}

/// [`to_units`] with 1/g given: x·(1/g) is the same correctly rounded number as x/g, since
/// 1/g = 2^{−k} is exact (|k| ≤ 1000).
#[inline]
fn to_units_inv(x: f64, g: f64, inv_g: f64) -> Result<i64> {
    let s = x * inv_g;
    if s.is_nan() || s.abs() > MAX_UNITS {
        return Err(Error::Data(format!(
            "a value to release ({x}) is not finite or too large for the noise grid {g:e}; clip or rescale it first"
        )));
    }
    // f64::round without the libm call: truncate (exact for |s| ≤ 2^52), then the
    // remainder s − t (exact) decides the half-away-from-zero step.
    let t = s as i64;
    let frac = s - t as f64;
    Ok(if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    })
}

#[inline]
fn from_units(u: i64, g: f64) -> Result<f64> {
    if u.unsigned_abs() > 2 * MAX_UNITS as u64 {
        return Err(Error::Data(
            "internal: a noisy value left the exact range of the grid".into(),
        ));
    }
    Ok(u as f64 * g)
}

/// Gaussian release on a grid: `g·(round(x/g) + Z)`, Z ~ N_ℤ(0, (σ/g)²) per coordinate.
#[derive(Debug, Clone)]
pub struct GridGaussian {
    grid: f64,
    inv_grid: f64,
    sigma: f64,
    sensitivity: f64,
    coords: usize,
    dg: DiscreteGaussian,
}

impl GridGaussian {
    /// The default grid for noise `sigma` on a statistic of L2 sensitivity `sensitivity`
    /// whose neighbours differ in at most `coords` coordinates (see the proof note).
    pub fn default_grid(sigma: f64, sensitivity: f64, coords: usize) -> Result<f64> {
        check_positive("sigma", sigma, "a noise standard deviation")?;
        check_positive("sensitivity", sensitivity, "a sensitivity")?;
        let m = coords.max(1) as f64;
        let mut g = pow2_floor(sensitivity / 1024.0 / m.sqrt());
        while sigma / g > (1u64 << 30) as f64 {
            g *= 2.0;
        }
        check_grid(g)
    }

    /// Validates and builds; `grid` None takes [`Self::default_grid`].
    pub fn new(sigma: f64, sensitivity: f64, coords: usize, grid: Option<f64>) -> Result<Self> {
        check_positive("sigma", sigma, "a noise standard deviation")?;
        check_positive("sensitivity", sensitivity, "a sensitivity")?;
        if coords == 0 {
            return Err(Error::param(
                "coords",
                coords,
                "a released vector has at least one coordinate",
            ));
        }
        let g = match grid {
            Some(g) => check_grid(g)?,
            None => Self::default_grid(sigma, sensitivity, coords)?,
        };
        let dg = DiscreteGaussian::new("sigma", sigma / g).map_err(|_| {
            Error::param(
                "grid",
                g,
                format!(
                    "σ/grid = {} must lie in [2^-20, 2^31]; choose another grid",
                    sigma / g
                ),
            )
        })?;
        Ok(GridGaussian {
            grid: g,
            inv_grid: 1.0 / g,
            sigma,
            sensitivity,
            coords,
            dg,
        })
    }

    /// The drop-in for a float Gaussian N(0, σ²) on a statistic of L2 sensitivity Δ over at
    /// most m coordinates, *without touching the accountant*: the grid is
    /// [`Self::default_grid`] and the noise is raised from σ to σ·Δ_eff/Δ (rounded up), so
    /// that [`Self::noise_multiplier`] ≥ σ/Δ, the multiplier the caller calibrated and
    /// charged. The extra noise is at most 2^-10 relative (about 0.1 %) whenever
    /// σ·√m/Δ ≤ 2^19; beyond that the grid must be coarser (σ/g ≤ 2^30) and the extra noise
    /// is g·√m/Δ.
    ///
    /// The caller's Δ must bound the sensitivity of the statistic *as computed* (floating
    /// point included): exact for integer counts; for real sums, add a rounding margin.
    pub fn covering(sigma: f64, sensitivity: f64, coords: usize) -> Result<Self> {
        check_positive("sigma", sigma, "a noise standard deviation")?;
        check_positive("sensitivity", sensitivity, "a sensitivity")?;
        let g = Self::default_grid(sigma, sensitivity, coords.max(1))?;
        Self::covering_on(sigma, sensitivity, coords, g)
    }

    /// [`Self::covering`] on a grid fine enough for the PLD accountant's coupling charge
    /// ([`crate::accountant::pld::coupling`]): the noise has at least 2^30 grid units
    /// ([`crate::accountant::pld::coupling::COUPLED_MIN_SIGMA_UNITS`]) and stays below the
    /// sampler's 2^31. The grid is the largest 2^k with σ/2^k ≥ 2^30; where σ/2^k would come
    /// within 2^-12 of 2^31 (the raise of [`Self::covering`] could cross it) the grid is
    /// doubled and σ raised to 2^30 of it, at most 2^-12 relative. The accountant reads the
    /// multiplier of the noise built ([`Self::noise_multiplier`]), so the raise only adds
    /// noise. Refused (an error) where the raise of [`Self::covering`] then crosses 2^31 units,
    /// which needs a raise above 2^-12 (√m·σ/Δ above about 2^18).
    pub fn covering_coupled(sigma: f64, sensitivity: f64, coords: usize) -> Result<Self> {
        use crate::accountant::pld::coupling::COUPLED_MIN_SIGMA_UNITS;
        check_positive("sigma", sigma, "a noise standard deviation")?;
        check_positive("sensitivity", sensitivity, "a sensitivity")?;
        let mut g = pow2_floor(sigma / COUPLED_MIN_SIGMA_UNITS);
        let mut sigma = sigma;
        if sigma / g >= 2.0 * COUPLED_MIN_SIGMA_UNITS * (1.0 - 2f64.powi(-12)) {
            g *= 2.0;
            sigma = sigma.max(COUPLED_MIN_SIGMA_UNITS * g);
        }
        let gg = Self::covering_on(sigma, sensitivity, coords, check_grid(g)?)?;
        if gg.sigma_units() >= COUPLED_MIN_SIGMA_UNITS {
            Ok(gg)
        } else {
            Err(Error::Data(format!(
                "internal: the noise σ = {sigma} has {} grid units, below the coupling's 2^30",
                gg.sigma_units()
            )))
        }
    }

    /// The loop of [`Self::covering`] on the grid `g`: the least σ' ≥ σ·Δ_eff/Δ whose noise
    /// multiplier is at least σ/Δ.
    fn covering_on(sigma: f64, sensitivity: f64, coords: usize, g: f64) -> Result<Self> {
        let m = coords.max(1);
        let want = sigma / sensitivity;
        // Δ_eff and the noise multiplier exactly as `effective_sensitivity` and
        // `noise_multiplier` compute them, without building a sampler table per candidate.
        let d_eff = up(sensitivity / g + (m as f64).sqrt()) * g;
        let mut s = up(sigma * up(d_eff / sensitivity));
        for _ in 0..64 {
            if down(s / d_eff) >= want {
                let gg = GridGaussian::new(s, sensitivity, m, Some(g))?;
                debug_assert!(gg.noise_multiplier() >= want);
                if gg.noise_multiplier() >= want {
                    return Ok(gg);
                }
            }
            s = up(s * (1.0 + 1e-15));
        }
        Err(Error::Data(format!(
            "internal: no exact-noise scale covers σ = {sigma} at sensitivity {sensitivity}"
        )))
    }

    /// The grid g = 2^k.
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// The noise scale in grid units actually used (≥ σ/g).
    pub fn sigma_units(&self) -> f64 {
        self.dg.sigma()
    }

    /// The σ asked for (data units).
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Δ_g = Δ/g + √m, rounded up.
    pub fn sensitivity_units(&self) -> f64 {
        let v = self.sensitivity / self.grid + (self.coords as f64).sqrt();
        up(v)
    }

    /// Δ_eff = g·Δ_g = Δ + g√m (data units): the sensitivity the accountant must use.
    pub fn effective_sensitivity(&self) -> f64 {
        self.sensitivity_units() * self.grid
    }

    /// σ/Δ_eff, rounded down (the accountant's noise multiplier; smaller means more loss).
    pub fn noise_multiplier(&self) -> f64 {
        down(self.sigma / self.effective_sensitivity())
    }

    /// The underlying exact sampler (grid units).
    pub fn sampler(&self) -> &DiscreteGaussian {
        &self.dg
    }

    /// Releases one value.
    #[inline]
    pub fn release_bits<R: RngCore + ?Sized>(&self, x: f64, bits: &mut Bits<'_, R>) -> Result<f64> {
        let u = to_units_inv(x, self.grid, self.inv_grid)?;
        from_units(u + self.dg.sample_bits(bits), self.grid)
    }

    /// Replaces every entry of `row` by its release (the drop-in for `x + N(0, σ²)`).
    /// On a value that cannot be released the error is returned and `row` may be partly
    /// released (the caller discards it).
    pub fn add_noise<R: RngCore + ?Sized>(&self, row: &mut [f64], rng: &mut R) -> Result<()> {
        self.add_noise_with(row, rng, |x| x, |v| v)
    }

    /// [`Self::add_noise`] for f32 rows (released in f64, then written as f32:
    /// post-processing).
    pub fn add_noise_f32<R: RngCore + ?Sized>(&self, row: &mut [f32], rng: &mut R) -> Result<()> {
        self.add_noise_with(row, rng, f64::from, |v| v as f32)
    }

    /// Blocks of 256: every value to grid units first, then 256 draws in one batch.
    fn add_noise_with<T: Copy, R: RngCore + ?Sized>(
        &self,
        row: &mut [T],
        rng: &mut R,
        get: impl Fn(T) -> f64,
        put: impl Fn(f64) -> T,
    ) -> Result<()> {
        let mut bits = Bits::new(rng);
        let mut units = [0i64; 256];
        let mut noise = [0i64; 256];
        for chunk in row.chunks_mut(256) {
            let k = chunk.len();
            for (u, &x) in units.iter_mut().zip(chunk.iter()) {
                *u = to_units_inv(get(x), self.grid, self.inv_grid)?;
            }
            self.dg.fill_bits(&mut noise[..k], &mut bits);
            for ((x, &u), &z) in chunk.iter_mut().zip(&units).zip(&noise) {
                *x = put(from_units(u + z, self.grid)?);
            }
        }
        Ok(())
    }
}

/// Laplace release on a grid: `g·(round(x/g) + L)`, L discrete Laplace of scale b/g (for
/// counts use g = 1: exact geometric noise on integers).
#[derive(Debug, Clone, Copy)]
pub struct GridLaplace {
    grid: f64,
    lap: DiscreteLaplace,
}

impl GridLaplace {
    /// Scale `b` (data units) on grid `g` (a power of two; 1 for counts).
    pub fn new(b: f64, grid: f64) -> Result<Self> {
        check_positive("scale", b, "a Laplace scale")?;
        let g = check_grid(grid)?;
        let lap = DiscreteLaplace::new("scale", b / g)?;
        Ok(GridLaplace { grid: g, lap })
    }

    /// The grid.
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// The scale in grid units actually used (≥ b/g).
    pub fn scale_units(&self) -> f64 {
        self.lap.scale()
    }

    /// ε of the release for an L1 sensitivity Δ₁ over ≤ m coordinates: (Δ₁/g + m)/b_g
    /// (rounded up); for integer counts on g = 1, m = 0 may be passed (no rounding).
    pub fn epsilon(&self, l1_sensitivity: f64, coords: usize) -> f64 {
        up((l1_sensitivity / self.grid + coords as f64) / self.lap.scale())
    }

    /// Releases every entry of `xs`.
    pub fn add_noise<R: RngCore + ?Sized>(&self, xs: &mut [f64], rng: &mut R) -> Result<()> {
        let mut bits = Bits::new(rng);
        for x in xs {
            let u = to_units(*x, self.grid)?;
            *x = from_units(u + self.lap.sample_bits(&mut bits), self.grid)?;
        }
        Ok(())
    }
}

/// Kolmogorov–Smirnov distance between integer draws and N_ℤ(0, s²): the CDF summed over
/// |z| ≤ 14s + 2 (the mass beyond is below e^{−98}), the empirical CDF compared on both sides
/// of every jump. Above s = 1000 the CDF at a draw z is the rounded Gaussian's Φ((z + ½)/s),
/// within the total variation τ(s) ≤ 0.02/s² ≤ 2·10⁻⁸ of the discrete one's
/// ([`crate::accountant::pld::coupling::rounding_tv_bound`]), compared on both sides of every
/// jump of the empirical CDF. The one test helper for every exact-noise test; compare it with
/// `mechanisms::gaussian::ks_crit` (α = 1e-6; for a discrete law the KS statistic is
/// stochastically smaller than for a continuous one, so the level is conservative).
#[cfg(test)]
pub(crate) fn ks_discrete_gaussian(xs: &[i64], s: f64) -> f64 {
    if s > 1000.0 {
        let cdf = |z: i64| crate::accountant::pld::pairs::norm_sf(-((z as f64 + 0.5) / s));
        let mut sorted = xs.to_vec();
        sorted.sort_unstable();
        let nf = xs.len() as f64;
        let (mut d, mut i) = (0.0f64, 0usize);
        while i < sorted.len() {
            let z = sorted[i];
            let below = i;
            while i < sorted.len() && sorted[i] == z {
                i += 1;
            }
            // F(z) against the empirical CDF after z; F(z − 1) against the one before it.
            d = d
                .max((cdf(z) - i as f64 / nf).abs())
                .max((cdf(z - 1) - below as f64 / nf).abs());
        }
        return d;
    }
    let wide = (14.0 * s).ceil() as i64 + 2;
    let w: Vec<f64> = (-wide..=wide)
        .map(|z| (-((z * z) as f64) / (2.0 * s * s)).exp())
        .collect();
    let tot: f64 = w.iter().sum();
    let mut sorted = xs.to_vec();
    sorted.sort_unstable();
    let nf = xs.len() as f64;
    let (mut d, mut cdf, mut i) = (0.0f64, 0.0, 0usize);
    for (j, z) in (-wide..=wide).enumerate() {
        let below = i;
        cdf += w[j] / tot;
        while i < sorted.len() && sorted[i] <= z {
            i += 1;
        }
        // Both sides of the jump at z.
        d = d
            .max((cdf - i as f64 / nf).abs())
            .max((cdf - w[j] / tot - below as f64 / nf).abs());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn grid_choice_and_sensitivity() {
        // MNIST-scale DP-CDA: Δ = 2c/l = 0.5, m = 784.
        let gg = GridGaussian::new(2.0, 0.5, 784, None).unwrap();
        let g = gg.grid();
        assert_eq!(g, pow2_floor(g));
        assert!(
            g * 28.0 <= 0.5 / 1024.0 && g * 2.0 * 28.0 > 0.5 / 1024.0,
            "{g}"
        );
        assert!(gg.effective_sensitivity() >= 0.5 + g * 28.0);
        assert!(gg.effective_sensitivity() <= 0.5 * (1.0 + 1.0 / 1024.0) * (1.0 + 1e-12));
        assert!(gg.noise_multiplier() < 4.0 && gg.noise_multiplier() > 4.0 / 1.001);
        assert!(gg.sigma_units() >= 2.0 / g);
        // Explicit grid.
        let gg = GridGaussian::new(1.0, 1.0, 1, Some(0.25)).unwrap();
        assert_eq!(gg.sensitivity_units(), up(5.0));
    }

    #[test]
    fn releases_lie_on_the_grid_and_are_centred() {
        let gg = GridGaussian::new(0.3, 0.1, 4, None).unwrap();
        let g = gg.grid();
        let mut rng = ReleaseRng::seeded(9);
        let n = 100_000;
        let mut row = vec![1.234_567; n];
        gg.add_noise(&mut row, &mut rng).unwrap();
        for &v in &row {
            assert_eq!((v / g).fract(), 0.0);
        }
        let mean = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        // Mean within 5.33 standard errors (α = 1e-6), variance within 3 %.
        assert!(
            (mean - 1.234_567).abs() < 5.33 * 0.3 / (n as f64).sqrt() + g,
            "{mean}"
        );
        assert!((var.sqrt() / 0.3 - 1.0).abs() < 0.03, "{}", var.sqrt());
        let mut r32 = vec![0.5f32; 8];
        gg.add_noise_f32(&mut r32, &mut rng).unwrap();
        assert!(r32.iter().all(|v| v.is_finite()));
    }

    /// `covering` keeps the caller's noise multiplier (σ/Δ) and costs at most 2^-10 in σ.
    #[test]
    fn covering_keeps_the_calibrated_multiplier() {
        for &(sigma, sens, m) in &[
            (2.0, 0.5, 784usize),
            (1.3, std::f64::consts::SQRT_2, 2),
            (1e-3, 1.0, 1),
            (7e3, 3.0, 100),
            (0.37, 0.37, 64),
        ] {
            let gg = GridGaussian::covering(sigma, sens, m).unwrap();
            assert!(gg.noise_multiplier() >= sigma / sens, "{sigma} {sens} {m}");
            assert!(gg.sigma() >= sigma);
            assert!(
                gg.sigma() <= sigma * (1.0 + 1.0 / 1024.0) * (1.0 + 1e-12),
                "{}",
                gg.sigma()
            );
            assert!(gg.sigma_units() >= gg.sigma() / gg.grid());
        }
        // σ·√m/Δ far above 2^19: a coarser grid, more extra noise, still covered.
        let gg = GridGaussian::covering(7e5, 3.0, 100_000).unwrap();
        assert!(gg.noise_multiplier() >= 7e5 / 3.0);
        assert!(gg.sigma() > 7e5 * (1.0 + 1.0 / 1024.0));
        assert!(GridGaussian::covering(0.0, 1.0, 1).is_err());
        assert!(GridGaussian::covering(1.0, f64::NAN, 1).is_err());
    }

    /// `covering_coupled` keeps the multiplier too, on a grid where the noise has between 2^30
    /// and 2^31 units, also where σ sits just below 2^31 units of a grid (that grid is doubled
    /// and σ raised by at most 2^-12); a raise beyond the sampler's range is refused.
    #[test]
    fn coupled_covering_has_two_to_the_thirty_units() {
        let (lo, hi) = (2f64.powi(30), 2f64.powi(31));
        let near_top = 2f64.powi(31) * (1.0 - 1e-5) * 2f64.powi(-20);
        for &(sigma, sens, m) in &[
            (2.0, 2.0, 150usize),
            (1.3, std::f64::consts::SQRT_2, 11_325),
            (1e-3, 1.0, 1),
            (40.0, 39.6, 784 * 65),
            (0.05, 1.0, 307_720),
            (near_top, 1.0, 784),
        ] {
            let gg = GridGaussian::covering_coupled(sigma, sens, m).unwrap();
            assert!(gg.noise_multiplier() >= sigma / sens, "{sigma} {sens} {m}");
            let units = gg.sigma_units();
            assert!(units >= lo && units < hi, "{sigma}: {units}");
            assert!(gg.sigma() >= sigma);
            assert!(
                gg.sigma() <= sigma * (1.0 + 2f64.powi(-12)) * (1.0 + 1e-3),
                "{sigma}"
            );
        }
        let top = GridGaussian::covering_coupled(near_top, 1.0, 784).unwrap();
        assert_eq!(top.grid(), 2f64.powi(-19));
        // Just below the doubling threshold with a raise of 10^-3 (above 2^-12): past 2^31.
        let edge = 2f64.powi(31) * (1.0 - 2f64.powi(-12)) * (1.0 - 1e-9);
        assert!(GridGaussian::covering_coupled(edge, 1000.0, 1).is_err());
        assert!(GridGaussian::covering_coupled(edge, 1e6, 1).is_ok());
        assert!(GridGaussian::covering_coupled(0.0, 1.0, 1).is_err());
    }

    #[test]
    fn validates() {
        let e = GridGaussian::new(f64::NAN, 1.0, 1, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sigma"), "{e}");
        assert!(GridGaussian::new(1.0, 0.0, 1, None).is_err());
        assert!(GridGaussian::new(1.0, 1.0, 0, None).is_err());
        assert!(GridGaussian::new(1.0, 1.0, 1, Some(0.3))
            .unwrap_err()
            .to_string()
            .contains("grid"));
        assert!(GridGaussian::new(1.0, 1.0, 1, Some(2f64.powi(-40))).is_err());
        let gg = GridGaussian::new(1.0, 1.0, 1, None).unwrap();
        let mut rng = ReleaseRng::seeded(1);
        assert!(gg.add_noise(&mut [f64::NAN], &mut rng).is_err());
        assert!(gg.add_noise(&mut [1e300], &mut rng).is_err());
        assert!(GridLaplace::new(-1.0, 1.0).is_err());
    }

    #[test]
    fn grid_rounding_matches_f64_round() {
        let g = 0.25;
        for x in [
            0.0,
            0.125,
            -0.125,
            0.124,
            0.375,
            -0.375,
            1.0,
            -1.0,
            2.625,
            -2.625,
            1e10 + 0.125,
            -7.999,
            123.456,
            -0.0,
        ] {
            assert_eq!(to_units(x, g).unwrap(), (x / g).round() as i64, "{x}");
        }
        let mut rng = ReleaseRng::seeded(3);
        for _ in 0..10_000 {
            let x = (rng.next_u64() as i64) as f64 / 2f64.powi(40);
            assert_eq!(
                to_units(x, 2f64.powi(-7)).unwrap(),
                (x * 128.0).round() as i64
            );
        }
        assert!(to_units(f64::INFINITY, g).is_err());
        assert!(to_units(f64::NAN, g).is_err());
    }

    #[test]
    fn laplace_counts() {
        // Geometric noise on counts: ε = 1/b for sensitivity 1.
        let gl = GridLaplace::new(2.0, 1.0).unwrap();
        assert_eq!(gl.epsilon(1.0, 0), up(0.5));
        let mut rng = ReleaseRng::seeded(4);
        let mut xs = vec![10.0; 50_000];
        gl.add_noise(&mut xs, &mut rng).unwrap();
        assert!(xs.iter().all(|v| v.fract() == 0.0));
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        // Var of the discrete Laplace with ratio p = e^{-1/2}: 2p/(1-p)².
        let p = (-0.5f64).exp();
        let var_true = 2.0 * p / ((1.0 - p) * (1.0 - p));
        let var = xs.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        assert!((mean - 10.0).abs() < 5.33 * (var_true / n).sqrt(), "{mean}");
        assert!((var / var_true - 1.0).abs() < 0.06, "{var} vs {var_true}");
    }
}
