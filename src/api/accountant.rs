//! The accountant operations: `rdp`, `account` and `calibrate` for every mechanism (DP-CDA,
//! DPMix, local perturbation, projection), and the page's live noise preview. The CLI's
//! `rdp`, `account` and `calibrate` subcommands and the JS functions of the same names call
//! these; the responses are the same documents (camelCase in JS, snake_case in the CLI).

use super::{orders_of, preset_of, DEFAULT_CLIP};
use crate::accountant::calibrate::Goal;
use crate::accountant::subsampled_gaussian::validate_orders;
use crate::accountant::{pld, Preset, RdpCurve};
use crate::error::{Error, Result};
use crate::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy, CdaShape};
use crate::mechanisms::dpmix::accounting::{calibrate_dpmix, DpMixShape};
use crate::mechanisms::local::{calibrate_local, LocalPrivacy};
use serde::{Deserialize, Serialize};

/// Parses an order list: integers ≥ 2 and ranges like `2..256`, separated by commas.
pub fn parse_orders(spec: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let bad = || {
            Error::param(
                "orders",
                tok,
                "use integers ≥ 2 separated by commas, or a range like 2..256",
            )
        };
        if let Some((a, b)) = tok.split_once("..") {
            let a: u32 = a.trim().parse().map_err(|_| bad())?;
            let b: u32 = b
                .trim()
                .trim_start_matches('=')
                .parse()
                .map_err(|_| bad())?;
            if a > b {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(tok.parse().map_err(|_| bad())?);
        }
    }
    validate_orders(&out)?;
    Ok(out)
}

/// `rdp(params)`: the raw subsampled-Gaussian RDP curve.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RdpRequest {
    /// Sampling rate q.
    pub sampling_rate: f64,
    /// Noise multiplier z.
    pub noise_multiplier: f64,
    /// `default` or `paper`.
    #[serde(default)]
    pub preset: Option<String>,
    /// RDP orders (default 2..=256).
    #[serde(default)]
    pub orders: Option<Vec<u32>>,
}

/// The result of [`rdp`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RdpResponse {
    /// Orders.
    pub orders: Vec<u32>,
    /// RDP at each order.
    pub rdp: Vec<f64>,
    /// Preset name.
    pub preset: &'static str,
    /// The sampling rate q asked for.
    pub sampling_rate: f64,
    /// The noise multiplier z asked for.
    pub noise_multiplier: f64,
}

/// The raw RDP curve of the subsampled-without-replacement Gaussian.
pub fn rdp(r: &RdpRequest) -> Result<RdpResponse> {
    let preset = preset_of(&r.preset)?;
    let orders = orders_of(&r.orders)?;
    if r.noise_multiplier.is_nan() || r.noise_multiplier <= 0.0 {
        return Err(Error::param(
            "noise_multiplier",
            r.noise_multiplier,
            "must be a positive number",
        ));
    }
    let c = RdpCurve::subsampled_gaussian(
        r.sampling_rate,
        r.noise_multiplier,
        &orders,
        preset.bound(),
    )?;
    Ok(RdpResponse {
        orders: c.orders,
        rdp: c.rdp,
        preset: preset.name(),
        sampling_rate: r.sampling_rate,
        noise_multiplier: r.noise_multiplier,
    })
}

/// `account(params)` and `calibrate(params)`: a mechanism's public parameters.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MechanismRequest {
    /// `cda` (default), `dpmix`, `local` or `projection`.
    #[serde(default)]
    pub mechanism: Option<String>,
    /// Pool size n: cda: the class size of the sampling rate l/n; dpmix: the rows the mixes
    /// are drawn from; local/projection: the input rows.
    pub pool: u64,
    /// Mix order l (cda and dpmix; required there).
    #[serde(default)]
    pub mix: Option<u32>,
    /// Clip norm c (default 1; cda, local, projection).
    #[serde(default)]
    pub clip: Option<f64>,
    /// Feature noise σx (for `account`).
    #[serde(default)]
    pub sigma_x: Option<f64>,
    /// cda: label noise σy (paper mode). dpmix: label noise (account: required unless
    /// `dim_y` is 0; calibrate: held fixed, or omitted for one shared σ).
    #[serde(default)]
    pub sigma_y: Option<f64>,
    /// dpmix: feature dimension dx.
    #[serde(default)]
    pub dim_x: Option<u64>,
    /// dpmix: label dimension dy (0: the class-wise variant).
    #[serde(default)]
    pub dim_y: Option<u64>,
    /// Number of mixes T (local/projection: rows released).
    pub samples: u64,
    /// δ.
    pub delta: f64,
    /// Target ε (for `calibrate`).
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// `default` or `paper`.
    #[serde(default)]
    pub preset: Option<String>,
    /// RDP orders.
    #[serde(default)]
    pub orders: Option<Vec<u32>>,
    /// `rdp` (default) or `pld`: the privacy-loss-distribution accountant (DP-CDA label-free;
    /// replace-one inside the pool). With `pld`, ε is the smaller of the two valid upper
    /// bounds and calibration uses the PLD; the RDP value stays in the response.
    #[serde(default)]
    pub accountant: Option<String>,
}

pub use crate::accountant::AccountantKind;

/// The mechanism being accounted, with the parameters it uses.
#[derive(Debug, Clone, PartialEq)]
pub enum AccountedMechanism {
    /// DP-CDA.
    Cda {
        /// Pool n.
        pool: u64,
        /// l.
        mix: u32,
        /// c.
        clip: f64,
        /// σy (paper mode) or none (label-free).
        sigma_y: Option<f64>,
        /// T.
        samples: u64,
    },
    /// DPMix (pool n, l, dx, dy, σy if given, T).
    DpMix(DpMixShape),
    /// Local perturbation, or random projection (accounted alike).
    Local {
        /// `local` or `projection`.
        name: &'static str,
        /// Input rows n.
        rows: u64,
        /// Rows released.
        samples: u64,
        /// c.
        clip: f64,
    },
}

/// Checked accountant parameters: built once from a [`MechanismRequest`]; every default and
/// every cross-parameter rule is applied here.
#[derive(Debug, Clone, PartialEq)]
pub struct MechanismParams {
    /// The mechanism.
    pub mechanism: AccountedMechanism,
    /// δ.
    pub delta: f64,
    /// Preset.
    pub preset: Preset,
    /// RDP orders.
    pub orders: Vec<u32>,
    /// σx (`account`), if given.
    pub sigma_x: Option<f64>,
    /// Target ε (`calibrate`), if given.
    pub epsilon: Option<f64>,
    /// The accountant.
    pub accountant: AccountantKind,
}

impl TryFrom<&MechanismRequest> for MechanismParams {
    type Error = Error;

    fn try_from(r: &MechanismRequest) -> Result<Self> {
        let mechanism = mechanism_of(r)?;
        let accountant = accountant_of(r, &mechanism)?;
        Ok(MechanismParams {
            accountant,
            mechanism,
            delta: r.delta,
            preset: preset_of(&r.preset)?,
            orders: orders_of(&r.orders)?,
            sigma_x: r.sigma_x,
            epsilon: r.epsilon,
        })
    }
}

/// The mechanism a [`MechanismRequest`] names, with its shape checked (the fields that apply
/// to it given, the others left out).
fn mechanism_of(r: &MechanismRequest) -> Result<AccountedMechanism> {
    let name = r.mechanism.as_deref().unwrap_or("cda");
    let needs_mix = || {
        r.mix.ok_or_else(|| {
            Error::param(
                "mix",
                "(none)",
                format!("the {name} mechanism needs the mix order l"),
            )
        })
    };
    if name != "dpmix" {
        if let Some(x) = r.dim_x {
            return Err(Error::param(
                "dim_x",
                x,
                "applies to the dpmix mechanism only",
            ));
        }
        if let Some(y) = r.dim_y {
            return Err(Error::param(
                "dim_y",
                y,
                "applies to the dpmix mechanism only",
            ));
        }
    }
    Ok(match name {
        "cda" => AccountedMechanism::Cda {
            pool: r.pool,
            mix: needs_mix()?,
            clip: r.clip.unwrap_or(DEFAULT_CLIP),
            sigma_y: r.sigma_y,
            samples: r.samples,
        },
        "dpmix" => {
            let dim_x = r.dim_x.ok_or_else(|| {
                Error::param(
                    "dim_x",
                    "(none)",
                    "the dpmix mechanism needs the feature dimension dx",
                )
            })?;
            let dim_y = r.dim_y.ok_or_else(|| {
                Error::param(
                    "dim_y",
                    "(none)",
                    "the dpmix mechanism needs the label dimension dy (the number of classes; 0 for the class-wise variant)",
                )
            })?;
            AccountedMechanism::DpMix(DpMixShape {
                pool: r.pool,
                mix: needs_mix()?,
                dim_x,
                dim_y,
                sigma_y: r.sigma_y,
                samples: r.samples,
            })
        }
        "local" | "projection" => {
            if let Some(l) = r.mix {
                return Err(Error::param(
                    "mix",
                    l,
                    "local perturbation and projection do not mix rows; leave the mix order out",
                ));
            }
            if let Some(s) = r.sigma_y {
                return Err(Error::param(
                    "sigma_y",
                    s,
                    "local perturbation and projection add no label noise; leave it out",
                ));
            }
            AccountedMechanism::Local {
                name: if name == "local" {
                    "local"
                } else {
                    "projection"
                },
                rows: r.pool,
                samples: r.samples,
                clip: r.clip.unwrap_or(DEFAULT_CLIP),
            }
        }
        other => {
            return Err(Error::param(
                "mechanism",
                other,
                "use cda (DP-CDA), dpmix, local or projection",
            ))
        }
    })
}

/// The accountant a [`MechanismRequest`] asks for (RDP by default), checked against the
/// mechanism: PLD covers label-free DP-CDA here.
fn accountant_of(r: &MechanismRequest, mechanism: &AccountedMechanism) -> Result<AccountantKind> {
    let accountant = match r.accountant.as_deref() {
        None | Some("rdp") => AccountantKind::Rdp,
        Some("pld") => AccountantKind::Pld,
        Some(other) => {
            return Err(Error::param(
                "accountant",
                other,
                "use rdp (default) or pld (privacy-loss distribution)",
            ))
        }
    };
    if accountant == AccountantKind::Pld
        && !matches!(mechanism, AccountedMechanism::Cda { sigma_y: None, .. })
    {
        return Err(Error::param(
            "accountant",
            "pld",
            "the PLD accountant covers DP-CDA in label-free mode here (no σy); use rdp for this mechanism",
        ));
    }
    Ok(accountant)
}

/// ε under the other preset.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OtherPreset {
    /// Preset name.
    pub preset: &'static str,
    /// ε.
    pub epsilon: f64,
    /// Optimal order.
    pub order: u32,
}

/// The result of [`account`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountResponse {
    /// ε.
    pub epsilon: f64,
    /// Optimal order.
    pub order: u32,
    /// δ.
    pub delta: f64,
    /// Preset.
    pub preset: &'static str,
    /// `cda`, `dpmix`, `local` or `projection`.
    pub mechanism: &'static str,
    /// z of one step.
    pub noise_multiplier: f64,
    /// The sampling rate of one step.
    pub sampling_rate: f64,
    /// The same under the other preset.
    pub epsilon_other_preset: OtherPreset,
    /// `rdp` or `pld`: which accountant was asked for.
    pub accountant: &'static str,
    /// ε from the RDP accountant (equals `epsilon` under `rdp`).
    pub epsilon_rdp: f64,
    /// ε from the PLD accountant (`pld` only); `epsilon` is then the smaller of the two.
    pub epsilon_pld: Option<f64>,
    /// What only this mechanism reports.
    #[serde(flatten)]
    pub detail: AccountDetail,
}

/// The per-mechanism part of an [`AccountResponse`].
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum AccountDetail {
    /// DP-CDA.
    #[serde(rename_all = "camelCase")]
    Cda {
        /// `label-free` or `paper`.
        mode: &'static str,
    },
    /// DPMix.
    #[serde(rename_all = "camelCase")]
    DpMix {
        /// σx.
        sigma_x: f64,
        /// σy (null for the class-wise variant, dy = 0).
        sigma_y: Option<f64>,
        /// dx.
        dim_x: u64,
        /// dy.
        dim_y: u64,
        /// The squared sensitivity Δ² of one mix.
        delta_squared: f64,
        /// T.
        samples: u64,
        /// n.
        pool: u64,
        /// l.
        mix: u32,
    },
    /// Local perturbation and projection.
    #[serde(rename_all = "camelCase")]
    Local {
        /// σ.
        sigma_x: f64,
        /// c.
        clip: f64,
    },
}

fn mode(sigma_y: Option<f64>) -> &'static str {
    if sigma_y.is_some() {
        "paper"
    } else {
        "label-free"
    }
}

/// What [`account`] computes for one mechanism: ε at the chosen and the other preset, the PLD
/// figure where one exists, and the mechanism's own numbers.
struct Accounted {
    chosen: crate::accountant::EpsDelta,
    other: crate::accountant::EpsDelta,
    /// `Some` when the PLD accountant was asked for and covers the mechanism.
    pld: Option<f64>,
    mechanism: &'static str,
    noise_multiplier: f64,
    sampling_rate: f64,
    detail: AccountDetail,
}

/// ε of a mechanism with the given noise.
pub fn account(r: &MechanismRequest) -> Result<AccountResponse> {
    let p = MechanismParams::try_from(r)?;
    let sigma_x = p
        .sigma_x
        .ok_or_else(|| Error::param("sigma_x", "(none)", "give the feature noise σx"))?;
    let a = match p.mechanism {
        AccountedMechanism::Cda {
            pool,
            mix,
            clip,
            sigma_y,
            samples,
        } => {
            let m = CdaPrivacy {
                pool,
                mix,
                clip,
                sigma_x,
                sigma_y,
                samples,
            };
            let pld = match p.accountant {
                AccountantKind::Pld => Some(
                    pld::mechanisms::cda(&m, pld::mechanisms::Adjacency::LabelKept)?
                        .epsilon(p.delta, &pld::PldOptions::default())?
                        .epsilon,
                ),
                AccountantKind::Rdp => None,
            };
            Accounted {
                chosen: m.epsilon(p.delta, &p.orders, p.preset, None)?,
                other: m.epsilon(p.delta, &p.orders, p.preset.other(), None)?,
                pld,
                mechanism: "cda",
                noise_multiplier: m.noise_multiplier()?,
                sampling_rate: m.sampling_rate(),
                detail: AccountDetail::Cda {
                    mode: mode(sigma_y),
                },
            }
        }
        AccountedMechanism::DpMix(shape) => account_dpmix(&p, shape, sigma_x)?,
        AccountedMechanism::Local {
            name,
            rows,
            samples,
            clip,
        } => {
            let m = LocalPrivacy {
                rows,
                samples,
                clip,
                sigma: sigma_x,
            };
            Accounted {
                chosen: m.epsilon(p.delta, &p.orders, p.preset, None)?,
                other: m.epsilon(p.delta, &p.orders, p.preset.other(), None)?,
                pld: None,
                mechanism: name,
                noise_multiplier: m.noise_multiplier()?,
                sampling_rate: m.sampling_rate(),
                detail: AccountDetail::Local { sigma_x, clip },
            }
        }
    };
    let Accounted {
        chosen: e,
        other: o,
        pld,
        mechanism,
        noise_multiplier,
        sampling_rate,
        detail,
    } = a;
    Ok(AccountResponse {
        // The smaller of two valid upper bounds.
        epsilon: pld.map_or(e.epsilon, |x| x.min(e.epsilon)),
        accountant: if pld.is_some() {
            AccountantKind::Pld.name()
        } else {
            AccountantKind::Rdp.name()
        },
        epsilon_rdp: e.epsilon,
        epsilon_pld: pld,
        order: e.order,
        delta: p.delta,
        preset: p.preset.name(),
        mechanism,
        noise_multiplier,
        sampling_rate,
        epsilon_other_preset: OtherPreset {
            preset: p.preset.other().name(),
            epsilon: o.epsilon,
            order: o.order,
        },
        detail,
    })
}

/// [`account`] for DPMix: σy is required unless the label dimension is 0 (the class-wise
/// variant).
fn account_dpmix(p: &MechanismParams, shape: DpMixShape, sigma_x: f64) -> Result<Accounted> {
    let DpMixShape {
        pool,
        mix,
        dim_x,
        dim_y,
        samples,
        ..
    } = shape;
    let sigma_y = match (dim_y, shape.sigma_y) {
        (0, s) => s.unwrap_or(f64::NAN),
        (_, Some(s)) => s,
        (_, None) => return Err(Error::param(
            "sigma_y",
            "(none)",
            "the dpmix mechanism needs the label noise σy (or dy = 0 for the class-wise variant)",
        )),
    };
    let m = shape.with_sigmas(sigma_x, sigma_y);
    Ok(Accounted {
        chosen: m.epsilon(p.delta, &p.orders, p.preset, None)?,
        other: m.epsilon(p.delta, &p.orders, p.preset.other(), None)?,
        pld: None,
        mechanism: "dpmix",
        noise_multiplier: m.noise_multiplier()?,
        sampling_rate: m.sampling_rate(),
        detail: AccountDetail::DpMix {
            sigma_x,
            sigma_y: (dim_y > 0).then_some(sigma_y),
            dim_x,
            dim_y,
            delta_squared: m.delta_squared()?,
            samples,
            pool,
            mix,
        },
    })
}

/// The result of [`calibrate`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalibrateResponse {
    /// The smallest σx found whose ε ≤ the target.
    pub sigma_x: f64,
    /// Its ε (re-accounted).
    pub epsilon: f64,
    /// Optimal order.
    pub order: u32,
    /// The target.
    pub target_epsilon: f64,
    /// δ.
    pub delta: f64,
    /// z of one step.
    pub noise_multiplier: f64,
    /// Preset.
    pub preset: &'static str,
    /// `cda`, `dpmix`, `local` or `projection`.
    pub mechanism: &'static str,
    /// `rdp` or `pld`: the accountant that calibrated σx.
    pub accountant: &'static str,
    /// ε at σx from the RDP accountant.
    pub epsilon_rdp: f64,
    /// ε at σx from the PLD accountant (`pld` only); `epsilon` is the smaller of the two.
    pub epsilon_pld: Option<f64>,
    /// What only this mechanism reports.
    #[serde(flatten)]
    pub detail: CalibrateDetail,
}

/// The per-mechanism part of a [`CalibrateResponse`].
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CalibrateDetail {
    /// DP-CDA.
    #[serde(rename_all = "camelCase")]
    Cda {
        /// `label-free` or `paper`.
        mode: &'static str,
    },
    /// DPMix.
    #[serde(rename_all = "camelCase")]
    DpMix {
        /// σy (null for the class-wise variant).
        sigma_y: Option<f64>,
        /// Whether σy = σx was calibrated jointly.
        shared_sigma: bool,
        /// dx.
        dim_x: u64,
        /// dy.
        dim_y: u64,
    },
    /// Local perturbation and projection.
    #[serde(rename_all = "camelCase")]
    Local {
        /// c.
        clip: f64,
    },
}

/// The smallest σx whose ε is at most the target.
pub fn calibrate(r: &MechanismRequest) -> Result<CalibrateResponse> {
    let p = MechanismParams::try_from(r)?;
    let target = p
        .epsilon
        .ok_or_else(|| Error::param("epsilon", "(none)", "give the target ε"))?;
    let goal = Goal {
        epsilon: target,
        delta: p.delta,
        orders: &p.orders,
        preset: p.preset,
        extra: None,
    };
    Ok(match p.mechanism {
        AccountedMechanism::Cda {
            pool,
            mix,
            clip,
            sigma_y,
            samples,
        } => {
            let shape = CdaShape {
                pool,
                mix,
                clip,
                sigma_y,
                samples,
            };
            calibrate_cda_response(&shape, p.accountant, &goal)?
        }
        AccountedMechanism::DpMix(shape) => {
            let DpMixShape { dim_x, dim_y, .. } = shape;
            let c = calibrate_dpmix(&shape, &goal)?;
            let at = RdpPoint {
                sigma_x: c.sigma_x,
                epsilon: c.epsilon,
                order: c.order,
                noise_multiplier: c.noise_multiplier,
            };
            let detail = CalibrateDetail::DpMix {
                sigma_y: (dim_y > 0).then_some(c.sigma_y),
                shared_sigma: c.shared,
                dim_x,
                dim_y,
            };
            CalibrateResponse::rdp(&goal, at, "dpmix", detail)
        }
        AccountedMechanism::Local {
            name,
            rows,
            samples,
            clip,
        } => {
            let c = calibrate_local(rows, samples, clip, &goal)?;
            let at = RdpPoint {
                sigma_x: c.sigma,
                epsilon: c.epsilon,
                order: c.order,
                noise_multiplier: c.noise_multiplier,
            };
            CalibrateResponse::rdp(&goal, at, name, CalibrateDetail::Local { clip })
        }
    })
}

/// A calibrated σx with its RDP ε, the optimal order and the noise multiplier of one step.
struct RdpPoint {
    sigma_x: f64,
    epsilon: f64,
    order: u32,
    noise_multiplier: f64,
}

impl CalibrateResponse {
    /// The response of a calibration by the RDP accountant to `goal`.
    fn rdp(
        goal: &Goal<'_>,
        at: RdpPoint,
        mechanism: &'static str,
        detail: CalibrateDetail,
    ) -> Self {
        CalibrateResponse {
            sigma_x: at.sigma_x,
            epsilon: at.epsilon,
            order: at.order,
            target_epsilon: goal.epsilon,
            delta: goal.delta,
            noise_multiplier: at.noise_multiplier,
            preset: goal.preset.name(),
            mechanism,
            accountant: "rdp",
            epsilon_rdp: at.epsilon,
            epsilon_pld: None,
            detail,
        }
    }
}

/// DP-CDA's calibration: by the PLD accountant (RDP re-accounted at its σx as a
/// cross-check; ε the smaller of the two) or by RDP alone.
fn calibrate_cda_response(
    shape: &CdaShape,
    accountant: AccountantKind,
    goal: &Goal<'_>,
) -> Result<CalibrateResponse> {
    let detail = CalibrateDetail::Cda {
        mode: mode(shape.sigma_y),
    };
    if accountant != AccountantKind::Pld {
        let c = calibrate_sigma_x(shape, goal)?;
        let at = RdpPoint {
            sigma_x: c.sigma_x,
            epsilon: c.epsilon,
            order: c.order,
            noise_multiplier: c.noise_multiplier,
        };
        return Ok(CalibrateResponse::rdp(goal, at, "cda", detail));
    }
    let m = shape.with_sigma_x(f64::NAN);
    let (sigma_x, e_pld) = pld::mechanisms::calibrate_cda(
        &m,
        pld::mechanisms::Adjacency::LabelKept,
        goal.epsilon,
        goal.delta,
        &pld::PldOptions::default(),
    )?;
    let at = CdaPrivacy { sigma_x, ..m };
    let e_rdp = at.epsilon(goal.delta, goal.orders, goal.preset, None)?;
    let point = RdpPoint {
        sigma_x,
        epsilon: e_rdp.epsilon,
        order: e_rdp.order,
        noise_multiplier: at.noise_multiplier()?,
    };
    Ok(CalibrateResponse {
        epsilon: e_pld.epsilon.min(e_rdp.epsilon),
        accountant: "pld",
        epsilon_pld: Some(e_pld.epsilon),
        ..CalibrateResponse::rdp(goal, point, "cda", detail)
    })
}
