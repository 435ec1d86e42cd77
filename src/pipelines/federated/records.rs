//! A party's records as the mechanism reads them: every record with a label is used, and its
//! missing cells are encoded, never a reason to drop it.
//!
//! * A numeric cell that is missing (or, in a column the schema types numeric, not a number)
//!   takes the column's public fill value ([`crate::preprocess::missing::fill_value`]: the
//!   midpoint of the schema's `min`/`max`, else the one given, else 0).
//! * A categorical cell that is missing is the level [`MISSING_LEVEL`], released (or not) like
//!   any other level, and written back empty.
//! * A record without a label belongs to no class and is dropped. Under the federated
//!   adjacency (replace one record's features, keeping its label and its party) the labels are
//!   public, so which records are dropped, and how many, depends on public values only.
//!
//! The fill is a fixed map of each record, so neighbouring tables stay neighbouring tables
//! with the same number of records.
//!
//! Before that, [`prepare`] gives every column the schema leaves untyped its type: under DP
//! by default ([`crate::data::decide::decide_columns`], the mechanism synthesis uses, at the
//! same share of ε, releasing the types alone: no column here gets a missing indicator), so
//! that one unparsable cell cannot turn a numeric column categorical in the output. Its cost
//! is composed into the party's accounting with the normalization's (see
//! [`super::space::normalize`]).

use std::borrow::Cow;

use super::options::FedOptions;
use crate::data::decide::{decide_columns, decide_from_data, DecisionReport, Release};
use crate::data::{Column, Schema, Table, MISSING_LEVEL};
use crate::error::Result;
use crate::pipelines::synth::{types_z_at, ColumnTypes};
use crate::preprocess::missing::encode_missing;
use crate::rng::ReleaseRng;

/// A run's records as the mechanism reads them, and how their column types were decided.
pub(super) struct Records {
    /// The records ([`federated_records`] of the retyped table).
    pub(super) table: Table,
    /// The column-type decisions (the receipt's `column_types`).
    pub(super) decisions: DecisionReport,
}

impl Records {
    /// Noise multiplier of the column-type decision (None: nothing was decided under DP).
    pub(super) fn types_z(&self) -> Option<f64> {
        self.decisions.noise_multiplier
    }

    /// Whether some column's type came from the data (NOT protected; declared).
    pub(super) fn types_from_data(&self) -> bool {
        self.decisions
            .columns
            .iter()
            .any(|c| c.type_source == "data")
    }
}

/// Decides the types of the columns `schema` leaves untyped (`opts.column_types`: under DP
/// with the noise multiplier `synth` uses, a share of ε sized for the table's record count, or
/// from the data) on `table` read with [`crate::data::MissingPolicy::Keep`], then encodes its
/// records ([`federated_records`]). The federated mechanism gives numeric columns no missing
/// indicator (a missing cell takes the public fill), so the decision releases the types alone
/// ([`Release::TypesOnly`]: sensitivity 2√m_u instead of √(5·m_u), the same z buying noise
/// √(4/5) as large); types taken from the data have their indicators cleared.
pub(super) fn prepare<'a>(
    table: impl Into<Cow<'a, Table>>,
    schema: Option<&Schema>,
    opts: &FedOptions,
    rng: &mut ReleaseRng,
) -> Result<Records> {
    let (decided, mut decisions) = match opts.column_types {
        ColumnTypes::Dp => {
            let table = table.into();
            let z = types_z_at(opts.epsilon, opts.delta, &table, schema, Release::TypesOnly);
            decide_columns(table, schema, Release::TypesOnly, z, rng)?
        }
        ColumnTypes::Data => decide_from_data(table, schema),
    };
    for c in &mut decisions.columns {
        c.missing_indicator = false;
        if c.indicator_source != "none" {
            c.indicator_source = "unused: the federated mechanism fills a missing numeric cell with the public fill value";
        }
    }
    Ok(Records {
        table: federated_records(decided, schema)?,
        decisions,
    })
}

/// What the receipt says about missing cells (public information: the rule, not the data).
pub(super) const MISSING_STATEMENT: &str = "missing cells: no record is dropped for a missing feature cell. A numeric cell that is missing (or, in a column the schema types numeric, not a number) takes a public fill value (the midpoint of the schema's min/max, else the one given, else 0); a missing categorical cell is the level '(missing)', written back empty. Only records without a label are dropped (rows_dropped): the labels are public under this adjacency";

/// The records of `table` (read with [`crate::data::MissingPolicy::Keep`]) as the federated
/// mechanism uses them (see the module docs); `rows_dropped` counts the records without a
/// label.
pub fn federated_records(table: Table, schema: Option<&Schema>) -> Result<Table> {
    let table = without_unlabelled(table);
    let n = table.n_cols();
    let (encoded, _, _, _) = encode_missing(table, &vec![false; n], schema)?;
    Ok(encoded)
}

/// `table` without the records whose label is the missing level (that level removed).
fn without_unlabelled(table: Table) -> Table {
    let Some(li) = table.label_index else {
        return table;
    };
    let Column::Categorical { codes, levels } = &table.columns[li] else {
        return table;
    };
    let Some(m) = levels.iter().position(|l| l == MISSING_LEVEL) else {
        return table;
    };
    let m = m as u32;
    let keep: Vec<u32> = (0..table.n_rows as u32)
        .filter(|&r| codes[r as usize] != m)
        .collect();
    let dropped = table.n_rows - keep.len();
    let mut out = table.select_rows(&keep);
    out.rows_dropped += dropped;
    if let Column::Categorical { codes, levels } = &mut out.columns[li] {
        levels.remove(m as usize);
        for c in codes.iter_mut().filter(|c| **c > m) {
            *c -= 1;
        }
    }
    out
}

/// Writes a decoded categorical cell that is the missing level back empty.
pub(super) fn blank_missing(cells: &mut [String]) {
    for c in cells.iter_mut().filter(|c| *c == MISSING_LEVEL) {
        c.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_csv_bytes, CsvOptions, MissingPolicy};

    fn read(text: &str) -> Table {
        read_csv_bytes(
            text.as_bytes(),
            &CsvOptions {
                label: Some("y".into()),
                missing: MissingPolicy::Keep,
                ..CsvOptions::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn missing_cells_are_filled_and_unlabelled_records_dropped() {
        let t = federated_records(read("a,b,y\n1,u,p\n,v,q\n3,,p\n4,u,\n5,v,q\n"), None).unwrap();
        assert_eq!((t.n_rows, t.rows_dropped), (4, 1));
        match &t.columns[0] {
            Column::Numeric { values, .. } => assert_eq!(values, &[1.0, 0.0, 3.0, 5.0]),
            c => panic!("{c:?}"),
        }
        match &t.columns[1] {
            Column::Categorical { codes, levels } => {
                let cells: Vec<&str> = codes.iter().map(|&c| levels[c as usize].as_str()).collect();
                assert_eq!(cells, ["u", "v", MISSING_LEVEL, "v"]);
            }
            c => panic!("{c:?}"),
        }
        match &t.columns[2] {
            Column::Categorical { codes, levels } => {
                assert_eq!(levels, &["p", "q"]);
                assert_eq!(codes, &[0, 1, 0, 1]);
            }
            c => panic!("{c:?}"),
        }
        let mut cells = vec!["x".to_string(), MISSING_LEVEL.to_string()];
        blank_missing(&mut cells);
        assert_eq!(cells, ["x", ""]);
    }
}
