//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`): see docs/activity.md.
//!
//! The file is event-sourced: a header line (`sessionId`, `projectHash`, `startTime`, `kind`), one
//! line per message (`{"id", "timestamp", "type": "user" | "gemini" | "info" | ..., "content"}`), and
//! `{"$set": {...}}` patches. A reply is written again, whole, once its tool calls are known (the same
//! `id`, now with `toolCalls`), and `--resume` appends a new header and a `$set` that restates the
//! whole history: neither is counted twice.

use super::read::{line_end, Bad};
use super::tools::{result_content, tool_input, ResultText};
use crate::activity::{hash64, Arguments, Category, Meta, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// The Gemini CLI's tools by lowercase name and category (its `tool-names.ts`); a tool not listed
/// counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("replace", Category::Edit),
    ("write_file", Category::Edit),
    ("read_file", Category::Read),
    ("read_many_files", Category::Read),
    ("glob", Category::Read),
    ("grep_search", Category::Read),
    ("search_file_content", Category::Read),
    ("list_directory", Category::Read),
    ("web_fetch", Category::Read),
    ("google_web_search", Category::Read),
    ("run_shell_command", Category::Command),
    ("read_background_output", Category::Command),
    ("list_background_processes", Category::Command),
];

/// The keys of a Gemini tool's arguments that name what it acts on, most telling first: the common
/// ones, and the Gemini CLI's own (`read_file{absolute_path}` in older builds, `list_directory{dir_path}`).
const KEYS: [&str; 8] = [
    "file_path",
    "absolute_path",
    "command",
    "pattern",
    "query",
    "url",
    "dir_path",
    "path",
];

/// What the Gemini CLI writes as the first user message of every session: its own context.
const SESSION_CONTEXT: &str = "<session_context>";
/// How a hook's `additionalContext` (sidelight's digest among them) is stored in the user message:
/// a part of its own, or put before the prompt's text (a `SessionStart` hook's).
const HOOK_OPEN: &str = "<hook_context>";
const HOOK_CLOSE: &str = "</hook_context>";

/// The prompt's text without the hook contexts put before it; `None` when nothing else is left.
fn without_hook_context(text: &str) -> Option<&str> {
    let mut rest = text.trim_start_matches(crate::json::is_space);
    while let Some(after) = rest.strip_prefix(HOOK_OPEN) {
        // A context that is not closed runs to the end of the part.
        let end = after.find(HOOK_CLOSE)?;
        rest = after[end + HOOK_CLOSE.len()..].trim_start_matches(crate::json::is_space);
    }
    (!rest.is_empty()).then_some(rest)
}

/// A `functionResponse` part: the id of the call it answers, and its output or error.
struct Response<'a> {
    id: Option<RawStr<'a>>,
    output: Option<ResultText<'a>>,
    error: Option<ResultText<'a>>,
}

fn function_response<'a>(r: &mut Reader<'a>) -> Option<Response<'a>> {
    let mut response = Response {
        id: None,
        output: None,
        error: None,
    };
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(response);
    }
    r.object(|r, key| {
        match key.raw {
            b"id" => response.id = r.string_or_skip()?,
            b"response" if r.peek()? == b'{' => {
                r.object(|r, key| {
                    match key.raw {
                        b"output" => response.output = result_content(r)?,
                        b"error" => response.error = result_content(r)?,
                        _ => r.skip()?,
                    }
                    Some(Flow::Continue)
                })?;
            }
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    Some(response)
}

/// A tool call: `functionCall{id, name, args}` in the content, or an entry of `toolCalls`.
#[derive(Default)]
struct Call<'a> {
    id: Option<RawStr<'a>>,
    name: Option<RawStr<'a>>,
    args: Option<&'a [u8]>,
}

fn call<'a>(r: &mut Reader<'a>) -> Option<Call<'a>> {
    let mut call = Call::default();
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(call);
    }
    r.object(|r, key| {
        match key.raw {
            b"id" => call.id = r.string_or_skip()?,
            b"name" => call.name = r.string_or_skip()?,
            b"args" => call.args = Some(r.span()?),
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    Some(call)
}

/// A message's `content`: a string, or a list of parts without a type (`{"text"}`, `{"text",
/// "thought": true}`, `{"functionCall"}`, `{"functionResponse"}`).
#[derive(Default)]
struct Content<'a> {
    texts: Vec<RawStr<'a>>,
    calls: Vec<Call<'a>>,
    responses: Vec<Response<'a>>,
    /// A part is a tool's result: the message is no prompt.
    has_response: bool,
}

fn content<'a>(r: &mut Reader<'a>, c: &mut Content<'a>, want_results: bool) -> Option<()> {
    match r.peek()? {
        b'"' => {
            c.texts.push(r.string()?);
            return Some(());
        }
        b'[' => {}
        _ => return r.skip(),
    }
    r.array(|r| {
        if r.peek()? != b'{' {
            r.skip()?;
            return Some(Flow::Continue);
        }
        let (mut text, mut thought) = (None, false);
        r.object(|r, key| {
            match key.raw {
                b"text" => text = r.string_or_skip()?,
                b"thought" => thought = r.boolean()?,
                b"functionCall" => c.calls.push(call(r)?),
                b"functionResponse" => {
                    c.has_response = true;
                    if want_results {
                        c.responses.push(function_response(r)?);
                    } else {
                        r.skip()?;
                    }
                }
                _ => r.skip()?,
            }
            Some(Flow::Continue)
        })?;
        if let (Some(text), false) = (text, thought) {
            c.texts.push(text);
        }
        Some(Flow::Continue)
    })?;
    Some(())
}

/// Gemini CLI chats: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let (mut ty, mut ts, mut id, mut session_id, mut summary) = (None, None, None, None, None);
    let mut body = Content::default();
    let mut tool_calls: Vec<Call<'_>> = Vec::new();
    let mut has_tool_calls = false;
    r.object(|r, key| {
        match key.raw {
            b"type" => ty = r.string_or_skip()?,
            b"timestamp" => ts = r.string_or_skip()?,
            b"id" => id = r.string_or_skip()?,
            b"sessionId" => session_id = r.string_or_skip()?,
            b"content" => content(r, &mut body, want)?,
            b"toolCalls" if r.peek()? == b'[' => {
                has_tool_calls = true;
                r.array(|r| {
                    tool_calls.push(call(r)?);
                    Some(Flow::Continue)
                })?;
            }
            // A patch: only a title is read; the history it may restate was counted as it was written.
            b"$set" if r.peek()? == b'{' => {
                r.object(|r, key| {
                    if key.is(b"summary") {
                        summary = r.string_or_skip()?;
                    } else {
                        r.skip()?;
                    }
                    Some(Flow::Continue)
                })?;
            }
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .ok_or(Bad::Malformed)?;
    line_end(&mut r, false)?;
    sink.entry_type(ty.as_ref());
    if let Some(v) = session_id {
        sink.meta(Meta::SessionId, &v);
    }
    if let Some(v) = summary {
        sink.meta(Meta::AiTitle, &v);
    }
    let ts = ts.as_ref();
    if let (true, Some(ts)) = (entries, ts) {
        sink.line_timestamp(ts);
    }
    match ty.map(|t| t.raw).unwrap_or_default() {
        b"user" => {
            for response in body.responses {
                let failed = response.error.is_some();
                let text = response
                    .output
                    .or(response.error)
                    .and_then(ResultText::text);
                sink.tool_result(response.id.map(|i| hash64(i.raw)), failed, text);
            }
            if body.has_response {
                return Ok(());
            }
            let texts: Vec<String> = body.texts.iter().map(RawStr::decode).collect();
            if texts.first().is_some_and(|t| {
                t.trim_start_matches(crate::json::is_space)
                    .starts_with(SESSION_CONTEXT)
            }) {
                return Ok(());
            }
            let parts: Vec<&str> = texts
                .iter()
                .filter_map(|t| without_hook_context(t))
                .collect();
            if !parts.is_empty() {
                sink.prompt(Text::Joined(parts.join("\n")), ts);
            }
        }
        b"gemini" => {
            sink.assistant(id.map(|i| hash64(i.raw)), ts);
            // A line with `toolCalls` rewrites a reply already written (or one that had no text):
            // its text was reported then, so a reader does not show it twice.
            if !has_tool_calls {
                for text in &body.texts {
                    sink.assistant_text(text, ts);
                }
            }
            for call in body.calls.iter().chain(&tool_calls) {
                report_call(call, ts, entries, sink);
            }
        }
        _ => {}
    }
    Ok(())
}

fn report_call<S: Sink>(call: &Call<'_>, ts: Option<&RawStr<'_>>, entries: bool, sink: &mut S) {
    let Some(name) = call.name.map(|n| n.decode()) else {
        return;
    };
    let input = call
        .args
        .map(|a| tool_input(a, &name, &KEYS))
        .unwrap_or_default();
    sink.tool_use(
        ToolCall {
            id: call.id.map(|i| hash64(i.raw)),
            name: &name,
            primary: input.primary,
            files: input.files,
            details: input.details,
            arguments: call.args.filter(|_| entries).map(Arguments::Json),
        },
        ts,
    );
}

#[cfg(test)]
mod tests {
    use super::without_hook_context;
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

    /// As Gemini CLI 0.61.0 writes them (shortened), with a `SessionStart` and a `BeforeAgent` context.
    const SESSION: [&str; 12] = [
        r#"{"sessionId":"3eb8120c-e85e","projectHash":"940b","startTime":"t0","lastUpdated":"t0","kind":"main"}"#,
        r#"{"$set":{"messages":[{"id":"c","timestamp":"t0","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.</session_context>"}]}],"lastUpdated":"t0"}}"#,
        r#"{"id":"u1","timestamp":"t1","type":"user","content":[{"text":"<hook_context>[Session Activity] x</hook_context>\n\nfix the file please"},{"text":"<hook_context>[Session Activity] y</hook_context>"}],"displayContent":[{"text":"fix"}]}"#,
        r#"{"$set":{"lastUpdated":"t1"}}"#,
        r#"{"id":"g1","timestamp":"t2","type":"gemini","content":"","thoughts":[],"tokens":{"input":10},"model":"m"}"#,
        r#"{"id":"g1","timestamp":"t2","type":"gemini","content":"","thoughts":[],"model":"m","toolCalls":[{"id":"rsc_1","name":"run_shell_command","args":{"command":"echo hi > a.txt"},"result":[{"functionResponse":{"id":"rsc_1","name":"run_shell_command","response":{"output":"Output: (empty)"}}}],"status":"success","timestamp":"t3"}]}"#,
        r#"{"id":"r1","timestamp":"t3","type":"user","content":[{"functionResponse":{"id":"rsc_1","name":"run_shell_command","response":{"output":"Output: (empty)"}}}]}"#,
        r#"{"id":"g2","timestamp":"t4","type":"gemini","content":"","toolCalls":[{"id":"rep_1","name":"replace","args":{"file_path":"/p/b.txt","old_string":"one","new_string":"uno","instruction":"i"},"status":"error"}]}"#,
        r#"{"id":"r2","timestamp":"t5","type":"user","content":[{"functionResponse":{"id":"rep_1","name":"replace","response":{"error":"no match"}}}]}"#,
        r#"{"id":"g3","timestamp":"t6","type":"gemini","content":[{"text":"pondering","thought":true},{"text":"All done."}],"model":"m"}"#,
        r#"{"$set":{"lastUpdated":"t6","summary":"Fix the file"}}"#,
        r#"{"id":"i1","timestamp":"t7","type":"info","content":"Request cancelled."}"#,
    ];

    #[test]
    fn gemini_counts_a_reply_written_twice_once_and_skips_its_own_context() {
        let a = run(Format::Gemini, &SESSION);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 3));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the file please"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("All done."));
        assert_eq!(a.tools.get("run_shell_command"), Some(&1));
        assert_eq!(a.tools.get("replace"), Some(&1));
        assert_eq!(
            a.tool_uses[0].primary_arg.as_deref(),
            Some("echo hi > a.txt")
        );
        assert_eq!(a.tool_uses[1].old_text.as_deref(), Some("one"));
        assert_eq!(a.session_id.as_deref(), Some("3eb8120c-e85e"));
        assert_eq!(a.title(), Some("Fix the file"));
        assert_eq!(
            (a.first_timestamp.as_deref(), a.last_timestamp.as_deref()),
            (Some("t1"), Some("t6"))
        );
        assert_eq!(a.entry_types.get("<none>"), Some(&4));
        // A resume: a new header and a `$set` restating the history count nothing again.
        let mut resumed = SESSION.to_vec();
        resumed.push(SESSION[0]);
        resumed.push(r#"{"$set":{"messages":[{"id":"u1","timestamp":"t1","type":"user","content":[{"text":"fix the file please"}]},{"id":"g3","type":"gemini","content":"All done."}]}}"#);
        let b = run(Format::Gemini, &resumed);
        assert_eq!((b.user_messages, b.assistant_messages), (1, 3));
    }

    #[test]
    fn gemini_reports_results_from_the_users_function_responses() {
        let sink = results(Format::Gemini, &SESSION);
        assert_eq!(
            sink.results,
            [
                (h("rsc_1"), false, Some("Output: (empty)".into())),
                (h("rep_1"), true, Some("no match".into())),
            ]
        );
        assert_eq!(sink.prompts, ["fix the file please"]);
        assert_eq!(
            sink.tools,
            [
                (h("rsc_1"), "run_shell_command".into()),
                (h("rep_1"), "replace".into())
            ]
        );
    }

    #[test]
    fn a_hook_context_is_no_prompt() {
        assert_eq!(without_hook_context("<hook_context>a</hook_context>"), None);
        assert_eq!(
            without_hook_context(
                " <hook_context>a</hook_context>\n\n<hook_context>b</hook_context> go"
            ),
            Some("go")
        );
        assert_eq!(without_hook_context("<hook_context>never closed"), None);
        assert_eq!(
            without_hook_context("say <hook_context>"),
            Some("say <hook_context>")
        );
        let a = run(
            Format::Gemini,
            &[
                r#"{"id":"u","timestamp":"t","type":"user","content":[{"text":"<hook_context>[Session Activity] x</hook_context>"}]}"#,
                r#"{"id":"v","timestamp":"t","type":"user","content":"plain words"}"#,
            ],
        );
        assert_eq!(
            (a.user_messages, a.first_user_text.as_deref()),
            (1, Some("plain words"))
        );
    }

    #[test]
    fn gemini_lines_are_guessed() {
        assert_eq!(Format::guess(SESSION[0].as_bytes()), Some(Format::Gemini));
        assert_eq!(Format::guess(SESSION[4].as_bytes()), Some(Format::Gemini));
        assert_eq!(Format::guess(SESSION[3].as_bytes()), Some(Format::Gemini));
    }
}
