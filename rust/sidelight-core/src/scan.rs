//! Scanning a transcript from a cursor: file identity, resets, parallel parts, recent entries.

use std::collections::HashMap;
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
    // Opening a FIFO for reading blocks until a writer comes: a transcript name that is one must fail
    // at once, not hang the hook that reads it.
    let kind = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .file_type();
    if !kind.is_file() && !kind.is_dir() {
        let error = io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device)",
        );
        return Err(Error::io(path, error));
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::IsADirectory(path.to_owned()));
    }
    Ok((file, meta))
}

/// A cursor for `file` at `offset`, which must be a line boundary. `verified` is a cursor whose head
/// this scan found unchanged: a head of the same length need not be read and hashed again.
fn cursor_at(
    file: &File,
    meta: &Metadata,
    offset: u64,
    last_message: u64,
    verified: Option<&Cursor>,
) -> io::Result<Cursor> {
    let size = meta.len();
    let head_len = size.min(HEAD_BYTES);
    let tail_len = offset.min(TAIL_BYTES);
    let head_hash = match verified {
        Some(c) if c.head_len == head_len => c.head_hash,
        _ => hash_at(file, 0, head_len)?,
    };
    Ok(Cursor {
        offset,
        dev: meta.dev(),
        inode: meta.ino(),
        head_len,
        head_hash,
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
                scan_part(
                    &file,
                    format,
                    a,
                    b,
                    options,
                    if k == 0 { last_message } else { 0 },
                    cancel,
                )
            })
            .collect()
    } else {
        ranges
            .iter()
            .map(|&(a, b)| scan_part(&file, format, a, b, options, last_message, cancel))
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
    let cursor = cursor_at(&file, &meta, end, activity.last_message, verified).map_err(io_err)?;
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

/// Scans many files in parallel; one result per request, in order.
pub fn scan_many(
    requests: &[Request],
    options: &[Options],
    cancel: &AtomicBool,
) -> Vec<Result<Scan, Error>> {
    let threads = rayon::current_num_threads();
    requests
        .par_iter()
        .map(|r| {
            scan(
                &r.path,
                r.format,
                r.cursor.as_ref(),
                &options[r.options_index],
                threads,
                cancel,
            )
        })
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
    /// Hash of the tool-use id, so a replayed tool use is shown once.
    pub tool_id: Option<u64>,
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
                tool_id: None,
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
                tool_id: None,
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
            tool_id: tool.id,
        });
    }
    fn malformed(&mut self) {}
    fn invalid_utf8(&mut self) {}
}

/// The last `limit` conversation entries of `path`, oldest first, read backwards from the end.
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
    let mut collector = EntryCollector {
        entries: Vec::new(),
        text_limit: options.text_limit,
    };
    if limit > 0 {
        tail::for_each_line_backwards(
            &file,
            meta.len(),
            options.max_line_bytes,
            64 << 10,
            |line| {
                if line.iter().all(u8::is_ascii_whitespace)
                    || simdutf8::basic::from_utf8(line).is_err()
                {
                    return true;
                }
                collector.entries.clear();
                format.decode(line, &mut collector);
                for entry in collector.entries.drain(..).rev() {
                    if let Some(id) = entry.tool_id {
                        if let Some(later) = by_tool_id.insert(id, newest_first.len()) {
                            newest_first[later] = None;
                            live -= 1;
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
        found = Format::guess(&buf);
    }
    Ok(found)
}

/// A cursor at the start of the line that `offset` falls in.
pub fn file_cursor(path: &Path, offset: u64) -> Result<Cursor, Error> {
    let (file, meta) = open(path)?;
    let offset =
        line_start_at_or_before(&file, offset.min(meta.len())).map_err(|e| Error::io(path, e))?;
    cursor_at(&file, &meta, offset, 0, None).map_err(|e| Error::io(path, e))
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
    fn a_fifo_fails_at_once_instead_of_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let Err(error) = scan(
            &path,
            Format::ClaudeCode,
            None,
            &Options::default(),
            1,
            &AtomicBool::new(false),
        ) else {
            panic!("a FIFO is not a transcript");
        };
        assert!(error.to_string().contains("not a regular file"), "{error}");
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
