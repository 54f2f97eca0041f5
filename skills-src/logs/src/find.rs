//! Finding a byte in a slice, eight bytes at a time.
//!
//! This is the innermost loop of every tool (line ends, and the quotes and
//! spaces of access-log fields). `memchr` would use `usize` words, which
//! are four bytes on wasm32, while wasm has native 64-bit integer ops.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Index of the first `needle` in `bytes`.
///
/// A word has a zero byte where `(w - 0x01…01) & !w & 0x80…80` is set, and
/// the lowest set flag is always a true zero, so with little-endian loads
/// the lowest flag of `word ^ needle…needle` is the first match.
pub(crate) fn find_byte(bytes: &[u8], needle: u8) -> Option<usize> {
    let pattern = ONES * u64::from(needle);
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let mut array = [0u8; 8];
        array.copy_from_slice(word);
        let x = u64::from_le_bytes(array) ^ pattern;
        let zeros = x.wrapping_sub(ONES) & !x & HIGHS;
        if zeros != 0 {
            return Some(offset + (zeros.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words.remainder().iter().position(|&b| b == needle).map(|at| offset + at)
}

#[cfg(test)]
mod tests {
    use super::find_byte;

    #[test]
    fn finds_the_first_match_at_every_position() {
        for needle in [b'\n', b'"', 0, 0xff] {
            let filler = if needle == b'a' { b'b' } else { b'a' };
            for len in 0..40 {
                for at in 0..len {
                    let mut bytes = vec![filler; len];
                    bytes[at] = needle;
                    if at + 3 < len {
                        bytes[at + 3] = needle;
                    }
                    assert_eq!(
                        find_byte(&bytes, needle),
                        Some(at),
                        "needle {needle} len {len} at {at}"
                    );
                }
                assert_eq!(find_byte(&vec![filler; len], needle), None);
            }
        }
    }

    #[test]
    fn no_false_hits_next_to_the_needle_value() {
        // Bytes one above the needle, or with the high bit set, are where a
        // sloppy zero-byte test reports a match.
        for needle in [b'\n', b'"'] {
            for other in [needle + 1, needle | 0x80, needle.wrapping_sub(1)] {
                assert_eq!(find_byte(&[other; 24], needle), None, "needle {needle} other {other}");
            }
        }
    }
}
