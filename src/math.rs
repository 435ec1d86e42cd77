//! Transcendental functions that give the same bits on every target.
//!
//! `f64::ln`, `exp`, ... call the platform's libm (glibc natively, a Rust port of musl's in
//! wasm32), whose last bits differ. The accountant, the calibration and the samplers use
//! these wrappers over the pure-Rust `libm` crate instead, so that a seeded run in the
//! browser and on the command line gives byte-identical output (the parity tests check it).

/// Deterministic `ln`, `exp`, `ln_1p`, `exp_m1` and `powf` as methods, spelled with a `d`
/// prefix so a search finds every use.
pub trait DetFloat {
    /// Natural logarithm.
    fn dln(self) -> Self;
    /// e^x.
    fn dexp(self) -> Self;
    /// ln(1 + x).
    fn dln_1p(self) -> Self;
    /// e^x − 1.
    fn dexp_m1(self) -> Self;
    /// x^y.
    fn dpowf(self, y: Self) -> Self;
}

impl DetFloat for f64 {
    #[inline]
    fn dln(self) -> f64 {
        libm::log(self)
    }
    #[inline]
    fn dexp(self) -> f64 {
        libm::exp(self)
    }
    #[inline]
    fn dln_1p(self) -> f64 {
        libm::log1p(self)
    }
    #[inline]
    fn dexp_m1(self) -> f64 {
        libm::expm1(self)
    }
    #[inline]
    fn dpowf(self, y: f64) -> f64 {
        libm::pow(self, y)
    }
}

/// `x.trunc()`, bit for bit (±0, ±∞ and NaN included), without the libm call that
/// `f64::trunc` is on x86-64's baseline (rounding instructions came with SSE4.1): below 2^52
/// in magnitude through the exact `i64` conversion, the sign put back (for −0.5 → −0);
/// at or above it every f64 is already an integer. On wasm32 `f64.trunc` is one instruction.
#[inline]
pub fn trunc(x: f64) -> f64 {
    if cfg!(target_arch = "wasm32") {
        return x.trunc();
    }
    if x.abs() < 4_503_599_627_370_496.0 {
        ((x as i64) as f64).copysign(x)
    } else {
        x
    }
}

/// `x.fract()`, bit for bit: x − [`trunc`]\(x) (exact for every finite x).
#[inline]
pub fn fract(x: f64) -> f64 {
    x - trunc(x)
}

#[cfg(test)]
mod tests {
    use super::DetFloat;

    /// [`super::trunc`] and [`super::fract`] equal std's bit for bit on halves, near-halves,
    /// ±0, the 2^52 boundary, huge values, ±∞, NaN and 100,000 random doubles of every
    /// magnitude.
    #[test]
    fn trunc_and_fract_are_std_bit_for_bit() {
        use rand::{Rng, SeedableRng};
        let b = 4_503_599_627_370_496.0f64;
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            0.49999999999999994,
            -0.49999999999999994,
            1.0,
            -1.0,
            1.5,
            -1.5,
            2.5,
            -2.5,
            b,
            -b,
            b - 0.5,
            -(b - 0.5),
            b + 1.0,
            2.0 * b,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            9.0e15,
            -9.0e15,
            9.3e18,
            -9.3e18,
        ];
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        for _ in 0..100_000 {
            xs.push(f64::from_bits(rng.gen::<u64>()));
            xs.push(rng.gen_range(-1e6..1e6));
        }
        for x in xs {
            assert_eq!(
                super::trunc(x).to_bits(),
                x.trunc().to_bits(),
                "trunc {x:e}"
            );
            let (a, b) = (super::fract(x), x.fract());
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "fract {x:e}: {a:e} vs {b:e}"
            );
        }
    }

    #[test]
    fn agrees_with_std_to_an_ulp_or_two() {
        for &x in &[1e-300, 1e-9, 0.3, 1.0, 2.5, 700.0] {
            let close = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs());
            assert!(close(x.dln(), x.ln()), "ln {x}");
            assert!(
                close((-x.min(700.0)).dexp(), (-x.min(700.0)).exp()),
                "exp {x}"
            );
            assert!(close(x.dln_1p(), x.ln_1p()), "ln_1p {x}");
            assert!(
                close(x.min(1.0).dexp_m1(), x.min(1.0).exp_m1()),
                "exp_m1 {x}"
            );
            assert!(close(x.dpowf(0.37), x.powf(0.37)), "powf {x}");
        }
    }
}
