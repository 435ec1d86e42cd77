//! Release randomness.
//!
//! Every release draws from ChaCha20 (a CSPRNG) keyed with 32 bytes from `getrandom`, which is
//! the OS generator natively and `crypto.getRandomValues` in the browser. A fixed seed exists
//! only for tests and reproducibility; such a run is marked "seeded, not for release" in its
//! receipt.

use crate::error::{Error, Result};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

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

#[cfg(test)]
mod tests {
    use super::*;

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
