//! privmix: differentially private synthetic data.
pub mod error;
