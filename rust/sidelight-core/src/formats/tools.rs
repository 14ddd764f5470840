//! What tool calls and their results say, the same for every decoder: a call's primary argument, the
//! files of a patch and the details a hot memory shows (docs/activity.md, "Tool details"), and the text
//! of a result.

use crate::activity::{Details, Text};
use crate::json::{Chars, Flow, RawStr, Reader};

/// Keys of a tool input that name what it acts on, most telling first.
pub const PRIMARY_KEYS: [&str; 8] = [
    "file_path",
    "notebook_path",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "path",
];

/// What a tool input says: its primary argument, the files of a patch it carries, and the details a
/// hot memory shows (the lines a write creates, an edit's old and new text).
#[derive(Default)]
pub(super) struct ToolInput<'a> {
    pub(super) primary: Option<Text<'a>>,
    pub(super) files: Vec<String>,
    pub(super) details: Details,
}

/// How long a detail snippet is kept (a hot memory shows 30 characters of it).
const DETAIL_CHARS: usize = 100;

/// The lines of a text: `\n` separates them and a final newline starts no new line.
fn line_count(text: &RawStr<'_>) -> u64 {
    let (mut newlines, mut last) = (0u64, None);
    for c in Chars::new(text.raw) {
        if c == '\n' {
            newlines += 1;
        }
        last = Some(c);
    }
    match last {
        None => 0,
        Some('\n') => newlines,
        Some(_) => newlines + 1,
    }
}

/// An edit's old and new text from `{old_string, new_string}`, `{oldText, newText}` or (Kimi's
/// `StrReplaceFile{edit}`) `{old, new}`.
fn edit_pair<'a>(
    r: &mut Reader<'a>,
    old: &mut Option<RawStr<'a>>,
    new: &mut Option<RawStr<'a>>,
) -> Option<()> {
    r.object(|r, key| {
        match key.raw {
            b"old_string" | b"oldText" | b"old" => *old = r.string_or_skip()?,
            b"new_string" | b"newText" | b"new" => *new = r.string_or_skip()?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
    .map(|_| ())
}

pub(super) fn tool_input<'a, K: AsRef<[u8]>>(
    input: &'a [u8],
    name: &str,
    keys: &[K],
) -> ToolInput<'a> {
    let mut best: Option<(usize, Text<'a>)> = None;
    let mut patch: Option<String> = None;
    let mut content: Option<RawStr<'a>> = None;
    let (mut old, mut new): (Option<RawStr<'a>>, Option<RawStr<'a>>) = (None, None);
    let _ = Reader::new(input).object(|r, key| {
        let rank = keys.iter().position(|k| key.is(k.as_ref()));
        // Droid's `ApplyPatch{input}` is Codex's patch.
        let is_patch =
            matches!(name, "apply_patch" | "ApplyPatch") && (key.is(b"input") || key.is(b"patch"));
        match (rank, r.peek()?) {
            (Some(rank), b'"') => {
                let value = r.string()?;
                if !value.is_blank() && best.as_ref().is_none_or(|(b, _)| rank < *b) {
                    best = Some((rank, Text::Raw(value)));
                }
            }
            (Some(rank), b'[') if key.is(b"command") => {
                let mut parts = Vec::new();
                r.array(|r| {
                    if let Some(s) = r.string_or_skip()? {
                        parts.push(s.decode());
                    }
                    Some(Flow::Continue)
                })?;
                if parts.first().map(String::as_str) == Some("apply_patch") && parts.len() > 1 {
                    patch = parts.last().cloned();
                }
                if let Some(cmd) = shell_command(&parts) {
                    if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                        best = Some((rank, Text::Joined(cmd)));
                    }
                }
            }
            (_, b'"') if is_patch => patch = Some(r.string()?.decode()),
            // Copilot's `create{file_text}` and `edit{old_str, new_str}` beside Claude's and Pi's.
            (None, b'"') if key.is(b"content") || key.is(b"file_text") => content = r.string(),
            (None, b'"') if key.is(b"old_string") || key.is(b"oldText") || key.is(b"old_str") => {
                old = r.string()
            }
            (None, b'"') if key.is(b"new_string") || key.is(b"newText") || key.is(b"new_str") => {
                new = r.string()
            }
            // Kimi's `StrReplaceFile{edit}`: one edit, or a list of them.
            (None, b'{') if key.is(b"edit") && old.is_none() && new.is_none() => {
                edit_pair(r, &mut old, &mut new)?
            }
            (None, b'[') if key.is(b"edits") || key.is(b"edit") => {
                // Several edits in one call: the first one stands for them.
                let mut first = true;
                r.array(|r| {
                    if first && r.peek()? == b'{' && old.is_none() && new.is_none() {
                        edit_pair(r, &mut old, &mut new)?;
                    } else {
                        r.skip()?;
                    }
                    first = false;
                    Some(Flow::Continue)
                })?;
            }
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    });
    if let Some(patch) = patch {
        let files = patch_files(&patch);
        let primary = files.first().cloned().map(Text::Joined);
        return ToolInput {
            primary: primary.or(best.map(|(_, t)| t)),
            details: patch_details(&patch),
            files,
        };
    }
    let snippet = |s: Option<RawStr<'_>>| s.map(|s| s.decode_trimmed(DETAIL_CHARS));
    ToolInput {
        primary: best.map(|(_, t)| t),
        files: Vec::new(),
        details: Details {
            lines: content.as_ref().map(line_count),
            old_text: snippet(old),
            new_text: snippet(new),
        },
    }
}

/// A patch's details, from its first file: an added file's `+` lines, or an update's first removed
/// and first added line.
pub(super) fn patch_details(patch: &str) -> Details {
    let mut details = Details::default();
    let mut section: Option<bool> = None; // Some(true): an added file, Some(false): an update
    for line in patch.lines() {
        if line.starts_with("*** ") {
            if section.is_some() && !line.starts_with("*** Move to: ") {
                break; // the next file
            }
            if line.starts_with("*** Add File: ") {
                section = Some(true);
                details.lines = Some(0);
            } else if line.starts_with("*** Update File: ") {
                section = Some(false);
            }
            continue;
        }
        match section {
            Some(true) if line.starts_with('+') => *details.lines.get_or_insert(0) += 1,
            Some(false) if line.starts_with('-') && details.old_text.is_none() => {
                details.old_text = Some(cut_trimmed(&line[1..]));
            }
            Some(false) if line.starts_with('+') && details.new_text.is_none() => {
                details.new_text = Some(cut_trimmed(&line[1..]));
            }
            _ => {}
        }
    }
    details
}

fn cut_trimmed(text: &str) -> String {
    text.trim_matches(crate::json::is_space)
        .chars()
        .take(DETAIL_CHARS)
        .collect()
}

/// `["bash", "-lc", "npm test"]` → `npm test`; other lists are joined by spaces.
fn shell_command(parts: &[String]) -> Option<String> {
    if parts.is_empty() {
        return None;
    }
    let shell = parts[0].rsplit('/').next().unwrap_or("");
    if parts.len() >= 3
        && matches!(shell, "bash" | "sh" | "zsh" | "dash" | "fish")
        && matches!(parts[1].as_str(), "-c" | "-lc")
    {
        // `bash -c SCRIPT ARG0 ARG1…`: the script is the word after the flag.
        return Some(parts[2].clone());
    }
    Some(parts.join(" "))
}

/// The files an `apply_patch` patch adds, updates, deletes or moves to.
pub(super) fn patch_files(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut files: Vec<String> = Vec::new();
    for line in patch.lines() {
        if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            let path = path.trim();
            if !path.is_empty() && !files.iter().any(|f| f == path) {
                files.push(path.to_owned());
            }
        }
    }
    files
}

/// The text of a tool result: a string, or the texts of a list of blocks.
pub(super) enum ResultText<'a> {
    Str(RawStr<'a>),
    Parts(Vec<RawStr<'a>>),
}

impl<'a> ResultText<'a> {
    pub(super) fn text(self) -> Option<Text<'a>> {
        match self {
            ResultText::Str(s) => Some(Text::Raw(s)),
            ResultText::Parts(parts) if parts.len() == 1 => Some(Text::Raw(parts[0])),
            ResultText::Parts(parts) => Text::join(&parts),
        }
    }
}

/// Reads a tool result's content: a string, or a list of blocks whose `text` is kept.
pub(super) fn result_content<'a>(r: &mut Reader<'a>) -> Option<Option<ResultText<'a>>> {
    match r.peek()? {
        b'"' => Some(Some(ResultText::Str(r.string()?))),
        b'[' => {
            let mut parts = Vec::new();
            r.array(|r| {
                if r.peek()? != b'{' {
                    r.skip()?;
                    return Some(Flow::Continue);
                }
                r.object(|r, key| {
                    let text = r.string_or_skip()?;
                    if let (true, Some(text)) = (key.is(b"text"), text) {
                        parts.push(text);
                    }
                    Some(Flow::Continue)
                })?;
                Some(Flow::Continue)
            })?;
            Some(Some(ResultText::Parts(parts)))
        }
        _ => r.skip().map(|_| None),
    }
}

/// A number's digits as an integer (`null` and anything else: `None`).
pub(super) fn integer(span: &[u8]) -> Option<i64> {
    std::str::from_utf8(span).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testing::run;
    use crate::formats::Format;

    #[test]
    fn tool_details_tell_what_a_write_or_edit_did() {
        let a = run(
            Format::ClaudeCode,
            &[
                r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"a","name":"Write","input":{"file_path":"/p/new.py","content":"one\ntwo\nthree\n"}}]}}"#,
                r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"b","name":"Edit","input":{"file_path":"/p/a.py","old_string":"  x = 1 ","new_string":"x = 2"}}]}}"#,
                r#"{"type":"assistant","message":{"id":"m3","content":[{"type":"tool_use","id":"c","name":"MultiEdit","input":{"file_path":"/p/b.py","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}}]}}"#,
            ],
        );
        let d: Vec<_> = a
            .tool_uses
            .iter()
            .map(|t| (t.lines, t.old_text.as_deref(), t.new_text.as_deref()))
            .collect();
        assert_eq!(
            d,
            [
                (Some(3), None, None),
                (None, Some("x = 1"), Some("x = 2")),
                (None, Some("a"), Some("b"))
            ]
        );
        let pi = run(
            Format::Pi,
            &[
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"e","name":"edit","arguments":{"path":"f","edits":[{"oldText":"old","newText":"new"}]}},{"type":"toolCall","id":"w","name":"write","arguments":{"path":"g","content":"no newline"}}]}}"#,
            ],
        );
        assert_eq!(pi.tool_uses[0].old_text.as_deref(), Some("old"));
        assert_eq!(pi.tool_uses[1].lines, Some(1));
        let patch = "*** Begin Patch\n*** Update File: u.txt\n@@\n-before\n+after\n*** Add File: n.txt\n+1\n+2\n*** End Patch";
        assert_eq!(
            patch_details(patch),
            Details {
                lines: None,
                old_text: Some("before".into()),
                new_text: Some("after".into())
            }
        );
        assert_eq!(
            patch_details("*** Add File: n.txt\n+1\n+2\n").lines,
            Some(2)
        );
    }
}
