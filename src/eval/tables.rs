//! Train on one table (synthetic), test on another (real): the `evaluate` command.
//!
//! Both tables are encoded with the training table's feature space (the paper's exact
//! z-scores and the training levels; evaluation is not a release, so nothing here is private).
//! Test levels unseen in training encode as zeros; test classes unseen in training count as
//! errors, and the report names them ([`EvalReport::unseen_labels`]); when no test row has a
//! training class, the evaluation fails instead of reporting an accuracy of 0.
//!
//! Missing numeric cells (NaN, as [`crate::data::MissingPolicy::Keep`] reads an empty cell)
//! take the training column's mean, and every numeric column with a missing cell in either
//! table gets a 0/1 indicator feature beside it, so no row is dropped.

use super::{train_and_score, Model};
use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::preprocess::missing::encode_missing_with;
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
    /// Test rows whose label is not a label of the training table (each counts as an error).
    pub test_rows_unseen_label: usize,
    /// Those labels, in order of first appearance in the test table.
    pub unseen_labels: Vec<String>,
}

/// Numeric feature columns (not the label) with a missing cell (NaN) in `train` or `test`.
fn columns_with_missing(train: &Table, test: &Table) -> Vec<usize> {
    let has_nan = |t: &Table, j: usize| match &t.columns[j] {
        Column::Numeric { values, .. } => values.iter().any(|v| v.is_nan()),
        Column::Categorical { .. } => false,
    };
    (0..train.n_cols())
        .filter(|&j| Some(j) != train.label_index && (has_nan(train, j) || has_nan(test, j)))
        .collect()
}

/// Copies of `train` and `test` in which each column of `cols` has its missing cells set to
/// the training column's mean (0 when the training column has no value) and a 0/1 indicator
/// column (1 where the cell was missing) right after it, named as the synthesis names one
/// ([`encode_missing_with`]).
fn fill_missing(train: &Table, test: &Table, cols: &[usize]) -> Result<(Table, Table)> {
    let mut means = vec![0.0f64; train.n_cols()];
    for &j in cols {
        if let Column::Numeric { values, .. } = &train.columns[j] {
            let (sum, n) = values
                .iter()
                .filter(|v| !v.is_nan())
                .fold((0.0f64, 0usize), |(s, n), &v| (s + f64::from(v), n + 1));
            if n > 0 {
                means[j] = sum / n as f64;
            }
        }
    }
    let mut flags = vec![false; train.n_cols()];
    cols.iter().for_each(|&j| flags[j] = true);
    let encode =
        |t: &Table| encode_missing_with(t.clone(), &flags, None, |j, _| means[j]).map(|(t, ..)| t);
    Ok((encode(train)?, encode(test)?))
}

/// The error for a test table none of whose labels the training table has. When every test
/// label is a training label plus a trailing '.' (as in UCI Adult's `adult.test`), it says so.
fn no_common_label(train_classes: &[String], unseen: &[String]) -> Error {
    let list = |v: &[String]| {
        let mut s = v
            .iter()
            .take(8)
            .map(|l| format!("'{l}'"))
            .collect::<Vec<_>>()
            .join(", ");
        if v.len() > 8 {
            s.push_str(&format!(" and {} more", v.len() - 8));
        }
        s
    };
    let dots = unseen.iter().all(|l| {
        l.strip_suffix('.')
            .is_some_and(|b| train_classes.iter().any(|c| c == b))
    });
    let fix = if dots {
        "the test labels end in '.' where the training labels do not (as in UCI Adult's adult.test): remove the trailing '.' from the test file's labels".to_string()
    } else {
        "the label column must hold the same values in both files".to_string()
    };
    Error::Data(format!(
        "no test row has a label of the training file, so every prediction would be wrong: the test labels are {}, the training labels {}; {fix}",
        list(unseen),
        list(train_classes)
    ))
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
    let with_missing = columns_with_missing(train, test);
    let filled;
    let (train, test) = if with_missing.is_empty() {
        (train, test)
    } else {
        filled = fill_missing(train, test, &with_missing)?;
        (&filled.0, &filled.1)
    };
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
    let n_train_classes = y_train.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let test_rows_unseen_label = y_test
        .iter()
        .filter(|&&c| c as usize >= n_train_classes)
        .count();
    let unseen_labels = classes[n_train_classes..].to_vec();
    if test.n_rows > 0 && test_rows_unseen_label == test.n_rows {
        return Err(no_common_label(&classes[..n_train_classes], &unseen_labels));
    }
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
        test_rows_unseen_label,
        unseen_labels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_csv_bytes, CsvOptions, MissingPolicy};

    fn table(csv: &str) -> Table {
        read_csv_bytes(
            csv.as_bytes(),
            &CsvOptions {
                label: Some("y".into()),
                missing: MissingPolicy::Keep,
                ..CsvOptions::default()
            },
        )
        .unwrap()
    }

    /// `n` rows `x,y`: y = a when x < 0, b otherwise (x = −2, −1, 1, 2 in turn).
    fn separable(n: usize, a: &str, b: &str) -> String {
        let mut s = String::from("x,y\n");
        for i in 0..n {
            let x = [-2, -1, 1, 2][i % 4];
            s.push_str(&format!("{x},{}\n", if x < 0 { a } else { b }));
        }
        s
    }

    #[test]
    fn test_labels_the_training_file_lacks_fail_or_are_named() {
        let train = table(&separable(40, "<=50K", ">50K"));
        let test = table(&separable(20, "<=50K.", ">50K."));
        let e = evaluate_tables(&train, &test, Model::LogReg)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'<=50K.', '>50K.'")
                && e.contains("'<=50K', '>50K'")
                && e.contains("remove the trailing '.'"),
            "{e}"
        );
        let other = table(&separable(20, "no", "yes"));
        let e = evaluate_tables(&train, &other, Model::Tree)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'no', 'yes'") && e.contains("must hold the same values"),
            "{e}"
        );
        // One class of two unseen: half the rows count as errors, and the report says why.
        let half = table(&separable(20, "<=50K", "other"));
        let r = evaluate_tables(&train, &half, Model::LogReg).unwrap();
        assert_eq!((r.test_rows_unseen_label, r.test_rows), (10, 20));
        assert_eq!(r.unseen_labels, ["other"]);
        assert!((r.accuracy - 0.5).abs() < 1e-12, "{}", r.accuracy);
        let same = evaluate_tables(&train, &train, Model::LogReg).unwrap();
        assert_eq!(same.test_rows_unseen_label, 0);
        assert!(same.unseen_labels.is_empty());
        assert_eq!(same.accuracy, 1.0);
    }

    #[test]
    fn missing_numbers_keep_their_rows_and_their_signal() {
        // The class is whether x is missing; z is noise. Every row is kept, and the
        // indicator makes the class learnable.
        let mut csv = String::from("x,z,y\n");
        for i in 0..60 {
            let (x, y) = if i % 3 == 0 {
                (String::new(), "gone")
            } else {
                (format!("{}", i % 5), "here")
            };
            csv.push_str(&format!("{x},{},{y}\n", i % 7));
        }
        let t = table(&csv);
        assert_eq!(t.n_rows, 60);
        for model in [Model::LogReg, Model::Tree] {
            let r = evaluate_tables(&t, &t, model).unwrap();
            assert_eq!((r.train_rows, r.test_rows), (60, 60));
            assert_eq!(r.features, 3, "x, its indicator and z");
            assert_eq!(r.accuracy, 1.0, "{model}");
        }
        // Missing cells only in the test table still get an indicator (all 0 in training).
        let train = table(&separable(40, "a", "b"));
        let test = table("x,y\n,a\n-1,a\n2,b\n");
        let r = evaluate_tables(&train, &test, Model::LogReg).unwrap();
        assert_eq!((r.test_rows, r.features), (3, 2));
        assert!(r.accuracy >= 2.0 / 3.0, "{}", r.accuracy);
    }
}
