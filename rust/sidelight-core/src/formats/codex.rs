//! Codex rollouts: see docs/activity.md.

use super::read::{line_end, object_value, Bad};
use super::tools::{
    integer, patch_details, patch_files, result_content, tool_input, ResultText, PRIMARY_KEYS,
};
use crate::activity::{
    decode_raw, hash64, Arguments, Category, Details, Marker, Meta, Sink, Text, ToolCall,
};
use crate::json::{Flow, RawStr, Reader};

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

/// Codex's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("apply_patch", Category::Edit),
    ("view_image", Category::Read),
    ("shell", Category::Command),
    ("shell_command", Category::Command),
    ("exec_command", Category::Command),
    ("write_stdin", Category::Command),
    ("local_shell_call", Category::Command),
    ("container.exec", Category::Command),
];

/// Codex rollouts: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
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
        // A rollout from before `session_meta` (Codex CLI 0.1x): a first line `{id, timestamp,
        // instructions, ...}` without a type, then the items bare, without the wrapper.
        b"" => {
            let mut header = Payload::default();
            codex_payload(&mut Reader::new(line), &mut header).ok_or(Bad::Malformed)?;
            if let Some(id) = header.id {
                sink.meta(Meta::SessionId, &id);
            }
        }
        kind if BARE_ITEMS.contains(&kind) => {
            let mut bare = Payload {
                want_results: payload.want_results,
                want_entries: entries,
                ..Payload::default()
            };
            codex_payload(&mut Reader::new(line), &mut bare).ok_or(Bad::Malformed)?;
            codex_item(&bare, ts, sink);
        }
        _ => {}
    }
    Ok(())
}

/// The item types an old rollout writes bare (a `response_item`'s payload, as a line of its own).
pub(super) const BARE_ITEMS: &[&[u8]] = &[
    b"message",
    b"function_call",
    b"function_call_output",
    b"custom_tool_call",
    b"custom_tool_call_output",
    b"local_shell_call",
    b"local_shell_call_output",
    b"web_search_call",
    b"reasoning",
];

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
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

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
    fn codex_reads_a_rollout_from_before_session_meta() {
        let a = run(
            Format::Codex,
            &[
                r#"{"id":"0e8f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b","timestamp":"2025-05-01T10:00:00.000Z","instructions":"be brief"}"#,
                r#"{"record_type":"state"}"#,
                r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_instructions>x</user_instructions>"}]}"#,
                r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}"#,
                r#"{"type":"reasoning","id":"rs_1","summary":[]}"#,
                r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"call_1"}"#,
                r#"{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":0}}"}"#,
                r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Two files."}]}"#,
            ],
        );
        assert_eq!(
            a.session_id.as_deref(),
            Some("0e8f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
        );
        assert_eq!((a.user_messages, a.assistant_messages), (1, 1));
        assert_eq!(a.first_user_text.as_deref(), Some("list the files"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Two files."));
        assert_eq!(a.tools.get("shell"), Some(&1));
        assert_eq!(a.skipped, crate::activity::Skipped::default());
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
}
