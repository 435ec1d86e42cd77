//! Properties of the PLD accountant with expectations computed independently of it:
//! closed forms for the Gaussian, Laplace and geometric mechanisms (never below, ≤ 1 % above),
//! monotonicity in σ, T and q, +∞ instead of NaN, and calibration that never overshoots.

use privmix::accountant::pld::mechanisms::{calibrate_cda, cda, cda_z, Adjacency, Plan};
use privmix::accountant::pld::PldOptions;
use privmix::accountant::{default_orders, Preset};
use privmix::mechanisms::cda::accounting::CdaPrivacy;

/// Φ̄ via a continued fraction-free route: erfc from the standard library is not available,
/// so use the complementary error function by high-order series / asymptotics (libm-free).
fn norm_sf(x: f64) -> f64 {
    // W. J. Cody's rational approximations are in libm; here a simple, accurate-enough
    // numerical integral of the density (Simpson, 20000 panels on [x, x + 40]).
    let n = 20000;
    let b = x + 40.0;
    let h = (b - x) / n as f64;
    let f = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let mut s = f(x) + f(b);
    for i in 1..n {
        let t = x + i as f64 * h;
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(t);
    }
    s * h / 3.0
}

fn gauss_delta(mu: f64, eps: f64) -> f64 {
    norm_sf(eps / mu - mu / 2.0) - eps.exp() * norm_sf(eps / mu + mu / 2.0)
}

fn invert(delta_of: impl Fn(f64) -> f64, delta: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 100.0);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if delta_of(m) <= delta {
            hi = m;
        } else {
            lo = m;
        }
    }
    hi
}

#[test]
fn gaussian_epsilon_is_above_and_close_to_the_closed_form() {
    let opts = PldOptions::default();
    for &(z, t, d) in &[
        (1.0, 1u64, 1e-5),
        (10.0, 100, 1e-5),
        (30.0, 6000, 1e-6),
        (0.8, 3, 1e-3),
    ] {
        let mu = (t as f64).sqrt() / z;
        let truth = invert(|e| gauss_delta(mu, e), d);
        let got = Plan::gaussian(z, t).epsilon(d, &opts).unwrap().epsilon;
        assert!(got >= truth, "z={z} T={t}: {got} < {truth}");
        assert!(got <= truth * 1.01, "z={z} T={t}: {got} vs {truth}");
    }
}

#[test]
fn laplace_and_geometric_match_their_closed_forms() {
    let opts = PldOptions::default();
    for &e0 in &[0.5f64, 1.0, 3.0] {
        // Laplace: δ(ε) = 1 − e^{(ε − ε₀)/2} on [0, ε₀].
        for &eps in &[0.0f64, 0.2 * e0, 0.7 * e0] {
            let truth = 1.0 - ((eps - e0) / 2.0).exp();
            let got = Plan::laplace(e0, 1).unwrap().delta(eps, &opts).unwrap();
            assert!(
                got >= truth && got <= truth * 1.01 + 1e-12,
                "Laplace ε₀={e0} ε={eps}: {got} vs {truth}"
            );
            // Geometric: loss ±ε₀, δ(ε) = (1 − e^{ε − ε₀}) / (1 + e^{−ε₀}).
            let truth = (1.0 - (eps - e0).exp()) / (1.0 + (-e0).exp());
            let got = Plan::geometric(e0, 1).unwrap().delta(eps, &opts).unwrap();
            assert!(
                got >= truth && got <= truth * 1.01 + 1e-12,
                "geometric ε₀={e0} ε={eps}: {got} vs {truth}"
            );
        }
        // Pure DP: δ(ε₀) = 0 up to the charges.
        assert!(
            Plan::laplace(e0, 1)
                .unwrap()
                .delta(e0 * 1.01, &opts)
                .unwrap()
                < 1e-9
        );
    }
    // Two Laplace releases: the loss 2ε₀ has mass 1/4, so ε(1e-6) = 2ε₀ − O(1e-5); ours
    // lies at most one grid step above.
    let e = Plan::laplace(1.0, 2)
        .unwrap()
        .epsilon(1e-6, &opts)
        .unwrap()
        .epsilon;
    assert!((2.0 - 1e-5..=2.0 * 1.01).contains(&e), "{e}");
}

#[test]
fn discrete_gaussian_approaches_the_continuous_one() {
    let opts = PldOptions::default();
    let d = Plan::discrete_gaussian(20.0, 1, 100)
        .unwrap()
        .epsilon(1e-5, &opts)
        .unwrap()
        .epsilon;
    let mu = 10.0 / 20.0;
    let truth = invert(|e| gauss_delta(mu, e), 1e-5);
    assert!((d - truth).abs() / truth < 0.01, "{d} vs {truth}");
}

#[test]
fn monotone_in_noise_steps_and_rate() {
    let opts = PldOptions::default();
    let e = |q: f64, z: f64, t: u64| {
        cda_z(q, z, t, Adjacency::LabelKept)
            .unwrap()
            .epsilon(1e-5, &opts)
            .unwrap()
            .epsilon
    };
    let base = e(0.002, 1.0, 5000);
    assert!(e(0.002, 1.2, 5000) < base);
    assert!(e(0.002, 0.9, 5000) > base);
    assert!(e(0.002, 1.0, 8000) > base);
    assert!(e(0.002, 1.0, 3000) < base);
    assert!(e(0.004, 1.0, 5000) > base);
    assert!(e(0.001, 1.0, 5000) < base);
    // The standard adjacency costs at least the label-kept one.
    let s = cda_z(0.002, 1.0, 5000, Adjacency::Standard)
        .unwrap()
        .epsilon(1e-5, &opts)
        .unwrap()
        .epsilon;
    assert!(s >= base);
}

#[test]
fn infinity_not_nan() {
    let opts = PldOptions::default();
    for z in [0.0, -1.0, f64::NAN] {
        let r = Plan::gaussian(z, 10).epsilon(1e-5, &opts).unwrap();
        assert_eq!(r.epsilon, f64::INFINITY, "z={z}");
        let r = cda_z(0.01, z, 10, Adjacency::Standard)
            .unwrap()
            .epsilon(1e-5, &opts)
            .unwrap();
        assert!(!r.epsilon.is_nan());
    }
    // δ below what the charges allow → +∞, not a small number.
    let r = Plan::gaussian(1.0, 10).epsilon(1e-300, &opts).unwrap();
    assert!(r.epsilon.is_infinite() || r.epsilon > 10.0);
    assert!(Plan::gaussian(1.0, 1).epsilon(0.0, &opts).is_err());
    assert!(Plan::gaussian(1.0, 1).epsilon(f64::NAN, &opts).is_err());
    assert!(Plan::gaussian(1.0, 1).delta(f64::NAN, &opts).is_err());
}

#[test]
fn pld_is_below_rdp_and_calibration_never_overshoots() {
    let opts = PldOptions::default();
    let p = CdaPrivacy {
        pool: 2000,
        mix: 4,
        clip: 1.0,
        sigma_x: 1.0,
        sigma_y: None,
        samples: 2000,
    };
    let rdp = p
        .epsilon(1e-5, &default_orders(), Preset::Default, None)
        .unwrap()
        .epsilon;
    let pld = cda(&p, Adjacency::LabelKept)
        .unwrap()
        .epsilon(1e-5, &opts)
        .unwrap()
        .epsilon;
    assert!(pld < rdp, "{pld} vs {rdp}");
    for &target in &[1.0, 4.0] {
        let (sx, r) = calibrate_cda(&p, Adjacency::Standard, target, 1e-5, &opts).unwrap();
        assert!(r.epsilon <= target);
        let mut q = p;
        q.sigma_x = sx;
        let again = cda(&q, Adjacency::Standard)
            .unwrap()
            .epsilon(1e-5, &opts)
            .unwrap()
            .epsilon;
        assert!(again <= target, "{again} > {target}");
        q.sigma_x = sx * 0.999;
        let below = cda(&q, Adjacency::Standard)
            .unwrap()
            .epsilon(1e-5, &opts)
            .unwrap()
            .epsilon;
        assert!(
            below > target * 0.995,
            "σ is far from the smallest: {below} at 0.999σ"
        );
    }
}
