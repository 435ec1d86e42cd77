//! The end-to-end pipelines: each takes checked options and data, runs the data path
//! (normalization, encoding, clipping), calls its mechanism in [`crate::mechanisms`] with a
//! noise scale the [`crate::accountant`] calibrated, and returns the release with its receipt.
//!
//! * [`synth`]: tabular synthesis (DP-CDA, DPMix, local, projection), also behind the image
//!   path;
//! * [`federated`]: federated DP-CDA (CAPE and conventional), simulated or across real parties
//!   with no server;
//! * [`gmm`]: the release of a class-conditional Gaussian mixture model (the mechanism and its
//!   proof note are in [`crate::mechanisms::gmm`]).
//!
//! The application layer ([`crate::api`]) calls these; nothing here parses command lines or
//! talks to JS.

pub mod federated;
pub mod gmm;
pub mod synth;
