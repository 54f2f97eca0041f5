//! Counting values in bounded memory.
//!
//! `top` over a multi-GB log may meet millions of distinct values (client
//! addresses, say). The table keeps at most [`MAX_GROUPS`] of them, with the
//! Misra–Gries algorithm: a new value meeting a full table takes one off
//! every count and drops the values that reach zero. Counts then become
//! lower bounds, each short by at most the number of such rounds, which the
//! answer reports; in exchange, every value more frequent than that bound is
//! still in the table, however late in the file it starts (simply refusing
//! new values once full would miss a flood that begins late). Until the
//! table first fills, counts are exact.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Most distinct values kept. With keys of at most a few hundred bytes this
/// bounds the table to a few MiB, well inside a skill's memory limit.
pub(crate) const MAX_GROUPS: usize = 20_000;

/// One value and how often it occurred.
pub(crate) struct Group {
    /// Lines with this value.
    pub count: u64,
    /// The first original text that produced this value, when it differs
    /// from the value (a message before normalisation).
    pub example: Option<Box<[u8]>>,
}

/// A table of counts keyed by byte strings.
pub(crate) struct Groups {
    table: HashMap<Box<[u8]>, Group, BuildHasherDefault<FxHasher>>,
    limit: usize,
    /// Rounds in which every count was lowered by one: the most any count
    /// can be below the truth.
    pub max_undercount: u64,
}

impl Groups {
    /// An empty table holding at most `limit` distinct values.
    pub(crate) fn new(limit: usize) -> Self {
        Groups { table: HashMap::default(), limit, max_undercount: 0 }
    }

    /// Count one line with value `key`. `original` is the text before
    /// normalisation; it is copied only when `key` is new.
    pub(crate) fn add(&mut self, key: &[u8], original: &[u8]) {
        // Look up by slice first: the common case (a value seen before)
        // must not allocate.
        if let Some(group) = self.table.get_mut(key) {
            group.count += 1;
        } else if self.table.len() < self.limit {
            let example = (original != key).then(|| original.into());
            self.table.insert(key.into(), Group { count: 1, example });
        } else {
            // Each round costs a pass over the table but removes `limit`
            // units of count, so rounds stay linear in the lines counted.
            self.max_undercount += 1;
            self.table.retain(|_, group| {
                group.count -= 1;
                group.count > 0
            });
        }
    }

    /// Distinct values kept.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table overflowed, so counts are lower bounds.
    pub(crate) fn capped(&self) -> bool {
        self.max_undercount > 0
    }

    /// The `n` most frequent values, most frequent first; ties in value order
    /// so that answers are stable.
    pub(crate) fn top(&self, n: usize) -> Vec<(&[u8], &Group)> {
        let mut all: Vec<(&[u8], &Group)> = self.table.iter().map(|(k, g)| (&k[..], g)).collect();
        all.sort_unstable_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(b.0)));
        all.truncate(n);
        all
    }
}

/// The multiply-rotate hash of rustc (`FxHasher`): several times faster than
/// the default SipHash on short keys. Hash flooding is no concern here: the
/// worst a crafted log can do is slow its own analysis down.
#[derive(Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn mix(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut array = [0u8; 8];
            array.copy_from_slice(word);
            self.mix(u64::from_le_bytes(array));
        }
        for &b in words.remainder() {
            self.mix(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::Groups;

    #[test]
    fn counts_and_orders() {
        let mut groups = Groups::new(100);
        for key in ["b", "a", "b", "c", "b", "a"] {
            groups.add(key.as_bytes(), key.as_bytes());
        }
        let top: Vec<(&[u8], u64)> = groups.top(2).into_iter().map(|(k, g)| (k, g.count)).collect();
        assert_eq!(top, [(&b"b"[..], 3), (&b"a"[..], 2)]);
        assert_eq!(groups.len(), 3);
        assert!(!groups.capped());
    }

    #[test]
    fn keeps_the_first_example_only_when_it_differs() {
        let mut groups = Groups::new(10);
        groups.add(b"user <n>", b"user 1");
        groups.add(b"user <n>", b"user 2");
        groups.add(b"ok", b"ok");
        let top = groups.top(10);
        assert_eq!(top[0].1.example.as_deref(), Some(&b"user 1"[..]));
        assert!(top[1].1.example.is_none());
    }

    #[test]
    fn a_full_table_lowers_counts_and_keeps_the_frequent_values() {
        let mut groups = Groups::new(2);
        for key in ["a", "b", "c", "a", "a"] {
            groups.add(key.as_bytes(), key.as_bytes());
        }
        // `c` met a full table: one round, `b` dropped, `a` one short.
        assert_eq!(groups.max_undercount, 1);
        assert!(groups.capped());
        let top: Vec<(&[u8], u64)> = groups.top(5).into_iter().map(|(k, g)| (k, g.count)).collect();
        assert_eq!(top, [(&b"a"[..], 2)]);
    }

    #[test]
    fn a_flood_that_starts_late_is_still_found() {
        let mut groups = Groups::new(100);
        // Ten thousand one-off values fill the table again and again, then
        // one value floods; it must come out on top, short by at most the bound.
        for i in 0..10_000 {
            groups.add(format!("once-{i}").as_bytes(), b"");
        }
        for _ in 0..500 {
            groups.add(b"flood", b"flood");
        }
        let (key, group) = groups.top(1)[0];
        assert_eq!(key, b"flood");
        assert!(group.count <= 500 && group.count + groups.max_undercount >= 500);
    }
}
