//! privmix: differentially private synthetic data.
pub mod accountant;
pub mod error;
pub mod mechanisms;
pub mod rng;
