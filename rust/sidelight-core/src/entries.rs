//! The entry reader: a transcript read forward, in chunks, as the entries a log of the session is made
//! of (`sidelight.collapse`): prompts, replies, tool calls with their arguments, tool results with
//! their details, the session's identity and markers of how it went. Every format reads through the
//! same decoders as a count (`Format::decode`), with a sink that [wants entries](Sink::wants_entries).
//! docs/activity.md ("The entry reader") is the contract.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::activity::{Arguments, Marker, Meta, Sink, Text, ToolCall};
use crate::error::Error;
use crate::formats::Format;
use crate::json::RawStr;
use crate::tail;

/// What one chunk may take.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A chunk ends after the line that brings its entries to this many.
    pub max_entries: usize,
    /// A chunk ends after the line that brings the bytes read to this many.
    pub max_bytes: usize,
    /// Longer lines are skipped without being held.
    pub max_line_bytes: usize,
    /// Prompts and replies are cut to this many characters (after trimming).
    pub text_limit: usize,
    /// A longer tool result keeps this many characters of each end (the cut is marked `\n…\n`).
    pub result_limit: usize,
    /// The file is a subagent's own transcript (Claude Code `<session>/subagents/agent-*.jsonl`, every
    /// line `isSidechain`): its sidechain lines are its entries, where in a parent's transcript they
    /// are another agent's turns and give none.
    pub sidechain: bool,
}

/// One entry of a transcript, in transcript order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogEntry {
    /// A person's prompt (as a count judges one: not blank, not written by the client).
    Prompt {
        text: String,
        timestamp: Option<String>,
    },
    /// A reply's text (not blank).
    Reply {
        text: String,
        timestamp: Option<String>,
    },
    /// A tool call: the hash of its id, its name, and its arguments: `arguments` a JSON text (for a
    /// Codex `function_call`, the text its `arguments` string holds, which may not be JSON), or
    /// `input` a text that is not JSON (a Codex custom tool's input).
    Tool {
        id: Option<u64>,
        name: String,
        arguments: Option<String>,
        input: Option<String>,
        timestamp: Option<String>,
    },
    /// A tool result: the hash of the id of the call it answers (`None`: the call just before, on
    /// the same line), whether it failed, its text (the ends of a long one), how many lines the whole
    /// text has, and the structured details the agent recorded (JSON text).
    Result {
        id: Option<u64>,
        is_error: bool,
        text: String,
        lines: u64,
        details: Option<String>,
    },
    /// The session's id or working directory, when a line states it (again, when it changes).
    Meta { which: Meta, value: String },
    Marker {
        marker: Marker,
        timestamp: Option<String>,
    },
}

/// The entries of the complete lines of one chunk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunk {
    pub entries: Vec<LogEntry>,
    /// Where the next chunk starts: just past the last complete line read (a partial last line is
    /// left for later).
    pub next_offset: u64,
    pub lines_read: u64,
    /// Lines too long, malformed or not UTF-8.
    pub lines_skipped: u64,
    /// The earliest and the latest timestamp of the lines read.
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
}

/// The lines of `text` (`\n` separates them and a final newline starts no new line).
fn line_count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    newlines + u64::from(!text.ends_with('\n'))
}

/// `text` with its middle cut when it has more than `2 * ends + 1` characters.
fn excerpt(text: String, ends: usize) -> String {
    let count = text.chars().count();
    if count <= ends.saturating_mul(2).saturating_add(1) {
        return text;
    }
    let head: String = text.chars().take(ends).collect();
    let tail: String = text.chars().skip(count - ends).collect();
    format!("{head}\n…\n{tail}")
}

fn arguments_text(arguments: Arguments<'_>) -> (Option<String>, Option<String>) {
    match arguments {
        Arguments::Json(json) => (Some(String::from_utf8_lossy(json).into_owned()), None),
        Arguments::Encoded(json) => (Some(json.decode()), None),
        Arguments::Text(text) => (None, Some(text.decode())),
        // The raw string body is JSON already: it is put between quotes as it was written.
        Arguments::Command(command) => {
            let body = String::from_utf8_lossy(command.raw);
            (Some(format!("{{\"command\":\"{body}\"}}")), None)
        }
    }
}

/// The entry reader's sink: collects the entries of the lines of a chunk.
struct Collector {
    entries: Vec<LogEntry>,
    limits: Limits,
    /// The details of the results of the line being read.
    details: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    skipped: u64,
    first_timestamp: Option<String>,
    last_timestamp: Option<String>,
}

impl Collector {
    fn stamp(&mut self, timestamp: Option<&RawStr<'_>>) -> Option<String> {
        let ts = timestamp?.decode();
        if ts.is_empty() {
            return None;
        }
        if self.first_timestamp.as_ref().is_none_or(|f| ts < *f) {
            self.first_timestamp = Some(ts.clone());
        }
        if self.last_timestamp.as_ref().is_none_or(|l| ts > *l) {
            self.last_timestamp = Some(ts.clone());
        }
        Some(ts)
    }
}

impl Sink for Collector {
    fn wants_results(&self) -> bool {
        true
    }
    fn sidechain_is_own(&self) -> bool {
        self.limits.sidechain
    }
    fn wants_entries(&self) -> bool {
        true
    }
    fn entry_type(&mut self, _ty: Option<&RawStr<'_>>) {}
    fn meta(&mut self, which: Meta, value: &RawStr<'_>) {
        let slot = match which {
            Meta::SessionId => &mut self.session_id,
            Meta::Cwd => &mut self.cwd,
            _ => return,
        };
        let value = value.decode_trimmed(usize::MAX);
        if value.is_empty() || slot.as_ref() == Some(&value) {
            return;
        }
        *slot = Some(value.clone());
        self.entries.push(LogEntry::Meta { which, value });
    }
    fn prompt(&mut self, text: Text<'_>, timestamp: Option<&RawStr<'_>>) {
        let timestamp = self.stamp(timestamp);
        if text.is_prompt() {
            let text = text.trimmed(self.limits.text_limit);
            self.entries.push(LogEntry::Prompt { text, timestamp });
        }
    }
    fn assistant(&mut self, _id: Option<u64>, timestamp: Option<&RawStr<'_>>) {
        self.stamp(timestamp);
    }
    fn assistant_text(&mut self, text: &RawStr<'_>, timestamp: Option<&RawStr<'_>>) {
        if !text.is_blank() {
            let timestamp = self.stamp(timestamp);
            let text = text.decode_trimmed(self.limits.text_limit);
            self.entries.push(LogEntry::Reply { text, timestamp });
        }
    }
    fn tool_use(&mut self, tool: ToolCall<'_>, timestamp: Option<&RawStr<'_>>) {
        let timestamp = self.stamp(timestamp);
        let (arguments, input) = tool.arguments.map(arguments_text).unwrap_or_default();
        self.entries.push(LogEntry::Tool {
            id: tool.id,
            name: tool.name.to_owned(),
            arguments,
            input,
            timestamp,
        });
    }
    fn tool_result(&mut self, id: Option<u64>, is_error: bool, text: Option<Text<'_>>) {
        let whole = match text {
            Some(Text::Raw(raw)) => raw.decode(),
            Some(Text::Joined(s)) => s,
            None => String::new(),
        };
        let lines = line_count(&whole);
        self.entries.push(LogEntry::Result {
            id,
            is_error,
            text: excerpt(whole, self.limits.result_limit),
            lines,
            details: self.details.clone(),
        });
    }
    fn result_details(&mut self, json: &[u8]) {
        self.details = Some(String::from_utf8_lossy(json).into_owned());
    }
    fn marker(&mut self, marker: Marker, timestamp: Option<&RawStr<'_>>) {
        let timestamp = self.stamp(timestamp);
        self.entries.push(LogEntry::Marker { marker, timestamp });
    }
    fn line_timestamp(&mut self, timestamp: &RawStr<'_>) {
        self.stamp(Some(timestamp));
    }
    fn malformed(&mut self) {
        self.skipped += 1;
    }
    fn invalid_utf8(&mut self) {
        self.skipped += 1;
    }
}

/// The entries of the complete lines of `path` from `start` on, in order, until a line brings them
/// to `limits.max_entries` or the bytes read to `limits.max_bytes` (at least one line is read when
/// there is one). A `start` inside a line starts at the next line. Read on from the chunk's
/// `next_offset`; a chunk without lines read is the end of the file, for now.
pub fn read_entries(
    path: &Path,
    format: Format,
    start: u64,
    limits: &Limits,
    cancel: &AtomicBool,
) -> Result<Chunk, Error> {
    let (file, meta) = crate::scan::open(path)?;
    let io_err = |e| Error::io(path, e);
    let size = meta.len();
    let mut start = start.min(size);
    if start > 0 {
        let mut before = [0u8; 1];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut before, start - 1).map_err(io_err)?;
        if before[0] != b'\n' {
            start = tail::next_line_start(&file, start, size).map_err(io_err)?;
        }
    }
    let mut sink = Collector {
        entries: Vec::new(),
        limits: *limits,
        details: None,
        session_id: None,
        cwd: None,
        skipped: 0,
        first_timestamp: None,
        last_timestamp: None,
    };
    let (mut lines_read, mut bytes) = (0u64, 0usize);
    let each = |line: &[u8]| {
        if line.iter().all(u8::is_ascii_whitespace) {
            return true;
        }
        lines_read += 1;
        bytes = bytes.saturating_add(line.len() + 1);
        format.decode(line, &mut sink);
        sink.details = None;
        sink.entries.len() < limits.max_entries && bytes < limits.max_bytes
    };
    let lines =
        tail::for_each_line_while(&file, start, size, limits.max_line_bytes, cancel, &[], each)
            .map_err(io_err)?;
    Ok(Chunk {
        entries: sink.entries,
        next_offset: lines.end,
        lines_read,
        lines_skipped: sink.skipped + lines.too_long,
        first_timestamp: sink.first_timestamp,
        last_timestamp: sink.last_timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::hash64;

    /// Every way the core opens a transcript refuses a FIFO at once with [`Error::NotRegularFile`]
    /// (none waits for a writer: opening a FIFO for reading blocks until one comes), a scan from a
    /// cursor (whose path is not stat-ed first) included.
    #[test]
    fn every_open_refuses_a_fifo() {
        use crate::scan::{detect_format, file_cursor, recent_entries, scan, tail_offset};
        use crate::Options;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let never = AtomicBool::new(false);
        let real = dir.path().join("t.jsonl");
        std::fs::write(
            &real,
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )
        .unwrap();
        let options = Options::default();
        let cursor = scan(&real, Format::ClaudeCode, None, &options, 1, &never)
            .unwrap()
            .cursor;
        let errors = [
            scan(&path, Format::ClaudeCode, None, &options, 1, &never).err(),
            scan(
                &path,
                Format::ClaudeCode,
                Some(&cursor),
                &options,
                1,
                &never,
            )
            .err(),
            detect_format(&path).err(),
            file_cursor(&path, 0).err(),
            tail_offset(&path, 10).err(),
            recent_entries(&path, Format::ClaudeCode, 5, &options).err(),
            read_entries(&path, Format::ClaudeCode, 0, &LIMITS, &never).err(),
        ];
        for error in errors {
            let error = error.expect("a FIFO is not a transcript");
            assert!(matches!(error, Error::NotRegularFile(_)), "{error}");
            assert_eq!(
                error.to_string(),
                format!("{}: {}", crate::error::NOT_REGULAR, path.display())
            );
        }
    }

    const LIMITS: Limits = Limits {
        max_entries: 1000,
        max_bytes: 1 << 20,
        max_line_bytes: 1000,
        text_limit: 100,
        result_limit: 20,
        sidechain: false,
    };

    fn read(path: &Path, format: Format, start: u64, limits: &Limits) -> Chunk {
        read_entries(path, format, start, limits, &AtomicBool::new(false)).unwrap()
    }

    fn prompt(text: &str, ts: &str) -> LogEntry {
        LogEntry::Prompt {
            text: text.into(),
            timestamp: Some(ts.into()),
        }
    }

    const CLAUDE: &[&str] = &[
        r#"{"type":"user","sessionId":"s1","cwd":"/w","message":{"role":"user","content":"run the tests"},"timestamp":"t1"}"#,
        r#"{"type":"assistant","sessionId":"s1","cwd":"/w","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Running."},{"type":"tool_use","id":"a","name":"Bash","input":{"command":"pytest -q","timeout":5}}]},"timestamp":"t2"}"#,
        r#"{"type":"user","sessionId":"s1","cwd":"/w","message":{"role":"user","content":[{"tool_use_id":"a","type":"tool_result","content":"0123456789012345678901234567890123456789\nExit code 1","is_error":true}]},"toolUseResult":{"stdout":"x","code":1},"timestamp":"t3"}"#,
        r#"{"type":"user","isSidechain":true,"message":{"role":"user","content":"a subagent's prompt"},"timestamp":"t3"}"#,
    ];

    #[test]
    fn entries_come_in_order_with_arguments_and_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let huge = format!(
            r#"{{"type":"user","message":{{"role":"user","content":"{}"}}}}"#,
            "x".repeat(2000)
        );
        let last = r#"{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"},"timestamp":"t5"}"#;
        let partial = r#"{"type":"user","message":{"role":"user","content":"not yet"#;
        let content = [CLAUDE.join("\n"), huge, last.into(), partial.into()].join("\n");
        std::fs::write(&path, &content).unwrap();
        let chunk = read(&path, Format::ClaudeCode, 0, &LIMITS);
        let id = Some(hash64(b"a"));
        assert_eq!(
            chunk.entries,
            [
                LogEntry::Meta {
                    which: Meta::SessionId,
                    value: "s1".into()
                },
                LogEntry::Meta {
                    which: Meta::Cwd,
                    value: "/w".into()
                },
                prompt("run the tests", "t1"),
                LogEntry::Reply {
                    text: "Running.".into(),
                    timestamp: Some("t2".into())
                },
                LogEntry::Tool {
                    id,
                    name: "Bash".into(),
                    arguments: Some(r#"{"command":"pytest -q","timeout":5}"#.into()),
                    input: None,
                    timestamp: Some("t2".into())
                },
                LogEntry::Result {
                    id,
                    is_error: true,
                    // The ends of a long result, and the lines of the whole of it.
                    text: "01234567890123456789\n…\n23456789\nExit code 1".into(),
                    lines: 2,
                    details: Some(r#"{"stdout":"x","code":1}"#.into()),
                },
            ]
        );
        // The sidechain's prompt and the client's command are no prompts; the long line is skipped;
        // the partial last line is left for later.
        assert_eq!((chunk.lines_read, chunk.lines_skipped), (5, 1));
        assert_eq!(chunk.next_offset as usize, content.len() - partial.len());
        assert_eq!(
            (
                chunk.first_timestamp.as_deref(),
                chunk.last_timestamp.as_deref()
            ),
            (Some("t1"), Some("t5"))
        );
        let rest = read(&path, Format::ClaudeCode, chunk.next_offset, &LIMITS);
        assert_eq!(
            (rest.entries.len(), rest.next_offset),
            (0, chunk.next_offset)
        );
    }

    #[test]
    fn a_subagent_transcript_has_its_sidechain_lines_as_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent-a1.jsonl");
        let lines = [
            r#"{"type":"user","isSidechain":true,"sessionId":"s1","message":{"role":"user","content":"count the files"},"timestamp":"t1"}"#,
            r#"{"type":"assistant","isSidechain":true,"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"b","name":"Bash","input":{"command":"ls"}}]},"timestamp":"t2"}"#,
            r#"{"type":"user","isSidechain":true,"message":{"role":"user","content":[{"tool_use_id":"b","type":"tool_result","content":"a\nb"}]},"timestamp":"t3"}"#,
            r#"{"type":"assistant","isSidechain":true,"message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"Two files."}]},"timestamp":"t4"}"#,
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        // In a parent's transcript these lines are another agent's: only the identity is read.
        let parent = read(&path, Format::ClaudeCode, 0, &LIMITS).entries;
        assert_eq!(parent.len(), 1, "{parent:?}");
        let own = Limits {
            sidechain: true,
            ..LIMITS
        };
        let entries = read(&path, Format::ClaudeCode, 0, &own).entries;
        let kinds: Vec<&str> = entries
            .iter()
            .map(|e| match e {
                LogEntry::Prompt { .. } => "prompt",
                LogEntry::Reply { .. } => "reply",
                LogEntry::Tool { .. } => "tool",
                LogEntry::Result { .. } => "result",
                LogEntry::Meta { .. } => "meta",
                LogEntry::Marker { .. } => "marker",
            })
            .collect();
        assert_eq!(kinds, ["meta", "prompt", "tool", "result", "reply"]);
        assert_eq!(entries[1], prompt("count the files", "t1"));
    }

    #[test]
    fn chunks_resume_where_the_last_one_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let content = CLAUDE.join("\n") + "\n";
        std::fs::write(&path, &content).unwrap();
        let whole = read(&path, Format::ClaudeCode, 0, &LIMITS).entries;
        for limits in [
            Limits {
                max_entries: 1,
                ..LIMITS
            },
            Limits {
                max_bytes: 1,
                ..LIMITS
            },
        ] {
            let (mut entries, mut at, mut chunks) = (Vec::new(), 0, 0);
            loop {
                let chunk = read(&path, Format::ClaudeCode, at, &limits);
                if chunk.next_offset == at {
                    break;
                }
                // A chunk ends at a line's end, after the line that reached the limit.
                assert_eq!(content.as_bytes()[chunk.next_offset as usize - 1], b'\n');
                assert_eq!(chunk.lines_read, 1);
                at = chunk.next_offset;
                // Each chunk states the session's identity again.
                entries.extend(
                    (chunk.entries.into_iter())
                        .filter(|e| chunks == 0 || !matches!(e, LogEntry::Meta { .. })),
                );
                chunks += 1;
            }
            assert_eq!((entries, chunks), (whole.clone(), CLAUDE.len()));
        }
        // A start inside a line starts at the next one.
        let second = CLAUDE[0].len() as u64 + 1;
        let inside = read(&path, Format::ClaudeCode, 10, &LIMITS);
        assert_eq!(inside, read(&path, Format::ClaudeCode, second, &LIMITS));
        assert!(matches!(&inside.entries[2], LogEntry::Reply { text, .. } if text == "Running."));
    }

    #[test]
    fn pi_commands_details_and_markers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        let lines = [
            r#"{"type":"session","id":"p1","cwd":"/w","timestamp":"t0"}"#,
            r#"{"type":"message","id":"e1","timestamp":"t1","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.py"}}],"stopReason":"aborted"}}"#,
            r#"{"type":"message","id":"e2","timestamp":"t2","message":{"role":"toolResult","toolCallId":"c1","content":[{"type":"text","text":"one\ntwo\n"}],"details":{"lines":2},"isError":false}}"#,
            r#"{"type":"message","id":"e3","timestamp":"t3","message":{"role":"bashExecution","command":"echo \"hi\"","output":"hi","exitCode":1}}"#,
            r#"{"type":"compaction","id":"e4","timestamp":"t4","summary":"s"}"#,
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let entries = read(&path, Format::Pi, 0, &LIMITS).entries;
        assert_eq!(
            entries[2..],
            [
                LogEntry::Tool {
                    id: Some(hash64(b"c1")),
                    name: "read".into(),
                    arguments: Some(r#"{"path":"a.py"}"#.into()),
                    input: None,
                    timestamp: Some("t1".into()),
                },
                LogEntry::Marker {
                    marker: Marker::Aborted,
                    timestamp: Some("t1".into())
                },
                LogEntry::Result {
                    id: Some(hash64(b"c1")),
                    is_error: false,
                    text: "one\ntwo\n".into(),
                    lines: 2,
                    details: Some(r#"{"lines":2}"#.into()),
                },
                LogEntry::Tool {
                    id: None,
                    name: "bashExecution".into(),
                    arguments: Some(r#"{"command":"echo \"hi\""}"#.into()),
                    input: None,
                    timestamp: Some("t3".into()),
                },
                LogEntry::Result {
                    id: None,
                    is_error: true,
                    text: "Exit code: 1\nhi".into(),
                    lines: 2,
                    details: None,
                },
                LogEntry::Marker {
                    marker: Marker::Compacted,
                    timestamp: Some("t4".into())
                },
            ]
        );
    }

    #[test]
    fn codex_arguments_inputs_and_aborts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let lines = [
            r#"{"timestamp":"t0","type":"session_meta","payload":{"id":"x1","cwd":"/w"}}"#,
            r#"{"timestamp":"t1","type":"turn_context","payload":{"cwd":"/w/sub","model":"m"}}"#,
            r#"{"timestamp":"t2","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"k1"}}"#,
            r#"{"timestamp":"t3","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch","call_id":"k2"}}"#,
            r#"{"timestamp":"t4","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
            r#"{"timestamp":"t5","type":"event_msg","payload":{"type":"token_count"}}"#,
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let chunk = read(&path, Format::Codex, 0, &LIMITS);
        assert_eq!(
            chunk.entries[1..],
            [
                LogEntry::Meta {
                    which: Meta::Cwd,
                    value: "/w".into()
                },
                LogEntry::Meta {
                    which: Meta::Cwd,
                    value: "/w/sub".into()
                },
                LogEntry::Tool {
                    id: Some(hash64(b"k1")),
                    name: "shell".into(),
                    arguments: Some(r#"{"command":["bash","-lc","ls"]}"#.into()),
                    input: None,
                    timestamp: Some("t2".into()),
                },
                LogEntry::Tool {
                    id: Some(hash64(b"k2")),
                    name: "apply_patch".into(),
                    arguments: None,
                    input: Some("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch".into()),
                    timestamp: Some("t3".into()),
                },
                LogEntry::Marker {
                    marker: Marker::Aborted,
                    timestamp: Some("t4".into())
                },
            ]
        );
        assert_eq!(chunk.last_timestamp.as_deref(), Some("t5"));
    }
}
