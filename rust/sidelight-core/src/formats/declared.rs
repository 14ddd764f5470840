//! Declared formats: a third party's description of where the fields of its agent's transcript lines
//! live, compiled once into a decoder that reads lines with the same selective reader as the built-in
//! decoders. docs/plugins.md ("Describing a format") is the contract; docs/activity.md says what is
//! counted once the fields are found.
//!
//! A description is plain data ([`Spec`]): key paths from the top of a line to the entry type, the
//! timestamp, the role, the content (a string, or a list of typed blocks), tool calls (blocks, a list
//! on the message, or entries of their own), tool results (blocks, or entries of their own: read only
//! for a sink that [wants results](Sink::wants_results), so a count never pays for them), the session's
//! identity, and what to skip. [`Declared::compile`]
//! checks it (one error naming the field) and builds a trie of the paths, so that a line is walked
//! once, key by key, and every value nobody asked for is skipped by the block scanner.
//!
//! [`LineDecoder`] is the other way in: a decoder written elsewhere (the Python fallback) that reports
//! [`Event`]s for a line.

use super::read::{line_end, Bad};
use super::tools::{tool_input, PRIMARY_KEYS};
use crate::activity::{hash64, Arguments, Details, Meta, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// Object keys from the top of a line down to a value: `["message", "role"]`.
pub type KeyPath = Vec<String>;

/// The most tool entries a description may name, and the deepest key path.
pub const MAX_TOOL_ENTRIES: usize = 8;
pub const MAX_PATH_DEPTH: usize = 8;

/// An entry that is itself one tool use (Pi's `bashExecution` message, a Codex `function_call`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolEntrySpec {
    /// The role value (see [`Spec::role`]) that makes an entry this tool use.
    pub role: String,
    /// Where the tool's name is; or `literal_name`, the name every such entry has.
    pub name: Option<KeyPath>,
    pub literal_name: Option<String>,
    /// The tool's arguments: an object, or a string holding a JSON object.
    pub input: Option<KeyPath>,
    /// The primary argument, when the entry has it in a field of its own (it wins over `input`'s).
    pub primary: Option<KeyPath>,
    /// The tool use's id: a replayed tool use is counted once.
    pub id: Option<KeyPath>,
}

/// A format description, as plain data. See docs/plugins.md for each field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub entry_type: Option<KeyPath>,
    pub timestamp: Option<KeyPath>,
    pub session_id: Option<KeyPath>,
    pub session_id_types: Vec<String>,
    pub cwd: Option<KeyPath>,
    pub cwd_types: Vec<String>,
    pub title: Option<KeyPath>,
    pub title_types: Vec<String>,
    pub skip_types: Vec<String>,
    pub skip_keys: Vec<String>,
    pub skip_flags: Vec<KeyPath>,
    pub message_types: Vec<String>,
    pub role: Option<KeyPath>,
    pub user_roles: Vec<String>,
    pub assistant_roles: Vec<String>,
    pub message_id: Option<KeyPath>,
    pub content: Option<KeyPath>,
    pub block_type: Option<String>,
    pub text_blocks: Vec<String>,
    pub tool_blocks: Vec<String>,
    pub result_blocks: Vec<String>,
    /// Inside a result block (or, for a block without a type key, the object under its kind key): the
    /// path to the id of the call it answers, to its error flag, and to its text.
    pub result_block_id: KeyPath,
    pub result_block_error: Option<KeyPath>,
    pub result_block_content: Option<KeyPath>,
    pub skip_block_flags: Vec<String>,
    pub block_text: String,
    pub block_name: String,
    pub block_input: Vec<String>,
    pub block_id: String,
    pub tool_calls: Option<KeyPath>,
    /// Inside each entry of `tool_calls`: a list of result blocks, that call's result (the Gemini CLI's
    /// `toolCalls[].result`); a result block without an id answers that call.
    pub tool_call_result: Option<KeyPath>,
    pub tool_entries: Vec<ToolEntrySpec>,
    /// Roles of entries that are one tool result each (Pi's `toolResult` message): the paths from the
    /// top of the line to the id of the call it answers and to its error flag; its text is at `content`.
    pub result_roles: Vec<String>,
    pub result_id: Option<KeyPath>,
    pub result_error: Option<KeyPath>,
    pub skip_prompt_prefixes: Vec<String>,
    pub primary_keys: Vec<String>,
}

impl Default for Spec {
    fn default() -> Self {
        let path = |s: &str| Some(vec![s.to_owned()]);
        let strings = |s: &[&str]| s.iter().map(|s| (*s).to_owned()).collect();
        Spec {
            entry_type: path("type"),
            timestamp: path("timestamp"),
            session_id: None,
            session_id_types: Vec::new(),
            cwd: None,
            cwd_types: Vec::new(),
            title: None,
            title_types: Vec::new(),
            skip_types: Vec::new(),
            skip_keys: Vec::new(),
            skip_flags: Vec::new(),
            message_types: Vec::new(),
            role: path("role"),
            user_roles: strings(&["user"]),
            assistant_roles: strings(&["assistant"]),
            message_id: None,
            content: path("content"),
            block_type: Some("type".to_owned()),
            text_blocks: strings(&["text"]),
            tool_blocks: Vec::new(),
            result_blocks: Vec::new(),
            result_block_id: vec!["tool_use_id".to_owned()],
            result_block_error: path("is_error"),
            result_block_content: path("content"),
            skip_block_flags: Vec::new(),
            block_text: "text".to_owned(),
            block_name: "name".to_owned(),
            block_input: strings(&["input", "arguments", "args"]),
            block_id: "id".to_owned(),
            tool_calls: None,
            tool_call_result: None,
            tool_entries: Vec::new(),
            result_roles: Vec::new(),
            result_id: None,
            result_error: None,
            skip_prompt_prefixes: Vec::new(),
            primary_keys: PRIMARY_KEYS.iter().map(|k| (*k).to_owned()).collect(),
        }
    }
}

/// Where a value found at a key path goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slot {
    Type,
    Timestamp,
    SessionId,
    Cwd,
    Title,
    Role,
    MessageId,
    Content,
    ToolCalls,
    Flag,
    SkipKey,
    EntryName(u8),
    EntryInput(u8),
    EntryPrimary(u8),
    EntryId(u8),
}

impl Slot {
    /// Slots that keep an object or array value whole (the others take strings, booleans or presence).
    fn keeps_span(self) -> bool {
        matches!(self, Slot::Content | Slot::ToolCalls | Slot::EntryInput(_))
    }
}

/// One key of the trie of paths.
#[derive(Debug)]
struct Node {
    key: Box<[u8]>,
    slots: Vec<Slot>,
    children: Vec<usize>,
    keeps_span: bool,
}

/// A value as found in a line.
#[derive(Clone, Copy)]
enum Value<'a> {
    Str(RawStr<'a>),
    Span(&'a [u8]),
    Bool(bool),
    Other,
}

fn string_of(value: Option<Value<'_>>) -> Option<RawStr<'_>> {
    match value {
        Some(Value::Str(s)) => Some(s),
        _ => None,
    }
}

/// The fields of one line.
#[derive(Default)]
struct Fields<'a> {
    ty: Option<RawStr<'a>>,
    ts: Option<RawStr<'a>>,
    session_id: Option<RawStr<'a>>,
    cwd: Option<RawStr<'a>>,
    title: Option<RawStr<'a>>,
    role: Option<RawStr<'a>>,
    message_id: Option<RawStr<'a>>,
    content: Option<Value<'a>>,
    tool_calls: Option<&'a [u8]>,
    flag: bool,
    skip_key: bool,
    entries: [[Option<Value<'a>>; 4]; MAX_TOOL_ENTRIES],
}

impl<'a> Fields<'a> {
    fn set(&mut self, slot: Slot, value: Value<'a>) {
        let string = match value {
            Value::Str(s) => Some(s),
            _ => None,
        };
        match slot {
            Slot::Type => self.ty = string,
            Slot::Timestamp => self.ts = string,
            Slot::SessionId => self.session_id = string,
            Slot::Cwd => self.cwd = string,
            Slot::Title => self.title = string,
            Slot::Role => self.role = string,
            Slot::MessageId => self.message_id = string,
            Slot::Content => {
                self.content = matches!(value, Value::Str(_) | Value::Span(_)).then_some(value);
            }
            Slot::ToolCalls => {
                self.tool_calls = match value {
                    Value::Span(s) => Some(s),
                    _ => None,
                }
            }
            Slot::Flag => self.flag |= matches!(value, Value::Bool(true)),
            Slot::SkipKey => self.skip_key = true,
            Slot::EntryName(k) => self.entries[k as usize][0] = string.map(Value::Str),
            Slot::EntryInput(k) => {
                self.entries[k as usize][1] =
                    matches!(value, Value::Str(_) | Value::Span(_)).then_some(value);
            }
            Slot::EntryPrimary(k) => self.entries[k as usize][2] = string.map(Value::Str),
            Slot::EntryId(k) => self.entries[k as usize][3] = string.map(Value::Str),
        }
    }
}

/// A tool use found in a line, before it is reported.
struct FoundTool<'a> {
    name: RawStr<'a>,
    input: Option<Value<'a>>,
    id: Option<RawStr<'a>>,
}

/// What the content of a message holds.
#[derive(Default)]
struct Content<'a> {
    string: Option<RawStr<'a>>,
    /// Blocks in order: a text (`Ok`) or a tool use (`Err`).
    blocks: Vec<Result<RawStr<'a>, FoundTool<'a>>>,
    result: bool,
    /// The result blocks, kept only for a sink that wants results.
    results: Vec<FoundResult<'a>>,
}

/// A tool result found in a line, before it is reported.
struct FoundResult<'a> {
    id: Option<RawStr<'a>>,
    is_error: bool,
    text: Option<Text<'a>>,
}

/// Compiled key path (checked like the trie's paths).
type Path = Box<[Box<[u8]>]>;

/// The value at `path` inside the object `span` (read only for a sink that wants results).
fn value_at<'a>(span: &'a [u8], path: &[Box<[u8]>]) -> Option<Value<'a>> {
    let (first, rest) = path.split_first()?;
    let mut found = None;
    Reader::new(span).object(|r, key| {
        if !key.is(first) {
            r.skip()?;
            return Some(Flow::Continue);
        }
        found = match (r.peek()?, rest.is_empty()) {
            (b'"', true) => Some(Value::Str(r.string()?)),
            (b'{' | b'[', true) => Some(Value::Span(r.span()?)),
            (b't' | b'f', true) => Some(Value::Bool(r.boolean()?)),
            (b'{', false) => value_at(r.span()?, rest),
            _ => {
                r.skip()?;
                None
            }
        };
        Some(Flow::Stop)
    })?;
    found
}

/// A result's error flag: `true`, or an error message (a string that is not empty; it is the result's
/// text when it has no other).
fn error_of(value: Option<Value<'_>>) -> (bool, Option<RawStr<'_>>) {
    match value {
        Some(Value::Bool(failed)) => (failed, None),
        Some(Value::Str(s)) if !s.raw.is_empty() => (true, Some(s)),
        _ => (false, None),
    }
}

/// A compiled format description.
#[derive(Debug)]
pub struct Declared {
    name: String,
    nodes: Vec<Node>,
    session_id_types: Vec<Box<[u8]>>,
    cwd_types: Vec<Box<[u8]>>,
    title_types: Vec<Box<[u8]>>,
    has_title: bool,
    skip_types: Vec<Box<[u8]>>,
    message_types: Vec<Box<[u8]>>,
    user_roles: Vec<Box<[u8]>>,
    assistant_roles: Vec<Box<[u8]>>,
    block_type: Option<Box<[u8]>>,
    text_blocks: Vec<Box<[u8]>>,
    tool_blocks: Vec<Box<[u8]>>,
    result_blocks: Vec<Box<[u8]>>,
    skip_block_flags: Vec<Box<[u8]>>,
    block_text: Box<[u8]>,
    block_name: Box<[u8]>,
    block_input: Vec<Box<[u8]>>,
    block_id: Box<[u8]>,
    tool_entries: Vec<(Box<[u8]>, Option<String>)>,
    result_block_id: Path,
    result_block_error: Option<Path>,
    result_block_content: Option<Path>,
    tool_call_result: Option<Path>,
    result_roles: Vec<Box<[u8]>>,
    result_id: Option<Path>,
    result_error: Option<Path>,
    skip_prompt_prefixes: Vec<&'static str>,
    primary_keys: Vec<Box<[u8]>>,
}

fn bytes(list: &[String]) -> Vec<Box<[u8]>> {
    list.iter().map(|s| s.as_bytes().into()).collect()
}

fn contains(list: &[Box<[u8]>], value: &RawStr<'_>) -> bool {
    list.iter().any(|item| value.is(item))
}

/// Entry-type filters: empty lets every entry through.
fn type_ok(filter: &[Box<[u8]>], ty: Option<&RawStr<'_>>) -> bool {
    filter.is_empty() || ty.is_some_and(|t| contains(filter, t))
}

fn check_key(field: &str, key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err(format!("{field}: a key must not be empty"));
    }
    if key.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return Err(format!(
            "{field}: key {key:?} has a quote, a backslash or a control character; such keys cannot be matched"
        ));
    }
    Ok(())
}

/// Checks a key path that is read apart from the trie (a result's fields) and compiles it.
fn compile_path(field: &str, path: &[String]) -> Result<Path, String> {
    if path.is_empty() {
        return Err(format!("{field}: a key path must have at least one key"));
    }
    if path.len() > MAX_PATH_DEPTH {
        return Err(format!(
            "{field}: a key path has at most {MAX_PATH_DEPTH} keys, not {}",
            path.len()
        ));
    }
    path.iter()
        .map(|key| check_key(field, key).map(|()| key.as_bytes().into()))
        .collect()
}

fn compile_optional(field: &str, path: &Option<KeyPath>) -> Result<Option<Path>, String> {
    path.as_deref().map(|p| compile_path(field, p)).transpose()
}

fn check_names(field: &str, names: &[String]) -> Result<(), String> {
    names.iter().try_for_each(|n| {
        if n.is_empty() {
            Err(format!("{field}: a name must not be empty"))
        } else {
            Ok(())
        }
    })
}

impl Declared {
    /// Checks and compiles `spec`; the error names the field that is wrong.
    pub fn compile(name: &str, spec: &Spec) -> Result<Declared, String> {
        if name.is_empty() {
            return Err("name: must not be empty".to_owned());
        }
        let mut d = Declared {
            name: name.to_owned(),
            nodes: vec![Node {
                key: Box::default(),
                slots: Vec::new(),
                children: Vec::new(),
                keeps_span: false,
            }],
            session_id_types: bytes(&spec.session_id_types),
            cwd_types: bytes(&spec.cwd_types),
            title_types: bytes(&spec.title_types),
            has_title: spec.title.is_some(),
            skip_types: bytes(&spec.skip_types),
            message_types: bytes(&spec.message_types),
            user_roles: bytes(&spec.user_roles),
            assistant_roles: bytes(&spec.assistant_roles),
            block_type: spec.block_type.as_ref().map(|s| s.as_bytes().into()),
            text_blocks: bytes(&spec.text_blocks),
            tool_blocks: bytes(&spec.tool_blocks),
            result_blocks: bytes(&spec.result_blocks),
            skip_block_flags: bytes(&spec.skip_block_flags),
            block_text: spec.block_text.as_bytes().into(),
            block_name: spec.block_name.as_bytes().into(),
            block_input: bytes(&spec.block_input),
            block_id: spec.block_id.as_bytes().into(),
            tool_entries: Vec::new(),
            result_block_id: compile_path("result_block_id", &spec.result_block_id)?,
            result_block_error: compile_optional("result_block_error", &spec.result_block_error)?,
            result_block_content: compile_optional(
                "result_block_content",
                &spec.result_block_content,
            )?,
            tool_call_result: compile_optional("tool_call_result", &spec.tool_call_result)?,
            result_roles: bytes(&spec.result_roles),
            result_id: compile_optional("result_id", &spec.result_id)?,
            result_error: compile_optional("result_error", &spec.result_error)?,
            // Leaked once per declaration: a compiled format lives as long as the process.
            skip_prompt_prefixes: spec
                .skip_prompt_prefixes
                .iter()
                .map(|p| &*Box::leak(p.clone().into_boxed_str()))
                .collect(),
            primary_keys: bytes(&spec.primary_keys),
        };
        for (field, names) in [
            ("session_id_types", &spec.session_id_types),
            ("cwd_types", &spec.cwd_types),
            ("title_types", &spec.title_types),
            ("skip_types", &spec.skip_types),
            ("message_types", &spec.message_types),
            ("user_roles", &spec.user_roles),
            ("assistant_roles", &spec.assistant_roles),
            ("text_blocks", &spec.text_blocks),
            ("tool_blocks", &spec.tool_blocks),
            ("result_blocks", &spec.result_blocks),
            ("result_roles", &spec.result_roles),
            ("skip_block_flags", &spec.skip_block_flags),
            ("block_input", &spec.block_input),
            ("primary_keys", &spec.primary_keys),
            ("skip_prompt_prefixes", &spec.skip_prompt_prefixes),
        ] {
            check_names(field, names)?;
        }
        for (field, key) in [
            ("block_text", &spec.block_text),
            ("block_name", &spec.block_name),
            ("block_id", &spec.block_id),
        ] {
            check_key(field, key)?;
        }
        if let Some(t) = &spec.block_type {
            check_key("block_type", t)?;
        }
        if spec.user_roles.is_empty()
            && spec.assistant_roles.is_empty()
            && spec.tool_entries.is_empty()
        {
            return Err(
                "user_roles: a format must name at least one user role, assistant role or tool entry"
                    .to_owned(),
            );
        }
        let messages = !spec.user_roles.is_empty() || !spec.assistant_roles.is_empty();
        if spec.role.is_none() {
            return Err(
                "role: needed: it says which entries are prompts, replies or tool entries"
                    .to_owned(),
            );
        }
        if messages && spec.content.is_none() && spec.tool_calls.is_none() {
            return Err("content: needed to read the text of messages".to_owned());
        }
        if spec.tool_entries.len() > MAX_TOOL_ENTRIES {
            return Err(format!(
                "tool_entries: at most {MAX_TOOL_ENTRIES}, not {}",
                spec.tool_entries.len()
            ));
        }
        if !spec.title_types.is_empty() && spec.title.is_none() {
            return Err("title_types: given without a title path".to_owned());
        }
        if !spec.session_id_types.is_empty() && spec.session_id.is_none() {
            return Err("session_id_types: given without a session_id path".to_owned());
        }
        if !spec.cwd_types.is_empty() && spec.cwd.is_none() {
            return Err("cwd_types: given without a cwd path".to_owned());
        }
        if spec.tool_call_result.is_some() && spec.tool_calls.is_none() {
            return Err("tool_call_result: given without a tool_calls path".to_owned());
        }
        for (field, path) in [
            ("result_id", &spec.result_id),
            ("result_error", &spec.result_error),
        ] {
            if path.is_some() && spec.result_roles.is_empty() {
                return Err(format!("{field}: given without result_roles"));
            }
        }
        let other_roles = spec
            .user_roles
            .iter()
            .chain(&spec.assistant_roles)
            .chain(spec.tool_entries.iter().map(|e| &e.role));
        for role in other_roles {
            if spec.result_roles.contains(role) {
                return Err(format!(
                    "result_roles: {role:?} is already a user, assistant or tool entry role"
                ));
            }
        }
        let needs_type = !spec.skip_types.is_empty()
            || !spec.message_types.is_empty()
            || !spec.session_id_types.is_empty()
            || !spec.cwd_types.is_empty()
            || !spec.title_types.is_empty();
        if needs_type && spec.entry_type.is_none() {
            return Err("entry_type: needed by the *_types filters and skip_types".to_owned());
        }
        let single = |field: &'static str, path: &Option<KeyPath>, slot: Slot| {
            path.as_ref().map(|p| (field.to_owned(), p.clone(), slot))
        };
        let mut paths: Vec<(String, KeyPath, Slot)> = [
            single("entry_type", &spec.entry_type, Slot::Type),
            single("timestamp", &spec.timestamp, Slot::Timestamp),
            single("session_id", &spec.session_id, Slot::SessionId),
            single("cwd", &spec.cwd, Slot::Cwd),
            single("title", &spec.title, Slot::Title),
            single("role", &spec.role, Slot::Role),
            single("message_id", &spec.message_id, Slot::MessageId),
            single("content", &spec.content, Slot::Content),
            single("tool_calls", &spec.tool_calls, Slot::ToolCalls),
        ]
        .into_iter()
        .flatten()
        .collect();
        for (k, flag) in spec.skip_flags.iter().enumerate() {
            paths.push((format!("skip_flags[{k}]"), flag.clone(), Slot::Flag));
        }
        for key in &spec.skip_keys {
            paths.push(("skip_keys".to_owned(), vec![key.clone()], Slot::SkipKey));
        }
        for (k, entry) in spec.tool_entries.iter().enumerate() {
            let field = |f: &str| format!("tool_entries[{k}].{f}");
            if entry.role.is_empty() {
                return Err(field("role") + ": must not be empty");
            }
            let k8 = k as u8;
            match (&entry.name, &entry.literal_name) {
                (Some(path), None) => {
                    paths.push((field("name"), path.clone(), Slot::EntryName(k8)))
                }
                (None, Some(literal)) if !literal.is_empty() => {}
                (None, Some(_)) => return Err(field("literal_name") + ": must not be empty"),
                (None, None) => {
                    return Err(field("name") + ": give a path to the name, or a literal_name")
                }
                (Some(_), Some(_)) => {
                    return Err(field("name") + ": give a path or a literal_name, not both")
                }
            }
            for (f, path, slot) in [
                ("input", &entry.input, Slot::EntryInput(k8)),
                ("primary", &entry.primary, Slot::EntryPrimary(k8)),
                ("id", &entry.id, Slot::EntryId(k8)),
            ] {
                if let Some(path) = path {
                    paths.push((field(f), path.clone(), slot));
                }
            }
            d.tool_entries
                .push((entry.role.as_bytes().into(), entry.literal_name.clone()));
        }
        for (field, path, slot) in paths {
            d.insert(&field, &path, slot)?;
        }
        Ok(d)
    }

    fn insert(&mut self, field: &str, path: &[String], slot: Slot) -> Result<(), String> {
        if path.is_empty() {
            return Err(format!("{field}: a key path must have at least one key"));
        }
        if path.len() > MAX_PATH_DEPTH {
            return Err(format!(
                "{field}: a key path has at most {MAX_PATH_DEPTH} keys, not {}",
                path.len()
            ));
        }
        let mut node = 0;
        for key in path {
            check_key(field, key)?;
            let found = self.nodes[node]
                .children
                .iter()
                .copied()
                .find(|&c| *self.nodes[c].key == *key.as_bytes());
            node = match found {
                Some(c) => c,
                None => {
                    self.nodes.push(Node {
                        key: key.as_bytes().into(),
                        slots: Vec::new(),
                        children: Vec::new(),
                        keeps_span: false,
                    });
                    let c = self.nodes.len() - 1;
                    self.nodes[node].children.push(c);
                    c
                }
            };
        }
        let n = &mut self.nodes[node];
        if !n.slots.contains(&slot) {
            n.slots.push(slot);
        }
        n.keeps_span |= slot.keeps_span();
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Walks the object at the reader, filling `f`. At the top level (`stop` given) it stops as soon as
    /// nothing more of the line can count.
    fn walk<'a>(
        &self,
        r: &mut Reader<'a>,
        node: usize,
        f: &mut Fields<'a>,
        stop: Option<bool>,
    ) -> Option<Flow> {
        r.object(|r, key| {
            let child = self.nodes[node]
                .children
                .iter()
                .copied()
                .find(|&c| key.is(&self.nodes[c].key));
            match child {
                None => r.skip()?,
                Some(c) => self.visit(r, c, f)?,
            }
            Some(match stop {
                Some(needs_identity) if !needs_identity && self.done(f) => Flow::Stop,
                _ => Flow::Continue,
            })
        })
    }

    fn visit<'a>(&self, r: &mut Reader<'a>, c: usize, f: &mut Fields<'a>) -> Option<()> {
        let n = &self.nodes[c];
        let value = match r.peek()? {
            b'"' => Value::Str(r.string()?),
            b'{' if !n.children.is_empty() => {
                if n.keeps_span {
                    let span = r.span()?;
                    self.walk(&mut Reader::new(span), c, f, None)?;
                    Value::Span(span)
                } else {
                    self.walk(r, c, f, None)?;
                    Value::Other
                }
            }
            b'{' | b'[' => Value::Span(r.span()?),
            b't' | b'f' => Value::Bool(r.boolean()?),
            _ => {
                r.skip()?;
                Value::Other
            }
        };
        for &slot in &n.slots {
            f.set(slot, value);
        }
        Some(())
    }

    /// True when the line is known to count nothing (skipped), so that what follows is not needed.
    fn skipped(&self, f: &Fields<'_>) -> bool {
        if f.skip_key || f.flag {
            return true;
        }
        match &f.ty {
            Some(t) => {
                contains(&self.skip_types, t)
                    || (!self.message_types.is_empty() && !contains(&self.message_types, t))
            }
            None => false,
        }
    }

    /// True when nothing after this point of the line can count.
    fn done(&self, f: &Fields<'_>) -> bool {
        if !self.skipped(f) {
            return false;
        }
        // A title may still follow, unless its type filter rules this entry out.
        !self.has_title
            || f.title.is_some()
            || (!self.title_types.is_empty() && !type_ok(&self.title_types, f.ty.as_ref()))
    }

    /// Decodes one line into `sink`.
    pub(super) fn decode<S: Sink + ?Sized>(&self, line: &[u8], sink: &mut S) -> Result<(), Bad> {
        let mut r = Reader::new(line);
        let mut f = Fields::default();
        let needs_identity = sink.needs_identity();
        // A reader's sink also takes tool results; a count never reads them.
        let want = sink.wants_results();
        let flow = self
            .walk(&mut r, 0, &mut f, Some(needs_identity))
            .ok_or(Bad::Malformed)?;
        line_end(&mut r, flow == Flow::Stop)?;
        // Everything that can fail is read before anything is reported: a malformed line counts nothing.
        enum Kind<'a> {
            Nothing,
            Prompt(Content<'a>),
            Reply(Content<'a>, Vec<FoundTool<'a>>, Vec<FoundResult<'a>>),
            Tool(usize),
            Result(FoundResult<'a>),
        }
        let kind = match (&f.role, self.skipped(&f)) {
            (Some(role), false) => {
                if let Some(k) = self.tool_entries.iter().position(|(r, _)| role.is(r)) {
                    Kind::Tool(k)
                } else if contains(&self.user_roles, role) {
                    Kind::Prompt(self.content_for(want, f.content, true)?)
                } else if contains(&self.assistant_roles, role) {
                    let mut results = Vec::new();
                    let calls = match f.tool_calls {
                        Some(span) => self.tool_calls(span, want.then_some(&mut results))?,
                        None => Vec::new(),
                    };
                    Kind::Reply(self.content_for(want, f.content, false)?, calls, results)
                } else if want && contains(&self.result_roles, role) {
                    Kind::Result(self.result_entry(line, f.content))
                } else {
                    Kind::Nothing
                }
            }
            _ => Kind::Nothing,
        };
        sink.entry_type(f.ty.as_ref());
        let ty = f.ty.as_ref();
        for (value, filter, meta) in [
            (&f.session_id, &self.session_id_types, Meta::SessionId),
            (&f.cwd, &self.cwd_types, Meta::Cwd),
            (&f.title, &self.title_types, Meta::CustomTitle),
        ] {
            if let Some(v) = value {
                if type_ok(filter, ty) {
                    sink.meta(meta, v);
                }
            }
        }
        let ts = f.ts.as_ref();
        if let (true, Some(ts)) = (sink.wants_entries(), ts) {
            sink.line_timestamp(ts);
        }
        match kind {
            Kind::Nothing => {}
            Kind::Prompt(content) => {
                if content.result {
                    report_results(content.results, sink);
                    return Ok(());
                }
                let text = match content.string {
                    Some(s) => Some(Text::Raw(s)),
                    None => {
                        let texts: Vec<RawStr<'_>> = content
                            .blocks
                            .iter()
                            .filter_map(|b| b.as_ref().ok())
                            .copied()
                            .collect();
                        if texts.len() == 1 {
                            Some(Text::Raw(texts[0]))
                        } else {
                            Text::join(&texts)
                        }
                    }
                };
                if let Some(text) = text {
                    if self.skip_prompt_prefixes.is_empty()
                        || !text.starts_with_any(&self.skip_prompt_prefixes)
                    {
                        sink.prompt(text, ts);
                    }
                }
            }
            Kind::Reply(content, calls, call_results) => {
                sink.assistant(f.message_id.map(|i| hash64(i.raw)), ts);
                if let Some(s) = content.string {
                    sink.assistant_text(&s, ts);
                }
                for block in content.blocks {
                    match block {
                        Ok(text) => sink.assistant_text(&text, ts),
                        Err(tool) => self.report_tool(tool, None, ts, sink),
                    }
                }
                for tool in calls {
                    self.report_tool(tool, None, ts, sink);
                }
                report_results(content.results, sink);
                report_results(call_results, sink);
            }
            Kind::Result(result) => report_results(vec![result], sink),
            Kind::Tool(k) => {
                let [name, input, primary, id] = f.entries[k];
                let literal = self.tool_entries[k].1.as_deref();
                let primary = string_of(primary);
                let tool = |name| FoundTool {
                    name,
                    input,
                    id: string_of(id),
                };
                match (literal, string_of(name)) {
                    (Some(literal), _) => {
                        let name = RawStr {
                            raw: literal.as_bytes(),
                            escaped: false,
                        };
                        self.report_tool(tool(name), primary, ts, sink);
                    }
                    (None, Some(name)) => self.report_tool(tool(name), primary, ts, sink),
                    (None, None) => {}
                }
            }
        }
        Ok(())
    }

    fn report_tool<S: Sink + ?Sized>(
        &self,
        tool: FoundTool<'_>,
        primary: Option<RawStr<'_>>,
        ts: Option<&RawStr<'_>>,
        sink: &mut S,
    ) {
        let name = tool.name.decode();
        let keys = &self.primary_keys;
        let (found, files, details) = match tool.input {
            Some(Value::Span(object)) => {
                let input = tool_input(object, &name, keys);
                (input.primary, input.files, input.details)
            }
            Some(Value::Str(json)) => {
                // Arguments written as a JSON string (the OpenAI convention).
                let text = json.decode();
                let input = tool_input(text.as_bytes(), &name, keys);
                let primary = input.primary.map(|t| Text::Joined(t.trimmed(usize::MAX)));
                (primary, input.files, input.details)
            }
            _ => (None, Vec::new(), Details::default()),
        };
        let primary = match primary {
            Some(p) => Some(Text::Raw(p)),
            None => found,
        };
        let arguments = match tool.input.filter(|_| sink.wants_entries()) {
            Some(Value::Span(object)) => Some(Arguments::Json(object)),
            Some(Value::Str(json)) => Some(Arguments::Encoded(json)),
            _ => None,
        };
        sink.tool_use(
            ToolCall {
                id: tool.id.map(|i| hash64(i.raw)),
                name: &name,
                primary,
                files,
                details,
                arguments,
            },
            ts,
        );
    }

    /// A result entry (one of `result_roles`): the id and error flag at their paths from the top of the
    /// line, the text of its content. Read only for a sink that wants results, after the line was read
    /// whole: nothing here makes a line malformed.
    fn result_entry<'a>(&self, line: &'a [u8], content: Option<Value<'a>>) -> FoundResult<'a> {
        let at = |path: &Option<Path>| path.as_deref().and_then(|p| value_at(line, p));
        let (is_error, message) = error_of(at(&self.result_error));
        FoundResult {
            id: string_of(at(&self.result_id)),
            is_error,
            text: self.result_text(content).or(message.map(Text::Raw)),
        }
    }

    /// A result block's id, error flag and text, at their paths inside `object`.
    fn result_block<'a>(&self, object: Option<&'a [u8]>) -> FoundResult<'a> {
        let at = |path: Option<&[Box<[u8]>]>| object.zip(path).and_then(|(o, p)| value_at(o, p));
        let (is_error, message) = error_of(at(self.result_block_error.as_deref()));
        FoundResult {
            id: string_of(at(Some(&self.result_block_id))),
            is_error,
            text: self
                .result_text(at(self.result_block_content.as_deref()))
                .or(message.map(Text::Raw)),
        }
    }

    /// A result's text: a string, or the text blocks of a list (as a prompt's are read).
    fn result_text<'a>(&self, value: Option<Value<'a>>) -> Option<Text<'a>> {
        match value? {
            Value::Str(s) => Some(Text::Raw(s)),
            value @ Value::Span(_) => {
                let texts: Vec<RawStr<'a>> = self
                    .content::<false>(Some(value), false)
                    .ok()?
                    .blocks
                    .into_iter()
                    .filter_map(Result::ok)
                    .collect();
                match texts.as_slice() {
                    [one] => Some(Text::Raw(*one)),
                    _ => Text::join(&texts),
                }
            }
            _ => None,
        }
    }

    /// [`Declared::content`], for a sink that wants results (`want`) or not.
    fn content_for<'a>(
        &self,
        want: bool,
        value: Option<Value<'a>>,
        is_user: bool,
    ) -> Result<Content<'a>, Bad> {
        if want {
            self.content::<true>(value, is_user)
        } else {
            self.content::<false>(value, is_user)
        }
    }

    /// Reads a message's content: a string, or a list of blocks. A user message stops at a tool result,
    /// unless `WANT` (a reader's sink): then every block is read, and the results are kept. A count
    /// runs the code it ran before results were read (`WANT` is false).
    fn content<'a, const WANT: bool>(
        &self,
        value: Option<Value<'a>>,
        is_user: bool,
    ) -> Result<Content<'a>, Bad> {
        let mut content = Content::default();
        match value {
            Some(Value::Str(s)) => content.string = Some(s),
            Some(Value::Span(span)) if span.first() == Some(&b'[') => {
                Reader::new(span)
                    .array(|r| {
                        if r.peek()? != b'{' {
                            r.skip()?;
                            return Some(Flow::Continue);
                        }
                        if WANT {
                            let span = r.span()?;
                            self.block::<WANT>(&mut Reader::new(span), &mut content, span)?;
                        } else {
                            self.block::<WANT>(r, &mut content, &[])?;
                        }
                        Some(if content.result && is_user && !WANT {
                            Flow::Stop
                        } else {
                            Flow::Continue
                        })
                    })
                    .ok_or(Bad::Malformed)?;
            }
            _ => {}
        }
        Ok(content)
    }

    /// Reads one block of a content list. `whole`, the block's span, is read only when results are
    /// wanted (`WANT`): a result block's fields are then read from it (or from the object under its
    /// kind key).
    fn block<'a, const WANT: bool>(
        &self,
        r: &mut Reader<'a>,
        content: &mut Content<'a>,
        whole: &'a [u8],
    ) -> Option<()> {
        let (mut ty, mut text, mut name, mut input, mut id) = (None, None, None, None, None);
        let mut inner: Option<&'a [u8]> = None;
        let mut skip = false;
        // Without a type key, the first key that names a kind gives the block its kind.
        let mut keyed: Option<u8> = None; // 0 text, 1 tool, 2 result
        let typed = self.block_type.as_deref();
        r.object(|r, key| {
            if typed.is_some_and(|t| key.is(t)) {
                ty = r.string_or_skip()?;
            } else if key.is(&self.block_text) {
                text = r.string_or_skip()?;
                if typed.is_none() && keyed.is_none() && contains(&self.text_blocks, &key) {
                    keyed = Some(0);
                }
            } else if self.tool_field(r, &key, &mut name, &mut id, &mut input)? {
            } else if contains(&self.skip_block_flags, &key) {
                skip |= r.boolean()?;
            } else if typed.is_none() && contains(&self.result_blocks, &key) {
                if WANT && keyed.is_none() && r.peek()? == b'{' {
                    inner = Some(r.span()?);
                } else {
                    r.skip()?;
                }
                keyed.get_or_insert(2);
            } else if typed.is_none() && contains(&self.tool_blocks, &key) && r.peek()? == b'{' {
                // A typeless tool block keeps its name, arguments and id in an object of its own.
                if keyed.is_none() {
                    keyed = Some(1);
                    r.object(|r, key| {
                        if !self.tool_field(r, &key, &mut name, &mut id, &mut input)? {
                            r.skip()?;
                        }
                        Some(Flow::Continue)
                    })?;
                } else {
                    r.skip()?;
                }
            } else {
                r.skip()?;
            }
            Some(Flow::Continue)
        })?;
        let kind = match (typed, ty) {
            (Some(_), Some(t)) if contains(&self.result_blocks, &t) => Some(2),
            (Some(_), Some(t)) if contains(&self.text_blocks, &t) => Some(0),
            (Some(_), Some(t)) if contains(&self.tool_blocks, &t) => Some(1),
            (Some(_), _) => None,
            (None, _) => keyed,
        };
        match kind {
            Some(2) => {
                content.result = true;
                if WANT {
                    let object = if typed.is_some() { Some(whole) } else { inner };
                    content.results.push(self.result_block(object));
                }
            }
            _ if skip => {}
            Some(0) => {
                if let Some(text) = text {
                    content.blocks.push(Ok(text));
                }
            }
            Some(1) => {
                if let Some(name) = name {
                    content.blocks.push(Err(FoundTool { name, input, id }));
                }
            }
            _ => {}
        }
        Some(())
    }

    /// Reads the value of `key` into a tool call's `name`, `id` or `input` when it is one of their
    /// keys (`Some(false)`: another key, left unread; `None`: malformed).
    fn tool_field<'a>(
        &self,
        r: &mut Reader<'a>,
        key: &RawStr<'a>,
        name: &mut Option<RawStr<'a>>,
        id: &mut Option<RawStr<'a>>,
        input: &mut Option<Value<'a>>,
    ) -> Option<bool> {
        if key.is(&self.block_name) {
            *name = r.string_or_skip()?;
        } else if key.is(&self.block_id) {
            *id = r.string_or_skip()?;
        } else if contains(&self.block_input, key) {
            *input = Some(match r.peek()? {
                b'"' => Value::Str(r.string()?),
                _ => Value::Span(r.span()?),
            });
        } else {
            return Some(false);
        }
        Some(true)
    }

    /// Reads a list of tool-call objects (`{name, args, id}`, keys as for blocks). `results` (given
    /// only when results are wanted) gets each call's results at `tool_call_result`.
    fn tool_calls<'a>(
        &self,
        span: &'a [u8],
        mut results: Option<&mut Vec<FoundResult<'a>>>,
    ) -> Result<Vec<FoundTool<'a>>, Bad> {
        let mut calls = Vec::new();
        if span.first() != Some(&b'[') {
            return Ok(calls);
        }
        Reader::new(span)
            .array(|r| {
                if r.peek()? != b'{' {
                    r.skip()?;
                    return Some(Flow::Continue);
                }
                let (mut name, mut input, mut id) = (None, None, None);
                let wanted = results.as_deref_mut().zip(self.tool_call_result.as_deref());
                let mut call = |r: &mut Reader<'a>| {
                    r.object(|r, key| {
                        if !self.tool_field(r, &key, &mut name, &mut id, &mut input)? {
                            r.skip()?;
                        }
                        Some(Flow::Continue)
                    })
                };
                match wanted {
                    None => {
                        call(r)?;
                    }
                    Some((results, path)) => {
                        let object = r.span()?;
                        call(&mut Reader::new(object))?;
                        if let Some(list @ Value::Span(_)) = value_at(object, path) {
                            let found = self.content::<true>(Some(list), false).ok()?.results;
                            results.extend(found.into_iter().map(|mut result| {
                                result.id = result.id.or(id);
                                result
                            }));
                        }
                    }
                }
                if let Some(name) = name {
                    calls.push(FoundTool { name, input, id });
                }
                Some(Flow::Continue)
            })
            .ok_or(Bad::Malformed)?;
        Ok(calls)
    }
}

/// Reports tool results (by the hash of their call's id).
fn report_results<S: Sink + ?Sized>(results: Vec<FoundResult<'_>>, sink: &mut S) {
    for result in results {
        let id = result.id.map(|i| hash64(i.raw));
        sink.tool_result(id, result.is_error, result.text);
    }
}

/// One thing a line says, as a decoder written outside the core reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The entry's type (counted in `entry_types`; a line without one counts as `<none>`).
    Type(String),
    SessionId(String),
    Cwd(String),
    Title(String),
    /// A prompt a person wrote.
    User {
        text: String,
        timestamp: Option<String>,
    },
    /// One assistant entry (lines with one `id` count once) and its text, if any.
    Assistant {
        text: Option<String>,
        timestamp: Option<String>,
        id: Option<String>,
    },
    /// A tool use: its arguments as a JSON object text, and/or its primary argument.
    Tool {
        name: String,
        arguments: Option<String>,
        primary: Option<String>,
        id: Option<String>,
        timestamp: Option<String>,
    },
    /// A tool's result: the id of the call it answers (`None`: the tool use just before, in the same
    /// line), whether it failed, and its text.
    Result {
        id: Option<String>,
        is_error: bool,
        text: Option<String>,
    },
}

/// A string as the raw JSON string body the sink expects.
fn escaped(s: &str) -> (std::borrow::Cow<'_, [u8]>, bool) {
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return (std::borrow::Cow::Borrowed(s.as_bytes()), false);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    (std::borrow::Cow::Owned(out.into_bytes()), true)
}

fn raw<'a>(e: &'a (std::borrow::Cow<'_, [u8]>, bool)) -> RawStr<'a> {
    RawStr {
        raw: &e.0,
        escaped: e.1,
    }
}

/// Reports the events of one line, as a built-in decoder reports what it finds.
pub fn report_events<S: Sink + ?Sized>(events: &[Event], primary_keys: &[&str], sink: &mut S) {
    let typed = events.iter().find_map(|e| match e {
        Event::Type(t) => Some(t),
        _ => None,
    });
    let ty = typed.map(|t| escaped(t));
    let want = sink.wants_results();
    sink.entry_type(
        ty.as_ref()
            .map(|(raw, escaped)| RawStr {
                raw,
                escaped: *escaped,
            })
            .as_ref(),
    );
    for event in events {
        match event {
            Event::Type(_) => {}
            Event::SessionId(v) | Event::Cwd(v) | Event::Title(v) => {
                let which = match event {
                    Event::SessionId(_) => Meta::SessionId,
                    Event::Cwd(_) => Meta::Cwd,
                    _ => Meta::CustomTitle,
                };
                sink.meta(which, &raw(&escaped(v)));
            }
            Event::User { text, timestamp } => {
                let ts = timestamp.as_deref().map(escaped);
                sink.prompt(Text::Joined(text.clone()), ts.as_ref().map(raw).as_ref());
            }
            Event::Assistant {
                text,
                timestamp,
                id,
            } => {
                let ts = timestamp.as_deref().map(escaped);
                let ts = ts.as_ref().map(raw);
                sink.assistant(id.as_deref().map(|i| hash64(i.as_bytes())), ts.as_ref());
                if let Some(text) = text {
                    sink.assistant_text(&raw(&escaped(text)), ts.as_ref());
                }
            }
            Event::Tool {
                name,
                arguments,
                primary,
                id,
                timestamp,
            } => {
                let ts = timestamp.as_deref().map(escaped);
                let input = arguments
                    .as_deref()
                    .map(|a| tool_input(a.as_bytes(), name, primary_keys))
                    .unwrap_or_default();
                let found = input.primary.map(|t| Text::Joined(t.trimmed(usize::MAX)));
                let json = arguments.as_deref().filter(|_| sink.wants_entries());
                sink.tool_use(
                    ToolCall {
                        id: id.as_deref().map(|i| hash64(i.as_bytes())),
                        name,
                        primary: primary.clone().map(Text::Joined).or(found),
                        files: input.files,
                        details: input.details,
                        arguments: json.map(|a| Arguments::Json(a.as_bytes())),
                    },
                    ts.as_ref().map(raw).as_ref(),
                );
            }
            Event::Result { id, is_error, text } => {
                if want {
                    let id = id.as_deref().map(|i| hash64(i.as_bytes()));
                    sink.tool_result(id, *is_error, text.clone().map(Text::Joined));
                }
            }
        }
    }
}

/// A line decoder written outside the core (the Python fallback), registered as a
/// [`Format::External`](super::Format::External). It must not panic; it returns false for a line it
/// cannot read, which is counted as malformed.
pub trait LineDecoder: Send + Sync {
    fn name(&self) -> &str;
    fn decode(&self, line: &[u8], sink: &mut dyn Sink) -> bool;
    /// The decoder as its own type, for the code that registered it to find it again behind a format
    /// (the binding scans a format written in Python with the GIL held).
    fn as_any(&self) -> &dyn std::any::Any;
}

impl std::fmt::Debug for dyn LineDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LineDecoder({})", self.name())
    }
}

/// Descriptions of real formats, for the tests and the fuzz targets (not a public API).
#[doc(hidden)]
pub mod samples {
    use super::{KeyPath, Spec, ToolEntrySpec};

    fn path(keys: &[&str]) -> Option<KeyPath> {
        Some(keys.iter().map(|k| (*k).to_owned()).collect())
    }

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Pi, described instead of hand-written: it must count what the built-in decoder counts.
    pub fn pi() -> Spec {
        Spec {
            session_id: path(&["id"]),
            session_id_types: strings(&["session"]),
            cwd: path(&["cwd"]),
            cwd_types: strings(&["session"]),
            title: path(&["name"]),
            title_types: strings(&["session_info"]),
            message_types: strings(&["message", "session", "session_info"]),
            role: path(&["message", "role"]),
            content: path(&["message", "content"]),
            tool_blocks: strings(&["toolCall", "tool_use"]),
            result_blocks: strings(&["tool_result"]),
            block_input: strings(&["input", "arguments"]),
            tool_entries: vec![ToolEntrySpec {
                role: "bashExecution".to_owned(),
                literal_name: Some("bashExecution".to_owned()),
                primary: path(&["message", "command"]),
                ..ToolEntrySpec::default()
            }],
            result_roles: strings(&["toolResult"]),
            result_id: path(&["message", "toolCallId"]),
            result_error: path(&["message", "isError"]),
            ..Spec::default()
        }
    }

    /// Gemini CLI JSONL as a declaration (untyped parts, `toolCalls` with their `result`): the layout
    /// the example plugin declared before Gemini became a built-in format; kept for its shapes.
    pub fn gemini() -> Spec {
        Spec {
            session_id: path(&["sessionId"]),
            title: path(&["$set", "summary"]),
            skip_keys: strings(&["$set", "$rewindTo"]),
            role: path(&["type"]),
            user_roles: strings(&["user"]),
            assistant_roles: strings(&["gemini"]),
            message_id: path(&["id"]),
            block_type: None,
            text_blocks: strings(&["text"]),
            tool_blocks: strings(&["functionCall"]),
            result_blocks: strings(&["functionResponse"]),
            result_block_id: strings(&["id"]),
            result_block_error: path(&["response", "error"]),
            result_block_content: path(&["response", "output"]),
            skip_block_flags: strings(&["thought"]),
            tool_calls: path(&["toolCalls"]),
            tool_call_result: path(&["result"]),
            skip_prompt_prefixes: strings(&["<session_context>"]),
            ..Spec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::{Activity, Categories, Category, Options};
    use crate::formats::Format;

    fn path(keys: &[&str]) -> Option<KeyPath> {
        Some(keys.iter().map(|k| (*k).to_owned()).collect())
    }

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    fn options() -> Options {
        Options {
            categories: Categories::new(
                [
                    ("bash", Category::Command),
                    ("bashexecution", Category::Command),
                    ("edit", Category::Edit),
                    ("write", Category::Edit),
                    ("read", Category::Read),
                    ("run_shell_command", Category::Command),
                    ("replace", Category::Edit),
                    ("write_file", Category::Edit),
                ]
                .map(|(k, v)| (k.to_owned(), v)),
            ),
            ..Options::default()
        }
    }

    fn run(format: Format, lines: &[&[u8]]) -> Activity {
        let mut a = Activity::new(&options(), 0);
        for line in lines {
            a.lines += 1;
            format.decode(line, &mut a);
        }
        a
    }

    fn same(a: &Activity, b: &Activity) {
        assert_eq!(a.lines, b.lines);
        assert_eq!(
            (a.user_messages, a.assistant_messages),
            (b.user_messages, b.assistant_messages)
        );
        assert_eq!(a.tools, b.tools);
        assert_eq!(a.categories, b.categories);
        assert_eq!(a.tool_uses, b.tool_uses);
        assert_eq!(a.files_touched, b.files_touched);
        assert_eq!(a.first_user_text, b.first_user_text);
        assert_eq!(a.last_user_text, b.last_user_text);
        assert_eq!(a.last_assistant_text, b.last_assistant_text);
        assert_eq!(
            (&a.first_timestamp, &a.last_timestamp),
            (&b.first_timestamp, &b.last_timestamp)
        );
        assert_eq!((&a.session_id, &a.cwd), (&b.session_id, &b.cwd));
        assert_eq!(a.title(), b.title());
        assert_eq!(a.skipped, b.skipped);
        assert_eq!(a.entry_types, b.entry_types);
    }

    fn declared(name: &str, spec: &Spec) -> Format {
        Format::Declared(Box::leak(Box::new(Declared::compile(name, spec).unwrap())))
    }

    #[test]
    fn pi_declared_counts_what_the_built_in_counts_on_real_sessions() {
        let pi = declared("pi-declared", &samples::pi());
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = vec![
            root.join("tests/data/pi/four-tools-continue.jsonl"),
            root.join("tests/fixtures/older-shapes/pi/v1-session.jsonl"),
            root.join("tests/fixtures/older-shapes/pi/v3-session.jsonl"),
        ];
        // Real Pi sessions of the pi-mono project (MIT), kept in the repository.
        for name in ["before-compaction.jsonl", "large-session.jsonl"] {
            files.push(root.join("tests/data/pi-mono").join(name));
        }
        let mut compared = 0;
        for file in files {
            let text = std::fs::read(&file).unwrap();
            let lines: Vec<&[u8]> = text
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .collect();
            let (built_in, described) = (run(Format::Pi, &lines), run(pi, &lines));
            same(&described, &built_in);
            assert!(built_in.user_messages > 0, "{}", file.display());
            // Line by line too, with identity known (the decoders may stop reading lines early then).
            for line in &lines {
                let mut a = Activity::new(&options(), 0);
                a.session_id = Some("s".into());
                a.cwd = Some("c".into());
                let mut b = a.clone();
                Format::Pi.decode(line, &mut a);
                pi.decode(line, &mut b);
                same(&b, &a);
            }
            compared += lines.len();
        }
        assert!(compared > 20);
    }

    #[test]
    fn gemini_lines_are_read_from_the_description() {
        let g = declared("gemini-test", &samples::gemini());
        let lines: Vec<&[u8]> = vec![
            br#"{"sessionId":"abc","projectHash":"h","startTime":"t0","lastUpdated":"t0","kind":"main"}"#,
            br#"{"id":"u0","timestamp":"t1","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.</session_context>"}]}"#,
            br#"{"id":"u1","timestamp":"t2","type":"user","content":[{"text":"fix the "},{"text":"build"}]}"#,
            br#"{"$set":{"lastUpdated":"t2"}}"#,
            br#"{"id":"g1","timestamp":"t3","type":"gemini","content":"","thoughts":[{"subject":"s"}],"model":"m"}"#,
            br#"{"id":"g1","timestamp":"t3","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"make"},"status":"success"}]}"#,
            br#"{"id":"r1","timestamp":"t4","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"ok"}}}]}"#,
            br#"{"id":"g2","timestamp":"t5","type":"gemini","content":[{"text":"thinking","thought":true},{"text":"Fixed."}],"toolCalls":[{"id":"c2","name":"replace","args":{"file_path":"/p/a.c","old_string":"x","new_string":"y"}},{"id":"c1","name":"run_shell_command","args":{"command":"make"}}]}"#,
            br#"{"$set":{"summary":"Fix the build","messages":[{"id":"u1","type":"user","content":"fix the build"}]}}"#,
            br#"{"$rewindTo":"g2"}"#,
            br#"{"id":"i1","timestamp":"t6","type":"info","content":"Request cancelled."}"#,
            br#"{"id":"g3","type":"gemini","content":"cut"#,
        ];
        let a = run(g, &lines);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 2));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the \nbuild"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Fixed."));
        assert_eq!(a.tools.get("run_shell_command"), Some(&1));
        assert_eq!(a.tools.get("replace"), Some(&1));
        assert_eq!(a.categories, [1, 0, 1, 0]);
        assert_eq!(a.files_touched, ["/p/a.c"]);
        assert_eq!(a.tool_uses[0].primary_arg.as_deref(), Some("make"));
        assert_eq!(a.tool_uses[1].old_text.as_deref(), Some("x"));
        assert_eq!(a.session_id.as_deref(), Some("abc"));
        assert_eq!(a.title(), Some("Fix the build"));
        assert_eq!(
            (a.first_timestamp.as_deref(), a.last_timestamp.as_deref()),
            (Some("t2"), Some("t5"))
        );
        assert_eq!(a.skipped.malformed_json, 1);
        assert_eq!(a.entry_types.get("<none>"), Some(&4));
        assert_eq!(a.entry_types.get("gemini"), Some(&3));
    }

    #[test]
    fn tool_entries_and_string_arguments() {
        let spec = Spec {
            entry_type: path(&["type"]),
            message_types: strings(&["response_item"]),
            role: path(&["payload", "type"]),
            user_roles: Vec::new(),
            assistant_roles: Vec::new(),
            content: None,
            tool_entries: vec![ToolEntrySpec {
                role: "function_call".to_owned(),
                name: path(&["payload", "name"]),
                input: path(&["payload", "arguments"]),
                id: path(&["payload", "call_id"]),
                ..ToolEntrySpec::default()
            }],
            ..Spec::default()
        };
        let f = declared("calls", &spec);
        let a = run(
            f,
            &[
                br#"{"type":"response_item","payload":{"type":"function_call","name":"bash","arguments":"{\"command\":\"ls -la\"}","call_id":"x"}}"#,
                br#"{"type":"response_item","payload":{"type":"function_call","name":"bash","arguments":"{\"command\":\"ls -la\"}","call_id":"x"}}"#,
                br#"{"type":"event_msg","payload":{"type":"function_call","name":"bash"}}"#,
            ],
        );
        assert_eq!(a.tools.get("bash"), Some(&1));
        assert_eq!(a.tool_uses[0].primary_arg.as_deref(), Some("ls -la"));
    }

    #[test]
    fn bad_descriptions_name_the_field() {
        let cases: Vec<(Spec, &str)> = vec![
            (
                Spec {
                    role: None,
                    ..Spec::default()
                },
                "role:",
            ),
            (
                Spec {
                    timestamp: Some(Vec::new()),
                    ..Spec::default()
                },
                "timestamp:",
            ),
            (
                Spec {
                    content: path(&["a", "b\"c"]),
                    ..Spec::default()
                },
                "content:",
            ),
            (
                Spec {
                    title_types: strings(&["x"]),
                    ..Spec::default()
                },
                "title_types:",
            ),
            (
                Spec {
                    tool_entries: vec![ToolEntrySpec {
                        role: "x".into(),
                        ..ToolEntrySpec::default()
                    }],
                    ..Spec::default()
                },
                "tool_entries[0].name:",
            ),
            (
                Spec {
                    entry_type: None,
                    skip_types: strings(&["x"]),
                    ..Spec::default()
                },
                "entry_type:",
            ),
            (
                Spec {
                    user_roles: strings(&[""]),
                    ..Spec::default()
                },
                "user_roles:",
            ),
            (
                Spec {
                    result_id: path(&["id"]),
                    ..Spec::default()
                },
                "result_id:",
            ),
            (
                Spec {
                    result_roles: strings(&["user"]),
                    ..Spec::default()
                },
                "result_roles:",
            ),
            (
                Spec {
                    result_block_id: Vec::new(),
                    ..Spec::default()
                },
                "result_block_id:",
            ),
            (
                Spec {
                    result_block_content: path(&["a\"b"]),
                    ..Spec::default()
                },
                "result_block_content:",
            ),
            (
                Spec {
                    result_roles: strings(&["r"]),
                    result_error: Some(vec!["k".to_owned(); MAX_PATH_DEPTH + 1]),
                    ..Spec::default()
                },
                "result_error:",
            ),
        ];
        for (spec, field) in cases {
            let error = Declared::compile("x", &spec).unwrap_err();
            assert!(error.starts_with(field), "{error:?} should name {field}");
            assert!(!error.contains('\n'));
        }
        assert!(
            crate::formats::declare("pi", &Spec::default(), Categories::default())
                .unwrap_err()
                .contains("built-in")
        );
    }

    #[test]
    fn registered_formats_are_found_by_name() {
        let f = crate::formats::declare("registry-test", &samples::gemini(), Categories::default())
            .unwrap();
        assert_eq!(Format::parse("registry-test"), Some(f));
        assert!(crate::formats::registered().contains(&"registry-test"));
        // Declaring a name again replaces it.
        crate::formats::declare("registry-test", &samples::pi(), Categories::default()).unwrap();
        let again = Format::parse("registry-test").unwrap();
        assert!(matches!(again, Format::Declared(d) if std::ptr::eq(d.name(), again.name())));
    }

    #[test]
    fn events_report_like_a_decoder() {
        let mut a = Activity::new(&options(), 0);
        report_events(
            &[
                Event::Type("gemini".into()),
                Event::Assistant {
                    text: Some("said \"hi\"\n".into()),
                    timestamp: Some("t\\1".into()),
                    id: Some("m".into()),
                },
                Event::Tool {
                    name: "write_file".into(),
                    arguments: Some(r#"{"file_path":"/a","content":"1\n2\n"}"#.into()),
                    primary: None,
                    id: Some("c".into()),
                    timestamp: None,
                },
                Event::SessionId("sid".into()),
            ],
            &PRIMARY_KEYS,
            &mut a,
        );
        assert_eq!(a.last_assistant_text.as_deref(), Some("said \"hi\""));
        assert_eq!(a.last_timestamp.as_deref(), Some("t\\1"));
        assert_eq!(a.files_touched, ["/a"]);
        assert_eq!(a.tool_uses[0].lines, Some(2));
        assert_eq!(a.session_id.as_deref(), Some("sid"));
        assert_eq!(a.entry_types.get("gemini"), Some(&1));
    }

    /// A sink that keeps the tool uses and results a reader is given (`wants` false: a count's sink,
    /// which must be given no result).
    struct Results {
        wants: bool,
        tools: Vec<(Option<u64>, String)>,
        results: Vec<(Option<u64>, bool, Option<String>)>,
        prompts: usize,
    }

    impl Results {
        fn new(wants: bool) -> Self {
            Results {
                wants,
                tools: Vec::new(),
                results: Vec::new(),
                prompts: 0,
            }
        }
    }

    impl Sink for Results {
        fn wants_results(&self) -> bool {
            self.wants
        }
        fn tool_result(&mut self, id: Option<u64>, is_error: bool, text: Option<Text<'_>>) {
            assert!(self.wants, "a count's sink was given a tool result");
            let text = text.map(|t| match t {
                Text::Raw(raw) => raw.decode(),
                Text::Joined(s) => s,
            });
            self.results.push((id, is_error, text));
        }
        fn entry_type(&mut self, _ty: Option<&RawStr<'_>>) {}
        fn meta(&mut self, _which: Meta, _value: &RawStr<'_>) {}
        fn prompt(&mut self, _text: Text<'_>, _ts: Option<&RawStr<'_>>) {
            self.prompts += 1;
        }
        fn assistant(&mut self, _id: Option<u64>, _ts: Option<&RawStr<'_>>) {}
        fn assistant_text(&mut self, _text: &RawStr<'_>, _ts: Option<&RawStr<'_>>) {}
        fn tool_use(&mut self, tool: ToolCall<'_>, _ts: Option<&RawStr<'_>>) {
            self.tools.push((tool.id, tool.name.to_owned()));
        }
        fn malformed(&mut self) {}
        fn invalid_utf8(&mut self) {}
    }

    fn results(format: Format, lines: &[&[u8]], wants: bool) -> Results {
        let mut sink = Results::new(wants);
        for line in lines {
            format.decode(line, &mut sink);
        }
        sink
    }

    fn h(id: &str) -> Option<u64> {
        Some(hash64(id.as_bytes()))
    }

    #[test]
    fn pi_declared_reports_the_results_the_built_in_reports_on_real_sessions() {
        let pi = declared("pi-results", &samples::pi());
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let files = [
            root.join("tests/data/pi/four-tools-continue.jsonl"),
            root.join("tests/data/pi-mono/large-session.jsonl"),
        ];
        let mut compared = 0;
        for file in files {
            let text = std::fs::read(&file).unwrap();
            let lines: Vec<&[u8]> = text
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .collect();
            let (built_in, described) =
                (results(Format::Pi, &lines, true), results(pi, &lines, true));
            // A `bashExecution`'s output is the built-in decoder's own (a tool entry has no result).
            let by_id: Vec<_> = built_in
                .results
                .iter()
                .filter(|r| r.0.is_some())
                .cloned()
                .collect();
            assert_eq!(described.results, by_id, "{}", file.display());
            assert_eq!(described.tools, built_in.tools);
            compared += by_id.len();
            // A count is given no result, and counts the same tools.
            let count = results(pi, &lines, false);
            assert_eq!(count.tools, described.tools);
            assert_eq!(count.prompts, described.prompts);
        }
        assert!(compared >= 4, "{compared}");
    }

    #[test]
    fn result_blocks_with_default_keys_and_error_messages() {
        // Claude Code's blocks, with the default keys: a user message of results is no prompt.
        let spec = Spec {
            tool_blocks: strings(&["tool_use"]),
            result_blocks: strings(&["tool_result"]),
            ..Spec::default()
        };
        let f = declared("claude-like", &spec);
        let lines: Vec<&[u8]> = vec![
            br#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":{"command":"make"}},{"type":"tool_use","id":"t2","name":"read","input":{"file_path":"/a"}}]}"#,
            br#"{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"Exit code 2\nboom","is_error":true},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"one"},{"type":"image"},{"type":"text","text":"two"}]},{"type":"text","text":"not a prompt"}]}"#,
            br#"{"role":"user","content":"a prompt"}"#,
        ];
        let sink = results(f, &lines, true);
        assert_eq!(
            sink.results,
            [
                (h("t1"), true, Some("Exit code 2\nboom".into())),
                (h("t2"), false, Some("one\ntwo".into())),
            ]
        );
        assert_eq!(sink.prompts, 1);
        assert!(results(f, &lines, false).results.is_empty());
        // Gemini's typeless parts: the fields are inside the `functionResponse` object; an error is a
        // message, which is the text when there is no output.
        let g = declared("gemini-results", &samples::gemini());
        let lines: Vec<&[u8]> = vec![
            br#"{"id":"r1","type":"user","content":[{"functionResponse":{"id":"c1","name":"x","response":{"output":"ok"}}},{"functionResponse":{"name":"y","id":"c2","response":{"error":"no such file"}}},{"functionResponse":{"id":"c3","response":{"output":"half","error":""}}}]}"#,
            br#"{"id":"u1","type":"user","content":[{"text":"hello"}]}"#,
            // As the Gemini CLI keeps them: each call's result in the call, its parts without an id.
            br#"{"id":"g1","type":"gemini","content":"","toolCalls":[{"id":"c4","name":"run_shell_command","args":{"command":"make"},"result":[{"functionResponse":{"name":"run_shell_command","response":{"output":"Exit Code: 2"}}}],"status":"error"},{"id":"c5","name":"read_file","args":{}}]}"#,
        ];
        let sink = results(g, &lines, true);
        assert_eq!(
            sink.results,
            [
                (h("c1"), false, Some("ok".into())),
                (h("c2"), true, Some("no such file".into())),
                (h("c3"), false, Some("half".into())),
                (h("c4"), false, Some("Exit Code: 2".into())),
            ]
        );
        assert_eq!(sink.prompts, 1);
        assert_eq!(sink.tools.len(), 2);
        let count = results(g, &lines, false);
        assert_eq!((count.tools.len(), count.prompts), (2, 1));
    }

    #[test]
    fn result_entries_give_id_error_and_text() {
        let spec = Spec {
            role: path(&["message", "role"]),
            content: path(&["message", "content"]),
            result_roles: strings(&["toolResult"]),
            result_id: path(&["message", "toolCallId"]),
            result_error: path(&["message", "isError"]),
            ..Spec::default()
        };
        let f = declared("result-entries", &spec);
        let lines: Vec<&[u8]> = vec![
            br#"{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":true,"role":"toolResult","toolCallId":"c1"}}"#,
            br#"{"message":{"role":"toolResult","toolCallId":"c2","content":"plain"}}"#,
            br#"{"message":{"role":"toolResult","content":[]}}"#,
        ];
        let sink = results(f, &lines, true);
        assert_eq!(
            sink.results,
            [
                (h("c1"), true, Some("a\nb".into())),
                (h("c2"), false, Some("plain".into())),
                (None, false, None),
            ]
        );
        // Counted as nothing, read or not.
        let a = run(f, &lines);
        assert_eq!((a.user_messages, a.assistant_messages), (0, 0));
        assert_eq!(a.skipped, crate::activity::Skipped::default());
    }

    #[test]
    fn result_events_reach_a_reader_only() {
        let events = [
            Event::Tool {
                name: "bash".into(),
                arguments: None,
                primary: Some("ls".into()),
                id: Some("c".into()),
                timestamp: None,
            },
            Event::Result {
                id: Some("c".into()),
                is_error: true,
                text: Some("exit 1".into()),
            },
        ];
        let mut reader = Results::new(true);
        report_events(&events, &PRIMARY_KEYS, &mut reader);
        assert_eq!(reader.results, [(h("c"), true, Some("exit 1".into()))]);
        let mut count = Results::new(false);
        report_events(&events, &PRIMARY_KEYS, &mut count);
        assert_eq!(count.tools.len(), 1);
    }

    #[test]
    fn declared_decoders_never_panic_on_arbitrary_bytes() {
        use proptest::prelude::*;
        let formats = [
            declared("p1", &samples::pi()),
            declared("p2", &samples::gemini()),
        ];
        let mut runner = proptest::test_runner::TestRunner::default();
        let pieces = prop_oneof![
            Just(r#"{"type":"message","message":{"role":"user","content":"#.to_owned()),
            Just(r#"{"id":"g","type":"gemini","content":[{"text":"#.to_owned()),
            Just(r#","toolCalls":[{"name":"x","args":{"#.to_owned()),
            Just(r#"{"$set":{"summary":"#.to_owned()),
            Just(r#"{"functionCall":{"name":"#.to_owned()),
            Just(r#"{"functionResponse":{"id":"c","response":{"output":"#.to_owned()),
            Just(
                r#"{"message":{"role":"toolResult","toolCallId":"c","isError":true,"content":"#
                    .to_owned()
            ),
            Just(r#","toolCalls":[{"id":"c","name":"x","result":["#.to_owned()),
            Just("\\u12".to_owned()),
            Just("}]".to_owned()),
            "[a-z\"\\\\{}\\[\\],:]{0,12}",
        ];
        runner
            .run(&proptest::collection::vec(pieces, 0..12), |parts| {
                let line = parts.concat();
                for f in formats {
                    let mut a = Activity::new(&options(), 0);
                    f.decode(line.as_bytes(), &mut a);
                    // And as a reader's sink, which reads results too.
                    f.decode(line.as_bytes(), &mut Results::new(true));
                }
                Ok(())
            })
            .unwrap();
    }
}
