//! Schema JSON: optional per-column type overrides and public bounds.
//!
//! Format:
//!
//! ```json
//! {"columns": {
//!     "age": {"type": "numeric", "integer": true, "min": 0, "max": 120},
//!     "sex": {"type": "categorical", "categories": ["F", "M"]},
//!     "id":  {"type": "ignore"}
//! }}
//! ```
//!
//! Columns not named in the schema have their type inferred. Names are checked against the
//! CSV header when the file is read (see [`crate::data::read_csv_bytes`]): a schema naming a
//! column the header lacks is an error.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Per-column overrides, keyed by the exact (case-sensitive, trimmed) header name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schema {
    /// Column name -> specification.
    pub columns: BTreeMap<String, ColumnSpec>,
}

/// What a schema says about one column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum ColumnSpec {
    /// A numeric column. Every kept value must parse as a finite number.
    Numeric {
        /// `Some(true)`: every value must be integral (non-integral values are an error).
        /// `Some(false)`: stored as non-integer even if all values happen to be integral.
        /// `None`: inferred from the data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        integer: Option<bool>,
        /// Public lower bound, used by normalization (not enforced while reading).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        /// Public upper bound, used by normalization (not enforced while reading).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
    },
    /// A categorical column (values are kept as trimmed strings).
    Categorical {
        /// The public list of categories. When given, the column's levels are exactly these,
        /// in this order, followed by any extra values seen in the data (sorted naturally).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        categories: Option<Vec<String>>,
    },
    /// The column is dropped from the table.
    Ignore,
}

impl Schema {
    /// Parses and validates a schema JSON document.
    ///
    /// Errors (as [`Error::Data`]) on invalid JSON, an unknown `type`, unknown keys,
    /// `min > max`, and duplicate, empty or untrimmed categories.
    pub fn from_json(text: &str) -> Result<Schema> {
        let schema: Schema = serde_json::from_str(text).map_err(|e| {
            Error::Data(format!(
                "schema: {e}; expected {{\"columns\": {{\"name\": {{\"type\": \"numeric\" | \"categorical\" | \"ignore\", ...}}}}}}"
            ))
        })?;
        schema.validate()?;
        Ok(schema)
    }

    /// Checks the schema against a table's header (`source` names the file in messages):
    /// every column it names is in the header, and the label column is not declared
    /// numeric or "ignore".
    pub fn check_header(&self, source: &str, names: &[String], label: Option<&str>) -> Result<()> {
        let unknown: Vec<String> = self
            .columns
            .keys()
            .filter(|k| !names.contains(k))
            .map(|k| format!("'{k}'"))
            .collect();
        if !unknown.is_empty() {
            return Err(Error::Data(format!(
                "{source}: the schema names columns that are not in the header: {}; the header has: {} (names are case-sensitive)",
                unknown.join(", "),
                crate::data::csv::list_names(names)
            )));
        }
        let Some(label) = label else { return Ok(()) };
        match self.columns.get(label) {
            Some(ColumnSpec::Ignore) => Err(Error::Data(format!(
                "schema: the label column '{label}' is declared \"ignore\"; remove it from the schema or choose another label"
            ))),
            Some(ColumnSpec::Numeric { .. }) => Err(Error::Data(format!(
                "schema: the label column '{label}' is declared numeric, but labels are categorical; declare it categorical or remove it from the schema"
            ))),
            _ => Ok(()),
        }
    }

    /// Checks the internal consistency of the schema (bounds and categories).
    pub fn validate(&self) -> Result<()> {
        for (name, spec) in &self.columns {
            match spec {
                ColumnSpec::Numeric { min, max, .. } => {
                    for (key, v) in [("min", min), ("max", max)] {
                        if let Some(v) = v {
                            if !v.is_finite() {
                                return Err(Error::Data(format!(
                                    "schema: column '{name}': {key} = {v} is not a finite number; give a finite bound or omit it"
                                )));
                            }
                            // Values are 32-bit floats (the reader refuses cells beyond this
                            // range too): a wider bound cannot be met by any value, and its
                            // arithmetic overflowed (±1e300 wrote `inf`, ±1e308 panicked).
                            if v.abs() > f64::from(f32::MAX) {
                                return Err(Error::Data(format!(
                                    "schema: column '{name}': {key} = {v:e} is outside the 32-bit float range of the values (about ±3.4e38); give a bound near the column's possible values, or omit it"
                                )));
                            }
                        }
                    }
                    if let (Some(lo), Some(hi)) = (min, max) {
                        if lo > hi {
                            return Err(Error::Data(format!(
                                "schema: column '{name}': min = {lo} is greater than max = {hi}; swap them"
                            )));
                        }
                    }
                }
                ColumnSpec::Categorical {
                    categories: Some(cats),
                } => {
                    if cats.is_empty() {
                        return Err(Error::Data(format!(
                            "schema: column '{name}': \"categories\" is empty; list the categories or omit the key to infer them"
                        )));
                    }
                    let mut seen = BTreeSet::new();
                    for c in cats {
                        if c.trim() != c {
                            return Err(Error::Data(format!(
                                "schema: column '{name}': category '{c}' has surrounding spaces; cell values are trimmed, so remove the spaces"
                            )));
                        }
                        if crate::data::is_missing(c) && c != crate::data::MISSING_LEVEL {
                            return Err(Error::Data(format!(
                                "schema: column '{name}': category '{c}' is a missing-value marker ('', NA, N/A, NaN, null, None, -, ?, .) and can never occur; remove it (list \"(missing)\" to keep missing cells as a level)"
                            )));
                        }
                        if !seen.insert(c.as_str()) {
                            return Err(Error::Data(format!(
                                "schema: column '{name}': category '{c}' is listed twice; list each category once"
                            )));
                        }
                    }
                }
                ColumnSpec::Categorical { categories: None } | ColumnSpec::Ignore => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let s = Schema::from_json(
            r#"{"columns": {"age": {"type": "numeric", "integer": true, "min": 0, "max": 120},
                "sex": {"type": "categorical", "categories": ["F","M"]}, "id": {"type": "ignore"}}}"#,
        )
        .unwrap();
        assert_eq!(s.columns.len(), 3);
        assert_eq!(
            s.columns["age"],
            ColumnSpec::Numeric {
                integer: Some(true),
                min: Some(0.0),
                max: Some(120.0)
            }
        );
        assert_eq!(
            s.columns["sex"],
            ColumnSpec::Categorical {
                categories: Some(vec!["F".into(), "M".into()])
            }
        );
        assert_eq!(s.columns["id"], ColumnSpec::Ignore);
    }

    #[test]
    fn optional_keys_default_to_none() {
        let s = Schema::from_json(
            r#"{"columns": {"x": {"type": "numeric"}, "y": {"type": "categorical"}}}"#,
        )
        .unwrap();
        assert_eq!(
            s.columns["x"],
            ColumnSpec::Numeric {
                integer: None,
                min: None,
                max: None
            }
        );
        assert_eq!(s.columns["y"], ColumnSpec::Categorical { categories: None });
    }

    #[test]
    fn min_greater_than_max_is_an_error() {
        let e =
            Schema::from_json(r#"{"columns": {"age": {"type": "numeric", "min": 10, "max": 1}}}"#)
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("'age'") && e.contains("min = 10") && e.contains("max = 1"),
            "{e}"
        );
    }

    #[test]
    fn bounds_beyond_the_f32_range_are_errors() {
        // ±1e308 panicked in decoding (the span overflowed to inf), ±1e300 wrote `inf`.
        for (lo, hi, bad) in [
            ("-1e308", "1e308", "min = -1e308"),
            ("0", "1e300", "max = 1e300"),
        ] {
            let e = Schema::from_json(&format!(
                r#"{{"columns": {{"a": {{"type": "numeric", "min": {lo}, "max": {hi}}}}}}}"#
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains(bad) && e.contains("32-bit float range"), "{e}");
        }
        let edge = f64::from(f32::MAX);
        let ok = format!(
            r#"{{"columns": {{"a": {{"type": "numeric", "min": -{edge}, "max": {edge}}}}}}}"#
        );
        assert!(Schema::from_json(&ok).is_ok());
    }

    #[test]
    fn unknown_type_and_unknown_keys_are_errors() {
        let e = Schema::from_json(r#"{"columns": {"a": {"type": "text"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("schema:") && e.contains("text"), "{e}");
        let e = Schema::from_json(r#"{"columns": {"a": {"type": "numeric", "maximum": 3}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("maximum"), "{e}");
        let e = Schema::from_json(r#"{"cols": {}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cols"), "{e}");
        assert!(Schema::from_json("not json").is_err());
    }

    #[test]
    fn bad_categories_are_errors() {
        for (cats, needle) in [
            (r#"[]"#, "empty"),
            (r#"["a","a"]"#, "twice"),
            (r#"[" a"]"#, "spaces"),
            (r#"["NA"]"#, "missing-value"),
        ] {
            let json = format!(
                r#"{{"columns": {{"c": {{"type": "categorical", "categories": {cats}}}}}}}"#
            );
            let e = Schema::from_json(&json).unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains("'c'"), "{cats}: {e}");
        }
    }

    #[test]
    fn round_trips_through_json() {
        let s = Schema::from_json(
            r#"{"columns": {"a": {"type": "numeric", "max": 2.5}, "b": {"type": "ignore"}}}"#,
        )
        .unwrap();
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(Schema::from_json(&text).unwrap(), s);
    }
}
