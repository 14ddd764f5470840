//! Scanning a transcript from a cursor: file identity, resets, parallel parts, recent entries.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use rayon::prelude::*;

use crate::activity::{Activity, Options, Sink, Text, ToolCall};
use crate::error::Error;
use crate::formats::Format;
use crate::json::RawStr;
use crate::tail;

/// Bytes hashed at the head of a file to notice it was rewritten.
pub const HEAD_BYTES: u64 = 4096;
/// Bytes hashed just before the cursor to notice a rewrite there.
pub const TAIL_BYTES: u64 = 64;
/// Below this many bytes a range is not split between threads.
pub const MIN_PARALLEL_BYTES: u64 = 8 << 20;

/// Where a reader stopped in a file, and what the file was then.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub offset: u64,
    pub dev: u64,
    pub inode: u64,
    pub head_len: u64,
    pub head_hash: u64,
    pub tail_hash: u64,
    /// Hash of the newest assistant message id counted (0: none).
    pub last_message: u64,
}

/// Why a scan started over from the beginning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reset {
    Truncated,
    Replaced,
    Rewritten,
}

impl Reset {
    pub fn name(self) -> &'static str {
        match self {
            Reset::Truncated => "truncated",
            Reset::Replaced => "replaced",
            Reset::Rewritten => "rewritten",
        }
    }
}

/// The outcome of one scan.
#[derive(Debug)]
pub struct Scan {
    pub format: Format,
    pub file_size: u64,
    pub start_offset: u64,
    pub reset: Option<Reset>,
    pub cursor: Cursor,
    pub activity: Activity,
}

impl Scan {
    pub fn bytes_consumed(&self) -> u64 {
        self.cursor.offset - self.start_offset
    }

    pub fn pending_bytes(&self) -> u64 {
        self.file_size.saturating_sub(self.cursor.offset)
    }
}

/// Hash of `len` bytes at `at`.
fn hash_at(file: &File, at: u64, len: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, at)?;
    Ok(crate::activity::hash64(&buf))
}

fn open(path: &Path) -> Result<(File, Metadata), Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::IsADirectory(path.to_owned()));
    }
    Ok((file, meta))
}

/// A cursor for `file` at `offset`, which must be a line boundary.
fn cursor_at(file: &File, meta: &Metadata, offset: u64, last_message: u64) -> io::Result<Cursor> {
    let size = meta.len();
    let head_len = size.min(HEAD_BYTES);
    let tail_len = offset.min(TAIL_BYTES);
    Ok(Cursor {
        offset,
        dev: meta.dev(),
        inode: meta.ino(),
        head_len,
        head_hash: hash_at(file, 0, head_len)?,
        tail_hash: hash_at(file, offset - tail_len, tail_len)?,
        last_message,
    })
}

/// Where to start reading given a previous cursor, and why it starts over if it does.
fn resume(file: &File, meta: &Metadata, cursor: &Cursor) -> io::Result<(u64, Option<Reset>)> {
    let size = meta.len();
    if cursor.dev != meta.dev() || cursor.inode != meta.ino() {
        return Ok((0, Some(Reset::Replaced)));
    }
    if cursor.offset > size || cursor.head_len > size {
        return Ok((0, Some(Reset::Truncated)));
    }
    if hash_at(file, 0, cursor.head_len)? != cursor.head_hash {
        return Ok((0, Some(Reset::Rewritten)));
    }
    let tail_len = cursor.offset.min(TAIL_BYTES);
    if hash_at(file, cursor.offset - tail_len, tail_len)? != cursor.tail_hash {
        return Ok((0, Some(Reset::Rewritten)));
    }
    Ok((cursor.offset, None))
}

/// Scans `[start, end)` as one part.
fn scan_part(
    file: &File,
    format: Format,
    start: u64,
    end: u64,
    options: &Options,
    last_message: u64,
    cancel: &AtomicBool,
) -> io::Result<(Activity, tail::Lines)> {
    let mut activity = Activity::new(options, last_message);
    let lines = tail::for_each_line(file, start, end, options.max_line_bytes, cancel, |line| {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        activity.lines += 1;
        if simdutf8::basic::from_utf8(line).is_err() {
            activity.skipped.invalid_utf8 += 1;
            return;
        }
        format.decode(line, &mut activity);
    })?;
    activity.lines += lines.too_long;
    activity.skipped.too_long += lines.too_long;
    Ok((activity, lines))
}

/// Scans the complete lines of `path` after `cursor`, splitting large ranges over `threads` threads.
pub fn scan(
    path: &Path,
    format: Format,
    cursor: Option<&Cursor>,
    options: &Options,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Scan, Error> {
    let (file, meta) = open(path)?;
    let io_err = |e| Error::io(path, e);
    let (start, reset) = match cursor {
        Some(c) => resume(&file, &meta, c).map_err(io_err)?,
        None => (0, None),
    };
    let last_message = match (cursor, reset) {
        (Some(c), None) => c.last_message,
        _ => 0,
    };
    let size = meta.len();
    let parts = if threads > 1 && size - start >= MIN_PARALLEL_BYTES { threads as u64 } else { 1 };
    let mut bounds = vec![start];
    for k in 1..parts {
        let guess = start + (size - start) * k / parts;
        let at = tail::next_line_start(&file, guess.max(*bounds.last().unwrap_or(&start)), size)
            .map_err(io_err)?;
        if at < size {
            bounds.push(at);
        }
    }
    bounds.push(size);
    bounds.dedup();
    let ranges: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let results: Vec<io::Result<(Activity, tail::Lines)>> = if ranges.len() > 1 {
        ranges
            .par_iter()
            .enumerate()
            .map(|(k, &(a, b))| {
                scan_part(&file, format, a, b, options, if k == 0 { last_message } else { 0 }, cancel)
            })
            .collect()
    } else {
        ranges.iter().map(|&(a, b)| scan_part(&file, format, a, b, options, last_message, cancel)).collect()
    };
    let mut activity: Option<Activity> = None;
    let mut end = start;
    for result in results {
        let (part, lines) = result.map_err(io_err)?;
        end = end.max(lines.end);
        match activity.as_mut() {
            None => activity = Some(part),
            Some(a) => a.merge(part),
        }
    }
    let activity = activity.unwrap_or_else(|| Activity::new(options, last_message));
    let cursor = cursor_at(&file, &meta, end, activity.last_message).map_err(io_err)?;
    Ok(Scan { format, file_size: size, start_offset: start, reset, cursor, activity })
}

/// One request of a batch.
pub struct Request {
    pub path: std::path::PathBuf,
    pub format: Format,
    pub cursor: Option<Cursor>,
    pub options_index: usize,
}

/// Scans many files in parallel; one result per request, in order.
pub fn scan_many(requests: &[Request], options: &[Options], cancel: &AtomicBool) -> Vec<Result<Scan, Error>> {
    let threads = rayon::current_num_threads();
    requests
        .par_iter()
        .map(|r| scan(&r.path, r.format, r.cursor.as_ref(), &options[r.options_index], threads, cancel))
        .collect()
}

/// One conversation entry for the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub timestamp: Option<String>,
    pub role: &'static str,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub primary_arg: Option<String>,
}

/// Collects the entries of one line.
struct EntryCollector {
    entries: Vec<Entry>,
    text_limit: usize,
}

impl Sink for EntryCollector {
    fn entry_type(&mut self, _ty: Option<&RawStr<'_>>) {}
    fn meta(&mut self, _which: crate::activity::Meta, _value: &RawStr<'_>) {}
    fn prompt(&mut self, text: Text<'_>, timestamp: Option<&RawStr<'_>>) {
        if text.is_prompt() {
            self.entries.push(Entry {
                timestamp: timestamp.map(RawStr::decode),
                role: "user",
                text: Some(text.trimmed(self.text_limit)),
                tool_name: None,
                primary_arg: None,
            });
        }
    }
    fn assistant(&mut self, _id: Option<u64>, _timestamp: Option<&RawStr<'_>>) {}
    fn assistant_text(&mut self, text: &RawStr<'_>, timestamp: Option<&RawStr<'_>>) {
        if !text.is_blank() {
            self.entries.push(Entry {
                timestamp: timestamp.map(RawStr::decode),
                role: "assistant",
                text: Some(text.decode_trimmed(self.text_limit)),
                tool_name: None,
                primary_arg: None,
            });
        }
    }
    fn tool_use(&mut self, tool: ToolCall<'_>, timestamp: Option<&RawStr<'_>>) {
        self.entries.push(Entry {
            timestamp: timestamp.map(RawStr::decode),
            role: "tool",
            text: None,
            tool_name: Some(tool.name.to_owned()),
            primary_arg: tool.primary.map(|p| p.trimmed(self.text_limit)),
        });
    }
    fn malformed(&mut self) {}
}

/// The last `limit` conversation entries of `path`, oldest first, read backwards from the end.
pub fn recent_entries(path: &Path, format: Format, limit: usize, options: &Options) -> Result<Vec<Entry>, Error> {
    let (file, meta) = open(path)?;
    let mut newest_first: Vec<Entry> = Vec::new();
    let mut collector = EntryCollector { entries: Vec::new(), text_limit: options.text_limit };
    if limit > 0 {
        tail::for_each_line_backwards(&file, meta.len(), options.max_line_bytes, 64 << 10, |line| {
            if line.iter().all(u8::is_ascii_whitespace) || simdutf8::basic::from_utf8(line).is_err() {
                return true;
            }
            collector.entries.clear();
            format.decode(line, &mut collector);
            newest_first.extend(collector.entries.drain(..).rev());
            newest_first.len() < limit
        })
        .map_err(|e| Error::io(path, e))?;
    }
    newest_first.truncate(limit);
    newest_first.reverse();
    Ok(newest_first)
}

/// The format of `path`, judged from its first lines (up to 64 KiB or 20 lines).
pub fn detect_format(path: &Path) -> Result<Option<Format>, Error> {
    let (file, meta) = open(path)?;
    let mut found = None;
    let mut seen = 0;
    let end = meta.len().min(64 << 10);
    let never = AtomicBool::new(false);
    tail::for_each_line(&file, 0, end, usize::MAX, &never, |line| {
        if found.is_none() && seen < 20 && simdutf8::basic::from_utf8(line).is_ok() {
            seen += 1;
            found = Format::guess(line);
        }
    })
    .map_err(|e| Error::io(path, e))?;
    if found.is_none() && end < meta.len() {
        return Ok(None);
    }
    // A file of one unterminated line (a session still being written) is judged by that line.
    if found.is_none() && seen == 0 && end > 0 {
        let mut buf = vec![0u8; end as usize];
        file.read_exact_at(&mut buf, 0).map_err(|e| Error::io(path, e))?;
        found = Format::guess(&buf);
    }
    Ok(found)
}

/// A cursor at the start of the line that `offset` falls in.
pub fn file_cursor(path: &Path, offset: u64) -> Result<Cursor, Error> {
    let (file, meta) = open(path)?;
    let offset = line_start_at_or_before(&file, offset.min(meta.len())).map_err(|e| Error::io(path, e))?;
    cursor_at(&file, &meta, offset, 0).map_err(|e| Error::io(path, e))
}

fn line_start_at_or_before(file: &File, offset: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 << 10];
    let mut pos = offset;
    while pos > 0 {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        file.read_exact_at(&mut buf[..n], start)?;
        if let Some(nl) = memchr::memrchr(b'\n', &buf[..n]) {
            return Ok(start + nl as u64 + 1);
        }
        pos = start;
    }
    Ok(0)
}

/// The offset of the first line that starts within the last `max_bytes` of `path`.
pub fn tail_offset(path: &Path, max_bytes: u64) -> Result<u64, Error> {
    let (file, meta) = open(path)?;
    let size = meta.len();
    if size <= max_bytes {
        return Ok(0);
    }
    let from = size - max_bytes;
    // `from` itself is a line start when the byte before it ends a line.
    let at = tail::next_line_start(&file, from - 1, size).map_err(|e| Error::io(path, e))?;
    if at < size {
        return Ok(at);
    }
    // One line fills the whole tail: start where it starts, so it is read once it is complete.
    line_start_at_or_before(&file, from).map_err(|e| Error::io(path, e))
}
