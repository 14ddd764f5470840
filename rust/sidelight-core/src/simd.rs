//! Skipping JSON strings and containers 64 bytes at a time.
//!
//! Transcripts are mostly bytes we do not need (tool output, file contents, attachments). Finding where
//! such a value ends is the hot loop, so it works on 64-byte blocks: one pass turns a block into bit
//! masks of quotes, backslashes and brackets, the escape and in-string state are carried between blocks
//! with bit arithmetic (the technique of simdjson's stage 1), and only the few structural bits left are
//! looked at one by one.

const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;
const BLOCK: usize = 64;

/// Bit masks of one 64-byte block: bit `i` describes byte `i`.
#[derive(Clone, Copy)]
struct Masks {
    quote: u64,
    backslash: u64,
    open: u64,
    close: u64,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8; BLOCK]) -> Masks {
    // SSE2 is part of the x86_64 baseline, so no runtime detection is needed.
    use std::arch::x86_64::*;
    // SAFETY: the four 16-byte loads stay inside the 64-byte array; SSE2 is always present on x86_64.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        // '{' (0x7B) and '[' (0x5B) differ only in bit 0x20, as do '}' (0x7D) and ']' (0x5D).
        let case = _mm_set1_epi8(0x20);
        let open = _mm_set1_epi8(b'{' as i8);
        let close = _mm_set1_epi8(b'}' as i8);
        let mut m = Masks {
            quote: 0,
            backslash: 0,
            open: 0,
            close: 0,
        };
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            let folded = _mm_or_si128(v, case);
            let shift = 16 * k;
            m.quote |= (_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) as u16 as u64) << shift;
            m.backslash |= (_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)) as u16 as u64) << shift;
            m.open |= (_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)) as u16 as u64) << shift;
            m.close |= (_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)) as u16 as u64) << shift;
        }
        m
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(block: &[u8; BLOCK]) -> Masks {
    let mut m = Masks {
        quote: 0,
        backslash: 0,
        open: 0,
        close: 0,
    };
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'[' => m.open |= bit,
            b'}' | b']' => m.close |= bit,
            _ => {}
        }
    }
    m
}

/// Which characters are escaped by a backslash, carried across blocks.
#[derive(Default)]
struct EscapeScanner {
    next_is_escaped: u64,
}

impl EscapeScanner {
    /// The mask of escaped characters in a block whose backslashes are `backslash`.
    #[inline(always)]
    fn escaped(&mut self, backslash: u64) -> u64 {
        if backslash == 0 {
            let escaped = self.next_is_escaped;
            self.next_is_escaped = 0;
            return escaped;
        }
        // A backslash that is itself escaped starts no escape.
        let potential = backslash & !self.next_is_escaped;
        // Runs of backslashes: subtracting each run's start from the odd bits marks the characters
        // that an odd-length run escapes (simdjson's `next_escape_and_terminal_code`).
        let escape_and_terminal = ((potential << 1) | ODD_BITS).wrapping_sub(potential) ^ ODD_BITS;
        let escaped = escape_and_terminal ^ (backslash | self.next_is_escaped);
        let escape = escape_and_terminal & backslash;
        self.next_is_escaped = escape >> 63;
        escaped
    }
}

/// Bit `i` set for every byte from an opening quote up to (not including) its closing quote.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The masks of the 64 bytes at `at` (padded with spaces past the end of `bytes`), and how many of
/// those bytes are real.
#[inline(always)]
fn masks_at(bytes: &[u8], at: usize) -> (Masks, usize) {
    if let Some(block) = bytes.get(at..at + BLOCK) {
        (classify(block.try_into().expect("a 64-byte slice")), BLOCK)
    } else {
        let n = bytes.len() - at;
        let mut padded = [b' '; BLOCK];
        padded[..n].copy_from_slice(&bytes[at..]);
        (classify(&padded), n)
    }
}

/// Index of the closing quote of the string whose body starts at `start` (just after its opening
/// quote), and whether the body holds a backslash; `None` when the string does not end within `bytes`.
#[inline]
pub fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    // Most keys and short values end within a few bytes: a scalar look first avoids the block setup.
    let quick_end = bytes.len().min(start + 16);
    let mut i = start;
    while i < quick_end {
        match bytes[i] {
            b'"' => return Some((i, false)),
            b'\\' => break,
            _ => i += 1,
        }
    }
    if i == quick_end && i == bytes.len() {
        return None;
    }
    let mut escapes = EscapeScanner::default();
    let mut saw_backslash = false;
    let mut at = i;
    while at < bytes.len() {
        let (m, n) = masks_at(bytes, at);
        let escaped = escapes.escaped(m.backslash);
        let quotes = m.quote & !escaped;
        if quotes != 0 {
            let bit = quotes.trailing_zeros();
            let end = at + bit as usize;
            let before = (1u64 << bit) - 1;
            saw_backslash |= m.backslash & before != 0;
            return (end < at + n).then_some((end, saw_backslash));
        }
        saw_backslash |= m.backslash != 0;
        at += n;
    }
    None
}

/// Index just past the object or array that opens at `start` (`bytes[start]` is `{` or `[`), or `None`
/// when it does not close within `bytes`. Brackets are matched by depth only: `[}` counts as a pair,
/// which is harmless for skipping and never reads out of bounds.
#[inline]
pub fn container_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut escapes = EscapeScanner::default();
    let mut in_string_carry = 0u64;
    let mut depth: u64 = 0;
    let mut at = start;
    while at < bytes.len() {
        let (m, n) = masks_at(bytes, at);
        let escaped = escapes.escaped(m.backslash);
        let quotes = m.quote & !escaped;
        let in_string = prefix_xor(quotes) ^ in_string_carry;
        in_string_carry = 0u64.wrapping_sub(in_string >> 63);
        let open = m.open & !in_string & !escaped;
        let close = m.close & !in_string & !escaped;
        if close == 0 {
            depth += u64::from(open.count_ones());
        } else if depth > u64::from(close.count_ones()) {
            depth = depth + u64::from(open.count_ones()) - u64::from(close.count_ones());
        } else {
            let mut structural = open | close;
            while structural != 0 {
                let bit = structural.trailing_zeros();
                structural &= structural - 1;
                if open & (1u64 << bit) != 0 {
                    depth += 1;
                } else {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        let end = at + bit as usize + 1;
                        return (end <= at + n).then_some(end);
                    }
                }
            }
        }
        at += n;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn scalar_string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => return Some((i, bytes[start..i].contains(&b'\\'))),
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        None
    }

    fn scalar_container_end(bytes: &[u8], start: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => i = scalar_string_end(bytes, i + 1)?.0,
                // A backslash outside a string is invalid JSON; the block scanner lets it escape the
                // next byte all the same, and so does this reference.
                b'\\' => i += 1,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    #[test]
    fn string_end_handles_escapes_across_blocks() {
        let mut s = vec![b'a'; 63];
        s.push(b'\\'); // the backslash is byte 63, the quote it escapes is byte 64
        s.extend_from_slice(b"\"bc\"tail");
        assert_eq!(string_end(&s, 0), Some((67, true)));
        assert_eq!(string_end(br#"ab\\"x"#, 0), Some((4, true)));
        assert_eq!(string_end(br#"abc"x"#, 0), Some((3, false)));
        assert_eq!(string_end(br#"ab\\\"x"#, 0), None);
        assert_eq!(string_end(b"abc", 0), None);
    }

    #[test]
    fn container_end_ignores_brackets_in_strings() {
        let s = br#"{"a":"}{]\"[","b":[1,{"c":2}]} rest"#;
        assert_eq!(container_end(s, 0), Some(s.len() - 5));
        assert_eq!(container_end(b"{\"a\":1", 0), None);
    }

    proptest! {
        #[test]
        fn string_end_matches_scalar(body in proptest::collection::vec(
            prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), Just(b'{'), Just(0xC3u8)], 0..300), start in 0usize..10) {
            let start = start.min(body.len());
            prop_assert_eq!(string_end(&body, start), scalar_string_end(&body, start));
        }

        #[test]
        fn container_end_matches_scalar(body in proptest::collection::vec(
            prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), Just(b'{'), Just(b'}'), Just(b'['), Just(b']')], 0..400)) {
            let mut s = vec![b'{'];
            s.extend_from_slice(&body);
            prop_assert_eq!(container_end(&s, 0), scalar_container_end(&s, 0));
        }
    }
}
