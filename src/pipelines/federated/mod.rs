//! The federated DP-CDA pipelines (conventional and CAPE; the mechanism and its proof note are
//! in [`crate::mechanisms::federated`]), shared by the CLI and the browser build:
//!
//! * [`simulate`]: one process holds all partitions (IID or class-skewed) and plays every
//!   party and the aggregator;
//! * [`keygen`], [`contribute`], [`aggregate`]: the real multi-party protocol with no server.
//!   Each party makes a key pair and shares the public half, makes its contribution file from
//!   its own data, and anyone averages the files.
//!
//! The mechanism, its noise and its privacy views are in [`crate::mechanisms::federated`].
//!
//! **Common space.** The parties' mixes must be averaged in one space. With a `--schema`
//! giving bounds (`--normalize public`), every party uses the same public bounds and the
//! correlated noise cancels exactly. Without one (`dp`, the default), each party estimates its
//! column ranges under DP from its own rows (cost composed into its accounting), rounded
//! outward to powers of two so that parties with similar data agree; the aggregator maps each
//! party's mixes back to original units before averaging. Where two parties' ranges (or
//! released categorical levels) still differ, part of the correlated noise does not cancel:
//! that residual is data-independent (it depends only on DP outputs and the noise), so privacy
//! does not suffer, and the receipt states its size per column. In a simulation, one DP
//! estimate over the union of the partitions is made (as a trusted simulator can), so the
//! space is common.
//!
//! **Files.** `options` (the options and their checks), `records` (missing cells encoded, the
//! records a party uses), `space` (the common feature space),
//! `simulate`, `file` (keys and the contribution file format), `contribute`, `aggregate`, and
//! `receipt` (the receipt and the accounting of the views); every row is mixed by the shared
//! kernel [`crate::mechanisms::cda::Mixer`].

mod aggregate;
mod contribute;
mod file;
mod options;
mod receipt;
mod records;
mod simulate;
mod space;
#[cfg(test)]
mod testutil;

pub use crate::mechanisms::federated::pairwise::keygen as keygen_files;
pub use aggregate::{aggregate, aggregate_rows};
pub use contribute::{contribute, pairwise_noise};
pub use file::{
    keygen, AgreedParameters, ColumnLayout, Contribution, PartyAccounting, CONTRIBUTION_FORMAT,
};
pub use options::{auto_clip, FedOptions, Partition, Simulation};
pub use receipt::{
    aggregator_trust, FedAccountant, FedData, FedParameters, FedReceipt, PartyReport, ReceiptViews,
    ResidualNoise, UNPROTECTED_TYPES,
};
pub use records::federated_records;
pub use simulate::simulate;
