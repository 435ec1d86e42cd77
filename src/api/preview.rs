//! The live readout (`noisePreview`, and `Dataset.noisePreview` on a loaded table): the noise
//! DP-CDA will calibrate for the current controls, computed as the synthesis's accounting
//! computes it.
//!
//! The synthesis composes the mixing with the data path's Gaussian releases (column types,
//! class counts, normalization: [`DataPathBudget`]) and calibrates σx so that the whole
//! release meets ε; under the standard adjacency its pools are the DP floors ⌊ñ_k − σ_c⌋ of
//! the noisy class counts and its rows per class follow them. The readout does the same with
//! the counts at their expected value (ñ_k = n_k): automatic l from the same public numbers,
//! the same composition, the same calibration (RDP, then PLD; PLD first where it chose l).
//! What it cannot see is the counts' noise itself (a floor a few rows up or down) and,
//! without the table (`noisePreview`), the table's shape: there the normalization takes
//! `normalizeShare` (default 0.2, the synthesis's default) and no column type is left to
//! decide.

use super::synth::{class_counts, MixChoice, SynthParams};
use super::{preset_of, DEFAULT_CLIP};
use crate::accountant::calibrate::Goal;
use crate::accountant::{
    check_delta, check_epsilon, default_orders, pld, AccountantKind, Preset, RdpCurve,
};
use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::mechanisms::cda::accounting::{calibrate_sigma_x, CdaShape};
use crate::mechanisms::pld_plan::SynthPld;
use crate::pipelines::synth::{self, DataPathBudget, SynthOptions};
use crate::preprocess::auto::{
    auto_mix, chart_pld_options, chart_points, coarse_orders, use_common_norm,
};
use crate::preprocess::dp_counts::{
    calibrate_standard, class_outlook, split_samples, standard_curve, CountNoise, FLOOR_SIGMAS,
};
use crate::preprocess::rownorm::{accounting_clip, box_accounting_clip, column_diameter_sq};
use serde::{Deserialize, Serialize};

/// The page's live readout: the calibrated noise for the current controls, from public
/// information only (class sizes; T; the privacy target).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreviewRequest {
    /// Rows per class (class sizes).
    pub class_sizes: Vec<u64>,
    /// The classes' names, in the order of `class_sizes` (optional: the warnings name the
    /// classes with them, else "class 1", "class 2", …).
    #[serde(default)]
    pub class_names: Option<Vec<String>>,
    /// Target ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Feature columns (header columns minus the label).
    pub features: u64,
    /// l or "auto".
    #[serde(default)]
    pub mix: Option<MixChoice>,
    /// T (default: the sum of class sizes).
    #[serde(default)]
    pub samples: Option<u64>,
    /// Clip (default 1).
    #[serde(default)]
    pub clip: Option<f64>,
    /// The normalization's share of ε when DP normalization runs (default: the synthesis's
    /// default, [`super::synth::DEFAULT_NORMALIZE_SHARE`]; 0 for none): its histograms' noise
    /// is sized for that share of ε and composed with the mixing, as the synthesis does. The
    /// synthesis raises the share on small tables and for noisy marginals; `Dataset.noisePreview`
    /// computes the share the run will use from the table.
    #[serde(default)]
    pub normalize_share: Option<f64>,
    /// Preset.
    #[serde(default)]
    pub preset: Option<String>,
    /// `pld` (default; the synthesis's accountant, RDP as a cross-check) or `rdp`.
    #[serde(default)]
    pub accountant: Option<String>,
    /// `standard` (default: a record may change class, charged to two classes) or
    /// `keep-label`.
    #[serde(default)]
    pub adjacency: Option<String>,
    /// The ε curve around σx, and the GMM's around its noise multiplier (default true).
    /// `false`: only the calibrated point, sooner (see [`PreviewView`]).
    #[serde(default)]
    pub curve: Option<bool>,
    /// An image synthesis whose shape (width, height or channels) is left open: it decides
    /// the shape under DP first, and the readout composes that release as the run will
    /// (default false). Given (true or false), the request is an image set's, and the readout
    /// also warns when the run will take the GMM (a large set with l automatic).
    #[serde(default)]
    pub image_shape: Option<bool>,
}

/// What a readout computes beyond the calibration.
///
/// The curve's other points cost about a fifth of a readout. A page can show σx and ε first
/// with `curve: false`, then ask again with `curve: true`: when nothing else changed, that
/// second call reuses the first one's calibration (the last readout without its curve is
/// remembered on this thread) and computes only the curve's other points.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct PreviewView {
    /// The ε curve around σx, and the GMM's around its noise multiplier (default true);
    /// `false`: only the calibrated point.
    pub curve: bool,
}

impl Default for PreviewView {
    fn default() -> Self {
        PreviewView { curve: true }
    }
}

/// The GMM's noise in a readout ([`PreviewResponse::gmm`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GmmPreview {
    /// Principal components k.
    pub components: u32,
    /// The noise multiplier of the GMM's releases (the receipt's `noise_multiplier`) and
    /// their ρ (zCDP).
    pub noise_multiplier: f64,
    pub rho: f64,
    /// ε of the whole release (at most the target).
    pub epsilon: f64,
    /// `pld` or `rdp`: the accountant that calibrated ρ.
    pub accountant: &'static str,
    /// The ε curve: ε of the whole release against the noise multiplier around the
    /// calibrated one (empty when the request asked for no curve).
    pub curve: Vec<(f64, f64)>,
}

impl From<synth::gmm_synth::Outlook> for GmmPreview {
    fn from(o: synth::gmm_synth::Outlook) -> Self {
        GmmPreview {
            components: o.components as u32,
            noise_multiplier: o.noise_multiplier,
            rho: o.rho,
            epsilon: o.epsilon,
            accountant: if o.pld {
                AccountantKind::Pld.name()
            } else {
                AccountantKind::Rdp.name()
            },
            curve: o.curve,
        }
    }
}

/// The live readout.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewResponse {
    /// The mechanism the run will take: `dp-cda`, or `dp-gmm` where the defaults hand a
    /// large set of many numeric columns (or images) to the GMM, whose noise is then in
    /// [`Self::gmm`]. The other figures are DP-CDA's either way (the run's when it is
    /// `dp-cda`; with the GMM, what DP-CDA would do if chosen).
    pub mechanism: &'static str,
    /// The GMM's noise, when `mechanism` is `dp-gmm`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gmm: Option<GmmPreview>,
    /// l used (the suggestion when "auto").
    pub mix: u32,
    /// The suggested l for these settings.
    pub suggested_mix: u32,
    /// Calibrated σx of the mixing.
    pub sigma_x: f64,
    /// `pld` or `rdp`: the accountant that calibrated σx (and the curve).
    pub accountant: &'static str,
    /// Noise multiplier of one step.
    pub noise_multiplier: f64,
    /// ε of the whole release at σx: the mixing composed with the data path's releases
    /// (at most the target).
    pub epsilon: f64,
    /// The same number, under its earlier name (kept for callers that read it).
    pub epsilon_mixing: f64,
    /// Rows per class T_k (the largest class's, when they differ).
    pub samples_per_class: u64,
    /// Rows the run writes in all: `samples` when given; otherwise, under the standard
    /// adjacency, the sizes of the classes it keeps summed (the run sums their DP counts, so
    /// it differs a little), and under keep-label K·⌊n/K⌋.
    pub samples: u64,
    /// The smallest pool the mixing samples from: the smallest class, or under the standard
    /// adjacency its expected DP floor (cut to l when l is the whole pool).
    pub pool: u64,
    /// The normalization's share of ε (0: none).
    pub normalize_share: f64,
    /// The ε curve: ε of the whole release against σx around the calibrated value (only the
    /// calibrated point when the request asked for no curve).
    pub curve: Vec<(f64, f64)>,
    /// What the run is likely to do that these numbers do not show (omitted when nothing):
    /// under the standard adjacency, the classes too small for the DP label threshold or for
    /// a pool at this budget ([`crate::preprocess::dp_counts::class_outlook`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A readout's checked controls.
#[derive(Debug, Clone)]
struct PreviewInputs {
    class_sizes: Vec<u64>,
    /// The classes' labels, in the order of `class_sizes` (a table's; None without one).
    class_names: Option<Vec<String>>,
    features: u64,
    /// The squared diameter of the encoded box (short tables), summed over the feature
    /// columns ([`column_diameter_sq`]).
    box_diameter_sq: u64,
    /// None: automatic.
    mix: Option<u32>,
    samples: Option<u64>,
    standard: bool,
    /// ε, δ, c, preset, accountant and orders, as the synthesis takes them.
    opts: SynthOptions,
}

impl PreviewInputs {
    /// The controls of `r`, and the normalization's share.
    fn of(r: &PreviewRequest) -> Result<(Self, f64)> {
        check_epsilon(r.epsilon)?;
        check_delta(r.delta)?;
        let preset = preset_of(&r.preset)?;
        let share = r
            .normalize_share
            .unwrap_or(super::synth::DEFAULT_NORMALIZE_SHARE);
        if !(0.0..1.0).contains(&share) {
            return Err(Error::param(
                "normalize_share",
                share,
                "use a share in [0, 1)",
            ));
        }
        let mix = match r.mix.as_ref().map(MixChoice::checked).transpose()? {
            None => Some(super::synth::DEFAULT_MIX),
            Some(MixChoice::Fixed(l)) => Some(l),
            Some(_) => None,
        };
        let standard = match &r.adjacency {
            None => true,
            Some(a) => a.parse::<synth::Adjacency>()? == synth::Adjacency::Standard,
        };
        let accountant = match &r.accountant {
            None => AccountantKind::Pld,
            Some(a) => a.parse()?,
        };
        let mut opts = SynthOptions {
            epsilon: Some(r.epsilon),
            delta: r.delta,
            clip: r.clip.unwrap_or(DEFAULT_CLIP),
            preset,
            accountant,
            orders: default_orders(),
            ..SynthOptions::default()
        };
        if r.image_shape == Some(true) {
            opts.prior = Some(synth::PriorRelease {
                name: crate::images::shape::COMPONENT,
                noise_multiplier: synth::image_shape_z(&opts),
            });
        }
        if let Some(names) = &r.class_names {
            if names.len() != r.class_sizes.len() {
                return Err(Error::param(
                    "class_names",
                    names.len(),
                    format!(
                        "give one name per class size ({} sizes)",
                        r.class_sizes.len()
                    ),
                ));
            }
        }
        let inputs = PreviewInputs {
            class_sizes: r.class_sizes.clone(),
            class_names: r.class_names.clone(),
            features: r.features,
            // Without the table: numeric columns.
            box_diameter_sq: r.features,
            mix,
            samples: r.samples,
            standard,
            opts,
        };
        Ok((inputs, share))
    }
}

/// Calibrates the noise for the page's live readout from public numbers only (see the
/// module note).
pub fn preview(r: &PreviewRequest) -> Result<PreviewResponse> {
    let (inputs, share) = PreviewInputs::of(r)?;
    let path = DataPathBudget::assumed(&inputs.opts, inputs.standard, share)?;
    let view = PreviewView {
        curve: r.curve.unwrap_or(true),
    };
    let mut out = preview_on(&inputs, &path, view)?;
    // An image set (`image_shape` given) as large as the run hands to the GMM with l
    // automatic: its data path is DP-CDA's (the same share, class counts and shape decision).
    let images: u64 = inputs.class_sizes.iter().sum();
    let d = inputs.features as usize;
    if r.image_shape.is_some() && inputs.mix.is_none() && synth::gmm_wide_enough(d, images as usize)
    {
        let k = synth::gmm_synth::image_components(d);
        with_gmm(
            &mut out,
            synth::gmm_synth::outlook(&inputs.opts, &path, d, k, view.curve)?,
        );
    }
    Ok(out)
}

/// `out` for a run that takes the GMM (`outlook`).
fn with_gmm(out: &mut PreviewResponse, outlook: synth::gmm_synth::Outlook) {
    out.mechanism = "dp-gmm";
    out.gmm = Some(outlook.into());
}

/// The readout for a synthesis of `table` with `p`: its class sizes, its feature columns and
/// its data path's budget ([`synth::data_path_budget`]: the normalization's share the run
/// will use, the column-type decisions, the δ split).
pub fn dataset_preview(table: &Table, p: &SynthParams) -> Result<PreviewResponse> {
    dataset_preview_as(table, p, PreviewView::default())
}

/// [`dataset_preview`], computing what `view` asks for.
pub fn dataset_preview_as(
    table: &Table,
    p: &SynthParams,
    view: PreviewView,
) -> Result<PreviewResponse> {
    let opts = p.synth_options();
    check_delta(opts.delta)?;
    match opts.epsilon {
        Some(e) => check_epsilon(e)?,
        None => return Err(Error::param("epsilon", "(none)", "give the target ε")),
    }
    let class_sizes = class_counts(table)?.into_iter().map(|n| n as u64).collect();
    let box_diameter_sq = (table.columns.iter().enumerate())
        .filter(|&(j, _)| Some(j) != table.label_index)
        .map(|(_, c)| match c {
            Column::Numeric { .. } => column_diameter_sq(None),
            Column::Categorical { levels, .. } => column_diameter_sq(Some(levels.len())),
        })
        .sum::<usize>() as u64;
    let class_names = match table.label_index.map(|li| &table.columns[li]) {
        Some(Column::Categorical { levels, .. }) => Some(levels.clone()),
        _ => None,
    };
    let inputs = PreviewInputs {
        class_sizes,
        class_names,
        features: table.n_cols().saturating_sub(1) as u64,
        box_diameter_sq,
        mix: (!p.auto_mix).then_some(opts.mix as u32),
        samples: opts.samples.map(|t| t as u64),
        standard: opts.adjacency == synth::Adjacency::Standard
            && matches!(p.mechanism, synth::Mechanism::Cda),
        opts,
    };
    let path = synth::data_path_budget(table, p.schema.as_ref(), &inputs.opts, &p.mechanism)?;
    let mut r = preview_on(&inputs, &path, view)?;
    // The GMM where the defaults choose it, or named for a numeric table (d is then its
    // feature columns), on its own data path (the normalization without DP-CDA's marginals).
    let opts = &inputs.opts;
    let numeric = synth::gmm_synth::numeric_features(table);
    let run = synth::auto_gmm(opts, &p.mechanism, p.auto_mix, false, table)
        .unwrap_or_else(|| p.mechanism.clone());
    match &run {
        synth::Mechanism::Cda => {}
        synth::Mechanism::Gmm(o) if numeric => {
            let d = table.n_cols().saturating_sub(1);
            let k = o
                .components
                .unwrap_or_else(|| synth::gmm_synth::components(d));
            let gmm_path = synth::data_path_budget(table, p.schema.as_ref(), opts, &run)?;
            let outlook = synth::gmm_synth::outlook(opts, &gmm_path, d, k, view.curve)?;
            with_gmm(&mut r, outlook);
        }
        other => {
            r.mechanism = other.name();
            r.warnings.push(format!(
                "the {} mechanism calibrates its own noise in the run (the receipt states it); these figures are DP-CDA's",
                other.name()
            ));
        }
    }
    Ok(r)
}

/// The pools and rows per class the synthesis would use: the class sizes and T/K each, or
/// under the standard adjacency (class counts noise multiplier `counts_z`) the floors
/// ⌊n_k − σ_c⌋ of counts at their expected value and T split in proportion to them.
fn pools_and_rows(sizes: &[u64], t: u64, counts_z: Option<f64>) -> Result<(Vec<usize>, Vec<u64>)> {
    let k = sizes.len() as u64;
    match counts_z {
        Some(z) => {
            let sigma = CountNoise::new("class-count noise", z, std::f64::consts::SQRT_2)?.sigma();
            let means: Vec<f64> = sizes
                .iter()
                .map(|&n| n as f64 - FLOOR_SIGMAS * sigma)
                .collect();
            let mut pools: Vec<usize> =
                means.iter().map(|&m| m.floor().max(1.0) as usize).collect();
            // The smallest pool sets the sampling rate (and, when l is the whole pool, every
            // pool): it is the least of the noisy floors, below the least expected floor.
            let (at, _) = pools
                .iter()
                .enumerate()
                .min_by_key(|&(_, p)| *p)
                .expect("classes");
            pools[at] = expected_min(&means, sigma).floor().max(1.0) as usize;
            let counts: Vec<f64> = sizes.iter().map(|&n| n as f64).collect();
            let rows = split_samples(t as usize, &counts)
                .into_iter()
                .map(|r| r as u64)
                .collect();
            Ok((pools, rows))
        }
        None => Ok((
            sizes.iter().map(|&n| n as usize).collect(),
            vec![t / k; sizes.len()],
        )),
    }
}

/// E[min_k X_k] for independent X_k ~ N(`means[k]`, σ²): L + ∫_L^U Π_k P(X_k > x) dx over
/// ±10σ around the smallest mean (the midpoint rule on 2,000 steps; the tails beyond hold
/// less than 1e-20 of the mass).
fn expected_min(means: &[f64], sigma: f64) -> f64 {
    let lo_mean = means.iter().copied().fold(f64::INFINITY, f64::min);
    if sigma.is_nan() || sigma <= 0.0 {
        return lo_mean;
    }
    let (lo, hi) = (lo_mean - 10.0 * sigma, lo_mean + 10.0 * sigma);
    let steps = 2000;
    let h = (hi - lo) / steps as f64;
    let survival = |x: f64| -> f64 {
        means
            .iter()
            .map(|&m| crate::mechanisms::gaussian::normal_cdf((m - x) / sigma))
            .product()
    };
    lo + (0..steps)
        .map(|i| survival(lo + (i as f64 + 0.5) * h))
        .sum::<f64>()
        * h
}

/// The norm the accountant is given, as the synthesis encodes the rows: wide tables and
/// images are scaled to norm c with non-negative entries (c/√2); short tables sit in the box
/// [0, c/M]^d, M = √(feature columns), of diameter c·D/M (numeric: c; each categorical
/// column widens it, up to √2·c), with the encoding's 1e-6 margin.
fn accountant_clip(x: &PreviewInputs) -> f64 {
    let clip = x.opts.clip;
    if use_common_norm(x.features as usize) {
        accounting_clip(clip, true)
    } else {
        box_accounting_clip(
            clip,
            (x.features as f64).sqrt(),
            (x.box_diameter_sq as f64).sqrt(),
        )
    }
}

/// A readout's accounting, set up as the synthesis sets up its plan: pools, rows per class,
/// l, the data path composed, the PLD plan.
struct Readout<'a> {
    x: &'a PreviewInputs,
    path: &'a DataPathBudget,
    pools: Vec<usize>,
    comps: Vec<u64>,
    per_class: u64,
    mix: u32,
    suggested: u32,
    /// The automatic l's ranking σx, where the calibration starts; None when l was given (or
    /// the setup reused a remembered l, whose calibration is remembered too).
    sigma_guess: Option<f64>,
    acc_clip: f64,
    /// Replace-one sensitivity of a mix, 2·c_acc/l.
    dx: f64,
    /// The accounting shape under keep-label: the smallest pool, the most rows per class.
    shape: CdaShape,
    /// ε left once the thresholds' terms are paid, and the δ of the conversions.
    target: f64,
    delta: f64,
    extra_curve: RdpCurve,
    pld: Option<SynthPld>,
}

impl<'a> Readout<'a> {
    /// The readout's setup; `suggested` is the automatic l when already known (a remembered
    /// calibration), else it is ranked here.
    fn new(x: &'a PreviewInputs, path: &'a DataPathBudget, suggested: Option<u32>) -> Result<Self> {
        let opts = &x.opts;
        if x.class_sizes.is_empty() {
            return Err(Error::Data("no classes: choose a label column".into()));
        }
        let k = x.class_sizes.len() as u64;
        let t = x.samples.unwrap_or_else(|| x.class_sizes.iter().sum());
        crate::mechanisms::cda::check_samples(t, k)?;
        let (mut pools, comps) = pools_and_rows(&x.class_sizes, t, path.counts_z)?;
        let per_class = comps.iter().copied().max().unwrap_or(0);
        let (norm_curve, extra_curve) = path.curves(&opts.orders)?;
        let acc_clip = accountant_clip(x);
        // The synthesis's own automatic l (preprocess::auto), from the same public numbers
        // and the same goal: the full ε, the normalization's curve composed.
        let smallest = pools.iter().copied().min().unwrap_or(0) as u64;
        let auto_goal = Goal {
            epsilon: opts.epsilon.unwrap_or(f64::NAN),
            delta: path.delta_rdp,
            orders: &opts.orders,
            preset: opts.preset,
            extra: Some(&norm_curve),
        };
        let (suggested, ranked_sigma) = match suggested {
            Some(l) => (l, None),
            None => {
                let (l, sigma_x) = auto_mix(
                    smallest, per_class, x.features, opts.clip, acc_clip, &auto_goal,
                )?;
                (l as u32, Some(sigma_x))
            }
        };
        // Where the run's calibration starts when it chose l itself (as the synthesis does).
        let sigma_guess = ranked_sigma.filter(|_| x.mix.is_none());
        let mix = x.mix.unwrap_or(suggested);
        if u64::from(mix) > smallest {
            // Named here, as the synthesis names it: the accountant would otherwise refuse a
            // "sampling rate" the user never gave.
            let pool = if x.standard {
                "the smallest class's pool the synthesis expects (its noisy count less a margin)"
            } else {
                "the smallest class"
            };
            return Err(Error::param(
                "mix",
                mix,
                format!("the mix order l is larger than {pool}: {smallest} rows; give l ≤ {smallest}, or \"auto\""),
            ));
        }
        if x.standard && u64::from(mix) == smallest {
            // l is the whole smallest pool: the synthesis cuts every pool to that size.
            pools.iter_mut().for_each(|p| *p = smallest as usize);
        }
        let target = auto_goal.epsilon - path.epsilon_thresholds;
        if target.is_nan() || target <= 0.0 {
            return Err(Error::param(
                "delta",
                opts.delta,
                "δ is so large that the thresholds alone spend the target ε; lower δ",
            ));
        }
        let dx = 2.0 * acc_clip / f64::from(mix);
        let use_pld = opts.accountant == AccountantKind::Pld && opts.preset == Preset::Default;
        let pld = use_pld.then(|| {
            let adjacency = if x.standard {
                pld::mechanisms::Adjacency::Standard
            } else {
                pld::mechanisms::Adjacency::LabelKept
            };
            let rate = f64::from(mix) / smallest.max(1) as f64;
            SynthPld::new(
                rate,
                per_class,
                adjacency,
                &path.noise_multipliers(),
                dx,
                0.0,
            )
            .with_exact_noise(opts.clip, mix as usize, path.epsilon_thresholds)
        });
        Ok(Readout {
            x,
            path,
            pools,
            comps,
            per_class,
            mix,
            suggested,
            sigma_guess,
            acc_clip,
            dx,
            shape: CdaShape {
                pool: smallest,
                mix,
                clip: acc_clip,
                sigma_y: None,
                samples: per_class,
            },
            target,
            delta: path.delta_rdp,
            extra_curve,
            pld,
        })
    }

    /// σx as the run calibrates it (RDP, then PLD; PLD first where the run chose l), and
    /// PLD's ε there when it certified one.
    fn calibrate(&self) -> Result<(f64, Option<f64>)> {
        let opts = &self.x.opts;
        let goal = Goal {
            epsilon: self.target,
            delta: self.delta,
            orders: &opts.orders,
            preset: opts.preset,
            extra: Some(&self.extra_curve),
        };
        let rdp_sigma = || -> Result<f64> {
            Ok(if self.x.standard {
                calibrate_standard(
                    &self.pools,
                    &self.comps,
                    self.mix,
                    self.acc_clip,
                    0.0,
                    &goal,
                )?
            } else {
                calibrate_sigma_x(&self.shape, &goal)?.sigma_x
            })
        };
        match &self.pld {
            Some(p) => p.calibrate_sigma(
                self.sigma_guess,
                self.target,
                self.delta,
                |sx| self.rdp_epsilon(sx, &opts.orders, &self.extra_curve),
                rdp_sigma,
            ),
            None => Ok((rdp_sigma()?, None)),
        }
    }

    /// RDP's ε of the whole release at `sx` on `orders` (`extra` the data path's curve on
    /// them).
    fn rdp_epsilon(&self, sx: f64, orders: &[u32], extra: &RdpCurve) -> Result<f64> {
        let preset = self.x.opts.preset;
        Ok(if self.x.standard {
            standard_curve(
                &self.pools,
                &self.comps,
                self.mix,
                sx / self.dx,
                orders,
                preset,
            )?
            .compose(extra)?
            .epsilon(self.delta, preset.conversion())?
            .epsilon
        } else {
            self.shape
                .with_sigma_x(sx)
                .epsilon(self.delta, orders, preset, Some(extra))?
                .epsilon
        })
    }

    /// ε of the whole release at `sx`: the smaller of the two bounds (PLD's `pld_at` when
    /// known, else on the grid `grid`), plus the thresholds' terms.
    fn epsilon(
        &self,
        sx: f64,
        orders: &[u32],
        extra: &RdpCurve,
        grid: &pld::PldOptions,
        pld_at: Option<f64>,
    ) -> Result<f64> {
        let e = self.rdp_epsilon(sx, orders, extra)?;
        let e = match (pld_at, &self.pld) {
            (Some(p), _) => p.min(e),
            (None, Some(p)) => p.epsilon_on(sx, self.delta, grid)?.epsilon.min(e),
            (None, None) => e,
        };
        Ok(e + self.path.epsilon_thresholds)
    }
}

/// A readout's calibration: the automatic l, σx and ε there.
#[derive(Debug, Clone, Copy)]
struct Calibrated {
    suggested: u32,
    sigma_x: f64,
    epsilon: f64,
}

thread_local! {
    /// The last readout computed without its curve, and the controls it was computed for
    /// (written out by `Debug`: every count and f64 exactly).
    static WITHOUT_CURVE: std::cell::RefCell<Option<(String, Calibrated)>> =
        const { std::cell::RefCell::new(None) };
}

/// The readout of `x` with the data path `path` (see the module note). Under the standard
/// adjacency the classes' noisy counts decide which classes the run keeps: the readout takes
/// them at their expected values, leaves out the classes that leaves out (unless that is every
/// class) and says which ([`class_outlook`]).
fn preview_on(
    x: &PreviewInputs,
    path: &DataPathBudget,
    view: PreviewView,
) -> Result<PreviewResponse> {
    let (out, warning) = match path.counts_z {
        Some(z) if x.standard => class_outlook(
            x.class_names.as_deref(),
            &x.class_sizes,
            z,
            path.label_delta,
            // With l automatic the run may go down to l = 1.
            x.mix.map_or(1, |l| l as usize),
            x.opts.pool_floor.is_some(),
        )?,
        _ => (Vec::new(), None),
    };
    let kept;
    let x = if out.is_empty() || out.len() == x.class_sizes.len() {
        x
    } else {
        let mut k = x.clone();
        k.class_sizes = (0..x.class_sizes.len())
            .filter(|i| !out.contains(i))
            .map(|i| x.class_sizes[i])
            .collect();
        k.class_names = None;
        kept = k;
        &kept
    };
    let warnings: Vec<String> = warning.into_iter().collect();
    let key = format!("{x:?}|{path:?}");
    // A curve asked for right after the same readout without it: that calibration stands.
    let known = WITHOUT_CURVE.with(|c| {
        let mut c = c.borrow_mut();
        match c.take() {
            Some((k, cal)) if view.curve && k == key => Some(cal),
            other => {
                *c = other;
                None
            }
        }
    });
    let r = Readout::new(x, path, known.map(|k| k.suggested))?;
    let cal = match known {
        Some(cal) => cal,
        None => {
            let (sigma_x, pld_at) = r.calibrate()?;
            let epsilon = r.epsilon(
                sigma_x,
                &x.opts.orders,
                &r.extra_curve,
                &pld::PldOptions::calibration(),
                pld_at,
            )?;
            Calibrated {
                suggested: r.suggested,
                sigma_x,
                epsilon,
            }
        }
    };
    if !view.curve {
        WITHOUT_CURVE.with(|c| *c.borrow_mut() = Some((key, cal)));
    }
    let Calibrated {
        sigma_x,
        epsilon: at,
        ..
    } = cal;
    let curve = if view.curve {
        chart(&r, sigma_x, at)?
    } else {
        vec![(sigma_x, at)]
    };
    Ok(PreviewResponse {
        mechanism: "dp-cda",
        gmm: None,
        mix: r.mix,
        suggested_mix: r.suggested,
        sigma_x,
        accountant: if r.pld.is_some() {
            AccountantKind::Pld.name()
        } else {
            AccountantKind::Rdp.name()
        },
        noise_multiplier: sigma_x / r.dx,
        epsilon: at,
        epsilon_mixing: at,
        samples_per_class: r.per_class,
        samples: r.comps.iter().sum(),
        pool: r.shape.pool,
        normalize_share: path.normalize_share,
        curve,
        warnings,
    })
}

/// The ε curve through the calibrated point (`sigma_x`, `at`).
fn chart(r: &Readout<'_>, sigma_x: f64, at: f64) -> Result<Vec<(f64, f64)>> {
    let (orders, path) = (&r.x.opts.orders, r.path);
    // The chart's other points use the coarse orders and a coarser PLD grid: upper bounds
    // still, at a fraction of the cost.
    let chart_orders = coarse_orders(orders);
    let (_, chart_extra) = path.curves(&chart_orders)?;
    let coarse = chart_pld_options();
    chart_points(sigma_x, at, |f| {
        r.epsilon(sigma_x * f, &chart_orders, &chart_extra, &coarse, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_min_matches_closed_forms() {
        // One variable: its mean. Two i.i.d. normals: μ − σ/√π.
        assert!((expected_min(&[40.0], 4.7) - 40.0).abs() < 1e-9);
        let two = expected_min(&[40.0, 40.0], 4.7);
        let exact = 40.0 - 4.7 / std::f64::consts::PI.sqrt();
        // (The midpoint rule and normal_cdf agree with it to about 1e-8; pools are whole rows.)
        assert!((two - exact).abs() < 1e-6, "{two} vs {exact}");
        // A far larger mean does not move the minimum.
        assert!((expected_min(&[40.0, 400.0], 4.7) - 40.0).abs() < 1e-9);
        assert_eq!(expected_min(&[40.0, 41.0], 0.0), 40.0);
    }

    #[test]
    fn standard_pools_are_floors_below_the_counts_and_rows_follow_them() {
        let sigma = CountNoise::new("c", 3.0, std::f64::consts::SQRT_2)
            .unwrap()
            .sigma();
        // Classes far apart: each pool is its expected floor ⌊n − σ⌋.
        let (pools, rows) = pools_and_rows(&[50, 60, 70], 180, Some(3.0)).unwrap();
        let floor = |n: f64| (n - sigma).floor() as usize;
        assert_eq!(pools, vec![floor(50.0), floor(60.0), floor(70.0)]);
        assert_eq!(rows, vec![50, 60, 70]);
        // Equal classes: the least of three noisy floors is about 0.85σ below each.
        let (pools, _) = pools_and_rows(&[50, 50, 50], 150, Some(3.0)).unwrap();
        let least = (50.0 - sigma - 0.8463 * sigma).floor() as usize;
        assert_eq!(pools.iter().min(), Some(&least), "{pools:?}");
        assert_eq!(pools.iter().filter(|&&p| p == floor(50.0)).count(), 2);
        // Keep-label: the class sizes, T/K rows each.
        let (pools, rows) = pools_and_rows(&[50, 60, 70], 180, None).unwrap();
        assert_eq!((pools, rows), (vec![50, 60, 70], vec![60, 60, 60]));
    }
}
