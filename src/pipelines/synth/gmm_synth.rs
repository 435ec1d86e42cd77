//! `synth`'s Gaussian class models in a DP principal subspace ([`Mechanism::Gmm`]): the
//! default for wide numeric tables (images as pixel columns), where DP-CDA's average of l
//! noisy rows carries little of each class's shape.
//!
//! # Proof note
//!
//! *Setting.* The data path is DP-CDA's, composed into the curve `extra_curve` (`account` in
//! the synth pipeline): column types (DP or the schema's), DP class counts and label set
//! (standard adjacency; public under keep-label), DP (or public) column ranges and the DP mean
//! row norm, without the normalization's marginals. Each record's row x is its columns mapped
//! into [0, 1] by those ranges, entries clamped into [0, 1] (`encode_rows`: a per-record map
//! fixed before the rows are read). The rows are divided by B, the DP mean norm (else the
//! public maximum norm √d), and clipped into the unit ball: z = x/B if ‖x‖ ≤ B, else x/‖x‖.
//!
//! *The release.* Three Gaussian releases of [`crate::mechanisms::gmm`], each an exact sum
//! on its grid with discrete Gaussian noise, in one ρ
//! ([`crate::mechanisms::gmm::suffstats::Split::within_rho`]):
//! 1. the basis ([`crate::mechanisms::gmm::subspace`]; a public share [`BASIS_SHARE`] of ρ):
//!    the second moment Σ z zᵀ of every row, Frobenius sensitivity √2 for a replaced record;
//!    its top k eigenvectors V are post-processing;
//! 2. the column histograms ([`crate::mechanisms::gmm::marginals`]; the share
//!    [`MARGINAL_SHARE`]): per column, the count of x_j = 0 (an atom at the range's lower end)
//!    and of [`DEFAULT_BINS`] equal bins of (0, 1] over every row; a record counts once per
//!    column, L2 sensitivity √(2d);
//! 3. each released class's sum and second moment of the projected rows y = Vᵀz
//!    ([`crate::mechanisms::gmm::suffstats::release_given_counts`]; ‖y‖ ≤ ‖z‖ ≤ 1; V is
//!    fixed by release 1, so this is adaptive composition): a replaced record moves, within
//!    one class, its sum by ≤ 2 and second moment by ≤ √2, or, changing class, both classes'
//!    by ≤ 1 each; a record whose label was not released moves at most one class's by ≤ 1.
//!
//! ρ is the basis's plus the histograms' plus the worse class case, on the grids actually used
//! (the rounding in each sensitivity): the mechanism is ρ-zCDP, the RDP curve α·ρ at every
//! order (the discrete Gaussian's, Canonne–Kamath–Steinke 2020). No class count is released
//! here: the class means divide by the data path's DP counts (standard adjacency) or the public
//! ones (keep-label).
//!
//! *Calibration.* ρ is the largest whose curve, composed with the data path's, meets the
//! target ε at the data path's δ by the accountant's RDP conversion ([`smallest_z`] never
//! overshoots; `within_rho` never exceeds the ρ it is given). With the PLD accountant (the
//! default) the three releases are, under a worst neighbour, one Gaussian mechanism of
//! 1/z² = 2ρ on the grid-rounded statistics (Gaussians compose exactly, adaptively too, and
//! the hockey-stick divergence grows with the shift), composed with the data path's
//! Gaussians ([`crate::mechanisms::pld_plan`]): ρ is then the largest whose plan the PLD
//! accountant certifies, where that is above RDP's (`pld_split`). Every grid gives its
//! noise at least 2^30 units (`within_rho`'s coupled grids, checked), so the coupling charge
//! of [`crate::accountant::pld::coupling`] covers the discrete noise. The guarantee is
//! recomputed from the composed curves and the plan at the split's own ρ (the synth
//! receipt's `guarantee`: the smaller of the RDP and PLD bounds).
//!
//! *Post-processing.* Means and covariances from the released numbers (eigenvalues clipped
//! into [floor, 1], means into the ball: public facts of unit-ball rows); each class's
//! covariance is then shrunk toward the classes' pooled one,
//! Σ̂_k = (1 − w)·Σ̃_k + w·Σ_c (Ñ_c − 1)Σ̃_c / Σ_c (Ñ_c − 1) with the public w =
//! [`POOLED_SHARE`] (a convex combination, so the eigenvalues stay in (0, 1]). Each class gets the
//! DP counts' share of T; its rows are drawn from N(μ̃_k, Σ̂_k) in the subspace and mapped
//! back, x = B·V·y. Each column is then mapped onto its released histogram,
//! x_j ↦ F_H⁻¹(F_M(x_j)), F_M the model's own marginal of the column (the classes' normals
//! through V, weighted by their rows) and F_H the histogram's (the atom at 0, uniform inside
//! a bin; a column left without counts above 2σ is clamped into [0, 1]), and decoded
//! linearly into the column's range (integer columns rounded).
//!
//! *The automatic choice* ([`auto_gmm`]) reads the columns' types after the DP type decision
//! (or the schema), n (public: records are replaced, not added) and the options: functions of
//! public numbers and DP releases, so choosing releases nothing.

use super::emit::{finish_labelled, Generation, ProgressSink};
use super::{DataPathBudget, Encoded, Mechanism, Plan, PlanInputs, SynthOptions};
use super::{GmmSynthOptions, Sinks};
use crate::accountant::calibrate::{smallest_z, Goal};
use crate::accountant::RdpCurve;
use crate::accountant::{AccountantKind, Preset};
use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::mechanisms::gaussian_steps::GaussianSteps;
use crate::mechanisms::gmm::blockdraw::{correlate_rows, PackedBasis};
use crate::mechanisms::gmm::exactnoise::class_stats;
use crate::mechanisms::gmm::linalg::{cholesky, Mat};
use crate::mechanisms::gmm::marginals::{
    CellCounts, FeatureMarginals, MarginalMap, DEFAULT_BINS, MARGINAL_SHARE,
};
use crate::mechanisms::gmm::subspace::{release_basis_of, MomentSum};
use crate::mechanisms::gmm::suffstats::{release_given_counts, Split, SUM_SENSITIVITY};
use crate::mechanisms::gmm::MAX_PCA_INPUT_DIM;
use crate::mechanisms::pld_plan::SynthPld;
use crate::pipelines::gmm::MAX_DIM_DEFAULT;
use crate::preprocess::auto::{chart_pld_options, chart_points, coarse_orders, EncodingReport};
use crate::preprocess::encode::room_for_rows;
use crate::preprocess::NormalizeMode;
use crate::receipt::{GmmSynthParameters, Parameters};
use crate::rng::ReleaseRng;
use rand_distr::{Distribution, StandardNormal};

/// The fewest encoded features for which the defaults choose the GMM.
pub const AUTO_MIN_DIM: usize = 100;
/// The fewest input rows for which the defaults choose the GMM (below, the basis's noise
/// swamps its top eigenvectors: bench/utility/README.md, digits with `--pca`).
pub const AUTO_MIN_ROWS: usize = 20_000;
/// The most principal components the defaults use.
pub const MAX_COMPONENTS: usize = 150;
/// The most principal components the defaults use for an image set (the image path, whose
/// output is looked at; [`image_components`]): the lower components of the DP basis and the
/// classes' noisy covariances carry mostly noise, which shows in the images as isolated
/// bright and dark pixels. On Fashion-MNIST at ε = 10 (seed 1, plain / standardized LR on the
/// 10,000 held-out images): 60,000 images at k = 50 come out clean and recognisable at
/// 0.758 / 0.688, at k = 80 (0.772 / 0.728) and k = 150 (0.784 / 0.757) speckled; 25,000
/// images at k = 50 less speckled than at k = 150 (0.730 / 0.640 against 0.760 / 0.700), clean
/// only at k = 25 (0.691 / 0.541). DP-CDA's image path (class means with little variety) gave
/// 0.688 / 0.657 on those 25,000 (bench/utility/README.md).
pub const IMAGE_COMPONENTS: usize = 50;

/// The default k of an image set of d pixel values: min(d, [`IMAGE_COMPONENTS`]).
pub fn image_components(d: usize) -> usize {
    d.min(IMAGE_COMPONENTS)
}

/// The basis's share of the GMM's ρ (public). Twice `gmm`'s
/// [`crate::mechanisms::gmm::subspace::BASIS_SHARE`]: on Fashion-MNIST at ε = 10 (seeds 1–2,
/// plain / standardized LR) 0.1 gave 0.761 / 0.711, 0.2 0.774 / 0.738, 0.4 0.785 / 0.750,
/// 0.6 0.780 / 0.745 (bench/utility/README.md).
pub const BASIS_SHARE: f64 = 0.4;
/// The weight w of the classes' pooled covariance in each class's (public; post-processing of
/// the released covariances, see the proof note). Every class's second moment carries noise of
/// the same size, so pooling K classes of similar size cuts the noise relative to the signal
/// by about √K: the pool is the steadier estimate of the shape the classes share. On
/// Fashion-MNIST at ε = 10 (plain / standardized LR, seeds 1–2) w = 0 gave 0.785 / 0.750,
/// 0.3 0.788 / 0.754, 0.6 0.790 / 0.761, 1 (one shared covariance) 0.774 / 0.740
/// (bench/utility/README.md).
pub const POOLED_SHARE: f64 = 0.6;

/// The receipt's word on the decoding.
const DECODING: &str = "each class's covariance shrunk toward the classes' pooled one (weight 0.6), and its rows drawn from its Gaussian in the subspace and mapped back (x = B·V·y); each column then mapped onto its DP histogram (x ↦ F_H⁻¹(F_M(x)), F_M the model's marginal of the column, post-processing; a column without counts above 2σ clamped into its range) and linearly into its range [min, max], integer columns rounded";

/// The default number of principal components for d features: min(d, [`MAX_COMPONENTS`]).
pub fn components(d: usize) -> usize {
    d.min(MAX_COMPONENTS)
}

/// `Some(GMM)` where the defaults choose it: no mechanism named, DP-CDA's automatic l, a target
/// ε and no σx/σy, normalization not `data`, and a table of at least [`AUTO_MIN_ROWS`] rows
/// whose encoded features are all numeric, between [`AUTO_MIN_DIM`] and [`MAX_PCA_INPUT_DIM`]
/// of them: image sets too (`images`: their pixel columns, with [`image_components`]
/// components; a DP shape decision is a prior release the GMM's accounting composes like the
/// data path's). Public numbers and DP releases only (see the proof note).
pub fn auto_gmm(
    opts: &SynthOptions,
    mechanism: &Mechanism,
    auto_mix: bool,
    images: bool,
    table: &Table,
) -> Option<Mechanism> {
    let numeric = numeric_features(table);
    let d = table.n_cols().saturating_sub(1);
    let n = table.n_rows;
    (matches!(mechanism, Mechanism::Cda)
        && !opts.mechanism_given
        && auto_mix
        && opts.epsilon.is_some()
        && opts.sigma_x.is_none()
        && opts.sigma_y.is_none()
        && opts.normalize != NormalizeMode::Data
        && numeric
        && wide_enough(d, n))
    .then(|| {
        Mechanism::Gmm(GmmSynthOptions {
            components: images.then(|| image_components(d)),
        })
    })
}

/// Every column of `table` but the label is numeric (the GMM's tables: d is then the feature
/// columns).
pub fn numeric_features(table: &Table) -> bool {
    (table.columns.iter().enumerate())
        .all(|(j, c)| Some(j) == table.label_index || matches!(c, Column::Numeric { .. }))
}

/// The size rule of [`auto_gmm`]: d numeric features between [`AUTO_MIN_DIM`] and
/// [`MAX_PCA_INPUT_DIM`], and at least [`AUTO_MIN_ROWS`] rows (also the image readout's, from
/// public numbers).
pub fn wide_enough(d: usize, n: usize) -> bool {
    (AUTO_MIN_DIM..=MAX_PCA_INPUT_DIM).contains(&d) && n >= AUTO_MIN_ROWS
}

/// The options the GMM needs: a target ε (it calibrates its own noise), no σx or σy.
pub(super) fn check_options(opts: &SynthOptions, o: &GmmSynthOptions) -> Result<()> {
    if let Some(s) = opts.sigma_x {
        return Err(Error::param(
            "sigma-x",
            s,
            "the gmm mechanism calibrates its noise to the target ε; give epsilon instead of σx",
        ));
    }
    if opts.epsilon.is_none() {
        return Err(Error::param(
            "epsilon",
            "(none)",
            "the gmm mechanism calibrates its noise to a target ε; give epsilon, e.g. 5",
        ));
    }
    if let Some(s) = opts.sigma_y {
        return Err(Error::param(
            "sigma_y",
            s,
            "the gmm mechanism writes each row's class as its label and adds no label noise; leave σy out",
        ));
    }
    if o.components == Some(0) {
        return Err(Error::param(
            "components",
            0,
            "the number of principal components must be at least 1, e.g. 50",
        ));
    }
    Ok(())
}

/// The receipt's statement of how the mechanism was chosen.
pub(super) fn choice_statement(
    auto: bool,
    images: bool,
    o: &GmmSynthOptions,
    d: usize,
    n: usize,
) -> String {
    let k = o.components.unwrap_or_else(|| components(d));
    if auto && images {
        format!("auto: dp-gmm with k = {k} principal components, chosen for a large image set (d = {d} ≥ {AUTO_MIN_DIM} pixel values, n = {n} ≥ {AUTO_MIN_ROWS} images; k = min(d, {IMAGE_COMPONENTS}): the lower components carry mostly noise, which would show as isolated bright and dark pixels); l does not apply")
    } else if auto {
        format!("auto: dp-gmm with k = {k} principal components, chosen for a wide numeric table (d = {d} ≥ {AUTO_MIN_DIM} numeric features, n = {n} ≥ {AUTO_MIN_ROWS} rows; k = min(d, {MAX_COMPONENTS})); l does not apply")
    } else {
        format!("given: dp-gmm with k = {k} principal components; l does not apply")
    }
}

/// The GMM's accounting: the largest ρ whose curve composed with the data path's meets the
/// target, and the least grid noise within it ([`Split::within_rho`]).
pub(super) fn plan(p: &PlanInputs<'_>, o: &GmmSynthOptions) -> Result<Plan> {
    let opts = p.opts;
    let d = p.d;
    let k = o.components.unwrap_or_else(|| components(d));
    if d > MAX_PCA_INPUT_DIM {
        return Err(Error::param(
            "mechanism",
            "gmm",
            format!("the gmm mechanism models at most {MAX_PCA_INPUT_DIM} encoded features and this table has {d}; use cda"),
        ));
    }
    if k == 0 || k > d.min(MAX_DIM_DEFAULT) {
        return Err(Error::param(
            "components",
            k,
            format!(
                "the number of principal components must be between 1 and {} (the encoded features, at most {MAX_DIM_DEFAULT})",
                d.min(MAX_DIM_DEFAULT)
            ),
        ));
    }
    let (split, pld) = Calibration {
        opts,
        d,
        k,
        target: p.target,
        delta_rdp: p.delta_rdp,
        eps_terms: p.eps_terms,
        extra_curve: p.extra_curve,
        extra_zs: p.extra_zs,
        use_pld: p.use_pld,
    }
    .split()?;
    let curve = RdpCurve::gaussian(1.0 / (2.0 * split.rho).sqrt(), &opts.orders)?;
    let standard = p.opts.adjacency == super::Adjacency::Standard;
    Ok(Plan {
        curve: curve.clone(),
        curve_other: curve,
        component: "dp-gmm (the basis's second moment, the column histograms and every class's sum and second moment in the subspace; ρ-zCDP)",
        sigma_x: split.sigma_sum,
        parameters: Parameters::Gmm(GmmSynthParameters {
            components: k,
            feature_dim: d,
            bound: p.row_bound,
            basis_share: BASIS_SHARE,
            pooled_share: POOLED_SHARE,
            marginal_bins: DEFAULT_BINS,
            marginal_share: MARGINAL_SHARE,
            sigma_marginals: split.sigma_marginals,
            sigma_basis: split.sigma_basis,
            sigma_sum: split.sigma_sum,
            sigma_moment: split.sigma_moment,
            noise_multiplier: split.z,
            rho: split.rho,
            calibrated: true,
            target_epsilon: opts.epsilon,
            samples_requested: p.t,
            rows_written: p.rows_total,
            classes: p.k,
            encoding: Some(EncodingReport {
                sensitivity: SUM_SENSITIVITY,
                rescale: None,
                decoding: DECODING.into(),
                ..p.encoding.clone()
            }),
        }),
        adjacency: if standard {
            "replace one whole record, label included (the label set, class counts and output class proportions are DP; a record that changes class is charged to both classes' statistics)".into()
        } else {
            "replace one record's features, keeping its label (the label set and class counts are public)".into()
        },
        public_information: if standard {
            vec![
                "the number of input records (invariant under replacing one record)".into(),
                "the column names (the header) and what the schema states".into(),
            ]
        } else {
            p.label_free_public.to_vec()
        },
        class_counts_public: !standard,
        warnings: Vec::new(),
        pld,
        gmm: Some(split),
    })
}

/// The GMM's noise as the run calibrates it, for a readout before the run.
#[derive(Debug, Clone)]
pub struct Outlook {
    /// Principal components k.
    pub components: usize,
    /// The receipt's noise multiplier (each Gaussian release's at its full per-class
    /// sensitivity) and ρ (zCDP) of the releases.
    pub noise_multiplier: f64,
    pub rho: f64,
    /// ε of the whole release: the smaller of the RDP and PLD bounds, the thresholds' terms
    /// added (the receipt's `guarantee`).
    pub epsilon: f64,
    /// The PLD accountant calibrated ρ (else RDP alone).
    pub pld: bool,
    /// The ε curve when asked for: ε of the whole release against the noise multiplier, at
    /// [`crate::preprocess::auto::CHART_FACTORS`] times the calibrated one (that point is
    /// (`noise_multiplier`, `epsilon`); the others are upper bounds on the readout chart's
    /// coarser orders and PLD grid); empty otherwise.
    pub curve: Vec<(f64, f64)>,
}

/// The GMM's [`Outlook`] for d encoded features and k `components` with `opts` and the data
/// path `path`: the run's calibration and the receipt's ε, from those numbers alone (a
/// readout's; [`super::data_path_budget`] for a loaded table, which can differ a little from
/// the run's where the run adds columns, see there), with its ε curve when `chart`.
pub fn outlook(
    opts: &SynthOptions,
    path: &DataPathBudget,
    d: usize,
    components: usize,
    chart: bool,
) -> Result<Outlook> {
    let Some(epsilon) = opts.epsilon else {
        return Err(Error::param("epsilon", "(none)", "give the target ε"));
    };
    let target = super::target_after_thresholds(opts, epsilon, path.epsilon_thresholds)?;
    let (_, extra_curve) = path.curves(&opts.orders)?;
    let extra_zs = path.noise_multipliers();
    let use_pld = opts.accountant == AccountantKind::Pld && opts.preset == Preset::Default;
    let (split, pld) = Calibration {
        opts,
        d,
        k: components,
        target,
        delta_rdp: path.delta_rdp,
        eps_terms: path.epsilon_thresholds,
        extra_curve: &extra_curve,
        extra_zs: &extra_zs,
        use_pld,
    }
    .split()?;
    // RDP's ε of the whole release with every GMM release's noise scaled by f (ρ by 1/f²: the
    // Gaussian curve of noise multiplier f/√(2ρ)); the data path's releases unchanged.
    let rdp_at = |f: f64, orders: &[u32], extra: &RdpCurve| -> Result<f64> {
        Ok(RdpCurve::gaussian(f / (2.0 * split.rho).sqrt(), orders)?
            .compose(extra)?
            .epsilon(path.delta_rdp, opts.preset.conversion())?
            .epsilon)
    };
    let rdp = rdp_at(1.0, &opts.orders, &extra_curve)?;
    let pld_eps = match &pld {
        Some(p) => p.epsilon(split.sigma_sum, path.delta_rdp)?.epsilon,
        None => f64::INFINITY,
    };
    let epsilon = rdp.min(pld_eps) + path.epsilon_thresholds;
    let curve = if chart {
        // The other points on the chart's coarse orders and PLD grid (the plan's σ_S by f).
        let orders = coarse_orders(&opts.orders);
        let (_, extra) = path.curves(&orders)?;
        let grid = chart_pld_options();
        chart_points(split.z, epsilon, |f| {
            let pld = match &pld {
                Some(p) => {
                    p.epsilon_on(split.sigma_sum * f, path.delta_rdp, &grid)?
                        .epsilon
                }
                None => f64::INFINITY,
            };
            Ok(rdp_at(f, &orders, &extra)?.min(pld) + path.epsilon_thresholds)
        })?
    } else {
        Vec::new()
    };
    Ok(Outlook {
        components,
        noise_multiplier: split.z,
        rho: split.rho,
        epsilon,
        pld: pld.is_some(),
        curve,
    })
}

/// What the GMM's calibration reads (the run's [`PlanInputs`], or a readout's public numbers
/// and data path: [`outlook`]): the encoded features and components, the ε left once the
/// thresholds' terms are paid, the data path's releases and the accountant.
struct Calibration<'a> {
    opts: &'a SynthOptions,
    /// Encoded features d and principal components k.
    d: usize,
    k: usize,
    target: f64,
    delta_rdp: f64,
    /// ε terms of the thresholded releases.
    eps_terms: f64,
    /// The data path's releases: their RDP curve, and their Gaussian noise multipliers.
    extra_curve: &'a RdpCurve,
    extra_zs: &'a [f64],
    use_pld: bool,
}

impl Calibration<'_> {
    /// The split: the largest ρ whose curve composed with the data path's meets the target by
    /// RDP, raised where the PLD accountant certifies more ([`Self::pld_split`]), and the
    /// least grid noise within it ([`Split::within_rho`]); with its PLD plan under the PLD
    /// accountant.
    fn split(&self) -> Result<(Split, Option<SynthPld>)> {
        let opts = self.opts;
        let goal = Goal {
            epsilon: self.target,
            delta: self.delta_rdp,
            orders: &opts.orders,
            preset: opts.preset,
            extra: Some(self.extra_curve),
        };
        let cal = smallest_z(goal.epsilon, goal.delta, opts.preset.conversion(), |z| {
            goal.with_extra(RdpCurve::gaussian(z, &opts.orders)?)
        })?;
        if self.use_pld {
            self.pld_split(cal.z)
        } else {
            Ok((self.split_at(cal.z)?, None))
        }
    }

    /// The split within ρ = 1/(2z²): RdpCurve::gaussian(z) is α/(2z²), and ρ is taken a hair
    /// below so that the curve of the split's ρ (≤ this) never exceeds the calibrated one by
    /// rounding.
    fn split_at(&self, z: f64) -> Result<Split> {
        Split::within_rho(
            0.5 / (z * z) * (1.0 - 1e-12),
            self.delta_rdp,
            self.k,
            Some((self.d, BASIS_SHARE)),
            Some((self.d, DEFAULT_BINS)),
        )
    }

    /// The GMM's releases for the PLD accountant: one unsampled Gaussian step of noise
    /// multiplier σ/√a (module docs of [`crate::mechanisms::pld_plan`]) with the data path's
    /// extras, its exact noise on the split's coupled grids.
    fn pld(&self, a: f64) -> SynthPld {
        let step = GaussianSteps {
            pool: 1,
            sample: 1,
            compositions: 1,
            a,
            b: 0.0,
        };
        SynthPld::gaussian_steps(step, self.extra_zs).with_coupled_grids(self.eps_terms)
    }

    /// The split and its PLD plan under the PLD accountant: the z it certifies below RDP's
    /// `z_rdp` (at a = 1 the step's σ is z), the split within ρ = 1/(2z²), and the plan at
    /// that split's own ρ, charged at σ_S with a = 2ρ·σ_S² raised by 10⁻¹² (its z is then
    /// 1/√(2ρ) or a hair less: more loss). The split's grids must hold 2^30 noise units (the
    /// coupling's condition; checked here) and its PLD ε must meet the target; where it does
    /// not (the PLD grid's rounding), a z 10⁻⁹ larger is tried, then RDP's z, whose split RDP
    /// certifies (its plan is kept: the receipt takes the smaller of the two ε).
    fn pld_split(&self, z_rdp: f64) -> Result<(Split, Option<SynthPld>)> {
        let at = |z: f64| -> Result<(Split, SynthPld, f64)> {
            let split = self.split_at(z)?;
            check_coupled(&split)?;
            let plan = self.pld(2.0 * split.rho * split.sigma_sum.powi(2) * (1.0 + 1e-12));
            let eps = plan.epsilon(split.sigma_sum, self.delta_rdp)?.epsilon;
            Ok((split, plan, eps))
        };
        let z_pld = self
            .pld(1.0)
            .calibrate(z_rdp, self.target, self.delta_rdp)?;
        for z in [z_pld, z_pld * (1.0 + 1e-9)] {
            if z >= z_rdp {
                break;
            }
            let (split, plan, eps) = at(z)?;
            if eps <= self.target {
                return Ok((split, Some(plan)));
            }
        }
        let (split, plan, _) = at(z_rdp)?;
        Ok((split, Some(plan)))
    }
}

/// The coupling's condition on the split's releases: coupled grids, on which every noise has
/// at least 2^30 grid units (`GridGaussian::covering_coupled` refuses less).
fn check_coupled(split: &Split) -> Result<()> {
    if split.coupled {
        Ok(())
    } else {
        Err(Error::Data(
            "internal: the GMM's releases are not on coupled grids".into(),
        ))
    }
}

/// The released model: the basis, each class's mean and Cholesky factor in the subspace
/// (unit-ball units), and the feature histograms (encoded units, [0, 1]).
struct Model {
    /// The k components, each of d entries.
    basis: Vec<Vec<f64>>,
    means: Vec<Vec<f64>>,
    chols: Vec<Mat>,
    marginals: FeatureMarginals,
}

/// The finished fraction reported at the end of each pass over the rows: the basis's and the
/// histograms' pass (about n·d²/2 multiply-adds), the projection (n·k·d), then the draws
/// (T·(k²/2 + k·d)) up to 1: their shares of the work at Fashion-MNIST's shape (n = T = 60,000,
/// d = 784, k = 150), so that a bar moves evenly and a cancel acts in every phase. The two
/// passes of the release report once per wave of [`PASS_PART`] rows per core, the draws every
/// 1,024 rows.
const MOMENT_DONE: f64 = 0.55;
const PROJECTION_DONE: f64 = 0.75;
/// Rows per part of the release's two passes over the rows ([`in_waves`]).
const PASS_PART: usize = 4096;
/// Rows drawn, mapped and decoded together (see [`emit`]).
const EMIT_BLOCK: usize = 64;

/// `part` on consecutive ranges of [`PASS_PART`] indices of 0..n, on all cores natively, one
/// wave of a range per core at a time; `take` gets the parts' results in order, and
/// `lo + (hi − lo)·(done/n)` goes to `progress` before each wave (it may cancel the run).
fn in_waves<R: Send>(
    n: usize,
    (lo, hi): (f64, f64),
    progress: ProgressSink<'_>,
    part: impl Fn(std::ops::Range<usize>) -> R + Sync + Send,
    mut take: impl FnMut(R) -> Result<()>,
) -> Result<()> {
    let wave = PASS_PART * crate::par::threads();
    for w0 in (0..n).step_by(wave) {
        progress(lo + (hi - lo) * w0 as f64 / n.max(1) as f64)?;
        let w1 = (w0 + wave).min(n);
        let parts = crate::par::map_range(0..(w1 - w0).div_ceil(PASS_PART), |p| {
            part(w0 + p * PASS_PART..(w0 + (p + 1) * PASS_PART).min(w1))
        });
        for r in parts {
            take(r)?;
        }
    }
    Ok(())
}

/// Reports `lo + (hi − lo)·i/n` every 1,024 rows (`progress` may cancel the run).
fn report(progress: ProgressSink<'_>, i: usize, n: usize, lo: f64, hi: f64) -> Result<()> {
    if i % 1024 == 0 {
        progress(lo + (hi - lo) * i as f64 / n.max(1) as f64)?;
    }
    Ok(())
}

/// Releases the model of the encoded rows `features` (entries in [0, 1]; see the proof note),
/// reporting its passes over the rows to `progress` up to [`PROJECTION_DONE`].
fn release(
    g: &Generation<'_>,
    split: &Split,
    bound: f64,
    features: &[f32],
    rng: &mut ReleaseRng,
    progress: ProgressSink<'_>,
) -> Result<Model> {
    let d = g.d;
    let k = split.dim;
    let n = features.len() / d.max(1);
    let unit = |i: usize, row: &mut [f64]| {
        for (o, &x) in row.iter_mut().zip(&features[i * d..(i + 1) * d]) {
            *o = f64::from(x) / bound;
        }
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm > 1.0 {
            row.iter_mut().for_each(|v| *v /= norm);
        }
    };
    // 1. The basis, from every row; the histograms of every row's entries.
    // Exact integer sums, so the rows are counted in parts on all cores natively and merged
    // with the same result.
    let new_cells = || CellCounts::new(&vec![0.0; d], &vec![1.0; d], split.marginal_bins);
    let mut moment = MomentSum::new(d);
    let mut cells = new_cells()?;
    in_waves(
        n,
        (0.0, MOMENT_DONE),
        &mut *progress,
        |rows| -> Result<_> {
            let mut m = MomentSum::new(d);
            let mut c = new_cells()?;
            let (mut row, mut x) = (vec![0.0f64; d], vec![0.0f64; d]);
            for i in rows {
                unit(i, &mut row);
                m.push(&row)?;
                for (o, &v) in x.iter_mut().zip(&features[i * d..(i + 1) * d]) {
                    *o = f64::from(v);
                }
                c.push(&x);
            }
            Ok((m, c))
        },
        |part| {
            let (m, c) = part?;
            moment.merge(m)?;
            cells.merge(&c)
        },
    )?;
    let basis = release_basis_of(&moment.finish()?, k, split, rng)?;
    let marginals = cells.release(split, rng)?.marginals;
    // 2. The released classes' members, projected (each row on its own, in parts on all
    // cores natively, kept in the members' order).
    let (order, labels): (Vec<usize>, Vec<usize>) = g
        .cls
        .members
        .iter()
        .enumerate()
        .flat_map(|(class, members)| members.iter().map(move |&i| (i as usize, class)))
        .unzip();
    let mut ys = Vec::with_capacity(order.len());
    in_waves(
        order.len(),
        (MOMENT_DONE, PROJECTION_DONE),
        progress,
        |at| {
            let mut row = vec![0.0f64; d];
            order[at]
                .iter()
                .map(|&i| {
                    unit(i, &mut row);
                    basis.project(&row)
                })
                .collect::<Vec<_>>()
        },
        |part| {
            ys.extend(part);
            Ok(())
        },
    )?;
    let stats = class_stats(&ys, &labels, g.k, k)?;
    drop(ys);
    let given: Vec<(usize, f64)> = g.class_counts.iter().copied().enumerate().collect();
    let mut models = release_given_counts(&stats, &given, split, rng)?;
    let weights: Vec<f64> = given.iter().map(|&(_, nk)| (nk - 1.0).max(1.0)).collect();
    shrink_to_pooled(&mut models.covs, &weights, POOLED_SHARE);
    let chols = models
        .covs
        .iter()
        .map(|s| {
            cholesky(s).ok_or_else(|| {
                Error::Data("internal: a released class covariance is not positive definite".into())
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Model {
        basis: basis.components,
        means: models.means,
        chols,
        marginals,
    })
}

/// Σ̂_k = (1 − w)·Σ_k + w·Σ̄ for every class k, Σ̄ = Σ_c a_c Σ_c / Σ_c a_c the pooled
/// covariance with weights a_c > 0 (post-processing of released covariances).
fn shrink_to_pooled(covs: &mut [Mat], weights: &[f64], w: f64) {
    let Some(first) = covs.first() else {
        return;
    };
    let mut pooled = Mat::zeros(first.n);
    for (cov, &a) in covs.iter().zip(weights) {
        pooled = pooled.add(&cov.scale(a));
    }
    let pooled = pooled.scale(w / weights.iter().sum::<f64>());
    for cov in covs.iter_mut() {
        *cov = cov.scale(1.0 - w).add(&pooled).symmetrize();
    }
}

/// Each class's (weight, means, standard deviations) of every output feature B·V·y, y ~
/// N(μ_k, L_k L_kᵀ): what [`MarginalMap`] maps from.
fn output_marginals(
    model: &Model,
    weights: &[usize],
    bound: f64,
) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let d = model.basis.first().map_or(0, Vec::len);
    let k = model.basis.len();
    model
        .means
        .iter()
        .zip(&model.chols)
        .zip(weights)
        .map(|((mu, l), &w)| {
            let mut mean = vec![0.0; d];
            let mut var = vec![0.0; d];
            for (c, v) in model.basis.iter().enumerate() {
                for (m, vj) in mean.iter_mut().zip(v) {
                    *m += bound * mu[c] * vj;
                }
            }
            // (Vᵀ L)_{j,c} = Σ_{a ≥ c} V_a[j]·L[a][c].
            let mut col = vec![0.0; d];
            for c in 0..k {
                col.iter_mut().for_each(|v| *v = 0.0);
                for a in c..k {
                    let lac = l.get(a, c);
                    for (o, vj) in col.iter_mut().zip(&model.basis[a]) {
                        *o += vj * lac;
                    }
                }
                for (s, o) in var.iter_mut().zip(&col) {
                    *s += bound * bound * o * o;
                }
            }
            (w as f64, mean, var.into_iter().map(f64::sqrt).collect())
        })
        .collect()
}

/// Releases the model, then draws each class's rows, maps each feature onto its DP
/// histogram and decodes them.
pub(super) fn emit(
    g: &Generation<'_>,
    features: Encoded,
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
) -> Result<()> {
    let Sinks {
        header,
        row,
        progress,
    } = out;
    let (split, bound) = match (&g.plan.gmm, &g.plan.parameters) {
        (Some(s), Parameters::Gmm(p)) => (s, p.bound),
        _ => return Err(Error::Data("internal: the gmm plan has no split".into())),
    };
    header(g.missing_codec.names())?;
    let model = release(g, split, bound, features.dense()?, rng, &mut *progress)?;
    drop(features);
    let map = MarginalMap::new(
        &model.marginals,
        &output_marginals(&model, g.per_class_counts, bound),
    );
    let (d, k) = (g.d, split.dim);
    let rows_total: usize = g.per_class_counts.iter().sum();
    let mut labels: Vec<u32> = room_for_rows(rows_total, 1)?;
    let mut dec = g.space.chunked(rows_total, 1.0, g.marginals, None)?;
    // Rows are made in waves of EMIT_BLOCK rows per core: a wave's standard normal draws are
    // taken in order from the one stream, its blocks of EMIT_BLOCK rows are then turned into
    // values on all cores natively (each column's histogram map applied to a block's values
    // together, so its tables stay in cache), and the rows are pushed in order. The draws, and
    // every value's operations in their order, are those of one row at a time, whatever the
    // number of cores.
    let basis = PackedBasis::new(&model.basis, d);
    let wave = EMIT_BLOCK * crate::par::threads();
    let mut eb = vec![0.0f64; wave * k];
    let mut xb = vec![0.0f64; wave * d];
    let mut x32 = vec![0.0f32; d];
    let mut done = 0usize;
    for (class, &rows) in g.per_class_counts.iter().enumerate() {
        let (mu, l) = (&model.means[class], &model.chols[class]);
        let mut left = rows;
        while left > 0 {
            let m = left.min(wave);
            left -= m;
            let (eb, xb) = (&mut eb[..m * k], &mut xb[..m * d]);
            eb.iter_mut()
                .for_each(|v| *v = StandardNormal.sample(&mut *rng));
            let eb: &[f64] = eb;
            crate::par::blocks_mut(xb, EMIT_BLOCK * d, |b, xs| {
                let n = xs.len() / d;
                let mut ys = vec![0.0f64; n * k];
                correlate_rows(mu, l, bound, &eb[b * EMIT_BLOCK * k..][..n * k], &mut ys);
                basis.project_rows(&ys, xs);
                map.apply_rows(xs);
                0
            });
            for x in xb.chunks_exact(d) {
                for (o, &v) in x32.iter_mut().zip(x) {
                    *o = v as f32;
                }
                dec.push(&x32)?;
                labels.push(class as u32);
                report(progress, done, rows_total, PROJECTION_DONE, 1.0)?;
                done += 1;
            }
        }
    }
    progress(1.0)?;
    finish_labelled(g, dec, &labels, row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Column;

    fn table(n: usize, numeric: usize, categorical: bool) -> Table {
        let mut columns: Vec<Column> = (0..numeric)
            .map(|_| Column::Numeric {
                values: vec![0.0; n],
                integer: true,
            })
            .collect();
        if categorical {
            columns.push(Column::Categorical {
                codes: vec![0; n],
                levels: vec!["a".into()],
            });
        }
        columns.push(Column::Categorical {
            codes: vec![0; n],
            levels: vec!["0".into()],
        });
        Table {
            names: (0..columns.len()).map(|j| format!("c{j}")).collect(),
            n_rows: n,
            rows_dropped: 0,
            label_index: Some(columns.len() - 1),
            columns,
            delimiter: b',',
        }
    }

    /// The defaults choose the GMM exactly for wide numeric tables with enough rows, when
    /// nothing else was asked for.
    #[test]
    fn the_defaults_choose_the_gmm_for_wide_numeric_tables_only() {
        let opts = SynthOptions {
            epsilon: Some(5.0),
            ..SynthOptions::default()
        };
        let cda = Mechanism::Cda;
        let wide = table(AUTO_MIN_ROWS, AUTO_MIN_DIM, false);
        let chosen = |o: &SynthOptions, m: &Mechanism, auto: bool, t: &Table| {
            auto_gmm(o, m, auto, false, t).is_some()
        };
        assert!(chosen(&opts, &cda, true, &wide));
        assert_eq!(
            auto_gmm(&opts, &cda, true, false, &wide),
            Some(Mechanism::Gmm(GmmSynthOptions::default()))
        );
        // An image set: k = min(d, 50).
        assert_eq!(
            auto_gmm(&opts, &cda, true, true, &wide),
            Some(Mechanism::Gmm(GmmSynthOptions {
                components: Some(IMAGE_COMPONENTS)
            }))
        );
        assert_eq!(image_components(784), 50);
        assert_eq!(image_components(30), 30);
        // Too narrow, too few rows, too wide, or a categorical column.
        for t in [
            table(AUTO_MIN_ROWS, AUTO_MIN_DIM - 1, false),
            table(AUTO_MIN_ROWS - 1, AUTO_MIN_DIM, false),
            table(AUTO_MIN_ROWS, MAX_PCA_INPUT_DIM + 1, false),
            table(AUTO_MIN_ROWS, AUTO_MIN_DIM, true),
        ] {
            assert!(!chosen(&opts, &cda, true, &t));
        }
        // A given l, another mechanism, a named mechanism, no target ε, a given σx or σy,
        // `data` normalization.
        assert!(!chosen(&opts, &cda, false, &wide));
        assert!(!chosen(&opts, &Mechanism::Local, true, &wide));
        let with = |f: &dyn Fn(&mut SynthOptions)| {
            let mut o = opts.clone();
            f(&mut o);
            o
        };
        for o in [
            with(&|o| o.mechanism_given = true),
            with(&|o| o.epsilon = None),
            with(&|o| o.sigma_x = Some(1.0)),
            with(&|o| o.sigma_y = Some(1.0)),
            with(&|o| o.normalize = NormalizeMode::Data),
        ] {
            assert!(!chosen(&o, &cda, true, &wide), "{o:?}");
        }
        // A prior release (an image set's DP shape decision) is composed: the GMM still runs.
        let prior = with(&|o| {
            o.prior = Some(super::super::PriorRelease {
                name: "shape",
                noise_multiplier: 10.0,
            })
        });
        assert!(chosen(&prior, &cda, true, &wide));
    }

    /// The refusals name the option and the fix.
    #[test]
    fn gmm_options_are_checked() {
        let ok = SynthOptions {
            epsilon: Some(5.0),
            ..SynthOptions::default()
        };
        let o = GmmSynthOptions::default();
        assert!(check_options(&ok, &o).is_ok());
        let cases: [(SynthOptions, GmmSynthOptions, &str); 4] = [
            (
                SynthOptions {
                    sigma_x: Some(1.0),
                    ..ok.clone()
                },
                o,
                "sigma_x",
            ),
            (
                SynthOptions {
                    epsilon: None,
                    ..ok.clone()
                },
                o,
                "epsilon",
            ),
            (
                SynthOptions {
                    sigma_y: Some(1.0),
                    ..ok.clone()
                },
                o,
                "sigma_y",
            ),
            (
                ok.clone(),
                GmmSynthOptions {
                    components: Some(0),
                },
                "components",
            ),
        ];
        for (opts, g, param) in cases {
            let e = check_options(&opts, &g).unwrap_err();
            assert_eq!(e.param_id().map(|p| p.as_str()), Some(param), "{e}");
        }
    }

    /// Each class's covariance moves the share w toward the count-weighted pool, and the
    /// receipt's decoding states the w in use.
    #[test]
    fn covariances_shrink_toward_the_weighted_pool() {
        let a = Mat::from_rows(&[vec![1.0, 0.5], vec![0.5, 1.0]]);
        let b = Mat::from_rows(&[vec![0.2, 0.0], vec![0.0, 0.6]]);
        // pool with weights 3 and 1: (3a + b)/4
        let pool = [[0.8, 0.375], [0.375, 0.9]];
        let w = 0.6;
        let mut covs = vec![a.clone(), b.clone()];
        shrink_to_pooled(&mut covs, &[3.0, 1.0], w);
        for (got, own) in covs.iter().zip([&a, &b]) {
            for (i, pool_row) in pool.iter().enumerate() {
                for (j, &pooled) in pool_row.iter().enumerate() {
                    let want = (1.0 - w) * own.get(i, j) + w * pooled;
                    assert!((got.get(i, j) - want).abs() < 1e-12, "{i},{j}");
                }
            }
        }
        let mut same = vec![a.clone(), b.clone()];
        shrink_to_pooled(&mut same, &[3.0, 1.0], 0.0);
        assert_eq!(same[1].get(0, 0), 0.2);
        assert!(DECODING.contains(&format!("(weight {POOLED_SHARE})")));
    }
}
