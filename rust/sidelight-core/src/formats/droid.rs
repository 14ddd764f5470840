//! Factory Droid sessions (`~/.factory/sessions/<cwd slug>/<session>.jsonl`): see docs/activity.md.
//!
//! A `session_start` header (`id`, `title`, `cwd`), then `message` lines whose `message` is an
//! Anthropic-style `{role, content: [text | tool_use | tool_result blocks]}`, as Pi's envelope
//! (`id`, `parentId`, `timestamp`). A message with a `visibility` is not the person's: `llm_only` is a
//! system reminder Droid sends the model, `user_only` the record of a hook run (its output, ours
//! included, only as the raw `stdout` of `hookResults`, with empty `content`).

use super::message::{message, report_assistant_keys, Message};
use super::read::{line_end, object_value, Bad};
use super::tools::ResultText;
use crate::activity::{hash64, Category, Meta, Sink};
use crate::json::{Flow, RawStr, Reader};

/// Droid's tools by lowercase name and category; a tool not listed counts as `other`.
pub(super) const TOOLS: &[(&str, Category)] = &[
    ("create", Category::Edit),
    ("edit", Category::Edit),
    ("multiedit", Category::Edit),
    ("applypatch", Category::Edit),
    ("read", Category::Read),
    ("ls", Category::Read),
    ("grep", Category::Read),
    ("glob", Category::Read),
    ("websearch", Category::Read),
    ("fetchurl", Category::Read),
    ("execute", Category::Command),
    ("taskoutput", Category::Command),
    ("taskstop", Category::Command),
];

/// The keys of a Droid tool input that name what it acts on, most telling first: the common ones,
/// then its `LS`'s `directory_path` and its `Glob`'s `folder`.
const KEYS: [&str; 10] = [
    "file_path",
    "notebook_path",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "path",
    "directory_path",
    "folder",
];

/// Droid: see docs/activity.md.
pub(super) fn decode<S: Sink>(line: &[u8], sink: &mut S) -> Result<(), Bad> {
    let mut r = Reader::new(line);
    let mut ty: Option<RawStr<'_>> = None;
    let mut ts: Option<RawStr<'_>> = None;
    let want = sink.wants_results();
    let entries = sink.wants_entries();
    let mut msg = Message {
        want_results: want,
        want_entries: entries,
        ..Message::default()
    };
    let mut has_message = false;
    let (mut id, mut cwd, mut title, mut parent) = (None, None, None, None);
    let mut skip_rest = false;
    let flow = r
        .object(|r, key| {
            match key.raw {
                b"type" => {
                    ty = r.string_or_skip()?;
                    let t = ty.map(|t| t.raw).unwrap_or_default();
                    skip_rest = !matches!(t, b"message" | b"session_start");
                }
                b"message" => {
                    has_message = r.peek()? == b'{';
                    // `visibility` follows `content`: the message is read whole unless it stopped
                    // at a tool result (which is no one's prompt).
                    if object_value(r, ty.is_some() && !want, |r| message(r, &mut msg))? {
                        skip_rest = ty.is_some();
                    }
                }
                b"timestamp" => ts = r.string_or_skip()?,
                b"id" => id = r.string_or_skip()?,
                b"parentId" if want => parent = r.string_or_skip()?,
                b"cwd" => cwd = r.string_or_skip()?,
                b"title" => title = r.string_or_skip()?,
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
    if t == b"session_start" {
        if let Some(id) = id {
            sink.meta(Meta::SessionId, &id);
        }
        if let Some(cwd) = cwd {
            sink.meta(Meta::Cwd, &cwd);
        }
        if let Some(title) = title {
            sink.meta(Meta::AiTitle, &title);
        }
        return Ok(());
    }
    if t != b"message" || !has_message {
        return Ok(());
    }
    // Every message is a link of the session's chain, the ones that are nobody's words too (a reply's
    // parent may be a system reminder).
    if let (true, Some(id)) = (want, id) {
        sink.entry_link(hash64(id.raw), parent.map(|p| hash64(p.raw)));
    }
    if msg.visibility.is_some() {
        return Ok(());
    }
    if let (true, Some(ts)) = (entries, &ts) {
        sink.line_timestamp(ts);
    }
    if msg.role_is(b"user") {
        if want {
            for result in std::mem::take(&mut msg.results) {
                let text = result.content.and_then(ResultText::text);
                sink.tool_result(result.id.map(|i| hash64(i.raw)), result.is_error, text);
            }
        }
        if let Some(text) = msg.prompt() {
            sink.prompt(text, ts.as_ref());
        }
    } else if msg.role_is(b"assistant") {
        // One message per line, each with its own id.
        sink.assistant(id.map(|i| hash64(i.raw)), ts.as_ref());
        report_assistant_keys(&msg, ts.as_ref(), sink, &KEYS);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::formats::testing::{h, results, run};
    use crate::formats::Format;

    // As Droid 0.225.2 writes them (cut down): the header, a hook's record, a system reminder, a
    // prompt, tool rounds with their hooks' records, a failed command, a reply, a turn's outcome.
    const LINES: &[&str] = &[
        r#"{"type":"session_start","id":"s1","title":"fix the build","owner":"unknown","version":2,"cwd":"/p","isSessionTitleManuallySet":false}"#,
        r#"{"type":"message","id":"h1","timestamp":"t0","message":{"role":"user","content":[],"visibility":"user_only","hookEventName":"UserPromptSubmit","hookResults":[{"exitCode":0,"stdout":"{\"hookSpecificOutput\":{\"additionalContext\":\"[Session Activity] x\"}}","stderr":""}],"hookParentId":"u1"}}"#,
        r#"{"type":"message","id":"context-u1","timestamp":"t1","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nThe tools listed below</system-reminder>"}],"visibility":"llm_only"}}"#,
        r#"{"type":"message","id":"u1","parentId":"context-u1","timestamp":"t2","message":{"role":"user","content":[{"type":"text","text":"fix the build"}],"interactionMode":"auto"}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"t3","message":{"role":"assistant","content":[{"type":"text","text":"Editing."},{"type":"tool_use","id":"c1","name":"Edit","input":{"file_path":"/p/a.rs","old_str":"a","new_str":"b"}}],"modelId":"custom:Mock-0"}}"#,
        r#"{"type":"message","id":"h2","parentId":"a1","timestamp":"t4","message":{"role":"user","content":[],"visibility":"user_only","hookEventName":"PostToolUse","hookResults":[{"exitCode":0,"stdout":"[sidelight] news","stderr":""}],"hookToolCallId":"c1"}}"#,
        r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"t5","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":false,"content":"{\"success\":true}"}]}}"#,
        r#"{"type":"message","id":"a2","parentId":"r1","timestamp":"t6","message":{"role":"assistant","content":[{"type":"tool_use","id":"c2","name":"Execute","input":{"command":"cargo test","summary":"s","riskLevel":"low","riskLevelReason":"r"}},{"type":"tool_use","id":"c3","name":"LS","input":{"directory_path":"/p/src"}}],"modelId":"custom:Mock-0"}}"#,
        r#"{"type":"message","id":"r2","parentId":"a2","timestamp":"t7","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c2","is_error":true,"content":"Error: Command failed (exit code: 1)"},{"type":"tool_result","tool_use_id":"c3","is_error":false,"content":"a.rs"}]}}"#,
        r#"{"type":"message","id":"todo-suggest-1","parentId":"r2","timestamp":"t8","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>todos</system-reminder>"}],"visibility":"llm_only"}}"#,
        r#"{"type":"message","id":"a3","parentId":"todo-suggest-1","timestamp":"t9","message":{"role":"assistant","content":[{"type":"text","text":"Fixed."}],"modelId":"custom:Mock-0"}}"#,
        r#"{"type":"agent_turn_outcome","turnId":"u1","reason":"completed","resultKind":"text"}"#,
    ];

    #[test]
    fn droid_counts_typed_prompts_replies_and_tools_not_hooks_or_reminders() {
        let a = run(Format::Droid, LINES);
        assert_eq!((a.user_messages, a.assistant_messages), (1, 3));
        assert_eq!(a.first_user_text.as_deref(), Some("fix the build"));
        assert_eq!(a.last_assistant_text.as_deref(), Some("Fixed."));
        assert_eq!(a.tools.get("Edit"), Some(&1));
        assert_eq!(a.tools.get("Execute"), Some(&1));
        assert_eq!(a.tools.get("LS"), Some(&1));
        assert_eq!(a.files_touched, ["/p/a.rs"]);
        assert_eq!(
            (a.session_id.as_deref(), a.cwd.as_deref()),
            (Some("s1"), Some("/p"))
        );
        assert_eq!(a.title(), Some("fix the build"));
        assert_eq!(a.first_timestamp.as_deref(), Some("t2"));
        assert_eq!(a.last_timestamp.as_deref(), Some("t9"));
        assert_eq!(a.entry_types.get("agent_turn_outcome"), Some(&1));
    }

    #[test]
    fn droid_reports_tool_results_to_a_reader_only() {
        let sink = results(Format::Droid, LINES);
        assert_eq!(
            sink.results,
            [
                (h("c1"), false, Some("{\"success\":true}".into())),
                (
                    h("c2"),
                    true,
                    Some("Error: Command failed (exit code: 1)".into())
                ),
                (h("c3"), false, Some("a.rs".into())),
            ]
        );
        assert_eq!(
            sink.tools,
            [
                (h("c1"), "Edit".into()),
                (h("c2"), "Execute".into()),
                (h("c3"), "LS".into())
            ]
        );
        assert_eq!(sink.prompts, ["fix the build"]);
        // The chain runs through the reminders and hook records too.
        assert!(sink
            .links
            .contains(&(h("a3").unwrap(), h("todo-suggest-1"))));
        assert!(sink
            .links
            .contains(&(h("todo-suggest-1").unwrap(), h("r2"))));
    }

    #[test]
    fn droid_is_guessed_from_its_header_and_its_messages() {
        assert_eq!(Format::guess(LINES[0].as_bytes()), Some(Format::Droid));
        assert_eq!(Format::guess(LINES[1].as_bytes()), Some(Format::Droid));
        assert_eq!(Format::guess(LINES[4].as_bytes()), Some(Format::Droid));
        // Pi's message lines (the same envelope) stay Pi's.
        let pi = r#"{"type":"message","id":"x","parentId":"y","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#;
        assert_eq!(Format::guess(pi.as_bytes()), Some(Format::Pi));
    }

    #[test]
    fn droid_apply_patch_names_its_files() {
        let line = r#"{"type":"message","id":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"ApplyPatch","input":{"input":"*** Begin Patch\n*** Update File: /p/b.rs\n@@\n-x\n+y\n*** End Patch\n"}}]}}"#;
        let options = crate::activity::Options {
            categories: Format::Droid.categories(),
            ..crate::activity::Options::default()
        };
        let mut a = crate::activity::Activity::new(&options, 0);
        Format::Droid.decode(line.as_bytes(), &mut a);
        assert_eq!(a.files_touched, ["/p/b.rs"]);
        assert_eq!(a.categories[crate::activity::Category::Edit as usize], 1);
    }
}
