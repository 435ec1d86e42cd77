//! privmix: differentially private synthetic data, made where the data lives.
//!
//! The core is pure Rust (no wasm or JS imports):
//! * [`data`]: CSV input (gzip, BOM, delimiters, missing values, type inference, schema);
//! * [`preprocess`]: normalization (public / DP / data), one-hot encoding, clipping, decoding;
//! * [`mechanisms`]: one module per mechanism, each with its proof note — DP-CDA's noise step
//!   is [`mechanisms::cda::generate`];
//! * [`accountant`]: RDP curves, subsampling bounds, conversion, calibration;
//! * [`images`]: PNG/JPEG/ZIP/IDX input, resizing, image synthesis to a ZIP of PNGs, previews;
//! * [`eval`]: train-on-synthetic, test-on-real models;
//! * [`pipelines`]: the end-to-end pipelines, one per product: tabular synthesis
//!   ([`pipelines::synth`]), federated DP-CDA ([`pipelines::federated`], CAPE and conventional,
//!   simulated or across real parties with no server) and the GMM release ([`pipelines::gmm`]);
//! * [`receipt`]: the privacy receipt;
//! * [`api`]: the application layer, typed requests and responses over all of the above; the
//!   CLI (`src/cli/`, feature `cli`) and the JS bindings (`src/wasm/`, features
//!   `wasm-accountant`, `wasm`, `wasm-extra`) are thin front ends over it.
pub mod accountant;
pub mod api;
pub mod audit;
pub mod data;
mod enums;
pub mod error;
pub mod eval;
pub mod images;
pub mod math;
pub mod mechanisms;
mod par;
pub mod pipelines;
pub mod preprocess;
pub mod receipt;
pub mod rng;
#[cfg(feature = "wasm-accountant")]
pub mod wasm;
