//! The map between a table's columns and the feature vector, both ways.
//!
//! Numeric columns become u = (clamp(x) − offset)/scale; categorical columns become one-hot
//! segments over their released levels (a value whose level was not released encodes as all
//! zeros). Decoding maps u back to offset + u·scale, brings it into the column's range
//! (clamping row by row; the batch decoder uses [`squeeze_into`], and [`clamp_keeping_mean`]
//! for integer columns), rounds integer columns, and
//! takes the argmax of each one-hot segment (or levels in DP proportions). All of this is
//! post-processing of the mechanism's output.

use crate::data::{Column, Table};
use crate::error::{Error, Result};
use crate::preprocess::normalize::ColumnMarginal;
use serde::Serialize;

mod chunked;
pub use chunked::{chunk_rows, ChunkedDecode, CHUNK_BYTES, MIN_CHUNK_ROWS};

/// Placeholder written when no level of a categorical column could be released.
pub const SUPPRESSED: &str = "(suppressed)";
/// Written for the rows decoded into the pooled levels that were too rare to release.
pub const OTHER: &str = "(other)";

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

impl ColumnCodec {
    /// A numeric codec's feature of a value: clamped into [lo, hi], then (x − offset)/scale,
    /// rounded to f32 (0 for the other codecs, which have no such map). Every encoder of
    /// the rows uses it, so they store the same values.
    pub fn numeric_feature(&self) -> impl Fn(f32) -> f32 + '_ {
        move |v: f32| match self {
            ColumnCodec::Numeric {
                offset,
                scale,
                lo,
                hi,
                ..
            } => ((f64::from(v).clamp(*lo, *hi) - offset) / scale) as f32,
            _ => 0.0,
        }
    }
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
        self.encode_with_room(table, 0)
    }

    /// [`FeatureSpace::encode`], with capacity for `spare_rows` more rows (so that padding
    /// rows appended later do not reallocate, and briefly double, the whole matrix).
    pub fn encode_with_room(&self, table: &Table, spare_rows: usize) -> Result<Vec<f32>> {
        let n = table.n_rows;
        let d = self.dim;
        let cells = n
            .checked_mul(d)
            .ok_or_else(|| Error::Data("the table is too large to encode".into()))?;
        self.check_codecs(table)?;
        let room = spare_rows
            .checked_mul(d)
            .and_then(|r| r.checked_add(cells))
            .ok_or_else(|| Error::Data("the table is too large to encode".into()))?;
        let mut out = Vec::with_capacity(room);
        out.resize(cells, 0f32);
        if d == 0 {
            return Ok(out);
        }
        // Blocks of 64 rows (on all cores natively), column by column inside a block, so
        // the writes of a column stay within a few cache lines per row.
        const ROWS: usize = 64;
        crate::par::blocks_mut(&mut out, ROWS * d, |b, block| {
            self.encode_block(table, b * ROWS, block);
            0
        });
        Ok(out)
    }

    /// `f` of every block of encoded rows (the rows [`FeatureSpace::encode`] gives, in
    /// consecutive blocks of at most `rows_per_block`), on all cores natively, in block
    /// order; the whole matrix is never held (one block per thread at a time).
    pub fn map_encoded_blocks<R: Send>(
        &self,
        table: &Table,
        rows_per_block: usize,
        f: impl Fn(&[f32]) -> R + Sync + Send,
    ) -> Result<Vec<R>> {
        self.check_codecs(table)?;
        let (n, d) = (table.n_rows, self.dim);
        let per = rows_per_block.max(1);
        Ok(crate::par::map_range(0..n.div_ceil(per), |b| {
            let first = b * per;
            let mut block = vec![0f32; per.min(n - first) * d];
            if d > 0 {
                self.encode_block(table, first, &mut block);
            }
            f(&block)
        }))
    }

    /// Refuses a codec that does not match its column's type.
    fn check_codecs(&self, table: &Table) -> Result<()> {
        for (codec, column) in self.codecs.iter().zip(&table.columns) {
            let ok = matches!(
                (codec, column),
                (ColumnCodec::Label, _)
                    | (ColumnCodec::Numeric { .. }, Column::Numeric { .. })
                    | (ColumnCodec::Categorical { .. }, Column::Categorical { .. })
            );
            if !ok {
                return Err(Error::Data(
                    "internal: codec does not match the column type".into(),
                ));
            }
        }
        Ok(())
    }

    /// Encodes the rows from `first` into `block` (whole rows of width d > 0, zeroed),
    /// column by column.
    fn encode_block(&self, table: &Table, first: usize, block: &mut [f32]) {
        let d = self.dim;
        let rows = block.len() / d;
        for (codec, column) in self.codecs.iter().zip(&table.columns) {
            match (codec, column) {
                (ColumnCodec::Numeric { start, .. }, Column::Numeric { values, .. }) => {
                    let f = codec.numeric_feature();
                    for (i, &v) in values.iter().skip(first).take(rows).enumerate() {
                        block[i * d + start] = f(v);
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
                    for (i, &c) in codes.iter().skip(first).take(rows).enumerate() {
                        if let Some(Some(s)) = slot_of_code.get(c as usize) {
                            block[i * d + start + s] = 1.0;
                        }
                    }
                }
                _ => {}
            }
        }
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
                        cell.push_str(&levels[argmax(&row[*start..*start + levels.len()])]);
                    }
                }
            }
        }
    }
}

/// A numeric column's linearly decoded values `v` (no DP marginal to map them onto), brought
/// into its range [lo, hi] where its kind asks for it.
fn into_range(
    v: &mut [f64],
    (lo, hi): (f64, f64),
    integer: bool,
    denoised: bool,
    classes: Option<&[u32]>,
) {
    if denoised {
        // The image path (denoised rows): linear, clamped when the pixels are written;
        // measured on the digits demo, the squeeze lowers the share of synthetic images
        // nearest their own class's mean (0.95 → 0.74).
        v.iter_mut()
            .filter(|x| !x.is_finite())
            .for_each(|x| *x = lo);
        return;
    }
    // Into the range (no row leaves the schema's [min, max]) by an increasing map that keeps
    // each class's mean, not by clamping, which would shift the means of the columns near
    // their bounds. Real-valued columns: `squeeze_into`. Integer columns: the shift that
    // keeps the mean, `clamp_keeping_mean`. Measured on the digits 8×8 demo (schema [0, 16],
    // ε = 5, 10 splits 80/20, logistic regression on the held-out 20 %): left linear, 0.894
    // with 52 % of the values outside [0, 16] and a 1-way TVD of 0.298; the shift 0.891,
    // none outside, TVD 0.210; a class-wise squeeze 0.848 (rounding a squeezed column
    // erases its order); plain clamping 0.866 (earlier splits).
    let map = |x: &mut [f64]| {
        if integer {
            clamp_keeping_mean(x, lo, hi)
        } else {
            squeeze_into(x, lo, hi)
        }
    };
    match classes {
        Some(c) if c.len() == v.len() => by_class(v, c, map),
        _ => map(v),
    }
}

/// A numeric column's decoded values as output: integer columns rounded, kept in f64 only
/// when an integer is beyond f32's exact integers.
fn numeric_output<'a>(mut v: Vec<f64>, start: usize, integer: bool) -> Decoded<'a> {
    const F32_EXACT_INTEGERS: f64 = 16_777_216.0;
    let wide = if integer {
        v.iter_mut().for_each(|x| *x = round_half_away(*x));
        v.iter().any(|x| x.abs() > F32_EXACT_INTEGERS)
    } else {
        false
    };
    if wide {
        Decoded::Column(DecodedColumn::Num {
            start,
            integer,
            wide: Some(v),
        })
    } else {
        Decoded::Narrow {
            start,
            integer,
            values: v.into_iter().map(|x| x as f32).collect(),
        }
    }
}

/// Maps a decoded numeric column into its range [lo, hi] (public, or DP: fixed before the
/// rows were made) — post-processing of the released rows: x ↦ m + s·(x − m), with m the
/// column's mean clamped into [lo + w/20, hi − w/20] (w = hi − lo) and the largest s ≤ 1 that
/// puts the 1 % and 99 % quantiles inside [lo, hi]; the values still outside (about 2 % at
/// most) are clamped. The map is increasing, so the order of the rows — how the column moves
/// with the others and with the class — is kept, and the mean is kept wherever it lies in the
/// inner range. Plain clamping would pile the noise's mass on the range's ends (measured on
/// Iris at ε = 5: it loses to this map), and m is kept off the ends so that s > 0: no column
/// collapses to one value. A non-finite value (which the noise cannot produce) becomes lo.
/// Columns without a finite range are left as they are.
pub fn squeeze_into(v: &mut [f64], lo: f64, hi: f64) {
    if !prepared_for_range(v, lo, hi) {
        return;
    }
    let w = hi - lo;
    let m = (v.iter().sum::<f64>() / v.len() as f64).clamp(lo + w / 20.0, hi - w / 20.0);
    let mut sorted = v.to_vec();
    sorted.sort_by(f64::total_cmp);
    let t = sorted.len();
    let q = |p: f64| sorted[((p * (t - 1) as f64).round() as usize).min(t - 1)];
    let (qlo, qhi) = (q(0.01), q(0.99));
    let mut s: f64 = 1.0;
    if qhi > hi {
        s = s.min((hi - m) / (qhi - m));
    }
    if qlo < lo {
        s = s.min((m - lo) / (m - qlo));
    }
    let s = if s.is_finite() { s.max(0.0) } else { 0.0 };
    // A value the map sends to an end arrives there up to rounding (0 as 2.8e-17): it is
    // written as the end.
    let tol = (w + lo.abs().max(hi.abs())) * 1e-12;
    for x in v.iter_mut() {
        let y = (m + s * (*x - m)).clamp(lo, hi);
        *x = if y - lo <= tol {
            lo
        } else if hi - y <= tol {
            hi
        } else {
            y
        };
    }
}

/// What the maps into a range ([`squeeze_into`], [`clamp_keeping_mean`]) do first: a
/// non-finite value becomes lo, and a one-point range (a constant column) makes the column
/// that constant. True when the map has work left: `v` is not empty and [lo, hi] is a finite
/// range wider than a point.
fn prepared_for_range(v: &mut [f64], lo: f64, hi: f64) -> bool {
    for x in v.iter_mut() {
        if !x.is_finite() {
            *x = lo;
        }
    }
    if lo.is_finite() && lo == hi {
        v.fill(lo);
        return false;
    }
    !v.is_empty() && lo.is_finite() && hi.is_finite() && hi > lo
}

/// Applies `map` to each class's values (`classes[i]`: row i's class, public: the released
/// label) separately, so that a map keeping the mean keeps every class's own mean — the
/// noise is what it moves, not the differences between classes.
fn by_class(v: &mut [f64], classes: &[u32], mut map: impl FnMut(&mut [f64])) {
    let k = classes.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (i, &c) in classes.iter().enumerate() {
        rows[c as usize].push(i);
    }
    let mut buf = Vec::new();
    for idx in rows.iter().filter(|r| !r.is_empty()) {
        buf.clear();
        buf.extend(idx.iter().map(|&i| v[i]));
        map(&mut buf);
        for (&i, &x) in idx.iter().zip(&buf) {
            v[i] = x;
        }
    }
}

/// Maps a decoded integer column into its range [lo, hi] (public, or DP: fixed before the
/// rows were made) by the projection that keeps its mean: x ↦ clamp(x + λ, lo, hi), with the
/// one λ that leaves the mean where it was — the mean first brought at least min(w/100, ½)
/// inside the range (w = hi − lo; half a unit at most, so that a wide range does not lift
/// a small mean far), so that no column collapses onto an end. Post-processing of the released
/// rows. Of all the maps into [lo, hi] that keep the mean, this one moves the values least
/// (in the sum of squares; it is the Euclidean projection onto that set), and it is
/// increasing, so the order of the rows is kept. Plain clamping would shift the mean of a
/// column near an end (the noise clamped on one side only); [`squeeze_into`] shrinks every
/// value toward the mean, which rounding to whole numbers then erases. The values clamped
/// onto an end pile there, as a column's real values often do (a pixel's 0). A non-finite
/// value (which the noise cannot produce) becomes lo; a one-point range is that constant;
/// columns without a finite range are left as they are.
pub fn clamp_keeping_mean(v: &mut [f64], lo: f64, hi: f64) {
    if !prepared_for_range(v, lo, hi) {
        return;
    }
    let w = hi - lo;
    let n = v.len() as f64;
    let margin = (w / 100.0).min(0.5);
    let target = (v.iter().sum::<f64>() / n).clamp(lo + margin, hi - margin);
    let mut y = v.to_vec();
    y.sort_by(f64::total_cmp);
    let mut prefix = Vec::with_capacity(y.len() + 1);
    prefix.push(0.0);
    let mut acc = 0.0;
    for &x in &y {
        acc += x;
        prefix.push(acc);
    }
    // The mean of clamp(y + λ, lo, hi), nondecreasing in λ: the values with y + λ ≤ lo give
    // lo, those with y + λ ≥ hi give hi, the others y + λ.
    let mean_at = |lam: f64| {
        let a = y.partition_point(|&x| x + lam <= lo);
        let b = y.partition_point(|&x| x + lam < hi);
        let inner = prefix[b] - prefix[a] + (b - a) as f64 * lam;
        (a as f64 * lo + inner + (y.len() - b) as f64 * hi) / n
    };
    // At lo − max y every value is clamped to lo (mean lo ≤ target), at hi − min y to hi
    // (mean hi ≥ target): bisect until the bracket is below w·1e-12 (far below the rounding
    // to whole numbers that follows) or stops shrinking.
    let (mut a, mut b) = (lo - y[y.len() - 1], hi - y[0]);
    loop {
        let m = 0.5 * (a + b);
        if b - a <= w * 1e-12 || m <= a || m >= b {
            break;
        }
        if mean_at(m) < target {
            a = m;
        } else {
            b = m;
        }
    }
    let lam = 0.5 * (a + b);
    for x in v.iter_mut() {
        *x = (*x + lam).clamp(lo, hi);
    }
}

/// Index of the largest entry of a one-hot segment (the first one on ties; 0 when empty).
fn argmax(seg: &[f32]) -> usize {
    let mut best = 0;
    for (j, &v) in seg.iter().enumerate() {
        if v > seg[best] {
            best = j;
        }
    }
    best
}

/// An empty vector with room for `rows` rows of `width` values, or the `samples` error that
/// says how much memory they would take: an allocation that fails is an error here, not an
/// abort (natively) or a trap (wasm32, where memory ends at 4 GiB).
pub(crate) fn room_for_rows<T>(rows: usize, width: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    match rows.checked_mul(width) {
        Some(len) if v.try_reserve_exact(len).is_ok() => Ok(v),
        _ => {
            let gb = rows as f64 * width as f64 * std::mem::size_of::<T>() as f64 / 1e9;
            Err(Error::param(
                "samples",
                rows,
                format!("{rows} synthetic rows of {width} encoded values need {gb:.1} GB of memory at once, more than is available here; ask for fewer rows"),
            ))
        }
    }
}

/// Multiplies every value by `scale` in f32 (restoring the rows' norm after row scaling;
/// nothing when 1), as every decoder of the synthetic rows does before decoding them.
fn rescale(v: &mut [f32], scale: f64) {
    if scale != 1.0 {
        let s = scale as f32;
        v.iter_mut().for_each(|x| *x *= s);
    }
}

/// The quotas of `rows` rows of a categorical column of `w` released levels with marginal
/// `m`: one per level for released proportions, one more (the pooled rare levels) when the
/// marginal has it, None (argmax) without proportions.
fn level_quotas(m: Option<&ColumnMarginal>, w: usize, rows: usize) -> Option<Vec<usize>> {
    match m {
        Some(ColumnMarginal::Categorical(p)) if p.len() == w || p.len() == w + 1 => {
            Some(crate::preprocess::quantile::quotas(p, rows))
        }
        _ => None,
    }
}

/// Each row's level index in a categorical column from its one-hot scores `seg`: the argmax
/// without `quota`; with one quota per level, levels in those numbers
/// ([`crate::preprocess::quantile::assign_with_quotas`]); with one more, the last (the pooled
/// rare levels, decoded as [`OTHER`]) takes the rows that stand out least for every released
/// level (score: minus the row's largest).
pub(crate) fn assign_levels(
    seg: crate::preprocess::quantile::Scores<'_>,
    quota: Option<Vec<usize>>,
) -> Vec<usize> {
    use crate::preprocess::quantile::{assign_with_quotas, Scores};
    let (t, w) = (seg.rows(), seg.levels());
    match quota {
        Some(q) if q.len() == w + 1 => {
            let mut ext = Vec::with_capacity(t * (w + 1));
            for i in 0..t {
                let row = seg.row(i);
                ext.extend_from_slice(row);
                ext.push(-row.iter().copied().fold(f32::NEG_INFINITY, f32::max));
            }
            assign_with_quotas(Scores::contiguous(&ext, w + 1), q)
        }
        Some(q) => assign_with_quotas(seg, q),
        None => (0..t).map(|i| argmax(seg.row(i))).collect(),
    }
}

/// Each row's level index in a categorical column of w released levels: 0..w, or w for the
/// pooled rare levels ([`assign_levels`]). Stored as narrow as w allows (a byte a row up to
/// 255 levels): the decoder holds every row's codes until the numeric columns are decoded,
/// 8 MB a column on a million rows instead of 32.
pub(crate) enum LevelCodes {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl LevelCodes {
    /// No codes yet, of the width a column of `levels` released levels needs.
    pub(crate) fn none(levels: usize) -> Self {
        if levels <= usize::from(u8::MAX) {
            Self::U8(Vec::new())
        } else if levels <= usize::from(u16::MAX) {
            Self::U16(Vec::new())
        } else {
            Self::U32(Vec::new())
        }
    }

    /// [`LevelCodes::none`] with room for `rows` codes; errs (naming `samples`) when they
    /// do not fit in memory.
    pub(crate) fn with_room(levels: usize, rows: usize) -> Result<Self> {
        Ok(match Self::none(levels) {
            Self::U8(_) => Self::U8(room_for_rows(rows, 1)?),
            Self::U16(_) => Self::U16(room_for_rows(rows, 1)?),
            Self::U32(_) => Self::U32(room_for_rows(rows, 1)?),
        })
    }

    /// The codes of a column of `levels` released levels.
    fn of(levels: usize, codes: &[usize]) -> Self {
        let mut c = Self::none(levels);
        c.extend(codes);
        c
    }

    /// Appends codes, each at most the levels the width was chosen for.
    pub(crate) fn extend(&mut self, codes: &[usize]) {
        debug_assert!(
            codes.iter().all(|&c| c <= self.max()),
            "a level code beyond its width"
        );
        match self {
            Self::U8(v) => v.extend(codes.iter().map(|&c| c as u8)),
            Self::U16(v) => v.extend(codes.iter().map(|&c| c as u16)),
            Self::U32(v) => v.extend(codes.iter().map(|&c| c as u32)),
        }
    }

    /// The largest code this width holds.
    fn max(&self) -> usize {
        match self {
            Self::U8(_) => usize::from(u8::MAX),
            Self::U16(_) => usize::from(u16::MAX),
            Self::U32(_) => u32::MAX as usize,
        }
    }

    /// Row i's code.
    fn get(&self, i: usize) -> usize {
        match self {
            Self::U8(v) => usize::from(v[i]),
            Self::U16(v) => usize::from(v[i]),
            Self::U32(v) => v[i] as usize,
        }
    }
}

/// A decoded column of a batch (see [`FeatureSpace::decode_batch`]), as its cells are
/// written.
enum DecodedColumn<'a> {
    /// The label: written from the class.
    Label,
    /// A numeric column: its values in its entry of the rows, or in `wide` (f64) when they
    /// do not fit f32 exactly.
    Num {
        start: usize,
        integer: bool,
        wide: Option<Vec<f64>>,
    },
    /// A categorical column: its released levels and each row's level index (none released:
    /// every cell is `(suppressed)`).
    Cat {
        levels: &'a [String],
        codes: LevelCodes,
    },
}

/// What decoding one column returns: the values to store back into the rows, or the column.
enum Decoded<'a> {
    Narrow {
        start: usize,
        integer: bool,
        values: Vec<f32>,
    },
    Column(DecodedColumn<'a>),
}

/// How [`FeatureSpace::decode_batch`] decodes a batch (every field public or DP).
#[derive(Debug, Clone, Copy)]
pub struct Decoding<'a> {
    /// The factor restoring the rows' norm after row scaling (1 when rows were not scaled).
    pub scale: f64,
    /// The released marginals, one entry per input column.
    pub marginals: &'a [Option<ColumnMarginal>],
    /// (class of each row, noise σ): shrink the rows toward their class's mean first.
    pub denoise: Option<(&'a [u32], f64)>,
    /// Each row's class (numeric columns are brought into their range class by class).
    pub classes: Option<&'a [u32]>,
}

impl FeatureSpace {
    /// Decodes a batch of T synthetic rows (row-major T × d, modified in place) as `how` says,
    /// keeping the released marginals (post-processing; see [`crate::preprocess::quantile`]):
    ///
    /// * with `denoise` = (class of each row, noise σ), rows are first shrunk toward their
    ///   class's mean ([`crate::preprocess::quantile::shrink_to_class_means`]);
    /// * every row is then multiplied by `scale` (restoring the norm after row scaling; 1
    ///   when rows were not scaled);
    /// * a numeric column with a marginal in `marginals` (one entry per input column) is
    ///   quantile-mapped onto it; one without is mapped back linearly and then into its range,
    ///   by [`squeeze_into`] (an integer column: by [`clamp_keeping_mean`], before it is
    ///   rounded) — class by class when `classes` gives each row's class — (without
    ///   `denoise`; with it — the image path, which clamps when it writes pixels — it is left
    ///   linear); a column whose range is one point is that constant;
    /// * a categorical column with level proportions gets levels in those proportions
    ///   ([`crate::preprocess::quantile::assign_in_proportion`]); one without takes the argmax.
    ///
    /// `label(i)` gives row i's label cell; `sink` gets each row's cells in order.
    pub fn decode_batch(
        &self,
        rows: &mut [f32],
        how: &Decoding<'_>,
        label: &(dyn Fn(usize) -> String + Sync),
        sink: &mut dyn FnMut(&[String]) -> Result<()>,
    ) -> Result<()> {
        let &Decoding {
            scale,
            marginals,
            denoise,
            classes,
        } = how;
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
        rescale(rows, scale);
        // A numeric column's cells read its (decoded) entry of `rows`.
        let cols = self.decode_columns(rows, t, marginals, denoise.is_some(), classes);
        write_columns(&cols, rows, d, t, label, sink)
    }
}

/// Writes the decoded columns' `t` rows to `sink`, cells in the columns' order: a numeric
/// column's values read from `rows` (row-major, `d` a row) at its `start` unless it holds
/// them wide, a categorical column's level names from its codes, the label from `label(i)`.
fn write_columns(
    cols: &[DecodedColumn<'_>],
    rows: &[f32],
    d: usize,
    t: usize,
    label: &(dyn Fn(usize) -> String + Sync),
    sink: &mut dyn FnMut(&[String]) -> Result<()>,
) -> Result<()> {
    let fill = |first: usize, cells: &mut [String]| {
        for (r, row_cells) in cells.chunks_exact_mut(cols.len()).enumerate() {
            let i = first + r;
            for (col, cell) in cols.iter().zip(row_cells.iter_mut()) {
                cell.clear();
                match col {
                    DecodedColumn::Label => cell.push_str(&label(i)),
                    DecodedColumn::Num {
                        start,
                        integer,
                        wide,
                    } => {
                        let x = match wide {
                            Some(w) => w[i],
                            None => f64::from(rows[i * d + start]),
                        };
                        write_number(cell, x, *integer)
                    }
                    DecodedColumn::Cat { levels, codes } => {
                        if levels.is_empty() {
                            cell.push_str(SUPPRESSED);
                        } else {
                            cell.push_str(levels.get(codes.get(i)).map_or(OTHER, String::as_str));
                        }
                    }
                }
            }
        }
    };
    crate::par::format_rows(t, cols.len(), fill, sink)
}

impl FeatureSpace {
    /// Decodes every column of the batch (see [`FeatureSpace::decode_batch`]): a numeric
    /// column's values are stored back into its entry of `rows` as f32, which loses nothing
    /// that is written (a non-integer column is written as the shortest text of `x as f32`,
    /// an integer column as `x.round()`, exact in f32 up to 2^24; a column that rounds
    /// beyond that keeps its f64 values), so the decoded table costs no memory beyond the
    /// rows themselves. Columns are decoded on all cores natively, a group at a time (the
    /// group's working memory bounded by a quarter of the rows'), one by one on wasm32; each
    /// column's result does not depend on the others, so the output is the same either way.
    fn decode_columns(
        &self,
        rows: &mut [f32],
        t: usize,
        marginals: &[Option<ColumnMarginal>],
        denoised: bool,
        classes: Option<&[u32]>,
    ) -> Vec<DecodedColumn<'_>> {
        let d = self.dim;
        // Bytes a column's decoding holds at its peak (its values, their sort keys and
        // order, the result; a categorical column's candidates, 4 bytes each, and with
        // pooled rare levels a copy of its scores, read in place otherwise).
        let cost = |codec: &ColumnCodec| match codec {
            ColumnCodec::Label => 0,
            ColumnCodec::Numeric { .. } => t.saturating_mul(28),
            ColumnCodec::Categorical { levels, .. } => {
                t.saturating_mul(levels.len() + 4).saturating_mul(8)
            }
        };
        // On wasm32 the columns are decoded one at a time anyway: groups of one hold least.
        let budget = if cfg!(target_arch = "wasm32") {
            0
        } else {
            rows.len().saturating_mul(std::mem::size_of::<f32>()) / 4
        };
        let mut outs: Vec<DecodedColumn<'_>> = Vec::with_capacity(self.codecs.len());
        let mut j = 0;
        while j < self.codecs.len() {
            // The next group: at least one column, then as many as fit the budget.
            let mut end = j + 1;
            let mut used = cost(&self.codecs[j]);
            while end < self.codecs.len() && used.saturating_add(cost(&self.codecs[end])) <= budget
            {
                used += cost(&self.codecs[end]);
                end += 1;
            }
            let view: &[f32] = rows;
            let group = crate::par::map_range(j..end, |k| {
                let m = marginals.get(k).and_then(Option::as_ref);
                Self::decode_column(&self.codecs[k], view, t, d, m, denoised, classes)
            });
            for col in group {
                outs.push(match col {
                    Decoded::Narrow {
                        start,
                        integer,
                        values,
                    } => {
                        for (i, x) in values.into_iter().enumerate() {
                            rows[i * d + start] = x;
                        }
                        DecodedColumn::Num {
                            start,
                            integer,
                            wide: None,
                        }
                    }
                    Decoded::Column(c) => c,
                });
            }
            j = end;
        }
        outs
    }

    /// One column of [`FeatureSpace::decode_columns`].
    fn decode_column<'a>(
        codec: &'a ColumnCodec,
        rows: &[f32],
        t: usize,
        d: usize,
        m: Option<&ColumnMarginal>,
        denoised: bool,
        classes: Option<&[u32]>,
    ) -> Decoded<'a> {
        use crate::preprocess::quantile::{quantile_map_monotone, Scores};
        match codec {
            ColumnCodec::Label => Decoded::Column(DecodedColumn::Label),
            ColumnCodec::Numeric {
                offset,
                scale: sc,
                lo,
                hi,
                integer,
                start,
            } => {
                let start = *start;
                let feature = |i: usize| rows[i * d + start];
                let value = |x: f32| offset + f64::from(x) * sc;
                // Onto the marginal, the values are mapped as they are made (sc > 0, so they
                // follow the features' order: see `quantile_map_monotone`).
                let v = match m {
                    Some(ColumnMarginal::Numeric(nm)) => {
                        quantile_map_monotone(t, feature, value, nm)
                    }
                    _ => {
                        let mut v: Vec<f64> = (0..t).map(|i| value(feature(i))).collect();
                        into_range(&mut v, (*lo, *hi), *integer, denoised, classes);
                        v
                    }
                };
                numeric_output(v, start, *integer)
            }
            ColumnCodec::Categorical { levels, start, .. } => {
                let w = levels.len();
                if w == 0 {
                    return Decoded::Column(DecodedColumn::Cat {
                        levels,
                        codes: LevelCodes::none(0),
                    });
                }
                // The segment read in place (a copy would hold t·w more values).
                let seg = Scores::segment(&rows[..t * d], d, *start, w);
                let codes = LevelCodes::of(w, &assign_levels(seg, level_quotas(m, w, t)));
                Decoded::Column(DecodedColumn::Cat { levels, codes })
            }
        }
    }

    /// Decodes one synthetic feature row straight into CSV bytes (one record, `\n`
    /// terminated), exactly as [`FeatureSpace::decode_row`] followed by `csv::Writer`'s
    /// `write_record` (default settings: `,`, quotes only where needed, `""` inside quotes)
    /// would write it, without a `String` per cell.
    pub fn write_row_csv(&self, row: &[f32], label: &str, out: &mut Vec<u8>) {
        for (j, codec) in self.codecs.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            match codec {
                ColumnCodec::Label => put_csv_field(out, label),
                ColumnCodec::Numeric {
                    offset,
                    scale,
                    lo,
                    hi,
                    integer,
                    start,
                } => {
                    let x = (offset + f64::from(row[*start]) * scale).clamp(*lo, *hi);
                    // Number text never holds a delimiter, quote or line break.
                    put_number(out, x, *integer);
                }
                ColumnCodec::Categorical { levels, start, .. } => {
                    if levels.is_empty() {
                        put_csv_field(out, SUPPRESSED);
                    } else {
                        put_csv_field(out, &levels[argmax(&row[*start..*start + levels.len()])]);
                    }
                }
            }
        }
        out.push(b'\n');
    }
}

/// Appends one CSV field as `csv::Writer` does by default: quoted (with `"` doubled) when it
/// holds `,`, `"`, `\r` or `\n`.
pub fn put_csv_field(out: &mut Vec<u8>, field: &str) {
    let b = field.as_bytes();
    if b.iter().any(|&c| matches!(c, b',' | b'"' | b'\r' | b'\n')) {
        out.push(b'"');
        for &c in b {
            if c == b'"' {
                out.push(b'"');
            }
            out.push(c);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(b);
    }
}

/// Appends a decoded number: integers without a fraction, others as the shortest f32 text.
///
/// The text is exactly what `format!("{}", r as i64)` / `format!("{}", x as f32)` give (the
/// layout of Rust's `Display`: no exponent, no trailing `.0`), made by `itoa` and by `ryu`'s
/// shortest round-trip digits re-laid out ([`push_f32_display`]), without the formatting
/// machinery.
pub fn write_number(buf: &mut String, x: f64, integer: bool) {
    put_number(buf, x, integer);
}

/// Where number text goes: a `String` (cells) or a `Vec<u8>` (CSV bytes).
pub trait TextSink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl TextSink for String {
    #[inline]
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl TextSink for Vec<u8> {
    #[inline]
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

/// `x.round()` (halves away from zero; ±0, ±∞ and NaN kept), from [`crate::math::trunc`]:
/// `round` is a libm call on wasm32 (3 % of a 60k MNIST synthesis in Node's profile), and so
/// is `f64::trunc` on x86-64's baseline (2.6 % of a Fashion-MNIST synthesis natively).
/// `x − trunc(x)` is exact for every finite f64.
#[inline]
pub fn round_half_away(x: f64) -> f64 {
    let r = crate::math::trunc(x);
    if (x - r).abs() >= 0.5 {
        r + x.signum()
    } else {
        r
    }
}

/// [`write_number`] into any [`TextSink`].
pub fn put_number<S: TextSink + ?Sized>(buf: &mut S, x: f64, integer: bool) {
    if integer {
        let r = round_half_away(x);
        if r.abs() < 9.0e15 {
            // `r as i64` is exact here; "-0" cannot occur.
            buf.put(itoa::Buffer::new().format(r as i64));
        } else {
            buf.put(&format!("{r:.0}"));
        }
    } else {
        push_f32_display(buf, x as f32);
    }
}

/// Appends `format!("{}", v)` for an f32: the shortest decimal that round-trips (ryu's
/// digits, which are the same shortest-nearest digits as std's), laid out as `Display` does:
/// plain decimal notation, no exponent, no trailing `.0` ("1", "0.1", "0.0000001",
/// "100000000000000000000", "-0"). Non-finite values fall back to std ("NaN", "inf", "-inf").
pub fn push_f32_display<S: TextSink + ?Sized>(buf: &mut S, v: f32) {
    if !v.is_finite() {
        buf.put(&v.to_string());
        return;
    }
    let mut rb = ryu::Buffer::new();
    let s = rb.format_finite(v).as_bytes();
    // ryu writes [-]D[.DDD][eX] or [-]DDD.DDD / 0.000DDD; split into sign, digits (with the
    // position of the decimal point) and the exponent.
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let (mant, exp) = match s.iter().position(|&b| b == b'e') {
        Some(i) => {
            let e = std::str::from_utf8(&s[i + 1..])
                .ok()
                .and_then(|t| t.parse::<i32>().ok())
                .unwrap_or(0);
            (&s[..i], e)
        }
        None => (s, 0),
    };
    // digits without the point; `point` = digits before the point.
    let mut digits = [0u8; 48];
    let mut n = 0usize;
    let mut point = mant.len() as i32;
    for (i, &b) in mant.iter().enumerate() {
        if b == b'.' {
            point = i as i32;
        } else if n < digits.len() {
            digits[n] = b;
            n += 1;
        }
    }
    // Strip leading zeros (moving the point) and trailing zeros.
    let mut first = 0usize;
    while first < n && digits[first] == b'0' {
        first += 1;
        point -= 1;
    }
    let mut last = n;
    while last > first && digits[last - 1] == b'0' {
        last -= 1;
    }
    if first == last {
        buf.put(if neg { "-0" } else { "0" });
        return;
    }
    let ds = &digits[first..last];
    if exact_digits(v) == Some(ds.len() + 1) {
        // A tie: v lies exactly halfway between two shortest candidates. ryu rounds the
        // tie to even, std away from zero; take std's (rare: v must have a short exact
        // decimal expansion).
        buf.put(&v.to_string());
        return;
    }
    if neg {
        buf.put("-");
    }
    let point = point + exp;
    // All bytes are ASCII digits.
    let ds = std::str::from_utf8(ds).unwrap_or("0");
    if point <= 0 {
        buf.put("0.");
        for _ in 0..(-point) {
            buf.put("0");
        }
        buf.put(ds);
    } else if (point as usize) < ds.len() {
        buf.put(&ds[..point as usize]);
        buf.put(".");
        buf.put(&ds[point as usize..]);
    } else {
        buf.put(ds);
        for _ in 0..(point as usize - ds.len()) {
            buf.put("0");
        }
    }
}

/// The number of significant decimal digits of the exact value of a finite nonzero f32 when
/// it is at most 18 (every f32 is a finite decimal); `None` when longer or zero.
fn exact_digits(v: f32) -> Option<usize> {
    let bits = v.to_bits() & 0x7fff_ffff;
    let biased = (bits >> 23) as i32;
    let frac = bits & 0x7f_ffff;
    let (mut m, mut e2) = if biased == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, biased - 150)
    };
    if m == 0 {
        return None;
    }
    while m & 1 == 0 {
        m >>= 1;
        e2 += 1;
    }
    let mut val: u128 = if e2 >= 0 {
        u128::from(m) << e2
    } else if e2 >= -20 {
        // m · 5^k / 10^k: odd, so no trailing zeros; 2^24 · 5^20 < 2^71.
        u128::from(m) * 5u128.pow((-e2) as u32)
    } else {
        return None;
    };
    while val % 10 == 0 {
        val /= 10;
    }
    let mut n = 0;
    while val > 0 {
        val /= 10;
        n += 1;
    }
    (n <= 18).then_some(n)
}

/// [`write_number`] into a fresh string.
pub fn format_number(x: f64, integer: bool) -> String {
    let mut s = String::new();
    write_number(&mut s, x, integer);
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn real_columns_squeezed_by_class_keep_each_class_mean() {
        // Two classes far apart with wide noise: squeezing them together would pull both
        // means to the middle; by class, each keeps its own (inside the range).
        let mut v = Vec::new();
        let mut c = Vec::new();
        for i in 0..200 {
            let noise = (f64::from(i % 21) - 10.0) * 0.6;
            let (cls, centre) = if i % 2 == 0 { (0, 1.5) } else { (1, 5.5) };
            v.push(centre + noise);
            c.push(cls);
        }
        let v0 = v.clone();
        into_range(&mut v, (1.0, 7.0), false, false, Some(&c));
        for k in 0..2u32 {
            let xs: Vec<f64> = (0..200).filter(|&i| c[i] == k).map(|i| v[i]).collect();
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            // The class's input mean (inside [lo + w/20, hi − w/20] here) is kept.
            let input: Vec<f64> = (0..200).filter(|&i| c[i] == k).map(|i| v0[i]).collect();
            let want = input.iter().sum::<f64>() / input.len() as f64;
            assert!((1.3..=6.7).contains(&want), "{want}");
            assert!(
                (mean - want).abs() < 0.05,
                "class {k}: mean {mean} vs {want}"
            );
            assert!(xs.iter().all(|x| (1.0..=7.0).contains(x)));
            assert!(xs.iter().any(|&x| x != xs[0]));
        }
        // Within a class the order is kept.
        for a in 0..200 {
            for b in 0..200 {
                if c[a] == c[b] && v0[a] < v0[b] {
                    assert!(v[a] <= v[b]);
                }
            }
        }
        // The pooled squeeze, for contrast, moves class 0's mean by more than 0.3.
        let mut p = v0.clone();
        squeeze_into(&mut p, 1.0, 7.0);
        let m0 = (0..200).filter(|&i| c[i] == 0).map(|i| p[i]).sum::<f64>() / 100.0;
        let in0 = (0..200).filter(|&i| c[i] == 0).map(|i| v0[i]).sum::<f64>() / 100.0;
        assert!((m0 - in0).abs() > 0.3, "{m0} vs {in0}");
    }

    /// A value the squeeze sends to an end of the range is written as that end, not as the
    /// end plus a rounding error (Iris at ε = 5, seed 24, wrote a petal width of
    /// 0.000000000000000027755576 for 0): over 3,000 random columns on ranges whose ends are
    /// round numbers, no value lies within 1e-9 of an end without being the end.
    #[test]
    fn squeeze_into_lands_exactly_on_the_ends() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(24);
        for case in 0..3000 {
            let lo = f64::from(rng.gen_range(-3i32..3)) * 0.5;
            let hi = lo + f64::from(rng.gen_range(1i32..20)) * 0.1;
            let t = rng.gen_range(20..200);
            let v0: Vec<f64> = (0..t)
                .map(|_| lo + (hi - lo) * rng.gen_range(-0.6..1.6))
                .collect();
            let mut v = v0.clone();
            squeeze_into(&mut v, lo, hi);
            for &x in &v {
                let near_lo = x > lo && x - lo < 1e-9;
                let near_hi = x < hi && hi - x < 1e-9;
                assert!(!near_lo && !near_hi, "case {case}: {x:e} on [{lo}, {hi}]");
            }
        }
    }

    #[test]
    fn squeeze_into_keeps_range_order_and_mean_and_never_collapses() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for case in 0..200 {
            let (lo, hi) = (rng.gen_range(-5.0..5.0), 0.0);
            let hi = lo + rng.gen_range(0.5..10.0) + hi;
            let centre = rng.gen_range(lo - 3.0..hi + 3.0);
            let spread = rng.gen_range(0.01..20.0);
            let t = rng.gen_range(2..300);
            let v0: Vec<f64> = (0..t)
                .map(|_| centre + spread * (rng.gen::<f64>() - 0.5) * 4.0)
                .collect();
            let mut v = v0.clone();
            squeeze_into(&mut v, lo, hi);
            for x in &v {
                assert!(
                    (lo..=hi).contains(x),
                    "case {case}: {x} outside [{lo}, {hi}]"
                );
            }
            // Order kept (non-decreasing map).
            for a in 0..t {
                for b in 0..t {
                    if v0[a] < v0[b] {
                        assert!(v[a] <= v[b], "case {case}: order broken");
                    }
                }
            }
            // Never collapsed when the input was not.
            let distinct_in = v0.iter().any(|&x| x != v0[0]);
            let distinct_out = v.iter().any(|&x| x != v[0]);
            if distinct_in && t >= 3 {
                assert!(distinct_out, "case {case}: collapsed {v:?}");
            }
        }
        // Already inside: unchanged. Mean kept when only scaling was needed.
        let mut v = vec![1.0, 2.0, 3.0];
        squeeze_into(&mut v, 0.0, 10.0);
        assert_eq!(v, [1.0, 2.0, 3.0]);
        let mut v: Vec<f64> = (0..101)
            .map(|i| 5.0 + (f64::from(i) - 50.0) * 0.2)
            .collect();
        squeeze_into(&mut v, 0.0, 10.0);
        let mean = v.iter().sum::<f64>() / 101.0;
        assert!((mean - 5.0).abs() < 1e-9, "{mean}");
        assert!(v[0] >= 0.0 && v[100] <= 10.0 && v[3] > v[2]);
        // A column whose mean lies at the range's end (an always-zero pixel plus noise).
        let mut v: Vec<f64> = (0..50).map(|i| f64::from(i % 7) - 3.0).collect();
        squeeze_into(&mut v, 0.0, 16.0);
        assert!(v.iter().all(|x| (0.0..=16.0).contains(x)));
        assert!(v.iter().any(|&x| x != v[0]), "collapsed: {v:?}");
        // Non-finite inputs become lo; an infinite range leaves the values.
        let mut v = vec![f64::NAN, 1.0, 2.0];
        squeeze_into(&mut v, 0.0, 4.0);
        assert!(v.iter().all(|x| x.is_finite() && (0.0..=4.0).contains(x)));
        let mut v = vec![-7.0, 9.0];
        squeeze_into(&mut v, f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!(v, [-7.0, 9.0]);
    }

    use super::*;

    /// `round_half_away` is `f64::round`, bit for bit, on halves, near-halves, ±0, large and
    /// non-finite values, and random values at every scale.
    #[test]
    fn round_half_away_is_std_round() {
        use rand::{Rng, SeedableRng};
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            4503599627370497.0,
            -9007199254740993.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        for _ in 0..100_000 {
            let scale = 2f64.powi(rng.gen_range(-4..60));
            xs.push(rng.gen_range(-1.0..1.0) * scale);
            let k = rng.gen_range(-1000i64..1000) as f64;
            xs.push(k + 0.5);
            xs.push(k - 0.5);
        }
        for x in xs {
            assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "{x:e}");
        }
    }

    /// Decodes one numeric column (range [lo, hi], integer or not) from feature values `u`
    /// through `decode_batch` without marginals, as the table path does.
    fn decode_numeric(u: &[f32], lo: f64, hi: f64, integer: bool) -> Vec<f64> {
        let fs = FeatureSpace {
            names: vec!["x".into()],
            codecs: vec![ColumnCodec::Numeric {
                offset: lo,
                scale: if hi > lo { hi - lo } else { 1.0 },
                lo,
                hi,
                integer,
                start: 0,
            }],
            dim: 1,
        };
        let mut rows = u.to_vec();
        let mut out = Vec::new();
        fs.decode_batch(
            &mut rows,
            &Decoding {
                scale: 1.0,
                marginals: &[None],
                denoise: None,
                classes: None,
            },
            &|_| String::new(),
            &mut |c| {
                out.push(c[0].parse::<f64>().unwrap());
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn decoded_integer_columns_stay_in_range_keep_their_mean_and_are_rounded() {
        // Linear values −64 .. 63.68 (offset 0, scale 16), mean −0.16, far outside [0, 16]:
        // brought inside by the shift that keeps the mean (the mean first raised to
        // w/100 = 0.16), then rounded.
        let u: Vec<f32> = (0..400).map(|i| (i as f32 - 200.0) / 50.0).collect(); // −4 .. 4
        let v = decode_numeric(&u, 0.0, 16.0, true);
        assert!(v
            .iter()
            .all(|x| x.fract() == 0.0 && (0.0..=16.0).contains(x)));
        assert!(v.windows(2).all(|p| p[0] <= p[1]), "the order is kept");
        // Before rounding the mean is 0.16; rounding moves each value by at most ½.
        let mean = v.iter().sum::<f64>() / 400.0;
        assert!((mean - 0.16).abs() <= 0.5, "{mean}");
        // Most rows pile on 0 (the noise's lower half and more), the top ones keep their
        // spread: not one value.
        assert!(v[..300].iter().all(|&x| x == 0.0));
        assert!(v[399] > 0.0);
        // Left linear (as before this map), 349 of the 400 values would lie outside [0, 16].
        let linear: Vec<f64> = u.iter().map(|&x| f64::from(x) * 16.0).collect();
        assert_eq!(
            linear.iter().filter(|x| !(0.0..=16.0).contains(*x)).count(),
            349
        );
    }

    #[test]
    fn clamp_keeping_mean_keeps_the_mean_the_range_and_the_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for case in 0..200 {
            let lo: f64 = rng.gen_range(-5.0..5.0);
            // Ranges from half a unit to 500 (the margin min(w/100, ½) is w/100 below 50).
            let hi = lo + rng.gen_range(0.5f64..500.0).min(rng.gen_range(0.5..500.0));
            let w = hi - lo;
            let n = rng.gen_range(1..300);
            // Values around a centre anywhere from below lo to above hi, with a spread up
            // to 3 ranges: most cases leave the range on one side or both.
            let centre = lo + rng.gen_range(-0.5..1.5) * w;
            let spread = rng.gen_range(0.0..3.0) * w;
            let v0: Vec<f64> = (0..n)
                .map(|_| centre + spread * (rng.gen::<f64>() - 0.5))
                .collect();
            let mut v = v0.clone();
            clamp_keeping_mean(&mut v, lo, hi);
            assert!(v.iter().all(|x| (lo..=hi).contains(x)), "case {case}");
            let margin = (w / 100.0).min(0.5);
            let want = (v0.iter().sum::<f64>() / n as f64).clamp(lo + margin, hi - margin);
            let mean = v.iter().sum::<f64>() / n as f64;
            assert!(
                (mean - want).abs() <= 1e-9 * w.max(1.0),
                "case {case}: {mean} vs {want}"
            );
            for i in 0..n {
                for j in 0..n {
                    if v0[i] < v0[j] {
                        assert!(v[i] <= v[j], "case {case}: order");
                    }
                }
            }
            // A shift: the values that stay inside keep their differences.
            let inside: Vec<usize> = (0..n).filter(|&i| v[i] > lo && v[i] < hi).collect();
            if let (Some(&i), Some(&j)) = (inside.first(), inside.last()) {
                let d = (v[j] - v[i]) - (v0[j] - v0[i]);
                assert!(d.abs() <= 1e-9 * w.max(1.0), "case {case}: {d}");
            }
            // Never one value when the input has two.
            if n > 1 && spread > 0.0 && v0.iter().any(|&x| x != v0[0]) {
                assert!(v.iter().any(|&x| x != v[0]), "case {case}: collapsed");
            }
        }
        // Edges: a non-finite value becomes lo; a one-point range is the constant; an
        // infinite range leaves the values; nothing to do on an empty column.
        let mut v = vec![f64::NAN, 3.0, 5.0];
        clamp_keeping_mean(&mut v, 0.0, 10.0);
        assert!(v.iter().all(|x| (0.0..=10.0).contains(x)) && v[0] <= v[1]);
        let mut v = vec![-1.0, 9.0];
        clamp_keeping_mean(&mut v, 4.0, 4.0);
        assert_eq!(v, [4.0, 4.0]);
        let mut v = vec![-1.0, 9.0];
        clamp_keeping_mean(&mut v, f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!(v, [-1.0, 9.0]);
        clamp_keeping_mean(&mut [], 0.0, 1.0);
    }

    #[test]
    fn integer_columns_keep_each_class_mean() {
        // Two classes, one near the bottom of [0, 16] (mean 1), one near the top (mean 14),
        // with noise of ±6: pooled, one shift could keep only the overall mean; class by
        // class each keeps its own, and plain clamping would raise class 0's to about 2.5.
        let mut v = Vec::new();
        let mut c = Vec::new();
        for i in 0..400 {
            let noise = (f64::from(i % 25) - 12.0) * 0.5;
            let (cls, centre) = if i % 2 == 0 { (0, 1.0) } else { (1, 14.0) };
            v.push(centre + noise);
            c.push(cls);
        }
        let v0 = v.clone();
        by_class(&mut v, &c, |x| clamp_keeping_mean(x, 0.0, 16.0));
        for k in 0..2u32 {
            let mean = |x: &[f64]| {
                let xs: Vec<f64> = (0..400).filter(|&i| c[i] == k).map(|i| x[i]).collect();
                xs.iter().sum::<f64>() / xs.len() as f64
            };
            assert!((mean(&v) - mean(&v0)).abs() < 1e-9, "class {k}");
            let clamped: Vec<f64> = v0.iter().map(|x| x.clamp(0.0, 16.0)).collect();
            assert!(
                (mean(&clamped) - mean(&v0)).abs() > 0.5,
                "class {k}: clamping shifts it"
            );
        }
        assert!(v.iter().all(|x| (0.0..=16.0).contains(x)));
    }

    /// 70 numeric columns (every third integer, one with the range [0, 1e9], every fourth
    /// with a marginal) and 4 categorical ones (with proportions, without, with no level),
    /// after the label; their marginals and the encoded dimension.
    pub(super) fn mixed_codecs() -> (Vec<ColumnCodec>, Vec<Option<ColumnMarginal>>, usize) {
        use crate::preprocess::quantile::NumericMarginal;
        let mut codecs = vec![ColumnCodec::Label];
        let mut marginals: Vec<Option<ColumnMarginal>> = vec![None];
        let mut start = 0;
        for j in 0..70 {
            let integer = j % 3 == 0;
            let (lo, hi) = if j == 6 {
                (0.0, 1e9)
            } else {
                (-2.0, 40.0 + j as f64)
            };
            codecs.push(ColumnCodec::Numeric {
                offset: lo,
                scale: hi - lo,
                lo,
                hi,
                integer,
                start,
            });
            marginals.push((j % 4 == 1).then(|| {
                ColumnMarginal::Numeric(NumericMarginal {
                    edges: vec![-2.0, 3.0, 10.0, 40.0],
                    probs: vec![0.2, 0.5, 0.3],
                })
            }));
            start += 1;
        }
        for (w, m) in [
            (4, Some(vec![0.1, 0.2, 0.3, 0.4])),
            (3, Some(vec![0.5, 0.2, 0.2, 0.1])),
            (5, None),
            (0, None),
        ] {
            codecs.push(ColumnCodec::Categorical {
                levels: (0..w).map(|l| format!("L{l}")).collect(),
                slot_of_code: Vec::new(),
                start,
            });
            marginals.push(m.map(ColumnMarginal::Categorical));
            start += w;
        }
        (codecs, marginals, start)
    }

    /// `decode_batch` of `rows` (copied) without denoising, every row's cells; row i's class
    /// is `classes[i]` and its label cell `y{class}`.
    pub(super) fn decode_cells(
        fs: &FeatureSpace,
        rows: &[f32],
        marginals: &[Option<ColumnMarginal>],
        classes: &[u32],
        scale: f64,
    ) -> Vec<Vec<String>> {
        let mut rows = rows.to_vec();
        let mut out: Vec<Vec<String>> = Vec::new();
        fs.decode_batch(
            &mut rows,
            &Decoding {
                scale,
                marginals,
                denoise: None,
                classes: Some(classes),
            },
            &|i| format!("y{}", classes[i]),
            &mut |c| {
                out.push(c.to_vec());
                Ok(())
            },
        )
        .unwrap();
        out
    }

    /// The whole batch, decoded with its columns in parallel groups on any number of
    /// threads, is each column decoded alone, cell for cell: numeric columns with and without
    /// a marginal, integer and not, one beyond f32's exact integers, categorical columns with
    /// proportions (with and without the pooled level), without, and with no level.
    #[test]
    fn batch_decoding_is_each_column_decoded_alone() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let (t, k) = (700usize, 3u32);
        let (codecs, marginals, d) = mixed_codecs();
        let names: Vec<String> = (0..codecs.len()).map(|j| format!("c{j}")).collect();
        let fs = FeatureSpace {
            names,
            codecs: codecs.clone(),
            dim: d,
        };
        let rows: Vec<f32> = (0..t * d).map(|_| rng.gen_range(-0.3f32..1.3)).collect();
        let classes: Vec<u32> = (0..t).map(|i| i as u32 % k).collect();
        let decode = |fs: &FeatureSpace, rows: &[f32], m: &[Option<ColumnMarginal>]| {
            decode_cells(fs, rows, m, &classes, 1.0)
        };
        // Each column alone, in a space of its own.
        let mut want: Vec<Vec<String>> = vec![Vec::new(); t];
        for (j, codec) in codecs.iter().enumerate() {
            // The same codec, its features moved to the front.
            let mut alone = codec.clone();
            let (width, from) = match &mut alone {
                ColumnCodec::Label => (0, 0),
                ColumnCodec::Numeric { start, .. } => (1, std::mem::replace(start, 0)),
                ColumnCodec::Categorical { levels, start, .. } => {
                    (levels.len(), std::mem::replace(start, 0))
                }
            };
            // A zero-width column still needs one feature to make a batch of rows.
            let dim = width.max(1);
            let one = FeatureSpace {
                names: vec!["x".into()],
                codecs: vec![alone],
                dim,
            };
            let mut sub = vec![0f32; t * dim];
            for i in 0..t {
                sub[i * dim..i * dim + width]
                    .copy_from_slice(&rows[i * d + from..i * d + from + width]);
            }
            let cells = decode(&one, &sub, &marginals[j..=j]);
            for (w, c) in want.iter_mut().zip(cells) {
                w.push(c[0].clone());
            }
        }
        assert!(
            want.iter()
                .any(|r| r[7].parse::<f64>().unwrap() > 16_777_216.0),
            "no value beyond f32's exact integers"
        );
        for threads in [1, 3] {
            let got = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| decode(&fs, &rows, &marginals));
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn a_one_point_range_decodes_to_its_constant() {
        // A column that is 0 in every record (range [0, 0]): noise must not come out as ±1.6.
        let u: Vec<f32> = (0..50).map(|i| (i as f32 - 25.0) / 10.0).collect();
        for integer in [false, true] {
            let v = decode_numeric(&u, 0.0, 0.0, integer);
            assert!(v.iter().all(|&x| x == 0.0), "{integer}: {v:?}");
        }
    }

    /// Level codes take the narrowest width that holds every code of their column (its
    /// levels, and one more for the pooled rare levels) and give each row's code back.
    #[test]
    fn level_codes_are_as_narrow_as_their_levels_allow() {
        let width = |c: &LevelCodes| match c {
            LevelCodes::U8(_) => 8,
            LevelCodes::U16(_) => 16,
            LevelCodes::U32(_) => 32,
        };
        for (levels, bits) in [
            (1, 8),
            (255, 8),
            (256, 16),
            (65_535, 16),
            (65_536, 32),
            (1 << 24, 32),
        ] {
            let codes = [0, 1, levels / 2, levels - 1, levels];
            let mut grown = LevelCodes::with_room(levels, 5).unwrap();
            grown.extend(&codes[..2]);
            grown.extend(&codes[2..]);
            for c in [LevelCodes::of(levels, &codes), grown] {
                assert_eq!(width(&c), bits, "{levels} levels");
                let back: Vec<usize> = (0..codes.len()).map(|i| c.get(i)).collect();
                assert_eq!(back, codes, "{levels} levels");
            }
        }
    }

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

    /// The fast path must give exactly std's `Display` text: structured values (powers of
    /// ten, integers, tiny and huge magnitudes, ±0, subnormals, non-finite) and 2,000,000
    /// random bit patterns.
    #[test]
    fn f32_text_equals_std_display() {
        use rand::{RngCore, SeedableRng};
        let check = |v: f32| {
            let mut a = String::new();
            push_f32_display(&mut a, v);
            assert_eq!(a, format!("{v}"), "bits {:#x}", v.to_bits());
        };
        for v in [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1e-7,
            1.5e-7,
            1e20,
            -3.4028235e38,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
            123456.0,
            1234567.0,
            16777216.0,
            0.3,
            0.300_000_03,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ] {
            check(v);
        }
        for e in -45..=38 {
            check(10f32.powi(e));
            check(-1.25 * 10f32.powi(e));
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
        for _ in 0..2_000_000 {
            check(f32::from_bits(rng.next_u32()));
        }
        for i in -100_000..100_000 {
            check(i as f32 / 64.0);
        }
    }

    #[test]
    fn integer_text_equals_std_display() {
        for x in [
            0.0, -0.2, 0.5, -0.5, 2.6, -1e15, 8.9e15, 9.1e15, -9.1e15, 1e300,
        ] {
            let r = f64::round(x);
            let want = if r.abs() < 9.0e15 {
                format!("{}", r as i64)
            } else {
                format!("{r:.0}")
            };
            assert_eq!(format_number(x, true), want, "{x}");
        }
    }

    /// `write_row_csv` gives the same bytes as `decode_row` + `csv::Writer::write_record`,
    /// including labels and levels that need quoting and non-integer columns.
    #[test]
    fn csv_row_bytes_equal_the_csv_writer() {
        use rand::{Rng, SeedableRng};
        let mut s = space();
        s.codecs.push(ColumnCodec::Numeric {
            offset: -3.0,
            scale: 0.37,
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            integer: false,
            start: 3,
        });
        s.codecs.push(ColumnCodec::Categorical {
            levels: vec![
                "a,b".into(),
                "say \"hi\"".into(),
                "line\nbreak".into(),
                "cr\r".into(),
            ],
            slot_of_code: vec![],
            start: 4,
        });
        s.codecs.push(ColumnCodec::Categorical {
            levels: vec![],
            slot_of_code: vec![],
            start: 8,
        });
        s.names.extend(["z".into(), "w".into(), "gone".into()]);
        s.dim = 8;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut want = csv::Writer::from_writer(Vec::new());
        let mut got = Vec::new();
        let mut cells = Vec::new();
        for i in 0..2000 {
            let row: Vec<f32> = (0..8).map(|_| rng.gen_range(-5.0f32..5.0)).collect();
            let label = ["y", "", "x,y", "q\"", "plain"][i % 5];
            s.decode_row(&row, label, &mut cells);
            want.write_record(&cells).unwrap();
            s.write_row_csv(&row, label, &mut got);
        }
        let want = want.into_inner().unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }

    #[test]
    fn number_formatting() {
        assert_eq!(format_number(2.6, true), "3");
        assert_eq!(format_number(-0.2, true), "0");
        assert_eq!(format_number(0.1, false), "0.1");
    }

    /// The blocks `map_encoded_blocks` hands over, laid end to end, are the matrix `encode`
    /// builds (mixed columns, a label, a category the space does not release, a last block
    /// shorter than the others).
    #[test]
    fn encoded_blocks_are_the_encoded_matrix() {
        use crate::data::{read_csv_bytes, CsvOptions};
        let mut csv = String::from("x,c,y,z\n");
        for i in 0..203 {
            let c = ["a", "b", "c"][i % 3];
            csv.push_str(&format!(
                "{},{c},{},{}\n",
                i % 17,
                i % 2,
                f64::from(i as u32) * 0.37
            ));
        }
        let table = read_csv_bytes(
            csv.as_bytes(),
            &CsvOptions {
                label: Some("y".into()),
                ..CsvOptions::default()
            },
        )
        .unwrap();
        let space = FeatureSpace {
            names: table.names.clone(),
            codecs: vec![
                ColumnCodec::Numeric {
                    offset: 2.0,
                    scale: 4.0,
                    lo: 0.0,
                    hi: 12.0,
                    integer: true,
                    start: 0,
                },
                ColumnCodec::Categorical {
                    levels: vec!["c".into(), "a".into()],
                    slot_of_code: vec![Some(1), None, Some(0)],
                    start: 1,
                },
                ColumnCodec::Label,
                ColumnCodec::Numeric {
                    offset: 0.0,
                    scale: 75.0,
                    lo: 0.0,
                    hi: 60.0,
                    integer: false,
                    start: 3,
                },
            ],
            dim: 4,
        };
        let whole = space.encode(&table).unwrap();
        assert!(whole.contains(&1.0) && whole.contains(&0.8));
        for per in [1, 7, 64, 203, 500] {
            let blocks = space
                .map_encoded_blocks(&table, per, <[f32]>::to_vec)
                .unwrap();
            assert_eq!(blocks.len(), 203usize.div_ceil(per));
            assert_eq!(blocks.concat(), whole, "{per} rows a block");
        }
    }
}
