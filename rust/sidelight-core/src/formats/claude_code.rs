//! Claude Code transcripts: see docs/activity.md.

use super::message::{message, report_assistant, Message};
use super::read::{line_end, object_value, Bad};
use super::tools::ResultText;
use crate::activity::{hash64, Category, Meta, Sink, Text};
use crate::json::{is_space, Flow, RawStr, Reader};

/// Claude Code's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("edit", Category::Edit),
    ("multiedit", Category::Edit),
    ("write", Category::Edit),
    ("notebookedit", Category::Edit),
    ("read", Category::Read),
    ("glob", Category::Read),
    ("grep", Category::Read),
    ("ls", Category::Read),
    ("notebookread", Category::Read),
    ("lsp", Category::Read),
    ("webfetch", Category::Read),
    ("websearch", Category::Read),
    ("readmcpresourcetool", Category::Read),
    ("bash", Category::Command),
    ("powershell", Category::Command),
    ("monitor", Category::Command),
    ("bashoutput", Category::Command),
    ("killshell", Category::Command),
    ("taskoutput", Category::Command),
    ("taskstop", Category::Command),
];

/// Claude Code: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
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
        if sidechain && !sink.sidechain_is_own() {
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
    // A subagent's task is written by its parent, not a person: no prompt to count, but the first
    // entry of the subagent's own transcript.
    let sidechain = sidechain && !(entries && sink.sidechain_is_own());
    if t == b"user" && has_message && role_ok && !(meta || sidechain || compact) {
        if let Some(text) = msg.prompt() {
            sink.prompt(slash_command(&text).unwrap_or(text), ts.as_ref());
        }
    } else if t == b"assistant" && has_message && !msg.model.is_some_and(|m| m.is(b"<synthetic>")) {
        sink.assistant(msg.id.map(|i| hash64(i.raw)), ts.as_ref());
        report_assistant(&msg, ts.as_ref(), sink);
    }
    Ok(())
}

/// The slash command a person typed, as `/name args`, when `text` is the line Claude Code writes for
/// one that goes to the model (a custom command, a skill, a prompt built-in such as `/init`): it starts
/// with `<command-message>`, then `<command-name>` and, when there are arguments, `<command-args>`;
/// the expanded prompt follows on an `isMeta` line. A built-in local command (`/clear`, `/model`,
/// `/compact`: no model request, its output in a `<local-command-stdout>` line) is written with
/// `<command-name>` first and stays synthetic, as in Claude Code's own readers of its transcripts.
fn slash_command(text: &Text<'_>) -> Option<Text<'static>> {
    const MESSAGE: &str = "<command-message>";
    if !text.starts_with_any(&[MESSAGE]) {
        return None;
    }
    let whole = match text {
        Text::Raw(raw) => raw.decode(),
        Text::Joined(s) => s.clone(),
    };
    let (_, rest) = whole.split_once("<command-name>")?;
    let (name, rest) = rest.split_once("</command-name>")?;
    let name = name.trim_matches(is_space);
    if name.is_empty() {
        return None;
    }
    let slash = if name.starts_with('/') { "" } else { "/" };
    // The arguments are the last tag: they may hold anything, the closing tag included.
    let args = rest
        .split_once("<command-args>")
        .and_then(|(_, a)| a.rsplit_once("</command-args>"))
        .map_or("", |(a, _)| a.trim_matches(is_space));
    Some(Text::Joined(if args.is_empty() {
        format!("{slash}{name}")
    } else {
        format!("{slash}{name} {args}")
    }))
}

#[cfg(test)]
mod tests {
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

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
    fn a_slash_command_for_the_model_is_one_prompt_a_local_command_none() {
        // As Claude Code 2.1.330 writes them (`claude -p "/orchestrator create TODO app by Next.js"`,
        // `/hello`, `/model`), and a 1.0 command line ("is running…", a text block).
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"<command-message>orchestrator</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create TODO app by Next.js</command-args>"},"timestamp":"t1"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Split the task.\n\nTask: create TODO app by Next.js\n"}]},"isMeta":true,"timestamp":"t1"}"#,
            r#"{"type":"user","message":{"role":"user","content":"<command-message>hello</command-message>\n<command-name>/hello</command-name>"},"timestamp":"t2"}"#,
            r#"{"type":"user","message":{"role":"user","content":"<local-command-caveat>The command below was run directly in Claude Code</local-command-caveat>"},"isMeta":true,"timestamp":"t3"}"#,
            r#"{"type":"user","message":{"role":"user","content":"<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>"},"timestamp":"t3"}"#,
            r#"{"type":"system","content":"<local-command-stdout>Current model: Opus</local-command-stdout>","timestamp":"t3"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<command-message>review is running…</command-message>\n<command-name>review</command-name>\n<command-args>  PR <42> </command-args> </command-args>"}]},"timestamp":"t4"}"#,
            r#"{"type":"user","message":{"role":"user","content":"<command-message>x</command-message>\n<command-name> </command-name>"},"timestamp":"t5"}"#,
        ];
        let a = run(Format::ClaudeCode, &lines);
        assert_eq!(a.user_messages, 3);
        assert_eq!(
            a.first_user_text.as_deref(),
            Some("/orchestrator create TODO app by Next.js")
        );
        assert_eq!(
            a.last_user_text.as_deref(),
            Some("/review PR <42> </command-args>")
        );
        assert_eq!(
            (a.first_timestamp.as_deref(), a.last_timestamp.as_deref()),
            (Some("t1"), Some("t4"))
        );
        // The entry reader is told the same texts (the synthetic ones it leaves out itself).
        let sink = results(Format::ClaudeCode, &lines);
        let told: Vec<&str> = sink.prompts.iter().map(String::as_str).collect();
        assert_eq!(
            told[..2],
            ["/orchestrator create TODO app by Next.js", "/hello"]
        );
        assert!(told[2].starts_with("<command-name>/model"));
        assert_eq!(told[3], "/review PR <42> </command-args>");
        assert!(told[4].starts_with("<command-message>x"));
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
}
