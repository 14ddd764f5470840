"""A scripted loopback model server for driving the real agent CLIs offline.

One server speaks both wire protocols the CLIs use:

* the Anthropic Messages API (`POST /v1/messages`, streamed SSE or plain JSON) for Claude Code and Pi
  (Pi with a custom provider whose `"api"` is `"anthropic-messages"`);
* the OpenAI Responses API (`POST /v1/responses`, streamed SSE) for Codex (`wire_api = "responses"`);
* the OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed `chat.completion.chunk` SSE or
  plain JSON) for Qwen Code, opencode, GitHub Copilot CLI (BYOK) and Factory Droid.
* the Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`) for the Gemini CLI.

Everything else a CLI may ask for at start-up (`count_tokens`, model listings, telemetry, ...) gets a
harmless answer, so no client ever waits on the mock.

A test gives a *script*: a list of turns, one per prompt the CLI sends, each a list of replies. Which reply
a request gets is decided from the request itself, so retries and extra requests cannot desynchronise it:

* a request whose newest message is a fresh prompt (not a tool result) starts the next turn (the same
  prompt seen again, e.g. a retry, maps to the same turn);
* within a turn, the reply index is the number of tool-result rounds since that prompt;
* a `Rule` (checked first) answers any request whose current prompt contains a marker, without using a
  turn (handy for a subagent's prompt, or for "when the prompt says X, reply Y");
* requests offering no tools (titles, summaries, quota probes) get a short text and use no turn;
* past the end of the script (or of a turn), the reply is plain text, which ends the agent loop.

Replies are client-neutral where it makes sense: `bash`, `write`, `edit` and `read` become the client's
own tool (Claude `Bash`/`Write`/`Edit`/`Read`, Pi `bash`/`write`/`edit`/`read`, Codex `exec_command` and
`apply_patch`, Gemini `run_shell_command`/`write_file`/`replace`/`read_file`, Qwen
`run_shell_command`/`write_file`/`edit`/`read_file`, opencode `bash`/`write`/`edit`/
`read`, Copilot `bash`/`create`/`edit`/`view`, Droid `Execute`/`Create`/`Edit`/`Read`, Kimi
`Shell`/`WriteFile`/`StrReplaceFile`/`ReadFile`), chosen from the tools the request offers, with the argument
names the offered tool's schema declares. `call` sends a tool call verbatim.

Every request is recorded (`MockAPI.requests`) with its decoded JSON body; `MockAPI.all_text()` returns all
bodies as one string to search for injected context.
"""

from __future__ import annotations

import gzip
import itertools
import json
import secrets
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = [
    "Call",
    "MockAPI",
    "RecordedRequest",
    "Reply",
    "Rule",
    "bash",
    "call",
    "edit",
    "read",
    "reply",
    "say",
    "write",
]

JSON = dict[str, Any]
CallKind = Literal["bash", "write", "edit", "read", "raw"]
DEFAULT_FINAL_TEXT = "Done."
SIDE_TEXT = "ok"


# --------------------------------------------------------------------------------------------- script


@dataclass(frozen=True)
class Call:
    """One tool call. `kind` "raw" sends `name`/`args` verbatim; the others are translated per client."""

    kind: CallKind
    args: JSON
    name: str = ""


@dataclass(frozen=True)
class Reply:
    """One model response: optional text, then zero or more tool calls (no calls: the turn ends)."""

    text: str | None = None
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Rule:
    """Answer requests whose current prompt contains `contains` with `turn` (indexed by tool rounds)."""

    contains: str
    turn: tuple[Reply, ...]
    # Only requests that offer tools are matched unless this is set (side requests quote prompts too).
    match_side_requests: bool = False


def say(text: str) -> Reply:
    """A final text reply."""
    return Reply(text=text)


def bash(command: str, text: str | None = None) -> Reply:
    return Reply(text=text, calls=(Call("bash", {"command": command}),))


def write(path: str, content: str, text: str | None = None) -> Reply:
    return Reply(text=text, calls=(Call("write", {"path": path, "content": content}),))


def edit(path: str, old: str, new: str, text: str | None = None) -> Reply:
    return Reply(text=text, calls=(Call("edit", {"path": path, "old": old, "new": new}),))


def read(path: str, text: str | None = None) -> Reply:
    return Reply(text=text, calls=(Call("read", {"path": path}),))


def call(name: str, args: JSON | str, text: str | None = None) -> Reply:
    """A tool call sent as is. For Codex a `str` argument makes a custom (freeform) tool call."""
    payload: JSON = {"input": args} if isinstance(args, str) else dict(args)
    return Reply(text=text, calls=(Call("raw", payload, name=name),))


def reply(*calls: Call | Reply, text: str | None = None) -> Reply:
    """Several tool calls in one response: `reply(bash("ls"), read("a.txt"), text="Looking.")`."""
    out: list[Call] = []
    for c in calls:
        out.extend(c.calls if isinstance(c, Reply) else (c,))
    return Reply(text=text, calls=tuple(out))


# --------------------------------------------------------------------------------------------- records


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # decoded JSON when possible, else the raw text
    raw: bytes
    api: Literal["anthropic", "openai", "chat", "gemini", "other"]
    # What the mock decided: "turn" (scripted turn N step K), "rule", "side", "extra", "other".
    decision: str = ""
    turn: int | None = None
    step: int | None = None
    reply: Reply | None = None
    time: float = field(default_factory=time.time)

    def text(self) -> str:
        """The body as text (JSON-serialised when decoded), for substring searches."""
        if isinstance(self.body, str):
            return self.body
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def is_model_call(self) -> bool:
        path = self.path.split("?", 1)[0].rstrip("/")
        return self.method == "POST" and (
            path.endswith(("/v1/messages", "/v1/responses", "/chat/completions")) or _is_gemini_generate(path)
        )


# --------------------------------------------------------------------------------------------- request views


def _text_of(content: Any) -> str:
    """All text inside an Anthropic/OpenAI content value (string or list of blocks), joined by newlines."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                for key in ("text", "input_text", "output_text"):
                    value = block.get(key)
                    if isinstance(value, str):
                        parts.append(value)
                if block.get("type") == "tool_result":
                    parts.append(_text_of(block.get("content")))
    return "\n".join(parts)


@dataclass
class _View:
    """What the script logic needs from a model request, independent of the wire protocol."""

    api: Literal["anthropic", "openai", "chat", "gemini"]
    tools: dict[str, JSON]  # offered tools by name
    prompt: str  # text of the newest prompt run (the prompt plus context messages beside it)
    prompt_key: str  # identifies that prompt (a retry gives the same key)
    rounds: int  # tool-call rounds (model responses) since that prompt
    stream: bool
    model: str


def _prompt_run(entries: list[Any], is_prompt: Any, is_context: Any) -> tuple[int, int]:
    """(start, end) of the newest run of prompt/context entries that holds a prompt; (-1, -1) if none.

    A *prompt run* is what a client sends for one typed prompt: the prompt itself plus the context
    messages it puts around it (Claude's `system` message with hook context, Pi's custom message as a
    second `user` message, Codex's `developer` and environment messages).
    """
    last = next((i for i in range(len(entries) - 1, -1, -1) if is_prompt(entries[i])), -1)
    if last < 0:
        return -1, -1
    start = last
    while start > 0 and (is_prompt(entries[start - 1]) or is_context(entries[start - 1])):
        start -= 1
    end = last
    while end + 1 < len(entries) and (is_prompt(entries[end + 1]) or is_context(entries[end + 1])):
        end += 1
    return start, end


def _key(start: int, texts: list[str], session: str) -> str:
    return f"{session}|{start}|{hash(chr(0).join(texts))}"


def _anthropic_view(body: JSON, session: str = "") -> _View:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = {t.get("name", ""): t for t in body.get("tools") or [] if isinstance(t, dict)}

    def is_tool_result(m: JSON) -> bool:
        content = m.get("content")
        return isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )

    def is_reminder_only(m: JSON) -> bool:
        # Claude Code may add a user message made only of <system-reminder> blocks: context, not a prompt.
        content = m.get("content")
        blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
        found = [b if isinstance(b, str) else b.get("text") for b in blocks if isinstance(b, (str, dict))]
        texts: list[str] = [t for t in found if isinstance(t, str) and t.strip()]
        return bool(texts) and all(t.lstrip().startswith("<system-reminder>") for t in texts)

    def is_prompt(m: JSON) -> bool:
        return m.get("role") == "user" and not is_tool_result(m) and not is_reminder_only(m)

    def is_context(m: JSON) -> bool:
        return m.get("role") not in ("user", "assistant") or (
            m.get("role") == "user" and not is_tool_result(m) and is_reminder_only(m)
        )

    start, end = _prompt_run(messages, is_prompt, is_context)
    run = messages[start : end + 1] if start >= 0 else []
    return _View(
        api="anthropic",
        tools=tools,
        prompt="\n".join(_text_of(m.get("content")) for m in run),
        # Keyed on the user messages only: clients rewrite their context messages between requests.
        prompt_key=_key(start, [_text_of(m.get("content")) for m in run if m.get("role") == "user"], session),
        rounds=sum(1 for m in messages[end + 1 :] if m.get("role") == "assistant"),
        stream=bool(body.get("stream")),
        model=str(body.get("model") or "mock-model"),
    )


_OPENAI_CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})


def _openai_view(body: JSON, session: str = "") -> _View:
    raw_items = body.get("input") or []
    if isinstance(raw_items, str):
        raw_items = [{"type": "message", "role": "user", "content": raw_items}]
    items = [it for it in raw_items if isinstance(it, dict)]
    tools: dict[str, JSON] = {}
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            name = t.get("name") or (t.get("function") or {}).get("name") or t.get("type", "")
            tools[str(name)] = t

    def is_message(it: JSON) -> bool:
        return bool(it.get("type", "message") == "message")

    def is_prompt(it: JSON) -> bool:
        return is_message(it) and it.get("role") == "user"

    def is_context(it: JSON) -> bool:
        return is_message(it) and it.get("role") in ("developer", "system")

    start, end = _prompt_run(items, is_prompt, is_context)
    run = items[start : end + 1] if start >= 0 else []
    # A round is one model response that called tools: a group of calls (reasoning may sit between).
    rounds = 0
    in_group = False
    for it in items[end + 1 :]:
        kind = it.get("type")
        if kind in _OPENAI_CALL_TYPES:
            rounds += 0 if in_group else 1
            in_group = True
        elif kind != "reasoning":
            in_group = False
    return _View(
        api="openai",
        tools=tools,
        prompt="\n".join(_text_of(it.get("content")) for it in run),
        prompt_key=_key(
            start, [_text_of(it.get("content")) for it in run if it.get("role") == "user"], session
        ),
        rounds=rounds,
        stream=bool(body.get("stream", True)),
        model=str(body.get("model") or "mock-model"),
    )


# Context a chat client puts into a user message of its own (Qwen's skill/date reminders and hook
# context, Copilot's reminders, Cline's hook context): such a message is not a typed prompt.
# A message that holds only sidelight's own text (Droid sends a hook's text as a user message of its own,
# after a tool's result too) is context, not a prompt.
_CHAT_CONTEXT_TAGS = (
    "<system-reminder>",
    "<system_reminder>",
    "<qwen:user-prompt-submit-context>",
    "[sidelight]",
    "[Session Activity]",
    "<hook_context ",
)


def _chat_view(body: JSON, session: str = "") -> _View:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tools: dict[str, JSON] = {}
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            inner = t.get("function")
            fn: JSON = inner if isinstance(inner, dict) else t
            tools[str(fn.get("name", ""))] = fn

    def is_context_only(m: JSON) -> bool:
        texts = [t for t in _item_texts(m) if t.strip()]
        return bool(texts) and all(t.lstrip().startswith(_CHAT_CONTEXT_TAGS) for t in texts)

    def is_prompt(m: JSON) -> bool:
        return m.get("role") == "user" and not is_context_only(m)

    def is_context(m: JSON) -> bool:
        return m.get("role") in ("system", "developer") or (m.get("role") == "user" and is_context_only(m))

    start, end = _prompt_run(messages, is_prompt, is_context)
    run = messages[start : end + 1] if start >= 0 else []
    return _View(
        api="chat",
        tools=tools,
        prompt="\n".join("\n".join(_item_texts(m)) for m in run),
        prompt_key=_key(start, ["\n".join(_item_texts(m)) for m in run if is_prompt(m)], session),
        # Every assistant message after the prompt is one model response (tool results are `tool` messages).
        rounds=sum(1 for m in messages[end + 1 :] if m.get("role") == "assistant"),
        stream=bool(body.get("stream")),
        model=str(body.get("model") or "mock-model"),
    )


def _item_texts(m: JSON) -> list[str]:
    content = m.get("content")
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]


# --------------------------------------------------------------------------------------------- translation


def _patch_add(path: str, content: str) -> str:
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "".join(f"+{line}\n" for line in lines)
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def _patch_update(path: str, old: str, new: str) -> str:
    minus = "".join(f"-{line}\n" for line in old.split("\n"))
    plus = "".join(f"+{line}\n" for line in new.split("\n"))
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{minus}{plus}*** End Patch\n"


def _anthropic_call(c: Call, tools: dict[str, JSON]) -> tuple[str, JSON]:
    if c.kind == "raw":
        return c.name, c.args
    pi_style = "bash" in tools or ("Bash" not in tools and "read" in tools)
    a = c.args
    if not pi_style:
        if c.kind == "bash":
            return "Bash", {"command": a["command"], "description": "Run a command"}
        if c.kind == "write":
            return "Write", {"file_path": a["path"], "content": a["content"]}
        if c.kind == "edit":
            return "Edit", {"file_path": a["path"], "old_string": a["old"], "new_string": a["new"]}
        return "Read", {"file_path": a["path"]}
    if c.kind == "bash":
        return "bash", {"command": a["command"]}
    if c.kind == "write":
        return "write", {"path": a["path"], "content": a["content"]}
    if c.kind == "edit":
        props = ((tools.get("edit") or {}).get("input_schema") or {}).get("properties") or {}
        if "edits" in props and "oldText" not in props:
            return "edit", {"path": a["path"], "edits": [{"oldText": a["old"], "newText": a["new"]}]}
        return "edit", {"path": a["path"], "oldText": a["old"], "newText": a["new"]}
    return "read", {"path": a["path"]}


def _openai_shell(command: str, tools: dict[str, JSON]) -> tuple[str, str, Any]:
    """(item type, tool name, arguments) for a shell command, using whichever shell tool is offered."""
    if "exec_command" in tools or not any(n in tools for n in ("shell_command", "shell")):
        return "function_call", "exec_command", {"cmd": command}
    if "shell_command" in tools:
        return "function_call", "shell_command", {"command": command}
    return "function_call", "shell", {"command": ["bash", "-lc", command]}


def _openai_call(c: Call, tools: dict[str, JSON]) -> tuple[str, str, Any]:
    """(item type "function_call" | "custom_tool_call", name, arguments object or custom input string)."""
    if c.kind == "raw":
        tool = tools.get(c.name)
        freeform = set(c.args) == {"input"} and isinstance(c.args["input"], str)
        if (tool is not None and tool.get("type") == "custom") or (tool is None and freeform):
            return "custom_tool_call", c.name, str(c.args.get("input", ""))
        return "function_call", c.name, c.args
    a = c.args
    if c.kind == "bash":
        return _openai_shell(a["command"], tools)
    if c.kind == "read":
        return _openai_shell(f"cat {a['path']}", tools)
    patch = (
        _patch_add(a["path"], a["content"])
        if c.kind == "write"
        else _patch_update(a["path"], a["old"], a["new"])
    )
    tool = tools.get("apply_patch")
    if tool is not None and tool.get("type") == "custom":
        return "custom_tool_call", "apply_patch", patch
    if tool is not None:
        params = ((tool.get("parameters") or (tool.get("function") or {}).get("parameters")) or {}).get(
            "properties"
        ) or {}
        key = "patch" if "patch" in params and "input" not in params else "input"
        return "function_call", "apply_patch", {key: patch}
    return _openai_shell(f"apply_patch <<'PATCH'\n{patch}PATCH", tools)


# Chat-completions tool names per neutral call, by client (Qwen, opencode, Copilot, Droid, Kimi), first
# offered wins.
_CHAT_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "bash": ("run_shell_command", "bash", "Execute", "Shell"),
    "write": ("write_file", "write", "create", "Create", "WriteFile"),
    "edit": ("edit", "replace", "Edit", "StrReplaceFile"),
    "read": ("read_file", "read", "view", "Read", "ReadFile"),
}
# Argument names, first one the tool's schema declares wins (Qwen snake_case, opencode camelCase, Copilot).
_CHAT_ARG_NAMES: dict[str, tuple[str, ...]] = {
    "path": ("file_path", "filePath", "path", "absolute_path"),
    "content": ("content", "file_text"),
    "old": ("old_string", "oldString", "old_str"),
    "new": ("new_string", "newString", "new_str"),
    "command": ("command",),
}


def _chat_call(c: Call, tools: dict[str, JSON]) -> tuple[str, JSON]:
    """(tool name, arguments) of a neutral call for a chat-completions client, from its offered tools."""
    if c.kind == "raw":
        return c.name, c.args
    names = _CHAT_TOOL_NAMES[c.kind]
    name = next((n for n in names if n in tools), names[0])
    if name == "StrReplaceFile":  # Kimi: {path, edit: {old, new}}
        return name, {"path": c.args["path"], "edit": {"old": c.args["old"], "new": c.args["new"]}}
    schema = (tools.get(name) or {}).get("parameters") or {}
    props = schema.get("properties") or {}
    args: JSON = {}
    for key, value in c.args.items():
        candidates = _CHAT_ARG_NAMES[key]
        args[next((k for k in candidates if k in props), candidates[0])] = value
    required = schema.get("required") or ()
    if "description" in required:  # opencode's and Copilot's bash require one
        args["description"] = "Run a command"
    if "riskLevel" in required:  # Droid's Execute
        args.update(summary="Run a command", riskLevel="low", riskLevelReason="a scripted test command")
    return name, args


# --------------------------------------------------------------------------------------------- wire formats


def _sse(events: list[tuple[str, JSON]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode() for name, data in events
    )


class _Ids:
    """Unique ids: a random per-server token (ids must not repeat across mocks, e.g. over `--resume`)."""

    def __init__(self) -> None:
        self._n = itertools.count(1)
        self._lock = threading.Lock()
        self._token = secrets.token_hex(6)

    def next(self, prefix: str) -> str:
        with self._lock:
            n = next(self._n)
        return f"{prefix}_{self._token}{n:012d}"


def _anthropic_message(r: Reply, view: _View, ids: _Ids) -> JSON:
    content: list[JSON] = []
    if r.text:
        content.append({"type": "text", "text": r.text})
    for c in r.calls:
        name, args = _anthropic_call(c, view.tools)
        content.append({"type": "tool_use", "id": ids.next("toolu_mock"), "name": name, "input": args})
    if not content:
        content.append({"type": "text", "text": DEFAULT_FINAL_TEXT})
    return {
        "id": ids.next("msg_mock"),
        "type": "message",
        "role": "assistant",
        "model": view.model,
        "content": content,
        "stop_reason": "tool_use" if r.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _anthropic_stream(msg: JSON) -> bytes:
    start = dict(msg, content=[], stop_reason=None, usage=dict(msg["usage"], output_tokens=1))
    events: list[tuple[str, JSON]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            delta: JSON = {"type": "text_delta", "text": block["text"]}
        else:
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": dict(block, input={}),
                    },
                )
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": msg["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def _openai_items(r: Reply, view: _View, ids: _Ids) -> list[JSON]:
    items: list[JSON] = []
    if r.text or not r.calls:
        items.append(
            {
                "type": "message",
                "id": ids.next("msg_mock"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": r.text or DEFAULT_FINAL_TEXT, "annotations": []}],
            }
        )
    for c in r.calls:
        kind, name, args = _openai_call(c, view.tools)
        if kind == "custom_tool_call":
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": ids.next("ctc_mock"),
                    "status": "completed",
                    "call_id": ids.next("call_mock"),
                    "name": name,
                    "input": args,
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": ids.next("fc_mock"),
                    "status": "completed",
                    "call_id": ids.next("call_mock"),
                    "name": name,
                    "arguments": json.dumps(args),
                }
            )
    return items


def _openai_response(items: list[JSON], view: _View, ids: _Ids, status: str = "completed") -> JSON:
    return {
        "id": ids.next("resp_mock"),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": view.model,
        "output": items,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }


def _openai_stream(items: list[JSON], view: _View, ids: _Ids) -> bytes:
    resp = _openai_response(items, view, ids)
    pending = dict(resp, status="in_progress", output=[], usage=None)
    seq = itertools.count()
    events: list[tuple[str, JSON]] = [
        ("response.created", {"type": "response.created", "response": pending}),
        ("response.in_progress", {"type": "response.in_progress", "response": pending}),
    ]

    def ev(name: str, **data: Any) -> None:
        events.append((name, {"type": name, "sequence_number": next(seq), **data}))

    for i, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            ev(
                "response.output_item.added",
                output_index=i,
                item=dict(item, status="in_progress", content=[]),
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            ev("response.content_part.added", output_index=i, item_id=item["id"], content_index=0, part=part)
            ev("response.output_text.delta", output_index=i, item_id=item["id"], content_index=0, delta=text)
            ev("response.output_text.done", output_index=i, item_id=item["id"], content_index=0, text=text)
            ev(
                "response.content_part.done",
                output_index=i,
                item_id=item["id"],
                content_index=0,
                part=dict(part, text=text),
            )
        elif item["type"] == "function_call":
            ev(
                "response.output_item.added",
                output_index=i,
                item=dict(item, status="in_progress", arguments=""),
            )
            ev(
                "response.function_call_arguments.delta",
                output_index=i,
                item_id=item["id"],
                delta=item["arguments"],
            )
            ev(
                "response.function_call_arguments.done",
                output_index=i,
                item_id=item["id"],
                arguments=item["arguments"],
            )
        else:
            ev("response.output_item.added", output_index=i, item=dict(item, status="in_progress", input=""))
            ev(
                "response.custom_tool_call_input.delta",
                output_index=i,
                item_id=item["id"],
                delta=item["input"],
            )
            ev(
                "response.custom_tool_call_input.done",
                output_index=i,
                item_id=item["id"],
                input=item["input"],
            )
        ev("response.output_item.done", output_index=i, item=item)
    ev("response.completed", response=resp)
    return _sse(events)


def _chat_message(r: Reply, view: _View, ids: _Ids) -> JSON:
    """The assistant message of a chat completion (`tool_calls` in the OpenAI function shape)."""
    calls = []
    for c in r.calls:
        name, args = _chat_call(c, view.tools)
        calls.append(
            {
                "id": ids.next("call_mock"),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        )
    text = r.text if r.text or calls else DEFAULT_FINAL_TEXT
    message: JSON = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return message


_CHAT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _chat_completion(message: JSON, view: _View, ids: _Ids) -> JSON:
    return {
        "id": ids.next("chatcmpl_mock"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": view.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": _CHAT_USAGE,
    }


def _chat_stream(message: JSON, view: _View, ids: _Ids, include_usage: bool) -> bytes:
    """`chat.completion.chunk` events: the text, one chunk per tool call, the finish reason, the usage
    (when asked for, with `choices: []`), then `data: [DONE]`; `data:` lines only, as OpenAI sends."""
    base = {"id": ids.next("chatcmpl_mock"), "object": "chat.completion.chunk", "created": int(time.time())}
    base["model"] = view.model
    chunks: list[JSON] = []

    def chunk(delta: JSON, finish: str | None = None) -> None:
        chunks.append(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}]))

    chunk({"role": "assistant", "content": message["content"] or ""})
    for i, tc in enumerate(message.get("tool_calls") or []):
        chunk({"tool_calls": [dict(tc, index=i)]})
    chunk({}, "tool_calls" if message.get("tool_calls") else "stop")
    if include_usage:
        chunks.append(dict(base, choices=[], usage=_CHAT_USAGE))
    out = b"".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n".encode() for c in chunks)
    return out + b"data: [DONE]\n\n"


# --------------------------------------------------------------------------------------------- Gemini API
#
# The Gemini CLI's wire protocol, kept apart from the others: `POST /v1beta/models/{model}:
# streamGenerateContent?alt=sse` (or `:generateContent`), a body of `contents` (`{role: user|model,
# parts: [{text} | {functionCall} | {functionResponse}]}`), `systemInstruction` and
# `tools[].functionDeclarations`; the reply is one `data:` event of `candidates[0].content.parts`.


def _is_gemini_generate(path: str) -> bool:
    return path.endswith((":streamGenerateContent", ":generateContent"))


def _gemini_tools(body: JSON) -> dict[str, JSON]:
    tools: dict[str, JSON] = {}
    for group in body.get("tools") or []:
        for decl in (group.get("functionDeclarations") or []) if isinstance(group, dict) else []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                tools[decl["name"]] = decl
    return tools


def _gemini_parts_text(content: JSON) -> str:
    parts = content.get("parts") or []
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _gemini_view(body: JSON, model: str, stream: bool, session: str = "") -> _View:
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]

    def is_tool_result(c: JSON) -> bool:
        return any(isinstance(p, dict) and "functionResponse" in p for p in c.get("parts") or [])

    def is_prompt(c: JSON) -> bool:
        # The hook's `<hook_context>` is a part of the prompt's own content, so it is in the prompt run.
        return c.get("role", "user") == "user" and not is_tool_result(c)

    start, end = _prompt_run(contents, is_prompt, lambda c: False)
    run = contents[start : end + 1] if start >= 0 else []
    texts = [_gemini_parts_text(c) for c in run]
    # The key leaves the hook's context out: a retry of one prompt may carry another digest.
    keyed = ["\n".join(t for t in text.split("\n") if not t.startswith("<hook_context>")) for text in texts]
    return _View(
        api="gemini",
        tools=_gemini_tools(body),
        prompt="\n".join(texts),
        prompt_key=_key(start, keyed, session),
        rounds=sum(1 for c in contents[end + 1 :] if c.get("role") == "model"),
        stream=stream,
        model=model,
    )


def _gemini_call(c: Call, tools: dict[str, JSON]) -> tuple[str, JSON]:
    """(name, args) of a call as the Gemini CLI's tools take it."""
    if c.kind == "raw":
        return c.name, c.args
    a = c.args
    if c.kind == "bash":
        return "run_shell_command", {"command": a["command"]}
    if c.kind == "write":
        return "write_file", {"file_path": a["path"], "content": a["content"]}
    if c.kind == "edit":
        args: JSON = {"file_path": a["path"], "old_string": a["old"], "new_string": a["new"]}
        if "instruction" in _gemini_params(tools, "replace"):  # required by Gemini CLI 0.61
            args["instruction"] = f"Replace the text in {a['path']}"
        return "replace", args
    props = _gemini_params(tools, "read_file")
    key = "absolute_path" if "absolute_path" in props and "file_path" not in props else "file_path"
    return "read_file", {key: a["path"]}


def _gemini_params(tools: dict[str, JSON], name: str) -> JSON:
    """The parameter properties a Gemini function declaration offers (either schema key)."""
    decl = tools.get(name) or {}
    schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _gemini_reply(r: Reply, view: _View) -> JSON:
    parts: list[JSON] = []
    if r.text or not r.calls:
        parts.append({"text": r.text or DEFAULT_FINAL_TEXT})
    for c in r.calls:
        name, args = _gemini_call(c, view.tools)
        parts.append({"functionCall": {"name": name, "args": args}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": view.model,
    }


# --------------------------------------------------------------------------------------------- server


class MockAPI:
    """A scripted Anthropic Messages + OpenAI Responses + Chat Completions server on 127.0.0.1 (port
    chosen by the OS).

    Use as a context manager, or call `start()` / `stop()`. `script` (list of turns, each a list of
    `Reply`) and `rules` can be replaced between CLI runs with `set_script()`.
    """

    def __init__(
        self,
        script: list[list[Reply]] | None = None,
        rules: list[Rule] | None = None,
        *,
        models: tuple[str, ...] = ("mock-model",),
        final_text: str = DEFAULT_FINAL_TEXT,
    ) -> None:
        self.requests: list[RecordedRequest] = []
        self.models = models
        self.final_text = final_text
        self._lock = threading.Lock()
        self._ids = _Ids()
        self._turns: list[list[Reply]] = []
        self._rules: list[Rule] = []
        self._turn_of_prompt: dict[str, int] = {}
        self.set_script(script or [], rules or [])
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- script

    def set_script(self, script: list[list[Reply]], rules: list[Rule] | None = None) -> None:
        """Replace the script; turns are counted afresh (recorded requests are kept)."""
        with self._lock:
            self._turns = [list(t) for t in script]
            self._rules = list(rules or [])
            self._turn_of_prompt = {}

    def add_turn(self, *replies: Reply) -> None:
        """Append one turn to the script (for a follow-up prompt, e.g. `--resume`)."""
        with self._lock:
            self._turns.append(list(replies))

    @property
    def turns_used(self) -> int:
        with self._lock:
            return len(self._turn_of_prompt)

    # ---- lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "mock not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MockAPI:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="mockapi", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- inspection

    def model_requests(self, api: str | None = None) -> list[RecordedRequest]:
        """Recorded `/messages`, `/responses` and `/chat/completions` calls (optionally of one API:
        "anthropic", "openai" (Responses) or "chat"), oldest first."""
        with self._lock:
            reqs = list(self.requests)
        return [r for r in reqs if r.is_model_call and (api is None or r.api == api)]

    def all_text(self) -> str:
        """Every recorded request body, serialised, joined by newlines: `assert MARKER in mock.all_text()`."""
        with self._lock:
            reqs = list(self.requests)
        return "\n".join(r.text() for r in reqs)

    def requests_containing(self, needle: str) -> list[RecordedRequest]:
        with self._lock:
            reqs = list(self.requests)
        return [r for r in reqs if needle in r.text()]

    def summary(self) -> str:
        """One line per recorded request, for assertion messages."""
        with self._lock:
            reqs = list(self.requests)
        lines = []
        for r in reqs:
            calls = ",".join(c.kind if c.kind != "raw" else c.name for c in r.reply.calls) if r.reply else ""
            lines.append(
                f"{r.method} {r.path} api={r.api} {r.decision} turn={r.turn} step={r.step} calls={calls}"
            )
        return "\n".join(lines)

    # ---- decision

    def _decide(self, view: _View, rec: RecordedRequest) -> Reply:
        with self._lock:
            if view.tools or any(r.match_side_requests for r in self._rules):
                for rule in self._rules:
                    if rule.contains in view.prompt and (view.tools or rule.match_side_requests):
                        rec.decision, rec.step = "rule", view.rounds
                        if view.rounds < len(rule.turn):
                            return rule.turn[view.rounds]
                        return Reply(text=self.final_text)
            if not view.tools:
                rec.decision = "side"
                return Reply(text=SIDE_TEXT)
            turn = self._turn_of_prompt.get(view.prompt_key)
            if turn is None:
                turn = len(self._turn_of_prompt)
                self._turn_of_prompt[view.prompt_key] = turn
            rec.turn, rec.step = turn, view.rounds
            if turn < len(self._turns) and view.rounds < len(self._turns[turn]):
                rec.decision = "turn"
                return self._turns[turn][view.rounds]
            rec.decision = "extra"
            return Reply(text=self.final_text)

    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(rec)

    def _error(
        self,
        rec: RecordedRequest,
        error: Exception,
        api: Literal["anthropic", "openai", "chat", "gemini"],
        body: JSON,
    ) -> tuple[_View, Reply]:
        rec.decision = f"error: {error!r}"
        stream = bool(body.get("stream", api == "openai"))
        view = _View(api, {}, "", "", 0, stream, str(body.get("model") or "mock-model"))
        return view, Reply(text=f"mockapi error: {error!r}")

    def _respond(self, rec: RecordedRequest) -> tuple[int, str, bytes]:
        """(status, content type, body) for a recorded request."""
        path = rec.path.split("?", 1)[0].rstrip("/")
        body = rec.body if isinstance(rec.body, dict) else {}
        if rec.method == "POST" and path.endswith("/messages/count_tokens"):
            rec.decision = "other"
            return 200, "application/json", json.dumps({"input_tokens": 100}).encode()
        if rec.method == "POST" and path.endswith("/messages"):
            try:
                view = _anthropic_view(body, rec.headers.get("x-claude-code-session-id", ""))
                r = self._decide(view, rec)
                msg = _anthropic_message(r, view, self._ids)
            except Exception as e:  # a bug or an odd request: answer with text rather than a 500 (retries)
                view, r = self._error(rec, e, "anthropic", body)
                msg = _anthropic_message(r, view, self._ids)
            rec.reply = r
            if view.stream:
                return 200, "text/event-stream", _anthropic_stream(msg)
            return 200, "application/json", json.dumps(msg).encode()
        if rec.method == "POST" and path.endswith("/chat/completions"):
            try:
                view = _chat_view(body)
                r = self._decide(view, rec)
                message = _chat_message(r, view, self._ids)
            except Exception as e:
                view, r = self._error(rec, e, "chat", body)
                message = _chat_message(r, view, self._ids)
            rec.reply = r
            if view.stream:
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return 200, "text/event-stream", _chat_stream(message, view, self._ids, include_usage)
            return 200, "application/json", json.dumps(_chat_completion(message, view, self._ids)).encode()
        if rec.method == "POST" and path.endswith("/responses"):
            try:
                view = _openai_view(body, rec.headers.get("session-id", ""))
                r = self._decide(view, rec)
                items = _openai_items(r, view, self._ids)
            except Exception as e:
                view, r = self._error(rec, e, "openai", body)
                items = _openai_items(r, view, self._ids)
            rec.reply = r
            if view.stream:
                return 200, "text/event-stream", _openai_stream(items, view, self._ids)
            return 200, "application/json", json.dumps(_openai_response(items, view, self._ids)).encode()
        if rec.method == "POST" and ":" in path.rsplit("/", 1)[-1]:
            return self._respond_gemini(rec, path, body)
        rec.decision = "other"
        if rec.method == "GET" and path.endswith("/models"):
            data = [
                {
                    "id": m,
                    "type": "model",
                    "object": "model",
                    "display_name": m,
                    "created_at": "2026-01-01T00:00:00Z",
                    "created": 0,
                    "owned_by": "mock",
                }
                for m in self.models
            ]
            # Both the Anthropic and the OpenAI list shape, plus the `models` key Codex reads.
            out = {"data": data, "object": "list", "has_more": False, "first_id": None, "last_id": None}
            return 200, "application/json", json.dumps(dict(out, models=[])).encode()
        return 200, "application/json", b"{}"

    def _respond_gemini(self, rec: RecordedRequest, path: str, body: JSON) -> tuple[int, str, bytes]:
        """A Gemini API call: `:streamGenerateContent` (SSE when `alt=sse`), `:generateContent`,
        `:countTokens`; any other method of a model gets `{}`."""
        model_path, _, method = path.rpartition(":")
        if method == "countTokens":
            rec.decision = "other"
            return 200, "application/json", json.dumps({"totalTokens": 100}).encode()
        if not _is_gemini_generate(path):
            rec.decision = "other"
            return 200, "application/json", b"{}"
        stream = method == "streamGenerateContent"
        model = model_path.rsplit("/", 1)[-1] or "mock-model"
        try:
            view = _gemini_view(body, model, stream)
            r = self._decide(view, rec)
            out = _gemini_reply(r, view)
        except Exception as e:  # as for the others: text, not a 500 the client would retry
            view, r = self._error(rec, e, "gemini", body)
            out = _gemini_reply(r, view)
        rec.reply = r
        if not stream:
            return 200, "application/json", json.dumps(out).encode()
        # `alt=sse`: `data:` events only, no event names (without it the API streams a JSON array).
        if "alt=sse" in rec.path:
            return 200, "text/event-stream", f"data: {json.dumps(out, ensure_ascii=False)}\n\n".encode()
        return 200, "application/json", json.dumps([out]).encode()


def _decode_body(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.lower().strip()
    try:
        if encoding == "gzip":
            return gzip.decompress(raw)
        if encoding == "deflate":
            return zlib.decompress(raw)
        if encoding == "zstd":
            import zstandard  # type: ignore[import-not-found]

            return bytes(zstandard.ZstdDecompressor().decompress(raw, max_output_size=1 << 28))
    except Exception:
        return raw
    return raw


def _make_handler(mock: MockAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "sidelight-mockapi/1"

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            pass

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size_line = self.rfile.readline()
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _handle(self) -> None:
            raw = self._read_body()
            data = _decode_body(raw, self.headers.get("Content-Encoding", ""))
            body: Any
            try:
                body = json.loads(data) if data else None
            except ValueError:
                body = data.decode("utf-8", "replace")
            path = self.path
            api: Literal["anthropic", "openai", "chat", "gemini", "other"] = "other"
            if "/chat/completions" in path:
                api = "chat"
            elif "/messages" in path:
                api = "anthropic"
            elif "/responses" in path:
                api = "openai"
            elif _is_gemini_generate(path.split("?", 1)[0]):
                api = "gemini"
            rec = RecordedRequest(
                method=self.command,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw=raw,
                api=api,
            )
            mock._record(rec)
            try:
                status, ctype, out = mock._respond(rec)
            except Exception as e:  # never leave a client waiting: answer with plain text
                rec.decision = f"error: {e!r}"
                status, ctype, out = 500, "application/json", json.dumps({"error": repr(e)}).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(out)))
            if ctype == "text/event-stream":
                self.send_header("Cache-Control", "no-cache")
            self.send_header("request-id", f"req_mock_{len(mock.requests)}")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(out)
            self.wfile.flush()

        do_GET = _handle
        do_POST = _handle
        do_PUT = _handle
        do_DELETE = _handle
        do_PATCH = _handle
        do_HEAD = _handle

    return Handler
