//! Privacy mechanisms, one module each, each with its proof note in the module docs.
//!
//! * [`cda`]: DP-CDA, class-centric mixing (SPEC §1.1) — the noise step is
//!   [`cda::generate`], its privacy proof note is the [`cda`] module documentation, and its
//!   accountant is [`cda::accounting`].
//! * [`federated`]: federated DP-CDA, conventional and CAPE (SPEC §1.3), with its proof note
//!   and the zero-sum and pairwise-seed noise.
//! * [`gaussian`]: the Gaussian noise sampler every mechanism uses.

pub mod cda;
pub mod federated;
pub mod gaussian;
