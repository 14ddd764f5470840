//! Scanning a transcript from a cursor: file identity, resets, parallel parts, recent entries.

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

pub use crate::activity::RESULT_ENDS;
use crate::activity::{result_excerpt, Activity, Options, Sink, Text, ToolCall};
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
/// How many new bytes a resumed scan reads together with the check of its cursor's tail. The watcher
/// rescans thousands of files a second, most grown by a line or two: checking, reading the lines and
/// hashing the new tail is then one read, not three.
const READ_AHEAD: u64 = 64 << 10;

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
    // A head or a tail (the cursor's lengths) fits on the stack; only a hand-made cursor needs more.
    let mut small = [0u8; HEAD_BYTES as usize];
    let mut large = Vec::new();
    let buf = if len <= HEAD_BYTES {
        &mut small[..len as usize]
    } else {
        large.resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
        &mut large[..]
    };
    file.read_exact_at(buf, at)?;
    Ok(crate::activity::hash64(buf))
}

/// Bytes of a file already read, from offset `from` on: hashes of ranges inside it need no read.
#[derive(Default)]
struct Window {
    from: u64,
    bytes: Vec<u8>,
}

impl Window {
    /// Reads up to `len` bytes at `from`; fewer where the file ends.
    fn read(file: &File, from: u64, len: u64) -> io::Result<Window> {
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read_at(&mut bytes[filled..], from + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        bytes.truncate(filled);
        Ok(Window { from, bytes })
    }

    /// The bytes of `[at, at + len)`, when the window holds all of them.
    fn get(&self, at: u64, len: u64) -> Option<&[u8]> {
        let start = usize::try_from(at.checked_sub(self.from)?).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.bytes.get(start..end)
    }

    /// Hash of `len` bytes at `at`, from the window when it holds them, else read.
    fn hash(&self, file: &File, at: u64, len: u64) -> io::Result<u64> {
        match self.get(at, len) {
            Some(bytes) => Ok(crate::activity::hash64(bytes)),
            None => hash_at(file, at, len),
        }
    }

    /// What the window holds from `at` on (empty when it does not reach `at`).
    fn after(&self, at: u64) -> &[u8] {
        at.checked_sub(self.from)
            .and_then(|skip| usize::try_from(skip).ok())
            .and_then(|skip| self.bytes.get(skip..))
            .unwrap_or(&[])
    }
}

pub(crate) fn open(path: &Path) -> Result<(File, Metadata), Error> {
    open_checked(path, false)
}

/// Opens `path` for reading. Opening a FIFO for reading would block until a writer comes: the open is
/// non-blocking, and anything but a regular file (or a directory, reported as one) is refused. A path
/// not `known` as a regular file (no cursor for it) is checked before it is opened at all, as opening
/// some devices has effects; a known one skips that stat: the watcher rescans thousands a second.
fn open_checked(path: &Path, known: bool) -> Result<(File, Metadata), Error> {
    let refused = || Error::NotRegularFile(path.to_owned());
    if !known {
        let kind = std::fs::metadata(path)
            .map_err(|e| Error::io(path, e))?
            .file_type();
        if !kind.is_file() && !kind.is_dir() {
            return Err(refused());
        }
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::IsADirectory(path.to_owned()));
    }
    if !meta.is_file() {
        return Err(refused());
    }
    Ok((file, meta))
}

/// A cursor for `file` at `offset`, which must be a line boundary. `verified` is a cursor whose head
/// this scan found unchanged: a head of the same length need not be read and hashed again. Bytes in
/// `read` are not read again.
fn cursor_at(
    file: &File,
    meta: &Metadata,
    offset: u64,
    last_message: u64,
    verified: Option<&Cursor>,
    read: &Window,
) -> io::Result<Cursor> {
    let size = meta.len();
    let head_len = size.min(HEAD_BYTES);
    let tail_len = offset.min(TAIL_BYTES);
    let head_hash = match verified {
        Some(c) if c.head_len == head_len => c.head_hash,
        _ => read.hash(file, 0, head_len)?,
    };
    Ok(Cursor {
        offset,
        dev: meta.dev(),
        inode: meta.ino(),
        head_len,
        head_hash,
        tail_hash: read.hash(file, offset - tail_len, tail_len)?,
        last_message,
    })
}

/// Where to start reading given a previous cursor, and why it starts over if it does. When it does
/// not, the window holds the cursor's tail and up to [`READ_AHEAD`] bytes after it, read in one go
/// (and the head too, when the head ends near the tail).
fn resume(
    file: &File,
    meta: &Metadata,
    cursor: &Cursor,
) -> io::Result<(u64, Option<Reset>, Window)> {
    let size = meta.len();
    if cursor.dev != meta.dev() || cursor.inode != meta.ino() {
        return Ok((0, Some(Reset::Replaced), Window::default()));
    }
    if cursor.offset > size || cursor.head_len > size {
        return Ok((0, Some(Reset::Truncated), Window::default()));
    }
    let tail_len = cursor.offset.min(TAIL_BYTES);
    let tail_from = cursor.offset - tail_len;
    // Near the head, one read from the start holds the head as well.
    let from = if tail_from <= HEAD_BYTES {
        0
    } else {
        tail_from
    };
    let ahead = (size - cursor.offset).min(READ_AHEAD);
    let window = Window::read(file, from, cursor.offset + ahead - from)?;
    let Some(tail) = window.get(tail_from, tail_len) else {
        // The file shrank since its stat, as `read_exact_at` would have said.
        return Err(io::ErrorKind::UnexpectedEof.into());
    };
    if crate::activity::hash64(tail) != cursor.tail_hash
        || window.hash(file, 0, cursor.head_len)? != cursor.head_hash
    {
        return Ok((0, Some(Reset::Rewritten), Window::default()));
    }
    Ok((cursor.offset, None, window))
}

/// Scans `[start, end)` as one part; `read` holds its first bytes when they were read already.
#[allow(clippy::too_many_arguments)]
fn scan_part(
    file: &File,
    format: Format,
    start: u64,
    end: u64,
    options: &Options,
    last_message: u64,
    cancel: &AtomicBool,
    read: &[u8],
) -> io::Result<(Activity, tail::Lines)> {
    let mut activity = Activity::new(options, last_message);
    let each = |line: &[u8]| {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        activity.lines += 1;
        format.decode(line, &mut activity);
    };
    let lines =
        tail::for_each_line_from(file, start, end, options.max_line_bytes, cancel, read, each)?;
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
    let (file, meta) = open_checked(path, cursor.is_some())?;
    let io_err = |e| Error::io(path, e);
    let (start, reset, window) = match cursor {
        Some(c) => resume(&file, &meta, c).map_err(io_err)?,
        None => (0, None, Window::default()),
    };
    let read = window.after(start);
    let last_message = match (cursor, reset) {
        (Some(c), None) => c.last_message,
        _ => 0,
    };
    let size = meta.len();
    let parts = if threads > 1 && size - start >= MIN_PARALLEL_BYTES {
        threads as u64
    } else {
        1
    };
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
                let (last_message, read) = if k == 0 {
                    (last_message, read)
                } else {
                    (0, &[][..])
                };
                scan_part(&file, format, a, b, options, last_message, cancel, read)
            })
            .collect()
    } else {
        ranges
            .iter()
            .map(|&(a, b)| scan_part(&file, format, a, b, options, last_message, cancel, read))
            .collect()
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
    let verified = if reset.is_none() { cursor } else { None };
    let cursor =
        cursor_at(&file, &meta, end, activity.last_message, verified, &window).map_err(io_err)?;
    Ok(Scan {
        format,
        file_size: size,
        start_offset: start,
        reset,
        cursor,
        activity,
    })
}

/// One request of a batch.
pub struct Request {
    pub path: std::path::PathBuf,
    pub format: Format,
    pub cursor: Option<Cursor>,
    pub options_index: usize,
}

/// Scans many files, in parallel when there is enough to read; one result per request, in order.
pub fn scan_many(
    requests: &[Request],
    options: &[Options],
    cancel: &AtomicBool,
) -> Vec<Result<Scan, Error>> {
    let one = |r: &Request, threads: usize| {
        scan(
            &r.path,
            r.format,
            r.cursor.as_ref(),
            &options[r.options_index],
            threads,
            cancel,
        )
    };
    if unread_bytes(requests) < MIN_PARALLEL_BYTES {
        // A prompt's news (a few appends): starting the thread pool, which a prompt hook's new process
        // does not have yet, takes longer than reading them (about a millisecond here).
        return requests.iter().map(|r| one(r, 1)).collect();
    }
    POOL_STARTED.store(true, Ordering::Relaxed);
    let threads = rayon::current_num_threads();
    requests.par_iter().map(|r| one(r, threads)).collect()
}

/// Whether this process started rayon's thread pool (a scan with enough to read did): [`file_identities`]
/// never starts it for stats alone.
static POOL_STARTED: AtomicBool = AtomicBool::new(false);

/// How much the requests have left to read, from one `stat` each (a file that cannot be stat-ed counts
/// nothing: its scan says why).
fn unread_bytes(requests: &[Request]) -> u64 {
    requests
        .iter()
        .map(|r| {
            std::fs::metadata(&r.path)
                .map(|meta| {
                    meta.len()
                        .saturating_sub(r.cursor.as_ref().map_or(0, |c| c.offset))
                })
                .unwrap_or(0)
        })
        .sum()
}

/// One conversation entry for the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub timestamp: Option<String>,
    pub role: &'static str,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub primary_arg: Option<String>,
    /// Hash of the tool-use id, so a replayed tool use is shown once.
    pub tool_id: Option<u64>,
    /// A tool use's result, when it is in the entries read: its text (at most [`RESULT_ENDS`]
    /// characters of each end) and whether the tool said it failed.
    pub result: Option<String>,
    pub result_error: bool,
}

impl Entry {
    fn new(role: &'static str, timestamp: Option<&RawStr<'_>>) -> Entry {
        Entry {
            timestamp: timestamp.map(RawStr::decode),
            role,
            text: None,
            tool_name: None,
            primary_arg: None,
            tool_id: None,
            result: None,
            result_error: false,
        }
    }
}

/// Collects the entries of one line: its conversation entries, the tool results it holds (by the
/// hash of their call's id), and its tree link (Pi).
struct EntryCollector {
    entries: Vec<Entry>,
    text_limit: usize,
    results: Vec<(u64, String, bool)>,
    link: Option<(u64, Option<u64>)>,
    malformed: bool,
}

impl Sink for EntryCollector {
    fn wants_results(&self) -> bool {
        true
    }
    fn tool_result(&mut self, id: Option<u64>, is_error: bool, text: Option<Text<'_>>) {
        let excerpt = text.as_ref().map(result_excerpt).unwrap_or_default();
        match id {
            Some(id) => self.results.push((id, excerpt, is_error)),
            None => {
                let last = self.entries.last_mut();
                if let Some(tool) = last.filter(|e| e.role == "tool" && e.result.is_none()) {
                    tool.result = Some(excerpt);
                    tool.result_error = is_error;
                }
            }
        }
    }
    fn entry_link(&mut self, id: u64, parent: Option<u64>) {
        self.link = Some((id, parent));
    }
    fn entry_type(&mut self, _ty: Option<&RawStr<'_>>) {}
    fn meta(&mut self, _which: crate::activity::Meta, _value: &RawStr<'_>) {}
    fn prompt(&mut self, text: Text<'_>, timestamp: Option<&RawStr<'_>>) {
        if text.is_prompt() {
            self.entries.push(Entry {
                text: Some(text.trimmed(self.text_limit)),
                ..Entry::new("user", timestamp)
            });
        }
    }
    fn assistant(&mut self, _id: Option<u64>, _timestamp: Option<&RawStr<'_>>) {}
    fn assistant_text(&mut self, text: &RawStr<'_>, timestamp: Option<&RawStr<'_>>) {
        if !text.is_blank() {
            self.entries.push(Entry {
                text: Some(text.decode_trimmed(self.text_limit)),
                ..Entry::new("assistant", timestamp)
            });
        }
    }
    fn tool_use(&mut self, tool: ToolCall<'_>, timestamp: Option<&RawStr<'_>>) {
        self.entries.push(Entry {
            tool_name: Some(tool.name.to_owned()),
            primary_arg: tool.primary.map(|p| p.trimmed(self.text_limit)),
            tool_id: tool.id,
            ..Entry::new("tool", timestamp)
        });
    }
    fn malformed(&mut self) {
        self.malformed = true;
    }
    fn invalid_utf8(&mut self) {
        self.malformed = true;
    }
}

/// The last `limit` conversation entries of `path`, oldest first, read backwards from the end.
///
/// A tool use carries its result when the result is among the lines read. In a transcript that is a
/// tree (Pi: every entry names its parent), only the active branch is read: the path from the last
/// entry back to its root; entries of abandoned branches are left out. A line that cannot be decoded
/// breaks the path: the next entry read starts it again.
pub fn recent_entries(
    path: &Path,
    format: Format,
    limit: usize,
    options: &Options,
) -> Result<Vec<Entry>, Error> {
    let (file, meta) = open(path)?;
    // Newest first; a replayed tool use leaves a hole where its later copy was, so that the earliest
    // one is kept, as a forward scan counts it.
    let mut newest_first: Vec<Option<Entry>> = Vec::new();
    let mut live = 0usize;
    let mut by_tool_id: HashMap<u64, usize> = HashMap::new();
    // Results read (they follow their calls), by call id, until their call is read.
    let mut results: HashMap<u64, (String, bool)> = HashMap::new();
    // The parent of the last entry of the active branch read (`Some(None)`: its root was read).
    let mut branch: Option<Option<u64>> = None;
    let mut collector = EntryCollector {
        entries: Vec::new(),
        text_limit: options.text_limit,
        results: Vec::new(),
        link: None,
        malformed: false,
    };
    if limit > 0 {
        tail::for_each_line_backwards(
            &file,
            meta.len(),
            options.max_line_bytes,
            64 << 10,
            |line| {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return true;
                }
                if simdutf8::basic::from_utf8(line).is_err() {
                    branch = None;
                    return true;
                }
                collector.entries.clear();
                collector.results.clear();
                collector.link = None;
                collector.malformed = false;
                format.decode(line, &mut collector);
                if collector.malformed {
                    branch = None;
                    return true;
                }
                if let Some((id, parent)) = collector.link {
                    match branch {
                        // Not the parent of the entry read before it: an abandoned branch.
                        Some(Some(wanted)) if wanted != id => return true,
                        // Before the root of the active branch: another tree (after a reset).
                        Some(None) => return true,
                        _ => branch = Some(parent),
                    }
                }
                for (id, text, failed) in collector.results.drain(..) {
                    results.entry(id).or_insert((text, failed));
                }
                for mut entry in collector.entries.drain(..).rev() {
                    if let Some(id) = entry.tool_id {
                        if let Some((text, failed)) = results.remove(&id) {
                            entry.result = Some(text);
                            entry.result_error = failed;
                        }
                        if let Some(later) = by_tool_id.insert(id, newest_first.len()) {
                            // The earlier copy is kept, with the result the later one had.
                            if let Some(copy) = newest_first[later].take() {
                                if entry.result.is_none() {
                                    entry.result = copy.result;
                                    entry.result_error = copy.result_error;
                                }
                                live -= 1;
                            }
                        }
                    }
                    newest_first.push(Some(entry));
                    live += 1;
                }
                live < limit
            },
        )
        .map_err(|e| Error::io(path, e))?;
    }
    let mut entries: Vec<Entry> = newest_first.into_iter().flatten().take(limit).collect();
    entries.reverse();
    Ok(entries)
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
        file.read_exact_at(&mut buf, 0)
            .map_err(|e| Error::io(path, e))?;
        found = Format::guess(tail::without_bom(&buf));
    }
    Ok(found)
}

/// Each path's size, inode and device (`None`: it cannot be stat-ed, a missing file included), one
/// `stat` each: what tells a quiet transcript from one with news without reading it. One call for the
/// thousand siblings of a prompt, so that the caller gives up its interpreter's lock once, not per file.
pub fn file_identities<P: AsRef<Path> + Sync>(paths: &[P]) -> Vec<Option<(u64, u64, u64)>> {
    let identity = |path: &P| {
        std::fs::metadata(path)
            .ok()
            .map(|meta| (meta.len(), meta.ino(), meta.dev()))
    };
    // A stat is a microsecond or two of system call: worth the pool's threads only for many, and only
    // once a scan started them (a prompt hook's process would spend more starting them than stat-ing).
    if paths.len() < PARALLEL_IDENTITIES || !POOL_STARTED.load(Ordering::Relaxed) {
        paths.iter().map(identity).collect()
    } else {
        paths.par_iter().map(identity).collect()
    }
}

/// From this many paths on, [`file_identities`] stats them on the thread pool.
const PARALLEL_IDENTITIES: usize = 256;

/// A cursor at the start of the line that `offset` falls in.
pub fn file_cursor(path: &Path, offset: u64) -> Result<Cursor, Error> {
    let (file, meta) = open(path)?;
    let offset =
        line_start_at_or_before(&file, offset.min(meta.len())).map_err(|e| Error::io(path, e))?;
    cursor_at(&file, &meta, offset, 0, None, &Window::default()).map_err(|e| Error::io(path, e))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::TOOL_USES_KEPT;
    use std::io::Write;

    fn prompt(n: usize) -> String {
        format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"prompt {n}\"}}}}\n"
        )
    }

    fn run(path: &Path, cursor: Option<&Cursor>, threads: usize) -> Scan {
        scan(
            path,
            Format::ClaudeCode,
            cursor,
            &Options::default(),
            threads,
            &AtomicBool::new(false),
        )
        .unwrap()
    }

    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn a_half_written_line_is_counted_once_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let line = prompt(1);
        append(&path, &line.as_bytes()[..10]);
        let first = run(&path, None, 1);
        assert_eq!(
            (
                first.activity.user_messages,
                first.cursor.offset,
                first.pending_bytes()
            ),
            (0, 0, 10)
        );
        append(&path, &line.as_bytes()[10..]);
        let second = run(&path, Some(&first.cursor), 1);
        assert_eq!((second.activity.user_messages, second.reset), (1, None));
        let third = run(&path, Some(&second.cursor), 1);
        assert_eq!(third.activity.user_messages, 0);
    }

    #[test]
    fn a_resumed_scan_reads_ahead_and_still_checks_the_head() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let lines = |range: std::ops::Range<usize>| range.map(prompt).collect::<String>();
        // Past the head, so the cursor's tail is read apart from it.
        append(&path, lines(0..200).as_bytes());
        let mut cursor = run(&path, None, 1).cursor;
        assert!(cursor.offset > 2 * HEAD_BYTES);
        // Small appends (read with the tail check), one past the read-ahead, and a partial line.
        for (batch, expected) in [(lines(200..201), 1), (lines(201..2201), 2000)] {
            append(&path, batch.as_bytes());
            let s = run(&path, Some(&cursor), 1);
            assert_eq!((s.reset, s.activity.lines), (None, expected));
            // The cursor from bytes already read equals one made by reading the file.
            assert_eq!(s.cursor, file_cursor(&path, s.cursor.offset).unwrap());
            cursor = s.cursor;
        }
        assert!(lines(201..2201).len() as u64 > READ_AHEAD);
        append(&path, b"{\"type\":\"user\"");
        let s = run(&path, Some(&cursor), 1);
        assert_eq!((s.reset, s.activity.lines, s.cursor), (None, 0, cursor));
        // A rewrite of the head alone, far from the cursor, is still seen.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[20] = b'X';
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(&bytes[..100], 0)
            .unwrap();
        assert_eq!(run(&path, Some(&cursor), 1).reset, Some(Reset::Rewritten));
        // And one of the bytes just before the cursor.
        let c = run(&path, None, 1).cursor;
        let at = c.offset - 10;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(b"Y", at)
            .unwrap();
        assert_eq!(run(&path, Some(&c), 1).reset, Some(Reset::Rewritten));
    }

    #[test]
    fn resets_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        append(&path, (prompt(1) + &prompt(2)).as_bytes());
        let c = run(&path, None, 1).cursor;
        std::fs::write(&path, prompt(3)).unwrap();
        assert_eq!(run(&path, Some(&c), 1).reset, Some(Reset::Truncated));
        let c = run(&path, None, 1).cursor;
        std::fs::write(&path, prompt(4)).unwrap(); // same size, other bytes, same inode
        assert_eq!(run(&path, Some(&c), 1).reset, Some(Reset::Rewritten));
        let c = run(&path, None, 1).cursor;
        let other = dir.path().join("new.jsonl");
        std::fs::write(&other, prompt(5) + &prompt(6)).unwrap();
        std::fs::rename(&other, &path).unwrap();
        let s = run(&path, Some(&c), 1);
        assert_eq!(
            (s.reset, s.activity.user_messages),
            (Some(Reset::Replaced), 2)
        );
    }

    #[test]
    fn parallel_parts_add_up_to_one_serial_scan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let mut content = String::new();
        let mut n = 0;
        while content.len() < (MIN_PARALLEL_BYTES as usize) * 3 {
            content += &prompt(n);
            // One response over three lines, so splits can fall inside it.
            for block in [
                r#"{"type":"text","text":"a"}"#,
                r#"{"type":"tool_use","id":"T","name":"Bash","input":{"command":"ls"}}"#,
                r#"{"type":"text","text":"b"}"#,
            ] {
                let block = block.replace("\"T\"", &format!("\"t{n}\""));
                content += &format!("{{\"type\":\"assistant\",\"message\":{{\"id\":\"m{n}\",\"role\":\"assistant\",\"content\":[{block}]}},\"timestamp\":\"{n}\"}}\n");
            }
            content += &format!(
                "{{\"type\":\"attachment\",\"attachment\":{{\"content\":\"{}\"}}}}\n",
                "x".repeat(n % 5000)
            );
            n += 1;
        }
        std::fs::write(&path, &content).unwrap();
        let serial = run(&path, None, 1);
        for threads in [2, 3, 7] {
            let parallel = run(&path, None, threads);
            let (s, p) = (&serial.activity, &parallel.activity);
            assert_eq!(
                (p.user_messages, p.assistant_messages),
                (s.user_messages, s.assistant_messages)
            );
            assert_eq!(
                (s.user_messages, s.assistant_messages),
                (n as u64, n as u64)
            );
            assert_eq!(p.tools, s.tools);
            assert_eq!(p.lines, s.lines);
            assert_eq!(p.tool_uses, s.tool_uses);
            assert_eq!(
                (&p.first_timestamp, &p.last_timestamp),
                (&s.first_timestamp, &s.last_timestamp)
            );
            assert_eq!(parallel.cursor, serial.cursor);
        }
    }

    #[test]
    fn recent_entries_come_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut content: String = (0..100).map(prompt).collect();
        content += "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"partial";
        std::fs::write(&path, content).unwrap();
        let entries = recent_entries(&path, Format::ClaudeCode, 3, &Options::default()).unwrap();
        let texts: Vec<_> = entries.iter().map(|e| e.text.clone().unwrap()).collect();
        assert_eq!(texts, ["prompt 97", "prompt 98", "prompt 99"]);
    }

    #[test]
    fn recent_entries_carry_their_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let lines = [
            r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"pytest"}}]}}"#,
            r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"b","name":"Read","input":{"file_path":"/x"}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"a","type":"tool_result","content":"Exit code 1\nfailed","is_error":true}]}}"#,
            // A replayed tool use is shown once, with its result.
            r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"pytest"}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"c","type":"tool_result","content":"an orphan"}]}}"#,
        ];
        let long = "x".repeat(2000) + "\nlast";
        let huge = format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"b","type":"tool_result","content":"{}"}}]}}}}"#,
            long.replace('\n', "\\n")
        );
        std::fs::write(&path, lines.join("\n") + "\n" + &huge + "\n").unwrap();
        let entries = recent_entries(&path, Format::ClaudeCode, 10, &Options::default()).unwrap();
        let shown: Vec<_> = entries
            .iter()
            .map(|e| (e.tool_name.as_deref(), e.result.as_deref(), e.result_error))
            .collect();
        assert_eq!(shown[0], (Some("Bash"), Some("Exit code 1\nfailed"), true));
        assert_eq!(shown.len(), 2);
        // A long result keeps both ends.
        let read = shown[1].1.unwrap();
        assert!(read.starts_with("xxx") && read.ends_with("\nlast") && read.contains("\n…\n"));
        assert_eq!(read.chars().count(), 2 * RESULT_ENDS + 3);
        // The counting scan is not changed by what the reader reads.
        let never = AtomicBool::new(false);
        let s = scan(
            &path,
            Format::ClaudeCode,
            None,
            &Options::default(),
            1,
            &never,
        )
        .unwrap();
        assert_eq!((s.activity.user_messages, s.activity.tools.len()), (0, 2));
    }

    #[test]
    fn a_scan_keeps_command_results_only_when_asked_also_across_parallel_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let call = |n: usize, name: &str, input: &str| {
            format!("{{\"type\":\"assistant\",\"message\":{{\"id\":\"m{n}\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"c{n}\",\"name\":\"{name}\",\"input\":{input}}}]}}}}\n")
        };
        let result = |n: usize, text: &str, error: bool| {
            format!("{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"c{n}\",\"type\":\"tool_result\",\"content\":\"{text}\",\"is_error\":{error}}}]}}}}\n")
        };
        let pad = format!(
            "{{\"type\":\"attachment\",\"attachment\":{{\"content\":\"{}\"}}}}\n",
            "x".repeat(200_000)
        );
        let mut content = String::new();
        let mut n = 0;
        while content.len() < (MIN_PARALLEL_BYTES as usize) * 3 {
            content += &call(n, "Bash", r#"{"command":"pytest"}"#);
            // Padding between a call and its result, so that parallel parts split some pairs (and
            // few enough tool uses that all are kept).
            for _ in 0..(n % 7) {
                content += &pad;
            }
            content += &result(n, &format!("Exit code {}", n % 2), n % 2 == 1);
            content += &call(n + 1_000_000, "Read", r#"{"file_path":"/x"}"#);
            content += &result(n + 1_000_000, "text", false);
            n += 1;
        }
        let never = AtomicBool::new(false);
        let with = |threads, results| {
            let options = Options {
                results,
                categories: Format::ClaudeCode.categories(),
                ..Options::default()
            };
            scan(&path, Format::ClaudeCode, None, &options, threads, &never).unwrap()
        };
        std::fs::write(&path, &content).unwrap();
        let serial = with(1, true);
        let kept: Vec<_> = serial.activity.tool_uses.iter().rev().take(4).collect();
        let last = n - 1;
        let odd = last % 2 == 1;
        assert_eq!(kept[0].name, "Read");
        assert_eq!(kept[0].result, None); // only a command keeps its result
        assert_eq!(kept[1].name, "Bash");
        let said = format!("Exit code {}", last % 2);
        assert_eq!(
            (kept[1].result.as_deref(), kept[1].result_error),
            (Some(said.as_str()), odd)
        );
        assert_eq!(kept[3].result_error, !odd);
        assert!(serial.activity.tool_uses.len() < TOOL_USES_KEPT);
        let bash = serial
            .activity
            .tool_uses
            .iter()
            .filter(|t| t.name == "Bash");
        assert!(bash.clone().all(|t| t.result.is_some()));
        for threads in [2, 3, 7] {
            assert_eq!(
                with(threads, true).activity.tool_uses,
                serial.activity.tool_uses
            );
        }
        let counted = with(2, false);
        assert!(counted
            .activity
            .tool_uses
            .iter()
            .all(|t| t.result.is_none()));
        assert_eq!(counted.activity.tools, serial.activity.tools);
    }

    /// A Pi session as Pi 0.73 writes it, branched with `/tree` after the first reply: the second
    /// turn was abandoned and a new one goes on from the first reply, after a branch summary.
    const PI_BRANCHED: &str = r#"{"type":"session","version":3,"id":"s-uuid","timestamp":"t0","cwd":"/w"}
{"type":"model_change","id":"e0","parentId":null,"timestamp":"t0","provider":"mock","modelId":"m"}
{"type":"message","id":"u1","parentId":"e0","timestamp":"t1","message":{"role":"user","content":[{"type":"text","text":"first"}],"timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"t2","message":{"role":"assistant","content":[{"type":"text","text":"reply one"}],"stopReason":"stop","timestamp":2}}
{"type":"message","id":"u2","parentId":"a1","timestamp":"t3","message":{"role":"user","content":[{"type":"text","text":"abandoned"}],"timestamp":3}}
{"type":"message","id":"a2","parentId":"u2","timestamp":"t4","message":{"role":"assistant","content":[{"type":"text","text":"abandoned reply"}],"stopReason":"stop","timestamp":4}}
{"type":"branch_summary","id":"bs","parentId":"a1","timestamp":"t5","fromId":"a2","summary":"tried something"}
{"type":"message","id":"u3","parentId":"bs","timestamp":"t6","message":{"role":"user","content":[{"type":"text","text":"second"}],"timestamp":6}}
{"type":"message","id":"a3","parentId":"u3","timestamp":"t7","message":{"role":"assistant","content":[{"type":"text","text":"reply two"}],"stopReason":"stop","timestamp":7}}
"#;

    fn texts(path: &Path, format: Format) -> Vec<String> {
        let entries = recent_entries(path, format, 20, &Options::default()).unwrap();
        entries.into_iter().filter_map(|e| e.text).collect()
    }

    #[test]
    fn recent_entries_of_a_pi_tree_follow_the_active_branch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, PI_BRANCHED).unwrap();
        assert_eq!(
            texts(&path, Format::Pi),
            ["first", "reply one", "second", "reply two"]
        );
        // Going back to the abandoned branch (`/tree` to a2, then a new prompt) makes it the active one.
        let back = r#"{"type":"message","id":"u4","parentId":"a2","timestamp":"t8","message":{"role":"user","content":[{"type":"text","text":"back"}],"timestamp":8}}"#;
        std::fs::write(&path, format!("{PI_BRANCHED}{back}\n")).unwrap();
        assert_eq!(
            texts(&path, Format::Pi),
            ["first", "reply one", "abandoned", "abandoned reply", "back"]
        );
        // A new root (Pi's `resetLeaf`) leaves the older tree out.
        let root = r#"{"type":"message","id":"u5","parentId":null,"timestamp":"t9","message":{"role":"user","content":[{"type":"text","text":"anew"}],"timestamp":9}}"#;
        std::fs::write(&path, format!("{PI_BRANCHED}{root}\n")).unwrap();
        assert_eq!(texts(&path, Format::Pi), ["anew"]);
        // A line that cannot be read breaks the path: what is before it is read as it comes.
        std::fs::write(&path, format!("{PI_BRANCHED}{{\"type\":\"message\",\"id\n")).unwrap();
        assert_eq!(
            texts(&path, Format::Pi),
            ["first", "reply one", "second", "reply two"]
        );
        let broken = PI_BRANCHED.replace(
            r#"{"type":"branch_summary""#,
            "{\"type\":\"message\",\"id\":\"bad\n{\"type\":\"branch_summary\"",
        );
        std::fs::write(&path, broken).unwrap();
        assert_eq!(
            texts(&path, Format::Pi),
            [
                "first",
                "reply one",
                "abandoned",
                "abandoned reply",
                "second",
                "reply two"
            ]
        );
        // A file without ids (Pi v1) is read whole.
        let v1: String = PI_BRANCHED
            .lines()
            .map(|l| {
                l.replace(r#""id":"#, r#""x":"#)
                    .replace(r#""parentId":"#, r#""y":"#)
                    + "\n"
            })
            .collect();
        std::fs::write(&path, v1).unwrap();
        assert_eq!(texts(&path, Format::Pi).len(), 6);
    }

    #[test]
    fn tail_offset_lands_on_a_line_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let content: String = (0..100).map(prompt).collect();
        std::fs::write(&path, &content).unwrap();
        let at = tail_offset(&path, 200).unwrap() as usize;
        assert!(at > 0 && content.as_bytes()[at - 1] == b'\n' && content.len() - at <= 200);
        assert_eq!(tail_offset(&path, 1 << 20).unwrap(), 0);
    }

    mod cursor_invariant {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Append(Vec<u8>),
            Truncate,
            Rotate,
            Scan,
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                6 => proptest::collection::vec(prop_oneof![Just(b'x'), Just(b'\n'), Just(0xC3)], 1..40).prop_map(Op::Append),
                1 => Just(Op::Truncate),
                1 => Just(Op::Rotate),
                4 => Just(Op::Scan),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]
            /// Every complete line of a file generation is read exactly once, or a reset is reported.
            #[test]
            fn each_complete_line_is_read_once(ops in proptest::collection::vec(op(), 1..40)) {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("t.jsonl");
                std::fs::write(&path, b"").unwrap();
                let mut written: Vec<u8> = Vec::new();
                let mut read_lines = 0u64;
                let mut cursor: Option<Cursor> = None;
                let mut generation_reset = false;
                let mut generation = 0;
                let finish = |cursor: &mut Option<Cursor>, read: &mut u64, reset_expected: &mut bool| {
                    let s = run(&path, cursor.as_ref(), 1);
                    if s.reset.is_some() {
                        *read = 0;
                    } else {
                        assert!(!*reset_expected, "a new generation must be reported");
                    }
                    *reset_expected = false;
                    *read += s.activity.lines;
                    *cursor = Some(s.cursor);
                };
                for op in ops {
                    match &op {
                        Op::Append(bytes) => {
                            append(&path, bytes);
                            written.extend_from_slice(bytes);
                        }
                        // A new generation starts with a line of its own, so that it differs from
                        // the old one even where the filesystem hands out the same inode again.
                        Op::Truncate | Op::Rotate => {
                            generation += 1;
                            let header = format!("generation {generation}\n");
                            if matches!(op, Op::Rotate) {
                                std::fs::rename(&path, dir.path().join("old")).unwrap();
                            }
                            std::fs::write(&path, &header).unwrap();
                            written = header.into_bytes();
                            generation_reset |= cursor.is_some_and(|c| c.offset > 0);
                        }
                        Op::Scan => finish(&mut cursor, &mut read_lines, &mut generation_reset),
                    }
                }
                finish(&mut cursor, &mut read_lines, &mut generation_reset);
                let complete = written.split(|&b| b == b'\n').count() as u64 - 1;
                let nonblank = written
                    .split(|&b| b == b'\n')
                    .take(complete as usize)
                    .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                    .count() as u64;
                prop_assert_eq!(read_lines, nonblank);
            }
        }
    }
}

#[cfg(test)]
mod identity_tests {
    use super::file_identities;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn each_path_gets_its_size_inode_and_device_or_none() {
        let dir = std::env::temp_dir().join(format!("sidelight-identities-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.jsonl");
        std::fs::write(&file, b"{}\n{}\n").unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        let found = file_identities(&[file.clone(), dir.join("missing.jsonl")]);
        assert_eq!(found, vec![Some((6, meta.ino(), meta.dev())), None]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
