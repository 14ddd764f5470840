//! Reading the complete lines of a byte range with a bounded buffer.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// The first read buffer; it grows only to hold one long line, never past `max_line_bytes`.
const INITIAL_BUFFER: usize = 256 << 10;

/// How a read of a range ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lines {
    /// The offset just past the last complete line read.
    pub end: u64,
    /// Lines longer than the limit, streamed past without being held.
    pub too_long: u64,
}

/// The UTF-8 byte order mark some editors and tools put at the start of a file: it belongs to no line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `line` without a leading byte order mark; callers pass only a file's first line (at offset 0).
pub fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line)
}

/// The error of a read stopped by its caller.
pub fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "scan interrupted")
}

/// Calls `each` with every complete line (without its `\n`) in `[start, end)`, in order, and returns
/// where the last complete line ended. Bytes after the last `\n` are left for the next read. A line
/// longer than `max_line_bytes` is counted in `too_long` and skipped without being held in memory.
pub fn for_each_line(
    file: &File,
    start: u64,
    end: u64,
    max_line_bytes: usize,
    cancel: &AtomicBool,
    each: impl FnMut(&[u8]),
) -> io::Result<Lines> {
    for_each_line_from(file, start, end, max_line_bytes, cancel, &[], each)
}

/// [`for_each_line`] for a caller that has already read the range's first bytes (`read`, from
/// `start` on): they are not read again.
pub fn for_each_line_from(
    file: &File,
    start: u64,
    end: u64,
    max_line_bytes: usize,
    cancel: &AtomicBool,
    read: &[u8],
    mut each: impl FnMut(&[u8]),
) -> io::Result<Lines> {
    let each = |line: &[u8]| {
        each(line);
        true
    };
    for_each_line_while(file, start, end, max_line_bytes, cancel, read, each)
}

/// [`for_each_line_from`] that stops after the line for which `each` returns false: the returned
/// `end` is then just past that line.
pub fn for_each_line_while(
    file: &File,
    start: u64,
    end: u64,
    max_line_bytes: usize,
    cancel: &AtomicBool,
    read: &[u8],
    mut each: impl FnMut(&[u8]) -> bool,
) -> io::Result<Lines> {
    let mut result = Lines {
        end: start,
        too_long: 0,
    };
    if end <= start {
        return Ok(result);
    }
    let range = usize::try_from(end - start).unwrap_or(usize::MAX);
    let read = &read[..read.len().min(range)];
    let mut buf = vec![0u8; INITIAL_BUFFER.min(range).max(64).max(read.len())];
    buf[..read.len()].copy_from_slice(read);
    let mut already_read = Some(read.len()).filter(|&n| n > 0);
    // `buf[..filled]` holds the bytes from file offset `base`; `buf[..line_start]` is consumed.
    let mut base = start;
    let mut filled = 0usize;
    let mut skipping = false;
    // Whether the line being skipped is only whitespace so far (such a line is ignored, not counted).
    let mut skipped_blank = true;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        let n = if let Some(n) = already_read.take() {
            n
        } else {
            let pos = base + filled as u64;
            if pos >= end {
                break;
            }
            if filled == buf.len() {
                // The buffer holds one partial line: grow to the limit, then stream past it.
                if buf.len() <= max_line_bytes {
                    let grown = (buf.len() * 2)
                        .min(max_line_bytes.saturating_add(1))
                        .max(buf.len() + 1);
                    buf.resize(grown, 0);
                } else {
                    skipping = true;
                    skipped_blank = is_blank(&buf[..filled]);
                    base += filled as u64;
                    filled = 0;
                }
                continue;
            }
            let want = (buf.len() - filled).min(usize::try_from(end - pos).unwrap_or(usize::MAX));
            let n = file.read_at(&mut buf[filled..filled + want], pos)?;
            if n == 0 {
                break; // the file shrank under us; the next scan sees it
            }
            n
        };
        let fresh = filled;
        filled += n;
        let mut line_start = 0usize;
        let mut search_from = fresh;
        if skipping {
            match memchr::memchr(b'\n', &buf[fresh..filled]) {
                Some(nl) => {
                    skipping = false;
                    if !(skipped_blank && is_blank(&buf[fresh..fresh + nl])) {
                        result.too_long += 1;
                    }
                    line_start = fresh + nl + 1;
                    search_from = line_start;
                    result.end = base + line_start as u64;
                }
                None => {
                    skipped_blank = skipped_blank && is_blank(&buf[fresh..filled]);
                    base += filled as u64;
                    filled = 0;
                    continue;
                }
            }
        }
        for nl in memchr::memchr_iter(b'\n', &buf[search_from..filled]) {
            let nl = search_from + nl;
            let mut line = &buf[line_start..nl];
            if base + line_start as u64 == 0 {
                // A BOM at offset 0 would make the first line (a Pi header, say) malformed JSON.
                line = without_bom(line);
            }
            if line.len() > max_line_bytes {
                if !is_blank(line) {
                    result.too_long += 1;
                }
            } else if !each(line) {
                result.end = base + nl as u64 + 1;
                return Ok(result);
            }
            line_start = nl + 1;
        }
        if line_start > 0 {
            result.end = base + line_start as u64;
            buf.copy_within(line_start..filled, 0);
            base += line_start as u64;
            filled -= line_start;
        }
        if filled > max_line_bytes {
            skipping = true;
            skipped_blank = is_blank(&buf[..filled]);
            base += filled as u64;
            filled = 0;
        }
    }
    Ok(result)
}

/// True for a line of only whitespace; it stops at the first other byte, so real lines cost nothing.
fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// The offset of the first line that starts at or after `from` (just past the next `\n`), or `end`.
pub fn next_line_start(file: &File, from: u64, end: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 << 10];
    let mut pos = from;
    while pos < end {
        let want = buf
            .len()
            .min(usize::try_from(end - pos).unwrap_or(usize::MAX));
        let n = file.read_at(&mut buf[..want], pos)?;
        if n == 0 {
            break;
        }
        if let Some(nl) = memchr::memchr(b'\n', &buf[..n]) {
            return Ok(pos + nl as u64 + 1);
        }
        pos += n as u64;
    }
    Ok(end)
}

/// Reads the complete lines before `end`, newest first, calling `each` until it returns false.
/// Lines longer than `max_line_bytes` are skipped (`each` is not called) without being held.
pub fn for_each_line_backwards(
    file: &File,
    end: u64,
    max_line_bytes: usize,
    block: usize,
    mut each: impl FnMut(&[u8]) -> bool,
) -> io::Result<()> {
    // The line being assembled, as pieces newest first; dropped once it passes the limit.
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut held = 0usize;
    let mut too_long = false;
    let mut whole: Vec<u8> = Vec::new();
    // `first`: the line starts at offset 0, where a byte order mark is not part of it.
    let mut emit =
        |pieces: &mut Vec<Vec<u8>>, held: &mut usize, too_long: &mut bool, first: bool| -> bool {
            let keep_going = if *too_long {
                true
            } else {
                whole.clear();
                for piece in pieces.iter().rev() {
                    whole.extend_from_slice(piece);
                }
                each(if first { without_bom(&whole) } else { &whole })
            };
            pieces.clear();
            *held = 0;
            *too_long = false;
            keep_going
        };
    let mut buf = vec![0u8; block.max(1)];
    let mut pos = end;
    // Bytes after the last newline are a partial line: nothing is collected before it is found.
    let mut seen_newline = false;
    while pos > 0 {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        file.read_exact_at(&mut buf[..n], start)?;
        let chunk = &buf[..n];
        let mut upto = n;
        for nl in memchr::memrchr_iter(b'\n', chunk) {
            if seen_newline {
                collect(
                    &chunk[nl + 1..upto],
                    &mut pieces,
                    &mut held,
                    &mut too_long,
                    max_line_bytes,
                );
                if !emit(&mut pieces, &mut held, &mut too_long, false) {
                    return Ok(());
                }
            }
            seen_newline = true;
            upto = nl;
        }
        if seen_newline {
            collect(
                &chunk[..upto],
                &mut pieces,
                &mut held,
                &mut too_long,
                max_line_bytes,
            );
        }
        pos = start;
    }
    if seen_newline && (held > 0 || too_long) {
        // Only the line at offset 0 is left once the loop has read back to the start.
        emit(&mut pieces, &mut held, &mut too_long, true);
    }
    Ok(())
}

fn collect(
    piece: &[u8],
    pieces: &mut Vec<Vec<u8>>,
    held: &mut usize,
    too_long: &mut bool,
    max: usize,
) {
    if *too_long || piece.is_empty() {
        return;
    }
    if *held + piece.len() > max {
        *too_long = true;
        pieces.clear();
        *held = 0;
    } else {
        pieces.push(piece.to_vec());
        *held += piece.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(content: &[u8], max: usize) -> (Vec<Vec<u8>>, Lines) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(content).unwrap();
        let mut out = Vec::new();
        let r = for_each_line(
            &f,
            0,
            content.len() as u64,
            max,
            &AtomicBool::new(false),
            |l| out.push(l.to_vec()),
        )
        .unwrap();
        (out, r)
    }

    #[test]
    fn holds_back_partial_lines() {
        let (lines, r) = lines_of(b"a\nbb\ncc", 100);
        assert_eq!(lines, [b"a".to_vec(), b"bb".to_vec()]);
        assert_eq!(r.end, 5);
    }

    #[test]
    fn skips_long_lines_by_streaming() {
        let mut content = b"x\n".to_vec();
        content.extend(vec![b'y'; 5 << 20]);
        content.extend(b"\nz\n");
        let (lines, r) = lines_of(&content, 1000);
        assert_eq!(lines, [b"x".to_vec(), b"z".to_vec()]);
        assert_eq!(r.too_long, 1);
        assert_eq!(r.end, content.len() as u64);
    }

    #[test]
    fn long_lines_under_the_limit_are_whole() {
        let mut content = vec![b'y'; 3 << 20];
        content.push(b'\n');
        let (lines, _) = lines_of(&content, 4 << 20);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].len(), 3 << 20);
    }

    #[test]
    fn a_byte_order_mark_at_offset_0_is_not_part_of_the_first_line() {
        let content = b"\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n";
        let (lines, r) = lines_of(content, 100);
        // Only the file's first line loses it: a BOM further on is content (and malformed JSON).
        assert_eq!(
            lines,
            [b"{\"a\":1}".to_vec(), b"\xEF\xBB\xBF{\"b\":2}".to_vec()]
        );
        assert_eq!(r.end, content.len() as u64);
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(content).unwrap();
        let mut out = Vec::new();
        for_each_line_backwards(&f, content.len() as u64, 100, 4, |l| {
            out.push(l.to_vec());
            true
        })
        .unwrap();
        assert_eq!(
            out,
            [b"\xEF\xBB\xBF{\"b\":2}".to_vec(), b"{\"a\":1}".to_vec()]
        );
    }

    #[test]
    fn backwards_yields_newest_first() {
        let mut f = tempfile::tempfile().unwrap();
        let content = b"one\ntwo\nthree-long-line\nfour\npartial";
        f.write_all(content).unwrap();
        let mut out = Vec::new();
        for_each_line_backwards(&f, content.len() as u64, 100, 5, |l| {
            out.push(String::from_utf8(l.to_vec()).unwrap());
            true
        })
        .unwrap();
        assert_eq!(out, ["four", "three-long-line", "two", "one"]);
        let mut out = Vec::new();
        for_each_line_backwards(&f, content.len() as u64, 6, 4, |l| {
            out.push(String::from_utf8(l.to_vec()).unwrap());
            true
        })
        .unwrap();
        assert_eq!(out, ["four", "two", "one"]);
    }
}
