//! `audit` (CLI `privmix audit`, JS `audit`): the built-in privacy audit of
//! [`crate::audit`] as a typed request.

use crate::api::synth::{MixChoice, SynthRequest};
use crate::audit::{run_audit, AuditOptions, AuditReport};
use crate::error::{Error, Result};
use serde::Deserialize;

/// Options of an audit: the configuration under audit (the `synthesizeCsv` options that
/// apply to the audit's own dataset) and the audit's effort.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditRequest {
    /// `cda` (default), `dpmix`, `local`, `projection`, `gmm` (the GMM release's default
    /// path at the audit's public bound) or `federated` (a CAPE simulation, two parties).
    #[serde(default)]
    pub mechanism: Option<String>,
    /// Target ε.
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// δ (default 1e-5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// Explicit σx.
    #[serde(default)]
    pub sigma_x: Option<f64>,
    /// Mix order l.
    #[serde(default)]
    pub mix: Option<u32>,
    /// Clip norm c.
    #[serde(default)]
    pub clip: Option<f64>,
    /// Rows to make, T.
    #[serde(default)]
    pub samples: Option<u64>,
    /// `dp` (default), `public` (the audit supplies bounds [−1, 1]) or `data`.
    #[serde(default)]
    pub normalize: Option<String>,
    /// `standard` (default) or `keep-label` (declared: exact class counts are public).
    #[serde(default)]
    pub adjacency: Option<String>,
    /// `extreme` (default), `class-change`, `unparsable-cell`, `missing-cell`,
    /// `missing-label` or (`gmm` only) `added-record`.
    #[serde(default)]
    pub canary: Option<String>,
    /// Runs per dataset (default 500).
    #[serde(default)]
    pub runs: Option<usize>,
    /// 1 − confidence (default 0.05).
    #[serde(default)]
    pub alpha: Option<f64>,
    /// Feature columns of the audit dataset (default 2).
    #[serde(default)]
    pub features: Option<usize>,
    /// Rows per class of the audit dataset (default l + 1; gmm 10; federated 2l). From 64
    /// on, DP-CDA's pools and T come from the noisy class counts: the whole default path.
    #[serde(default)]
    pub rows_per_class: Option<usize>,
    /// First seed of the runs (default 1; the audit releases nothing).
    #[serde(default)]
    pub seed: Option<u64>,
    /// `federated` only: each party's own contribution file, then their aggregation,
    /// instead of the one-process simulation.
    #[serde(default)]
    pub multi_party: Option<bool>,
}

/// Runs the audit; `progress` gets the finished fraction.
pub fn audit(req: &AuditRequest, progress: impl FnMut(f64) -> Result<()>) -> Result<AuditReport> {
    let d = AuditOptions::default();
    let opts = AuditOptions {
        request: SynthRequest {
            mechanism: req.mechanism.clone(),
            epsilon: req.epsilon,
            delta: req.delta,
            sigma_x: req.sigma_x,
            mix: req.mix.map(MixChoice::Fixed),
            clip: req.clip,
            samples: req.samples,
            normalize: req.normalize.clone(),
            adjacency: req.adjacency.clone(),
            ..Default::default()
        },
        canary: match &req.canary {
            None => d.canary,
            Some(c) => c.parse()?,
        },
        runs: req.runs.unwrap_or(d.runs),
        alpha: req.alpha.unwrap_or(d.alpha),
        features: req.features.unwrap_or(d.features),
        rows_per_class: req.rows_per_class,
        seed: req.seed.unwrap_or(d.seed),
        multi_party: req.multi_party.unwrap_or(false),
        ..d
    };
    if opts.runs > 1_000_000 {
        return Err(Error::param(
            "runs",
            opts.runs,
            "at most 1 000 000 runs per dataset",
        ));
    }
    run_audit(&opts, progress)
}
