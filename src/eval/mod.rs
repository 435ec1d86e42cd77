//! Downstream evaluation models: train a classifier on (synthetic) data, score it on real
//! held-out data. Used to report the utility of a synthetic data set as test accuracy.
//!
//! Two models are available: [`logreg::LogReg`] (multinomial logistic regression, L-BFGS)
//! and [`tree::DecisionTree`] (CART with Gini impurity). Both are single-threaded and
//! deterministic, and build for `wasm32-unknown-unknown`.

pub mod logreg;
mod tables;
pub mod tree;

pub use tables::{evaluate_tables, EvalReport};

use std::str::FromStr;

use ndarray::ArrayView2;

use crate::enums::named_enum;
use crate::error::{Error, Result};
use logreg::{LogReg, LogRegParams};
use tree::{DecisionTree, TreeParams};

named_enum! {
    /// Which downstream classifier to train.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Model {
        /// Multinomial logistic regression ([`logreg::LogReg`]).
        LogReg = "logreg",
        /// CART decision tree ([`tree::DecisionTree`]).
        Tree = "tree",
    }
}

impl Model {
    /// The names accepted by [`Model::from_str`] (in any case, surrounded by white space).
    pub const CHOICES: &'static [&'static str] = Model::NAMES;
}

impl FromStr for Model {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Model::from_name(&s.trim().to_ascii_lowercase()).ok_or_else(|| {
            Error::param(
                "model",
                format!("'{s}'"),
                format!("choose one of: {}", Model::NAMES.join(", ")),
            )
        })
    }
}

/// Fraction of positions where `pred` equals `truth`.
///
/// Returns `NaN` for empty inputs.
///
/// # Panics
/// If the two slices have different lengths.
pub fn accuracy(pred: &[u32], truth: &[u32]) -> f64 {
    assert_eq!(
        pred.len(),
        truth.len(),
        "accuracy: {} predictions for {} labels",
        pred.len(),
        truth.len()
    );
    if pred.is_empty() {
        return f64::NAN;
    }
    let hits = pred.iter().zip(truth).filter(|(p, t)| p == t).count();
    hits as f64 / pred.len() as f64
}

/// The standard normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959963984540054;

/// The Wilson score interval for an accuracy of `correct` out of `n` test rows at `z` standard
/// normal quantiles (1.96 for 95 %): the range of true accuracies the test count is
/// consistent with. It stays inside [0, 1] and is wide for few rows (26 of 30: 0.70–0.95),
/// which is what a single utility check on a small held-out split can tell. (0, 1) when
/// there are no rows.
pub fn wilson_interval(correct: usize, n: usize, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (correct.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Trains `model` (default hyper-parameters) on the training set and returns its accuracy
/// on the test set.
///
/// Both sets are validated (non-empty, matching lengths, labels `< n_classes`, finite
/// features, same number of columns).
pub fn train_and_score(
    model: Model,
    x_train: ArrayView2<f32>,
    y_train: &[u32],
    x_test: ArrayView2<f32>,
    y_test: &[u32],
    n_classes: usize,
) -> Result<f64> {
    check_xy(x_test, y_test, n_classes).map_err(|e| Error::Data(format!("test set: {e}")))?;
    if x_test.ncols() != x_train.ncols() {
        return Err(Error::Data(format!(
            "the test set has {} feature columns but the training set has {}; encode both the same way",
            x_test.ncols(),
            x_train.ncols()
        )));
    }
    let pred = match model {
        Model::LogReg => {
            LogReg::fit(x_train, y_train, n_classes, &LogRegParams::default())?.predict(x_test)
        }
        Model::Tree => {
            DecisionTree::fit(x_train, y_train, n_classes, &TreeParams::default())?.predict(x_test)
        }
    };
    Ok(accuracy(&pred, y_test))
}

/// Validates a feature matrix and its labels.
pub(crate) fn check_xy(x: ArrayView2<f32>, y: &[u32], n_classes: usize) -> Result<()> {
    if n_classes == 0 {
        return Err(Error::param(
            "n_classes",
            0,
            "there must be at least one class",
        ));
    }
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(Error::Data(format!(
            "cannot train on empty data ({} rows x {} feature columns); provide at least one row and one feature",
            x.nrows(),
            x.ncols()
        )));
    }
    if y.len() != x.nrows() {
        return Err(Error::Data(format!(
            "{} labels for {} feature rows; there must be exactly one label per row",
            y.len(),
            x.nrows()
        )));
    }
    if let Some((i, &l)) = y.iter().enumerate().find(|(_, &l)| l as usize >= n_classes) {
        return Err(Error::Data(format!(
            "row {}: label {l} is out of range for {n_classes} classes (labels must be 0..={})",
            i + 1,
            n_classes - 1
        )));
    }
    for (i, row) in x.rows().into_iter().enumerate() {
        if let Some((j, v)) = row.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::Data(format!(
                "row {}, feature column {}: value {v} is not finite; impute or drop it before training",
                i + 1,
                j + 1
            )));
        }
    }
    Ok(())
}

/// Index of the largest value (first one on ties; `NaN`s are never selected unless all are).
pub(crate) fn argmax(values: impl Iterator<Item = f64>) -> u32 {
    let mut best = 0u32;
    let mut best_v = f64::NEG_INFINITY;
    for (i, v) in values.enumerate() {
        if v > best_v {
            best_v = v;
            best = i as u32;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    /// Against values computed independently (Python, the textbook formula with
    /// z = 1.959963984540054): 26 of 30 → [0.703187, 0.946903]; 30 of 30 → [0.886487, 1];
    /// 0 of 10 → [0, 0.277533]; and the interval holds the observed accuracy and narrows as
    /// the rows grow.
    #[test]
    fn wilson_interval_matches_an_independent_computation() {
        let z = super::Z95;
        for (k, n, lo, hi) in [
            (26, 30, 0.703187, 0.946903),
            (30, 30, 0.886487, 1.0),
            (0, 10, 0.0, 0.277533),
        ] {
            let (a, b) = super::wilson_interval(k, n, z);
            assert!(
                (a - lo).abs() < 1e-6 && (b - hi).abs() < 1e-6,
                "{k}/{n}: ({a}, {b})"
            );
        }
        let mut width = f64::INFINITY;
        for n in [30, 300, 3000] {
            let (a, b) = super::wilson_interval(n * 13 / 15, n, z);
            let p = (n * 13 / 15) as f64 / n as f64;
            assert!(a < p && p < b && b - a < width);
            width = b - a;
        }
        assert_eq!(super::wilson_interval(0, 0, z), (0.0, 1.0));
    }

    use super::*;
    use ndarray::{array, Array2};

    #[test]
    fn model_from_str() {
        assert_eq!("logreg".parse::<Model>().unwrap(), Model::LogReg);
        assert_eq!("Tree".parse::<Model>().unwrap(), Model::Tree);
        let msg = "forest".parse::<Model>().unwrap_err().to_string();
        assert!(
            msg.contains("'forest'") && msg.contains("logreg") && msg.contains("tree"),
            "{msg}"
        );
        assert_eq!(
            Model::Tree.to_string().parse::<Model>().unwrap(),
            Model::Tree
        );
    }

    #[test]
    fn accuracy_counts_hits() {
        assert_eq!(accuracy(&[0, 1, 2, 2], &[0, 1, 1, 2]), 0.75);
        assert!(accuracy(&[], &[]).is_nan());
    }

    #[test]
    fn argmax_first_on_ties() {
        assert_eq!(argmax([1.0, 3.0, 3.0].into_iter()), 1);
        assert_eq!(argmax([f64::NAN, 0.5].into_iter()), 1);
    }

    #[test]
    fn train_and_score_both_models() {
        // Class = whether x0 > 0: both models can learn it.
        let n = 200;
        let x = Array2::from_shape_fn((n, 2), |(i, j)| {
            if j == 0 {
                i as f32 - 100.0
            } else {
                (i % 7) as f32
            }
        });
        let y: Vec<u32> = (0..n).map(|i| u32::from(i >= 100)).collect();
        for m in [Model::LogReg, Model::Tree] {
            let acc = train_and_score(m, x.view(), &y, x.view(), &y, 2).unwrap();
            assert!(acc > 0.97, "{m}: {acc}");
        }
    }

    #[test]
    fn train_and_score_validates_test_set() {
        let x = array![[0.0f32, 1.0], [1.0, 0.0]];
        let y = [0, 1];
        let bad = array![[0.0f32, f32::NAN]];
        let e = train_and_score(Model::Tree, x.view(), &y, bad.view(), &[0], 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("test set") && e.contains("NaN"), "{e}");
        let narrow = array![[0.0f32]];
        let e = train_and_score(Model::LogReg, x.view(), &y, narrow.view(), &[0], 2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1 feature columns") && e.contains("has 2"),
            "{e}"
        );
        let e = train_and_score(Model::LogReg, x.view(), &y, x.view(), &[0, 2], 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("label 2"), "{e}");
    }

    #[test]
    fn check_xy_errors_name_the_value() {
        let x = array![[0.0f32, 1.0], [1.0, f32::INFINITY]];
        let e = check_xy(x.view(), &[0, 1], 2).unwrap_err().to_string();
        assert!(
            e.contains("row 2") && e.contains("column 2") && e.contains("inf"),
            "{e}"
        );
        let e = check_xy(x.view(), &[0], 2).unwrap_err().to_string();
        assert!(e.contains("1 labels for 2"), "{e}");
        let e = check_xy(x.view(), &[0, 5], 2).unwrap_err().to_string();
        assert!(e.contains("label 5"), "{e}");
        let empty = Array2::<f32>::zeros((0, 3));
        let e = check_xy(empty.view(), &[], 2).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = check_xy(x.view(), &[0, 0], 0).unwrap_err().to_string();
        assert!(e.contains("n_classes"), "{e}");
    }
}
