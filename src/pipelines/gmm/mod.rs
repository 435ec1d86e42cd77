//! The GMM release pipeline: options and dimensions checked, rows clipped into the unit ball
//! (`Prepared`), one of three noise paths (`noise_suffstats`, the default;
//! `noise_designed`, the paper's Algorithm 1; `noise_baseline`), then the model mapped back
//! to the input's units and the receipt (`finish`). The proofs are in the module docs of
//! [`crate::mechanisms::gmm`] and of [`suffstats`].

// `!(x <= y)` is used on purpose so that NaN fails the check.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::accountant::{check_delta, check_epsilon};
use crate::data::Table;
use crate::error::{Error, Result};
use crate::math::DetFloat;
use crate::mechanisms::gmm::*;
use crate::mechanisms::noise::GridGaussian;
use crate::receipt::{Guarantee, Randomness, BUILD_ID, VERSION};
use crate::rng::ReleaseRng;
use baselines::{gaussian_sigma, noisy_psd, project_simplex_floor, sensitivities, GridNoise};
use design::{max_mahalanobis_sensitivity, ClassDesignInput, CovCost};
use exactnoise::{class_stats, ClassStats};
use fit::{check_invertible, fit_classes_any, ClassFit};
use linalg::{cholesky, forward_solve, sym_eigen, Mat};

/// Largest dimension accepted by the paper's design and the baselines (the SDP and the Wishart
/// step cost O(d³) per class).
pub const MAX_DIM: usize = 64;

/// Largest dimension accepted by the default release (noisy sufficient statistics: an
/// eigen-decomposition per class), directly or as the number of DP principal components.
pub const MAX_DIM_DEFAULT: usize = 256;

/// Releases a GMM of `table` (label column set, numeric features).
pub fn release_gmm(table: &Table, opts: &GmmOptions, rng: &mut ReleaseRng) -> Result<GmmRelease> {
    release_gmm_data(&GmmData::from_table(table)?, opts, rng)
}

/// Releases a GMM of `data`.
pub fn release_gmm_data(
    data: &GmmData,
    opts: &GmmOptions,
    rng: &mut ReleaseRng,
) -> Result<GmmRelease> {
    release_with(data, opts, None, rng)
}

/// DP feature marginals asked for: the public box and the bins per feature.
type MarginalRequest<'a> = Option<(&'a Support, usize)>;

/// [`release_gmm_data`]; `marg` is set by [`release_with_support`] when `marginals` was
/// asked for with the box.
fn release_with(
    data: &GmmData,
    opts: &GmmOptions,
    marg: MarginalRequest<'_>,
    rng: &mut ReleaseRng,
) -> Result<GmmRelease> {
    check_options(opts)?;
    // Public class labels: records with another label belong to no class (they stay in N).
    let listed = match &opts.classes {
        Some(list) if *list != data.classes => Some(data.with_classes(list)?),
        Some(list) => {
            check_classes(list)?;
            None
        }
        None => None,
    };
    let data = listed.as_ref().unwrap_or(data);
    if let Some(support) = &opts.support {
        return release_with_support(data, opts, support, rng);
    }
    if let Some(b) = opts.marginals {
        return Err(Error::param(
            "marginals",
            b,
            "DP feature marginals are histograms of each feature's public interval: give the box (lower and upper) too",
        ));
    }
    if marg.is_some() && (!is_end_to_end(opts) || opts.center.is_some()) {
        return Err(Error::param(
            "marginals",
            marg.map_or(0, |m| m.1),
            "DP feature marginals come with the default release (record adjacency, optimized noise, Gaussian covariance noise) and without a center; drop one",
        ));
    }
    // Missing or unparsable cells (NaN) take the public centre: no row is dropped. How many
    // did is told to the data owner only (a text column left in by mistake shows here).
    let filled_cells: Vec<FilledCells> = data
        .missing_counts()
        .into_iter()
        .zip(&data.features)
        .filter(|(cells, _)| *cells > 0)
        .map(|(cells, feature)| FilledCells {
            feature: feature.clone(),
            cells,
        })
        .collect();
    let filled = data.with_missing_filled(opts.center.as_deref());
    let data = filled.as_ref().unwrap_or(data);
    let mut release = if let Some(c) = &opts.center {
        release_centered(data, opts, c, rng)?
    } else if let Some(k) = opts.pca {
        release_projected(data, opts, k, marg, rng)?
    } else if let Some((support, bins)) = marg {
        let p = Prepared::new(data, opts)?;
        let split = suffstats::Split::with_extras(
            opts.epsilon,
            opts.delta,
            p.d,
            opts.classes.is_none(),
            None,
            Some((p.d, bins)),
        )?;
        let m = marginals::release(&data.rows, support, bins, &split, rng)?;
        let noised = noise_suffstats(&p, Some(split), rng)?;
        let mut r = finish(p, noised, rng)?;
        attach_marginals(&mut r, m)?;
        r
    } else {
        let p = Prepared::new(data, opts)?;
        let noised = match opts.noise {
            Noise::Optimized if p.end_to_end => noise_suffstats(&p, None, rng)?,
            Noise::Optimized => noise_designed(&p, rng)?,
            Noise::IidGaussian | Noise::IidLaplace | Noise::ColoredGaussian => {
                noise_baseline(&p, rng)?
            }
        };
        finish(p, noised, rng)?
    };
    release.filled_cells = filled_cells;
    release.unlabelled = data.unlabelled;
    Ok(release)
}

/// `support`: the release without it (it uses no randomness and reads no data, so the model
/// is the same), with the public box stored in the model for its samples (post-processing).
fn release_with_support(
    data: &GmmData,
    opts: &GmmOptions,
    support: &Support,
    rng: &mut ReleaseRng,
) -> Result<GmmRelease> {
    support.check(&data.features)?;
    let inner = GmmOptions {
        support: None,
        marginals: None,
        ..opts.clone()
    };
    let marg = match opts.marginals {
        Some(b) => {
            marginals::check_bins(b)?;
            Some((support, b))
        }
        None => None,
    };
    let mut r = release_with(data, &inner, marg, rng)?;
    r.model.support = Some(support.clone());
    r.model.validate()?;
    r.receipt.guarantee.public_information.push(format!(
        "the box lower = {:?}, upper = {:?} given with the request: rows sampled from the model are drawn from each class's Gaussian conditioned on it (post-processing)",
        support.lower, support.upper
    ));
    Ok(r)
}

/// `center`: the release of the rows x − c for a public c, with the means (and the owner's
/// reference fit) moved back by c. Privacy: x ↦ x − c is a fixed bijection of every row, so
/// neighbouring datasets stay neighbours and the release of the shifted rows has the same
/// (ε, δ); adding c to the released means is post-processing. Only B changes meaning: it
/// bounds ‖x − c‖, which a c near the middle of the public ranges makes much smaller than ‖x‖.
fn release_centered(
    data: &GmmData,
    opts: &GmmOptions,
    c: &[f64],
    rng: &mut ReleaseRng,
) -> Result<GmmRelease> {
    let d = data.dim();
    if c.len() != d || c.iter().any(|v| !v.is_finite()) {
        return Err(Error::param(
            "center",
            format!("{} values", c.len()),
            format!("give one finite value per feature column ({d}: {}), chosen without looking at the data, e.g. the middle of each column's public range", data.features.join(", ")),
        ));
    }
    if opts.pca.is_some() {
        return Err(Error::param(
            "center",
            "(given)",
            "a public center and pca do not combine (the projection centres the data itself); drop one",
        ));
    }
    // One copy of the rows, shifted in place.
    let mut shifted = data.clone();
    for row in &mut shifted.rows {
        row.iter_mut().zip(c).for_each(|(x, m)| *x -= m);
    }
    let inner = GmmOptions {
        center: None,
        ..opts.clone()
    };
    let mut r = release_gmm_data(&shifted, &inner, rng)?;
    let back = |m: &mut GmmModel| {
        for mean in &mut m.means {
            mean.iter_mut().zip(c).for_each(|(v, ci)| *v += ci);
        }
    };
    back(&mut r.model);
    if let Some(reference) = r.reference.as_mut() {
        back(reference);
    }
    r.model.validate()?;
    r.receipt.guarantee.public_information.push(format!(
        "the center c = {c:?} given with the request: the release is of the rows x − c (the bound B applies to ‖x − c‖), and c was added back to the released means"
    ));
    Ok(r)
}

/// `--pca k`: the release of the data projected on its top k principal components. On the
/// default release the basis is DP ([`release_dp_subspace`]); on the other paths it is the
/// data's PCA, declared unprotected.
fn release_projected(
    data: &GmmData,
    opts: &GmmOptions,
    k: usize,
    marg: MarginalRequest<'_>,
    rng: &mut ReleaseRng,
) -> Result<GmmRelease> {
    if is_end_to_end(opts) {
        return release_dp_subspace(data, opts, k, marg, rng);
    }
    let (projected, projection) = pca_project(data, k)?;
    let inner = GmmOptions {
        pca: None,
        ..opts.clone()
    };
    let mut r = release_gmm_data(&projected, &inner, rng)?;
    r.model.projection = Some(projection);
    r.model.validate()?;
    r.receipt.parameters.pca = Some(k);
    r.receipt.guarantee.unprotected.insert(
        0,
        format!(
            "the PCA projection (center and {k} components) in the model, computed from the non-private data; the means, covariances and kl are in its coordinates, and the bound (bound) applies to them"
        ),
    );
    Ok(r)
}

/// `pca` on the default release: the basis is the top k eigenvectors of a DP second moment
/// ([`subspace`]), in the same budget as the class statistics of the projected rows; nothing
/// is declared unprotected.
fn release_dp_subspace(
    data: &GmmData,
    opts: &GmmOptions,
    k: usize,
    marg: MarginalRequest<'_>,
    rng: &mut ReleaseRng,
) -> Result<GmmRelease> {
    let d_in = data.dim();
    check_pca_dims(k, d_in)?;
    if k > MAX_DIM_DEFAULT {
        return Err(Error::param(
            "pca",
            k,
            format!("the default release takes at most {MAX_DIM_DEFAULT} components"),
        ));
    }
    let (bound, _) = bound_of(data, opts)?;
    let z = unit_rows(&data.rows, bound);
    let split = suffstats::Split::with_extras(
        opts.epsilon,
        opts.delta,
        k,
        opts.classes.is_none(),
        Some(d_in),
        marg.map(|(_, bins)| (d_in, bins)),
    )?;
    let basis = subspace::release_basis(&z, k, &split, rng)?;
    let released_marginals = marg
        .map(|(support, bins)| marginals::release(&data.rows, support, bins, &split, rng))
        .transpose()?;
    // The projected rows in input units (y·B), so the inner release's clip at B is a no-op
    // but for rounding; its grid truncation keeps ‖y‖ ≤ 1 exactly.
    let projected = data.with_component_rows(
        k,
        z.iter()
            .map(|r| basis.project(r).into_iter().map(|y| y * bound).collect())
            .collect(),
    );
    drop(z);
    let inner = GmmOptions {
        pca: None,
        ..opts.clone()
    };
    let p = Prepared::new(&projected, &inner)?;
    let noised = noise_suffstats(&p, Some(split), rng)?;
    let mut r = finish(p, noised, rng)?;
    r.model.projection = Some(Projection {
        center: vec![0.0; d_in],
        components: basis.components,
        features: data.features.clone(),
    });
    r.model.validate()?;
    r.receipt.parameters.pca = Some(k);
    r.receipt.data.features = data.features.clone();
    if let Some(m) = released_marginals {
        attach_marginals(&mut r, m)?;
    }
    Ok(r)
}

/// Stores released feature marginals in the model (its samples are mapped onto them) and
/// tells the receipt about features left without one.
fn attach_marginals(r: &mut GmmRelease, m: marginals::ReleasedMarginals) -> Result<()> {
    if m.empty > 0 {
        r.receipt.warnings.push(format!(
            "{} feature(s) have no released marginal (no histogram count above 2σ of its noise) and keep the model's own, clamped into the box",
            m.empty
        ));
    }
    r.model.marginals = Some(m.marginals);
    r.model.validate()
}

/// What the noise paths share: the data clipped into the unit ball, its non-private class fits
/// and the reference model for the owner's KL.
struct Prepared<'a> {
    data: &'a GmmData,
    opts: &'a GmmOptions,
    /// Rows, classes, features.
    n: usize,
    k: usize,
    d: usize,
    /// The default release (record adjacency, Gaussian covariance noise): noisy sufficient
    /// statistics, every scale and the split public ([`suffstats`]). Its adjacency also adds
    /// or removes a record, so N is private there (no refusal on N, no `rows_used`, not in the
    /// public information); the other paths treat N as public.
    end_to_end: bool,
    /// B and where it came from.
    bound: f64,
    bound_source: String,
    /// Rows scaled to ‖z‖ ≤ 1.
    z: Vec<Vec<f64>>,
    /// Non-private fits of `z` per class (Algorithm 1 and the baselines; empty on the
    /// default path, which needs none), the class counts and proportions.
    fits: Vec<ClassFit>,
    counts: Vec<usize>,
    pi: Vec<f64>,
    /// The non-private model of the input as read (None: no KL, `kl_unavailable` says why).
    reference: Option<GmmModel>,
    kl_unavailable: Option<String>,
}

impl<'a> Prepared<'a> {
    fn new(data: &'a GmmData, opts: &'a GmmOptions) -> Result<Self> {
        let d = data.dim();
        if d == 0 {
            return Err(Error::Data(
                "no numeric feature column besides the label".into(),
            ));
        }
        // N counts the records without a label too (they belong to no class).
        let n = data.records();
        let k = data.classes.len();
        // The default needs no non-private fit, so a singular class covariance (a feature
        // constant within a class, as the border pixels of digits) only leaves the owner's KL
        // undefined; the paper's design and the baselines invert or perturb the fit and
        // refuse such data.
        let end_to_end = is_end_to_end(opts);
        let max_dim = if end_to_end { MAX_DIM_DEFAULT } else { MAX_DIM };
        if d > max_dim {
            return Err(Error::param(
                "features",
                d,
                format!("at most {max_dim} features are supported here{}; drop columns, or project to fewer dimensions (pca)", if end_to_end { "" } else { " (the default release takes up to 256)" }),
            ));
        }
        // N is public on the other paths only: the default release refuses nothing on it
        // (a refusal at N = d + 1 would tell that neighbour from one with a record more).
        if n < d + 2 && !end_to_end {
            return Err(Error::Data(format!(
                "{n} rows are too few for {d} features (d too large for N): each class needs at least d + 2 rows"
            )));
        }
        // The non-private reference (the input as read), for the owner's KL. The default
        // release does not need it: a class too small to fit (fewer than d + 2 rows) or with
        // a singular covariance only leaves the KL undefined, since refusing would tell the
        // exact class size; the other paths fit every class and refuse such data.
        let reference_fits = fit_classes_any(&data.rows, &data.labels, &data.classes, d)
            .and_then(|f| check_invertible(&f, &data.classes).map(|()| f));
        let (reference, kl_unavailable) = match reference_fits {
            Ok(f) => (Some(model_of_fits(data, &f)), None),
            Err(e) if end_to_end => (None, Some(format!("the non-private fit has no KL: {e}"))),
            Err(e) => return Err(e),
        };
        let (bound, bound_source) = bound_of(data, opts)?;
        let z = unit_rows(&data.rows, bound);
        // The default release reads only `z` (noisy counts and sums need no class size); the
        // other paths fit every class of `z`, which checks the sizes.
        let fits = if end_to_end {
            Vec::new()
        } else {
            fit_classes_any(&z, &data.labels, &data.classes, d)
                .and_then(|f| {
                    check_invertible(&f, &data.classes)?;
                    Ok(f)
                })
                .map_err(|e| {
                    Error::Data(format!("after clipping rows to ‖x‖ ≤ B = {bound}: {e}"))
                })?
        };
        let mut counts = vec![0usize; k];
        for &y in &data.labels {
            counts[y] += 1;
        }
        let pi: Vec<f64> = counts.iter().map(|&c| c as f64 / n as f64).collect();
        Ok(Prepared {
            data,
            opts,
            n,
            k,
            d,
            end_to_end,
            bound,
            bound_source,
            z,
            fits,
            counts,
            pi,
            reference,
            kl_unavailable,
        })
    }
}

/// Whether the options select the default, end-to-end DP release (noisy sufficient
/// statistics): record adjacency, `optimized` noise, Gaussian covariance noise.
fn is_end_to_end(opts: &GmmOptions) -> bool {
    opts.noise == Noise::Optimized
        && opts.adjacency == Adjacency::Record
        && opts.covariance_noise == CovarianceNoise::Gaussian
}

/// Rows clipped to ‖x‖₂ ≤ B and divided by B (the unit ball).
fn unit_rows(rows: &[Vec<f64>], bound: f64) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| {
            let nr = r.iter().map(|x| x * x).sum::<f64>().sqrt();
            let f = if nr > bound { bound / nr } else { 1.0 } / bound;
            r.iter().map(|x| x * f).collect()
        })
        .collect()
}

/// B: given, or (label adjacency only, where the features are public) the largest row norm.
fn bound_of(data: &GmmData, opts: &GmmOptions) -> Result<(f64, String)> {
    if let Some(b) = opts.bound {
        return Ok((b, "given (bound)".to_string()));
    }
    let max_norm = data
        .rows
        .iter()
        .map(|r| r.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    if !(max_norm > 0.0 && max_norm.is_finite()) {
        return Err(Error::Data("every row is zero; nothing to model".into()));
    }
    Ok((
        max_norm,
        // Only under label adjacency (record adjacency requires a public bound).
        "data: the largest row norm (features are public under label adjacency)".to_string(),
    ))
}

/// The released parameters (unit-ball units) and what the receipt says about them.
struct Noised {
    weights: Vec<f64>,
    means: Vec<Vec<f64>>,
    covs: Vec<Mat>,
    epsilon: f64,
    delta: f64,
    protected: Vec<ProtectedItem>,
    budget: GmmBudget,
    noise_grids: Vec<NoiseGrid>,
    sdp: Vec<SdpCertificate>,
    design_iterations: usize,
    weights_branch: String,
    warnings: Vec<String>,
    /// The classes released (indices into the data's), when labels read from the data were
    /// thresholded; None: every class.
    kept: Option<Vec<usize>>,
    /// The released class counts' total (None: the path releases no counts).
    released_rows: Option<usize>,
}

/// The weights π̃_k = Ñ_k / Σ_j Ñ_j of released class counts (the cell of the records without
/// a label was dropped, so they sum to less than N).
fn weights_of(counts: &[usize]) -> Vec<f64> {
    let total: usize = counts.iter().sum();
    counts.iter().map(|&c| c as f64 / total as f64).collect()
}

/// The receipt's name for the weights' branch.
fn branch_name(b: weights::Branch) -> String {
    match b {
        weights::Branch::NoisyCounts => "noisy counts".into(),
        weights::Branch::Uniform => "uniform (λ smoothing)".into(),
    }
}

/// The default release (record adjacency, `optimized`, Gaussian covariances): noisy class
/// counts, sums and second moments with a public split and public scales ([`suffstats`]).
/// With `split` (made with a DP basis or DP feature marginals, [`suffstats::Split::with_extras`],
/// and released by the caller), those releases share the budget: their grids, protected items
/// and composition terms are added to the receipt.
fn noise_suffstats(
    p: &Prepared<'_>,
    split: Option<suffstats::Split>,
    rng: &mut ReleaseRng,
) -> Result<Noised> {
    let Prepared {
        data,
        opts,
        n,
        k,
        d,
        ref z,
        ..
    } = *p;
    let mut noise_grids = Vec::new();
    // Labels read from the data are released under a DP threshold; listed ones are public.
    let split = match split {
        Some(s) => s,
        None => suffstats::Split::with_labels(opts.epsilon, opts.delta, d, opts.classes.is_none())?,
    };
    let r = suffstats::release(z, &data.labels, k, n, &split, opts.lambda, rng)?;
    let weights_branch = branch_name(r.branch);
    let w_rel = weights_of(&r.counts);
    let released_rows = r.counts.iter().sum();
    noise_grids.push(NoiseGrid::counts(split.eps_counts)?);
    noise_grids.push(NoiseGrid {
        what: "class sums Σ z (unit ball)".into(),
        noise: "discrete Gaussian",
        grid: r.sum_grid,
        scale: r.sum_scale,
    });
    noise_grids.push(NoiseGrid {
        what: "class second moments Σ z zᵀ, upper triangle (unit ball)".into(),
        noise: "discrete Gaussian",
        grid: r.moment_grid,
        scale: r.moment_scale,
    });
    let grid = |what: String, noise: GridGaussian| NoiseGrid {
        what,
        noise: "discrete Gaussian",
        grid: noise.grid(),
        scale: noise.sigma_units() * noise.grid(),
    };
    if split.marginal_features > 0 {
        let what = format!(
            "feature histograms: {} features × {} equal bins of the public box (counts)",
            split.marginal_features, split.marginal_bins
        );
        noise_grids.insert(0, grid(what, split.marginal_noise()?));
    }
    if split.basis_dim > 0 {
        let what = format!(
            "the principal subspace's second moment Σ z zᵀ over all rows, upper triangle ({} input features, unit ball)",
            split.basis_dim
        );
        noise_grids.insert(0, grid(what, split.basis_noise()?));
    }
    let mu_rel = r.means;
    let cov_rel = r.covs;
    let released = r.kept.len();
    let kept = split.threshold.map(|_| r.kept);
    let eps_total = split.epsilon();
    let delta_total = split.delta();
    let mut protected = vec![
        ProtectedItem {
            what: "class counts (the weights π̃_k = Ñ_k/Σ_j Ñ_j and the divisors of the means and covariances)".into(),
            how: "exact discrete Laplace noise of scale ≥ 2/ε_counts on every count (L1 sensitivity 2 for a replaced record, 1 for an added or removed one), with one more cell for the records without a class, projected onto the compositions of their own noisy total (N is not read) and that cell dropped, smoothed with λ·Uniform".into(),
            epsilon: split.eps_counts,
            delta: 0.0,
        },
        ProtectedItem {
            what: "class sums Σ z (→ means μ̃_k = S̃_k/Ñ_k; the ε of one class's release alone)".into(),
            how: format!("exact discrete Gaussian on a grid (noise multiplier ≥ σ/Δ of N(0, σ²I)) on the unit-ball sum, σ = 2·z = {:.6}", split.sigma_sum),
            epsilon: split.eps_sum_alone,
            delta: split.delta,
        },
        ProtectedItem {
            what: "class second moments Σ z zᵀ (→ covariances, eigenvalues clipped; the ε of one class's release alone)".into(),
            how: format!("symmetric exact discrete Gaussian noise on a grid on the upper triangle (noise multiplier ≥ σ/Δ), σ = √2·z = {:.6}", split.sigma_moment),
            epsilon: split.eps_moment_alone,
            delta: split.delta,
        },
    ];
    let labels_note = match split.threshold {
        Some(t) => {
            protected.insert(1, ProtectedItem {
                what: "the set of class labels (read from the data)".into(),
                how: format!("a label is released only when its noisy class count (the counts' discrete Laplace noise above) reaches {t}, so the label of a single record is released with probability below its share of δ; the records of the other labels count in N and belong to no class. Its ε is the counts' (the same noisy counts), not an addition"),
                epsilon: 0.0,
                delta: split.delta_labels,
            });
            format!("; the labels read from the data take δ_labels = {} of δ (their threshold), so δ = δ_Gaussian + δ_labels", split.delta_labels)
        }
        None => String::new(),
    };
    // The extra releases go first (the basis, then the marginals), before the labels' item.
    if split.marginal_features > 0 {
        protected.insert(0, ProtectedItem {
            what: format!("the feature marginals: each of the {} features' histogram on {} equal bins of its public interval (sampled values are mapped onto them; the ε of that release alone)", split.marginal_features, split.marginal_bins),
            how: format!("exact discrete Gaussian noise on a grid on the counts (L2 sensitivity √(2d) = {:.6}: a record counts once per feature), σ = {:.6}, a public share {} of the Gaussian releases' ρ; counts below 2σ are then set to 0 and the rest normalized (post-processing)", marginals::sensitivity(split.marginal_features), split.sigma_marginals, marginals::MARGINAL_SHARE),
            epsilon: split.eps_marginals_alone,
            delta: split.delta,
        });
    }
    if split.basis_dim > 0 {
        protected.insert(0, ProtectedItem {
            what: format!("the principal subspace: the {d} components of the model's projection, the top eigenvectors of the released second moment of all rows (the ε of that release alone)"),
            how: format!("symmetric exact discrete Gaussian noise on a grid on the upper triangle of Σ z zᵀ (Frobenius sensitivity √2; noise multiplier ≥ σ/Δ), σ = {:.6}, a public share {} of the Gaussian releases' ρ; the rows are then projected onto it (post-processing) and the class statistics below are of the projected rows", split.sigma_basis, subspace::BASIS_SHARE),
            epsilon: split.eps_basis_alone,
            delta: split.delta,
        });
    }
    let basis_note = match (split.basis_dim > 0, split.marginal_features > 0) {
        (true, true) => "; the principal subspace's and the feature histograms' releases are two more Gaussian mechanisms in the same ρ (ρ = ρ_basis + ρ_marginals + the class statistics' worst case)",
        (true, false) => "; the principal subspace's release is one more Gaussian mechanism in the same ρ (ρ = ρ_basis + the class statistics' worst case)",
        (false, true) => "; the feature histograms' release is one more Gaussian mechanism in the same ρ (ρ = ρ_marginals + the class statistics' worst case)",
        (false, false) => "",
    };
    let budget = GmmBudget {
        epsilon_weights: split.eps_counts,
        epsilon_means: vec![split.eps_sum_alone; released],
        epsilon_covariances: vec![split.eps_moment_alone; released],
        delta_weights: split.delta_labels,
        delta_means: split.delta,
        delta_covariances: split.delta,
        composition: format!(
            "ε = ε_counts + ε_Gaussian = {:.6} + {:.6}: the sums and second moments a neighbour can change (one class's, by 2 and √2, or two classes', by 1 each) compose under RDP as one Gaussian mechanism{basis_note}, ρ = {:.6} (zCDP, on the release grids; the discrete Gaussian has the Gaussian's RDP curve, CKS20), converted to ε_Gaussian at δ_Gaussian = {}; the counts are pure DP{labels_note}. The per-class ε of the means and covariances above are each release alone at the same δ, not terms of a sum. Public: z = {:.6} from (ε, δ, d) only, the same for every class and dataset",
            split.eps_counts, split.eps_gaussian, split.rho, split.delta, split.z
        ),
    };
    Ok(Noised {
        weights: w_rel,
        means: mu_rel,
        covs: cov_rel,
        epsilon: eps_total,
        delta: delta_total,
        protected,
        budget,
        noise_grids,
        sdp: Vec::new(),
        design_iterations: 0,
        weights_branch,
        warnings: Vec::new(),
        kept,
        released_rows: Some(released_rows),
    })
}

/// Algorithm 1's per-class design inputs: each class's mean constraint (from the SDP under
/// the label adjacency, with its certificate), the KL cost of a unit of mean noise, the
/// covariance's eigenvalues and its noise cost.
fn design_inputs(
    p: &Prepared<'_>,
    delta_c: f64,
) -> Result<(Vec<ClassDesignInput>, Vec<Mat>, Vec<SdpCertificate>)> {
    let (data, opts, z) = (p.data, p.opts, &p.z);
    let mut inputs = Vec::with_capacity(p.k);
    let mut x1 = Vec::with_capacity(p.k);
    let mut sdp_certs = Vec::new();
    for (c, f) in p.fits.iter().enumerate() {
        let prec = linalg::spd_inverse(&f.cov).ok_or_else(|| {
            Error::Data(format!("class '{}': singular covariance", data.classes[c]))
        })?;
        let x = unit_mean_constraint(opts.adjacency, z, &data.labels, c, f, &prec)
            .map_err(|e| prefix_class(e, &data.classes[c]))?;
        if let Some(cert) = x.1 {
            sdp_certs.push(SdpCertificate {
                class: data.classes[c].clone(),
                ..cert
            });
        }
        let mkl = 0.5 * trace_prod(&prec, &x.0);
        inputs.push(ClassDesignInput {
            count: f.count,
            cov_eigs: sym_eigen(&f.cov).0,
            mean_kl_unit: mkl,
            cov_cost: match opts.covariance_noise {
                CovarianceNoise::Wishart => CovCost::Wishart {
                    rate: 2.0 / f.count as f64,
                },
                CovarianceNoise::Gaussian => CovCost::Gaussian {
                    sensitivity: cov_sensitivity(f.count),
                    delta: delta_c,
                },
            },
        });
        x1.push(x.0);
    }
    Ok((inputs, x1, sdp_certs))
}

/// What Algorithm 1 protects and how: the weights, the means, the covariances.
fn designed_protected(
    opts: &GmmOptions,
    des: &design::Design,
    delta_m: f64,
    delta_c: f64,
    wishart_dof: usize,
) -> Vec<ProtectedItem> {
    let gaussian_cov = opts.covariance_noise == CovarianceNoise::Gaussian;
    let mean_how = match opts.adjacency {
        Adjacency::Record => "exact discrete Gaussian on a grid covering N(0, Γ_k⁻¹) with Γ_k⁻¹ = s_k²/r(ε_k, δ_mean)²·I, s_k = 2B/(N_k − 1) (worst case, ‖x‖ ≤ B; rounding margin included)",
        Adjacency::Label => "Gaussian N(0, Γ_k⁻¹) designed by the SDP (23) over the label-flip sensitivities (local sensitivity): the whitened mean L_k⁻¹μ_k (Γ_k⁻¹ = L_k L_kᵀ) is released with exact discrete Gaussian noise of multiplier ≥ 1/r_k, then multiplied by L_k",
    };
    vec![
        ProtectedItem {
            what: "weights π̃".into(),
            how: "randomized mapping on the compositions of N: exact discrete Laplace noise (scale ≥ 2/ε_weights) on the class counts and a cell for the records without a label, projected onto S and that cell dropped, smoothed with λ·Uniform(S)".into(),
            epsilon: des.eps0,
            delta: 0.0,
        },
        ProtectedItem {
            what: "means μ̃_k (ε per class; a neighbour changes two classes)".into(),
            how: mean_how.into(),
            epsilon: des.eps_mean.iter().cloned().fold(0.0, f64::max),
            delta: delta_m,
        },
        if gaussian_cov {
            ProtectedItem {
                what: "covariances Σ̃_k (ε per class; eigenvalues clipped at σ_k)".into(),
                how: "exact discrete Gaussian noise on a grid on the upper triangle of the unit-ball covariance (noise multiplier ≥ σ_k/f_k), σ_k = max(f_k/r(ε_cov,k, δ/4), 2f_k/r(2ε_cov,k, δ/2)), f_k = 1/(N_k − 2) + 4/N_k (worst-case Frobenius sensitivity of adding or removing a point; 2f_k for a replacement inside the class)".into(),
                epsilon: des.eps_cov.iter().cloned().fold(0.0, f64::max),
                delta: delta_c,
            }
        } else {
            ProtectedItem {
                what: "covariances Σ̃_k (ε per class, accounted but NOT a valid guarantee: see warnings)".into(),
                how: format!("Wishart_d(I/γ_k, {wishart_dof}) noise on the unit-ball covariance, ε_W,k = 2γ_k/N_k on the common support"),
                epsilon: des.eps_cov.iter().cloned().fold(0.0, f64::max),
                delta: 0.0,
            }
        },
    ]
}

/// The paper's Algorithm 1 (label adjacency, or Wishart covariances): the budget split and
/// the noise shapes designed from the non-private fit (declared unprotected), designed
/// colored means, Wishart or Gaussian covariances, randomized weights.
fn noise_designed(p: &Prepared<'_>, rng: &mut ReleaseRng) -> Result<Noised> {
    let Prepared {
        opts,
        n,
        k,
        d,
        ref counts,
        ref pi,
        ..
    } = *p;
    let wishart_dof = d + 1;
    let mut noise_grids = Vec::new();
    let mut warnings = Vec::new();
    let gaussian_cov = opts.covariance_noise == CovarianceNoise::Gaussian;
    // per class: the mean gets δ/2 (δ/4 with Gaussian covariances, which get the other δ/4)
    let delta_m = if gaussian_cov {
        opts.delta / 4.0
    } else {
        opts.delta / 2.0
    };
    let delta_c = opts.delta / 4.0;
    let (inputs, x1, sdp_certs) = design_inputs(p, delta_c)?;
    let des = design::optimize(
        &inputs,
        pi,
        d,
        opts.epsilon,
        delta_m,
        opts.lambda,
        opts.tolerance,
    );
    let design_iterations = des.iterations;
    let (means, covs) = designed_means_covs(p, &des, &x1, gaussian_cov, &mut noise_grids, rng)?;
    let (cnt, branch) = weights::release_counts(counts, n, des.eps0, opts.lambda, rng)?;
    noise_grids.insert(0, NoiseGrid::counts(des.eps0)?);
    let weights_branch = branch_name(branch);
    let w_rel = weights_of(&cnt);
    let released_rows = cnt.iter().sum();
    let mu_rel = means;
    let cov_rel = covs;
    let per_class_max = (0..k)
        .map(|c| des.eps_mean[c] + des.eps_cov[c])
        .fold(0.0, f64::max);
    let eps_total = des.eps0 + 2.0 * per_class_max;
    let delta_total = 2.0 * delta_m + if gaussian_cov { 2.0 * delta_c } else { 0.0 };
    let protected = designed_protected(opts, &des, delta_m, delta_c, wishart_dof);
    let cov_warning = format!(
        "covariances NOT protected by a worst-case guarantee: Wishart noise with d + 1 = {wishart_dof} degrees of freedom (the GMM paper's, after Jiang et al. 2016) has a data-dependent support {{S ≻ Σ_k}}; \
         the released Σ̃_k lies outside a neighbouring dataset's support with probability up to ≈ 1 − exp(−ε_W,k) (here up to {:.3}), so the ε_W,k accounted for them is not an (ε, δ)-DP bound",
        1.0 - (-des.eps_cov.iter().cloned().fold(0.0, f64::max)).dexp()
    );
    if !gaussian_cov {
        warnings.push(cov_warning);
    }
    let budget = designed_budget(&des, gaussian_cov, delta_m, delta_c);
    Ok(Noised {
        weights: w_rel,
        means: mu_rel,
        covs: cov_rel,
        epsilon: eps_total,
        delta: delta_total,
        protected,
        budget,
        noise_grids,
        sdp: sdp_certs,
        design_iterations,
        weights_branch,
        warnings,
        kept: None,
        released_rows: Some(released_rows),
    })
}

/// Algorithm 1's per-class releases: designed colored means and Wishart or (exact) Gaussian
/// covariances; each noise grid is appended to `noise_grids`.
fn designed_means_covs(
    p: &Prepared<'_>,
    des: &design::Design,
    x1: &[Mat],
    gaussian_cov: bool,
    noise_grids: &mut Vec<NoiseGrid>,
    rng: &mut ReleaseRng,
) -> Result<(Vec<Vec<f64>>, Vec<Mat>)> {
    let Prepared {
        data,
        opts,
        k,
        d,
        ref z,
        ref fits,
        ..
    } = *p;
    let wishart_dof = d + 1;
    let stats = class_stats(z, &data.labels, k, d)?;
    let mut means = Vec::with_capacity(k);
    let mut covs = Vec::with_capacity(k);
    for c in 0..k {
        let gi = x1[c].scale(1.0 / (des.r[c] * des.r[c]));
        let (mu, grid) =
            release_mean(opts.adjacency, &stats[c], &fits[c].mean, &gi, des.r[c], rng)?;
        means.push(mu);
        noise_grids.push(NoiseGrid {
            what: format!("class '{}': {}", data.classes[c], grid.what),
            ..grid
        });
        if gaussian_cov {
            let sc = des.sigma_cov[c];
            // Covered at the smaller shape f_k: with Δ' ≥ f_k + margin, the grid
            // sensitivity of a replacement inside the class (≤ 2Δ' as computed) is
            // ≤ 2(Δ'/g + √m), so its noise multiplier is ≥ σ_k/(2f_k), the design's.
            let m = d * (d + 1) / 2;
            let noise = GridNoise::gaussian(sc, cov_sensitivity(stats[c].count), m)?;
            covs.push(noisy_psd(&stats[c].cov(), &noise, sc, rng)?);
            noise_grids.push(NoiseGrid::of(
                format!("class '{}': covariance, upper triangle", data.classes[c]),
                &noise,
            ));
        } else {
            let w = wishart::sample_wishart(d, wishart_dof, des.gamma[c], rng)?;
            covs.push(fits[c].cov.add(&w).symmetrize());
        }
    }
    Ok((means, covs))
}

/// Algorithm 1's budget: the weights' ε, each class's mean and covariance ε, and how they
/// compose (a neighbour changes at most two classes).
fn designed_budget(
    des: &design::Design,
    gaussian_cov: bool,
    delta_m: f64,
    delta_c: f64,
) -> GmmBudget {
    GmmBudget {
        epsilon_weights: des.eps0,
        epsilon_means: des.eps_mean.clone(),
        epsilon_covariances: des.eps_cov.clone(),
        delta_weights: 0.0,
        delta_means: 2.0 * delta_m,
        delta_covariances: if gaussian_cov { 2.0 * delta_c } else { 0.0 },
        composition: if gaussian_cov {
            "ε = ε_weights + 2·max_k(ε_mean,k + ε_cov,k) (a neighbour changes at most two classes; basic composition); δ = 2·(δ/4 + δ/4) (means and covariances of two classes)".into()
        } else {
            "ε = ε_weights + 2·max_k(ε_mean,k + ε_cov,k) (a neighbour changes at most two classes; basic composition); δ = 2·δ/2 (means)".into()
        },
    }
}

/// What the baselines protect and how: weights, means and covariances at ε/3 and δ/3 each.
fn baseline_protected(opts: &GmmOptions, e3: f64, d3: f64) -> Vec<ProtectedItem> {
    let laplace = opts.noise == Noise::IidLaplace;
    let kind = if laplace {
        "exact discrete Laplace on a grid"
    } else {
        "exact discrete Gaussian on a grid (σ from the Gaussian's RDP curve, which the discrete noise is proven to have)"
    };
    let mean_how = if opts.noise == Noise::ColoredGaussian {
        match opts.adjacency {
            Adjacency::Record => "isotropic Gaussian (the MSE-optimal colored noise under a norm bound), sampled as an exact discrete Gaussian on a grid, per class ε/6, δ/6".to_string(),
            Adjacency::Label => "MSE-optimal colored Gaussian (SDP with C = I) over the label-flip sensitivities (local sensitivity), per class ε/6, δ/6: the whitened mean gets exact discrete Gaussian noise, then is colored (post-processing)".to_string(),
        }
    } else {
        format!("i.i.d. {kind} on every coordinate, worst-case sensitivity")
    };
    vec![
        ProtectedItem {
            what: "weights π̃ (projected onto the simplex with π_k ≥ 1/N)".into(),
            how: format!("i.i.d. {kind}, worst-case sensitivity"),
            epsilon: e3,
            delta: d3,
        },
        ProtectedItem {
            what: "means μ̃_k".into(),
            how: mean_how,
            epsilon: e3,
            delta: d3,
        },
        ProtectedItem {
            what: "covariances Σ̃_k (upper triangle; eigenvalues clipped at the noise standard deviation)".into(),
            how: format!("i.i.d. {kind}, worst-case sensitivity"),
            epsilon: e3,
            delta: d3,
        },
    ]
}

/// The baselines: i.i.d. Gaussian or Laplace noise on weights, means and covariances (equal
/// thirds of ε), or the MSE-optimal colored Gaussian on the means.
fn noise_baseline(p: &Prepared<'_>, rng: &mut ReleaseRng) -> Result<Noised> {
    let Prepared {
        data,
        opts,
        n,
        k,
        d,
        ref z,
        ref counts,
        ..
    } = *p;
    let mut noise_grids = Vec::new();
    let s = sensitivities(counts, d);
    let e3 = opts.epsilon / 3.0 * (1.0 - 1e-12);
    let laplace = opts.noise == Noise::IidLaplace;
    let d3 = if laplace { 0.0 } else { opts.delta / 3.0 };
    // Exact noise; each group's coordinates a neighbour can change: the K weights,
    // the means and covariances of (at most) two classes.
    let kd = d * k.min(2);
    let km = d * (d + 1) / 2 * k.min(2);
    let (nw, nm, nc) = if laplace {
        (
            GridNoise::laplace(e3, s.w1, k)?,
            GridNoise::laplace(e3, s.m1, kd)?,
            GridNoise::laplace(e3, s.c1, km)?,
        )
    } else {
        (
            GridNoise::gaussian(gaussian_sigma(s.w2, e3, d3), s.w2, k)?,
            GridNoise::gaussian(gaussian_sigma(s.m2, e3, d3), s.m2, kd)?,
            GridNoise::gaussian(gaussian_sigma(s.c2, e3, d3), s.c2, km)?,
        )
    };
    let stats = class_stats(z, &data.labels, k, d)?;
    let mut noisy_w: Vec<f64> = stats.iter().map(|st| st.count as f64 / n as f64).collect();
    nw.add_noise(&mut noisy_w, rng)?;
    noise_grids.push(NoiseGrid::of("weights", &nw));
    let w_rel = project_simplex_floor(&noisy_w, 1.0 / n as f64);
    let BaselineMeans {
        means: mu_rel,
        noise_grids: mean_grids,
        sdp_certs,
    } = baseline_means(p, &stats, &nm, e3, d3, rng)?;
    noise_grids.extend(mean_grids);
    let cov_rel = stats
        .iter()
        .map(|st| noisy_psd(&st.cov(), &nc, nc.std(), rng))
        .collect::<Result<Vec<Mat>>>()?;
    noise_grids.push(NoiseGrid::of("covariances, upper triangle", &nc));
    let eps_total = 3.0 * e3;
    let delta_total = 3.0 * d3;
    let protected = baseline_protected(opts, e3, d3);
    let budget = GmmBudget {
        epsilon_weights: e3,
        epsilon_means: vec![e3; k],
        epsilon_covariances: vec![e3; k],
        delta_weights: d3,
        delta_means: d3,
        delta_covariances: d3,
        composition: "ε = ε_weights + ε_means + ε_covariances (equal thirds; each group's sensitivity covers every class a neighbour changes); δ likewise".into(),
    };
    Ok(Noised {
        weights: w_rel,
        means: mu_rel,
        covs: cov_rel,
        epsilon: eps_total,
        delta: delta_total,
        protected,
        budget,
        noise_grids,
        sdp: sdp_certs,
        design_iterations: 0,
        weights_branch: String::new(),
        warnings: Vec::new(),
        kept: None,
        released_rows: None,
    })
}

/// The baselines' means: the MSE-optimal colored Gaussian per class (ε/6, δ/6 each), or
/// i.i.d. grid noise `nm` on every coordinate; with their noise grids and SDP certificates.
fn baseline_means(
    p: &Prepared<'_>,
    stats: &[ClassStats],
    nm: &GridNoise,
    e3: f64,
    d3: f64,
    rng: &mut ReleaseRng,
) -> Result<BaselineMeans> {
    let mut noise_grids = Vec::new();
    let mut sdp_certs = Vec::new();
    let Prepared {
        data,
        opts,
        k,
        d,
        ref z,
        ref fits,
        ..
    } = *p;
    let mut means = Vec::with_capacity(k);
    if opts.noise == Noise::ColoredGaussian {
        let r = max_mahalanobis_sensitivity(e3 / 2.0, d3 / 2.0);
        for (c, f) in fits.iter().enumerate() {
            let eye = Mat::eye(d, 1.0);
            let x = unit_mean_constraint(opts.adjacency, z, &data.labels, c, f, &eye)
                .map_err(|e| prefix_class(e, &data.classes[c]))?;
            if let Some(cert) = x.1 {
                sdp_certs.push(SdpCertificate {
                    class: data.classes[c].clone(),
                    ..cert
                });
            }
            let (mu, grid) = release_mean(
                opts.adjacency,
                &stats[c],
                &f.mean,
                &x.0.scale(1.0 / (r * r)),
                r,
                rng,
            )?;
            means.push(mu);
            noise_grids.push(NoiseGrid {
                what: format!("class '{}': {}", data.classes[c], grid.what),
                ..grid
            });
        }
    } else {
        for st in stats {
            let mut m = st.mean();
            nm.add_noise(&mut m, rng)?;
            means.push(m);
        }
        noise_grids.push(NoiseGrid::of("means", nm));
    }
    Ok(BaselineMeans {
        means,
        noise_grids,
        sdp_certs,
    })
}

/// The baselines' released means, with their noise grids and SDP certificates.
struct BaselineMeans {
    means: Vec<Vec<f64>>,
    noise_grids: Vec<NoiseGrid>,
    sdp_certs: Vec<SdpCertificate>,
}

/// The model in the input's units (post-processing), the owner's KL and the receipt.
fn finish(p: Prepared<'_>, noised: Noised, rng: &mut ReleaseRng) -> Result<GmmRelease> {
    let Prepared {
        data,
        opts,
        n,
        d,
        end_to_end,
        bound,
        bound_source,
        reference,
        kl_unavailable,
        ..
    } = p;
    let Noised {
        weights: w_rel,
        means: mu_rel,
        covs: cov_rel,
        epsilon: eps_total,
        delta: delta_total,
        protected,
        budget,
        noise_grids,
        sdp: sdp_certs,
        design_iterations,
        weights_branch,
        mut warnings,
        kept,
        released_rows,
    } = noised;
    let wishart_dof = d + 1;
    if opts.adjacency == Adjacency::Label {
        warnings.insert(0, LOCAL_SENSITIVITY_WARNING.to_string());
    }
    if rng.seed().is_some() {
        warnings.push("seeded, not for release".into());
    }
    // The classes released; with thresholded labels, those left out are told to the owner.
    let (classes, left_out, kl_unavailable) = match &kept {
        Some(kept) if kept.len() < data.classes.len() => (
            kept.iter().map(|&c| data.classes[c].clone()).collect(),
            (0..data.classes.len())
                .filter(|c| !kept.contains(c))
                .map(|c| data.classes[c].clone())
                .collect(),
            Some("the release leaves out classes of the data (their noisy counts did not reach the labels' threshold), so it has no KL to the non-private model".to_string()),
        ),
        _ => (data.classes.clone(), Vec::new(), kl_unavailable),
    };
    let model = model_in_units(data, &classes, w_rel, &mu_rel, &cov_rel, bound)?;
    // The owner's reference model has every class of the data: no comparison when some
    // were left out.
    let reference = if left_out.is_empty() { reference } else { None };
    let kl = reference.as_ref().map(|r| model_kl(&model, r));
    let receipt = GmmReceipt {
        epsilon: eps_total,
        delta: delta_total,
        mechanism: "gmm",
        guarantee: guarantee(opts, bound, end_to_end, data.rows_dropped),
        protected,
        budget,
        parameters: GmmParameters {
            noise: opts.noise,
            adjacency: opts.adjacency,
            target_epsilon: opts.epsilon,
            bound,
            bound_source,
            clipping: format!("rows with ‖x‖₂ > B are scaled to norm B = {bound} before the release; features are then divided by B (unit ball)"),
            lambda: opts.lambda,
            tolerance: opts.tolerance,
            design_iterations,
            sdp: sdp_certs,
            wishart_dof,
            weights_branch,
            pca: None,
            covariance_noise: opts.covariance_noise,
            noise_grids,
        },
        data: GmmDataReport {
            rows_used: (!end_to_end).then_some(n),
            rows_dropped: data.rows_dropped,
            features: data.features.clone(),
            label: data.label.clone(),
            classes,
        },
        randomness: Randomness::of(rng),
        warnings,
        version: VERSION,
        build_id: BUILD_ID,
    };
    if !(eps_total <= opts.epsilon) {
        return Err(Error::Data(format!(
            "internal: accounted ε {eps_total} exceeds the target {}",
            opts.epsilon
        )));
    }
    Ok(GmmRelease {
        model,
        kl,
        kl_unavailable,
        filled_cells: vec![],
        unlabelled: 0,
        classes_left_out: left_out,
        reference,
        epsilon: eps_total,
        delta: delta_total,
        receipt,
        default_samples: released_rows.unwrap_or(n),
    })
}

/// The released model in the input's units (post-processing): means × B, covariances × B².
fn model_in_units(
    data: &GmmData,
    classes: &[String],
    w_rel: Vec<f64>,
    mu_rel: &[Vec<f64>],
    cov_rel: &[Mat],
    bound: f64,
) -> Result<GmmModel> {
    let b2 = bound * bound;
    let model = GmmModel {
        classes: classes.to_vec(),
        weights: w_rel,
        means: mu_rel
            .iter()
            .map(|m| m.iter().map(|x| x * bound).collect())
            .collect(),
        covariances: cov_rel
            .iter()
            .map(|c| c.scale(b2).symmetrize().to_rows())
            .collect(),
        features: data.features.clone(),
        label: data.label.clone(),
        projection: None,
        support: None,
        marginals: None,
    };
    model
        .validate()
        .map_err(|e| Error::Data(format!("internal: released {e}")))?;
    Ok(model)
}

/// What the GMM release's guarantee covers: the adjacency (with B), what is public, what is
/// not protected, and its limitations.
fn guarantee(opts: &GmmOptions, bound: f64, end_to_end: bool, rows_dropped: usize) -> Guarantee {
    // N is public where the adjacency only replaces records; the default release also covers
    // an added or removed record and reads N only through its noisy counts.
    let mut public_information = Vec::new();
    if !end_to_end {
        public_information.push("the number of records N (a record without a label counts in N and belongs to no class; how many there were is told to the data owner only)".to_string());
    }
    public_information.push("the feature names".to_string());
    // The class labels: listed with the request (public), released under a threshold (the
    // default path: a protected item), or read from the data (declared here).
    let mut unprotected: Vec<String> = Vec::new();
    match &opts.classes {
        Some(list) => public_information.push(format!(
            "the class labels {list:?} listed with the request (classes): a record with another label counts in N and belongs to no class"
        )),
        None if end_to_end => {}
        None => unprotected.push(
            "the set of class labels, read from the data (list them with classes if they are public; the default release thresholds them instead)".to_string(),
        ),
    }
    if opts.adjacency == Adjacency::Label {
        public_information
            .push("all feature values (only labels are private under label adjacency)".into());
    }
    // The kl returned beside the release is computed from the non-private model: it is not
    // part of the release (callers put it under `private`), so it is a limitation, not an
    // unprotected released number.
    if !end_to_end {
        unprotected.push(
"the noise design (budget split, Γ_k, γ_k) and the noise scales are computed from the non-private fit (class counts, covariances; under label adjacency the points), as in the paper; the guarantee holds for the design held fixed".to_string()
        );
    }
    if opts.noise == Noise::Optimized && opts.covariance_noise == CovarianceNoise::Wishart {
        unprotected.insert(
            0,
            "covariances Σ̃_k: Wishart support gap (see warnings)".into(),
        );
    }
    if rows_dropped > 0 {
        unprotected.push("rows_dropped (count of rows the CSV reader dropped before the release; computed from the raw data)".into());
    }
    Guarantee {
        adjacency: match opts.adjacency {
            Adjacency::Record if end_to_end => format!("record: add, remove or replace one record (features and label), ‖x‖₂ ≤ B = {bound}; the number of records is not public"),
            Adjacency::Record => format!("record: replace one record (features and label), ‖x‖₂ ≤ B = {bound}"),
            Adjacency::Label => "label: flip one record's label (the paper's Definition 1); features public".into(),
        },
        public_information,
        unprotected,
        limitations: vec![
            exactness_limitation(opts),
            "the kl returned beside the release (under `private`) is computed from the non-private model, for the data owner only; it is not part of the release".into(),
        ],
    }
}

fn check_options(o: &GmmOptions) -> Result<()> {
    check_epsilon(o.epsilon)?;
    check_delta(o.delta)?;
    if !(o.lambda >= 0.0 && o.lambda < 1.0) {
        return Err(Error::param(
            "lambda",
            o.lambda,
            "the smoothing λ must lie in [0, 1), e.g. 0.001",
        ));
    }
    if !(o.tolerance > 0.0 && o.tolerance.is_finite()) {
        return Err(Error::param(
            "tolerance",
            o.tolerance,
            "the stopping threshold must be a positive number, e.g. 0.001",
        ));
    }
    if o.bound.is_none() && o.adjacency == Adjacency::Record {
        return Err(Error::param(
            "bound",
            "(none)",
            "under record adjacency (the default) the bound B on every row's L2 norm must be public: give B in the input's units, chosen without looking at the data (rows above it are scaled down to it); computing it from the data would publish the largest row's norm",
        ));
    }
    if let Some(b) = o.bound {
        if !(b > 0.0 && b.is_finite()) {
            return Err(Error::param(
                "bound",
                b,
                "B must be a positive finite bound on the rows' L2 norm, in the input's units",
            ));
        }
    }
    Ok(())
}

/// Worst-case Frobenius sensitivity of a class's unbiased covariance (unit ball) when a point
/// is added or removed: removing x changes Σ_k by Σ′/(N_k − 1) − v vᵀ/N_k with
/// tr Σ′ ≤ (N_k − 1)/(N_k − 2) and ‖v‖ ≤ 2 (see [`baselines`]).
pub fn cov_sensitivity(count: usize) -> f64 {
    1.0 / (count as f64 - 2.0) + 4.0 / count as f64
}

fn prefix_class(e: Error, class: &str) -> Error {
    Error::Data(format!("class '{class}': {e}"))
}

fn trace_prod(a: &Mat, b: &Mat) -> f64 {
    let d = a.n;
    (0..d)
        .map(|i| (0..d).map(|j| a.get(i, j) * b.get(j, i)).sum::<f64>())
        .sum()
}

/// X_k(1): the cheapest (in tr(C X)) noise covariance whose constraint X ⪰ v vᵀ holds for every
/// unit-ball sensitivity vector of class `c`, with its SDP certificate when an SDP was solved.
fn unit_mean_constraint(
    adjacency: Adjacency,
    z: &[Vec<f64>],
    labels: &[usize],
    c: usize,
    f: &ClassFit,
    objective: &Mat,
) -> Result<(Mat, Option<SdpCertificate>)> {
    let d = f.mean.len();
    match adjacency {
        Adjacency::Record => {
            let s = 2.0 / (f.count as f64 - 1.0);
            Ok((Mat::eye(d, s * s), None))
        }
        Adjacency::Label => {
            let nk = f.count as f64;
            let vs: Vec<Vec<f64>> = z
                .iter()
                .zip(labels)
                .map(|(x, &y)| {
                    if y == c {
                        x.iter()
                            .zip(&f.mean)
                            .map(|(a, m)| (a - m) / (nk - 1.0))
                            .collect()
                    } else {
                        x.iter()
                            .zip(&f.mean)
                            .map(|(a, m)| (m - a) / (nk + 1.0))
                            .collect()
                    }
                })
                .collect();
            let sol = sdp::solve_min_trace(objective, &vs, SDP_TOLERANCE, 200_000)?;
            Ok((
                sol.x.clone(),
                Some(SdpCertificate {
                    class: String::new(),
                    relative_gap: sol.relative_gap,
                    inflation: sol.inflation,
                    max_constraint: sol.max_constraint,
                    iterations: sol.iterations,
                }),
            ))
        }
    }
}

/// Releases one class mean with noise N(0, Γ⁻¹), Γ⁻¹ = `noise_cov`, exactly:
/// * record adjacency (Γ⁻¹ = (s_k/r)²·I, s_k = 2/(N_k − 1)): the mean computed from the exact
///   statistics gets exact discrete Gaussian noise covering N(0, (s_k/r)²I) at sensitivity s_k
///   plus the float margin ([`exactnoise`]), i.e. noise multiplier ≥ 1/r, the design's;
/// * label adjacency (Γ⁻¹ from the SDP, colored): Γ⁻¹ = L Lᵀ; every certified sensitivity vector
///   v has vᵀ(Γ⁻¹)⁻¹v ≤ r², so ‖L⁻¹v‖ ≤ r: the whitened mean w = L⁻¹μ has L2 sensitivity r and
///   gets exact noise covering N(0, I) at sensitivity r (multiplier ≥ 1/r, the design's);
///   μ̃ = L w̃ is post-processing. The float error of computing L⁻¹μ is not added to r: this
///   path's sensitivity is already local (the receipt says so).
fn release_mean(
    adjacency: Adjacency,
    st: &ClassStats,
    fit_mean: &[f64],
    noise_cov: &Mat,
    r: f64,
    rng: &mut ReleaseRng,
) -> Result<(Vec<f64>, NoiseGrid)> {
    let d = fit_mean.len();
    match adjacency {
        Adjacency::Record => {
            let s = 2.0 / (st.count as f64 - 1.0);
            let noise = GridNoise::gaussian(s / r, s, d)?;
            let mut m = st.mean();
            noise.add_noise(&mut m, rng)?;
            Ok((m, NoiseGrid::of("mean (unit ball)", &noise)))
        }
        Adjacency::Label => {
            let l = cholesky(noise_cov).ok_or_else(|| {
                Error::Data("internal: the mean-noise covariance is not positive definite".into())
            })?;
            let mut w = forward_solve(&l, fit_mean);
            let noise = crate::mechanisms::noise::GridGaussian::covering(1.0, r, d)?;
            noise.add_noise(&mut w, rng)?;
            Ok((
                l.mul_vec(&w),
                NoiseGrid::of(
                    "whitened mean L⁻¹μ (noise units)",
                    &GridNoise::Gaussian(noise),
                ),
            ))
        }
    }
}

/// Which parts of the release are sampled exactly, for the receipt.
fn exactness_limitation(opts: &GmmOptions) -> String {
    let tail = "released on power-of-two grids with noise sampled exactly in integer arithmetic (grids and scales in parameters.noise_grids)";
    let mut s = match (opts.noise, opts.adjacency, opts.covariance_noise) {
        (Noise::Optimized, Adjacency::Record, CovarianceNoise::Gaussian) => format!(
            "exact noise: the class counts (discrete Laplace), sums and second moments (discrete Gaussian) are {tail}; the model holds post-processing of these released numbers only"
        ),
        (Noise::Optimized, _, CovarianceNoise::Wishart) => format!(
            "exact noise: the class counts (discrete Laplace) and the means (discrete Gaussian) are {tail}; NOT exact: the Wishart covariance noise is sampled in floating point (Bartlett decomposition) and the model stores Σ_k + W_k as computed, so least-significant-bit side channels of the covariances are not defended"
        ),
        (Noise::Optimized, _, CovarianceNoise::Gaussian) => format!(
            "exact noise: the class counts (discrete Laplace), the means and the covariances (discrete Gaussian) are {tail}; the model holds post-processing of these released numbers only"
        ),
        (Noise::IidLaplace, _, _) => format!(
            "exact noise: the weights, means and covariances (discrete Laplace) are {tail}; the model holds post-processing of these released numbers only"
        ),
        _ => format!(
            "exact noise: the weights, means and covariances (discrete Gaussian) are {tail}; the model holds post-processing of these released numbers only"
        ),
    };
    if opts.adjacency == Adjacency::Label
        && opts.noise != Noise::IidGaussian
        && opts.noise != Noise::IidLaplace
    {
        s.push_str("; under label adjacency the colored mean noise is released as L·(L⁻¹μ + z) with z exact, and the floating-point rounding of L⁻¹μ is not in the (local) sensitivity");
    }
    s
}

#[cfg(test)]
mod tests;
