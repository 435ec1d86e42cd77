//! A few recent answers kept per thread: the accountant's memory of costly, deterministic
//! work (the RDP bound's per-order terms at one noise multiplier, a PLD branch's composition).
//! A calibration brackets the same noise multipliers again and a receipt accounts the noise
//! its calibration certified, so the same inputs come back within a handful of calls. A hit
//! returns the value computed for the same input, so remembering never changes an answer.

/// The last `cap` entries, least recently used first.
pub(crate) struct Recent<K, V> {
    entries: Vec<(K, V)>,
    cap: usize,
}

impl<K, V: Clone> Recent<K, V> {
    /// An empty list that keeps at most `cap` entries (at least one).
    pub(crate) const fn new(cap: usize) -> Self {
        Recent {
            entries: Vec::new(),
            cap: if cap == 0 { 1 } else { cap },
        }
    }

    /// The value of the most recent entry whose key `hit` accepts, which becomes the most
    /// recent; None when no entry is accepted.
    pub(crate) fn find(&mut self, hit: impl Fn(&K) -> bool) -> Option<V> {
        let i = self.entries.iter().rposition(|(k, _)| hit(k))?;
        let entry = self.entries.remove(i);
        let value = entry.1.clone();
        self.entries.push(entry);
        Some(value)
    }

    /// Keeps `value` under `key` as the most recent entry, forgetting the least recently
    /// used one when the list is full.
    pub(crate) fn keep(&mut self, key: K, value: V) {
        if self.entries.len() >= self.cap {
            self.entries.remove(0);
        }
        self.entries.push((key, value));
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// Whether nothing is kept.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn keeps_the_most_recently_used_entries() {
        let mut r: Recent<u32, &str> = Recent::new(2);
        assert!(r.is_empty() && r.find(|_| true).is_none());
        r.keep(1, "one");
        r.keep(2, "two");
        // Using 1 makes 2 the least recent: keeping 3 forgets 2, not 1.
        assert_eq!(r.find(|&k| k == 1), Some("one"));
        r.keep(3, "three");
        assert_eq!(r.find(|&k| k == 2), None);
        assert_eq!(r.find(|&k| k == 1), Some("one"));
        assert_eq!(r.find(|&k| k == 3), Some("three"));
        // A predicate that accepts several entries gets the most recent.
        assert_eq!(r.find(|&k| k >= 1), Some("three"));
        r.clear();
        assert!(r.is_empty());
        // A capacity of 0 keeps one entry.
        let mut one: Recent<u32, u32> = Recent::new(0);
        one.keep(1, 10);
        one.keep(2, 20);
        assert_eq!(
            (one.find(|&k| k == 1), one.find(|&k| k == 2)),
            (None, Some(20))
        );
    }
}
