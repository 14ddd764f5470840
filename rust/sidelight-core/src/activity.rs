//! What a scan counts, and the `Sink` through which the format decoders report what they find.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::json::{is_space, Chars, RawStr};

/// How many of the newest tool uses a scan keeps in full.
pub const TOOL_USES_KEPT: usize = 100;
/// How many distinct touched files a scan keeps.
pub const FILES_TOUCHED_KEPT: usize = 500;
/// How many recent message / tool-use ids are remembered to count a response spread over lines (or
/// replayed) once. Bounded, so memory stays flat on huge files; large enough to cover whole sessions.
pub const ID_WINDOW: usize = 65_536;
/// How many of a part's first ids are kept to undo double counts when parallel parts are merged: as
/// many as the window, so a split changes nothing.
const HEAD_IDS: usize = ID_WINDOW;

/// Prompts that a client wrote on the user's behalf, not a person.
pub const SYNTHETIC_PROMPT_PREFIXES: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "Caveat: The messages below",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Category {
    Edit = 0,
    Read = 1,
    Command = 2,
    Other = 3,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Edit,
        Category::Read,
        Category::Command,
        Category::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::Edit => "edit",
            Category::Read => "read",
            Category::Command => "command",
            Category::Other => "other",
        }
    }

    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Tool name (lowercase) → category, as passed in by the caller. Shared, not copied: every scan's
/// [`Activity`] holds the table, and the watcher scans thousands of files a second.
#[derive(Clone, Debug, Default)]
pub struct Categories(std::sync::Arc<HashMap<String, Category>>);

impl Categories {
    pub fn new(map: impl IntoIterator<Item = (String, Category)>) -> Self {
        Categories(std::sync::Arc::new(
            map.into_iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect(),
        ))
    }

    pub fn of(&self, tool: &str) -> Category {
        let found = if tool.bytes().any(|b| b.is_ascii_uppercase()) {
            self.0.get(&tool.to_ascii_lowercase())
        } else {
            self.0.get(tool)
        };
        found.copied().unwrap_or(Category::Other)
    }
}

/// Settings shared by every line of a scan.
#[derive(Clone, Debug)]
pub struct Options {
    pub categories: Categories,
    pub max_line_bytes: usize,
    pub text_limit: usize,
    /// Keep each kept command's result (its ends, and whether the tool said it failed), so that the
    /// caller can tell a failed command; the decoders then read result blocks, which a count skips.
    pub results: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            categories: Categories::default(),
            max_line_bytes: 64 << 20,
            text_limit: 500,
            results: false,
        }
    }
}

/// How many characters of each end of a tool result are kept (the middle is cut, `…` marks the cut):
/// enough for a short line, and for an exit code or a test summary at either end.
pub const RESULT_ENDS: usize = 300;

/// A tool result's text, its middle cut when it is long.
pub fn result_excerpt(text: &Text<'_>) -> String {
    let whole = match text {
        Text::Raw(raw) => raw.decode(),
        Text::Joined(s) => s.clone(),
    };
    let count = whole.chars().count();
    if count <= 2 * RESULT_ENDS + 1 {
        return whole;
    }
    let head: String = whole.chars().take(RESULT_ENDS).collect();
    let tail: String = whole.chars().skip(count - RESULT_ENDS).collect();
    format!("{head}\n…\n{tail}")
}

/// A text found in a line: a raw JSON string, or several joined into one.
pub enum Text<'a> {
    Raw(RawStr<'a>),
    Joined(String),
}

impl Text<'_> {
    pub fn join(parts: &[RawStr<'_>]) -> Option<Text<'static>> {
        if parts.is_empty() {
            return None;
        }
        Some(Text::Joined(
            parts
                .iter()
                .map(RawStr::decode)
                .collect::<Vec<_>>()
                .join("\n"),
        ))
    }

    pub fn is_blank(&self) -> bool {
        match self {
            Text::Raw(raw) => raw.is_blank(),
            Text::Joined(s) => s.chars().all(is_space),
        }
    }

    pub fn trimmed(&self, limit: usize) -> String {
        match self {
            Text::Raw(raw) => raw.decode_trimmed(limit),
            Text::Joined(s) => {
                let t = s.trim_matches(is_space);
                t.chars().take(limit).collect()
            }
        }
    }

    pub fn starts_with_any(&self, prefixes: &[&str]) -> bool {
        let head: String = match self {
            Text::Raw(raw) => raw.head(40),
            Text::Joined(s) => s.trim_start_matches(is_space).chars().take(40).collect(),
        };
        prefixes.iter().any(|p| head.starts_with(p))
    }

    /// A person's prompt: not blank and not written by the client.
    pub fn is_prompt(&self) -> bool {
        !self.is_blank() && !self.starts_with_any(SYNTHETIC_PROMPT_PREFIXES)
    }
}

/// A session's metadata found in a line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Meta {
    SessionId,
    Cwd,
    CustomTitle,
    AiTitle,
    Summary,
}

/// Where the decoders report what a line holds. `Activity` counts it; the reader collects entries.
pub trait Sink {
    /// True while the session id or cwd is still unknown (decoders then read lines they could skip).
    fn needs_identity(&self) -> bool {
        false
    }
    fn entry_type(&mut self, ty: Option<&RawStr<'_>>);
    fn meta(&mut self, which: Meta, value: &RawStr<'_>);
    fn prompt(&mut self, text: Text<'_>, timestamp: Option<&RawStr<'_>>);
    /// One assistant line; `id` is the hash of its message id when it has one.
    fn assistant(&mut self, id: Option<u64>, timestamp: Option<&RawStr<'_>>);
    fn assistant_text(&mut self, text: &RawStr<'_>, timestamp: Option<&RawStr<'_>>);
    fn tool_use(&mut self, tool: ToolCall<'_>, timestamp: Option<&RawStr<'_>>);
    fn malformed(&mut self);
    fn invalid_utf8(&mut self);
    /// True for a sink that reads tool results and entry links (the reader's). Only then do the
    /// decoders read what a count never needs (result blocks, the rest of a Pi line); the counting
    /// scan keeps its hot path.
    fn wants_results(&self) -> bool {
        false
    }
    /// A tool's result: the hash of the id of the call it answers (`None`: the tool use reported just
    /// before, on the same line), whether the tool said it failed, and its text. A structured exit
    /// code is written as a first line `Exit code: N`.
    fn tool_result(&mut self, _id: Option<u64>, _is_error: bool, _text: Option<Text<'_>>) {}
    /// An entry of a transcript that is a tree (Pi): the hashes of its id and of its parent's id.
    fn entry_link(&mut self, _id: u64, _parent: Option<u64>) {}
    /// True for the entry reader's sink (`read_entries`), which also [wants results](Sink::wants_results).
    /// Only then do the decoders report what a log of the session needs beyond a count: a tool call's
    /// [`Arguments`], a result's details, [`Marker`]s and every line's timestamp.
    fn wants_entries(&self) -> bool {
        false
    }
    /// True when the entry reader reads a subagent's own transcript: its `isSidechain` lines (the
    /// parent's task for it, its replies and tool calls) are its entries (the entry reader's
    /// `Limits::sidechain`).
    fn sidechain_is_own(&self) -> bool {
        false
    }
    /// The structured details (raw JSON) of the tool results this line reports next: Claude Code's
    /// `toolUseResult`, Pi's `details`.
    fn result_details(&mut self, _json: &[u8]) {}
    /// How the session went at this line.
    fn marker(&mut self, _marker: Marker, _timestamp: Option<&RawStr<'_>>) {}
    /// The timestamp of a line, whatever it holds.
    fn line_timestamp(&mut self, _timestamp: &RawStr<'_>) {}
}

/// What a line says about how the session went, for the entry reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// The context was compacted (Pi `compaction`).
    Compacted,
    /// The turn was cut short: a Pi reply that stopped with `aborted` or `error`, a Codex
    /// `turn_aborted` event.
    Aborted,
}

impl Marker {
    pub fn name(self) -> &'static str {
        match self {
            Marker::Compacted => "compacted",
            Marker::Aborted => "aborted",
        }
    }
}

/// A tool call's arguments as the line writes them (reported to a sink that
/// [wants entries](Sink::wants_entries) only).
#[derive(Clone, Copy, Debug)]
pub enum Arguments<'a> {
    /// A JSON value: Claude Code `input`, Pi `arguments`, Codex `local_shell_call.action`, a declared
    /// format's arguments object.
    Json(&'a [u8]),
    /// A JSON string holding the arguments' JSON text (Codex `function_call.arguments`).
    Encoded(RawStr<'a>),
    /// Text that is not JSON: Codex `custom_tool_call.input` (an `apply_patch` patch).
    Text(RawStr<'a>),
    /// The command of a shell command a person ran (Pi `bashExecution`): `{"command": ...}`.
    Command(RawStr<'a>),
}

/// A tool use as the decoders see it.
pub struct ToolCall<'a> {
    pub id: Option<u64>,
    pub name: &'a str,
    pub primary: Option<Text<'a>>,
    /// Paths an edit tool reports beside its primary argument (every file of a patch).
    pub files: Vec<String>,
    /// What a hot memory shows of it: lines written, an edit's old and new text.
    pub details: Details,
    /// Its arguments, for a sink that [wants entries](Sink::wants_entries) (else `None`).
    pub arguments: Option<Arguments<'a>>,
}

/// A tool use's details for a hot memory; see docs/activity.md, "Tool details".
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct Details {
    pub lines: Option<u64>,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
}

/// A kept tool use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolUse {
    pub name: String,
    pub category: Category,
    pub primary_arg: Option<String>,
    pub timestamp: Option<String>,
    /// Lines a write created; an edit's old and new text (see docs/activity.md, "Tool details").
    pub lines: Option<u64>,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    /// A command's result when the scan [keeps results](Options::results) and it was in the range
    /// read: its text ([`result_excerpt`]), and whether the tool said it failed.
    pub result: Option<String>,
    pub result_error: bool,
    id: Option<u64>,
}

/// Lines that were not decoded, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    pub malformed_json: u64,
    pub invalid_utf8: u64,
    pub too_long: u64,
}

/// A bounded set of recent ids.
#[derive(Clone, Debug, Default)]
struct IdWindow {
    order: VecDeque<u64>,
    set: HashSet<u64>,
}

impl IdWindow {
    fn contains(&self, id: u64) -> bool {
        self.set.contains(&id)
    }

    fn insert(&mut self, id: u64) {
        if self.set.insert(id) {
            self.order.push_back(id);
            if self.order.len() > ID_WINDOW {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
}

/// A fast 64-bit hash, eight bytes at a time, stable across processes and versions (hashes live in
/// cursor files: changing it makes every cursor report "rewritten" once). Never 0.
pub fn hash64(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = K ^ (bytes.len() as u64).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        h = (h.rotate_left(23) ^ w).wrapping_mul(K);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h.rotate_left(23) ^ u64::from_le_bytes(last)).wrapping_mul(K);
    // murmur3's finaliser spreads every input bit over the result.
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^= h >> 33;
    h.max(1)
}

/// The activity in a range of a transcript.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    pub lines: u64,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tools: HashMap<String, u64>,
    pub categories: [u64; 4],
    pub tool_uses: VecDeque<ToolUse>,
    pub files_touched: Vec<String>,
    files_seen: HashSet<String>,
    pub first_user_text: Option<String>,
    pub last_user_text: Option<String>,
    pub last_assistant_text: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    summary_title: Option<String>,
    pub skipped: Skipped,
    pub entry_types: HashMap<String, u64>,
    /// Hash of the newest assistant message id counted (0: none).
    pub last_message: u64,
    message_ids: IdWindow,
    tool_ids: IdWindow,
    head_message_ids: Vec<u64>,
    head_tool_ids: Vec<(u64, String, Category)>,
    /// Results this part read whose call it did not (read by the part before, when parts are merged).
    head_results: Vec<(u64, String, bool)>,
    text_limit: usize,
    categories_map: Categories,
    results: bool,
}

/// How many results of calls a part did not read it keeps for the part before it.
const HEAD_RESULTS: usize = 64;

impl Activity {
    pub fn new(options: &Options, last_message: u64) -> Self {
        let mut a = Activity {
            text_limit: options.text_limit,
            categories_map: options.categories.clone(),
            results: options.results,
            last_message,
            ..Activity::default()
        };
        if last_message != 0 {
            a.message_ids.insert(last_message);
        }
        a
    }

    /// The title: a custom title wins over an AI title, which wins over a summary.
    pub fn title(&self) -> Option<&str> {
        self.custom_title
            .as_deref()
            .or(self.ai_title.as_deref())
            .or(self.summary_title.as_deref())
    }

    fn stamp(&mut self, timestamp: Option<&RawStr<'_>>) {
        let Some(ts) = timestamp else { return };
        // Every counted line stamps: reuse the string rather than allocate one per line.
        let last = self.last_timestamp.get_or_insert_with(String::new);
        last.clear();
        match ts.as_plain() {
            Some(plain) => last.push_str(plain),
            None => last.extend(Chars::new(ts.raw)),
        }
        if self.first_timestamp.is_none() {
            self.first_timestamp = self.last_timestamp.clone();
        }
    }

    /// Gives a command its result: the call `id` answers (the newest with no result yet), or, for a
    /// result without an id, the tool use just before it. False when no kept command is it.
    fn attach_result(&mut self, id: Option<u64>, text: &str, is_error: bool) -> bool {
        let found = match id {
            Some(id) => self.tool_uses.iter_mut().rev().find(|t| t.id == Some(id)),
            None => self.tool_uses.back_mut(),
        };
        match found {
            Some(tool) if tool.result.is_none() => {
                if tool.category == Category::Command {
                    tool.result = Some(text.to_owned());
                    tool.result_error = is_error;
                }
                true
            }
            Some(_) => true,
            None => false,
        }
    }

    fn add_file(&mut self, path: &str) {
        if self.files_touched.len() < FILES_TOUCHED_KEPT && !self.files_seen.contains(path) {
            self.files_seen.insert(path.to_owned());
            self.files_touched.push(path.to_owned());
        }
    }

    fn count_tool(&mut self, name: &str, category: Category, delta: i64) {
        let entry = self.tools.entry(name.to_owned()).or_insert(0);
        *entry = entry.saturating_add_signed(delta);
        if *entry == 0 {
            self.tools.remove(name);
        }
        let c = &mut self.categories[category as usize];
        *c = c.saturating_add_signed(delta);
    }

    /// Appends the activity of the range that follows this one.
    pub fn merge(&mut self, mut next: Activity) {
        // A response or tool use whose lines straddle the split was counted by both parts.
        for id in &next.head_message_ids {
            if self.message_ids.contains(*id) {
                next.assistant_messages = next.assistant_messages.saturating_sub(1);
            }
        }
        for (id, name, category) in std::mem::take(&mut next.head_tool_ids) {
            if self.tool_ids.contains(id) {
                next.count_tool(&name, category, -1);
                if let Some(pos) = next.tool_uses.iter().position(|t| t.id == Some(id)) {
                    next.tool_uses.remove(pos);
                }
            }
        }
        self.lines += next.lines;
        self.user_messages += next.user_messages;
        self.assistant_messages += next.assistant_messages;
        for (name, n) in next.tools {
            *self.tools.entry(name).or_insert(0) += n;
        }
        for (mine, theirs) in self.categories.iter_mut().zip(next.categories) {
            *mine += theirs;
        }
        for (id, text, is_error) in std::mem::take(&mut next.head_results) {
            if !self.attach_result(Some(id), &text, is_error)
                && self.head_results.len() < HEAD_RESULTS
            {
                self.head_results.push((id, text, is_error));
            }
        }
        self.tool_uses.extend(next.tool_uses);
        while self.tool_uses.len() > TOOL_USES_KEPT {
            self.tool_uses.pop_front();
        }
        for path in &next.files_touched {
            self.add_file(path);
        }
        if self.first_user_text.is_none() {
            self.first_user_text = next.first_user_text;
        }
        if next.last_user_text.is_some() {
            self.last_user_text = next.last_user_text;
        }
        if next.last_assistant_text.is_some() {
            self.last_assistant_text = next.last_assistant_text;
        }
        if self.first_timestamp.is_none() {
            self.first_timestamp = next.first_timestamp;
        }
        if next.last_timestamp.is_some() {
            self.last_timestamp = next.last_timestamp;
        }
        self.session_id = self.session_id.take().or(next.session_id);
        self.cwd = self.cwd.take().or(next.cwd);
        self.custom_title = next.custom_title.or(self.custom_title.take());
        self.ai_title = next.ai_title.or(self.ai_title.take());
        self.summary_title = next.summary_title.or(self.summary_title.take());
        self.skipped.malformed_json += next.skipped.malformed_json;
        self.skipped.invalid_utf8 += next.skipped.invalid_utf8;
        self.skipped.too_long += next.skipped.too_long;
        for (ty, n) in next.entry_types {
            *self.entry_types.entry(ty).or_insert(0) += n;
        }
        // The newest message counted is the last one new to both parts: a message the next part saw
        // first but this part had already counted is not counted again, so it is not the newest.
        if let Some(&id) =
            (next.message_ids.order.iter().rev()).find(|&&id| !self.message_ids.contains(id))
        {
            self.last_message = id;
        }
        for id in next.message_ids.order {
            self.message_ids.insert(id);
        }
        for id in next.tool_ids.order {
            self.tool_ids.insert(id);
        }
    }
}

impl Sink for Activity {
    fn needs_identity(&self) -> bool {
        self.session_id.is_none() || self.cwd.is_none()
    }

    fn entry_type(&mut self, ty: Option<&RawStr<'_>>) {
        // A type written with escapes is counted under its decoded name (not "<none>").
        if let Some(t) = ty.filter(|t| t.as_plain().is_none()) {
            *self.entry_types.entry(t.decode()).or_insert(0) += 1;
            return;
        }
        let name = ty.and_then(|t| t.as_plain()).unwrap_or("<none>");
        match self.entry_types.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.entry_types.insert(name.to_owned(), 1);
            }
        }
    }

    fn meta(&mut self, which: Meta, value: &RawStr<'_>) {
        let slot = match which {
            Meta::SessionId => &mut self.session_id,
            Meta::Cwd => &mut self.cwd,
            Meta::CustomTitle => &mut self.custom_title,
            Meta::AiTitle => &mut self.ai_title,
            Meta::Summary => &mut self.summary_title,
        };
        let first_wins = matches!(which, Meta::SessionId | Meta::Cwd);
        if !(first_wins && slot.is_some()) {
            let text = value.decode_trimmed(usize::MAX);
            if !text.is_empty() {
                *slot = Some(text);
            }
        }
    }

    fn prompt(&mut self, text: Text<'_>, timestamp: Option<&RawStr<'_>>) {
        if !text.is_prompt() {
            return;
        }
        self.user_messages += 1;
        let trimmed = text.trimmed(self.text_limit);
        if self.first_user_text.is_none() {
            self.first_user_text = Some(trimmed.clone());
        }
        self.last_user_text = Some(trimmed);
        self.stamp(timestamp);
    }

    fn assistant(&mut self, id: Option<u64>, timestamp: Option<&RawStr<'_>>) {
        if let Some(id) = id {
            if self.message_ids.contains(id) {
                self.stamp(timestamp);
                return;
            }
            self.message_ids.insert(id);
            self.last_message = id;
            if self.head_message_ids.len() < HEAD_IDS {
                self.head_message_ids.push(id);
            }
        }
        self.assistant_messages += 1;
        self.stamp(timestamp);
    }

    fn assistant_text(&mut self, text: &RawStr<'_>, _timestamp: Option<&RawStr<'_>>) {
        if !text.is_blank() {
            self.last_assistant_text = Some(text.decode_trimmed(self.text_limit));
        }
    }

    fn tool_use(&mut self, tool: ToolCall<'_>, timestamp: Option<&RawStr<'_>>) {
        if let Some(id) = tool.id {
            if self.tool_ids.contains(id) {
                return;
            }
            self.tool_ids.insert(id);
        }
        let category = self.categories_map.of(tool.name);
        self.count_tool(tool.name, category, 1);
        if let (Some(id), true) = (tool.id, self.head_tool_ids.len() < HEAD_IDS) {
            self.head_tool_ids
                .push((id, tool.name.to_owned(), category));
        }
        let primary_arg = tool.primary.as_ref().map(|p| p.trimmed(self.text_limit));
        if category == Category::Edit {
            // A path is kept whole, not cut to the text limit like the primary argument.
            let path = tool
                .primary
                .as_ref()
                .filter(|_| tool.files.is_empty())
                .map(|p| p.trimmed(usize::MAX));
            if let Some(path) = path.filter(|p| !p.is_empty()) {
                self.add_file(&path);
            }
            for path in &tool.files {
                self.add_file(path);
            }
        }
        self.tool_uses.push_back(ToolUse {
            name: tool.name.to_owned(),
            category,
            primary_arg,
            timestamp: timestamp.map(RawStr::decode),
            lines: tool.details.lines,
            old_text: tool.details.old_text,
            new_text: tool.details.new_text,
            result: None,
            result_error: false,
            id: tool.id,
        });
        if self.tool_uses.len() > TOOL_USES_KEPT {
            self.tool_uses.pop_front();
        }
        self.stamp(timestamp);
    }

    fn wants_results(&self) -> bool {
        self.results
    }

    fn tool_result(&mut self, id: Option<u64>, is_error: bool, text: Option<Text<'_>>) {
        // Only a command's result is kept: a file read's text is not decoded for nothing.
        let excerpt = || text.as_ref().map(result_excerpt).unwrap_or_default();
        let found = match id {
            Some(id) => self.tool_uses.iter_mut().rev().find(|t| t.id == Some(id)),
            None => self.tool_uses.back_mut(),
        };
        match (found, id) {
            (Some(tool), _) => {
                if tool.category == Category::Command && tool.result.is_none() {
                    tool.result = Some(excerpt());
                    tool.result_error = is_error;
                }
            }
            (None, Some(id)) if self.head_results.len() < HEAD_RESULTS => {
                self.head_results.push((id, excerpt(), is_error));
            }
            (None, _) => {}
        }
    }

    fn malformed(&mut self) {
        self.skipped.malformed_json += 1;
    }

    fn invalid_utf8(&mut self) {
        self.skipped.invalid_utf8 += 1;
    }
}

/// Decodes a raw JSON string body fully (for text that is parsed again, like Codex arguments).
pub fn decode_raw(raw: &[u8]) -> String {
    Chars::new(raw).collect()
}
