//! The `message` object of a Claude Code, Pi or Droid line: its role, its content blocks (texts, tool uses,
//! tool results) and, for Pi, a tool result or shell execution of its own.

use super::tools::{integer, result_content, tool_input, ResultText, PRIMARY_KEYS};
use crate::activity::{hash64, Arguments, Sink, Text, ToolCall};
use crate::json::{Flow, RawStr, Reader};

/// A content block of a message.
pub(super) enum Block<'a> {
    Text(RawStr<'a>),
    ToolUse {
        id: Option<u64>,
        name: RawStr<'a>,
        input: Option<&'a [u8]>,
    },
}

/// A Claude Code `tool_result` block (read only for a sink that wants results).
pub(super) struct ResultBlock<'a> {
    pub(super) id: Option<RawStr<'a>>,
    pub(super) is_error: bool,
    pub(super) content: Option<ResultText<'a>>,
}

/// What the `message` of a Claude Code or Pi line holds.
#[derive(Default)]
pub(super) struct Message<'a> {
    pub(super) role: Option<RawStr<'a>>,
    pub(super) id: Option<RawStr<'a>>,
    pub(super) model: Option<RawStr<'a>>,
    pub(super) prompt_parts: Vec<RawStr<'a>>,
    pub(super) prompt_string: Option<RawStr<'a>>,
    pub(super) tool_result: bool,
    pub(super) blocks: Vec<Block<'a>>,
    pub(super) command: Option<RawStr<'a>>,
    /// Droid: who a message is for (`user_only`: a hook's record; `llm_only`: a system reminder).
    pub(super) visibility: Option<RawStr<'a>>,
    /// Set for a sink that wants tool results: the fields below are read only then.
    pub(super) want_results: bool,
    pub(super) results: Vec<ResultBlock<'a>>,
    /// Pi: a `toolResult` message's call id and error flag; a `bashExecution`'s output and exit.
    pub(super) tool_call_id: Option<RawStr<'a>>,
    pub(super) is_error: bool,
    pub(super) output: Option<RawStr<'a>>,
    pub(super) exit_code: Option<&'a [u8]>,
    pub(super) cancelled: bool,
    /// Set for a sink that wants entries: Pi's result `details` and a reply that stopped short.
    pub(super) want_entries: bool,
    pub(super) details: Option<&'a [u8]>,
    pub(super) aborted: bool,
}

impl<'a> Message<'a> {
    pub(super) fn role_is(&self, role: &[u8]) -> bool {
        self.role.is_some_and(|r| r.is(role))
    }

    /// A Pi `toolResult` message's text: its text blocks.
    pub(super) fn result_text(&self) -> Option<Text<'a>> {
        match self.prompt_string {
            Some(s) => Some(Text::Raw(s)),
            None => ResultText::Parts(self.prompt_parts.clone()).text(),
        }
    }

    /// A Pi `bashExecution`'s result: failed when cancelled or its exit code is not 0, its text the
    /// exit code (as a first line) and its output.
    pub(super) fn bash_result(&self) -> (bool, Option<Text<'static>>) {
        let code = self.exit_code.and_then(integer);
        let failed = self.cancelled || code.is_some_and(|c| c != 0);
        let mut text = match (code, self.cancelled) {
            (_, true) => "Cancelled\n".to_owned(),
            (Some(c), false) => format!("Exit code: {c}\n"),
            (None, false) => String::new(),
        };
        if let Some(output) = self.output {
            text.push_str(&output.decode());
        }
        (failed, (!text.is_empty()).then_some(Text::Joined(text)))
    }

    pub(super) fn prompt(&self) -> Option<Text<'a>> {
        if self.tool_result {
            return None;
        }
        match self.prompt_string {
            Some(s) => Some(Text::Raw(s)),
            None if self.prompt_parts.len() == 1 => Some(Text::Raw(self.prompt_parts[0])),
            None => Text::join(&self.prompt_parts),
        }
    }
}

/// Reads one content block; stops the message at a tool result (nothing in it is needed), unless the
/// sink wants results: then the result is kept and the blocks after it are read too.
fn content_block<'a>(r: &mut Reader<'a>, msg: &mut Message<'a>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    let want = msg.want_results;
    let mut ty: Option<RawStr<'a>> = None;
    let (mut text, mut id, mut name, mut input) = (None, None, None, None);
    let (mut result_id, mut is_error, mut content) = (None, false, None);
    let flow = r.object(|r, key| {
        match key.raw {
            b"type" => {
                ty = r.string_or_skip()?;
                if !want && ty.is_some_and(|t| t.is(b"tool_result")) {
                    return Some(Flow::Stop);
                }
            }
            b"text" => text = r.string_or_skip()?,
            b"id" => id = r.string_or_skip()?,
            b"name" => name = r.string_or_skip()?,
            b"input" | b"arguments" => input = Some(r.span()?),
            b"tool_use_id" if want => result_id = r.string_or_skip()?,
            b"is_error" if want => is_error = r.boolean()?,
            b"content" if want => content = result_content(r)?,
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })?;
    let ty = ty?;
    if flow == Flow::Stop || ty.is(b"tool_result") {
        msg.tool_result = true;
        if want {
            msg.results.push(ResultBlock {
                id: result_id,
                is_error,
                content,
            });
            return Some(Flow::Continue);
        }
        return Some(Flow::Stop);
    }
    if ty.is(b"text") {
        if let Some(text) = text {
            msg.prompt_parts.push(text);
            msg.blocks.push(Block::Text(text));
        }
    } else if ty.is(b"tool_use") || ty.is(b"toolCall") {
        if let Some(name) = name {
            msg.blocks.push(Block::ToolUse {
                id: id.map(|i| hash64(i.raw)),
                name,
                input,
            });
        }
    }
    Some(Flow::Continue)
}

/// Reads a `message` object. Returns `Flow::Stop` when it stopped at a tool result.
pub(super) fn message<'a>(r: &mut Reader<'a>, msg: &mut Message<'a>) -> Option<Flow> {
    if r.peek()? != b'{' {
        r.skip()?;
        return Some(Flow::Continue);
    }
    r.object(|r, key| {
        match key.raw {
            b"role" => {
                msg.role = r.string_or_skip()?;
                if !msg.want_results && msg.role_is(b"toolResult") {
                    return Some(Flow::Stop);
                }
            }
            b"id" => msg.id = r.string_or_skip()?,
            b"model" => msg.model = r.string_or_skip()?,
            b"command" => msg.command = r.string_or_skip()?,
            b"visibility" => msg.visibility = r.string_or_skip()?,
            b"toolCallId" if msg.want_results => msg.tool_call_id = r.string_or_skip()?,
            b"isError" if msg.want_results => msg.is_error = r.boolean()?,
            b"output" if msg.want_results => msg.output = r.string_or_skip()?,
            b"exitCode" if msg.want_results => msg.exit_code = Some(r.span()?),
            b"cancelled" if msg.want_results => msg.cancelled = r.boolean()?,
            b"details" if msg.want_entries => msg.details = Some(r.span()?),
            b"stopReason" if msg.want_entries => {
                let reason = r.string_or_skip()?;
                msg.aborted = reason.is_some_and(|s| s.is(b"aborted") || s.is(b"error"));
            }
            b"content" => match r.peek()? {
                b'"' => msg.prompt_string = Some(r.string()?),
                b'[' => {
                    if r.array(|r| content_block(r, msg))? == Flow::Stop {
                        return Some(Flow::Stop);
                    }
                }
                _ => r.skip()?,
            },
            _ => r.skip()?,
        }
        Some(Flow::Continue)
    })
}

/// Reports the blocks of an assistant message.
pub(super) fn report_assistant<S: Sink>(msg: &Message<'_>, ts: Option<&RawStr<'_>>, sink: &mut S) {
    report_assistant_keys(msg, ts, sink, &PRIMARY_KEYS);
}

/// [`report_assistant`] with the keys of a tool input that name what it acts on (most telling first).
pub(super) fn report_assistant_keys<S: Sink, K: AsRef<[u8]>>(
    msg: &Message<'_>,
    ts: Option<&RawStr<'_>>,
    sink: &mut S,
    keys: &[K],
) {
    let entries = sink.wants_entries();
    for block in &msg.blocks {
        match block {
            Block::Text(text) => sink.assistant_text(text, ts),
            Block::ToolUse { id, name, input } => {
                let name = name.decode();
                let arguments = input.filter(|_| entries).map(Arguments::Json);
                let input = input
                    .map(|i| tool_input(i, &name, keys))
                    .unwrap_or_default();
                let call = ToolCall {
                    id: *id,
                    name: &name,
                    primary: input.primary,
                    files: input.files,
                    details: input.details,
                    arguments,
                };
                sink.tool_use(call, ts);
            }
        }
    }
}
