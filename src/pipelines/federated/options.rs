//! The options of a federated run, shared by [`simulate`](super::simulate) and
//! [`contribute`](super::contribute), their checks, and the facts every party derives from its
//! table (the default clip norm, the class pools).

use crate::accountant::{check_delta, check_epsilon, Preset};
use crate::data::{Column, Table};
use crate::enums::named_enum;
use crate::error::{Error, Result};
use crate::mechanisms::cda::accounting::check_mix;
use crate::mechanisms::federated::{Federation, Variant};
use crate::pipelines::synth::ColumnTypes;
use crate::preprocess::clip::check_clip;
use crate::preprocess::NormalizeMode;
use serde::{Deserialize, Serialize};

/// Options shared by `simulate` and `contribute` (CLI flags / JS options).
#[derive(Debug, Clone)]
pub struct FedOptions {
    /// CAPE or conventional.
    pub variant: Variant,
    /// Target ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Mix order l.
    pub mix: usize,
    /// Clip norm c (normalized units); None: [`auto_clip`] of the header.
    pub clip: Option<f64>,
    /// Rows to release, T (simulation default: the input's row count; required to contribute).
    pub samples: Option<usize>,
    /// Normalization (`dp` default, `public` with a schema; `data` in simulation only).
    pub normalize: NormalizeMode,
    /// Share of ε for DP normalization.
    pub normalize_share: f64,
    /// Accountant preset.
    pub preset: Preset,
    /// RDP orders.
    pub orders: Vec<u32>,
    /// Multi-party: an agreed lower bound on every party's smallest class. With it every party
    /// calibrates CAPE's independent noise for the same floor and relies on the others' noise;
    /// without it (None) each party uses its own smallest class and relies on no one else's
    /// noise (safe, but no gain over conventional).
    pub pool: Option<usize>,
    /// Multi-party: an agreed session label, bound into the pairwise streams.
    pub session: Option<String>,
    /// t: the aggregator is assumed to hold the pairwise seeds of this many parties. 1
    /// (default): the aggregator is one of the parties; 0: a seedless aggregator (an
    /// assumption the product cannot enforce, stated in the receipt); up to S − 1.
    pub aggregator_seeds: usize,
    /// How the columns the schema leaves untyped get their type: under DP (default, at each
    /// party, with the share of ε `synth` gives the decision) or from the data (NOT protected;
    /// declared).
    pub column_types: ColumnTypes,
}

impl FedOptions {
    /// The federation these options describe for `parties` parties whose messages have
    /// sensitivity `delta_l2`, with pairwise noise `tau_e`.
    pub fn federation(&self, delta_l2: f64, tau_e: f64, parties: usize) -> Federation {
        Federation {
            variant: self.variant,
            delta_l2,
            tau_e,
            parties,
            known: self.aggregator_seeds,
        }
    }
}

impl Default for FedOptions {
    fn default() -> Self {
        FedOptions {
            variant: Variant::Cape,
            epsilon: 10.0,
            delta: 1e-5,
            mix: 4,
            clip: None,
            samples: None,
            normalize: NormalizeMode::Dp,
            normalize_share: 0.1,
            preset: Preset::Default,
            orders: crate::accountant::default_orders(),
            pool: None,
            session: None,
            aggregator_seeds: 1,
            column_types: ColumnTypes::Dp,
        }
    }
}

named_enum! {
    /// How a simulation splits the rows among the parties.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Partition: "partition" {
        /// Each class's rows shuffled and dealt round-robin (IID, stratified).
        Iid = "iid" ("default"),
        /// Class-skewed: half of class k's rows go to party (k mod S), the rest are dealt
        /// round-robin.
        Skewed = "skewed",
    }
}

/// A simulated federation: how many parties, and how the rows are dealt to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Simulation {
    /// S, the parties (at least 2).
    pub clients: usize,
    /// How each class's rows are split among them.
    pub partition: Partition,
}

pub(super) fn check_options(opts: &FedOptions) -> Result<()> {
    check_epsilon(opts.epsilon)?;
    check_delta(opts.delta)?;
    check_mix(opts.mix as u64)?;
    if let Some(c) = opts.clip {
        check_clip(c)?;
    }
    if !(opts.normalize_share > 0.0 && opts.normalize_share < 1.0) {
        return Err(Error::param(
            "normalize-share",
            opts.normalize_share,
            "the share of ε for normalization must lie in (0, 1), e.g. 0.1",
        ));
    }
    crate::accountant::subsampled_gaussian::validate_orders(&opts.orders)?;
    Ok(())
}

/// The default clip norm: max(1, √m / 8) with m the number of feature columns of the header
/// (public, so every party computes the same value). Rows normalized to [0, 1] per feature
/// have norms up to √m; with c = 1 wide rows (images) are all scaled down a lot, so the signal
/// left is small next to the noise of the aggregate; √m/8 keeps more of it (MNIST: c = 3.5).
pub fn auto_clip(table: &Table) -> f64 {
    let m = table.n_cols().saturating_sub(1) as f64;
    (m.sqrt() / 8.0).max(1.0)
}

pub(super) fn clip_of(table: &Table, opts: &FedOptions) -> f64 {
    opts.clip.unwrap_or_else(|| auto_clip(table))
}

/// Class labels and row indices per class of a labelled table.
pub(super) fn classes_of(table: &Table) -> Result<(Vec<String>, Vec<Vec<u32>>)> {
    let li = table
        .label_index
        .ok_or_else(|| Error::Data("no label column was chosen; name the label column".into()))?;
    match &table.columns[li] {
        Column::Categorical { codes, levels } => {
            let mut classes = vec![Vec::new(); levels.len()];
            for (i, &c) in codes.iter().enumerate() {
                classes[c as usize].push(i as u32);
            }
            Ok((levels.clone(), classes))
        }
        Column::Numeric { .. } => Err(Error::Data(
            "internal: the label column must be categorical".into(),
        )),
    }
}
