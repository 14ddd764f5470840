//! Per-format line decoders. Each reads only the fields it needs and reports them to a [`Sink`].
//! docs/activity.md is the contract they implement. Besides the three built-in formats, a format may
//! be declared at run time ([`crate::declared`]): a compiled description, or a decoder written outside
//! the core; both are registered by name ([`register`]) and named like a built-in one.

use std::sync::RwLock;

use crate::activity::{decode_raw, hash64, Arguments, Marker, Meta, Sink, Text, ToolCall};
use crate::declared::{Declared, LineDecoder};
use crate::json::{Chars, Flow, RawStr, Reader};
use crate::simd;

#[derive(Clone, Copy, Debug)]
pub enum Format {
    ClaudeCode,
    Pi,
    Codex,
    /// A declared format: a description compiled into a decoder (see [`crate::declared`]).
    Declared(&'static Declared),
    /// A decoder written outside the core (the Python fallback).
    External(&'static dyn LineDecoder),
}

impl PartialEq for Format {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

/// The formats declared at run time, by name. A declaration is compiled once and lives as long as the
/// process (it is leaked): scans in flight keep using the one they started with.
static REGISTRY: RwLock<Vec<Format>> = RwLock::new(Vec::new());

/// Registers a declared or external format under its name, replacing one of the same name. The names
/// of the built-in formats cannot be taken.
pub fn register(format: Format) -> Result<(), String> {
    let name = format.name();
    if Format::ALL.iter().any(|f| f.name() == name) {
        return Err(format!(
            "the name {name:?} is a built-in format's; choose another"
        ));
    }
    if matches!(format, Format::ClaudeCode | Format::Pi | Format::Codex) {
        return Err("only declared and external formats are registered".to_owned());
    }
    let mut registry = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    registry.retain(|f| f.name() != name);
    registry.push(format);
    Ok(())
}

/// Compiles `spec` and registers it as `name`.
pub fn declare(name: &str, spec: &crate::declared::Spec) -> Result<Format, String> {
    let declared = Declared::compile(name, spec)?;
    if Format::ALL.iter().any(|f| f.name() == name) {
        return Err(format!(
            "name: {name:?} is a built-in format's; choose another"
        ));
    }
    let format = Format::Declared(Box::leak(Box::new(declared)));
    register(format)?;
    Ok(format)
}

/// The names of the formats registered at run time, in the order they were registered.
pub fn registered() -> Vec<&'static str> {
    let registry = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    registry.iter().map(|f| f.name()).collect()
}

impl Format {
    pub const ALL: [Format; 3] = [Format::ClaudeCode, Format::Pi, Format::Codex];

    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Pi => "pi",
            Format::Codex => "codex",
            Format::Declared(d) => d.name(),
            Format::External(d) => d.name(),
        }
    }

    /// A built-in format, or one registered at run time, by name.
    pub fn parse(name: &str) -> Option<Format> {
        if let Some(f) = Format::ALL.into_iter().find(|f| f.name() == name) {
            return Some(f);
        }
        let registry = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
        registry.iter().copied().find(|f| f.name() == name)
    }

    /// Decodes one complete line (without its newline) into `sink`.
    pub fn decode<S: Sink>(self, line: &[u8], sink: &mut S) {
        let ok = match self {
            Format::ClaudeCode => claude_code(line, sink),
            Format::Pi => pi(line, sink),
            Format::Codex => codex(line, sink),
            Format::Declared(d) => d.decode(line, sink),
            Format::External(d) => {
                if d.decode(line, sink) {
                    Ok(())
                } else {
                    Err(Bad::Malformed)
                }
            }
        };
        match ok {
            Ok(()) => {}
            // A line that is not UTF-8 is counted as such, whatever else is wrong with it.
            Err(Bad::Malformed) if simdutf8::basic::from_utf8(line).is_err() => sink.invalid_utf8(),
            Err(Bad::Malformed) => sink.malformed(),
            Err(Bad::InvalidUtf8) => sink.invalid_utf8(),
        }
    }

    /// Judges a format from one line; `None` when the line says nothing.
    pub fn guess(line: &[u8]) -> Option<Format> {
        let mut ty = None;
        let mut keys = 0u32;
        let (mut payload, mut session_id, mut parent_uuid, mut message) =
            (false, false, false, false);
        Reader::new(line).object(|r, key| {
            keys += 1;
            match key.raw {
                b"type" => ty = r.string_or_skip()?.map(|t| t.raw),
                b"payload" => {
                    payload = true;
                    r.skip()?;
                }
                b"sessionId" => {
                    session_id = true;
                    r.skip()?;
                }
                b"parentUuid" | b"isSidechain" | b"uuid" | b"leafUuid" => {
                    parent_uuid = true;
                    r.skip()?;
                }
                b"message" => {
                    message = true;
                    r.skip()?;
                }
                _ => r.skip()?,
            }
            Some(Flow::Continue)
        })?;
        let ty = ty?;
        if payload
            && matches!(
                ty,
                b"session_meta" | b"response_item" | b"event_msg" | b"turn_context" | b"compacted"
            )
        {
            return Some(Format::Codex);
        }
        if session_id || parent_uuid {
            return Some(Format::ClaudeCode);
        }
        match ty {
            b"session"
            | b"model_change"
            | b"thinking_level_change"
            | b"custom_message"
            | b"session_info"
            | b"branch_summary"
            | b"label" => Some(Format::Pi),
            b"message" if message => Some(Format::Pi),
            b"summary" | b"queue-operation" | b"file-history-snapshot" | b"custom-title" => {
                Some(Format::ClaudeCode)
            }
            _ => None,
        }
    }
}

/// Checks what follows a line's object (nothing but whitespace when it was read to its end, or at least
/// a closing brace at the end of the line when reading stopped early), and that what was read is UTF-8.
pub(crate) fn line_end(r: &mut Reader<'_>, stopped: bool) -> Result<(), Bad> {
    let read = if stopped {
        if !r.bytes.trim_ascii_end().ends_with(b"}") {
            return Err(Bad::Malformed);
        }
        &r.bytes[..r.i]
    } else {
        r.ws();
        if r.i != r.bytes.len() {
            return Err(Bad::Malformed);
        }
        r.bytes
    };
    // Only the bytes read are checked: what was skipped unread never reaches a count or a text.
    simdutf8::basic::from_utf8(read)
        .map(|_| ())
        .map_err(|_| Bad::InvalidUtf8)
}

/// Why a line was not decoded.
pub(crate) enum Bad {
    Malformed,
    InvalidUtf8,
}

/// Reads the object value at the reader with `read`, and says whether `read` stopped early. Then, unless
/// `may_stop_line` says nothing after it is needed, the rest of the object is stepped over so that the
/// line can be read on.
fn object_value<'a>(
    r: &mut Reader<'a>,
    may_stop_line: bool,
    read: impl FnOnce(&mut Reader<'a>) -> Option<Flow>,
) -> Option<bool> {
    r.ws();
    let start = r.i;
    if read(r)? == Flow::Continue {
        return Some(false);
    }
    if !may_stop_line {
        r.i = simd::container_end(r.bytes, start)?;
    }
    Some(true)
}

/// Keys of a tool input that name what it acts on, most telling first.
pub(crate) const PRIMARY_KEYS: [&[u8]; 8] = [
    b"file_path",
    b"notebook_path",
    b"command",
    b"cmd",
    b"pattern",
    b"query",
    b"url",
    b"path",
];

/// What a tool input says: its primary argument, the files of a patch it carries, and the details a
/// hot memory shows (the lines a write creates, an edit's old and new text).
#[derive(Default)]
pub(crate) struct ToolInput<'a> {
    pub(crate) primary: Option<Text<'a>>,
    pub(crate) files: Vec<String>,
    pub(crate) details: Details,
}

/// A tool use's details for a hot memory; see docs/activity.md, "Tool details".
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct Details {
    pub lines: Option<u64>,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
}

/// How long a detail snippet is kept (a hot memory shows 30 characters of it).
const DETAIL_CHARS: usize = 100;

/// The lines of a text: `\n` separates them and a final newline starts no new line.
fn line_count(text: &RawStr<'_>) -> u64 {
    let (mut newlines, mut last) = (0u64, None);
    for c in Chars::new(text.raw) {
        if c == '\n' {
            newlines += 1;
        }
        last = Some(c);
    }
    match last {
        None => 0,
        Some('\n') => newlines,
        Some(_) => newlines + 1,
    }
}

/// An edit's old and new text from `{old_string, new_string}` or `{oldText, newText}`.
fn edit_pair<'a>(
    r: &mut Reader<'a>,
    old: &mut Option<RawStr<'a>>,
    new: &mut Option<RawStr<'a>>,
) -> Option<()> {
    r.object(|r, key| {
        match key.raw {
            b"old_string" | b"oldText" => *old = r.string_or_skip()?,
            b"new_string" | b"newText" => *new = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

pub(crate) fn tool_input<'a, K: AsRef<[u8]>>(
    input: &'a [u8],
    name: &str,
    keys: &[K],
) -> ToolInput<'a> {
    let mut best: Option<(usize, Text<'a>)> = None;
    let mut patch: Option<String> = None;
    let mut content: Option<RawStr<'a>> = None;
    let (mut old, mut new): (Option<RawStr<'a>>, Option<RawStr<'a>>) = (None, None);
    let _ = Reader::new(input).object(|r, key| {
        let rank = keys.iter().position(|k| key.is(k.as_ref()));
        let is_patch = name == "apply_patch" && (key.is(b"input") || key.is(b"patch"));
        match (rank, r.peek()?) {
            (Some(rank), b'"') => {
                let value = r.string()?;
                if !value.is_blank() && best.as_ref().is_none_or(|(b, _)| rank < *b) {
                    best = Some((rank, Text::Raw(value)));
                }
            }
            (Some(rank), b'[') if key.is(b"command") => {
                let mut parts = Vec::new();
                r.array(|r| {
                    if let Some(s) = r.string_or_skip()? {
                        parts.push(s.decode());
                    }
                    Some(Flow::Continue)
                })?;
                if parts.first().map(String::as_str) == Some("apply_patch") && parts.len() > 1 {
                    patch = parts.last().cloned();
                }
                if let Some(cmd) = shell_command(&parts) {
                    if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                        best = Some((rank, Text::Joined(cmd)));
                    }
                }
            }
            (_, b'"') if is_patch => patch = Some(r.string()?.decode()),
            (None, b'"') if key.is(b"content") => content = r.string(),
            (None, b'"') if key.is(b"old_string") || key.is(b"oldText") => old = r.string(),
            (None, b'"') if key.is(b"new_string") || key.is(b"newText") => new = r.string(),
            (None, b'[') if key.is(b"edits") => {
                // Several edits in one call: the first one stands for them.
                let mut first = true;
                r.array(|r| {
                    if first && r.peek()? == b'{' && old.is_none() && new.is_none() {
                        edit_pair(r, &mut old, &mut new)?;
                    } else {
                        r.skip()?;
                    }
                    first = false;
                    Some(Flow::Continue)
                })?;
            }
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    });
    if let Some(patch) = patch {
        let files = patch_files(&patch);
        let primary = files.first().cloned().map(Text::Joined);
        return ToolInput {
            primary: primary.or(best.map(|(_, t)| t)),
            details: patch_details(&patch),
            files,
        };
    }
    let snippet = |s: Option<RawStr<'_>>| s.map(|s| s.decode_trimmed(DETAIL_CHARS));
    ToolInput {
        primary: best.map(|(_, t)| t),
        files: Vec::new(),
        details: Details {
            lines: content.as_ref().map(line_count),
            old_text: snippet(old),
            new_text: snippet(new),
        },
    }
}

/// A patch's details, from its first file: an added file's `+` lines, or an update's first removed
/// and first added line.
fn patch_details(patch: &str) -> Details {
    let mut details = Details::default();
    let mut section: Option<bool> = None; // Some(true): an added file, Some(false): an update
    for line in patch.lines() {
        if line.starts_with("*** ") {
            if section.is_some() && !line.starts_with("*** Move to: ") {
                break; // the next file
            }
            if line.starts_with("*** Add File: ") {
                section = Some(true);
                details.lines = Some(0);
            } else if line.starts_with("*** Update File: ") {
                section = Some(false);
            }
            continue;
        }
        match section {
            Some(true) if line.starts_with('+') => *details.lines.get_or_insert(0) += 1,
            Some(false) if line.starts_with('-') && details.old_text.is_none() => {
                details.old_text = Some(cut_trimmed(&line[1..]));
            }
            Some(false) if line.starts_with('+') && details.new_text.is_none() => {
                details.new_text = Some(cut_trimmed(&line[1..]));
            }
            _ => {}
        }
    }
    details
}

fn cut_trimmed(text: &str) -> String {
    text.trim_matches(crate::json::is_space)
        .chars()
        .take(DETAIL_CHARS)
        .collect()
}

/// `["bash", "-lc", "npm test"]` → `npm test`; other lists are joined by spaces.
fn shell_command(parts: &[String]) -> Option<String> {
    if parts.is_empty() {
        return None;
    }
    let shell = parts[0].rsplit('/').next().unwrap_or("");
    if parts.len() >= 3
        && matches!(shell, "bash" | "sh" | "zsh" | "dash" | "fish")
        && matches!(parts[1].as_str(), "-c" | "-lc")
    {
        // `bash -c SCRIPT ARG0 ARG1…`: the script is the word after the flag.
        return Some(parts[2].clone());
    }
    Some(parts.join(" "))
}

/// The files an `apply_patch` patch adds, updates, deletes or moves to.
pub fn patch_files(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut files: Vec<String> = Vec::new();
    for line in patch.lines() {
        if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            let path = path.trim();
            if !path.is_empty() && !files.iter().any(|f| f == path) {
                files.push(path.to_owned());
            }
        }
    }
    files
}

/// A content block of a message.
enum Block<'a> {
    Text(RawStr<'a>),
    ToolUse {
        id: Option<u64>,
        name: RawStr<'a>,
        input: Option<&'a [u8]>,
    },
}

/// The text of a tool result: a string, or the texts of a list of blocks.
enum ResultText<'a> {
    Str(RawStr<'a>),
    Parts(Vec<RawStr<'a>>),
}

impl<'a> ResultText<'a> {
    fn text(self) -> Option<Text<'a>> {
        match self {
            ResultText::Str(s) => Some(Text::Raw(s)),
            ResultText::Parts(parts) if parts.len() == 1 => Some(Text::Raw(parts[0])),
            ResultText::Parts(parts) => Text::join(&parts),
        }
    }
}

/// A Claude Code `tool_result` block (read only for a sink that wants results).
struct ResultBlock<'a> {
    id: Option<RawStr<'a>>,
    is_error: bool,
    content: Option<ResultText<'a>>,
}

/// Reads a tool result's content: a string, or a list of blocks whose `text` is kept.
fn result_content<'a>(r: &mut Reader<'a>) -> Option<Option<ResultText<'a>>> {
    match r.peek()? {
        b'"' => Some(Some(ResultText::Str(r.string()?))),
        b'[' => {
            let mut parts = Vec::new();
            r.array(|r| {
                if r.peek()? != b'{' {
                    r.skip()?;
                    return Some(Flow::Continue);
                }
                r.object(|r, key| {
                    let text = r.string_or_skip()?;
                    if let (true, Some(text)) = (key.is(b"text"), text) {
                        parts.push(text);
                    }
                    Some(Flow::Continue)
                })?;
                Some(Flow::Continue)
            })?;
            Some(Some(ResultText::Parts(parts)))
        }
        _ => r.skip().map(|_| None),
    }
}

/// A number's digits as an integer (`null` and anything else: `None`).
fn integer(span: &[u8]) -> Option<i64> {
    std::str::from_utf8(span).ok()?.trim().parse().ok()
}

/// What the `message` of a Claude Code or Pi line holds.
#[derive(Default)]
struct Message<'a> {
    role: Option<RawStr<'a>>,
    id: Option<RawStr<'a>>,
    model: Option<RawStr<'a>>,
    prompt_parts: Vec<RawStr<'a>>,
    prompt_string: Option<RawStr<'a>>,
    tool_result: bool,
    blocks: Vec<Block<'a>>,
    command: Option<RawStr<'a>>,
    /// Set for a sink that wants tool results: the fields below are read only then.
    want_results: bool,
    results: Vec<ResultBlock<'a>>,
    /// Pi: a `toolResult` message's call id and error flag; a `bashExecution`'s output and exit.
    tool_call_id: Option<RawStr<'a>>,
    is_error: bool,
    output: Option<RawStr<'a>>,
    exit_code: Option<&'a [u8]>,
    cancelled: bool,
    /// Set for a sink that wants entries: Pi's result `details` and a reply that stopped short.
    want_entries: bool,
    details: Option<&'a [u8]>,
    aborted: bool,
}

impl<'a> Message<'a> {
    fn role_is(&self, role: &[u8]) -> bool {
        self.role.is_some_and(|r| r.is(role))
    }

    /// A Pi `toolResult` message's text: its text blocks.
    fn result_text(&self) -> Option<Text<'a>> {
        match self.prompt_string {
            Some(s) => Some(Text::Raw(s)),
            None => ResultText::Parts(self.prompt_parts.clone()).text(),
        }
    }

    /// A Pi `bashExecution`'s result: failed when cancelled or its exit code is not 0, its text the
    /// exit code (as a first line) and its output.
    fn bash_result(&self) -> (bool, Option<Text<'static>>) {
        let code = self.exit_code.and_then(integer);
        let failed = self.cancelled || code.is_some_and(|c| c != 0);
        let mut text = match (code, self.cancelled) {
            (_, true) => "Cancelled\n".to_owned(),
            (Some(c), false) => format!("Exit code: {c}\n"),
            (None, false) => String::new(),
        };
        if let Some(output) = self.output {
            text.push_str(&output.decode());
        }
        (failed, (!text.is_empty()).then_some(Text::Joined(text)))
    }

    fn prompt(&self) -> Option<Text<'a>> {
        if self.tool_result {
            return None;
        }
        match self.prompt_string {
            Some(s) => Some(Text::Raw(s)),
            None if self.prompt_parts.len() == 1 => Some(Text::Raw(self.prompt_parts[0])),
            None => Text::join(&self.prompt_parts),
        }
    }
}

/// Reads one content block; stops the message at a tool result (nothing in it is needed), unless the
/// sink wants results: then the result is kept and the blocks after it are read too.
fn content_block<'a>(r: &mut Reader<'a>, msg: &mut Message<'a>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    let want = msg.want_results;
    let mut ty: Option<RawStr<'a>> = None;
    let (mut text, mut id, mut name, mut input) = (None, None, None, None);
    let (mut result_id, mut is_error, mut content) = (None, false, None);
    let flow = r.object(|r, key| {
        match key.raw {
            b"type" => {
                ty = r.string_or_skip()?;
                if !want && ty.is_some_and(|t| t.is(b"tool_result")) {
                    return Some(Flow::Stop);
                }
            }
            b"text" => text = r.string_or_skip()?,
            b"id" => id = r.string_or_skip()?,
            b"name" => name = r.string_or_skip()?,
            b"input" | b"arguments" => input = Some(r.span()?),
            b"tool_use_id" if want => result_id = r.string_or_skip()?,
            b"is_error" if want => is_error = r.boolean()?,
            b"content" if want => content = result_content(r)?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    let ty = ty?;
    if flow == Flow::Stop || ty.is(b"tool_result") {
        msg.tool_result = true;
        if want {
            msg.results.push(ResultBlock {
                id: result_id,
                is_error,
                content,
            });
            return Some(Flow::Continue);
        }
        return Some(Flow::Stop);
    }
    if ty.is(b"text") {
        if let Some(text) = text {
            msg.prompt_parts.push(text);
            msg.blocks.push(Block::Text(text));
        }
    } else if ty.is(b"tool_use") || ty.is(b"toolCall") {
        if let Some(name) = name {
            msg.blocks.push(Block::ToolUse {
                id: id.map(|i| hash64(i.raw)),
                name,
                input,
            });
        }
    }
    Some(Flow::Continue)
}

/// Reads a `message` object. Returns `Flow::Stop` when it stopped at a tool result.
fn message<'a>(r: &mut Reader<'a>, msg: &mut Message<'a>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    r.object(|r, key| {
        match key.raw {
            b"role" => {
                msg.role = r.string_or_skip()?;
                if !msg.want_results && msg.role_is(b"toolResult") {
                    return Some(Flow::Stop);
                }
            }
            b"id" => msg.id = r.string_or_skip()?,
            b"model" => msg.model = r.string_or_skip()?,
            b"command" => msg.command = r.string_or_skip()?,
            b"toolCallId" if msg.want_results => msg.tool_call_id = r.string_or_skip()?,
            b"isError" if msg.want_results => msg.is_error = r.boolean()?,
            b"output" if msg.want_results => msg.output = r.string_or_skip()?,
            b"exitCode" if msg.want_results => msg.exit_code = Some(r.span()?),
            b"cancelled" if msg.want_results => msg.cancelled = r.boolean()?,
            b"details" if msg.want_entries => msg.details = Some(r.span()?),
            b"stopReason" if msg.want_entries => {
                let reason = r.string_or_skip()?;
                msg.aborted = reason.is_some_and(|s| s.is(b"aborted") || s.is(b"error"));
            }
            b"content" => match r.peek()? {
                b'"' => msg.prompt_string = Some(r.string()?),
                b'[' => {
                    if r.array(|r| content_block(r, msg))? == Flow::Stop {
                        return Some(Flow::Stop);
                    }
                }
                _ => r.skip()?,
            },
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
}

/// Reports the blocks of an assistant message.
fn report_assistant<S: Sink>(msg: &Message<'_>, ts: Option<&RawStr<'_>>, sink: &mut S) {
    let entries = sink.wants_entries();
    for block in &msg.blocks {
        match block {
            Block::Text(text) => sink.assistant_text(text, ts),
            Block::ToolUse { id, name, input } => {
                let name = name.decode();
                let arguments = input.filter(|_| entries).map(Arguments::Json);
                let input = input
                    .map(|i| tool_input(i, &name, &PRIMARY_KEYS))
                    .unwrap_or_default();
                let call = ToolCall {
                    id: *id,
                    name: &name,
                    primary: input.primary,
                    files: input.files,
                    details: input.details,
                    arguments,
                };
                sink.tool_use(call, ts);
            }
        }
    }
}

/// Claude Code: see docs/activity.md.
fn claude_code<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let mut ty: Option<RawStr<'_>> = None;
    let mut ts: Option<RawStr<'_>> = None;
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let mut msg = Message {
        want_results: want,
        ..Message::default()
    };
    let mut has_message = false;
    let mut details = None;
    let (mut meta, mut sidechain, mut compact) = (false, false, false);
    let mut titles: Vec<(&[u8], RawStr<'_>)> = Vec::new();
    let (mut session_id, mut cwd) = (None, None);
    let mut skip_rest = false;
    let flow = r
        .object(|r, key| {
            match key.raw {
                b"type" => {
                    ty = r.string_or_skip()?;
                    let t = ty.map(|t| t.raw).unwrap_or_default();
                    // Only these types hold anything we count; the rest of any other line is not read.
                    if !matches!(
                        t,
                        b"user" | b"assistant" | b"custom-title" | b"ai-title" | b"summary"
                    ) {
                        skip_rest = true;
                    }
                    if has_message && msg.tool_result && !entries {
                        skip_rest = true;
                    }
                }
                b"message" => {
                    has_message = r.peek()? == b'{';
                    let may_stop = ty.is_some() && !sink.needs_identity();
                    if object_value(r, may_stop, |r| message(r, &mut msg))? && ty.is_some() {
                        skip_rest = true;
                    }
                }
                b"timestamp" => ts = r.string_or_skip()?,
                b"isMeta" => meta = r.boolean()?,
                b"isSidechain" => sidechain = r.boolean()?,
                b"isCompactSummary" => compact = r.boolean()?,
                b"toolUseResult" if entries => details = Some(r.span()?),
                b"sessionId" => session_id = r.string_or_skip()?,
                b"cwd" => cwd = r.string_or_skip()?,
                b"customTitle" | b"aiTitle" | b"summary" => {
                    if let Some(v) = r.string_or_skip()? {
                        titles.push((key.raw, v));
                    }
                }
                _ => r.skip()?,
            }
            // Nothing more of this line counts; read on only to learn the session's identity.
            Some(if skip_rest && !sink.needs_identity() {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })
        .ok_or(Bad::Malformed)?;
    line_end(&mut r, flow == Flow::Stop)?;
    sink.entry_type(ty.as_ref());
    if let Some(v) = session_id {
        sink.meta(Meta::SessionId, &v);
    }
    if let Some(v) = cwd {
        sink.meta(Meta::Cwd, &v);
    }
    let t = ty.map(|t| t.raw).unwrap_or_default();
    for (key, value) in titles {
        match (t, key) {
            (b"custom-title", b"customTitle") => sink.meta(Meta::CustomTitle, &value),
            (b"ai-title", b"aiTitle") => sink.meta(Meta::AiTitle, &value),
            (b"summary", b"summary") => sink.meta(Meta::Summary, &value),
            _ => {}
        }
    }
    let role_ok = msg.role.is_none_or(|r| r.is(b"user"));
    if entries && matches!(t, b"user" | b"assistant") {
        if let Some(ts) = &ts {
            sink.line_timestamp(ts);
        }
        if sidechain {
            return Ok(()); // a subagent's turn written inline (older versions): not the session's own
        }
    }
    if want && t == b"user" && has_message {
        if let Some(details) = details {
            sink.result_details(details);
        }
        for result in std::mem::take(&mut msg.results) {
            let text = result.content.and_then(ResultText::text);
            sink.tool_result(result.id.map(|i| hash64(i.raw)), result.is_error, text);
        }
    }
    if t == b"user" && has_message && role_ok && !(meta || sidechain || compact) {
        if let Some(text) = msg.prompt() {
            sink.prompt(text, ts.as_ref());
        }
    } else if t == b"assistant" && has_message && !msg.model.is_some_and(|m| m.is(b"<synthetic>")) {
        sink.assistant(msg.id.map(|i| hash64(i.raw)), ts.as_ref());
        report_assistant(&msg, ts.as_ref(), sink);
    }
    Ok(())
}

/// Pi: see docs/activity.md.
fn pi<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let mut ty: Option<RawStr<'_>> = None;
    let mut ts: Option<RawStr<'_>> = None;
    // A reader reads every line whole: its tree links may follow the type, and results are kept.
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let mut msg = Message {
        want_results: want,
        want_entries: entries,
        ..Message::default()
    };
    let mut has_message = false;
    let (mut id, mut cwd, mut name, mut parent) = (None, None, None, None);
    let mut skip_rest = false;
    let flow = r
        .object(|r, key| {
            match key.raw {
                b"type" => {
                    ty = r.string_or_skip()?;
                    let t = ty.map(|t| t.raw).unwrap_or_default();
                    if !matches!(t, b"message" | b"session" | b"session_info") {
                        skip_rest = true;
                    }
                }
                b"message" => {
                    has_message = r.peek()? == b'{';
                    if object_value(r, ty.is_some() && !want, |r| message(r, &mut msg))? {
                        skip_rest = ty.is_some();
                    }
                }
                b"timestamp" => ts = r.string_or_skip()?,
                b"id" => id = r.string_or_skip()?,
                b"parentId" if want => parent = r.string_or_skip()?,
                b"cwd" => cwd = r.string_or_skip()?,
                b"name" => name = r.string_or_skip()?,
                _ => r.skip()?,
            }
            Some(if skip_rest && !want {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })
        .ok_or(Bad::Malformed)?;
    line_end(&mut r, flow == Flow::Stop)?;
    sink.entry_type(ty.as_ref());
    let t = ty.map(|t| t.raw).unwrap_or_default();
    if let (true, Some(id), false) = (want, id, t == b"session") {
        sink.entry_link(hash64(id.raw), parent.map(|p| hash64(p.raw)));
    }
    if let (true, Some(ts)) = (entries, &ts) {
        sink.line_timestamp(ts);
    }
    match t {
        b"compaction" if entries => sink.marker(Marker::Compacted, ts.as_ref()),
        b"session" => {
            if let Some(id) = id {
                sink.meta(Meta::SessionId, &id);
            }
            if let Some(cwd) = cwd {
                sink.meta(Meta::Cwd, &cwd);
            }
        }
        b"session_info" => {
            if let Some(name) = name {
                sink.meta(Meta::CustomTitle, &name);
            }
        }
        b"message" if has_message => {
            if msg.role_is(b"user") {
                if let Some(text) = msg.prompt() {
                    sink.prompt(text, ts.as_ref());
                }
            } else if msg.role_is(b"assistant") {
                sink.assistant(None, ts.as_ref());
                report_assistant(&msg, ts.as_ref(), sink);
                if msg.aborted {
                    sink.marker(Marker::Aborted, ts.as_ref());
                }
            } else if msg.role_is(b"bashExecution") {
                sink.tool_use(
                    ToolCall {
                        id: None,
                        name: "bashExecution",
                        primary: msg.command.map(Text::Raw),
                        files: Vec::new(),
                        details: Details::default(),
                        arguments: msg.command.filter(|_| entries).map(Arguments::Command),
                    },
                    ts.as_ref(),
                );
                if want {
                    let (failed, text) = msg.bash_result();
                    sink.tool_result(None, failed, text);
                }
            } else if want && msg.role_is(b"toolResult") {
                if let Some(details) = msg.details {
                    sink.result_details(details);
                }
                let id = msg.tool_call_id.map(|i| hash64(i.raw));
                sink.tool_result(id, msg.is_error, msg.result_text());
            }
        }
        _ => {}
    }
    Ok(())
}

/// Codex user messages that carry instructions or environment, not the person's words.
pub const CODEX_CONTEXT_PREFIXES: &[&str] = &[
    "<environment_context",
    "<user_instructions",
    "<permissions",
    "<INSTRUCTIONS>",
    "# AGENTS.md",
    "<user_shell_command",
];

/// The `payload` of a Codex `response_item`.
#[derive(Default)]
struct Payload<'a> {
    ty: Option<RawStr<'a>>,
    role: Option<RawStr<'a>>,
    /// Content blocks as `(type, text)`.
    texts: Vec<(Option<RawStr<'a>>, RawStr<'a>)>,
    name: Option<RawStr<'a>>,
    arguments: Option<RawStr<'a>>,
    input: Option<RawStr<'a>>,
    call_id: Option<RawStr<'a>>,
    action: Option<&'a [u8]>,
    id: Option<RawStr<'a>>,
    cwd: Option<RawStr<'a>>,
    /// Set for a sink that wants tool results: a call's output is read only then.
    want_results: bool,
    output: Option<ResultText<'a>>,
    success: Option<bool>,
    /// Set for a sink that wants entries: a call's arguments are reported then.
    want_entries: bool,
}

impl<'a> Payload<'a> {
    /// The texts of the blocks of type `kind` or plain `text`.
    fn texts_of<'p>(&'p self, kind: &'p [u8]) -> impl Iterator<Item = RawStr<'a>> + 'p {
        self.texts
            .iter()
            .filter(move |(t, _)| t.is_some_and(|t| t.is(kind) || t.is(b"text")))
            .map(|(_, s)| *s)
    }
}

fn codex_payload<'a>(r: &mut Reader<'a>, p: &mut Payload<'a>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    r.object(|r, key| {
        match key.raw {
            b"type" => {
                p.ty = r.string_or_skip()?;
                let t = p.ty.map(|t| t.raw).unwrap_or_default();
                let wanted = match t {
                    b"message" | b"function_call" | b"custom_tool_call" | b"local_shell_call"
                    | b"web_search_call" => true,
                    b"function_call_output"
                    | b"custom_tool_call_output"
                    | b"local_shell_call_output" => p.want_results,
                    _ => false,
                };
                if !wanted {
                    return Some(Flow::Stop);
                }
            }
            b"output" if p.want_results => p.output = result_content(r)?,
            b"success" if p.want_results => p.success = Some(r.boolean()?),
            b"role" => p.role = r.string_or_skip()?,
            b"content" => {
                if r.peek()? == b'[' {
                    r.array(|r| {
                        if r.peek()? != b'{' {
                            r.skip()?;
                            return Some(Flow::Continue);
                        }
                        let (mut block_type, mut text) = (None, None);
                        r.object(|r, key| {
                            if key.is(b"text") {
                                text = r.string_or_skip()?;
                            } else if key.is(b"type") {
                                block_type = r.string_or_skip()?;
                            } else {
                                r.skip()?;
                            }
                            Some(Flow::Continue)
                        })?;
                        if let Some(text) = text {
                            p.texts.push((block_type, text));
                        }
                        Some(Flow::Continue)
                    })?;
                } else {
                    r.skip()?;
                }
            }
            b"name" => p.name = r.string_or_skip()?,
            b"arguments" => p.arguments = r.string_or_skip()?,
            b"input" => p.input = r.string_or_skip()?,
            b"call_id" => p.call_id = r.string_or_skip()?,
            b"action" => p.action = Some(r.span()?),
            b"id" => p.id = r.string_or_skip()?,
            b"cwd" => p.cwd = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
}

/// Codex rollouts: see docs/activity.md.
fn codex<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let mut ty: Option<RawStr<'_>> = None;
    let mut ts: Option<RawStr<'_>> = None;
    let entries = sink.wants_entries();
    let mut payload = Payload {
        want_results: sink.wants_results(),
        want_entries: entries,
        ..Payload::default()
    };
    let mut skip_rest = false;
    let flow = r
        .object(|r, key| {
            match key.raw {
                b"type" => {
                    ty = r.string_or_skip()?;
                    if !ty.is_some_and(|t| {
                        t.is(b"response_item")
                            || t.is(b"session_meta")
                            || (entries && (t.is(b"event_msg") || t.is(b"turn_context")))
                    }) {
                        skip_rest = true;
                    }
                }
                b"timestamp" => ts = r.string_or_skip()?,
                b"payload" => {
                    if object_value(r, ty.is_some(), |r| codex_payload(r, &mut payload))? {
                        skip_rest = ty.is_some();
                    }
                }
                _ => r.skip()?,
            }
            Some(if skip_rest {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })
        .ok_or(Bad::Malformed)?;
    line_end(&mut r, flow == Flow::Stop)?;
    sink.entry_type(ty.as_ref());
    let ts = ts.as_ref();
    if let (true, Some(ts)) = (entries, ts) {
        sink.line_timestamp(ts);
    }
    match ty.map(|t| t.raw).unwrap_or_default() {
        b"turn_context" if entries => {
            if let Some(cwd) = payload.cwd {
                sink.meta(Meta::Cwd, &cwd);
            }
        }
        b"event_msg" if entries && payload.ty.is_some_and(|t| t.is(b"turn_aborted")) => {
            sink.marker(Marker::Aborted, ts);
        }
        b"session_meta" => {
            if let Some(id) = payload.id {
                sink.meta(Meta::SessionId, &id);
            }
            if let Some(cwd) = payload.cwd {
                sink.meta(Meta::Cwd, &cwd);
            }
        }
        b"response_item" => codex_item(&payload, ts, sink),
        _ => {}
    }
    Ok(())
}

fn codex_item<S: Sink>(p: &Payload<'_>, ts: Option<&RawStr<'_>>, sink: &mut S) {
    let Some(ty) = p.ty else { return };
    let call_id = p.call_id.map(|c| hash64(c.raw));
    match ty.raw {
        b"message" => {
            let role = p.role.map(|r| r.raw).unwrap_or_default();
            if role == b"user" {
                let parts: Vec<RawStr<'_>> = p
                    .texts_of(b"input_text")
                    .filter(|t| !Text::Raw(*t).starts_with_any(CODEX_CONTEXT_PREFIXES))
                    .collect();
                let text = if parts.len() == 1 {
                    Some(Text::Raw(parts[0]))
                } else {
                    Text::join(&parts)
                };
                if let Some(text) = text {
                    sink.prompt(text, ts);
                }
            } else if role == b"assistant" {
                sink.assistant(None, ts);
                for text in p.texts_of(b"output_text") {
                    sink.assistant_text(&text, ts);
                }
            }
        }
        b"function_call" => {
            let Some(name) = p.name.map(|n| n.decode()) else {
                return;
            };
            let arguments = p.arguments.map(|a| decode_raw(a.raw)).unwrap_or_default();
            let input = tool_input(arguments.as_bytes(), &name, &PRIMARY_KEYS);
            let primary = input.primary.map(|t| Text::Joined(t.trimmed(usize::MAX)));
            // The entry reader keeps the name the line gives (`shell` running `apply_patch`).
            let name = if input.files.is_empty() || p.want_entries {
                name
            } else {
                "apply_patch".to_owned()
            };
            let call = ToolCall {
                id: call_id,
                name: &name,
                primary,
                files: input.files,
                details: input.details,
                arguments: p
                    .arguments
                    .filter(|_| p.want_entries)
                    .map(Arguments::Encoded),
            };
            sink.tool_use(call, ts);
        }
        b"custom_tool_call" => {
            let Some(name) = p.name.map(|n| n.decode()) else {
                return;
            };
            let (primary, files, details) = if name == "apply_patch" {
                let patch = p.input.map(|i| i.decode()).unwrap_or_default();
                let files = patch_files(&patch);
                (
                    files.first().cloned().map(Text::Joined),
                    files,
                    patch_details(&patch),
                )
            } else {
                (p.input.map(Text::Raw), Vec::new(), Details::default())
            };
            let call = ToolCall {
                id: call_id,
                name: &name,
                primary,
                files,
                details,
                arguments: p.input.filter(|_| p.want_entries).map(Arguments::Text),
            };
            sink.tool_use(call, ts);
        }
        b"function_call_output" | b"custom_tool_call_output" | b"local_shell_call_output"
            if p.want_results =>
        {
            let (failed, text) = codex_output(p);
            sink.tool_result(call_id, failed, text);
        }
        b"local_shell_call" | b"web_search_call" => {
            let (name, key): (&str, &[u8]) = if ty.is(b"local_shell_call") {
                ("local_shell_call", b"command")
            } else {
                ("web_search_call", b"query")
            };
            let input = p
                .action
                .map(|a| tool_input(a, name, &[key]))
                .unwrap_or_default();
            let (primary, files) = (input.primary, input.files);
            let primary = primary.map(|t| Text::Joined(t.trimmed(usize::MAX)));
            let details = Details::default();
            sink.tool_use(
                ToolCall {
                    id: call_id,
                    name,
                    primary,
                    files,
                    details,
                    arguments: p.action.filter(|_| p.want_entries).map(Arguments::Json),
                },
                ts,
            );
        }
        _ => {}
    }
}

/// A Codex call's output: failed when it says so (`success: false`, or a non-zero exit code in the
/// metadata of an output written as JSON, `{"output": ..., "metadata": {"exit_code": N}}`, which
/// is then given as `Exit code: N` and the output). The exit code of an output written as text
/// (`Process exited with code N`) is left in the text.
fn codex_output<'a>(p: &Payload<'a>) -> (bool, Option<Text<'a>>) {
    let failed = p.success == Some(false);
    let text = match &p.output {
        Some(ResultText::Str(s)) => *s,
        Some(ResultText::Parts(parts)) => {
            return (failed, ResultText::Parts(parts.clone()).text());
        }
        None => return (failed, None),
    };
    if text.head(1) != "{" {
        return (failed, Some(Text::Raw(text)));
    }
    let json = text.decode();
    let (mut output, mut code) = (None, None);
    let parsed = Reader::new(json.as_bytes()).object(|r, key| {
        match key.raw {
            b"output" => output = r.string_or_skip()?.map(|o| o.decode()),
            b"metadata" if r.peek()? == b'{' => {
                r.object(|r, key| {
                    if key.is(b"exit_code") {
                        code = integer(r.span()?);
                    } else {
                        r.skip()?;
                    }
                    Some(Flow::Continue)
                })?;
            }
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    });
    match (parsed, output) {
        (Some(_), Some(output)) => {
            let text = match code {
                Some(c) => format!("Exit code: {c}\n{output}"),
                None => output,
            };
            (
                failed || code.is_some_and(|c| c != 0),
                Some(Text::Joined(text)),
            )
        }
        _ => (failed, Some(Text::Joined(json))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::{Activity, Categories, Category, Options};

    fn options() -> Options {
        let map = [
            ("bash", Category::Command),
            ("edit", Category::Edit),
            ("write", Category::Edit),
        ]
        .map(|(k, v)| (k.to_owned(), v));
        let mut categories: Vec<(String, Category)> = map.to_vec();
        categories.push(("apply_patch".to_owned(), Category::Edit));
        categories.push(("exec_command".to_owned(), Category::Command));
        Options {
            categories: Categories::new(categories),
            ..Options::default()
        }
    }

    fn run(format: Format, lines: &[&str]) -> Activity {
        let mut a = Activity::new(&options(), 0);
        for line in lines {
            format.decode(line.as_bytes(), &mut a);
        }
        a
    }

    #[test]
    fn claude_code_counts_prompts_responses_and_tools() {
        let a = run(
            Format::ClaudeCode,
            &[
                r#"{"type":"user","message":{"role":"user","content":"  fix the build "},"timestamp":"t1","sessionId":"s","cwd":"/p"}"#,
                r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"meta"},"timestamp":"t2"}"#,
                r#"{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}"#,
                r#"{"message":{"id":"m1","role":"assistant","model":"x","content":[{"type":"thinking","thinking":"hmm"}]},"type":"assistant","timestamp":"t3"}"#,
                r#"{"message":{"id":"m1","role":"assistant","model":"x","content":[{"type":"text","text":"On it."}]},"type":"assistant","timestamp":"t4"}"#,
                r#"{"message":{"id":"m1","role":"assistant","model":"x","content":[{"type":"tool_use","id":"tu1","name":"Edit","input":{"old_string":"a","file_path":"/p/a.rs"}}]},"type":"assistant","timestamp":"t5"}"#,
                r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"ok"}]},"toolUseResult":{"x":1}}"#,
                r#"{"type":"attachment","attachment":{"type":"hook_additional_context","content":["[Session Activity] x"]}}"#,
                r#"{"type":"assistant","message":{"id":"m2","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error"}]}}"#,
                r#"{"type":"custom-title","customTitle":"deploy work","sessionId":"s"}"#,
            ],
        );
        assert_eq!((a.user_messages, a.assistant_messages), (1, 1));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the build"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("On it."));
        assert_eq!(a.tools.get("Edit"), Some(&1));
        assert_eq!(a.categories, [1, 0, 0, 0]);
        assert_eq!(a.files_touched, ["/p/a.rs"]);
        assert_eq!(a.first_timestamp.as_deref(), Some("t1"));
        assert_eq!(a.last_timestamp.as_deref(), Some("t5"));
        assert_eq!(a.title(), Some("deploy work"));
        assert_eq!(
            (a.session_id.as_deref(), a.cwd.as_deref()),
            (Some("s"), Some("/p"))
        );
        assert_eq!(a.entry_types.get("attachment"), Some(&1));
    }

    #[test]
    fn pi_counts_messages_tool_calls_and_bash_executions() {
        let a = run(
            Format::Pi,
            &[
                r#"{"type":"session","version":3,"id":"abc","timestamp":"t0","cwd":"/w"}"#,
                r#"{"type":"message","id":"1","timestamp":"t1","message":{"role":"user","content":[{"type":"text","text":"hello"}]}}"#,
                r#"{"type":"message","id":"2","timestamp":"t2","message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls -la"}}]}}"#,
                r#"{"type":"message","id":"3","timestamp":"t3","message":{"role":"toolResult","toolCallId":"c1","content":[{"type":"text","text":"x"}]}}"#,
                r#"{"type":"message","id":"4","timestamp":"t4","message":{"role":"bashExecution","command":"git status","output":""}}"#,
                r#"{"type":"custom_message","customType":"session-update","content":"[Session Activity]","display":true}"#,
                r#"{"type":"session_info","name":"refactor"}"#,
            ],
        );
        assert_eq!((a.user_messages, a.assistant_messages), (1, 1));
        assert_eq!(a.tools.get("bash"), Some(&1));
        assert_eq!(a.tools.get("bashExecution"), Some(&1));
        assert_eq!(a.session_id.as_deref(), Some("abc"));
        assert_eq!(a.title(), Some("refactor"));
        assert_eq!(a.tool_uses[0].primary_arg.as_deref(), Some("ls -la"));
    }

    #[test]
    fn codex_reads_prompts_shell_calls_and_patches() {
        let a = run(
            Format::Codex,
            &[
                r#"{"timestamp":"t0","type":"session_meta","payload":{"id":"sid","cwd":"/c"}}"#,
                r#"{"timestamp":"t1","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}"#,
                r#"{"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run the tests"}]}}"#,
                r#"{"timestamp":"t3","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"[Session Activity]"}]}}"#,
                r#"{"timestamp":"t4","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"npm test\"}","call_id":"c1"}}"#,
                r#"{"timestamp":"t5","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"c2"}}"#,
                r#"{"timestamp":"t6","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Update File: b.txt\n*** End Patch","call_id":"c3"}}"#,
                r#"{"timestamp":"t7","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}"#,
                r#"{"timestamp":"t8","type":"event_msg","payload":{"type":"user_message","message":"run the tests"}}"#,
            ],
        );
        assert_eq!((a.user_messages, a.assistant_messages), (1, 1));
        assert_eq!(a.first_user_text.as_deref(), Some("run the tests"));
        assert_eq!(a.tools.get("exec_command"), Some(&1));
        assert_eq!(a.tools.get("apply_patch"), Some(&1));
        assert_eq!(a.files_touched, ["a.txt", "b.txt"]);
        assert_eq!(a.tool_uses[1].primary_arg.as_deref(), Some("ls"));
        assert_eq!(a.session_id.as_deref(), Some("sid"));
    }

    #[test]
    fn tool_details_tell_what_a_write_or_edit_did() {
        let a = run(
            Format::ClaudeCode,
            &[
                r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"a","name":"Write","input":{"file_path":"/p/new.py","content":"one\ntwo\nthree\n"}}]}}"#,
                r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"b","name":"Edit","input":{"file_path":"/p/a.py","old_string":"  x = 1 ","new_string":"x = 2"}}]}}"#,
                r#"{"type":"assistant","message":{"id":"m3","content":[{"type":"tool_use","id":"c","name":"MultiEdit","input":{"file_path":"/p/b.py","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}}]}}"#,
            ],
        );
        let d: Vec<_> = a
            .tool_uses
            .iter()
            .map(|t| (t.lines, t.old_text.as_deref(), t.new_text.as_deref()))
            .collect();
        assert_eq!(
            d,
            [
                (Some(3), None, None),
                (None, Some("x = 1"), Some("x = 2")),
                (None, Some("a"), Some("b"))
            ]
        );
        let pi = run(
            Format::Pi,
            &[
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"e","name":"edit","arguments":{"path":"f","edits":[{"oldText":"old","newText":"new"}]}},{"type":"toolCall","id":"w","name":"write","arguments":{"path":"g","content":"no newline"}}]}}"#,
            ],
        );
        assert_eq!(pi.tool_uses[0].old_text.as_deref(), Some("old"));
        assert_eq!(pi.tool_uses[1].lines, Some(1));
        let patch = "*** Begin Patch\n*** Update File: u.txt\n@@\n-before\n+after\n*** Add File: n.txt\n+1\n+2\n*** End Patch";
        assert_eq!(
            patch_details(patch),
            Details {
                lines: None,
                old_text: Some("before".into()),
                new_text: Some("after".into())
            }
        );
        assert_eq!(
            patch_details("*** Add File: n.txt\n+1\n+2\n").lines,
            Some(2)
        );
    }

    /// A sink that keeps the tool results and tree links a reader is given.
    #[derive(Default)]
    struct Results {
        tools: Vec<(Option<u64>, String)>,
        results: Vec<(Option<u64>, bool, Option<String>)>,
        links: Vec<(u64, Option<u64>)>,
        prompts: Vec<String>,
    }

    impl Sink for Results {
        fn wants_results(&self) -> bool {
            true
        }
        fn tool_result(&mut self, id: Option<u64>, is_error: bool, text: Option<Text<'_>>) {
            let text = text.map(|t| match t {
                Text::Raw(raw) => raw.decode(),
                Text::Joined(s) => s,
            });
            self.results.push((id, is_error, text));
        }
        fn entry_link(&mut self, id: u64, parent: Option<u64>) {
            self.links.push((id, parent));
        }
        fn entry_type(&mut self, _ty: Option<&RawStr<'_>>) {}
        fn meta(&mut self, _which: Meta, _value: &RawStr<'_>) {}
        fn prompt(&mut self, text: Text<'_>, _ts: Option<&RawStr<'_>>) {
            self.prompts.push(text.trimmed(100));
        }
        fn assistant(&mut self, _id: Option<u64>, _ts: Option<&RawStr<'_>>) {}
        fn assistant_text(&mut self, _text: &RawStr<'_>, _ts: Option<&RawStr<'_>>) {}
        fn tool_use(&mut self, tool: ToolCall<'_>, _ts: Option<&RawStr<'_>>) {
            self.tools.push((tool.id, tool.name.to_owned()));
        }
        fn malformed(&mut self) {
            panic!("a line the test wrote well was malformed");
        }
        fn invalid_utf8(&mut self) {
            panic!("a line the test wrote well was not UTF-8");
        }
    }

    fn results(format: Format, lines: &[&str]) -> Results {
        let mut sink = Results::default();
        for line in lines {
            format.decode(line.as_bytes(), &mut sink);
        }
        sink
    }

    fn h(id: &str) -> Option<u64> {
        Some(hash64(id.as_bytes()))
    }

    #[test]
    fn claude_code_reports_tool_results_to_a_reader_only() {
        // As Claude Code 2.1.330 writes them: the id before the type, `is_error` after the content,
        // several results in one line, and a content list of text blocks.
        let lines = [
            r#"{"parentUuid":"p","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"Exit code 1\n....F\n2 failed, 3 passed","is_error":true}]},"uuid":"u","timestamp":"t1","toolUseResult":{"stdout":"x"},"sessionId":"s"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_2","type":"tool_result","content":[{"type":"text","text":"one"},{"type":"image","source":{}},{"type":"text","text":"two"}]},{"type":"tool_result","tool_use_id":"toolu_3","content":"ok"}]},"timestamp":"t2"}"#,
            r#"{"type":"user","message":{"role":"user","content":"a prompt"},"timestamp":"t3"}"#,
        ];
        let sink = results(Format::ClaudeCode, &lines);
        assert_eq!(
            sink.results,
            [
                (
                    h("toolu_1"),
                    true,
                    Some("Exit code 1\n....F\n2 failed, 3 passed".into())
                ),
                (h("toolu_2"), false, Some("one\ntwo".into())),
                (h("toolu_3"), false, Some("ok".into())),
            ]
        );
        assert_eq!(sink.prompts, ["a prompt"]);
        // The counting scan is as before: a tool result is no prompt and reports nothing.
        let a = run(Format::ClaudeCode, &lines);
        assert_eq!(
            (a.user_messages, a.first_user_text.as_deref()),
            (1, Some("a prompt"))
        );
    }

    #[test]
    fn pi_reports_tool_results_bash_executions_and_tree_links() {
        let lines = [
            r#"{"type":"session","version":3,"id":"uuid","timestamp":"t0","cwd":"/w"}"#,
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t1","message":{"role":"assistant","content":[{"type":"toolCall","id":"toolu_1","name":"bash","arguments":{"command":"npm test"}}]}}"#,
            r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"t2","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"bash","content":[{"type":"text","text":"boom\n\nCommand exited with code 1"}],"details":{},"isError":true,"timestamp":1}}"#,
            r#"{"type":"message","id":"b1","parentId":"r1","timestamp":"t3","message":{"role":"bashExecution","command":"ls","output":"a\nb\n","exitCode":2,"cancelled":false,"truncated":false,"timestamp":1}}"#,
            r#"{"type":"model_change","id":"m1","parentId":"b1","timestamp":"t4","provider":"x","modelId":"y"}"#,
        ];
        let sink = results(Format::Pi, &lines);
        assert_eq!(
            sink.results,
            [
                (
                    h("toolu_1"),
                    true,
                    Some("boom\n\nCommand exited with code 1".into())
                ),
                (None, true, Some("Exit code: 2\na\nb\n".into())),
            ]
        );
        assert_eq!(
            sink.tools,
            [
                (h("toolu_1"), "bash".into()),
                (None, "bashExecution".into())
            ]
        );
        // Every entry but the header links to its parent, a line not read for a count included.
        assert_eq!(
            sink.links,
            [
                (h("a1").unwrap(), None),
                (h("r1").unwrap(), h("a1")),
                (h("b1").unwrap(), h("r1")),
                (h("m1").unwrap(), h("b1"))
            ]
        );
        let a = run(Format::Pi, &lines);
        assert_eq!(a.tools.get("bash"), Some(&1));
    }

    #[test]
    fn codex_reports_call_outputs_with_their_exit_codes() {
        let lines = [
            // Codex 0.169: the exit code in the output's header.
            r#"{"timestamp":"t1","type":"response_item","payload":{"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"Chunk ID: 8f\nProcess exited with code 1\nOutput:\nboom\n","internal_chat_message_metadata_passthrough":{"turn_id":"x"}},"metadata":{"history_sequence":5}}"#,
            r#"{"timestamp":"t2","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_2","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n"}}"#,
            // Older builds: the output as JSON, its exit code in the metadata.
            r#"{"timestamp":"t3","type":"response_item","payload":{"type":"function_call_output","call_id":"call_3","output":"{\"output\":\"no such file\\n\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.1}}"}}"#,
            r#"{"timestamp":"t4","type":"response_item","payload":{"type":"function_call_output","call_id":"call_4","output":"{\"output\":\"fine\",\"metadata\":{\"exit_code\":0}}"}}"#,
            r#"{"timestamp":"t5","type":"response_item","payload":{"type":"function_call_output","call_id":"call_5","output":[{"type":"input_text","text":"listed"}],"success":false}}"#,
        ];
        let sink = results(Format::Codex, &lines);
        assert_eq!(
            sink.results,
            [
                (
                    h("call_1"),
                    false,
                    Some("Chunk ID: 8f\nProcess exited with code 1\nOutput:\nboom\n".into())
                ),
                (
                    h("call_2"),
                    false,
                    Some("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n".into())
                ),
                (
                    h("call_3"),
                    true,
                    Some("Exit code: 2\nno such file\n".into())
                ),
                (h("call_4"), false, Some("Exit code: 0\nfine".into())),
                (h("call_5"), true, Some("listed".into())),
            ]
        );
        // A count reads nothing of an output, and is not thrown by one.
        let a = run(Format::Codex, &lines);
        assert!(a.tools.is_empty() && a.skipped == crate::activity::Skipped::default());
        assert_eq!(a.entry_types.get("response_item"), Some(&5));
    }

    #[test]
    fn malformed_lines_are_counted_not_fatal() {
        let a = run(
            Format::ClaudeCode,
            &[
                r#"{"type":"user","message":{"role":"us"#,
                "not json",
                "[1,2]",
            ],
        );
        assert_eq!(a.skipped.malformed_json, 3);
    }

    #[test]
    fn guesses_formats_from_one_line() {
        assert_eq!(
            Format::guess(br#"{"type":"session","version":3,"id":"x","cwd":"/"}"#),
            Some(Format::Pi)
        );
        assert_eq!(
            Format::guess(br#"{"timestamp":"t","type":"session_meta","payload":{}}"#),
            Some(Format::Codex)
        );
        assert_eq!(
            Format::guess(br#"{"type":"queue-operation","sessionId":"s"}"#),
            Some(Format::ClaudeCode)
        );
        assert_eq!(Format::guess(br#"{"hello":1}"#), None);
    }

    #[test]
    fn decoders_never_panic_on_arbitrary_bytes() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::default();
        let pieces = prop_oneof![
            Just(r#"{"type":"user","message":{"role":"user","content":"#.to_owned()),
            Just(r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","name":"Edit","input":{"#.to_owned()),
            Just(r#"{"type":"message","message":{"role":"assistant","content":["#.to_owned()),
            Just(r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","arguments":""#.to_owned()),
            Just("\\u12".to_owned()),
            Just("\\\"".to_owned()),
            Just("}]".to_owned()),
            "[a-z\"\\\\{}\\[\\],:]{0,12}",
        ];
        runner
            .run(&proptest::collection::vec(pieces, 0..12), |parts| {
                let line = parts.concat();
                for f in Format::ALL {
                    let mut a = Activity::new(&options(), 0);
                    f.decode(line.as_bytes(), &mut a);
                    let _ = Format::guess(line.as_bytes());
                }
                Ok(())
            })
            .unwrap();
    }
}
