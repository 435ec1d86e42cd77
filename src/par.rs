//! Data parallelism over independent blocks: rayon natively, in order on wasm32 (same
//! result either way; only the speed differs).

/// Calls `f(block_index, block)` on consecutive `block_len`-sized chunks of `data` (the last
/// one may be shorter), on all cores natively, and returns the sum of what `f` returns.
pub(crate) fn blocks_mut<T: Send>(
    data: &mut [T],
    block_len: usize,
    f: impl Fn(usize, &mut [T]) -> usize + Sync + Send,
) -> usize {
    let block_len = block_len.max(1);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        data.par_chunks_mut(block_len)
            .enumerate()
            .map(|(i, b)| f(i, b))
            .sum()
    }
    #[cfg(target_arch = "wasm32")]
    {
        data.chunks_mut(block_len)
            .enumerate()
            .map(|(i, b)| f(i, b))
            .sum()
    }
}

/// The number of cores the blocks run on (1 on wasm32).
pub(crate) fn threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        rayon::current_num_threads()
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// `f(k)` for every k in `range`, in order, computed on all cores natively.
pub(crate) fn map_range<R: Send>(
    range: std::ops::Range<usize>,
    f: impl Fn(usize) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        range.into_par_iter().map(f).collect()
    }
    #[cfg(target_arch = "wasm32")]
    {
        range.map(f).collect()
    }
}

/// Histogram counts of `values` in `bins` bins, `bin_of(v)` the bin of each value (below
/// `bins`), counted in f64 on all cores natively: blocks of values are counted apart and
/// the block counts added. Every count is an integer below 2^53, so the sums are exact and
/// the counts are the same as one sequential pass. `extra(v)` is counted alongside (1.0 for
/// a value it holds for).
pub(crate) fn histogram<T: Copy + Sync>(
    values: &[T],
    bins: usize,
    bin_of: impl Fn(T) -> usize + Sync + Send,
    extra: impl Fn(T) -> bool + Sync + Send,
) -> (Vec<f64>, f64) {
    let count = |block: &[T]| {
        let mut c = vec![0f64; bins];
        let mut e = 0f64;
        for &v in block {
            c[bin_of(v)] += 1.0;
            if extra(v) {
                e += 1.0;
            }
        }
        (c, e)
    };
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        if values.len() > HISTOGRAM_BLOCK {
            return values
                .par_chunks(HISTOGRAM_BLOCK)
                .map(count)
                .reduce_with(|(mut a, ea), (b, eb)| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    (a, ea + eb)
                })
                .unwrap_or_else(|| (vec![0f64; bins], 0.0));
        }
    }
    count(values)
}

/// Values a block of [`histogram`] counts.
#[cfg(not(target_arch = "wasm32"))]
const HISTOGRAM_BLOCK: usize = 1 << 14;

/// Text cells a wave of rows may hold (each a reused `String`): with two waves in flight,
/// about 2 × 2^18 cells.
const WAVE_CELLS: usize = 1 << 18;

/// Hands `rows` rows of `cols` cells each to `sink`, in order. `fill(first, cells)` writes
/// the cells of rows `first..` into `cells` (whole rows, row-major; every cell is handed in
/// empty or holding an earlier row's text, which `fill` clears). Natively the rows are
/// filled in waves on all cores while the calling thread hands the previous wave to `sink`;
/// on wasm32 in order on the calling thread. The rows `sink` sees are the same either way.
pub(crate) fn format_rows(
    rows: usize,
    cols: usize,
    fill: impl Fn(usize, &mut [String]) + Sync + Send,
    sink: &mut dyn FnMut(&[String]) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    if cols == 0 {
        for _ in 0..rows {
            sink(&[])?;
        }
        return Ok(());
    }
    let wave = (WAVE_CELLS / cols).clamp(16, 4096).min(rows.max(1));
    let mut cur = vec![String::new(); wave * cols];
    #[cfg(not(target_arch = "wasm32"))]
    let mut next = cur.clone();
    // Rows per parallel block: about four blocks per thread and wave.
    #[cfg(not(target_arch = "wasm32"))]
    let block = wave.div_ceil(4 * rayon::current_num_threads()).max(1);
    #[cfg(not(target_arch = "wasm32"))]
    let fill_wave = |first: usize, n: usize, cells: &mut [String]| {
        use rayon::prelude::*;
        cells[..n * cols]
            .par_chunks_mut(block * cols)
            .enumerate()
            .for_each(|(b, c)| fill(first + b * block, c));
    };
    #[cfg(target_arch = "wasm32")]
    let fill_wave =
        |first: usize, n: usize, cells: &mut [String]| fill(first, &mut cells[..n * cols]);
    let emit = |first: usize,
                cells: &[String],
                sink: &mut dyn FnMut(&[String]) -> crate::error::Result<()>| {
        let n = wave.min(rows - first);
        cells[..n * cols].chunks_exact(cols).try_for_each(sink)
    };
    if rows == 0 {
        return Ok(());
    }
    fill_wave(0, wave.min(rows), &mut cur);
    let mut first = 0;
    while first < rows {
        let after = first + wave;
        #[cfg(not(target_arch = "wasm32"))]
        {
            if after < rows {
                let n = wave.min(rows - after);
                let (into, fill_wave) = (&mut next, &fill_wave);
                rayon::in_place_scope(|s| {
                    s.spawn(move |_| fill_wave(after, n, into));
                    emit(first, &cur, sink)
                })?;
                std::mem::swap(&mut cur, &mut next);
            } else {
                emit(first, &cur, sink)?;
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            emit(first, &cur, sink)?;
            if after < rows {
                fill_wave(after, wave.min(rows - after), &mut cur);
            }
        }
        first = after;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row handed over once, in order, with the cells `fill` wrote for it, for row
    /// counts around the wave size and any thread count; an error from the sink stops it.
    #[test]
    fn format_rows_hands_every_row_in_order() {
        let run = |rows: usize, cols: usize| -> Vec<String> {
            let mut seen = Vec::new();
            format_rows(
                rows,
                cols,
                |first, cells| {
                    for (r, row) in cells.chunks_exact_mut(cols).enumerate() {
                        for (c, cell) in row.iter_mut().enumerate() {
                            cell.clear();
                            cell.push_str(&format!("{}:{c}", first + r));
                        }
                    }
                },
                &mut |cells| {
                    assert_eq!(cells.len(), cols);
                    seen.push(cells.join(","));
                    Ok(())
                },
            )
            .unwrap();
            seen
        };
        for cols in [1, 3, 785, WAVE_CELLS / 16 + 1] {
            let wave = (WAVE_CELLS / cols).clamp(16, 4096);
            for rows in [0, 1, wave - 1, wave, wave + 1, 3 * wave + 7] {
                let want: Vec<String> = (0..rows)
                    .map(|i| {
                        (0..cols)
                            .map(|c| format!("{i}:{c}"))
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .collect();
                for threads in [1, 3] {
                    #[cfg(not(target_arch = "wasm32"))]
                    let got = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| run(rows, cols));
                    #[cfg(target_arch = "wasm32")]
                    let got = run(rows, cols);
                    assert_eq!(got, want, "rows {rows}, cols {cols}, threads {threads}");
                }
            }
        }
        // No columns: one empty row per row.
        let mut n = 0;
        format_rows(5, 0, |_, _| unreachable!(), &mut |c| {
            assert!(c.is_empty());
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 5);
        // The sink's error ends the run after that row.
        let mut n = 0;
        let r = format_rows(10_000, 2, |_, _| {}, &mut |_| {
            n += 1;
            if n == 5000 {
                Err(crate::error::Error::Data("full".into()))
            } else {
                Ok(())
            }
        });
        assert!(r.is_err());
        assert_eq!(n, 5000);
    }

    #[test]
    fn map_range_keeps_the_order() {
        assert_eq!(map_range(3..9, |k| k * k), vec![9, 16, 25, 36, 49, 64]);
        assert!(map_range(4..4, |k| k).is_empty());
    }

    /// The counts and the extra count are those of one pass, for sizes around the block
    /// length, on 1 and 3 threads.
    #[test]
    fn histogram_counts_as_one_pass() {
        for n in [0usize, 1, 1 << 14, (1 << 14) + 1, 100_003] {
            let values: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) % 97)
                .collect();
            let mut want = vec![0f64; 10];
            let mut odd = 0f64;
            for &v in &values {
                want[(v % 10) as usize] += 1.0;
                odd += f64::from(v % 2);
            }
            for threads in [1, 3] {
                let run = || histogram(&values, 10, |v| (v % 10) as usize, |v| v % 2 == 1);
                #[cfg(not(target_arch = "wasm32"))]
                let got = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(run);
                #[cfg(target_arch = "wasm32")]
                let got = run();
                assert_eq!(got, (want.clone(), odd), "n {n}, threads {threads}");
            }
        }
    }
}
