//! The map between a table's columns and the feature vector, both ways.
//!
//! Numeric columns become u = (clamp(x) − offset)/scale; categorical columns become one-hot
//! segments over their released levels (a value whose level was not released encodes as all
//! zeros). Decoding maps u back to offset + u·scale, clamps to the column's range, rounds
//! integer columns, and takes the argmax of each one-hot segment. All of this is
//! post-processing of the mechanism's output.

use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::preprocess::normalize::ColumnMarginal;
use serde::Serialize;

/// Placeholder written when no level of a categorical column could be released.
pub const SUPPRESSED: &str = "(suppressed)";

/// How one input column maps into the feature vector.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ColumnCodec {
    /// The label column: not a feature; written from the class.
    Label,
    /// A numeric column occupying one feature.
    Numeric {
        /// Offset subtracted before scaling.
        offset: f64,
        /// Scale divided by (> 0).
        scale: f64,
        /// Clamp range in original units (inputs are clamped before encoding, outputs after
        /// decoding); may be infinite in `data` mode.
        lo: f64,
        /// Upper end of the clamp range.
        hi: f64,
        /// Round outputs to integers.
        integer: bool,
        /// Feature index.
        start: usize,
    },
    /// A categorical column occupying `levels.len()` features.
    Categorical {
        /// The released levels (output values), one feature each.
        levels: Vec<String>,
        /// For each input level code, its slot in `levels` (None: not released).
        #[serde(skip)]
        slot_of_code: Vec<Option<usize>>,
        /// First feature index.
        start: usize,
    },
}

/// The feature space of a table: one codec per input column, in the input's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureSpace {
    /// Column names in the input's order.
    pub names: Vec<String>,
    /// One codec per column.
    pub codecs: Vec<ColumnCodec>,
    /// Feature dimension d.
    pub dim: usize,
}

impl FeatureSpace {
    /// Encodes every row of `table` into a row-major n × d matrix (not yet clipped).
    pub fn encode(&self, table: &Table) -> Result<Vec<f32>> {
        let n = table.n_rows;
        let d = self.dim;
        let cells = n
            .checked_mul(d)
            .ok_or_else(|| Error::Data("the table is too large to encode".into()))?;
        let mut out = vec![0f32; cells];
        for (codec, column) in self.codecs.iter().zip(&table.columns) {
            match (codec, column) {
                (ColumnCodec::Label, _) => {}
                (
                    ColumnCodec::Numeric {
                        offset,
                        scale,
                        lo,
                        hi,
                        start,
                        ..
                    },
                    Column::Numeric { values, .. },
                ) => {
                    for (i, &v) in values.iter().enumerate() {
                        let x = f64::from(v).clamp(*lo, *hi);
                        out[i * d + start] = ((x - offset) / scale) as f32;
                    }
                }
                (
                    ColumnCodec::Categorical {
                        slot_of_code,
                        start,
                        ..
                    },
                    Column::Categorical { codes, .. },
                ) => {
                    for (i, &c) in codes.iter().enumerate() {
                        if let Some(Some(s)) = slot_of_code.get(c as usize) {
                            out[i * d + start + s] = 1.0;
                        }
                    }
                }
                _ => {
                    return Err(Error::Data(
                        "internal: codec does not match the column type".into(),
                    ))
                }
            }
        }
        Ok(out)
    }

    /// Re-parametrizes every numeric codec as the min–max map of its clamp range [lo, hi] onto
    /// [0, 1], for mechanisms whose sensitivity assumes features in [0, 1]^d (DPMix). `public`
    /// and `dp` codecs already are that map; `data` codecs (z-scores) become min–max maps over
    /// the same, unprotected, observed ranges. Categorical one-hot features are in {0, 1}
    /// already. Returns an error for a column without a finite range.
    pub fn to_unit_box(&mut self) -> Result<()> {
        for (name, codec) in self.names.iter().zip(self.codecs.iter_mut()) {
            if let ColumnCodec::Numeric {
                offset,
                scale,
                lo,
                hi,
                ..
            } = codec
            {
                if !(lo.is_finite() && hi.is_finite()) {
                    return Err(Error::Data(format!(
                        "column '{name}' has no finite range, which features in [0, 1] need; give its min and max in the schema"
                    )));
                }
                *offset = *lo;
                *scale = if hi > lo { *hi - *lo } else { 1.0 };
            }
        }
        Ok(())
    }

    /// Decodes one synthetic feature row into output cells (the label cell gets `label`).
    /// `out` is reused across rows: its strings are overwritten in place, not reallocated.
    pub fn decode_row(&self, row: &[f32], label: &str, out: &mut Vec<String>) {
        out.resize_with(self.codecs.len(), String::new);
        for (codec, cell) in self.codecs.iter().zip(out.iter_mut()) {
            cell.clear();
            match codec {
                ColumnCodec::Label => cell.push_str(label),
                ColumnCodec::Numeric {
                    offset,
                    scale,
                    lo,
                    hi,
                    integer,
                    start,
                } => {
                    let x = (offset + f64::from(row[*start]) * scale).clamp(*lo, *hi);
                    write_number(cell, x, *integer);
                }
                ColumnCodec::Categorical { levels, start, .. } => {
                    if levels.is_empty() {
                        cell.push_str(SUPPRESSED);
                    } else {
                        let seg = &row[*start..*start + levels.len()];
                        let mut best = 0;
                        for (j, &v) in seg.iter().enumerate() {
                            if v > seg[best] {
                                best = j;
                            }
                        }
                        cell.push_str(&levels[best]);
                    }
                }
            }
        }
    }
}

impl FeatureSpace {
    /// Decodes a batch of T synthetic rows (row-major T × d, modified in place) keeping the
    /// released marginals (post-processing; see [`crate::preprocess::quantile`]):
    ///
    /// * with `denoise` = (class of each row, noise σ), rows are first shrunk toward their
    ///   class's mean ([`crate::preprocess::quantile::shrink_to_class_means`]);
    /// * every row is then multiplied by `scale` (restoring the norm after row scaling; 1
    ///   when rows were not scaled);
    /// * a numeric column with a marginal in `marginals` (one entry per input column) is
    ///   quantile-mapped onto it; one without is mapped back linearly, not clamped (clamping
    ///   noise into the range biases the means), so it may leave the range;
    /// * a categorical column with level proportions gets levels in those proportions
    ///   ([`crate::preprocess::quantile::assign_in_proportion`]); one without takes the argmax.
    ///
    /// `label(i)` gives row i's label cell; `sink` gets each row's cells in order.
    pub fn decode_batch(
        &self,
        rows: &mut [f32],
        scale: f64,
        marginals: &[Option<ColumnMarginal>],
        denoise: Option<(&[u32], f64)>,
        label: &dyn Fn(usize) -> String,
        sink: &mut dyn FnMut(&[String]) -> Result<()>,
    ) -> Result<()> {
        use crate::preprocess::quantile::{assign_in_proportion, quantile_map};
        let d = self.dim;
        if d == 0 || rows.len() % d != 0 {
            return Err(Error::Data(
                "internal: decode_batch got a ragged batch".into(),
            ));
        }
        let t = rows.len() / d;
        if let Some((labels, sigma)) = denoise {
            if labels.len() == t {
                crate::preprocess::quantile::shrink_to_class_means(rows, d, labels, sigma);
            }
        }
        if scale != 1.0 {
            let s = scale as f32;
            rows.iter_mut().for_each(|x| *x *= s);
        }
        // Per column: decoded numbers or level indices.
        enum Out {
            None,
            Num(Vec<f64>, bool),
            Cat(Vec<usize>),
        }
        let mut outs: Vec<Out> = Vec::with_capacity(self.codecs.len());
        for (j, codec) in self.codecs.iter().enumerate() {
            let m = marginals.get(j).and_then(Option::as_ref);
            match codec {
                ColumnCodec::Label => outs.push(Out::None),
                ColumnCodec::Numeric {
                    offset,
                    scale: sc,
                    lo,
                    integer,
                    start,
                    ..
                } => {
                    let mut v: Vec<f64> = (0..t)
                        .map(|i| offset + f64::from(rows[i * d + start]) * sc)
                        .collect();
                    match m {
                        Some(ColumnMarginal::Numeric(nm)) => quantile_map(&mut v, nm),
                        // No clamping: pulling the noise into [lo, hi] would shift every mean
                        // toward the middle of the range (a non-finite value, which the noise
                        // cannot produce, would be written as the range's low end).
                        _ => v.iter_mut().for_each(|x| {
                            if !x.is_finite() {
                                *x = *lo;
                            }
                        }),
                    }
                    outs.push(Out::Num(v, *integer));
                }
                ColumnCodec::Categorical { levels, start, .. } => {
                    let w = levels.len();
                    if w == 0 {
                        outs.push(Out::Cat(Vec::new()));
                        continue;
                    }
                    let mut seg = Vec::with_capacity(t * w);
                    for i in 0..t {
                        seg.extend_from_slice(&rows[i * d + start..i * d + start + w]);
                    }
                    let a = match m {
                        Some(ColumnMarginal::Categorical(p)) if p.len() == w => {
                            assign_in_proportion(&seg, w, p)
                        }
                        _ => seg
                            .chunks_exact(w)
                            .map(|r| {
                                let mut best = 0;
                                for (k, &x) in r.iter().enumerate() {
                                    if x > r[best] {
                                        best = k;
                                    }
                                }
                                best
                            })
                            .collect(),
                    };
                    outs.push(Out::Cat(a));
                }
            }
        }
        let mut cells: Vec<String> = vec![String::new(); self.codecs.len()];
        for i in 0..t {
            for ((codec, out), cell) in self.codecs.iter().zip(&outs).zip(cells.iter_mut()) {
                cell.clear();
                match (codec, out) {
                    (ColumnCodec::Label, _) => cell.push_str(&label(i)),
                    (_, Out::Num(v, integer)) => write_number(cell, v[i], *integer),
                    (ColumnCodec::Categorical { levels, .. }, Out::Cat(a)) => {
                        if levels.is_empty() {
                            cell.push_str(SUPPRESSED);
                        } else {
                            cell.push_str(&levels[a[i]]);
                        }
                    }
                    _ => return Err(Error::Data("internal: decode_batch mismatch".into())),
                }
            }
            sink(&cells)?;
        }
        Ok(())
    }
}

/// Appends a decoded number: integers without a fraction, others as the shortest f32 text.
pub fn write_number(buf: &mut String, x: f64, integer: bool) {
    use std::fmt::Write;
    if integer {
        let r = x.round();
        if r.abs() < 9.0e15 {
            // `r as i64` is exact here; "-0" cannot occur.
            let _ = write!(buf, "{}", r as i64);
        } else {
            let _ = write!(buf, "{r:.0}");
        }
    } else {
        let _ = write!(buf, "{}", x as f32);
    }
}

/// [`write_number`] into a fresh string.
pub fn format_number(x: f64, integer: bool) -> String {
    let mut s = String::new();
    write_number(&mut s, x, integer);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> FeatureSpace {
        FeatureSpace {
            names: vec!["age".into(), "y".into(), "color".into()],
            codecs: vec![
                ColumnCodec::Numeric {
                    offset: 10.0,
                    scale: 100.0,
                    lo: 10.0,
                    hi: 110.0,
                    integer: true,
                    start: 0,
                },
                ColumnCodec::Label,
                ColumnCodec::Categorical {
                    levels: vec!["blue".into(), "red".into()],
                    slot_of_code: vec![Some(0), None, Some(1)],
                    start: 1,
                },
            ],
            dim: 3,
        }
    }

    #[test]
    fn encode_then_decode_round_trips() {
        let t = Table {
            names: vec!["age".into(), "y".into(), "color".into()],
            columns: vec![
                Column::Numeric {
                    values: vec![20.0, 500.0],
                    integer: true,
                },
                Column::Categorical {
                    codes: vec![0, 1],
                    levels: vec!["a".into(), "b".into()],
                },
                Column::Categorical {
                    codes: vec![2, 1],
                    levels: vec!["blue".into(), "green".into(), "red".into()],
                },
            ],
            n_rows: 2,
            rows_dropped: 0,
            label_index: Some(1),
            delimiter: b',',
        };
        let s = space();
        let m = s.encode(&t).unwrap();
        // 500 is clamped to 110 → u = 1; "green" was not released → zeros.
        assert_eq!(m, vec![0.1, 0.0, 1.0, 1.0, 0.0, 0.0]);
        let mut out = Vec::new();
        s.decode_row(&m[0..3], "a", &mut out);
        assert_eq!(out, vec!["20", "a", "red"]);
        s.decode_row(&[-3.0, 0.7, 0.2], "b", &mut out);
        assert_eq!(
            out,
            vec!["10", "b", "blue"],
            "decoding clamps and takes the argmax"
        );
    }

    #[test]
    fn unit_box_maps_ranges_onto_zero_one() {
        let mut s = space();
        if let ColumnCodec::Numeric { offset, scale, .. } = &mut s.codecs[0] {
            // A z-score codec (mean 50, std 20) over the observed range [10, 110].
            *offset = 50.0;
            *scale = 20.0;
        }
        s.to_unit_box().unwrap();
        match &s.codecs[0] {
            ColumnCodec::Numeric { offset, scale, .. } => {
                assert_eq!((*offset, *scale), (10.0, 100.0));
            }
            _ => unreachable!(),
        }
        if let ColumnCodec::Numeric { hi, .. } = &mut s.codecs[0] {
            *hi = f64::INFINITY;
        }
        assert!(s.to_unit_box().unwrap_err().to_string().contains("'age'"));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(format_number(2.6, true), "3");
        assert_eq!(format_number(-0.2, true), "0");
        assert_eq!(format_number(0.1, false), "0.1");
    }
}
