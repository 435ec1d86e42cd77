//! Compact encoded rows: the feature matrix of [`FeatureSpace::encode`] without its zeros.
//!
//! A categorical column is a one-hot segment of its released levels, so a table with
//! categorical columns encodes to a matrix that is mostly zeros (a 20-column table with 8
//! categorical columns of 2–30 levels: 78 features a row, at most 19 of them non-zero). Here
//! each row keeps one value per numeric feature, one code per segment (which of its features
//! is hot, or none) and the value its hot features share (1, times the row's scale). The
//! values are those of the dense matrix, bit for bit, and every map below does to them what
//! the dense map does to the dense row ([`crate::preprocess::clip::clip_rows`],
//! [`crate::preprocess::rownorm::scale_rows_to_norm`], an entry-wise map that keeps 0), so a
//! mechanism reading these rows reads the same numbers in less memory (the 20-column table:
//! 80 bytes a row instead of 312) and in fewer memory reads.

use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::preprocess::clip::{check_clip, shaved_scale};
use crate::preprocess::encode::{ColumnCodec, FeatureSpace};

/// One feature group of a compact row, in feature order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A numeric feature at this position: the row's value is its value.
    Numeric {
        /// Feature index.
        pos: usize,
    },
    /// A one-hot segment of `width` features from `start`: the row's value is the index of its
    /// hot feature in the segment, or −1 when none is hot.
    OneHot {
        /// First feature index.
        start: usize,
        /// Features in the segment.
        width: usize,
    },
}

/// Rows of a feature matrix stored as [`Slot`] values plus one shared hot value per row
/// (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactRows {
    slots: Vec<Slot>,
    /// The dense width d.
    dim: usize,
    /// Row-major: each row's slot values, then its hot value (`slots.len() + 1` a row).
    data: Vec<f32>,
}

/// Codes are stored as f32: exact for every segment narrower than this.
const MAX_WIDTH: usize = 1 << 24;

impl CompactRows {
    /// The compact layout of `space`, or `None` when it saves nothing (no categorical column
    /// with two or more released levels) or a segment is too wide for its codes.
    pub fn layout(space: &FeatureSpace) -> Option<Vec<Slot>> {
        let mut slots = Vec::new();
        let mut saves = false;
        for codec in &space.codecs {
            match codec {
                ColumnCodec::Label => {}
                ColumnCodec::Numeric { start, .. } => slots.push(Slot::Numeric { pos: *start }),
                ColumnCodec::Categorical { levels, start, .. } => {
                    if levels.len() >= MAX_WIDTH {
                        return None;
                    }
                    saves |= levels.len() >= 2;
                    if !levels.is_empty() {
                        slots.push(Slot::OneHot {
                            start: *start,
                            width: levels.len(),
                        });
                    }
                }
            }
        }
        slots.sort_by_key(|s| match *s {
            Slot::Numeric { pos } => pos,
            Slot::OneHot { start, .. } => start,
        });
        saves.then_some(slots)
    }

    /// Encodes `table` as [`FeatureSpace::encode_with_room`] does (the same values: this
    /// is that matrix without its zeros), with room for `spare_rows` more rows; `None` where
    /// [`CompactRows::layout`] is.
    pub fn encode(space: &FeatureSpace, table: &Table, spare_rows: usize) -> Result<Option<Self>> {
        let Some(slots) = Self::layout(space) else {
            return Ok(None);
        };
        let too_large = || Error::Data("the table is too large to encode".into());
        let w = slots.len() + 1;
        let n = table.n_rows;
        let cells = n.checked_mul(w).ok_or_else(too_large)?;
        let room = spare_rows
            .checked_mul(w)
            .and_then(|r| r.checked_add(cells))
            .ok_or_else(too_large)?;
        let mut data = Vec::with_capacity(room);
        data.resize(cells, 0f32);
        // The hot value: 1 in every row (a row without a hot feature never reads it).
        for row in data.chunks_exact_mut(w) {
            row[w - 1] = 1.0;
        }
        for (codec, column) in space.codecs.iter().zip(&table.columns) {
            if matches!(codec, ColumnCodec::Categorical { levels, .. } if levels.is_empty()) {
                // No released level: every feature of the column is 0 (it has none).
                continue;
            }
            let at = |s: &Slot| match (codec, *s) {
                (ColumnCodec::Numeric { start, .. }, Slot::Numeric { pos }) => *start == pos,
                (ColumnCodec::Categorical { start, .. }, Slot::OneHot { start: s, .. }) => {
                    *start == s
                }
                _ => false,
            };
            let Some(k) = slots.iter().position(at) else {
                continue;
            };
            match (codec, column) {
                (ColumnCodec::Numeric { .. }, Column::Numeric { values, .. }) => {
                    let f = codec.numeric_feature();
                    for (row, &v) in data.chunks_exact_mut(w).zip(values) {
                        row[k] = f(v);
                    }
                }
                (
                    ColumnCodec::Categorical { slot_of_code, .. },
                    Column::Categorical { codes, .. },
                ) => {
                    for (row, &c) in data.chunks_exact_mut(w).zip(codes) {
                        row[k] = match slot_of_code.get(c as usize) {
                            Some(Some(s)) => *s as f32,
                            _ => -1.0,
                        };
                    }
                }
                _ => {
                    return Err(Error::Data(
                        "internal: codec does not match the column type".into(),
                    ))
                }
            }
        }
        Ok(Some(CompactRows {
            slots,
            dim: space.dim,
            data,
        }))
    }

    /// The slots, in feature order.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The dense width d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Values stored per row (slots + 1).
    pub fn width(&self) -> usize {
        self.slots.len() + 1
    }

    /// Rows.
    pub fn n_rows(&self) -> usize {
        self.data.len() / self.width()
    }

    /// Row `r`'s stored values: its slot values, then its hot value.
    #[inline]
    pub fn row(&self, r: usize) -> &[f32] {
        let w = self.width();
        &self.data[r * w..(r + 1) * w]
    }

    /// Calls `f(feature index, value)` for every feature of row `r` that may be non-zero,
    /// in feature order (every other feature is 0).
    #[inline]
    pub fn for_each_entry(&self, r: usize, mut f: impl FnMut(usize, f32)) {
        each_entry(&self.slots, self.row(r), &mut f);
    }

    /// Row `r` as a dense row (`out`: length d).
    pub fn dense_row(&self, r: usize, out: &mut [f32]) {
        out.fill(0.0);
        self.for_each_entry(r, |j, x| out[j] = x);
    }

    /// The dense row-major matrix.
    pub fn to_dense(&self) -> Vec<f32> {
        let d = self.dim;
        let mut out = vec![0f32; self.n_rows() * d];
        if d > 0 {
            for (r, row) in out.chunks_exact_mut(d).enumerate() {
                self.dense_row(r, row);
            }
        }
        out
    }

    /// Appends a zero row.
    pub fn push_zero_row(&mut self) {
        for s in &self.slots {
            self.data.push(match s {
                Slot::Numeric { .. } => 0.0,
                Slot::OneHot { .. } => -1.0,
            });
        }
        self.data.push(0.0);
    }

    /// Applies `f` to every value the dense matrix holds at a non-zero-able feature (numeric
    /// values and the hot value); `f` must map 0 to 0, as it would every zero of the dense
    /// matrix.
    pub fn map_values(&mut self, f: impl Fn(f32) -> f32) {
        let w = self.width();
        let slots = &self.slots;
        for row in self.data.chunks_exact_mut(w) {
            for (s, v) in slots.iter().zip(row.iter_mut()) {
                if let Slot::Numeric { .. } = s {
                    *v = f(*v);
                }
            }
            row[w - 1] = f(row[w - 1]);
        }
    }

    /// [`crate::preprocess::clip::clip_rows`] on these rows.
    pub fn clip_rows(&mut self, c: f64) -> Result<usize> {
        check_clip(c)?;
        Ok(self.scale_rows(|norm| (norm > c).then(|| shaved_scale(c, norm))))
    }

    /// [`crate::preprocess::rownorm::scale_rows_to_norm`] on these rows.
    pub fn scale_rows_to_norm(&mut self, c: f64) -> Result<usize> {
        check_clip(c)?;
        let mut zeros = 0;
        self.scale_rows(|norm| {
            if norm > 0.0 && norm.is_finite() {
                Some(shaved_scale(c, norm))
            } else {
                zeros += 1;
                Some(0.0)
            }
        });
        Ok(zeros)
    }

    /// Multiplies each row by `factor(its L2 norm)` where that is `Some` (in f64, rounded to
    /// f32, as the dense maps do); returns how many rows were.
    fn scale_rows(&mut self, mut factor: impl FnMut(f64) -> Option<f64>) -> usize {
        let w = self.width();
        let slots = &self.slots;
        let mut scaled = 0;
        for row in self.data.chunks_exact_mut(w) {
            // The dense sum in feature order: its zeros add nothing.
            let mut sq = 0f64;
            each_entry(slots, row, &mut |_, x| sq += f64::from(x) * f64::from(x));
            let norm = sq.sqrt();
            if let Some(s) = factor(norm) {
                for (slot, v) in slots.iter().zip(row.iter_mut()) {
                    if let Slot::Numeric { .. } = slot {
                        *v = (f64::from(*v) * s) as f32;
                    }
                }
                row[w - 1] = (f64::from(row[w - 1]) * s) as f32;
                scaled += 1;
            }
        }
        scaled
    }
}

#[inline]
fn each_entry(slots: &[Slot], row: &[f32], f: &mut impl FnMut(usize, f32)) {
    let hot = row[slots.len()];
    for (s, &v) in slots.iter().zip(row) {
        match *s {
            Slot::Numeric { pos } => f(pos, v),
            Slot::OneHot { start, .. } => {
                if v >= 0.0 {
                    f(start + v as usize, hot);
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::preprocess::clip::clip_rows;
    use crate::preprocess::rownorm::scale_rows_to_norm;
    use rand::{Rng, SeedableRng};

    /// A random table: numeric and categorical columns (some levels not released, one
    /// column with no released level, one with a single level) and a label.
    pub(crate) fn table_and_space(seed: u64, n: usize) -> (Table, FeatureSpace) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut columns = Vec::new();
        let mut codecs = Vec::new();
        let mut names = Vec::new();
        let mut start = 0;
        let kinds = [0usize, 3, 0, 1, 5, 2, 0, 4];
        for (c, &kind) in kinds.iter().enumerate() {
            names.push(format!("c{c}"));
            if kind == 0 {
                let values: Vec<f32> = (0..n).map(|_| rng.gen_range(-3.0f32..40.0)).collect();
                columns.push(Column::Numeric {
                    values,
                    integer: false,
                });
                codecs.push(ColumnCodec::Numeric {
                    offset: 1.5,
                    scale: 7.25,
                    lo: -1.0,
                    hi: 33.0,
                    integer: false,
                    start,
                });
                start += 1;
            } else {
                let input_levels = kind + 1;
                let codes: Vec<u32> = (0..n)
                    .map(|_| rng.gen_range(0..input_levels as u32))
                    .collect();
                // Every level but the last released (kind 2: none released).
                let released: Vec<usize> = if kind == 2 {
                    Vec::new()
                } else {
                    (0..kind).collect()
                };
                let slot_of_code = (0..input_levels)
                    .map(|l| released.iter().position(|&x| x == l))
                    .collect();
                columns.push(Column::Categorical {
                    codes,
                    levels: (0..input_levels).map(|l| format!("v{l}")).collect(),
                });
                codecs.push(ColumnCodec::Categorical {
                    levels: released.iter().map(|l| format!("v{l}")).collect(),
                    slot_of_code,
                    start,
                });
                start += released.len();
            }
        }
        names.push("label".into());
        columns.push(Column::Categorical {
            codes: vec![0; n],
            levels: vec!["a".into()],
        });
        codecs.push(ColumnCodec::Label);
        let table = Table {
            names: names.clone(),
            columns,
            n_rows: n,
            rows_dropped: 0,
            label_index: Some(kinds.len()),
            delimiter: b',',
        };
        let space = FeatureSpace {
            names,
            codecs,
            dim: start,
        };
        (table, space)
    }

    fn bits(x: &[f32]) -> Vec<u32> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn compact_rows_are_the_dense_matrix() {
        for seed in 0..20 {
            let (table, space) = table_and_space(seed, 300);
            let dense = space.encode(&table).unwrap();
            let mut c = CompactRows::encode(&space, &table, 1).unwrap().unwrap();
            assert_eq!(c.n_rows(), 300);
            assert_eq!(bits(&c.to_dense()), bits(&dense));
            c.push_zero_row();
            let mut padded = dense.clone();
            padded.resize(dense.len() + space.dim, 0.0);
            assert_eq!(bits(&c.to_dense()), bits(&padded));
        }
    }

    #[test]
    fn row_maps_are_the_dense_maps_bit_for_bit() {
        for seed in 0..20 {
            let (table, space) = table_and_space(100 + seed, 400);
            let d = space.dim;
            let c0 = CompactRows::encode(&space, &table, 0).unwrap().unwrap();
            let dense0 = space.encode(&table).unwrap();
            for clip in [0.5, 1.0, 3.0, 1e3] {
                let (mut c, mut dense) = (c0.clone(), dense0.clone());
                assert_eq!(
                    c.clip_rows(clip).unwrap(),
                    clip_rows(&mut dense, d, clip).unwrap()
                );
                assert_eq!(bits(&c.to_dense()), bits(&dense), "clip {clip}");
                let (mut c, mut dense) = (c0.clone(), dense0.clone());
                assert_eq!(
                    c.scale_rows_to_norm(clip).unwrap(),
                    scale_rows_to_norm(&mut dense, d, clip).unwrap()
                );
                assert_eq!(bits(&c.to_dense()), bits(&dense), "norm {clip}");
            }
            // The non-negative clamp and the public-norm map, then clipping.
            let (mut c, mut dense) = (c0.clone(), dense0.clone());
            let s = 0.37f32;
            c.map_values(|x| x.max(0.0));
            c.map_values(|x| x.min(1.0) * s);
            dense.iter_mut().for_each(|x| *x = x.max(0.0));
            dense.iter_mut().for_each(|x| *x = x.min(1.0) * s);
            assert_eq!(bits(&c.to_dense()), bits(&dense));
        }
    }

    #[test]
    fn zero_rows_stay_zero_and_are_counted() {
        let (table, space) = table_and_space(7, 50);
        let mut c = CompactRows::encode(&space, &table, 1).unwrap().unwrap();
        c.map_values(|_| 0.0);
        c.push_zero_row();
        assert_eq!(c.scale_rows_to_norm(1.0).unwrap(), 51);
        assert!(c.to_dense().iter().all(|&x| x == 0.0));
    }

    #[test]
    fn a_table_without_categorical_columns_stays_dense() {
        let (mut table, mut space) = table_and_space(3, 10);
        // Keep the numeric columns only.
        let keep: Vec<usize> = (0..space.codecs.len())
            .filter(|&i| !matches!(space.codecs[i], ColumnCodec::Categorical { .. }))
            .collect();
        space.codecs = keep.iter().map(|&i| space.codecs[i].clone()).collect();
        space.names = keep.iter().map(|&i| space.names[i].clone()).collect();
        table.columns = keep.iter().map(|&i| table.columns[i].clone()).collect();
        assert!(CompactRows::layout(&space).is_none());
        assert!(CompactRows::encode(&space, &table, 0).unwrap().is_none());
    }
}
