//! Dataset operations: the CSV summary for the label picker, the utility check
//! (train on synthetic, test on real) and the real-against-synthetic histograms.

use super::synth::{class_counts, synthesize_table_csv, SynthParams};
use crate::data::{read_csv_bytes, Column, CsvOptions, MissingPolicy, Table};
use crate::error::{Error, Result};
use crate::eval::{evaluate_tables, EvalReport};
use crate::rng::ReleaseRng;
use serde::Serialize;

/// The `utilityCheck` result: train on synthetic, test on a held-out real split, beside the
/// same model trained on the real training split.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UtilityReport {
    /// Accuracy of the model trained on synthetic data (from the training split only).
    pub synthetic_accuracy: f64,
    /// Its 95 % Wilson interval over the held-out rows ([`crate::eval::wilson_interval`]):
    /// how much a check on this few rows can vary, [low, high].
    pub synthetic_interval: [f64; 2],
    /// Accuracy of the model trained on the real training split.
    pub real_accuracy: f64,
    /// Accuracy of always predicting the most common training class.
    pub majority_accuracy: f64,
    /// Real training rows (the synthesizer saw only these).
    pub train_rows: usize,
    /// Held-out real rows.
    pub test_rows: usize,
    /// Synthetic rows.
    pub synthetic_rows: usize,
    /// Model.
    pub model: String,
    /// ε of the check's own synthesis (it is a separate run on the training split; its
    /// output is used only for this number and is not released).
    pub epsilon: f64,
}

/// Splits `table` (stratified by class, shuffled with `rng`), synthesizes from the training
/// split with `req`, and scores a model trained on the synthetic rows on the held-out split.
pub fn utility_check(
    table: &Table,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<UtilityReport> {
    use rand::seq::SliceRandom;
    let (share, model) = (p.test_share, p.model);
    let li = table
        .label_index
        .ok_or_else(|| Error::param("label", "(none)", "choose the label column"))?;
    let Column::Categorical { codes, levels } = &table.columns[li] else {
        return Err(Error::Internal("the label must be categorical".into()));
    };
    let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); levels.len()];
    for (i, &c) in codes.iter().enumerate() {
        by_class[c as usize].push(i as u32);
    }
    let (mut train_idx, mut test_idx) = (Vec::new(), Vec::new());
    for rows in &mut by_class {
        rows.shuffle(rng);
        let n_test = ((rows.len() as f64) * share).round() as usize;
        let n_test = n_test.min(rows.len().saturating_sub(1));
        test_idx.extend_from_slice(&rows[..n_test]);
        train_idx.extend_from_slice(&rows[n_test..]);
    }
    if test_idx.is_empty() {
        return Err(Error::Data(
            "the data is too small to hold out a test split; the utility check needs more rows"
                .into(),
        ));
    }
    train_idx.sort_unstable();
    test_idx.sort_unstable();
    let train = table.select_rows(&train_idx);
    let test = table.select_rows(&test_idx);
    let (bytes, receipt) = synthesize_table_csv(&train, p, rng, |f| progress(0.8 * f))?;
    let synth = read_csv_bytes(
        &bytes,
        &CsvOptions {
            label: Some(table.names[li].clone()),
            source_name: "synthetic".into(),
            // As the real split is held: a missing cell is kept, not its row dropped.
            missing: MissingPolicy::Keep,
            ..CsvOptions::default()
        },
    )?;
    progress(0.85)?;
    let s: EvalReport = evaluate_tables(&synth, &test, model)?;
    progress(0.95)?;
    let r: EvalReport = evaluate_tables(&train, &test, model)?;
    let train_counts = class_counts(&train)?;
    let majority = train_counts
        .iter()
        .enumerate()
        .max_by_key(|(_, n)| **n)
        .map(|(c, _)| c as u32)
        .unwrap_or(0);
    let Column::Categorical { codes: tcodes, .. } = &test.columns[li] else {
        unreachable!("same table");
    };
    let majority_accuracy =
        tcodes.iter().filter(|&&c| c == majority).count() as f64 / tcodes.len() as f64;
    progress(1.0)?;
    let correct = (s.accuracy * test.n_rows as f64).round() as usize;
    let (lo, hi) = crate::eval::wilson_interval(correct, test.n_rows, crate::eval::Z95);
    Ok(UtilityReport {
        synthetic_accuracy: s.accuracy,
        synthetic_interval: [lo, hi],
        real_accuracy: r.accuracy,
        majority_accuracy,
        train_rows: train.n_rows,
        test_rows: test.n_rows,
        synthetic_rows: synth.n_rows,
        model: s.model,
        epsilon: receipt.epsilon,
    })
}

/// One column's histogram, real against synthetic, on shared bins.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnHistogram {
    /// Column name.
    pub name: String,
    /// `numeric` or `categorical`.
    pub kind: &'static str,
    /// Bin labels (categories, or bin lower edges for numbers).
    pub bins: Vec<String>,
    /// Real counts per bin.
    pub real: Vec<u32>,
    /// Synthetic counts per bin.
    pub synthetic: Vec<u32>,
}

const HIST_BINS: usize = 20;

/// Per-column histograms of `real` and `synthetic` (same header) for the preview. A numeric
/// column's bins span the real and synthetic values together, so a synthetic value outside
/// the real range shows where it lies (in the real range's end bin it would look like a pile
/// at the real minimum or maximum). For the data owner's eyes only: never part of a download.
pub fn histograms(real: &Table, synthetic: &Table) -> Result<Vec<ColumnHistogram>> {
    if real.names != synthetic.names {
        return Err(Error::Internal(
            "the synthetic header differs from the input's".into(),
        ));
    }
    let mut out = Vec::with_capacity(real.n_cols());
    for (j, name) in real.names.iter().enumerate() {
        match (&real.columns[j], &synthetic.columns[j]) {
            (Column::Numeric { values: a, .. }, Column::Numeric { values: b, .. }) => {
                let lo = a.iter().chain(b).copied().fold(f32::INFINITY, f32::min) as f64;
                let hi = a.iter().chain(b).copied().fold(f32::NEG_INFINITY, f32::max) as f64;
                let (lo, hi) = if lo.is_finite() && hi > lo {
                    (lo, hi)
                } else {
                    (lo - 0.5, lo + 0.5)
                };
                let w = (hi - lo) / HIST_BINS as f64;
                let bin = |v: f32| -> usize {
                    let i = ((v as f64 - lo) / w).floor();
                    if i.is_nan() || i < 0.0 {
                        0
                    } else {
                        (i as usize).min(HIST_BINS - 1)
                    }
                };
                let mut r = vec![0u32; HIST_BINS];
                let mut s = vec![0u32; HIST_BINS];
                a.iter().for_each(|&v| r[bin(v)] += 1);
                b.iter().for_each(|&v| s[bin(v)] += 1);
                out.push(ColumnHistogram {
                    name: name.clone(),
                    kind: "numeric",
                    bins: (0..HIST_BINS)
                        .map(|i| format_edge(lo + w * i as f64))
                        .collect(),
                    real: r,
                    synthetic: s,
                });
            }
            (
                Column::Categorical {
                    codes: a,
                    levels: la,
                },
                sb,
            ) => {
                let mut bins = la.clone();
                let mut r = vec![0u32; la.len()];
                a.iter().for_each(|&c| r[c as usize] += 1);
                let mut s = vec![0u32; la.len()];
                let sv: Vec<String> = match sb {
                    Column::Categorical { codes, levels } => {
                        codes.iter().map(|&c| levels[c as usize].clone()).collect()
                    }
                    Column::Numeric { values, .. } => {
                        values.iter().map(|v| v.to_string()).collect()
                    }
                };
                for v in sv {
                    match bins.iter().position(|b| *b == v) {
                        Some(i) => s[i] += 1,
                        None => {
                            bins.push(v);
                            r.push(0);
                            s.push(1);
                        }
                    }
                }
                out.push(ColumnHistogram {
                    name: name.clone(),
                    kind: "categorical",
                    bins,
                    real: r,
                    synthetic: s,
                });
            }
            (Column::Numeric { .. }, Column::Categorical { .. }) => {
                // A numeric input column that decoded to text (e.g. suppressed): show counts only.
                continue;
            }
        }
    }
    Ok(out)
}

fn format_edge(x: f64) -> String {
    if x.abs() >= 1000.0 || x == x.trunc() {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// What the page shows before a run: the header, each column's inferred type, and a guess
/// of the label column. Reads at most `max_rows` rows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CsvSummary {
    /// Columns in order.
    pub columns: Vec<ColumnSummary>,
    /// Rows read for this summary (at most `max_rows`).
    pub rows_read: usize,
    /// Whether the file has more rows than were read.
    pub truncated: bool,
    /// The detected delimiter.
    pub delimiter: String,
    /// A guess of the label column (a column named like a label, else the last categorical
    /// or integer column with few values).
    pub suggested_label: Option<String>,
    /// When every non-label column is a pixel (a square number of columns, integers 0..255):
    /// the side length, so the page can preview rows as images.
    pub image_side: Option<usize>,
}

/// One column of a [`CsvSummary`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnSummary {
    /// Name.
    pub name: String,
    /// `numeric`, `integer` or `categorical`.
    pub kind: &'static str,
    /// Distinct values among the rows read (categorical and integer columns; capped at 1000).
    pub distinct: usize,
}

/// The rows `inspectCsv` reads, from its `maxRows` (a JS number; 2000 when not given): a
/// whole number ≥ 1.
pub fn inspect_rows(max_rows: Option<f64>) -> Result<usize> {
    match max_rows {
        None => Ok(2000),
        // Casts saturate: a count past usize reads every row, as it says.
        Some(m) if super::whole_at_least(m, 1.0) => Ok(m as usize),
        Some(m) => Err(Error::param(
            "max_rows",
            m,
            "give a whole number of rows ≥ 1 to read (default 2000)",
        )),
    }
}

/// Summarizes the first `max_rows` rows of a CSV for the page's label picker.
pub fn inspect_csv(csv: &[u8], max_rows: usize) -> Result<CsvSummary> {
    // Cut after `max_rows` + 1 line breaks (a quoted field may contain one; the summary is
    // only a guess and the full file is read again for the run).
    let mut cut = csv.len();
    let mut seen = 0usize;
    for (i, &b) in csv.iter().enumerate() {
        if b == b'\n' {
            seen += 1;
            if seen > max_rows {
                cut = i + 1;
                break;
            }
        }
    }
    // The caller may pass only the head of a large file: drop a trailing partial line.
    if cut == csv.len() && !csv.ends_with(b"\n") {
        if let Some(last_nl) = csv.iter().rposition(|&b| b == b'\n') {
            if csv[..last_nl].contains(&b'\n') {
                cut = last_nl + 1;
            }
        }
    }
    let truncated = cut < csv.len();
    let table = read_csv_bytes(&csv[..cut], &CsvOptions::default())?;
    let mut columns = Vec::with_capacity(table.n_cols());
    for (name, col) in table.names.iter().zip(&table.columns) {
        let (kind, distinct) = match col {
            Column::Categorical { levels, .. } => ("categorical", levels.len()),
            Column::Numeric { values, integer } => {
                if *integer {
                    let mut d: Vec<i64> = values.iter().map(|&v| v as i64).collect();
                    d.sort_unstable();
                    d.dedup();
                    ("integer", d.len().min(1000))
                } else {
                    ("numeric", 0)
                }
            }
        };
        columns.push(ColumnSummary {
            name: name.clone(),
            kind,
            distinct,
        });
    }
    let named = columns.iter().find(|c| {
        matches!(
            c.name.to_ascii_lowercase().as_str(),
            "label" | "class" | "target" | "y" | "outcome" | "diagnosis" | "income" | "species"
        )
    });
    let suggested_label = named
        .or_else(|| {
            columns
                .iter()
                .rev()
                .find(|c| c.kind != "numeric" && c.distinct >= 2 && c.distinct <= 50)
        })
        .map(|c| c.name.clone());
    let image_side = suggested_label.as_ref().and_then(|label| {
        let others: Vec<usize> = (0..table.n_cols())
            .filter(|&j| table.names[j] != *label)
            .collect();
        let side = (others.len() as f64).sqrt().round() as usize;
        let pixels_ok = side >= 4
            && side * side == others.len()
            && others.iter().all(|&j| match &table.columns[j] {
                Column::Numeric { values, integer } => {
                    *integer && values.iter().all(|&v| (0.0..=255.0).contains(&v))
                }
                Column::Categorical { .. } => false,
            });
        pixels_ok.then_some(side)
    });
    Ok(CsvSummary {
        columns,
        rows_read: table.n_rows,
        truncated,
        delimiter: (table.delimiter as char).to_string(),
        suggested_label,
        image_side,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(values: Vec<f32>) -> Table {
        Table {
            names: vec!["x".into()],
            n_rows: values.len(),
            columns: vec![Column::Numeric {
                values,
                integer: false,
            }],
            rows_dropped: 0,
            label_index: None,
            delimiter: b',',
        }
    }

    /// The bins span both tables: synthetic values below and above the real range get bins of
    /// their own, where the real counts are 0, instead of swelling the real range's end bins.
    #[test]
    fn numeric_bins_span_the_real_and_synthetic_values() {
        let real = table(vec![4.3, 5.0, 6.0, 7.9]);
        let synthetic = table(vec![4.0, 4.05, 5.0, 8.0]);
        let h = histograms(&real, &synthetic).unwrap();
        let h = &h[0];
        assert_eq!(h.kind, "numeric");
        // [4, 8] in 20 bins of 0.2.
        assert_eq!(h.bins[0], "4");
        assert_eq!(h.bins[1], "4.200");
        assert_eq!((h.real[0], h.synthetic[0]), (0, 2), "{h:?}");
        assert_eq!((h.real[1], h.synthetic[1]), (1, 0), "{h:?}");
        assert_eq!((h.real[19], h.synthetic[19]), (1, 1), "{h:?}");
        assert_eq!(h.real.iter().sum::<u32>(), 4);
        assert_eq!(h.synthetic.iter().sum::<u32>(), 4);
    }
}
