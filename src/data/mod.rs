//! Tabular data: CSV reading (plain or gzip), type inference and schema overrides, and CSV
//! writing ([`CsvOut`]).
//!
//! The entry points are [`read_csv_path`] (native, streams the file: once, unless a column
//! turns out categorical late) and [`read_csv_bytes`] (in-memory, used by the browser build).
//! Both return a column-major [`Table`].

use std::cmp::Ordering;

/// Fast paths for the CSV reader's cell parsing (same results as std).
pub mod fastnum;

mod csv;
mod csv_out;
pub mod decide;
mod schema;

pub(crate) use self::csv::is_missing;
pub use self::csv::{read_csv_bytes, read_csv_path, read_csv_stream, ByteStream, OpenStream};
pub use self::csv_out::{CsvOut, Pieces, SEMICOLON_OUTPUT};
pub use self::schema::{ColumnSpec, Schema};

/// A table handed to the pipeline: borrowed (the caller keeps it, e.g. to synthesize again)
/// or owned (the pipeline may reuse its memory instead of copying it).
impl<'a> From<&'a Table> for std::borrow::Cow<'a, Table> {
    fn from(t: &'a Table) -> Self {
        std::borrow::Cow::Borrowed(t)
    }
}

impl From<Table> for std::borrow::Cow<'_, Table> {
    fn from(t: Table) -> Self {
        std::borrow::Cow::Owned(t)
    }
}

/// Column-major table. `names` and `columns` are aligned and in the input's column order
/// (columns declared `ignore` in the schema are left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names, trimmed, as in the header.
    pub names: Vec<String>,
    /// Column data, aligned with `names`; every column has `n_rows` entries.
    pub columns: Vec<Column>,
    /// Rows kept.
    pub n_rows: usize,
    /// Rows dropped because they had a missing value (with [`MissingPolicy::DropRow`]).
    pub rows_dropped: usize,
    /// Index (into `names`/`columns`) of the label column, if [`CsvOptions::label`] was given.
    pub label_index: Option<usize>,
    /// The detected delimiter (`b','`, `b';'` or `b'\t'`).
    pub delimiter: u8,
}

impl Table {
    /// Index of the column named exactly `name` (case-sensitive), if any.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.columns.len()
    }

    /// The rows at `rows` (indices into this table, in the given order), with the same
    /// columns, levels and label. `rows_dropped` is kept as is.
    pub fn select_rows(&self, rows: &[u32]) -> Table {
        let columns = self
            .columns
            .iter()
            .map(|c| match c {
                Column::Numeric { values, integer } => Column::Numeric {
                    values: rows.iter().map(|&i| values[i as usize]).collect(),
                    integer: *integer,
                },
                Column::Categorical { codes, levels } => Column::Categorical {
                    codes: rows.iter().map(|&i| codes[i as usize]).collect(),
                    levels: levels.clone(),
                },
            })
            .collect();
        Table {
            names: self.names.clone(),
            columns,
            n_rows: rows.len(),
            rows_dropped: self.rows_dropped,
            label_index: self.label_index,
            delimiter: self.delimiter,
        }
    }
}

/// One column of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Finite numbers stored as f32. `integer` is true when every kept value is integral
    /// (or as forced by the schema's `integer` key).
    Numeric {
        /// One value per kept row.
        values: Vec<f32>,
        /// Whether every value is integral.
        integer: bool,
    },
    /// Categorical: `codes[i]` indexes `levels`. Levels are sorted in natural order
    /// (see [`natural_cmp`]), unless the schema lists the categories: then the levels are
    /// the schema's categories in the schema's order, followed by any extra values seen in
    /// the data, sorted naturally.
    Categorical {
        /// One code per kept row.
        codes: Vec<u32>,
        /// Distinct values (trimmed strings).
        levels: Vec<String>,
    },
}

impl Column {
    /// Number of entries (rows).
    pub fn len(&self) -> usize {
        match self {
            Column::Numeric { values, .. } => values.len(),
            Column::Categorical { codes, .. } => codes.len(),
        }
    }

    /// Whether the column has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The missing-value tokens: a trimmed cell equal to one of these, ignoring ASCII case, is a
/// missing value. The empty cell, `NA`, `N/A`, `NaN`, `null`, `None`, `-`, `?`, `.`, and
/// `(missing)` (the name of the missing level, [`MISSING_LEVEL`], so that it cannot collide
/// with a real value). Under [`MissingPolicy::Keep`], a cell of a numeric column that is not a
/// finite number (`abc`, `inf`, `1e999`) is a missing value too.
pub const MISSING_TOKENS: &[&str] = &[
    "",
    "NA",
    "N/A",
    "NaN",
    "null",
    "None",
    "-",
    "?",
    ".",
    MISSING_LEVEL,
];

/// The level a missing cell of a categorical column becomes under [`MissingPolicy::Keep`].
/// Output writes it back as an empty cell.
pub const MISSING_LEVEL: &str = "(missing)";

/// What to do with a row that has a missing value (see [`MISSING_TOKENS`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MissingPolicy {
    /// Drop the whole row and count it in [`Table::rows_dropped`]. The number of rows then
    /// depends on the data: only for callers that declare it (not the synthesis path).
    #[default]
    DropRow,
    /// Fail with an error naming the row and column.
    Error,
    /// Keep every row: a missing (or, in a numeric column, unparsable) cell is stored as NaN in
    /// a numeric column and as the level [`MISSING_LEVEL`] in a categorical one. The row count
    /// is the number of records. Used by the synthesis path, which encodes missingness
    /// ([`crate::preprocess::missing`]).
    Keep,
}

/// How a column that the schema does not type gets its type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TypeInference {
    /// Inferred from every value (numeric when all non-missing cells parse as numbers). The
    /// type then depends on the data and is not protected.
    #[default]
    Data,
    /// Read as raw categorical tokens; the caller decides the type afterwards, under DP
    /// ([`decide::decide_columns`]).
    Deferred,
}

/// Options for [`read_csv_bytes`] and [`read_csv_path`].
#[derive(Debug, Clone, PartialEq)]
pub struct CsvOptions {
    /// Label column name (case-sensitive). Always stored as categorical (trimmed values);
    /// a row whose label is missing is handled like any other missing value.
    pub label: Option<String>,
    /// Optional per-column overrides.
    pub schema: Option<Schema>,
    /// Handling of missing values.
    pub missing: MissingPolicy,
    /// Typing of columns the schema does not type.
    pub types: TypeInference,
    /// Maximum (decompressed) input size in bytes; default 2 GiB.
    pub max_bytes: u64,
    /// Name used in error messages. [`read_csv_path`] replaces the default `"input"` (or an
    /// empty name) by the file name.
    pub source_name: String,
}

/// Default for [`CsvOptions::max_bytes`]: 2 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Default for [`CsvOptions::source_name`].
pub const DEFAULT_SOURCE_NAME: &str = "input";

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            label: None,
            schema: None,
            missing: MissingPolicy::DropRow,
            types: TypeInference::Data,
            max_bytes: DEFAULT_MAX_BYTES,
            source_name: DEFAULT_SOURCE_NAME.to_string(),
        }
    }
}

/// Natural order of category levels: values that parse as finite numbers come first, in
/// numeric order ("2" < "10"); other strings follow in lexicographic (byte) order. Ties
/// between equal numbers written differently ("1" and "1.0") are broken lexicographically,
/// so the order is total and deterministic.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x
            .partial_cmp(&y)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.cmp(b)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}
