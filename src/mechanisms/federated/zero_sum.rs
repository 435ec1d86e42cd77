//! Zero-sum correlated noise e_1..e_S (Σ_s e_s = 0, marginal N(0, τ_e²)), both ways of
//! making them (one process for all parties, or pairwise seeds between real parties); the
//! variance derivations are in the [parent module](super)'s proof note.
//!
//! * [`centered`]: simulation — u_s ~ N(0, τ_e²·S/(S−1)), e_s = u_s − ū.
//! * [`PairStreams`]: real parties — e_s = Σ_{s'>s} r_{ss'} − Σ_{s'<s} r_{s's}, with
//!   r_{ss'} ~ N(0, τ_e²/(S−1)) read from a stream both s and s' derive from their shared seed
//!   ([`super::pairwise`]).

use crate::error::{Error, Result};
use crate::mechanisms::gaussian::Gaussian;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// Fills `out` (length S) with one zero-sum draw: u_s − ū, u_s ~ N(0, τ_e²·S/(S−1)).
pub fn centered<R: Rng + ?Sized>(rng: &mut R, tau_e: f64, out: &mut [f64]) -> Result<()> {
    let s = out.len();
    if s < 2 {
        return Err(Error::param(
            "clients",
            s,
            "zero-sum noise needs at least 2 parties",
        ));
    }
    let g = Gaussian::new("tau-e", tau_e * (s as f64 / (s as f64 - 1.0)).sqrt())?;
    let mut mean = 0.0;
    for v in out.iter_mut() {
        *v = g.sample(rng);
        mean += *v;
    }
    mean /= s as f64;
    for v in out.iter_mut() {
        *v -= mean;
    }
    Ok(())
}

/// The pair streams of one party: for each peer, the sign (+1 if this party's id is the
/// smaller) and the peer's stream of standard normals.
pub struct PairStreams {
    /// (sign, stream) per peer.
    pub streams: Vec<(f64, ChaCha20Rng)>,
    /// Std of each pairwise term, τ_e/√(S−1).
    pub pair_std: f64,
}

impl PairStreams {
    /// `clients` is the federation size S (peers present or not: each party adds the terms of
    /// all S−1 pairs).
    pub fn new(streams: Vec<(f64, ChaCha20Rng)>, tau_e: f64, clients: usize) -> Result<Self> {
        if clients < 2 || streams.len() != clients - 1 {
            return Err(Error::Data(format!(
                "internal: {} pair streams for a federation of {clients}",
                streams.len()
            )));
        }
        let pair_std = tau_e / ((clients - 1) as f64).sqrt();
        Gaussian::new("tau-e", pair_std)?;
        Ok(PairStreams { streams, pair_std })
    }

    /// This party's next e value: Σ_pairs sign·r.
    pub fn draw(&mut self) -> f64 {
        let mut e = 0.0;
        for (sign, st) in self.streams.iter_mut() {
            let z: f64 = st.sample(rand_distr::StandardNormal);
            e += *sign * z * self.pair_std;
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gaussian::{ks_crit, ks_normal};
    use crate::rng::ReleaseRng;
    use rand::SeedableRng;

    #[test]
    fn centered_sums_to_zero_with_marginal_tau_e() {
        let mut rng = ReleaseRng::seeded(11);
        let s = 5;
        let tau = 2.5;
        let n = 20000;
        let mut marg = Vec::with_capacity(n);
        let mut cross = 0.0;
        let mut e = vec![0.0; s];
        for _ in 0..n {
            centered(&mut rng, tau, &mut e).unwrap();
            let sum: f64 = e.iter().sum();
            assert!(sum.abs() < 1e-12 * tau * s as f64, "{sum}");
            marg.push(e[1]);
            cross += e[1] * e[3];
        }
        // Marginal N(0, τ_e²): KS at α = 1e-6.
        let d = ks_normal(&mut marg, tau);
        assert!(d < ks_crit(n), "KS {d}");
        // A wrong variance (the paper's τ_e² S/(S−1) marginal) is rejected by the same test.
        let mut m2 = marg.clone();
        assert!(ks_normal(&mut m2, tau * (1.25f64).sqrt()) > ks_crit(n));
        // Covariance −τ_e²/(S−1) = −1.5625; sample covariance sd ≈ τ²·√(1+ρ²)/√n ≈ 0.046:
        // 6 sd ≈ 0.28.
        let c = cross / n as f64;
        assert!((c + tau * tau / 4.0).abs() < 0.28, "{c}");
    }

    #[test]
    fn pairwise_terms_cancel_and_have_marginal_tau_e() {
        // Three parties 0 < 1 < 2 with one stream per pair, shared by both ends.
        let s = 3;
        let tau = 0.7;
        let seed = |a: u64, b: u64| ChaCha20Rng::seed_from_u64(1000 * a + b);
        let mk = |me: u64| {
            let mut v = Vec::new();
            for p in 0..3u64 {
                if p != me {
                    let (lo, hi) = (me.min(p), me.max(p));
                    v.push((if me < p { 1.0 } else { -1.0 }, seed(lo, hi)));
                }
            }
            PairStreams::new(v, tau, s).unwrap()
        };
        let mut parties: Vec<PairStreams> = (0..3).map(mk).collect();
        let n = 20000;
        let mut marg = Vec::with_capacity(n);
        for _ in 0..n {
            let e: Vec<f64> = parties.iter_mut().map(|p| p.draw()).collect();
            let sum: f64 = e.iter().sum();
            assert!(sum.abs() < 1e-13, "{sum}");
            marg.push(e[0]);
        }
        let d = ks_normal(&mut marg, tau);
        assert!(d < ks_crit(n), "KS {d}");
        assert!(PairStreams::new(vec![], tau, 3).is_err());
    }
}
