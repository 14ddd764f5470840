//! Qwen Code chats (`~/.qwen/projects/<project>/chats/<session>.jsonl`): see docs/activity.md.
//!
//! A Claude-Code-like envelope (`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`) around
//! Gemini-style bodies: `message: {role: "user" | "model", parts: [{text} | {functionCall} |
//! {functionResponse}]}`. A prompt a person typed is a `user` line with `provenance: "real_user"`; a
//! prompt hook's text is stored in the same line as a part wrapped in
//! `<qwen:user-prompt-submit-context>` (and again in `systemPayload.hookContext`), which is not the
//! person's words. Tool results are `tool_result` lines; `system` lines (telemetry, attribution
//! snapshots) hold nothing counted.

use super::read::{line_end, Bad};
use super::tools::{tool_input, PRIMARY_KEYS};
use crate::activity::{hash64, Arguments, Category, Meta, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// Qwen Code's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("edit", Category::Edit),
    ("replace", Category::Edit),
    ("write_file", Category::Edit),
    ("notebook_edit", Category::Edit),
    ("read_file", Category::Read),
    ("read_many_files", Category::Read),
    ("list_directory", Category::Read),
    ("glob", Category::Read),
    ("grep_search", Category::Read),
    ("web_fetch", Category::Read),
    ("web_search", Category::Read),
    ("run_shell_command", Category::Command),
];

/// How Qwen Code wraps a prompt hook's text inside the prompt's line.
const HOOK_CONTEXT: &[u8] = b"<qwen:user-prompt-submit-context>";

/// One part of a `message`.
enum Part<'a> {
    Text(RawStr<'a>),
    Call {
        id: Option<RawStr<'a>>,
        name: RawStr<'a>,
        args: Option<&'a [u8]>,
    },
    Response {
        id: Option<RawStr<'a>>,
        failed: bool,
        output: Option<RawStr<'a>>,
    },
}

fn function_call<'a>(r: &mut Reader<'a>) -> Option<Option<Part<'a>>> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(None);
    }
    let (mut id, mut name, mut args) = (None, None, None);
    r.object(|r, key| {
        match key.raw {
            b"id" => id = r.string_or_skip()?,
            b"name" => name = r.string_or_skip()?,
            b"args" => args = Some(r.span()?),
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    Some(name.map(|name| Part::Call { id, name, args }))
}

/// A `functionResponse`: `{id, name, response: {output} | {error}}`.
fn function_response<'a>(r: &mut Reader<'a>) -> Option<Option<Part<'a>>> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(None);
    }
    let (mut id, mut failed, mut output) = (None, false, None);
    r.object(|r, key| {
        match key.raw {
            b"id" => id = r.string_or_skip()?,
            b"response" if r.peek()? == b'{' => {
                r.object(|r, key| {
                    match key.raw {
                        b"output" => output = output.or(r.string_or_skip()?),
                        b"error" => {
                            failed = true;
                            output = r.string_or_skip()?.or(output);
                        }
                        _ => r.skip()?,
                    }
                    Some(Flow::Continue)
                })?;
            }
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    Some(Some(Part::Response { id, failed, output }))
}

/// One element of `parts`; a model's thought (`thought: true`) is no text of its reply.
fn part<'a>(r: &mut Reader<'a>, parts: &mut Vec<Part<'a>>, want_results: bool) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    let (mut text, mut thought, mut found) = (None, false, None);
    r.object(|r, key| {
        match key.raw {
            b"text" => text = r.string_or_skip()?,
            b"thought" if matches!(r.peek()?, b't' | b'f') => thought = r.boolean()?,
            b"functionCall" => found = function_call(r)?,
            b"functionResponse" if want_results => found = function_response(r)?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    if let Some(found) = found {
        parts.push(found);
    } else if let (Some(text), false) = (text, thought) {
        parts.push(Part::Text(text));
    }
    Some(Flow::Continue)
}

fn message<'a>(r: &mut Reader<'a>, parts: &mut Vec<Part<'a>>, want_results: bool) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    r.object(|r, key| {
        if key.is(b"parts") && r.peek()? == b'[' {
            r.array(|r| part(r, parts, want_results))?;
        } else {
            r.skip()?;
        }
        Some(Flow::Continue)
    })
}

fn is_hook_context(text: &RawStr<'_>) -> bool {
    text.raw.trim_ascii_start().starts_with(HOOK_CONTEXT)
}

/// Qwen Code: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let (mut ty, mut ts, mut provenance): (Option<RawStr<'_>>, _, _) = (None, None, None);
    // A background task's notice (`subtype: "notification"`) is written as a `user` line; newer
    // versions mark it `provenance: "system"`, older ones only by its subtype.
    let mut notification = false;
    let (mut session_id, mut cwd) = (None, None);
    let mut parts = Vec::new();
    let mut skip_rest = false;
    let flow = r
        .object(|r, key| {
            match key.raw {
                b"type" => {
                    ty = r.string_or_skip()?;
                    let t = ty.map(|t| t.raw).unwrap_or_default();
                    // Telemetry and snapshots: nothing more of the line is read.
                    skip_rest =
                        !(matches!(t, b"user" | b"assistant") || (want && t == b"tool_result"));
                }
                b"message" => {
                    if skip_rest {
                        r.skip()?;
                    } else {
                        message(r, &mut parts, want)?;
                    }
                }
                b"timestamp" => ts = r.string_or_skip()?,
                b"provenance" => provenance = r.string_or_skip()?,
                b"subtype" => {
                    notification = r.string_or_skip()?.is_some_and(|t| t.is(b"notification"))
                }
                b"sessionId" => session_id = r.string_or_skip()?,
                b"cwd" => cwd = r.string_or_skip()?,
                _ => r.skip()?,
            }
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
    if let (true, Some(ts), true) = (entries, &ts, matches!(t, b"user" | b"assistant")) {
        sink.line_timestamp(ts);
    }
    match t {
        // Older versions wrote no provenance: a user line is then the person's.
        b"user" if !notification && provenance.is_none_or(|p| p.is(b"real_user")) => {
            let texts: Vec<RawStr<'_>> = parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) if !is_hook_context(t) => Some(*t),
                    _ => None,
                })
                .collect();
            let text = match texts.len() {
                0 => None,
                1 => Some(Text::Raw(texts[0])),
                _ => Text::join(&texts),
            };
            if let Some(text) = text {
                sink.prompt(text, ts.as_ref());
            }
        }
        b"assistant" => {
            sink.assistant(None, ts.as_ref());
            for p in &parts {
                match p {
                    Part::Text(text) => sink.assistant_text(text, ts.as_ref()),
                    Part::Call { id, name, args } => {
                        let name = name.decode();
                        let input = args
                            .map(|a| tool_input(a, &name, &PRIMARY_KEYS))
                            .unwrap_or_default();
                        let call = ToolCall {
                            id: id.map(|i| hash64(i.raw)),
                            name: &name,
                            primary: input.primary,
                            files: input.files,
                            details: input.details,
                            arguments: args.filter(|_| entries).map(Arguments::Json),
                        };
                        sink.tool_use(call, ts.as_ref());
                    }
                    Part::Response { .. } => {}
                }
            }
        }
        b"tool_result" if want => {
            for p in parts {
                if let Part::Response { id, failed, output } = p {
                    sink.tool_result(id.map(|i| hash64(i.raw)), failed, output.map(Text::Raw));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

    // As Qwen Code 0.24.4 writes them (cut down): a prompt with our hook's part, a tool round, a
    // reply, telemetry, and a later line that is not the person's.
    const LINES: &[&str] = &[
        r#"{"uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"t1","type":"user","provenance":"real_user","cwd":"/p","version":"0.24.4","message":{"role":"user","parts":[{"text":"fix the build"},{"text":"<qwen:user-prompt-submit-context>\n[Session Activity] x\n</qwen:user-prompt-submit-context>"}]},"systemPayload":{"displayText":"fix the build","hookContext":"[Session Activity] x"}}"#,
        r#"{"uuid":"u2","parentUuid":"u1","sessionId":"s1","timestamp":"t2","type":"system","provenance":"system","cwd":"/p","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"function_name":"write_file","function_args":{"file_path":"/p/x"}}}}"#,
        r#"{"uuid":"u3","parentUuid":"u2","sessionId":"s1","timestamp":"t3","type":"assistant","provenance":"assistant_output","cwd":"/p","model":"m","message":{"role":"model","parts":[{"text":"hmm","thought":true},{"text":"Editing."},{"functionCall":{"id":"c1","name":"edit","args":{"file_path":"/p/a.rs","old_string":"a","new_string":"b"}}},{"functionCall":{"id":"c2","name":"run_shell_command","args":{"command":"cargo test"}}}]}}"#,
        r#"{"uuid":"u4","parentUuid":"u3","sessionId":"s1","timestamp":"t4","type":"tool_result","provenance":"tool_result","cwd":"/p","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"edit","response":{"output":"ok"}}},{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"error":"exit 1"}}}]}}"#,
        r#"{"uuid":"u5","parentUuid":"u4","sessionId":"s1","timestamp":"t5","type":"user","provenance":"system","cwd":"/p","message":{"role":"user","parts":[{"text":"not typed"}]}}"#,
        r#"{"uuid":"u6","parentUuid":"u5","sessionId":"s1","timestamp":"t6","type":"assistant","provenance":"assistant_output","cwd":"/p","message":{"role":"model","parts":[{"text":"Fixed."}]}}"#,
    ];

    #[test]
    fn qwen_counts_typed_prompts_replies_and_tools_not_our_context() {
        let a = run(Format::Qwen, LINES);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 2));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the build"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Fixed."));
        assert_eq!(a.tools.get("edit"), Some(&1));
        assert_eq!(a.tools.get("run_shell_command"), Some(&1));
        assert_eq!(a.files_touched, ["/p/a.rs"]);
        assert_eq!(
            (a.session_id.as_deref(), a.cwd.as_deref()),
            (Some("s1"), Some("/p"))
        );
        assert_eq!(a.first_timestamp.as_deref(), Some("t1"));
        assert_eq!(a.last_timestamp.as_deref(), Some("t6"));
        assert_eq!(a.entry_types.get("system"), Some(&1));
    }

    #[test]
    fn qwen_reports_tool_results_to_a_reader_only() {
        let sink = results(Format::Qwen, LINES);
        assert_eq!(
            sink.results,
            [
                (h("c1"), false, Some("ok".into())),
                (h("c2"), true, Some("exit 1".into())),
            ]
        );
        assert_eq!(
            sink.tools,
            [
                (h("c1"), "edit".into()),
                (h("c2"), "run_shell_command".into())
            ]
        );
        assert_eq!(sink.prompts, ["fix the build"]);
    }

    #[test]
    fn qwen_is_guessed_from_its_first_line() {
        assert_eq!(Format::guess(LINES[0].as_bytes()), Some(Format::Qwen));
        assert_eq!(Format::guess(LINES[3].as_bytes()), Some(Format::Qwen));
    }

    /// Qwen Code 0.21 wrote no `provenance`: its Gemini-style `message.parts` still tells it from
    /// Claude Code (whose `message` has `content`), and a `notification` is no one's prompt.
    #[test]
    fn qwen_without_provenance() {
        let lines = [
            r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","cwd":"/p","version":"0.21.13","message":{"role":"user","parts":[{"text":"inspect it"}]}}"#,
            r#"{"uuid":"b","parentUuid":"a","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"text":"done"}]}}"#,
            r#"{"uuid":"c","parentUuid":"b","sessionId":"s","type":"user","subtype":"notification","message":{"role":"user","parts":[{"text":"Background task finished."}]}}"#,
        ];
        assert_eq!(Format::guess(lines[0].as_bytes()), Some(Format::Qwen));
        assert_eq!(Format::guess(lines[1].as_bytes()), Some(Format::Qwen));
        let telemetry = r#"{"uuid":"t","parentUuid":null,"sessionId":"s","type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{}}}"#;
        assert_eq!(Format::guess(telemetry.as_bytes()), Some(Format::Qwen));
        let claude = r#"{"uuid":"a","sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(Format::guess(claude.as_bytes()), Some(Format::ClaudeCode));
        let a = run(Format::Qwen, &lines);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 1));
        assert_eq!(a.first_user_text.as_deref(), Some("inspect it"));
        assert_eq!(results(Format::Qwen, &lines).prompts, ["inspect it"]);
    }
}
