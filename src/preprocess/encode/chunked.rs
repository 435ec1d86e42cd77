//! DP-CDA's synthetic rows decoded as they are made: the numeric features are kept (their
//! decoding needs every row: ranks for the quantile map, class means for the range map), and
//! the categorical columns' one-hot scores are decoded a chunk of rows at a time and dropped
//! (issue 15: a 1,000,000 × 20 mixed table's 67 one-hot features were 268 MB of scores held
//! whole before decoding; a chunk holds at most [`CHUNK_BYTES`], 8 MiB, of them).
//!
//! A chunk is decoded exactly as [`FeatureSpace::decode_batch`] decodes the whole batch (the
//! same scale, argmax, or levels in the released proportions by the same greedy), with the
//! batch's quotas shared out between the chunks ([`chunk_quotas`]): every level gets the
//! batch's quota in total, and a batch that fits one chunk is decoded byte for byte as
//! `decode_batch` decodes it. Post-processing either way.

use super::{
    assign_levels, level_quotas, rescale, write_columns, ColumnCodec, DecodedColumn, FeatureSpace,
    LevelCodes,
};
use crate::error::{Error, Result};
use crate::preprocess::normalize::ColumnMarginal;
use crate::preprocess::quantile::{chunk_quotas, Scores};

/// Bytes of categorical scores a chunk holds at most, unless that is fewer than
/// [`MIN_CHUNK_ROWS`] rows ([`chunk_rows`]).
pub const CHUNK_BYTES: usize = 8 << 20;

/// Rows a chunk holds at least (its levels' standardization and greedy see that many rows).
pub const MIN_CHUNK_ROWS: usize = 4096;

/// Rows per chunk for a space whose categorical columns have `levels` released levels in
/// all: [`CHUNK_BYTES`] of f32 scores (32,768 rows at 64 levels or fewer), at least
/// [`MIN_CHUNK_ROWS`]. Outputs of at most that many rows are decoded in one chunk, as
/// [`FeatureSpace::decode_batch`] decodes them.
pub fn chunk_rows(levels: usize) -> usize {
    (CHUNK_BYTES / (4 * levels.max(64))).max(MIN_CHUNK_ROWS)
}

/// A categorical column with released levels.
struct CatColumn {
    /// Its first feature in the synthetic rows.
    src: usize,
    /// Its first value in a chunk row.
    at: usize,
    /// Its levels (features).
    width: usize,
    /// The quotas still to give (`assign_levels`: one per level, or one more for the pooled
    /// rare levels); None: argmax.
    left: Option<Vec<usize>>,
    /// Each decoded row's level index.
    codes: LevelCodes,
}

/// The decoder (see the module note): [`ChunkedDecode::push`] each synthetic row in order,
/// then [`ChunkedDecode::finish`].
pub struct ChunkedDecode<'s> {
    space: &'s FeatureSpace,
    /// The numeric columns' codecs, each reading its feature's place in `numeric`.
    narrow: FeatureSpace,
    narrow_marginals: Vec<Option<ColumnMarginal>>,
    /// The synthetic rows' numeric features, in the order of `narrow`.
    num_src: Vec<usize>,
    numeric: Vec<f32>,
    cats: Vec<CatColumn>,
    /// Values a chunk row holds (the categorical columns' levels).
    cat_width: usize,
    chunk: Vec<f32>,
    chunk_rows: usize,
    scale: f64,
    rows: usize,
    seen: usize,
}

impl FeatureSpace {
    /// A [`ChunkedDecode`] of `rows` synthetic rows of this space: `scale` and `marginals`
    /// as in [`super::Decoding`] (no denoising), categorical scores decoded `chunk_rows`
    /// rows at a time (at least 1; `None`: [`chunk_rows`] of the space's levels). Errs,
    /// naming `samples`, when the numeric features of `rows` rows do not fit in memory.
    pub fn chunked(
        &self,
        rows: usize,
        scale: f64,
        marginals: &[Option<ColumnMarginal>],
        chunk_rows: Option<usize>,
    ) -> Result<ChunkedDecode<'_>> {
        let mut num_src = Vec::new();
        let mut codecs = Vec::new();
        let mut narrow_marginals = Vec::new();
        let mut cats = Vec::new();
        let mut cat_width = 0;
        for (k, codec) in self.codecs.iter().enumerate() {
            let m = marginals.get(k).and_then(Option::as_ref);
            match codec {
                ColumnCodec::Label => {}
                ColumnCodec::Numeric { start, .. } => {
                    let mut c = codec.clone();
                    if let ColumnCodec::Numeric { start: s, .. } = &mut c {
                        *s = num_src.len();
                    }
                    num_src.push(*start);
                    codecs.push(c);
                    narrow_marginals.push(m.cloned());
                }
                ColumnCodec::Categorical { levels, start, .. } if !levels.is_empty() => {
                    let w = levels.len();
                    cats.push(CatColumn {
                        src: *start,
                        at: cat_width,
                        width: w,
                        left: level_quotas(m, w, rows),
                        codes: LevelCodes::with_room(w, rows)?,
                    });
                    cat_width += w;
                }
                ColumnCodec::Categorical { .. } => {}
            }
        }
        let chunk_rows = chunk_rows
            .unwrap_or_else(|| self::chunk_rows(cat_width))
            .clamp(1, rows.max(1));
        Ok(ChunkedDecode {
            space: self,
            narrow: FeatureSpace {
                names: Vec::new(),
                dim: num_src.len(),
                codecs,
            },
            narrow_marginals,
            numeric: super::room_for_rows(rows, num_src.len())?,
            num_src,
            cats,
            chunk: super::room_for_rows(chunk_rows, cat_width)?,
            cat_width,
            chunk_rows,
            scale,
            rows,
            seen: 0,
        })
    }
}

impl ChunkedDecode<'_> {
    /// Takes the next synthetic row (the space's d features).
    pub fn push(&mut self, row: &[f32]) -> Result<()> {
        if self.seen == self.rows || row.len() != self.space.dim {
            return Err(Error::Internal(format!(
                "the decoder expects {} rows of {} features",
                self.rows, self.space.dim
            )));
        }
        self.numeric.extend(self.num_src.iter().map(|&f| row[f]));
        for c in &self.cats {
            self.chunk.extend_from_slice(&row[c.src..c.src + c.width]);
        }
        self.seen += 1;
        if self.cat_width > 0 && self.chunk.len() >= self.chunk_rows * self.cat_width {
            self.flush();
        }
        Ok(())
    }

    /// Decodes the chunk's categorical columns (on all cores natively) and empties it.
    fn flush(&mut self) {
        if self.cat_width == 0 || self.chunk.is_empty() {
            return;
        }
        let m = self.chunk.len() / self.cat_width;
        rescale(&mut self.chunk, self.scale);
        let shares: Vec<Option<Vec<usize>>> = self
            .cats
            .iter_mut()
            .map(|c| c.left.as_mut().map(|left| chunk_quotas(left, m)))
            .collect();
        let (chunk, cw, cats) = (&self.chunk, self.cat_width, &self.cats);
        let decoded = crate::par::map_range(0..cats.len(), |k| {
            let c = &cats[k];
            assign_levels(Scores::segment(chunk, cw, c.at, c.width), shares[k].clone())
        });
        for (c, codes) in self.cats.iter_mut().zip(decoded) {
            c.codes.extend(&codes);
        }
        self.chunk.clear();
    }

    /// Decodes what is left and writes every row, as [`FeatureSpace::decode_batch`] does:
    /// `classes` gives each row's class (numeric columns are brought into their range class
    /// by class), `label(i)` row i's label cell; `sink` gets each row's cells in order.
    pub fn finish(
        mut self,
        classes: Option<&[u32]>,
        label: &(dyn Fn(usize) -> String + Sync),
        sink: &mut dyn FnMut(&[String]) -> Result<()>,
    ) -> Result<()> {
        self.flush();
        if self.seen != self.rows {
            return Err(Error::Internal(format!(
                "the decoder got {} of {} rows",
                self.seen, self.rows
            )));
        }
        let t = self.rows;
        let ChunkedDecode {
            space,
            narrow,
            narrow_marginals,
            mut numeric,
            cats,
            scale,
            ..
        } = self;
        rescale(&mut numeric, scale);
        let nums = narrow.decode_columns(&mut numeric, t, &narrow_marginals, false, classes);
        let (mut nums, mut cats) = (nums.into_iter(), cats.into_iter());
        let mut cols = Vec::with_capacity(space.codecs.len());
        for codec in &space.codecs {
            let col = match codec {
                ColumnCodec::Label => Some(DecodedColumn::Label),
                ColumnCodec::Numeric { .. } => nums.next(),
                ColumnCodec::Categorical { levels, .. } if levels.is_empty() => {
                    Some(DecodedColumn::Cat {
                        levels,
                        codes: LevelCodes::none(0),
                    })
                }
                ColumnCodec::Categorical { levels, .. } => {
                    cats.next().map(|c| DecodedColumn::Cat {
                        levels,
                        codes: c.codes,
                    })
                }
            };
            cols.push(col.ok_or_else(|| {
                Error::Internal("the decoder's columns do not match the space".into())
            })?);
        }
        write_columns(&cols, &numeric, narrow.dim, t, label, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{decode_cells, mixed_codecs};
    use super::super::FeatureSpace;
    use crate::preprocess::normalize::ColumnMarginal;
    use crate::preprocess::quantile::{chunk_quotas, quotas};
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    /// `mixed_codecs`' space (70 numeric columns, categorical ones with proportions, with
    /// the pooled level, without, with no level), t random rows, 3 classes.
    fn batch(
        t: usize,
    ) -> (
        FeatureSpace,
        Vec<Option<ColumnMarginal>>,
        Vec<f32>,
        Vec<u32>,
    ) {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        let (codecs, marginals, d) = mixed_codecs();
        let names = (0..codecs.len()).map(|j| format!("c{j}")).collect();
        let fs = FeatureSpace {
            names,
            codecs,
            dim: d,
        };
        let rows = (0..t * d).map(|_| rng.gen_range(-0.3f32..1.3)).collect();
        let classes = (0..t).map(|i| (i * 7 % 3) as u32).collect();
        (fs, marginals, rows, classes)
    }

    const SCALE: f64 = 1.37;

    fn via_batch(t: usize) -> Vec<Vec<String>> {
        let (fs, marginals, rows, classes) = batch(t);
        decode_cells(&fs, &rows, &marginals, &classes, SCALE)
    }

    fn via_chunks(t: usize, chunk_rows: Option<usize>) -> Vec<Vec<String>> {
        let (fs, marginals, rows, classes) = batch(t);
        let mut dec = fs.chunked(t, SCALE, &marginals, chunk_rows).unwrap();
        for row in rows.chunks_exact(fs.dim) {
            dec.push(row).unwrap();
        }
        let mut out = Vec::new();
        dec.finish(Some(&classes), &|i| format!("y{}", classes[i]), &mut |c| {
            out.push(c.to_vec());
            Ok(())
        })
        .unwrap();
        out
    }

    /// A batch that fits one chunk is decoded as `decode_batch` decodes it, cell for cell
    /// (the pipeline's outputs that fit one chunk, 32,768 rows up to 64 levels, are unchanged).
    #[test]
    fn one_chunk_is_the_batch_decoding_cell_for_cell() {
        let want = via_batch(700);
        assert_eq!(via_chunks(700, Some(700)), want);
        assert_eq!(via_chunks(700, Some(1 << 16)), want);
        // The pipeline's own chunk size (32,768 rows at these 12 levels).
        let (fs, marginals, _, _) = batch(700);
        assert_eq!(
            fs.chunked(700, SCALE, &marginals, None).unwrap().chunk_rows,
            700
        );
        assert_eq!(via_chunks(700, None), want);
    }

    /// The pipeline's chunks: 8 MiB of scores, 32,768 rows up to 64 levels, never below
    /// 4,096 rows.
    #[test]
    fn chunks_hold_8_mib_of_scores_and_at_least_4096_rows() {
        use super::chunk_rows;
        assert_eq!(chunk_rows(0), 1 << 15);
        assert_eq!(chunk_rows(67), (8 << 20) / (4 * 67));
        assert_eq!(chunk_rows(67), 31_300);
        assert_eq!(chunk_rows(512), 4096);
        assert_eq!(chunk_rows(1024), 4096);
        assert_eq!(chunk_rows(5000), 4096);
    }

    /// In chunks: every numeric, label, argmax and level-less column is `decode_batch`'s,
    /// cell for cell; every column decoded in proportion gets `decode_batch`'s count of each
    /// level (the batch's quotas), with some rows assigned differently (the chunks are
    /// decoded apart).
    #[test]
    fn chunks_keep_the_batch_quotas_and_every_other_column() {
        let t = 700;
        let (fs, marginals, _, _) = batch(t);
        let want = via_batch(t);
        for chunk_rows in [1, 64, 350] {
            let got = via_chunks(t, Some(chunk_rows));
            assert_eq!(got.len(), t);
            let mut moved = 0;
            for (j, m) in marginals.iter().enumerate() {
                let column = |rows: &[Vec<String>]| -> Vec<String> {
                    rows.iter().map(|r| r[j].clone()).collect()
                };
                let (a, b) = (column(&want), column(&got));
                if matches!(m, Some(ColumnMarginal::Categorical(_))) {
                    let count = |v: &[String]| {
                        v.iter().fold(BTreeMap::new(), |mut c, x| {
                            *c.entry(x.clone()).or_insert(0) += 1;
                            c
                        })
                    };
                    assert_eq!(count(&a), count(&b), "column {j}, chunks of {chunk_rows}");
                    moved += a.iter().zip(&b).filter(|(x, y)| x != y).count();
                } else {
                    assert_eq!(
                        a, b,
                        "column {j} ({:?}), chunks of {chunk_rows}",
                        fs.codecs[j]
                    );
                }
            }
            assert!(
                moved > 0,
                "chunks of {chunk_rows}: no row assigned differently"
            );
        }
    }

    /// Chunk by chunk, every level gets exactly its quota, no chunk gives a level more than
    /// it has left, each chunk's shares sum to its rows and lie within 1 of the proportional
    /// share.
    #[test]
    fn chunk_quotas_share_out_every_quota_exactly() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        for _ in 0..300 {
            let levels = rng.gen_range(1..9);
            let probs: Vec<f64> = (0..levels)
                .map(|_| if rng.gen_bool(0.2) { 0.0 } else { rng.gen() })
                .collect();
            let t = rng.gen_range(1..5000);
            let total = quotas(&probs, t);
            let mut left = total.clone();
            let mut given = vec![0; levels];
            let mut rows_left = t;
            while rows_left > 0 {
                let m = rng.gen_range(1..=rows_left.min(700));
                let before = left.clone();
                let share = chunk_quotas(&mut left, m);
                assert_eq!(share.iter().sum::<usize>(), m);
                for j in 0..levels {
                    assert!(share[j] <= before[j]);
                    let exact = before[j] as f64 * m as f64 / rows_left as f64;
                    assert!(
                        (share[j] as f64 - exact).abs() < 1.0 + 1e-9,
                        "{share:?} {before:?}"
                    );
                    given[j] += share[j];
                }
                rows_left -= m;
            }
            assert_eq!(given, total);
            assert!(left.iter().all(|&l| l == 0));
        }
    }

    /// Too many rows, a row of the wrong width, or too few rows at the end: errors, not
    /// panics.
    #[test]
    fn rows_that_do_not_fit_are_errors() {
        let (fs, marginals, rows, classes) = batch(5);
        let d = fs.dim;
        let mut dec = fs.chunked(4, 1.0, &marginals, Some(2)).unwrap();
        assert!(dec.push(&rows[..d - 1]).is_err());
        for row in rows.chunks_exact(d).take(4) {
            dec.push(row).unwrap();
        }
        assert!(dec.push(&rows[4 * d..]).is_err());
        let mut dec = fs.chunked(4, 1.0, &marginals, Some(2)).unwrap();
        dec.push(&rows[..d]).unwrap();
        let r = dec.finish(Some(&classes), &|_| String::new(), &mut |_| Ok(()));
        assert!(r.is_err());
    }
}
