//! The GMM release's tests: every noise path released, accounted and checked against its
//! receipt; bad inputs named; the default design free of the data.

use super::*;
use rand::Rng;
use rand_distr::StandardNormal;

/// A public centre is a shift of every row and back: with the same seed, the release of
/// the data with `center` c is the release of the rows x − c with c added to the means,
/// bit for bit in everything else (ε, weights, covariances, KL); c of the wrong length, or
/// with pca, is refused naming it.
#[test]
fn a_public_center_is_a_shift_and_back() {
    let data = synthetic_paper_data(3, 2, 300, &mut ReleaseRng::seeded(5));
    let c = vec![1.5, -2.0];
    let opts = GmmOptions {
        epsilon: 2.0,
        bound: Some(10.0),
        center: Some(c.clone()),
        ..public(&data)
    };
    let a = release_gmm_data(&data, &opts, &mut ReleaseRng::seeded(9)).unwrap();
    let shifted = GmmData {
        rows: data
            .rows
            .iter()
            .map(|r| r.iter().zip(&c).map(|(x, m)| x - m).collect())
            .collect(),
        ..data.clone()
    };
    let plain = GmmOptions {
        center: None,
        ..opts.clone()
    };
    let b = release_gmm_data(&shifted, &plain, &mut ReleaseRng::seeded(9)).unwrap();
    assert_eq!(a.epsilon, b.epsilon);
    assert_eq!(a.model.weights, b.model.weights);
    assert_eq!(a.model.covariances, b.model.covariances);
    assert_eq!(a.kl, b.kl);
    for (ma, mb) in a.model.means.iter().zip(&b.model.means) {
        for ((x, y), ci) in ma.iter().zip(mb).zip(&c) {
            assert_eq!(*x, y + ci);
        }
    }
    let (ra, rb) = (a.reference.unwrap(), b.reference.unwrap());
    assert_eq!(ra.means[0][1], rb.means[0][1] + c[1]);
    assert!(a
        .receipt
        .guarantee
        .public_information
        .iter()
        .any(|s| s.contains("center c = [1.5, -2.0]")));
    let bad = GmmOptions {
        center: Some(vec![1.0]),
        ..opts.clone()
    };
    let e = release_gmm_data(&data, &bad, &mut ReleaseRng::seeded(9)).unwrap_err();
    assert!(e.to_string().contains("center"), "{e}");
    let with_pca = GmmOptions {
        pca: Some(1),
        ..opts
    };
    let e = release_gmm_data(&data, &with_pca, &mut ReleaseRng::seeded(9)).unwrap_err();
    assert!(e.to_string().contains("pca"), "{e}");
}

/// The default options with the data's classes listed as public (the test made them): the
/// release then keeps every class, however small (the threshold on labels read from the data
/// has its own test, `labels_read_from_the_data_are_released_under_a_threshold`).
fn public(data: &GmmData) -> GmmOptions {
    GmmOptions {
        classes: Some(data.classes.clone()),
        ..GmmOptions::default()
    }
}

/// A public bound chosen by the test (it knows the data): the largest row norm, rounded up.
/// A public box for the samples costs nothing and changes no released number: with the same
/// seed the model is the release without it plus the box (with pca too, the box being in the
/// input's units); the receipt names the box; a box of the wrong length is refused naming it.
#[test]
fn a_support_is_stored_and_changes_nothing_released() {
    let data = synthetic_paper_data(3, 2, 300, &mut ReleaseRng::seeded(5));
    // The data's own range (the test knows the data; a release takes it from public knowledge).
    let range =
        |j: usize, f: fn(f64, f64) -> f64| data.rows.iter().map(|r| r[j]).reduce(f).unwrap();
    let support = Support {
        lower: vec![range(0, f64::min), range(1, f64::min)],
        upper: vec![range(0, f64::max), range(1, f64::max)],
    };
    for pca in [None, Some(1)] {
        let plain = GmmOptions {
            epsilon: 2.0,
            bound: Some(10.0),
            pca,
            ..public(&data)
        };
        let boxed = GmmOptions {
            support: Some(support.clone()),
            ..plain.clone()
        };
        let a = release_gmm_data(&data, &boxed, &mut ReleaseRng::seeded(9)).unwrap();
        let b = release_gmm_data(&data, &plain, &mut ReleaseRng::seeded(9)).unwrap();
        assert_eq!(a.model.support.as_ref(), Some(&support));
        assert_eq!(
            GmmModel {
                support: None,
                marginals: None,
                ..a.model.clone()
            },
            b.model
        );
        assert_eq!((a.epsilon, a.delta), (b.epsilon, b.delta));
        assert!(a
            .receipt
            .guarantee
            .public_information
            .iter()
            .any(|s| s.contains(&format!(
                "lower = {:?}, upper = {:?}",
                support.lower, support.upper
            ))));
        let inside =
            |r: &Vec<f64>| (0..2).all(|j| support.lower[j] <= r[j] && r[j] <= support.upper[j]);
        let (_, rows) = sample(&a.model, 2_000, &mut ReleaseRng::seeded(3)).unwrap();
        assert!(rows.iter().all(inside));
        let (_, free) = sample(&b.model, 2_000, &mut ReleaseRng::seeded(3)).unwrap();
        assert!(
            !free.iter().all(inside),
            "pca {pca:?}: the box must cut something here"
        );
    }
    let short = GmmOptions {
        epsilon: 2.0,
        bound: Some(10.0),
        support: Some(Support {
            lower: vec![0.0],
            upper: vec![1.0],
        }),
        ..public(&data)
    };
    let e = release_gmm_data(&data, &short, &mut ReleaseRng::seeded(9)).unwrap_err();
    assert_eq!(e.param_id().map(|p| p.as_str()), Some("lower"), "{e}");
}

fn bound_of(data: &GmmData) -> Option<f64> {
    let m = data
        .rows
        .iter()
        .map(|r| r.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    Some(m.ceil())
}

fn all_noises() -> [Noise; 4] {
    [
        Noise::Optimized,
        Noise::IidGaussian,
        Noise::IidLaplace,
        Noise::ColoredGaussian,
    ]
}

/// A feature constant within a class (the border pixels of digits): the default release
/// needs no non-private fit, so it releases a valid model and only the owner's KL is
/// undefined (said why); the paper's design and a baseline, which use the fit, refuse.
#[test]
fn a_constant_feature_leaves_only_the_kl_undefined_in_the_default_release() {
    let mut rng = ReleaseRng::seeded(12);
    let mut data = synthetic_paper_data(3, 3, 600, &mut rng);
    for (r, &y) in data.rows.iter_mut().zip(&data.labels) {
        if y == 0 {
            r[2] = 0.25;
        }
    }
    assert!(reference_model(&data).is_err());
    let opts = GmmOptions {
        epsilon: 2.0,
        bound: bound_of(&data),
        ..public(&data)
    };
    let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
    r.model.validate().unwrap();
    assert!(r.epsilon <= 2.0);
    assert_eq!(r.kl, None);
    assert!(r.reference.is_none());
    let why = r.kl_unavailable.as_deref().unwrap();
    assert!(why.contains("singular") && why.contains("class '"), "{why}");
    for noise in [Noise::Optimized, Noise::IidGaussian] {
        let other = GmmOptions {
            noise,
            adjacency: if noise == Noise::Optimized {
                Adjacency::Label
            } else {
                Adjacency::Record
            },
            ..opts.clone()
        };
        let e = release_gmm_data(&data, &other, &mut rng).unwrap_err();
        assert!(e.to_string().contains("singular"), "{e}");
    }
}

/// Every released model is valid, ε ≤ target, the reported kl is the KL of the model's own
/// numbers after a JSON round trip, and label receipts carry the warning.
#[test]
fn every_release_is_valid_and_accounted() {
    let mut rng = ReleaseRng::seeded(11);
    let data = synthetic_paper_data(5, 3, 1000, &mut rng);
    let reference = reference_model(&data).unwrap();
    for adjacency in [Adjacency::Record, Adjacency::Label] {
        for noise in all_noises() {
            for &eps in &[0.5, 1.0, 2.0] {
                let opts = GmmOptions {
                    epsilon: eps,
                    noise,
                    adjacency,
                    bound: bound_of(&data),
                    ..public(&data)
                };
                let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
                r.model.validate().unwrap();
                for c in &r.model.covariances {
                    let (lam, _) = sym_eigen(&Mat::from_rows(c));
                    assert!(lam.iter().all(|&l| l > 0.0));
                }
                assert!(r.epsilon <= eps && r.receipt.epsilon == r.epsilon);
                assert!(r.delta <= opts.delta * (1.0 + 1e-12));
                let json = serde_json::to_string(&r.model).unwrap();
                let back: GmmModel = serde_json::from_str(&json).unwrap();
                assert_eq!(back, r.model);
                let kl = model_kl(&back, &reference);
                assert!(kl.is_finite() && kl > 0.0);
                assert_eq!(Some(kl), r.kl);
                // The release carries the same reference fit (the owner's plots use it).
                assert_eq!(r.reference.as_ref(), Some(&reference));
                let warned = r
                    .receipt
                    .warnings
                    .iter()
                    .any(|w| w == LOCAL_SENSITIVITY_WARNING);
                assert_eq!(warned, adjacency == Adjacency::Label);
                for cert in &r.receipt.parameters.sdp {
                    assert!(cert.relative_gap <= SDP_TOLERANCE && cert.max_constraint <= 1.0);
                }
            }
        }
    }
}

/// Distance of x/g to the nearest integer (x a computed multiple of the grid g).
fn off_grid(x: f64, g: f64) -> f64 {
    let u = x / g;
    (u - u.round()).abs()
}

/// The model file holds only post-processing of released grid multiples: under record
/// adjacency every released mean coordinate (in unit-ball units: model mean / B) is an
/// integer multiple of its grid (to float round-off, 1e-6 grid units); on the default path
/// the released sums Ñ_k·μ̃_k/B (Ñ_k = π̃_k·N) are multiples of the sums' grid. A float
/// Gaussian μ + fl(σz) lands within 1e-6 grid units of the grid with probability 2e-6 per
/// coordinate.
#[test]
fn model_means_are_released_grid_multiples() {
    let mut rng = ReleaseRng::seeded(21);
    let data = synthetic_paper_data(4, 3, 600, &mut rng);
    let bound = bound_of(&data).unwrap();
    let grid_of = |r: &GmmRelease, what: &str| -> f64 {
        r.receipt
            .parameters
            .noise_grids
            .iter()
            .find(|g| g.what.contains(what))
            .unwrap_or_else(|| panic!("no grid for {what}: {:?}", r.receipt.parameters.noise_grids))
            .grid
    };
    let cases = [
        (Noise::Optimized, CovarianceNoise::Wishart),
        (Noise::IidGaussian, CovarianceNoise::Gaussian),
        (Noise::IidLaplace, CovarianceNoise::Gaussian),
        (Noise::ColoredGaussian, CovarianceNoise::Gaussian),
    ];
    for (noise, covariance_noise) in cases {
        let opts = GmmOptions {
            noise,
            covariance_noise,
            bound: Some(bound),
            ..public(&data)
        };
        let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
        for (c, m) in r.model.means.iter().enumerate() {
            let g = if noise == Noise::IidGaussian || noise == Noise::IidLaplace {
                grid_of(&r, "means")
            } else {
                grid_of(&r, &format!("class '{}': mean", data.classes[c]))
            };
            assert!(g > 0.0 && g < 1e-3, "{noise:?}: grid {g}");
            for &x in m {
                assert!(
                    off_grid(x / bound, g) < 1e-6,
                    "{noise:?}: {x} is not on the grid {g}"
                );
            }
        }
        let lim = &r.receipt.guarantee.limitations[0];
        assert_eq!(
            lim.contains("NOT exact: the Wishart covariance noise is sampled in floating point"),
            covariance_noise == CovarianceNoise::Wishart && noise == Noise::Optimized,
            "{lim}"
        );
        let kinds: Vec<&str> = r
            .receipt
            .parameters
            .noise_grids
            .iter()
            .map(|g| g.noise)
            .collect();
        assert!(
            kinds.iter().all(|k| k.starts_with("discrete ")),
            "{kinds:?}"
        );
    }
    // the default path: sums on their public grid
    let opts = GmmOptions {
        bound: Some(bound),
        ..public(&data)
    };
    let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
    let g = grid_of(&r, "class sums");
    let total = released_total(&r.model.weights, data.rows.len());
    for (m, w) in r.model.means.iter().zip(&r.model.weights) {
        let nk = (w * total).round();
        for &x in m {
            assert!(
                off_grid(x / bound * nk, g) < 1e-6,
                "{x}·{nk}/B is not on the grid {g}"
            );
        }
    }
    let lim = &r.receipt.guarantee.limitations[0];
    assert!(
        lim.starts_with("exact noise") && !lim.contains("NOT exact"),
        "{lim}"
    );
}

/// The Gaussian-covariance variant: valid models, ε ≤ target, δ = target, no support
/// warning, and it still beats the i.i.d. baselines on average (10 datasets, ε = 1).
#[test]
fn gaussian_covariance_variant_is_valid_and_accounted() {
    let mut rng = ReleaseRng::seeded(12);
    let mut kl_opt = 0.0;
    let mut kl_iid = 0.0;
    for _ in 0..10 {
        let data = synthetic_paper_data(5, 3, 1000, &mut rng);
        for adjacency in [Adjacency::Record, Adjacency::Label] {
            let opts = GmmOptions {
                covariance_noise: CovarianceNoise::Gaussian,
                adjacency,
                bound: bound_of(&data),
                ..public(&data)
            };
            let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
            r.model.validate().unwrap();
            assert!(r.epsilon <= 1.0);
            assert!((r.delta - 1e-5).abs() < 1e-18);
            assert!(!r.receipt.warnings.iter().any(|w| w.contains("Wishart")));
            assert_eq!(
                r.receipt.parameters.covariance_noise,
                CovarianceNoise::Gaussian
            );
            kl_opt += r.kl.unwrap();
            let iid = GmmOptions {
                noise: Noise::IidGaussian,
                adjacency,
                bound: bound_of(&data),
                ..public(&data)
            };
            kl_iid += release_gmm_data(&data, &iid, &mut rng).unwrap().kl.unwrap();
        }
    }
    assert!(kl_opt < kl_iid, "{kl_opt} vs {kl_iid}");
}

/// Rows of classes `a` (label 0) and `b` (label 1), features `f0`, `f1`, ….
fn two_classes(rows: Vec<Vec<f64>>, labels: Vec<usize>) -> GmmData {
    GmmData {
        features: (0..rows[0].len()).map(|j| format!("f{j}")).collect(),
        label: "y".into(),
        classes: vec!["a".into(), "b".into()],
        rows,
        labels,
        rows_dropped: 0,
        unlabelled: 0,
    }
}

/// `pca` on the default release: the basis is a DP release within the budget (nothing is
/// declared unprotected; a protected item and a noise grid name it; ε ≤ target). It finds
/// the plane the data live in (a random basis would put about 2/80 of each component there),
/// the model keeps the classes apart in it, and sampled rows come back in the input's 80
/// columns (more than the 64 the default release took before, and above the Jacobi solver's
/// range). K above 256 is refused naming `pca`.
#[test]
fn pca_on_the_default_release_is_a_dp_basis() {
    let mut rng = ReleaseRng::seeded(31);
    let (n, d) = (3000, 80);
    let mut rows = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let c = i % 2;
        let mut r: Vec<f64> = (0..d)
            .map(|_| 0.1 * rng.sample::<f64, _>(StandardNormal))
            .collect();
        r[0] = if c == 0 { 4.0 } else { -4.0 } + rng.sample::<f64, _>(StandardNormal);
        r[1] = 3.0 * rng.sample::<f64, _>(StandardNormal);
        rows.push(r);
        labels.push(c);
    }
    let data = two_classes(rows, labels);
    let opts = GmmOptions {
        epsilon: 4.0,
        delta: 1e-6,
        bound: Some(12.0),
        pca: Some(2),
        ..public(&data)
    };
    let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
    let rec = &r.receipt;
    assert!(
        rec.guarantee.unprotected.is_empty(),
        "{:?}",
        rec.guarantee.unprotected
    );
    assert!(r.epsilon <= 4.0 && rec.epsilon == r.epsilon);
    assert!(rec.protected[0].what.contains("principal subspace"));
    assert!(rec.protected[0].epsilon > 0.0 && rec.protected[0].epsilon < r.epsilon);
    assert!(rec.parameters.noise_grids[0]
        .what
        .contains("80 input features"));
    assert!(rec.budget.composition.contains("ρ_basis"));
    assert_eq!(rec.parameters.pca, Some(2));
    assert_eq!(rec.data.features.len(), d);
    let p = r.model.projection.as_ref().unwrap();
    assert!(p.center.iter().all(|&c| c == 0.0));
    for c in &p.components {
        let in_plane = c[0] * c[0] + c[1] * c[1];
        assert!(in_plane > 0.95, "{in_plane}");
    }
    let (labels, rows) = sample(&r.model, 4000, &mut rng).unwrap();
    assert!(rows.iter().all(|x| x.len() == d));
    for (c, want) in [(0, 4.0), (1, -4.0)] {
        let f0: Vec<f64> = rows
            .iter()
            .zip(&labels)
            .filter(|(_, &l)| l == c)
            .map(|(x, _)| x[0])
            .collect();
        let mean = f0.iter().sum::<f64>() / f0.len() as f64;
        assert!((mean - want).abs() < 0.5, "class {c}: mean f0 {mean}");
    }
    let e = release_gmm_data(
        &data,
        &GmmOptions {
            pca: Some(MAX_DIM_DEFAULT + 1),
            ..opts
        },
        &mut rng,
    )
    .unwrap_err();
    assert!(e.to_string().contains("pca"), "{e}");
}

/// DP feature marginals (`marginals` with the box): the histograms are released in the same
/// budget (a protected item and a noise grid name them; ε ≤ target) and every sampled value
/// is mapped onto them, so a skewed feature keeps its shape: its 16-bin TVD to the data is
/// below 0.06, where the same release drawing within the box (no marginals) is above 0.15,
/// since one Gaussian per class cannot follow an exponential. The model round-trips through
/// JSON. Without the box, on another noise, or with 1 bin, `marginals` is refused naming it.
#[test]
fn dp_feature_marginals_put_the_samples_on_the_released_histograms() {
    let mut rng = ReleaseRng::seeded(41);
    let n = 6000;
    let mut rows = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let c = i % 2;
        let e: f64 = rng.sample(rand_distr::Exp1);
        let f0 = (1.5 * e).min(9.99);
        let f1 = 5.0 + if c == 0 { 1.5 } else { -1.5 } + rng.sample::<f64, _>(StandardNormal);
        rows.push(vec![f0, f1.clamp(0.0, 9.99)]);
        labels.push(c);
    }
    let data = two_classes(rows, labels);
    let support = Support {
        lower: vec![0.0, 0.0],
        upper: vec![10.0, 10.0],
    };
    let opts = GmmOptions {
        epsilon: 4.0,
        delta: 1e-6,
        bound: Some(15.0),
        support: Some(support.clone()),
        marginals: Some(16),
        ..public(&data)
    };
    let hist = |xs: &[f64]| {
        let mut h = vec![0.0; 16];
        for &x in xs {
            h[((x / 10.0 * 16.0).floor().clamp(0.0, 15.0)) as usize] += 1.0 / xs.len() as f64;
        }
        h
    };
    let tvd = |a: &[f64], b: &[f64]| 0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>();
    let real = hist(&data.rows.iter().map(|r| r[0]).collect::<Vec<_>>());
    let r = release_gmm_data(&data, &opts, &mut ReleaseRng::seeded(3)).unwrap();
    let rec = &r.receipt;
    assert!(r.epsilon <= 4.0, "{}", r.epsilon);
    assert!(
        rec.protected[0].what.contains("feature marginals"),
        "{}",
        rec.protected[0].what
    );
    assert!(rec.parameters.noise_grids[0]
        .what
        .contains("2 features × 16 equal bins"));
    assert!(rec.budget.composition.contains("ρ_marginals"));
    assert!(rec.guarantee.unprotected.is_empty());
    let (_, s) = sample(&r.model, 20000, &mut rng).unwrap();
    assert!(s.iter().all(|x| x.iter().all(|v| (0.0..=10.0).contains(v))));
    let mapped = tvd(&real, &hist(&s.iter().map(|x| x[0]).collect::<Vec<_>>()));
    assert!(mapped < 0.06, "TVD with marginals {mapped}");
    let plain = GmmOptions {
        marginals: None,
        ..opts.clone()
    };
    let r0 = release_gmm_data(&data, &plain, &mut ReleaseRng::seeded(3)).unwrap();
    let (_, s0) = sample(&r0.model, 20000, &mut rng).unwrap();
    let boxed = tvd(&real, &hist(&s0.iter().map(|x| x[0]).collect::<Vec<_>>()));
    assert!(boxed > 0.15, "TVD without marginals {boxed}");
    let json = serde_json::to_string(&r.model).unwrap();
    let back: GmmModel = serde_json::from_str(&json).unwrap();
    assert_eq!(back.marginals, r.model.marginals);
    back.validate().unwrap();
    for bad in [
        GmmOptions {
            support: None,
            ..opts.clone()
        },
        GmmOptions {
            noise: Noise::IidGaussian,
            ..opts.clone()
        },
        GmmOptions {
            marginals: Some(1),
            ..opts.clone()
        },
    ] {
        let e = release_gmm_data(&data, &bad, &mut ReleaseRng::seeded(3)).unwrap_err();
        assert!(e.to_string().contains("marginals"), "{e}");
    }
}

/// PCA (on a path other than the default, where the basis is computed from the data) finds a
/// known axis (data spread along (1, 1, 0)/√2), the release lives in the projected
/// coordinates and sampling maps back to the input's columns.
#[test]
fn pca_projection_round_trip() {
    let mut rng = ReleaseRng::seeded(21);
    let mut data = synthetic_paper_data(2, 3, 400, &mut rng);
    for r in data.rows.iter_mut() {
        let t: f64 = rng.sample::<f64, _>(StandardNormal) * 50.0;
        r[0] += t;
        r[1] += t;
    }
    let (_, p) = pca_project(&data, 1).unwrap();
    let c = &p.components[0];
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert!(
        (c[0].abs() - s).abs() < 0.02 && (c[1].abs() - s).abs() < 0.02 && c[2].abs() < 0.02,
        "{c:?}"
    );
    let opts = GmmOptions {
        pca: Some(2),
        bound: bound_of(&data).map(|b| 4.0 * b),
        noise: Noise::IidGaussian,
        ..public(&data)
    };
    let r = release_gmm_data(&data, &opts, &mut rng).unwrap();
    assert_eq!(r.model.means[0].len(), 2);
    assert_eq!(r.receipt.parameters.pca, Some(2));
    assert!(r.receipt.guarantee.unprotected[0].contains("PCA"));
    let (_, rows) = sample(&r.model, 10, &mut rng).unwrap();
    assert!(rows.iter().all(|x| x.len() == 3));
    assert_eq!(r.model.output_features(), vec!["x0", "x1", "x2"]);
    assert!(release_gmm_data(
        &data,
        &GmmOptions {
            pca: Some(4),
            ..Default::default()
        },
        &mut rng
    )
    .is_err());
}

#[test]
fn bad_inputs_are_named_errors() {
    let mut rng = ReleaseRng::seeded(1);
    let data = synthetic_paper_data(3, 2, 300, &mut rng);
    let e = |o: GmmOptions| {
        release_gmm_data(&data, &o, &mut ReleaseRng::seeded(1))
            .unwrap_err()
            .to_string()
    };
    assert!(e(GmmOptions {
        epsilon: 0.0,
        ..Default::default()
    })
    .contains("epsilon"));
    assert!(e(GmmOptions {
        delta: 1.0,
        ..Default::default()
    })
    .contains("delta"));
    assert!(e(GmmOptions {
        bound: Some(-1.0),
        ..Default::default()
    })
    .contains("bound"));
    assert!(e(GmmOptions {
        lambda: 1.0,
        ..Default::default()
    })
    .contains("lambda"));
    // Classes too small to fit (5 rows in all): refused where the fit is used (a
    // baseline); the default release needs no fit and releases, with no KL (refusing would
    // tell the exact class size).
    let mut wide = data.clone();
    wide.rows = wide.rows.iter().take(5).cloned().collect();
    wide.labels.truncate(5);
    let with_bound = GmmOptions {
        bound: Some(100.0),
        ..public(&data)
    };
    let baseline = GmmOptions {
        noise: Noise::IidGaussian,
        ..with_bound.clone()
    };
    let msg = release_gmm_data(&wide, &baseline, &mut rng)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("at least"), "{msg}");
    let r = release_gmm_data(&wide, &with_bound, &mut rng).unwrap();
    assert!(r.kl.is_none() && r.kl_unavailable.is_some());
    // Record adjacency (the default) without a public bound: refused, naming the bound.
    let msg = release_gmm_data(&data, &GmmOptions::default(), &mut rng)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("bound") && msg.contains("public"), "{msg}");
    // a model that is not valid
    let mut m = reference_model(&data).unwrap();
    m.covariances[1][0][1] += 1.0;
    assert!(m.validate().unwrap_err().to_string().contains("symmetric"));
    m = reference_model(&data).unwrap();
    m.weights[0] = -0.1;
    assert!(m.validate().is_err());
}

/// The default release (record adjacency) is end-to-end DP: the receipt declares nothing
/// unprotected, and neighbouring datasets (one record moved to another class, so every
/// exact N_k, mean and covariance changes) get identical noise designs, budgets and
/// noise scales; only the random draws differ.
#[test]
fn default_release_design_does_not_depend_on_the_data() {
    let mut rng = ReleaseRng::seeded(31);
    let data = synthetic_paper_data(3, 3, 300, &mut rng);
    let mut moved = data.clone();
    let i = moved.labels.iter().position(|&l| l == 0).unwrap();
    moved.labels[i] = 1;
    moved.rows[i] = vec![0.0; 3];
    let opts = GmmOptions {
        epsilon: 1.0,
        bound: bound_of(&data),
        ..public(&data)
    };
    let a = release_gmm_data(&data, &opts, &mut ReleaseRng::seeded(1)).unwrap();
    let b = release_gmm_data(&moved, &opts, &mut ReleaseRng::seeded(1)).unwrap();
    for r in [&a, &b] {
        assert!(
            r.receipt.guarantee.unprotected.is_empty(),
            "{:?}",
            r.receipt.guarantee.unprotected
        );
        assert!(r.epsilon <= 1.0 && r.delta <= 1e-5 * (1.0 + 1e-12));
    }
    let j = |r: &GmmRelease| {
        (
            serde_json::to_string(&r.receipt.budget).unwrap(),
            serde_json::to_string(&r.receipt.protected).unwrap(),
            r.receipt.parameters.bound,
            r.receipt.parameters.design_iterations,
            r.receipt.parameters.sdp.len(),
            r.epsilon,
            r.delta,
        )
    };
    assert_eq!(j(&a), j(&b));
    // The per-class split is the same for every class.
    let e = &a.receipt.budget.epsilon_means;
    assert!(e.iter().all(|&x| x == e[0]));
}

/// Σ_k Ñ_k of a release from its weights Ñ_k / Σ_j Ñ_j: the smallest M ≥ N/2 at which every
/// weight times M is an integer (the released counts are noisy, near N here).
fn released_total(weights: &[f64], n: usize) -> f64 {
    (n / 2..=2 * n)
        .map(|m| m as f64)
        .find(|m| {
            weights
                .iter()
                .all(|w| ((w * m) - (w * m).round()).abs() < 1e-6)
        })
        .expect("the weights are ratios of counts summing to near N")
}

/// Data of three classes: two of `big` rows and one, 'rare', of `rare` rows (2 features).
fn with_rare_class(big: usize, rare: usize, seed: u64) -> GmmData {
    let mut rng = ReleaseRng::seeded(seed);
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for (c, n, m) in [(0usize, big, -1.0), (1, rare, 0.0), (2, big, 1.0)] {
        for _ in 0..n {
            let a: f64 = rng.sample(StandardNormal);
            let b: f64 = rng.sample(StandardNormal);
            rows.push(vec![m + 0.3 * a, m + 0.3 * b]);
            labels.push(c);
        }
    }
    GmmData {
        features: vec!["x0".into(), "x1".into()],
        label: "class".into(),
        classes: vec!["a".into(), "rare".into(), "b".into()],
        rows,
        labels,
        rows_dropped: 0,
        unlabelled: 0,
    }
}

/// Issue 11 (labels under the standard adjacency), for the GMM: a label read from the data is
/// released only when its noisy count clears the threshold, so a class of 3 records is left
/// out (told to the owner only, with no KL), the receipt names the threshold and its δ, the
/// total δ stays the target; listing the classes keeps the small class and makes the labels
/// public; the same data with its 3 'rare' records given another class's label release the
/// same classes and receipt fields (a neighbour three records away cannot be told apart by
/// them), and with no class able to clear the threshold the release stops, saying what to do.
#[test]
fn labels_read_from_the_data_are_released_under_a_threshold() {
    let data = with_rare_class(2000, 3, 4);
    let opts = GmmOptions {
        epsilon: 5.0,
        bound: Some(3.0),
        ..GmmOptions::default()
    };
    let fields = |r: &GmmRelease| {
        (
            r.model.classes.clone(),
            r.receipt.data.classes.clone(),
            serde_json::to_string(&r.receipt.guarantee).unwrap(),
            r.receipt
                .protected
                .iter()
                .map(|p| p.how.clone())
                .collect::<Vec<_>>(),
            r.epsilon,
            r.delta,
        )
    };
    // The neighbour: the rare records moved to class 'a' (the label set then lacks 'rare').
    let mut moved = data.clone();
    moved.labels.iter_mut().for_each(|y| {
        if *y == 1 {
            *y = 0;
        }
    });
    for seed in 1..=4 {
        let r = release_gmm_data(&data, &opts, &mut ReleaseRng::seeded(seed)).unwrap();
        assert_eq!(r.model.classes, ["a", "b"]);
        assert_eq!(r.classes_left_out, ["rare"]);
        assert!(r.kl.is_none() && r.reference.is_none());
        assert!(r
            .kl_unavailable
            .as_deref()
            .unwrap()
            .contains("leaves out classes"));
        let item = &r.receipt.protected[1];
        assert!(item.what.contains("class labels"), "{item:?}");
        assert!(item.how.contains("reaches 58"), "{}", item.how);
        assert!(
            item.delta > 0.0 && r.delta <= opts.delta,
            "{} {}",
            item.delta,
            r.delta
        );
        assert!((item.delta - opts.delta * weights::LABEL_DELTA_SHARE).abs() < 1e-18);
        assert!(r.receipt.guarantee.unprotected.is_empty());
        assert!(!serde_json::to_string(&r.receipt).unwrap().contains("rare"));
        let m = release_gmm_data(&moved, &opts, &mut ReleaseRng::seeded(seed)).unwrap();
        assert_eq!(fields(&r), fields(&m));
    }
    // Listed classes: public, every one released, the δ all the Gaussian's.
    let listed = GmmOptions {
        classes: Some(vec!["b".into(), "rare".into(), "a".into(), "z".into()]),
        ..opts.clone()
    };
    let r = release_gmm_data(&data, &listed, &mut ReleaseRng::seeded(1)).unwrap();
    assert_eq!(r.model.classes, ["b", "rare", "a", "z"]);
    assert!(r.classes_left_out.is_empty());
    assert!(r
        .receipt
        .guarantee
        .public_information
        .iter()
        .any(|s| s.contains("listed with the request")));
    assert!(r
        .receipt
        .protected
        .iter()
        .all(|p| !p.what.contains("class labels")));
    // The listed means follow their classes ('b' near +1, 'a' near −1 in both features).
    assert!(
        r.model.means[0][0] > 0.5 && r.model.means[2][0] < -0.5,
        "{:?}",
        r.model.means
    );
    // A label not listed belongs to no class (it stays in N).
    let two = GmmOptions {
        classes: Some(vec!["a".into(), "b".into()]),
        ..opts.clone()
    };
    let r = release_gmm_data(&data, &two, &mut ReleaseRng::seeded(1)).unwrap();
    assert_eq!((r.model.classes.len(), r.unlabelled), (2, 3));
    for (list, what) in [
        (vec![], "at least one"),
        (vec!["a".to_string(), "a".to_string()], "twice"),
    ] {
        let bad = GmmOptions {
            classes: Some(list),
            ..opts.clone()
        };
        let e = release_gmm_data(&data, &bad, &mut ReleaseRng::seeded(1)).unwrap_err();
        assert!(
            e.to_string().contains("classes") && e.to_string().contains(what),
            "{e}"
        );
    }
    // Too few records in every class for ε = 1 (threshold 279): the release stops.
    let small = with_rare_class(100, 3, 5);
    let tight = GmmOptions {
        epsilon: 1.0,
        ..opts.clone()
    };
    let e = release_gmm_data(&small, &tight, &mut ReleaseRng::seeded(1)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("reaches 279") && msg.contains("classes"),
        "{msg}"
    );
    // The other paths read the labels from the data and say so.
    let baseline = GmmOptions {
        noise: Noise::IidGaussian,
        ..opts
    };
    // The baselines fit every class, and refuse the 3-record one by name.
    let e = release_gmm_data(&data, &baseline, &mut ReleaseRng::seeded(1)).unwrap_err();
    assert!(e.to_string().contains("'rare'"), "{e}");
    let big = with_rare_class(2000, 50, 6);
    let r = release_gmm_data(&big, &baseline, &mut ReleaseRng::seeded(1)).unwrap();
    assert!(r
        .receipt
        .guarantee
        .unprotected
        .iter()
        .any(|s| s.contains("set of class labels, read from the data")));
}

/// The default release also holds when a record is added or removed (issue 11: the standard
/// adjacency includes add/remove): its receipt reads N nowhere, so a dataset and the same
/// dataset with one record more (labelled, or without a label) give byte-identical receipts
/// with the same seed, and their sampling defaults are the released counts' totals, not N.
/// N = d + 1 rows is not refused there (a refusal would tell it from d + 2); the paths where N
/// is public still refuse it and still state N.
#[test]
fn the_default_release_does_not_publish_n() {
    let data = with_rare_class(300, 60, 8);
    let opts = GmmOptions {
        epsilon: 2.0,
        bound: Some(3.0),
        ..public(&data)
    };
    let mut one_more = data.clone();
    one_more.rows.push(vec![0.5, -0.5]);
    one_more.labels.push(0);
    let mut unlabelled = data.clone();
    unlabelled.unlabelled += 1;
    let run = |d: &GmmData| release_gmm_data(d, &opts, &mut ReleaseRng::seeded(3)).unwrap();
    let (r, r1, r2) = (run(&data), run(&one_more), run(&unlabelled));
    let receipt = r.receipt.to_json();
    assert!(!receipt.contains("rows_used"), "{receipt}");
    assert!(r
        .receipt
        .guarantee
        .adjacency
        .contains("add, remove or replace"));
    assert!(!r
        .receipt
        .guarantee
        .public_information
        .iter()
        .any(|p| p.contains("number of records")));
    assert_eq!(r1.receipt.to_json(), receipt);
    assert_eq!(r2.receipt.to_json(), receipt);
    // The sampling default is the released counts' total: a noisy number near N.
    let total = released_total(&r.model.weights, 660);
    assert_eq!(r.default_samples as f64, total);
    assert!(
        (610..=710).contains(&r.default_samples),
        "{}",
        r.default_samples
    );
    // N = d + 1 = 3 rows: released on the default path, refused where N is public.
    let tiny = GmmData {
        rows: vec![vec![0.1, 0.2], vec![-0.3, 0.1], vec![0.2, -0.2]],
        labels: vec![0, 0, 2],
        ..data.clone()
    };
    let t = release_gmm_data(&tiny, &opts, &mut ReleaseRng::seeded(3)).unwrap();
    assert_eq!(t.model.classes.len(), 3);
    let label = GmmOptions {
        adjacency: Adjacency::Label,
        ..opts.clone()
    };
    let e = release_gmm_data(&tiny, &label, &mut ReleaseRng::seeded(3)).unwrap_err();
    assert!(e.to_string().contains("too few"), "{e}");
    let paper = release_gmm_data(&data, &label, &mut ReleaseRng::seeded(3)).unwrap();
    assert_eq!(paper.receipt.data.rows_used, Some(660));
    assert!(paper.receipt.to_json().contains("\"rows_used\": 660"));
}
