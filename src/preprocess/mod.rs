//! From a [`Table`](crate::data::Table) to the clipped feature matrix the mechanisms use, and
//! back to the input's columns and units.
//!
//! * [`normalize`]: the per-column statistics — public (schema), DP (noisy histograms, with a
//!   stated share of the budget composed into the accountant) or data (the paper's exact,
//!   unprotected z-scores) — and the resulting [`FeatureSpace`].
//! * [`encode`]: the map both ways (numeric scaling, one-hot with argmax decoding, integer
//!   rounding, the input's column names and order).
//! * [`clip`]: L2 clipping of each row.

pub mod auto;
pub mod clip;
pub mod compact;
pub mod dp_counts;
pub mod encode;
pub mod missing;
pub mod normalize;
pub mod quantile;
pub mod rownorm;

pub use encode::{ColumnCodec, FeatureSpace};
pub use normalize::{fit_feature_space, NormalizationReport, NormalizeMode};
