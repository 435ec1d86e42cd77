//! privmix: differentially private synthetic data.
pub mod data;
pub mod error;
