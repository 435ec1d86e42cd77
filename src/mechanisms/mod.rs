//! Privacy mechanisms, one module each, each with its proof note in the module docs.
//!
//! * [`cda`]: DP-CDA, class-centric mixing — the noise step is
//!   [`cda::generate`], its privacy proof note is the [`cda`] module documentation, and its
//!   accountant is [`cda::accounting`].
//! * [`dpmix`]: DPMix, mixing over the whole dataset with a dimension-dependent accountant
//!   (Lee et al. 2019), with hard or soft labels and a class-wise variant.
//! * [`federated`]: federated DP-CDA, conventional and CAPE, with its proof note
//!   and the zero-sum and pairwise-seed noise.
//! * [`local`] and [`projection`]: the baselines of the DP-CDA paper's tables, local
//!   perturbation and random projection.
//! * [`gaussian_steps`]: the accounting shape DPMix and the baselines share (T subsampled
//!   Gaussian steps, calibrated without overshooting).
//! * [`gaussian`]: the Gaussian noise sampler every mechanism uses.
//! * [`gmm`]: DP release of class-conditional Gaussian mixture models, with its
//!   proof note, the certified SDP, Algorithm 1 and the baselines.

pub mod cda;
pub mod dpmix;
pub mod federated;
pub mod gaussian;
pub mod gaussian_steps;
pub mod gmm;
pub mod local;
pub mod noise;
pub mod pld_plan;
pub mod projection;
