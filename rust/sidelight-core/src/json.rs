//! A selective JSON reader over one line: it walks objects key by key, hands out raw string slices,
//! and skips every value nobody asked for with the block scanner in [`crate::simd`]. Nothing is
//! allocated unless a caller turns a string into a `String`.
//!
//! It is lenient by design: it checks the structure of what it reads, not of what it skips.

use crate::simd;

/// A JSON string as it appears in the line, without its quotes.
#[derive(Clone, Copy, Debug)]
pub struct RawStr<'a> {
    pub raw: &'a [u8],
    pub escaped: bool,
}

impl<'a> RawStr<'a> {
    pub fn is(&self, literal: &[u8]) -> bool {
        !self.escaped && self.raw == literal
    }

    /// The string without escapes when it has none (the line was checked to be UTF-8).
    pub fn as_plain(&self) -> Option<&'a str> {
        if self.escaped {
            None
        } else {
            std::str::from_utf8(self.raw).ok()
        }
    }

    /// The decoded string.
    pub fn decode(&self) -> String {
        match self.as_plain() {
            Some(s) => s.to_owned(),
            None => {
                let mut out = String::with_capacity(self.raw.len());
                decode_into(self.raw, usize::MAX, &mut out);
                out
            }
        }
    }

    /// The decoded string with surrounding whitespace trimmed, cut to `limit` characters
    /// (`text.strip()[:limit]` in Python).
    pub fn decode_trimmed(&self, limit: usize) -> String {
        let mut out = String::new();
        let mut chars = Chars::new(self.raw);
        let mut leading = true;
        let mut kept = 0usize;
        let mut cut = false;
        for c in chars.by_ref() {
            if leading {
                if is_space(c) {
                    continue;
                }
                leading = false;
            }
            if kept == limit {
                cut = true;
                if !is_space(c) {
                    // Something follows the cut, so whitespace before the cut is not trailing.
                    return out;
                }
                break;
            }
            out.push(c);
            kept += 1;
        }
        if cut && chars.any(|c| !is_space(c)) {
            return out;
        }
        let trimmed = out.trim_end_matches(is_space).len();
        out.truncate(trimmed);
        out
    }

    /// The first `limit` characters after leading whitespace, for prefix tests.
    pub fn head(&self, limit: usize) -> String {
        Chars::new(self.raw)
            .skip_while(|&c| is_space(c))
            .take(limit)
            .collect()
    }

    /// True when the string is empty or only whitespace.
    pub fn is_blank(&self) -> bool {
        Chars::new(self.raw).all(is_space)
    }
}

/// Python's `str.isspace`, so trimming agrees with the reference reader.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Decodes escapes into `out`, stopping after `limit` characters.
fn decode_into(raw: &[u8], limit: usize, out: &mut String) {
    out.extend(Chars::new(raw).take(limit));
}

/// The characters of a raw JSON string body. Invalid escapes and lone surrogates become U+FFFD.
pub struct Chars<'a> {
    raw: &'a [u8],
    i: usize,
}

impl<'a> Chars<'a> {
    pub fn new(raw: &'a [u8]) -> Self {
        Chars { raw, i: 0 }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.raw.get(self.i..self.i + 4)?;
        let s = std::str::from_utf8(digits).ok()?;
        let v = u32::from_str_radix(s, 16).ok()?;
        self.i += 4;
        Some(v)
    }
}

impl Iterator for Chars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let b = *self.raw.get(self.i)?;
        if b < 0x80 && b != b'\\' {
            self.i += 1;
            return Some(char::from(b));
        }
        if b != b'\\' {
            // A lead byte tells the length of its character; bytes that are not UTF-8 become U+FFFD.
            let len = match b {
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => 1,
            };
            let end = (self.i + len).min(self.raw.len());
            let c = std::str::from_utf8(&self.raw[self.i..end])
                .ok()
                .and_then(|s| s.chars().next())
                .unwrap_or('\u{FFFD}');
            self.i = end;
            return Some(c);
        }
        let esc = *self.raw.get(self.i + 1)?;
        self.i += 2;
        Some(match esc {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let Some(hi) = self.hex4() else {
                    return Some('\u{FFFD}');
                };
                if (0xD800..0xDC00).contains(&hi)
                    && self.raw.get(self.i..self.i + 2) == Some(b"\\u")
                {
                    let save = self.i;
                    self.i += 2;
                    match self.hex4() {
                        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            return Some(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                        _ => self.i = save,
                    }
                }
                char::from_u32(hi).unwrap_or('\u{FFFD}')
            }
            other => other as char,
        })
    }
}

/// What an object visitor wants after a key's value was handled.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum Flow {
    Continue,
    /// Stop reading this object; the reader is left inside it.
    Stop,
}

/// A position in one line.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub i: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, i: 0 }
    }

    #[inline(always)]
    pub fn ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.i) {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    #[inline(always)]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.i).copied()
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek()? == c {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// Reads a string value; `None` when the next value is not a string or is cut.
    #[inline]
    pub fn string(&mut self) -> Option<RawStr<'a>> {
        self.eat(b'"')?;
        let start = self.i;
        let (end, escaped) = simd::string_end(self.bytes, start)?;
        self.i = end + 1;
        Some(RawStr {
            raw: &self.bytes[start..end],
            escaped,
        })
    }

    /// Reads a string value if the next value is one, else skips whatever value it is.
    pub fn string_or_skip(&mut self) -> Option<Option<RawStr<'a>>> {
        if self.peek()? == b'"' {
            self.string().map(Some)
        } else {
            self.skip().map(|_| None)
        }
    }

    /// Reads `true` (anything else, skipped, is `false`).
    pub fn boolean(&mut self) -> Option<bool> {
        self.ws();
        if self.bytes[self.i..].starts_with(b"true") {
            self.i += 4;
            Some(true)
        } else {
            self.skip().map(|_| false)
        }
    }

    /// Skips one value of any kind.
    #[inline]
    pub fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                self.i = simd::container_end(self.bytes, self.i)?;
                Some(())
            }
            _ => {
                let start = self.i;
                while let Some(&b) = self.bytes.get(self.i) {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                        break;
                    }
                    self.i += 1;
                }
                (self.i > start).then_some(())
            }
        }
    }

    /// Skips one value and returns its bytes.
    pub fn span(&mut self) -> Option<&'a [u8]> {
        self.ws();
        let start = self.i;
        self.skip()?;
        Some(&self.bytes[start..self.i])
    }

    /// Walks the object that starts here. `visit` gets each key and must consume its value. Returns
    /// `Some(Flow::Stop)` when the visitor stopped early (the reader is then inside the object).
    #[inline]
    pub fn object(
        &mut self,
        mut visit: impl FnMut(&mut Self, RawStr<'a>) -> Option<Flow>,
    ) -> Option<Flow> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(Flow::Continue);
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            if visit(self, key)? == Flow::Stop {
                return Some(Flow::Stop);
            }
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(Flow::Continue);
                }
                _ => return None,
            }
        }
    }

    /// Walks the array that starts here; `visit` must consume each element.
    pub fn array(&mut self, mut visit: impl FnMut(&mut Self) -> Option<Flow>) -> Option<Flow> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(Flow::Continue);
        }
        loop {
            if visit(self)? == Flow::Stop {
                return Some(Flow::Stop);
            }
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(Flow::Continue);
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> RawStr<'_> {
        RawStr {
            raw: s.as_bytes(),
            escaped: s.contains('\\'),
        }
    }

    #[test]
    fn decodes_escapes_and_surrogate_pairs() {
        assert_eq!(
            raw(r#"a\nb\"c\\d\u00e9\ud83d\ude00"#).decode(),
            "a\nb\"c\\dé😀"
        );
        assert_eq!(raw(r"\ud800x").decode(), "\u{FFFD}x");
    }

    #[test]
    fn trims_like_python() {
        assert_eq!(raw(r"  hello  ").decode_trimmed(100), "hello");
        assert_eq!(raw(r"abc   ").decode_trimmed(4), "abc");
        assert_eq!(raw(r"ab cd").decode_trimmed(3), "ab ");
        assert_eq!(raw(r"\n\tx").decode_trimmed(5), "x");
        assert_eq!(raw("\u{1c}x").decode_trimmed(5), "x");
    }

    #[test]
    fn walks_objects_and_skips_values() {
        let line = br#"{"a": [1, {"b": "}"}], "type" : "user", "n": -1.5e3, "t": true}"#;
        let mut r = Reader::new(line);
        let mut seen = Vec::new();
        let flow = r.object(|r, key| {
            seen.push(String::from_utf8_lossy(key.raw).into_owned());
            if key.is(b"type") {
                assert!(r.string()?.is(b"user"));
            } else if key.is(b"t") {
                assert!(r.boolean()?);
            } else {
                r.skip()?;
            }
            Some(Flow::Continue)
        });
        assert_eq!(flow, Some(Flow::Continue));
        assert_eq!(seen, ["a", "type", "n", "t"]);
        assert_eq!(r.i, line.len());
    }

    #[test]
    fn cut_lines_are_malformed() {
        let mut r = Reader::new(br#"{"type":"us"#);
        assert!(r.object(|r, _| r.skip().map(|_| Flow::Continue)).is_none());
    }
}
