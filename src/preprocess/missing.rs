//! Missing values are encoded, never dropped.
//!
//! Dropping a record with a missing cell makes the number of records, the class sizes, the
//! pools and everything calibrated from them depend on one cell of one record. Instead every
//! record goes through the mechanism and missingness is part of the record:
//!
//! * **numeric column** (cells stored as NaN by [`crate::data::MissingPolicy::Keep`]): the cell
//!   takes a public fill value — the schema's `fill`-free default: the midpoint of the schema's
//!   `min`/`max` when both are given, else the one given, else 0 — and, when the column was
//!   given a missing indicator (decided under DP, [`crate::data::decide`]), a column
//!   `"<name> (missing)"` holding 1 for a missing cell and 0 otherwise is inserted right after
//!   it. The indicator is a feature like any other: its public bounds [0, 1] and integrality
//!   are added to the schema handed to normalization, so nothing about it is learned from the
//!   data, and it is clipped, mixed and noised with the rest of the row.
//! * **categorical column and label**: a missing cell is the level
//!   [`crate::data::MISSING_LEVEL`]; it is released (or not) like any other
//!   level (DP threshold or schema categories, where a schema may list `"(missing)"`).
//!
//! On output ([`MissingCodec::restore`]) indicator columns are removed; a numeric cell whose
//! decoded indicator is ≥ 0.5 is written empty, and the missing level is written empty.
//!
//! Privacy: the encoding is a fixed, record-by-record map whose parameters (which columns get
//! indicators, fill values, names) are public or DP-decided, so a neighbouring dataset maps to
//! a neighbouring encoded dataset (same adjacency, same number of records), and the
//! restoration is post-processing.

use serde::Serialize;

use crate::data::{Column, ColumnSpec, Schema, Table, MISSING_LEVEL};
use crate::error::{Error, Result};

/// Suffix of an indicator column's name.
pub const INDICATOR_SUFFIX: &str = " (missing)";

/// One output column: where its cell comes from in the encoded row.
#[derive(Debug, Clone, PartialEq)]
struct Slot {
    /// Index of the value cell in the encoded row.
    value: usize,
    /// Index of the indicator cell, if the column has one.
    indicator: Option<usize>,
}

/// The map back from encoded rows to the input's columns.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingCodec {
    names: Vec<String>,
    slots: Vec<Slot>,
    /// No indicator columns: encoded cell j is output cell j.
    identity: bool,
    /// What a missing cell is written as (default: empty).
    pub token: String,
}

/// What the receipt says about the missing-value encoding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissingReport {
    /// A sentence for people.
    pub statement: String,
    /// Indicator columns added (names in the encoded table).
    pub indicator_columns: Vec<String>,
    /// Public fill value of each numeric column, in column order: (name, fill).
    pub fill_values: Vec<(String, f64)>,
}

/// The public fill value of numeric column `name`.
pub fn fill_value(name: &str, schema: Option<&Schema>) -> f64 {
    match schema.and_then(|s| s.columns.get(name)) {
        Some(ColumnSpec::Numeric {
            min: Some(a),
            max: Some(b),
            ..
        }) => a + (b - a) / 2.0,
        Some(ColumnSpec::Numeric { min: Some(a), .. }) => *a,
        Some(ColumnSpec::Numeric { max: Some(b), .. }) => *b,
        _ => 0.0,
    }
}

fn unique_name(base: &str, taken: &[String]) -> String {
    let mut name = format!("{base}{INDICATOR_SUFFIX}");
    while taken.iter().any(|t| t == &name) {
        name.push('_');
    }
    name
}

/// A numeric column with its missing cells (NaN) set to `fill` (integer while the fill is),
/// and, when `indicator`, the indicator's values (1 where a cell was missing).
fn fill_numeric(
    mut values: Vec<f32>,
    integer: bool,
    indicator: bool,
    fill: f32,
) -> (Column, Option<Vec<f32>>) {
    let ind = indicator.then(|| {
        values
            .iter()
            .map(|v| if v.is_nan() { 1.0 } else { 0.0 })
            .collect()
    });
    values
        .iter_mut()
        .filter(|v| v.is_nan())
        .for_each(|v| *v = fill);
    let column = Column::Numeric {
        values,
        integer: integer && fill.fract() == 0.0,
    };
    (column, ind)
}

/// Encodes missingness in `table`: fills numeric NaNs with [`fill_value`] and inserts an
/// indicator column after each numeric column with `indicators[j]`. Returns the encoded table,
/// the schema to hand to normalization (the input schema plus the indicators' public bounds),
/// the codec for the output and the report. The table is consumed and its columns are
/// filled in place (no second copy of the data).
pub fn encode_missing(
    table: Table,
    indicators: &[bool],
    schema: Option<&Schema>,
) -> Result<(Table, Option<Schema>, MissingCodec, MissingReport)> {
    encode_missing_with(table, indicators, schema, |_, name| {
        fill_value(name, schema)
    })
}

/// [`encode_missing`] with numeric column `j` (named `name`) filled with `fill(j, name)`
/// instead of its public fill value: for a caller whose fills need not be public (the
/// evaluation of `crate::eval`, which is not a release).
pub fn encode_missing_with(
    table: Table,
    indicators: &[bool],
    schema: Option<&Schema>,
    fill: impl Fn(usize, &str) -> f64,
) -> Result<(Table, Option<Schema>, MissingCodec, MissingReport)> {
    if indicators.len() != table.n_cols() {
        return Err(Error::Data(
            "internal: one indicator flag per column is needed".into(),
        ));
    }
    let mut names = Vec::with_capacity(table.n_cols());
    let mut columns = Vec::with_capacity(table.n_cols());
    let mut slots = Vec::with_capacity(table.n_cols());
    let mut label_index = None;
    let mut added = Vec::new();
    let mut fills = Vec::new();
    let mut eff = schema.cloned();
    let Table {
        names: in_names,
        columns: in_columns,
        n_rows,
        rows_dropped,
        label_index: in_label,
        delimiter,
    } = table;
    for (j, (name, col)) in in_names.iter().zip(in_columns).enumerate() {
        if Some(j) == in_label {
            label_index = Some(names.len());
        }
        let value = names.len();
        names.push(name.clone());
        match col {
            Column::Numeric { values, integer } if Some(j) != in_label => {
                let fill = fill(j, name) as f32;
                let (filled, ind) = fill_numeric(values, integer, indicators[j], fill);
                fills.push((name.clone(), f64::from(fill)));
                columns.push(filled);
                let indicator = ind.map(|iv| {
                    let iname = unique_name(name, &in_names);
                    // Public bounds: an indicator is 0 or 1 whatever the data.
                    eff.get_or_insert_with(Schema::default).columns.insert(
                        iname.clone(),
                        ColumnSpec::Numeric {
                            integer: Some(true),
                            min: Some(0.0),
                            max: Some(1.0),
                        },
                    );
                    added.push(iname.clone());
                    names.push(iname);
                    columns.push(Column::Numeric {
                        values: iv,
                        integer: true,
                    });
                    names.len() - 1
                });
                slots.push(Slot { value, indicator });
            }
            col => {
                columns.push(col);
                slots.push(Slot {
                    value,
                    indicator: None,
                });
            }
        }
    }
    let statement = format!(
        "Missing values are encoded, never dropped: every record is used. Numeric cells that are missing or not a number take a public fill value{}; categorical and label cells that are missing are the level '{MISSING_LEVEL}'. Missing cells are written back empty.",
        if added.is_empty() {
            String::new()
        } else {
            format!(" and set the indicator columns {}", added.join(", "))
        }
    );
    Ok((
        Table {
            names: names.clone(),
            columns,
            n_rows,
            rows_dropped,
            label_index,
            delimiter,
        },
        eff,
        MissingCodec {
            names: in_names,
            identity: added.is_empty(),
            slots,
            token: String::new(),
        },
        MissingReport {
            statement,
            indicator_columns: added,
            fill_values: fills,
        },
    ))
}

impl MissingCodec {
    /// The output column names (the input's).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// [`MissingCodec::restore`], without the copy where it would change nothing: when the
    /// encoding added no column and no cell is the missing level, the row is `cells` itself.
    pub fn restored<'c>(&self, cells: &'c [String], out: &'c mut Vec<String>) -> &'c [String] {
        if self.identity
            && self.slots.len() == cells.len()
            && !cells.iter().any(|c| c == MISSING_LEVEL)
        {
            return cells;
        }
        self.restore(cells, out);
        out
    }

    /// Maps one decoded row of the encoded table back to the input's columns.
    pub fn restore(&self, cells: &[String], out: &mut Vec<String>) {
        out.resize_with(self.slots.len(), String::new);
        for (slot, cell) in self.slots.iter().zip(out.iter_mut()) {
            cell.clear();
            let v = cells.get(slot.value).map_or("", String::as_str);
            let missing_ind = slot.indicator.is_some_and(|i| {
                cells
                    .get(i)
                    .and_then(|s| s.parse::<f64>().ok())
                    .is_some_and(|x| x >= 0.5)
            });
            if missing_ind || v == MISSING_LEVEL {
                cell.push_str(&self.token);
            } else {
                cell.push_str(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            names: vec!["x".into(), "c".into(), "y".into()],
            columns: vec![
                Column::Numeric {
                    values: vec![1.0, f32::NAN, 3.0],
                    integer: true,
                },
                Column::Categorical {
                    codes: vec![0, 1, 0],
                    levels: vec!["a".into(), MISSING_LEVEL.into()],
                },
                Column::Categorical {
                    codes: vec![0, 1, 1],
                    levels: vec!["p".into(), "q".into()],
                },
            ],
            n_rows: 3,
            rows_dropped: 0,
            label_index: Some(2),
            delimiter: b',',
        }
    }

    #[test]
    fn numeric_fill_and_indicator_and_restore() {
        let s =
            Schema::from_json(r#"{"columns": {"x": {"type": "numeric", "min": 0, "max": 10}}}"#)
                .unwrap();
        let (t, eff, codec, rep) =
            encode_missing(table(), &[true, false, false], Some(&s)).unwrap();
        assert_eq!(t.names, ["x", "x (missing)", "c", "y"]);
        assert_eq!(t.n_rows, 3);
        assert_eq!(t.label_index, Some(3));
        assert_eq!(
            t.columns[0],
            Column::Numeric {
                values: vec![1.0, 5.0, 3.0],
                integer: true
            }
        );
        assert_eq!(
            t.columns[1],
            Column::Numeric {
                values: vec![0.0, 1.0, 0.0],
                integer: true
            }
        );
        assert!(matches!(
            eff.unwrap().columns.get("x (missing)"),
            Some(ColumnSpec::Numeric { min: Some(m), max: Some(n), integer: Some(true) }) if *m == 0.0 && *n == 1.0
        ));
        assert_eq!(rep.indicator_columns, ["x (missing)"]);
        let mut out = Vec::new();
        let row: Vec<String> = ["4", "1", MISSING_LEVEL, MISSING_LEVEL]
            .iter()
            .map(|s| s.to_string())
            .collect();
        codec.restore(&row, &mut out);
        assert_eq!(out, ["", "", ""]);
        let row: Vec<String> = ["4", "0", "a", "p"].iter().map(|s| s.to_string()).collect();
        codec.restore(&row, &mut out);
        assert_eq!(out, ["4", "a", "p"]);
        assert_eq!(codec.names(), ["x", "c", "y"]);
    }

    #[test]
    fn restored_is_restore_and_copies_only_when_it_must() {
        let cells = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        for indicators in [[true, false, false], [false, false, false]] {
            let (t, _, codec, _) = encode_missing(table(), &indicators, None).unwrap();
            let rows = if t.n_cols() == 4 {
                vec![
                    cells(&["4", "1", MISSING_LEVEL, "q"]),
                    cells(&["4", "0", "a", "p"]),
                ]
            } else {
                vec![cells(&["4", MISSING_LEVEL, "q"]), cells(&["4", "a", "p"])]
            };
            for row in rows {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                codec.restore(&row, &mut a);
                let got = codec.restored(&row, &mut b).to_vec();
                assert_eq!(got, a, "{indicators:?} {row:?}");
            }
        }
        // No indicator and no missing cell: the row itself, not a copy.
        let (_, _, codec, _) = encode_missing(table(), &[false, false, false], None).unwrap();
        let row = cells(&["4", "a", "p"]);
        let mut spare = Vec::new();
        assert!(std::ptr::eq(codec.restored(&row, &mut spare), &row[..]));
        assert!(spare.is_empty());
    }

    #[test]
    fn without_indicator_the_fill_is_zero_and_no_column_is_added() {
        let (t, eff, _, rep) = encode_missing(table(), &[false, false, false], None).unwrap();
        assert_eq!(t.names, ["x", "c", "y"]);
        assert!(eff.is_none());
        assert_eq!(rep.fill_values, [("x".to_string(), 0.0)]);
        assert!(
            matches!(&t.columns[0], Column::Numeric { values, .. } if values == &[1.0, 0.0, 3.0])
        );
    }
}
