//! Kimi CLI sessions (`~/.kimi/sessions/<md5 of the work dir>/<session>/`): see docs/activity.md.
//!
//! A session is read from `wire.jsonl`, the log of what happened, one event a line:
//! `{"timestamp": EPOCH SECONDS, "message": {"type", "payload"}}` after a `{"type": "metadata"}` head.
//! Counted: `TurnBegin` and `SteerInput` (`user_input`: what the person typed, a string or content
//! parts), `StepBegin` (one model response), `ContentPart` (`text`; `think` is no reply), `ToolCall`
//! (`function.name`, `function.arguments` as a JSON string) and, for a reader, `ToolResult`
//! (`return_value.is_error`, `output` else `message`). The time is given as ISO 8601 (UTC, ms).
//!
//! The same decoder reads `context.jsonl` too (what the model is sent, rotated aside on `/clear` and
//! compaction, without times): one chat-completions message a line, `{"role", "content", "tool_calls",
//! "tool_call_id"}`; `user` (a message made only of `<system-reminder>` texts is Kimi's own),
//! `assistant` and `tool` (`<system>ERROR: ...</system>` first marks a failure) are counted; the roles
//! `_system_prompt`, `_checkpoint` and `_usage` are bookkeeping.

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

/// Kimi CLI: a line of `wire.jsonl` (it has a `message` or names no `role`) or of `context.jsonl`.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut probe = Reader::new(line);
    let mut wire = false;
    // The first key tells: `timestamp` and `type` (the metadata head) are the wire's, `role` and
    // `content` the context's.
    let _ = probe.object(|_, key| {
        wire = !matches!(
            key.raw,
            b"role" | b"content" | b"tool_calls" | b"tool_call_id"
        );
        Some(Flow::Stop)
    });
    if wire {
        decode_wire(line, sink)
    } else {
        decode_context(line, sink)
    }
}

/// An epoch time in seconds as ISO 8601, UTC, to the millisecond (`None`: not a time).
fn iso(seconds: f64) -> Option<String> {
    if !seconds.is_finite() || !(0.0..253_402_300_800.0).contains(&seconds) {
        return None;
    }
    let ms = (seconds * 1000.0).round() as i64;
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        day / 3600,
        day % 3600 / 60,
        day % 60
    ))
}

/// What the `payload` of a counted wire event holds.
#[derive(Default)]
struct Payload<'a> {
    texts: Vec<RawStr<'a>>,
    kind: Option<RawStr<'a>>,
    call: Option<Call<'a>>,
    call_id: Option<RawStr<'a>>,
    failed: bool,
    output: Vec<RawStr<'a>>,
    message: Option<RawStr<'a>>,
}

fn return_value<'a>(r: &mut Reader<'a>, p: &mut Payload<'a>) -> Option<()> {
    if r.peek()? != b'{' {
        return r.skip();
    }
    r.object(|r, key| {
        match key.raw {
            b"is_error" if matches!(r.peek()?, b't' | b'f') => p.failed = r.boolean()?,
            b"output" => texts(r, &mut p.output)?,
            b"message" => p.message = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

/// Reads the `payload` of a wire event of type `ty`.
fn payload<'a>(r: &mut Reader<'a>, ty: &[u8], p: &mut Payload<'a>) -> Option<()> {
    if r.peek()? != b'{' {
        return r.skip();
    }
    let (mut id, mut name, mut args) = (None, None, None);
    r.object(|r, key| {
        match (ty, key.raw) {
            (b"TurnBegin" | b"SteerInput", b"user_input") => texts(r, &mut p.texts)?,
            (b"ContentPart", b"type") => p.kind = r.string_or_skip()?,
            (b"ContentPart", b"text") => p.texts.push(r.string()?),
            (b"ToolCall", b"id") => id = r.string_or_skip()?,
            (b"ToolCall", b"function") => function(r, &mut name, &mut args)?,
            (b"ToolResult", b"tool_call_id") => p.call_id = r.string_or_skip()?,
            (b"ToolResult", b"return_value") => return_value(r, p)?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    if let Some(name) = name {
        p.call = Some((id, name, args));
    }
    Some(())
}

/// A line of `wire.jsonl`.
fn decode_wire<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let (mut head, mut ty, mut seconds): (Option<RawStr<'_>>, Option<RawStr<'_>>, Option<f64>) =
        (None, None, None);
    let mut late: Option<&[u8]> = None;
    let mut p = Payload::default();
    let counted = |t: &[u8]| {
        matches!(
            t,
            b"TurnBegin" | b"SteerInput" | b"StepBegin" | b"ContentPart" | b"ToolCall"
        ) || (want && t == b"ToolResult")
    };
    r.object(|r, key| {
        match key.raw {
            b"type" => head = r.string_or_skip()?,
            b"timestamp" => {
                let span = r.span()?;
                seconds = std::str::from_utf8(span).ok().and_then(|s| s.parse().ok());
            }
            b"message" if r.peek()? == b'{' => {
                r.object(|r, key| {
                    match key.raw {
                        b"type" => ty = r.string_or_skip()?,
                        b"payload" => match ty {
                            Some(t) if counted(t.raw) => payload(r, t.raw, &mut p)?,
                            Some(_) => r.skip()?,
                            None => late = Some(r.span()?),
                        },
                        _ => r.skip()?,
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
    let t = ty.map(|t| t.raw).unwrap_or_default();
    if let (Some(span), true) = (late, counted(t)) {
        payload(&mut Reader::new(span), t, &mut p).ok_or(Bad::Malformed)?;
    }
    sink.entry_type(ty.or(head).as_ref());
    let stamp = seconds.and_then(iso);
    let ts = stamp.as_deref().map(|s| RawStr {
        raw: s.as_bytes(),
        escaped: false,
    });
    if let (true, Some(ts), true) = (entries, &ts, counted(t)) {
        sink.line_timestamp(ts);
    }
    let ts = ts.as_ref();
    match t {
        b"TurnBegin" | b"SteerInput" => {
            if let Some(text) = typed(p.texts) {
                sink.prompt(text, ts);
            }
        }
        b"StepBegin" => sink.assistant(None, ts),
        b"ContentPart" if p.kind.is_none_or(|k| k.is(b"text")) => {
            for text in p.texts.iter().filter(|t| !t.is_blank()) {
                sink.assistant_text(text, ts);
            }
        }
        b"ToolCall" => {
            if let Some(call) = p.call {
                tool_use(sink, call, entries, ts);
            }
        }
        b"ToolResult" if want => {
            let text = joined(if p.output.iter().all(RawStr::is_blank) {
                p.message.into_iter().collect()
            } else {
                p.output
            });
            sink.tool_result(p.call_id.map(|i| hash64(i.raw)), p.failed, text);
        }
        _ => {}
    }
    Ok(())
}

/// The texts as one, a line between each (`None`: none).
fn joined(parts: Vec<RawStr<'_>>) -> Option<Text<'_>> {
    match parts.len() {
        0 => None,
        1 => Some(Text::Raw(parts[0])),
        _ => Text::join(&parts),
    }
}

/// What the person typed: the texts that are not Kimi's own reminders.
fn typed(parts: Vec<RawStr<'_>>) -> Option<Text<'_>> {
    joined(
        parts
            .into_iter()
            .filter(|p| !starts_with(p, REMINDER))
            .collect(),
    )
}

fn tool_use<S: Sink>(
    sink: &mut S,
    (id, name, args): Call<'_>,
    entries: bool,
    ts: Option<&RawStr<'_>>,
) {
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
    sink.tool_use(call, ts);
}

/// A line of `context.jsonl`.
fn decode_context<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
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
            if let Some(text) = typed(parts) {
                sink.prompt(text, None);
            }
        }
        b"assistant" => {
            sink.assistant(None, None);
            for text in parts.iter().filter(|p| !p.is_blank()) {
                sink.assistant_text(text, None);
            }
            for call in calls {
                tool_use(sink, call, entries, None);
            }
        }
        b"tool" if want => {
            let failed = parts.first().is_some_and(|p| starts_with(p, ERROR));
            sink.tool_result(call_id.map(|i| hash64(i.raw)), failed, joined(parts));
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

    /// A count with Kimi's own tool categories (its write tools touch files).
    fn scan(lines: &[&str]) -> Activity {
        let options = Options {
            categories: Format::Kimi.categories(),
            ..Options::default()
        };
        let mut a = Activity::new(&options, 0);
        for line in lines {
            Format::Kimi.decode(line.as_bytes(), &mut a);
        }
        a
    }

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
        let a = scan(LINES);
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

    // As Kimi CLI 1.50.0 writes its wire log (cut down).
    const WIRE: &[&str] = &[
        r#"{"type": "metadata", "protocol_version": "1.10"}"#,
        r#"{"timestamp": 1795928874.0734735, "message": {"type": "TurnBegin", "payload": {"user_input": "fix the build"}}}"#,
        r#"{"timestamp": 1795928874.0751286, "message": {"type": "StepBegin", "payload": {"n": 1}}}"#,
        r#"{"timestamp": 1795928874.1, "message": {"type": "ContentPart", "payload": {"type": "think", "think": "hmm"}}}"#,
        r#"{"timestamp": 1795928874.2214956, "message": {"type": "ToolCall", "payload": {"type": "function", "id": "c1", "function": {"name": "WriteFile", "arguments": "{\"path\": \"/p/a.rs\", \"content\": \"x\\n\"}"}, "extras": null}}}"#,
        r#"{"timestamp": 1795928874.2236686, "message": {"type": "ToolResult", "payload": {"tool_call_id": "c1", "return_value": {"is_error": false, "output": "", "message": "File successfully overwritten.", "display": []}}}}"#,
        r#"{"timestamp": 1795928874.3, "message": {"type": "ToolCall", "payload": {"type": "function", "id": "c2", "function": {"name": "Shell", "arguments": "{\"command\": \"cargo test\"}"}}}}"#,
        r#"{"timestamp": 1795928874.4, "message": {"type": "ToolResult", "payload": {"tool_call_id": "c2", "return_value": {"is_error": true, "output": "boom", "message": "exit 1"}}}}"#,
        r#"{"timestamp": 1795928874.5, "message": {"type": "StatusUpdate", "payload": {"context_tokens": 10}}}"#,
        r#"{"timestamp": 1795928874.6, "message": {"type": "StepBegin", "payload": {"n": 2}}}"#,
        r#"{"timestamp": 1795928874.2844436, "message": {"type": "ContentPart", "payload": {"type": "text", "text": "Fixed."}}}"#,
        r#"{"timestamp": 1795928874.2875094, "message": {"type": "TurnEnd", "payload": {}}}"#,
    ];

    #[test]
    fn kimi_reads_its_wire_log_with_times() {
        let a = scan(WIRE);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 2));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the build"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Fixed."));
        assert_eq!(a.files_touched, ["/p/a.rs"]);
        assert_eq!(a.tools.get("Shell"), Some(&1));
        assert_eq!(
            a.first_timestamp.as_deref(),
            Some("2026-11-29T05:07:54.073Z")
        );
        assert_eq!(a.entry_types.get("metadata"), Some(&1));
        assert_eq!(a.entry_types.get("StatusUpdate"), Some(&1));
        let sink = results(Format::Kimi, WIRE);
        assert_eq!(
            sink.results,
            [
                (
                    h("c1"),
                    false,
                    Some("File successfully overwritten.".into())
                ),
                (h("c2"), true, Some("boom".into())),
            ]
        );
        assert_eq!(sink.prompts, ["fix the build"]);
        assert_eq!(Format::guess(WIRE[0].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(WIRE[1].as_bytes()), Some(Format::Kimi));
    }

    #[test]
    fn epoch_seconds_become_iso_times() {
        assert_eq!(super::iso(0.0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            super::iso(951_782_400.5).as_deref(),
            Some("2000-02-29T00:00:00.500Z")
        );
        assert_eq!(super::iso(-1.0), None);
        assert_eq!(super::iso(f64::NAN), None);
    }

    #[test]
    fn kimi_is_guessed_from_its_bookkeeping_and_messages() {
        assert_eq!(Format::guess(LINES[0].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(LINES[1].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(LINES[2].as_bytes()), Some(Format::Kimi));
        assert_eq!(Format::guess(LINES[4].as_bytes()), Some(Format::Kimi));
    }
}
