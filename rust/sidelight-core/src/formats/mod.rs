//! The transcript formats: the one registry of them (the built-in decoders, and the formats declared or
//! registered at run time with their tool categories), how a format is named and guessed from a line,
//! and the dispatch of a line to its decoder. docs/activity.md is the contract the decoders implement.
//!
//! Each decoder reads only the fields it needs and reports them to a [`Sink`]; one file each
//! (`claude_code`, `pi`, `codex`, `gemini`, `qwen`, `copilot`, `droid`, `kimi`, [`declared`]), over shared helpers (`read`: a line's end; `tools`:
//! what tool calls and results say; `message`: the `message` object of Claude Code and Pi). A format
//! declared at run time is a compiled description ([`declared::Declared`]) or a decoder written
//! outside the core ([`declared::LineDecoder`]); both are registered by name ([`register`],
//! [`declare`]) and named like a built-in one. Adding a built-in format: a decoder file, a variant of
//! [`Format`], and its arms in `name`, `decode` and `guess` below.

use std::sync::RwLock;

use crate::activity::{Categories, Category, Sink};
use crate::json::{Flow, Reader};

mod claude_code;
mod codex;
mod copilot;
pub mod declared;
mod droid;
mod gemini;
mod kimi;
mod message;
mod pi;
mod qwen;
mod read;
#[cfg(test)]
mod testing;
mod tools;

pub use codex::CODEX_CONTEXT_PREFIXES;
pub use tools::PRIMARY_KEYS;

use declared::{Declared, LineDecoder, Spec};
use read::Bad;

#[derive(Clone, Copy, Debug)]
pub enum Format {
    ClaudeCode,
    Pi,
    Qwen,
    Copilot,
    Kimi,
    Codex,
    Gemini,
    Droid,
    /// A declared format: a description compiled into a decoder (see [`declared`]).
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

/// The formats declared or registered at run time, by name, each with the tool categories it was
/// given. A declaration is compiled once and lives as long as the process (it is leaked): scans in
/// flight keep using the one they started with.
static REGISTRY: RwLock<Vec<(Format, Categories)>> = RwLock::new(Vec::new());

/// Registers a declared or external format under its name, with the tool categories a scan of it
/// uses when it is given none, replacing one of the same name. The names of the built-in formats
/// cannot be taken.
pub fn register(format: Format, categories: Categories) -> Result<(), String> {
    let name = format.name();
    if Format::ALL.iter().any(|f| f.name() == name) {
        return Err(format!(
            "the name {name:?} is a built-in format's; choose another"
        ));
    }
    if !matches!(format, Format::Declared(_) | Format::External(_)) {
        return Err("only declared and external formats are registered".to_owned());
    }
    let mut registry = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    registry.retain(|(f, _)| f.name() != name);
    registry.push((format, categories));
    Ok(())
}

/// Compiles `spec` and registers it as `name`, with its tool categories.
pub fn declare(name: &str, spec: &Spec, categories: Categories) -> Result<Format, String> {
    let declared = Declared::compile(name, spec)?;
    if Format::ALL.iter().any(|f| f.name() == name) {
        return Err(format!(
            "name: {name:?} is a built-in format's; choose another"
        ));
    }
    let format = Format::Declared(Box::leak(Box::new(declared)));
    register(format, categories)?;
    Ok(format)
}

/// The names of the formats registered at run time, in the order they were registered.
pub fn registered() -> Vec<&'static str> {
    let registry = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    registry.iter().map(|(f, _)| f.name()).collect()
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::ClaudeCode,
        Format::Pi,
        Format::Codex,
        Format::Gemini,
        Format::Qwen,
        Format::Copilot,
        Format::Droid,
        Format::Kimi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Pi => "pi",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
            Format::Qwen => "qwen",
            Format::Copilot => "copilot",
            Format::Droid => "droid",
            Format::Kimi => "kimi",
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
        registry.iter().map(|(f, _)| *f).find(|f| f.name() == name)
    }

    /// A built-in format's tools by lowercase name and category (empty for a registered one).
    pub fn default_tools(self) -> &'static [(&'static str, Category)] {
        match self {
            Format::ClaudeCode => claude_code::TOOLS,
            Format::Pi => pi::TOOLS,
            Format::Codex => codex::TOOLS,
            Format::Gemini => gemini::TOOLS,
            Format::Qwen => qwen::TOOLS,
            Format::Copilot => copilot::TOOLS,
            Format::Droid => droid::TOOLS,
            Format::Kimi => kimi::TOOLS,
            Format::Declared(_) | Format::External(_) => &[],
        }
    }

    /// The format's tool categories, for a scan that is given none: a built-in format's defaults
    /// ([`Format::default_tools`]), or those a registered one was registered with.
    pub fn categories(self) -> Categories {
        if !matches!(self, Format::Declared(_) | Format::External(_)) {
            return Categories::new(
                self.default_tools()
                    .iter()
                    .map(|(name, category)| ((*name).to_owned(), *category)),
            );
        }
        let registry = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
        let name = self.name();
        registry
            .iter()
            .find(|(f, _)| f.name() == name)
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }

    /// Decodes one complete line (without its newline) into `sink`.
    pub fn decode<S: Sink>(self, line: &[u8], sink: &mut S) {
        let ok = match self {
            Format::ClaudeCode => claude_code::decode(line, sink),
            Format::Pi => pi::decode(line, sink),
            Format::Codex => codex::decode(line, sink),
            Format::Gemini => gemini::decode(line, sink),
            Format::Qwen => qwen::decode(line, sink),
            Format::Copilot => copilot::decode(line, sink),
            Format::Droid => droid::decode(line, sink),
            Format::Kimi => kimi::decode(line, sink),
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
        // A Gemini CLI chat's header (`projectHash`) and patches (`$set`) have no type.
        let mut gemini = false;
        // Qwen Code's envelope is Claude Code's plus a `provenance` (from 0.22; older versions wrote
        // none, and then only the Gemini-style `message.parts` tells); Copilot's events carry `data`.
        let (mut provenance, mut data, mut parts) = (false, false, false);
        // Droid's `message` lines are Pi's envelope; its messages carry keys Pi's never do.
        let mut droid = false;
        // Kimi CLI's wire log: `message: {type, payload}` without a type beside it, after a
        // `{"type": "metadata", "protocol_version"}` head.
        let (mut wire_payload, mut protocol) = (false, false);
        // An old Codex rollout's header (`id`, `instructions`) and items (`role` beside `type`, no
        // `payload`); a Claude Code usage line without a type (`requestId`, `costUSD`).
        let (mut id, mut instructions, mut role, mut usage) = (false, false, false, false);
        // Pi's header has a `cwd` (and from v3 a `version`); an opencode export's `session` has neither.
        let (mut content, mut pi_header) = (false, false);
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
                    if r.peek()? == b'{' {
                        r.object(|r, key| {
                            parts |= key.raw == b"parts";
                            droid |= matches!(
                                key.raw,
                                b"visibility" | b"modelId" | b"interactionMode" | b"hookEventName"
                            );
                            wire_payload |= key.raw == b"payload";
                            r.skip()?;
                            Some(Flow::Continue)
                        })?;
                    } else {
                        r.skip()?;
                    }
                }
                b"projectHash" | b"$set" => {
                    gemini = true;
                    r.skip()?;
                }
                // `systemPayload` (a prompt's display text, telemetry, slash commands) is Qwen's alone.
                b"provenance" | b"systemPayload" => {
                    provenance = true;
                    r.skip()?;
                }
                b"data" => {
                    data = true;
                    r.skip()?;
                }
                b"id" => {
                    id = true;
                    r.skip()?;
                }
                b"instructions" => {
                    instructions = true;
                    r.skip()?;
                }
                b"role" => {
                    role = true;
                    r.skip()?;
                }
                b"content" => {
                    content = true;
                    r.skip()?;
                }
                b"cwd" | b"version" => {
                    pi_header = true;
                    r.skip()?;
                }
                b"requestId" | b"costUSD" => {
                    usage = true;
                    r.skip()?;
                }
                b"protocol_version" => {
                    protocol = true;
                    r.skip()?;
                }
                _ => r.skip()?,
            }
            Some(Flow::Continue)
        })?;
        if gemini && ty.is_none() {
            return Some(Format::Gemini);
        }
        if ty.is_none() && !payload {
            if id && instructions {
                return Some(Format::Codex);
            }
            if message && usage {
                return Some(Format::ClaudeCode);
            }
            // Kimi CLI's context: chat-completions messages and its bookkeeping, a role and no type.
            if (role && !message) || (message && wire_payload) {
                return Some(Format::Kimi);
            }
        }
        let ty = ty?;
        if protocol && ty == b"metadata" {
            return Some(Format::Kimi);
        }
        if payload
            && matches!(
                ty,
                b"session_meta" | b"response_item" | b"event_msg" | b"turn_context" | b"compacted"
            )
        {
            return Some(Format::Codex);
        }
        if (provenance || parts) && (session_id || parent_uuid) {
            return Some(Format::Qwen);
        }
        if data && ty.contains(&b'.') {
            return Some(Format::Copilot);
        }
        if session_id || parent_uuid {
            return Some(Format::ClaudeCode);
        }
        match ty {
            b"session_start" => Some(Format::Droid),
            b"message" if message && droid => Some(Format::Droid),
            b"session" if pi_header => Some(Format::Pi),
            b"model_change"
            | b"thinking_level_change"
            | b"custom_message"
            | b"session_info"
            | b"branch_summary"
            | b"label" => Some(Format::Pi),
            b"message" if message => Some(Format::Pi),
            // Claude Code's lines without the envelope's ids (a file of usage lines only).
            b"assistant" | b"user" if message => Some(Format::ClaudeCode),
            b"message" if role && content => Some(Format::Codex),
            t if t != b"message" && codex::BARE_ITEMS.contains(&t) => Some(Format::Codex),
            b"gemini" => Some(Format::Gemini),
            b"summary" | b"queue-operation" | b"file-history-snapshot" | b"custom-title" => {
                Some(Format::ClaudeCode)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{options, run};
    use super::*;
    use crate::activity::{Activity, Category};

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
    fn registered_formats_keep_their_tool_categories() {
        let table = crate::activity::Categories::new([("Shell".to_owned(), Category::Command)]);
        let f = declare("categories-test", &declared::samples::gemini(), table).unwrap();
        assert_eq!(f.categories().of("shell"), Category::Command);
        let again = Format::parse("categories-test").unwrap();
        assert_eq!(again.categories().of("SHELL"), Category::Command);
        // A built-in format's are its decoder's defaults.
        assert_eq!(Format::Pi.categories().of("bash"), Category::Command);
        assert_eq!(Format::Codex.categories().of("apply_patch"), Category::Edit);
        assert_eq!(Format::ClaudeCode.categories().of("Read"), Category::Read);
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
        // A Codex rollout from before session_meta: its header and its bare items.
        assert_eq!(
            Format::guess(br#"{"id":"x","timestamp":"t","instructions":null}"#),
            Some(Format::Codex)
        );
        assert_eq!(
            Format::guess(br#"{"type":"message","role":"user","content":[]}"#),
            Some(Format::Codex)
        );
        assert_eq!(
            Format::guess(br#"{"type":"function_call","name":"shell","arguments":"{}"}"#),
            Some(Format::Codex)
        );
        // Claude Code usage lines: with a type and no ids, or without a type.
        assert_eq!(
            Format::guess(br#"{"type":"assistant","message":{"usage":{"input_tokens":1}}}"#),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            Format::guess(
                br#"{"timestamp":"t","message":{"usage":{}},"requestId":"r","costUSD":0.1}"#
            ),
            Some(Format::ClaudeCode)
        );
        // An opencode export's session line is not Pi's header.
        assert_eq!(
            Format::guess(br#"{"type":"session","id":"ses_1","directory":"/p","title":null}"#),
            None
        );
    }

    /// `line` with the whitespace JSON allows around every structural character (a space and a tab,
    /// as `json.dumps` writes a space after each colon and comma), its strings as they were.
    fn spaced(line: &str) -> String {
        let mut out = String::with_capacity(line.len() * 2);
        let (mut in_string, mut escaped) = (false, false);
        for c in line.chars() {
            if in_string {
                out.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                }
                continue;
            }
            if matches!(c, '}' | ']' | ':' | ',') {
                out.push_str(" \t");
            }
            out.push(c);
            if matches!(c, '{' | '[' | ':' | ',') {
                out.push_str("\t ");
            }
            in_string = c == '"';
        }
        out
    }

    #[test]
    fn whitespace_between_tokens_changes_no_guess_and_no_count() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
        for (format, sample) in [
            (Format::ClaudeCode, "claude-code/four-tools-resume.jsonl"),
            (Format::Pi, "pi/four-tools-continue.jsonl"),
            (Format::Codex, "codex/four-tools-resume.jsonl"),
            (Format::Qwen, "qwen/four-tools-resume.jsonl"),
            (Format::Copilot, "copilot/four-tools-resume.jsonl"),
            (Format::Gemini, "gemini/four-tools-resume.jsonl"),
            (Format::Kimi, "kimi/four-tools-resume.jsonl"),
        ] {
            let text = std::fs::read_to_string(root.join(sample)).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let wide: Vec<String> = lines.iter().map(|line| spaced(line)).collect();
            assert_ne!(wide[0], lines[0]);
            assert_eq!(Format::guess(wide[0].as_bytes()), Some(format), "{sample}");
            for (line, wide) in lines.iter().zip(&wide) {
                assert_eq!(
                    Format::guess(wide.as_bytes()),
                    Format::guess(line.as_bytes())
                );
            }
            let (a, b) = (
                run(format, &lines),
                run(format, &wide.iter().map(String::as_str).collect::<Vec<_>>()),
            );
            assert!(a.user_messages > 0 && a.skipped == b.skipped, "{sample}");
            assert_eq!(
                (
                    a.user_messages,
                    a.assistant_messages,
                    &a.tools,
                    a.categories
                ),
                (
                    b.user_messages,
                    b.assistant_messages,
                    &b.tools,
                    b.categories
                ),
                "{sample}"
            );
            assert_eq!(
                (
                    &a.first_user_text,
                    &a.last_user_text,
                    &a.last_assistant_text
                ),
                (
                    &b.first_user_text,
                    &b.last_user_text,
                    &b.last_assistant_text
                ),
                "{sample}"
            );
            assert_eq!(
                (
                    &a.session_id,
                    &a.cwd,
                    a.title(),
                    &a.files_touched,
                    &a.entry_types
                ),
                (
                    &b.session_id,
                    &b.cwd,
                    b.title(),
                    &b.files_touched,
                    &b.entry_types
                ),
                "{sample}"
            );
            assert_eq!(
                (&a.first_timestamp, &a.last_timestamp),
                (&b.first_timestamp, &b.last_timestamp)
            );
        }
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
