//! GitHub Copilot CLI session events (`~/.copilot/session-state/<session>/events.jsonl`): see
//! docs/activity.md.
//!
//! One event a line, `{"type", "data", "id", "timestamp", "parentId"}`. Counted: `session.start`
//! (`data.sessionId`, `data.context.cwd`), `user.message` (`data.content` is what the person typed;
//! `data.transformedContent` is what the model got, with a prompt hook's text inside: never read),
//! `assistant.message` (`data.content`, `data.toolRequests`) and, for a reader,
//! `tool.execution_complete`. `hook.start`/`hook.end` hold a hook's input and output (sidelight's own
//! text among them) and are not read, nor is anything else.

use super::read::{line_end, Bad};
use super::tools::{tool_input, PRIMARY_KEYS};
use crate::activity::{hash64, Arguments, Category, Meta, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// Copilot CLI's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("create", Category::Edit),
    ("edit", Category::Edit),
    ("str_replace_editor", Category::Edit),
    ("view", Category::Read),
    ("grep", Category::Read),
    ("glob", Category::Read),
    ("web_fetch", Category::Read),
    ("bash", Category::Command),
    ("read_bash", Category::Command),
    ("write_bash", Category::Command),
    ("stop_bash", Category::Command),
];

/// A tool request: `(toolCallId, name, arguments)`.
type Request<'a> = (Option<RawStr<'a>>, RawStr<'a>, Option<&'a [u8]>);

/// What the `data` of a counted event holds.
#[derive(Default)]
struct Data<'a> {
    session_id: Option<RawStr<'a>>,
    cwd: Option<RawStr<'a>>,
    content: Option<RawStr<'a>>,
    message_id: Option<RawStr<'a>>,
    calls: Vec<Request<'a>>,
    call_id: Option<RawStr<'a>>,
    success: bool,
    result: Option<RawStr<'a>>,
}

fn cwd_of<'a>(r: &mut Reader<'a>, data: &mut Data<'a>) -> Option<()> {
    if r.peek()? != b'{' {
        return r.skip();
    }
    r.object(|r, key| {
        match key.raw {
            b"cwd" => data.cwd = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

fn tool_request<'a>(r: &mut Reader<'a>, data: &mut Data<'a>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    let (mut id, mut name, mut args) = (None, None, None);
    r.object(|r, key| {
        match key.raw {
            b"toolCallId" => id = r.string_or_skip()?,
            b"name" => name = r.string_or_skip()?,
            b"arguments" if r.peek()? == b'{' => args = Some(r.span()?),
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    if let Some(name) = name {
        data.calls.push((id, name, args));
    }
    Some(Flow::Continue)
}

fn result_of<'a>(r: &mut Reader<'a>, data: &mut Data<'a>) -> Option<()> {
    if r.peek()? != b'{' {
        return r.skip();
    }
    r.object(|r, key| {
        match key.raw {
            b"content" => data.result = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

/// Reads the `data` of an event of type `ty` (already known: `type` comes first in Copilot's lines).
fn data<'a>(r: &mut Reader<'a>, ty: &[u8], data: &mut Data<'a>) -> Option<()> {
    if r.peek()? != b'{' {
        return r.skip();
    }
    r.object(|r, key| {
        match (ty, key.raw) {
            (b"session.start" | b"session.resume", b"sessionId") => {
                data.session_id = r.string_or_skip()?;
            }
            (b"session.start" | b"session.resume", b"context") => cwd_of(r, data)?,
            (b"user.message" | b"assistant.message", b"content") => {
                data.content = r.string_or_skip()?;
            }
            (b"assistant.message", b"messageId") => data.message_id = r.string_or_skip()?,
            (b"assistant.message", b"toolRequests") if r.peek()? == b'[' => {
                r.array(|r| tool_request(r, data))?;
            }
            (b"tool.execution_complete", b"toolCallId") => data.call_id = r.string_or_skip()?,
            (b"tool.execution_complete", b"success") if matches!(r.peek()?, b't' | b'f') => {
                data.success = r.boolean()?;
            }
            (b"tool.execution_complete", b"result") => result_of(r, data)?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

/// GitHub Copilot CLI: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let (mut ty, mut ts): (Option<RawStr<'_>>, Option<RawStr<'_>>) = (None, None);
    let mut late: Option<&[u8]> = None;
    let mut d = Data::default();
    let counted = |t: &[u8]| {
        matches!(
            t,
            b"session.start" | b"session.resume" | b"user.message" | b"assistant.message"
        ) || (want && t == b"tool.execution_complete")
    };
    r.object(|r, key| {
        match key.raw {
            b"type" => ty = r.string_or_skip()?,
            b"data" => match ty {
                Some(t) if counted(t.raw) => data(r, t.raw, &mut d)?,
                Some(_) => r.skip()?,
                // A writer that put `data` first: read it once the type is known.
                None => late = Some(r.span()?),
            },
            b"timestamp" => ts = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .ok_or(Bad::Malformed)?;
    line_end(&mut r, false)?;
    let t = ty.map(|t| t.raw).unwrap_or_default();
    if let (Some(span), true) = (late, counted(t)) {
        data(&mut Reader::new(span), t, &mut d).ok_or(Bad::Malformed)?;
    }
    sink.entry_type(ty.as_ref());
    if let (true, Some(ts), true) = (
        entries,
        &ts,
        matches!(t, b"user.message" | b"assistant.message"),
    ) {
        sink.line_timestamp(ts);
    }
    match t {
        b"session.start" | b"session.resume" => {
            if let Some(v) = d.session_id {
                sink.meta(Meta::SessionId, &v);
            }
            if let Some(v) = d.cwd {
                sink.meta(Meta::Cwd, &v);
            }
        }
        b"user.message" => {
            if let Some(text) = d.content {
                sink.prompt(Text::Raw(text), ts.as_ref());
            }
        }
        b"assistant.message" => {
            sink.assistant(d.message_id.map(|i| hash64(i.raw)), ts.as_ref());
            if let Some(text) = d.content.filter(|c| !c.is_blank()) {
                sink.assistant_text(&text, ts.as_ref());
            }
            for (id, name, args) in d.calls {
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
        }
        b"tool.execution_complete" if want => {
            sink.tool_result(
                d.call_id.map(|i| hash64(i.raw)),
                !d.success,
                d.result.map(Text::Raw),
            );
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

    // As Copilot CLI 1.0.102 writes them (cut down): our hook's output and the prompt as the model
    // got it hold sidelight's text and are not counted.
    const LINES: &[&str] = &[
        r#"{"type":"session.start","data":{"sessionId":"s1","version":1,"copilotVersion":"1.0.102","startTime":"t0","context":{"cwd":"/p"}},"id":"e1","timestamp":"t1","parentId":null}"#,
        r#"{"type":"hook.end","data":{"hookType":"userPromptSubmitted","success":true,"output":{"additionalContext":"[Session Activity] x"}},"id":"e2","timestamp":"t2","parentId":"e1"}"#,
        r#"{"type":"user.message","data":{"content":"fix the build","transformedContent":"<current_datetime>t</current_datetime>\n\nfix the build\n\n<system_reminder>\n[Session Activity] x\n</system_reminder>","messageId":"m0"},"id":"e3","timestamp":"t3","parentId":"e2"}"#,
        r#"{"type":"system.message","data":{"role":"system","content":"You are the GitHub Copilot CLI"},"id":"e4","timestamp":"t4","parentId":"e3"}"#,
        r#"{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"c1","name":"edit","arguments":{"path":"/p/a.rs","old_str":"a","new_str":"b"},"type":"function"},{"toolCallId":"c2","name":"bash","arguments":{"command":"cargo test","description":"Run"},"type":"function"}]},"id":"e5","timestamp":"t5","parentId":"e4"}"#,
        r#"{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"edit","arguments":{"path":"/p/a.rs"}},"id":"e6","timestamp":"t6","parentId":"e5"}"#,
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true,"result":{"content":"File updated.","detailedContent":"diff"}},"id":"e7","timestamp":"t7","parentId":"e6"}"#,
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"c2","success":false,"result":{"content":"exit 1"}},"id":"e8","timestamp":"t8","parentId":"e7"}"#,
        r#"{"type":"assistant.message","data":{"messageId":"m2","content":"Fixed.","toolRequests":[]},"id":"e9","timestamp":"t9","parentId":"e8"}"#,
        r#"{"type":"session.shutdown","data":{"codeChanges":{"filesModified":["/p/a.rs"]}},"id":"e10","timestamp":"t10","parentId":"e9"}"#,
    ];

    #[test]
    fn copilot_counts_typed_prompts_replies_and_tools_not_our_context() {
        let a = run(Format::Copilot, LINES);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 2));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the build"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Fixed."));
        assert_eq!(a.tools.get("edit"), Some(&1));
        assert_eq!(a.tools.get("bash"), Some(&1));
        assert_eq!(a.files_touched, ["/p/a.rs"]);
        assert_eq!(
            (a.session_id.as_deref(), a.cwd.as_deref()),
            (Some("s1"), Some("/p"))
        );
        assert_eq!(a.first_timestamp.as_deref(), Some("t3"));
        assert_eq!(a.last_timestamp.as_deref(), Some("t9"));
        assert_eq!(a.entry_types.get("hook.end"), Some(&1));
    }

    #[test]
    fn copilot_reports_tool_results_to_a_reader_only() {
        let sink = results(Format::Copilot, LINES);
        assert_eq!(
            sink.results,
            [
                (h("c1"), false, Some("File updated.".into())),
                (h("c2"), true, Some("exit 1".into())),
            ]
        );
        assert_eq!(sink.prompts, ["fix the build"]);
        // `data` before `type` is read as well.
        let late = r#"{"data":{"content":"late prompt"},"type":"user.message","timestamp":"t"}"#;
        assert_eq!(results(Format::Copilot, &[late]).prompts, ["late prompt"]);
    }

    #[test]
    fn copilot_is_guessed_from_its_first_line() {
        assert_eq!(Format::guess(LINES[0].as_bytes()), Some(Format::Copilot));
        assert_eq!(Format::guess(LINES[2].as_bytes()), Some(Format::Copilot));
    }
}
