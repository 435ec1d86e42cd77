//! One error type for the whole crate. Every message names the offending value and the fix,
//! because it is shown verbatim to a user (CLI stderr, a JS `Error` in the browser).

/// Crate-wide result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, with a message fit for an end user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A user-supplied parameter is out of range.
    #[error("invalid {name} = {value}: {fix}")]
    Parameter {
        /// Parameter name as the user typed it (e.g. `--epsilon`).
        name: String,
        /// The offending value, formatted.
        value: String,
        /// What to do instead.
        fix: String,
    },
    /// A problem at a specific place of an input table (1-based data row, header excluded).
    #[error("{source_name}: row {row}, column '{column}': {message}")]
    Cell {
        /// File name or "input".
        source_name: String,
        /// 1-based data row (the header is row 0).
        row: usize,
        /// Column name.
        column: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A problem with the input data as a whole (empty file, missing column, tiny class...).
    #[error("{0}")]
    Data(String),
    /// The accountant cannot give a finite, trustworthy answer.
    #[error("accountant: {0}")]
    Accountant(String),
    /// File system errors, with the path.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Shorthand for [`Error::Parameter`].
    pub fn param(
        name: impl Into<String>,
        value: impl std::fmt::Display,
        fix: impl Into<String>,
    ) -> Self {
        Error::Parameter {
            name: name.into(),
            value: value.to_string(),
            fix: fix.into(),
        }
    }
    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
