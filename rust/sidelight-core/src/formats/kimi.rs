//! Kimi CLI contexts (`~/.kimi/sessions/<md5 of the work dir>/<session>/context.jsonl`): see
//! docs/activity.md.
//!
//! One chat-completions message a line, `{"role", "content", "tool_calls", "tool_call_id"}`, with no
//! timestamp, session id or working directory (the folders say those). `content` is a string or a list
//! of parts (`{"type": "text", "text"}`, `{"type": "think", "think"}`, ...). Counted: `user` (what the
//! person typed; a message made only of `<system-reminder>` texts is Kimi's own), `assistant` (its text
//! parts, and `tool_calls` whose `function.arguments` is a JSON string) and, for a reader, `tool`
//! (a result; `<system>ERROR: ...</system>` first marks a failure). The roles `_system_prompt`,
//! `_checkpoint` and `_usage` are Kimi's bookkeeping and hold nothing counted.

use super::read::{line_end, Bad};
use super::tools::{tool_input, PRIMARY_KEYS};
use crate::activity::{decode_raw, hash64, Arguments, Category, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// Kimi CLI's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("writefile", Category::Edit),
    ("strreplacefile", Category::Edit),
    ("readfile", Category::Read),
    ("readmediafile", Category::Read),
    ("glob", Category::Read),
    ("grep", Category::Read),
    ("fetchurl", Category::Read),
    ("searchweb", Category::Read),
    ("shell", Category::Command),
];

/// How Kimi marks a user message of its own (plan mode, reminders), and a failed tool's result.
const REMINDER: &[u8] = b"<system-reminder>";
const ERROR: &[u8] = b"<system>ERROR";

/// A tool call: `(id, name, arguments as a JSON string)`.
type Call<'a> = (Option<RawStr<'a>>, RawStr<'a>, Option<RawStr<'a>>);

/// The text parts of `content`: the string itself, or each `{"type": "text", "text"}` of a list.
fn texts<'a>(r: &mut Reader<'a>, out: &mut Vec<RawStr<'a>>) -> Option<()> {
    match r.peek()? {
        b'"' => out.push(r.string()?),
        b'[' => {
            r.array(|r| {
                if r.peek()? != b'{' {
                    r.skip()?;
                    return Some(Flow::Continue);
                }
                let (mut ty, mut text) = (None, None);
                r.object(|r, key| {
                    match key.raw {
                        b"type" => ty = r.string_or_skip()?,
                        b"text" => text = r.string_or_skip()?,
                        _ => r.skip()?,
                    }
                    Some(Flow::Continue)
                })?;
                if let (Some(text), true) = (text, ty.is_none_or(|t| t.is(b"text"))) {
                    out.push(text);
                }
                Some(Flow::Continue)
            })?;
        }
        _ => r.skip()?,
    }
    Some(())
}

fn function<'a>(
    r: &mut Reader<'a>,
    name: &mut Option<RawStr<'a>>,
    args: &mut Option<RawStr<'a>>,
) -> Option<()> {
    if r.peek()? != b'{' {
        return r.skip();
    }
    r.object(|r, key| {
        match key.raw {
            b"name" => *name = r.string_or_skip()?,
            b"arguments" => *args = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

fn tool_call<'a>(r: &mut Reader<'a>, calls: &mut Vec<Call<'a>>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    let (mut id, mut name, mut args) = (None, None, None);
    r.object(|r, key| {
        match key.raw {
            b"id" => id = r.string_or_skip()?,
            b"function" => function(r, &mut name, &mut args)?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    if let Some(name) = name {
        calls.push((id, name, args));
    }
    Some(Flow::Continue)
}

fn starts_with(text: &RawStr<'_>, prefix: &[u8]) -> bool {
    text.raw.trim_ascii_start().starts_with(prefix)
}

/// Kimi CLI: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let mut role: Option<RawStr<'_>> = None;
    let mut late: Option<&[u8]> = None;
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    let mut call_id = None;
    let counted = |role: &[u8]| matches!(role, b"user" | b"assistant") || (want && role == b"tool");
    let flow = r
        .object(|r, key| {
            match key.raw {
                b"role" => role = r.string_or_skip()?,
                b"content" => match role {
                    Some(t) if counted(t.raw) => texts(r, &mut parts)?,
                    Some(_) => r.skip()?,
                    // A writer that put `content` first: read it once the role is known.
                    None => late = Some(r.span()?),
                },
                b"tool_calls" if r.peek()? == b'[' => {
                    r.array(|r| tool_call(r, &mut calls))?;
                }
                b"tool_call_id" => call_id = r.string_or_skip()?,
                _ => r.skip()?,
            }
            // Bookkeeping (the system prompt is long): nothing more of the line is read.
            Some(match role {
                Some(t) if !counted(t.raw) && !sink.needs_identity() => Flow::Stop,
                _ => Flow::Continue,
            })
        })
        .ok_or(Bad::Malformed)?;
    line_end(&mut r, flow == Flow::Stop)?;
    let t = role.map(|t| t.raw).unwrap_or_default();
    if let (Some(span), true) = (late, counted(t)) {
        texts(&mut Reader::new(span), &mut parts).ok_or(Bad::Malformed)?;
    }
    sink.entry_type(role.as_ref());
    match t {
        b"user" => {
            let typed: Vec<RawStr<'_>> = parts
                .into_iter()
                .filter(|p| !starts_with(p, REMINDER))
                .collect();
            let text = match typed.len() {
                0 => None,
                1 => Some(Text::Raw(typed[0])),
                _ => Text::join(&typed),
            };
            if let Some(text) = text {
                sink.prompt(text, None);
            }
        }
        b"assistant" => {
            sink.assistant(None, None);
            for text in parts.iter().filter(|p| !p.is_blank()) {
                sink.assistant_text(text, None);
            }
            for (id, name, args) in calls {
                let name = name.decode();
                let json = args.map(|a| decode_raw(a.raw)).unwrap_or_default();
                let input = tool_input(json.as_bytes(), &name, &PRIMARY_KEYS);
                let call = ToolCall {
                    id: id.map(|i| hash64(i.raw)),
                    name: &name,
                    primary: input.primary.map(|t| Text::Joined(t.trimmed(usize::MAX))),
                    files: input.files,
                    details: input.details,
                    arguments: args.filter(|_| entries).map(Arguments::Encoded),
                };
                sink.tool_use(call, None);
            }
        }
        b"tool" if want => {
            let failed = parts.first().is_some_and(|p| starts_with(p, ERROR));
            let text = match parts.len() {
                0 => None,
                1 => Some(Text::Raw(parts[0])),
                _ => Text::join(&parts),
            };
            sink.tool_result(call_id.map(|i| hash64(i.raw)), failed, text);
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::activity::{Activity, Category, Options};
    use crate::formats::testing::{h, results};
    use crate::formats::Format;

    // As Kimi CLI 1.50.0 writes them (cut down): bookkeeping, a prompt, a tool round of each kind, a
    // failed call, a reminder of Kimi's own, a reply.
    const LINES: &[&str] = &[
        r#"{"role": "_system_prompt", "content": "You are Kimi Code CLI"}"#,
        r#"{"role": "_checkpoint", "id": 0}"#,
        r#"{"role":"user","content":"fix the build"}"#,
        r#"{"role": "_usage", "token_count": 10}"#,
        r#"{"role":"assistant","content":[{"type":"think","think":"hmm"}],"tool_calls":[{"type":"function","id":"c1","function":{"name":"StrReplaceFile","arguments":"{\"path\": \"/p/a.rs\", \"edit\": {\"old\": \"a\", \"new\": \"b\"}}"}},{"type":"function","id":"c2","function":{"name":"Shell","arguments":"{\"command\": \"cargo test\"}"}}]}"#,
        r#"{"role":"tool","content":"<system>File successfully edited.</system>","tool_call_id":"c1"}"#,
        r#"{"role":"tool","content":[{"type":"text","text":"<system>ERROR: exit 1</system>"},{"type":"text","text":"boom"}],"tool_call_id":"c2"}"#,
        r#"{"role":"user","content":[{"type":"text","text":"<system-reminder>\nplan mode\n</system-reminder>"}]}"#,
        r#"{"role":"assistant","content":"Fixed."}"#,
    ];

    #[test]
    fn kimi_counts_typed_prompts_replies_and_tools_not_its_bookkeeping() {
        // Kimi's own tool categories: its write tools touch files.
        let options = Options {
            categories: Format::Kimi.categories(),
            ..Options::default()
        };
        let mut a = Activity::new(&options, 0);
        for line in LINES {
            Format::Kimi.decode(line.as_bytes(), &mut a);
        }
        assert_eq!((a.user_messages, a.assistant_messages), (1, 2));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the build"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Fixed."));
        assert_eq!(a.tools.get("StrReplaceFile"), Some(&1));
        assert_eq!(a.tools.get("Shell"), Some(&1));
        assert_eq!(a.files_touched, ["/p/a.rs"]);
        assert_eq!(a.categories[Category::Edit as usize], 1);
        assert_eq!(a.entry_types.get("_usage"), Some(&1));
        assert_eq!(a.skipped.malformed_json, 0);
    }

    #[test]
    fn kimi_reports_tool_results_to_a_reader_only() {
        let sink = results(Format::Kimi, LINES);
        assert_eq!(
            sink.results,
            [
                (
                    h("c1"),
                    false,
                    Some("<system>File successfully edited.</system>".into())
                ),
                (
                    h("c2"),
                    true,
                    Some("<system>ERROR: exit 1</system>\nboom".into())
                ),
            ]
        );
        assert_eq!(
            sink.tools,
            [
                (h("c1"), "StrReplaceFile".into()),
                (h("c2"), "Shell".into())
            ]
        );
        assert_eq!(sink.prompts, ["fix the build"]);
        // `content` before `role` is read as well.
        let late = r#"{"content":"late prompt","role":"user"}"#;
        assert_eq!(results(Format::Kimi, &[late]).prompts, ["late prompt"]);
    }

    #[test]
    fn kimi_is_guessed_from_its_bookkeeping_and_messages() {
        assert_eq!(Format::guess(LINES[0].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(LINES[1].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(LINES[2].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(LINES[4].as_bytes()), Some(Format::Kimi));
    }
}
