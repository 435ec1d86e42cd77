//! Release randomness.
//!
//! Every release draws from ChaCha20 (a CSPRNG) keyed with 32 bytes from `getrandom`, which is
//! the OS generator natively and `crypto.getRandomValues` in the browser. A fixed seed exists
//! only for tests and reproducibility; such a run is marked "seeded, not for release" in its
//! receipt.

pub mod chacha;

use crate::error::{Error, Result};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A block's generator from [`Streams`]: ChaCha20 under the streams' key with the block's
/// stream (nonce). The same keystream everywhere; on wasm32 computed by [`chacha::StreamRng`]
/// (128-bit SIMD where the build enables it), natively by `rand_chacha` (AVX2 where the CPU
/// has it).
#[cfg(target_arch = "wasm32")]
pub type StreamGen = chacha::StreamRng;
/// A block's generator from [`Streams`] (see the wasm32 definition).
#[cfg(not(target_arch = "wasm32"))]
pub type StreamGen = ChaCha20Rng;

/// The generator every mechanism draws from.
pub struct ReleaseRng {
    inner: ChaCha20Rng,
    seed: Option<u64>,
}

impl ReleaseRng {
    /// A generator keyed from the operating system's entropy (for releases).
    pub fn from_entropy() -> Result<Self> {
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).map_err(|e| {
            Error::Data(format!(
                "no secure randomness is available on this platform ({e}); cannot make a release"
            ))
        })?;
        Ok(ReleaseRng {
            inner: ChaCha20Rng::from_seed(key),
            seed: None,
        })
    }

    /// A reproducible generator (tests only: the receipt says "seeded, not for release").
    pub fn seeded(seed: u64) -> Self {
        ReleaseRng {
            inner: ChaCha20Rng::seed_from_u64(seed),
            seed: Some(seed),
        }
    }

    /// `Some(seed)` when this generator is not fit for a release.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// The receipt's description of the randomness.
    pub fn description(&self) -> String {
        match self.seed {
            None => "ChaCha20 CSPRNG keyed by getrandom (OS / crypto.getRandomValues)".into(),
            Some(s) => format!("seeded, not for release (ChaCha20 with fixed seed {s})"),
        }
    }
}

impl RngCore for ReleaseRng {
    fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.inner.fill_bytes(dest)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> std::result::Result<(), rand::Error> {
        self.inner.try_fill_bytes(dest)
    }
}

/// Independent CSPRNG streams for work split into blocks (parallel natively, in order in
/// wasm), derived from a parent generator so that the result does not depend on how many
/// threads run the blocks.
///
/// One 32-byte ChaCha20 key is drawn from the parent (the release CSPRNG, so the key is as
/// unpredictable as any other output of it); block i gets ChaCha20 under that key with stream
/// (nonce) i. Distinct nonces under one key give computationally independent keystreams
/// (ChaCha20 is a PRF of key, nonce and counter), each 2^64 blocks of 64 bytes long. With a
/// seeded parent the streams are reproducible, and still "seeded, not for release".
#[derive(Clone)]
pub struct Streams {
    key: [u8; 32],
}

impl Streams {
    /// Draws the key from `parent` (advancing it by 32 bytes).
    pub fn from_rng<R: RngCore + ?Sized>(parent: &mut R) -> Self {
        let mut key = [0u8; 32];
        parent.fill_bytes(&mut key);
        Streams { key }
    }

    /// The generator of block `i`.
    pub fn stream(&self, i: u64) -> StreamGen {
        #[cfg(target_arch = "wasm32")]
        {
            StreamGen::new(&self.key, i)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let mut r = ChaCha20Rng::from_seed(self.key);
            r.set_stream(i);
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let s = Streams::from_rng(&mut ReleaseRng::seeded(3));
        let t = Streams::from_rng(&mut ReleaseRng::seeded(3));
        assert_eq!(s.stream(5).next_u64(), t.stream(5).next_u64());
        let firsts: std::collections::HashSet<u64> =
            (0..1000).map(|i| s.stream(i).next_u64()).collect();
        assert_eq!(firsts.len(), 1000, "streams must differ");
        let other = Streams::from_rng(&mut ReleaseRng::seeded(4));
        assert_ne!(s.stream(0).next_u64(), other.stream(0).next_u64());
    }

    #[test]
    fn seeded_reproduces_and_entropy_differs() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = ReleaseRng::seeded(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = ReleaseRng::seeded(7);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        let mut e1 = ReleaseRng::from_entropy().unwrap();
        let mut e2 = ReleaseRng::from_entropy().unwrap();
        assert_ne!(e1.next_u64(), e2.next_u64());
        assert!(ReleaseRng::seeded(1)
            .description()
            .contains("seeded, not for release"));
        assert!(e1.seed().is_none());
    }
}
