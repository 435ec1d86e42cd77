//! ChaCha20 (20 rounds, 64-bit block counter, 64-bit stream: the variant of `rand_chacha`),
//! four blocks at a time, with wasm32's 128-bit SIMD where the build enables it.
//!
//! On wasm32 `rand_chacha` runs its portable code, one 32-bit word at a time: its keystream
//! was the largest single item of a synthesis in the browser (1.1 s of a 60k × 784 MNIST run,
//! 3.7 s of a 1,000,000 × 20 mixed table, Node's profile). [`StreamCore`] computes the same
//! keystream with one 128-bit vector per state word, four blocks in its four lanes, and
//! [`StreamRng`] hands it out through `rand_core`'s `BlockRng` exactly as `ChaCha20Rng`
//! does (the same 64-word buffer, so `next_u32`, `next_u64` and `fill_bytes` consume it the
//! same way). Output is therefore identical, word for word, to `ChaCha20Rng` with the same
//! key and stream: tested here against `rand_chacha` (portable lanes), and in the Node suite
//! by the wasm build's seeded output equalling the native CLI's. Natively `rand_chacha`
//! itself is used (AVX2 where the CPU has it).

use rand_chacha::rand_core::block::{BlockRng, BlockRngCore};
use rand_chacha::rand_core::{self, CryptoRng, RngCore};

/// The 64 words of four consecutive blocks (`rand_core` needs `Default` for the buffer).
#[derive(Clone)]
pub struct Words(pub [u32; 64]);

impl Default for Words {
    fn default() -> Self {
        Words([0; 64])
    }
}

impl AsRef<[u32]> for Words {
    fn as_ref(&self) -> &[u32] {
        &self.0
    }
}

impl AsMut<[u32]> for Words {
    fn as_mut(&mut self) -> &mut [u32] {
        &mut self.0
    }
}

/// ChaCha20's block function state: key, block counter and stream.
#[derive(Clone)]
pub struct StreamCore {
    key: [u32; 8],
    counter: u64,
    stream: u64,
}

impl StreamCore {
    /// The generator of `key` at block 0 of `stream`.
    pub fn new(key: &[u8; 32], stream: u64) -> Self {
        let mut k = [0u32; 8];
        for (w, b) in k.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        StreamCore {
            key: k,
            counter: 0,
            stream,
        }
    }
}

impl BlockRngCore for StreamCore {
    type Item = u32;
    type Results = Words;

    fn generate(&mut self, results: &mut Words) {
        blocks4(&self.key, self.counter, self.stream, &mut results.0);
        self.counter = self.counter.wrapping_add(4);
    }
}

impl CryptoRng for StreamCore {}

/// A ChaCha20 generator: `rand_chacha::ChaCha20Rng`'s output, word for word.
#[derive(Clone)]
pub struct StreamRng(BlockRng<StreamCore>);

impl StreamRng {
    /// The generator of `key` on `stream` (as `ChaCha20Rng::from_seed(key)` followed by
    /// `set_stream(stream)`).
    pub fn new(key: &[u8; 32], stream: u64) -> Self {
        StreamRng(BlockRng::new(StreamCore::new(key, stream)))
    }
}

impl RngCore for StreamRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    #[inline]
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill_bytes(dest)
    }

    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.try_fill_bytes(dest)
    }
}

impl CryptoRng for StreamRng {}

/// Four lanes of 32-bit words: one state word of four blocks.
trait Lanes: Copy {
    fn splat(x: u32) -> Self;
    fn from_array(x: [u32; 4]) -> Self;
    fn to_array(self) -> [u32; 4];
    fn add(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn rotl<const N: u32>(self) -> Self;
}

/// Portable lanes (the reference the SIMD lanes are the same arithmetic as).
impl Lanes for [u32; 4] {
    #[inline(always)]
    fn splat(x: u32) -> Self {
        [x; 4]
    }
    #[inline(always)]
    fn from_array(x: [u32; 4]) -> Self {
        x
    }
    #[inline(always)]
    fn to_array(self) -> [u32; 4] {
        self
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i].wrapping_add(o[i]))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] ^ o[i])
    }
    #[inline(always)]
    fn rotl<const N: u32>(self) -> Self {
        self.map(|x| x.rotate_left(N))
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    /// One state word of four blocks in a 128-bit vector.
    #[derive(Clone, Copy)]
    pub struct V(pub v128);

    impl super::Lanes for V {
        #[inline(always)]
        fn splat(x: u32) -> Self {
            V(u32x4_splat(x))
        }
        #[inline(always)]
        fn from_array(x: [u32; 4]) -> Self {
            V(u32x4(x[0], x[1], x[2], x[3]))
        }
        #[inline(always)]
        fn to_array(self) -> [u32; 4] {
            [
                u32x4_extract_lane::<0>(self.0),
                u32x4_extract_lane::<1>(self.0),
                u32x4_extract_lane::<2>(self.0),
                u32x4_extract_lane::<3>(self.0),
            ]
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            V(u32x4_add(self.0, o.0))
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            V(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn rotl<const N: u32>(self) -> Self {
            match N {
                // Whole-byte rotations are one byte shuffle.
                16 => V(i8x16_shuffle::<
                    2,
                    3,
                    0,
                    1,
                    6,
                    7,
                    4,
                    5,
                    10,
                    11,
                    8,
                    9,
                    14,
                    15,
                    12,
                    13,
                >(self.0, self.0)),
                8 => V(i8x16_shuffle::<
                    3,
                    0,
                    1,
                    2,
                    7,
                    4,
                    5,
                    6,
                    11,
                    8,
                    9,
                    10,
                    15,
                    12,
                    13,
                    14,
                >(self.0, self.0)),
                _ => V(v128_or(u32x4_shl(self.0, N), u32x4_shr(self.0, 32 - N))),
            }
        }
    }
}

/// Fills `out` with blocks `counter` … `counter + 3` of `stream` under `key`, in order.
fn blocks4(key: &[u32; 8], counter: u64, stream: u64, out: &mut [u32; 64]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        blocks4_with::<simd::V>(key, counter, stream, out)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        blocks4_with::<[u32; 4]>(key, counter, stream, out)
    }
}

#[inline(always)]
fn quarter<L: Lanes>(x: &mut [L; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].add(x[b]);
    x[d] = x[d].xor(x[a]).rotl::<16>();
    x[c] = x[c].add(x[d]);
    x[b] = x[b].xor(x[c]).rotl::<12>();
    x[a] = x[a].add(x[b]);
    x[d] = x[d].xor(x[a]).rotl::<8>();
    x[c] = x[c].add(x[d]);
    x[b] = x[b].xor(x[c]).rotl::<7>();
}

#[inline(always)]
fn blocks4_with<L: Lanes>(key: &[u32; 8], counter: u64, stream: u64, out: &mut [u32; 64]) {
    const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let pos: [u64; 4] = std::array::from_fn(|j| counter.wrapping_add(j as u64));
    let mut init = [L::splat(0); 16];
    for (i, &s) in SIGMA.iter().enumerate() {
        init[i] = L::splat(s);
    }
    for (i, &k) in key.iter().enumerate() {
        init[4 + i] = L::splat(k);
    }
    init[12] = L::from_array(pos.map(|p| p as u32));
    init[13] = L::from_array(pos.map(|p| (p >> 32) as u32));
    init[14] = L::splat(stream as u32);
    init[15] = L::splat((stream >> 32) as u32);
    let mut x = init;
    for _ in 0..10 {
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    // Lane j of word i is word i of block j.
    for (i, (w, s)) in x.iter().zip(&init).enumerate() {
        let lanes = w.add(*s).to_array();
        for (j, v) in lanes.into_iter().enumerate() {
            out[j * 16 + i] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Word for word `ChaCha20Rng` with the same key and stream, over many buffers, through
    /// every way the generator is read (u32, u64 across buffer ends, byte fills of odd
    /// lengths), for several keys and streams (0, small, and with both halves set).
    #[test]
    fn equals_rand_chacha() {
        let mut keys = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for stream in [0u64, 1, 7, 1 << 32, u64::MAX - 3, 0x0123_4567_89ab_cdef] {
            let key: [u8; 32] = keys.gen();
            let mut ours = StreamRng::new(&key, stream);
            let mut theirs = ChaCha20Rng::from_seed(key);
            theirs.set_stream(stream);
            for step in 0..3000 {
                match step % 4 {
                    0 => assert_eq!(ours.next_u32(), theirs.next_u32()),
                    1 | 2 => assert_eq!(ours.next_u64(), theirs.next_u64()),
                    _ => {
                        let n = step % 37;
                        let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
                        ours.fill_bytes(&mut a);
                        theirs.fill_bytes(&mut b);
                        assert_eq!(a, b);
                    }
                }
            }
        }
    }

    /// The counter's low word wraps into its high word as in `rand_chacha` (blocks 2^32 − 2
    /// to 2^32 + 1 in one call).
    #[test]
    fn the_counter_carries() {
        let key = [9u8; 32];
        let mut theirs = ChaCha20Rng::from_seed(key);
        theirs.set_stream(3);
        theirs.set_word_pos(((1u128 << 32) - 2) * 16);
        let mut want = [0u32; 64];
        for w in want.iter_mut() {
            *w = theirs.next_u32();
        }
        let mut core = StreamCore::new(&key, 3);
        core.counter = (1 << 32) - 2;
        let mut got = Words::default();
        core.generate(&mut got);
        assert_eq!(got.0, want);
    }
}
