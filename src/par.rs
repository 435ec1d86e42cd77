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
