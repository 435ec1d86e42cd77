//! Train on one table (synthetic), test on another (real): the `evaluate` command.
//!
//! Both tables are encoded with the training table's feature space (the paper's exact
//! z-scores and the training levels; evaluation is not a release, so nothing here is private).
//! Test levels unseen in training encode as zeros; test classes unseen in training count as
//! errors.

use super::{train_and_score, Model};
use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::preprocess::{fit_feature_space, ColumnCodec, NormalizeMode};
use crate::rng::ReleaseRng;
use ndarray::ArrayView2;
use serde::Serialize;

/// The `evaluate` result.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Test accuracy.
    pub accuracy: f64,
    /// Model name.
    pub model: String,
    /// Training rows.
    pub train_rows: usize,
    /// Test rows.
    pub test_rows: usize,
    /// Feature dimension.
    pub features: usize,
}

/// Labels of `table` as strings.
fn label_strings(table: &Table) -> Result<Vec<&str>> {
    let li = table
        .label_index
        .ok_or_else(|| Error::Data("no label column was chosen; name the label column".into()))?;
    match &table.columns[li] {
        Column::Categorical { codes, levels } => {
            Ok(codes.iter().map(|&c| levels[c as usize].as_str()).collect())
        }
        Column::Numeric { .. } => Err(Error::Data(
            "internal: label column must be categorical".into(),
        )),
    }
}

/// Trains `model` on `train` and reports its accuracy on `test`.
pub fn evaluate_tables(train: &Table, test: &Table, model: Model) -> Result<EvalReport> {
    if train.names != test.names {
        return Err(Error::Data(format!(
            "the test file's columns ({}) differ from the training file's ({}); both must have the same header",
            test.names.join(", "),
            train.names.join(", ")
        )));
    }
    // The seed is irrelevant: `data` mode draws no randomness.
    let (space, _) = fit_feature_space(
        train,
        None,
        NormalizeMode::Data,
        None,
        &mut ReleaseRng::seeded(0),
    )?;
    let x_train = space.encode(train)?;
    // Re-map the test table's categorical codes onto the training levels.
    let mut test_space = space.clone();
    for ((codec, tc), name) in test_space
        .codecs
        .iter_mut()
        .zip(&test.columns)
        .zip(&test.names)
    {
        match (codec, tc) {
            (ColumnCodec::Categorical { levels, slot_of_code, .. }, Column::Categorical { levels: test_levels, .. }) => {
                *slot_of_code = test_levels.iter().map(|l| levels.iter().position(|r| r == l)).collect();
            }
            (ColumnCodec::Numeric { .. }, Column::Numeric { .. }) | (ColumnCodec::Label, _) => {}
            _ => {
                return Err(Error::Data(format!(
                    "column '{name}' is numeric in one file and categorical in the other; give both files the same kind of values"
                )))
            }
        }
    }
    let x_test = test_space.encode(test)?;
    let mut classes: Vec<String> = Vec::new();
    let mut index = |s: &str| -> u32 {
        match classes.iter().position(|c| c == s) {
            Some(i) => i as u32,
            None => {
                classes.push(s.to_string());
                (classes.len() - 1) as u32
            }
        }
    };
    let y_train: Vec<u32> = label_strings(train)?.into_iter().map(&mut index).collect();
    let y_test: Vec<u32> = label_strings(test)?.into_iter().map(&mut index).collect();
    let d = space.dim;
    let xtr = ArrayView2::from_shape((train.n_rows, d), &x_train)
        .map_err(|e| Error::Data(e.to_string()))?;
    let xte = ArrayView2::from_shape((test.n_rows, d), &x_test)
        .map_err(|e| Error::Data(e.to_string()))?;
    let accuracy = train_and_score(model, xtr, &y_train, xte, &y_test, classes.len())?;
    Ok(EvalReport {
        accuracy,
        model: match model {
            Model::LogReg => "logreg".into(),
            Model::Tree => "tree".into(),
        },
        train_rows: train.n_rows,
        test_rows: test.n_rows,
        features: d,
    })
}
