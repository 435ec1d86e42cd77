//! privmix: differentially private synthetic data.
pub mod error;
pub mod eval;
