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

#[cfg(test)]
mod tests {
    use super::DetFloat;

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
