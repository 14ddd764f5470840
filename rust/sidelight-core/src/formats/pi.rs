//! Pi sessions: see docs/activity.md.

use super::message::{message, report_assistant, Message};
use super::read::{line_end, object_value, Bad};
use crate::activity::{hash64, Arguments, Category, Details, Marker, Meta, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// Pi's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("edit", Category::Edit),
    ("write", Category::Edit),
    ("read", Category::Read),
    ("grep", Category::Read),
    ("find", Category::Read),
    ("ls", Category::Read),
    ("bash", Category::Command),
    ("bashexecution", Category::Command),
];

/// Pi: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
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

#[cfg(test)]
mod tests {
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

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
}
