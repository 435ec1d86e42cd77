//! The end-to-end synthesis pipeline shared by the CLI and the browser build:
//! table → normalization (with its privacy cost) → encode → clip → calibrate → DP-CDA →
//! decode → rows, plus the receipt.

use crate::accountant::calibrate::smallest_z;
use crate::accountant::{check_delta, check_epsilon, default_orders, Preset, RdpCurve};
use crate::data::{Column, Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::cda::accounting::{calibrate_sigma_x, check_mix, check_sigma, CdaPrivacy};
use crate::mechanisms::cda::{self, CdaConfig};
use crate::preprocess::clip::{check_clip, clip_rows};
use crate::preprocess::normalize::{dp_columns, DpHistogramBudget};
use crate::preprocess::{fit_feature_space, NormalizeMode};
use crate::receipt::{
    component, preset_parts, AccountantReport, CdaParameters, DataReport, EpsByPreset, Guarantee,
    Randomness, Receipt, BUILD_ID, VERSION,
};
use crate::rng::ReleaseRng;

/// Options of a DP-CDA synthesis (CLI flags / JS options).
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Target ε (calibrates σx); required unless `sigma_x` is given.
    pub epsilon: Option<f64>,
    /// δ ∈ (0, 1).
    pub delta: f64,
    /// Mix order l (default 4, the paper's best).
    pub mix: usize,
    /// Clip norm c in normalized units (default 1).
    pub clip: f64,
    /// Rows to make, T (default: as many as the input has).
    pub samples: Option<usize>,
    /// Normalization mode (default `dp`).
    pub normalize: NormalizeMode,
    /// Share of ε for DP normalization (default 0.1).
    pub normalize_share: f64,
    /// Explicit σx instead of calibration.
    pub sigma_x: Option<f64>,
    /// σy: paper mode with label noise; None: label-free mode (default).
    pub sigma_y: Option<f64>,
    /// Accountant preset (default `default`).
    pub preset: Preset,
    /// RDP orders (default 2..=256).
    pub orders: Vec<u32>,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            epsilon: None,
            delta: 1e-5,
            mix: 4,
            clip: 1.0,
            samples: None,
            normalize: NormalizeMode::Dp,
            normalize_share: 0.1,
            sigma_x: None,
            sigma_y: None,
            preset: Preset::Default,
            orders: default_orders(),
        }
    }
}

const DELTA_CATEGORY_SHARE: f64 = 0.1;

/// Runs DP-CDA on `table` (whose label column must be set), calling `header` once with the
/// output column names and `row` for each synthetic row (cells in the input's column order).
pub fn synthesize(
    table: &Table,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    rng: &mut ReleaseRng,
    header: impl FnOnce(&[String]) -> Result<()>,
    mut row: impl FnMut(&[String]) -> Result<()>,
    mut progress: impl FnMut(f64),
) -> Result<Receipt> {
    // ---- checks ------------------------------------------------------------------------
    check_delta(opts.delta)?;
    if let Some(e) = opts.epsilon {
        check_epsilon(e)?;
    }
    if let Some(s) = opts.sigma_x {
        check_sigma("sigma-x", s)?;
    }
    if opts.epsilon.is_none() && opts.sigma_x.is_none() {
        return Err(Error::param(
            "epsilon",
            "(none)",
            "give a target --epsilon (or an explicit --sigma-x)",
        ));
    }
    check_mix(opts.mix as u64)?;
    check_clip(opts.clip)?;
    if !(opts.normalize_share > 0.0 && opts.normalize_share < 1.0) {
        return Err(Error::param(
            "normalize-share",
            opts.normalize_share,
            "the share of ε for normalization must lie in (0, 1), e.g. 0.1",
        ));
    }
    let label_index = table
        .label_index
        .ok_or_else(|| Error::Data("no label column was chosen; pass --label COLUMN".into()))?;
    let (codes, class_labels) = match &table.columns[label_index] {
        Column::Categorical { codes, levels } => (codes, levels.clone()),
        Column::Numeric { .. } => {
            return Err(Error::Data(
                "internal: the label column must be categorical".into(),
            ))
        }
    };
    let k = class_labels.len();
    let mut classes: Vec<Vec<u32>> = vec![Vec::new(); k];
    for (i, &c) in codes.iter().enumerate() {
        classes[c as usize].push(i as u32);
    }
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    cda::check_pools(&sizes, &class_labels, opts.mix)?;
    let t = opts.samples.unwrap_or(table.n_rows);
    if t < k {
        return Err(Error::param(
            "samples",
            t,
            format!("T must be at least the number of classes K = {k} so that every class gets a row; use --samples {k} or more"),
        ));
    }
    let per_class = t / k;
    let pool = *sizes.iter().min().expect("at least one class");
    let paper_mode = opts.sigma_y.is_some();
    let compositions = if paper_mode { per_class * k } else { per_class };

    // ---- budget split and normalization -----------------------------------------------
    let (m_num, m_cat) = dp_columns(table, schema);
    let dp_norm = opts.normalize == NormalizeMode::Dp && m_num + m_cat > 0;
    let delta_cat = if dp_norm && m_cat > 0 {
        opts.delta * DELTA_CATEGORY_SHARE
    } else {
        0.0
    };
    let delta_rdp = opts.delta - delta_cat;
    let orders = &opts.orders;
    let (norm_curve, budget) = if dp_norm {
        let eps = opts.epsilon.ok_or_else(|| {
            Error::param("epsilon", "(none)", "DP normalization needs a target --epsilon to size its share; give --epsilon, or --normalize public with a schema")
        })?;
        let cal = smallest_z(
            eps * opts.normalize_share,
            delta_rdp,
            opts.preset.conversion(),
            |z| RdpCurve::gaussian(z, orders),
        )?;
        (
            RdpCurve::gaussian(cal.z, orders)?,
            Some(DpHistogramBudget {
                noise_multiplier: cal.z,
                delta_categories: delta_cat,
            }),
        )
    } else {
        (RdpCurve::zero(orders), None)
    };
    let (space, norm_report) =
        fit_feature_space(table, schema, opts.normalize, budget.as_ref(), rng)?;
    if space.dim == 0 {
        return Err(Error::Data(
            "there are no feature columns besides the label; add at least one feature column"
                .into(),
        ));
    }
    let mut features = space.encode(table)?;
    let rows_clipped = clip_rows(&mut features, space.dim, opts.clip)?;

    // ---- calibration -------------------------------------------------------------------
    let (sigma_x, calibrated) = match (opts.sigma_x, opts.epsilon) {
        (Some(s), _) => (s, false),
        (None, Some(eps)) => {
            let c = calibrate_sigma_x(
                pool as u64,
                opts.mix as u32,
                opts.clip,
                opts.sigma_y,
                compositions as u64,
                delta_rdp,
                eps,
                orders,
                opts.preset,
                Some(&norm_curve),
            )?;
            (c.sigma_x, true)
        }
        (None, None) => unreachable!("checked above"),
    };
    let privacy = CdaPrivacy {
        pool: pool as u64,
        mix: opts.mix as u32,
        clip: opts.clip,
        sigma_x,
        sigma_y: opts.sigma_y,
        samples: compositions as u64,
    };
    let cda_curve = privacy.rdp(orders, opts.preset)?;
    let total = cda_curve.clone().compose(&norm_curve)?;
    let guarantee = total.epsilon(delta_rdp, opts.preset.conversion())?;
    if let Some(target) = opts.epsilon {
        if guarantee.epsilon > target {
            return Err(Error::param(
                "sigma-x",
                sigma_x,
                format!("this noise gives ε = {:.4} > the target ε = {target}; raise --sigma-x or drop it to calibrate", guarantee.epsilon),
            ));
        }
    }
    let eps_other = privacy
        .epsilon(delta_rdp, orders, opts.preset.other(), Some(&norm_curve))?
        .epsilon;
    let by_preset = if opts.preset == Preset::Default {
        EpsByPreset {
            default: guarantee.epsilon,
            paper: eps_other,
        }
    } else {
        EpsByPreset {
            default: eps_other,
            paper: guarantee.epsilon,
        }
    };

    // ---- generate, decode, emit --------------------------------------------------------
    header(&space.names)?;
    let cfg = CdaConfig {
        mix: opts.mix,
        sigma_x,
        sigma_y: opts.sigma_y,
        per_class: vec![per_class; k],
    };
    let mut cells = Vec::with_capacity(space.names.len());
    cda::generate(
        &features,
        space.dim,
        &classes,
        &cfg,
        rng,
        |label, r| {
            space.decode_row(r, &class_labels[label], &mut cells);
            row(&cells)
        },
        &mut progress,
    )?;
    drop(features);

    // ---- receipt -----------------------------------------------------------------------
    let (bound, conversion) = preset_parts(opts.preset);
    let mut components = vec![component("dp-cda mixing", &cda_curve)];
    if dp_norm {
        components.push(component("dp normalization histograms", &norm_curve));
    }
    let mut unprotected = vec![format!(
        "rows_dropped ({}): rows with missing values are dropped before the mechanism; the count is computed from the raw data",
        table.rows_dropped
    )];
    if opts.normalize == NormalizeMode::Data {
        unprotected.push("normalization statistics (means, standard deviations, ranges, categories): --normalize data".into());
    }
    let mut warnings = norm_report.warnings.clone();
    if opts.normalize == NormalizeMode::Data {
        warnings.push(norm_report.statement.clone());
    }
    if rng.seed().is_some() {
        warnings.push("seeded, not for release: this run used a fixed --seed".into());
    }
    let adjacency = if paper_mode {
        "replace one record (the paper's accounting: feature and label noise charged; class sizes taken as public)"
    } else {
        "replace one record's features, keeping its label"
    };
    let label_name = table.names[label_index].clone();
    Ok(Receipt {
        epsilon: guarantee.epsilon,
        delta: opts.delta,
        mechanism: "dp-cda",
        guarantee: Guarantee {
            adjacency: adjacency.into(),
            public_information: vec![
                "the set of class labels and the number of rows in each class (invariant under the adjacency)".into(),
                "the number of input rows and the column names and types".into(),
            ],
            unprotected,
            limitations: vec![
                "Gaussian noise is sampled in floating point (ziggurat); floating-point side channels are not mitigated".into(),
            ],
        },
        parameters: CdaParameters {
            label_mode: if paper_mode { "paper" } else { "label-free" },
            mix: opts.mix,
            clip: opts.clip,
            sigma_x,
            sigma_y: opts.sigma_y,
            noise_multiplier: privacy.noise_multiplier()?,
            calibrated,
            target_epsilon: opts.epsilon,
            samples_requested: t,
            samples_per_class: per_class,
            rows_written: per_class * k,
            pool,
            sampling_rate: privacy.sampling_rate(),
            compositions,
            classes: k,
            feature_dim: space.dim,
            rows_clipped,
        },
        accountant: AccountantReport {
            preset: opts.preset,
            bound,
            conversion,
            orders: orders.clone(),
            rdp: total.rdp.clone(),
            order: guarantee.order,
            delta_rdp,
            epsilon_by_preset: by_preset,
            components,
        },
        normalization: norm_report,
        data: DataReport {
            rows_used: table.n_rows,
            rows_dropped: table.rows_dropped,
            columns: table.names.clone(),
            label: label_name,
            class_labels,
            class_counts: sizes,
        },
        randomness: Randomness { source: rng.description(), seeded: rng.seed().is_some(), fit_for_release: rng.seed().is_none() },
        warnings,
        version: VERSION,
        build_id: BUILD_ID,
    })
}
