"""A plain-Python reference reader: docs/activity.md, implemented a second time, slowly and plainly.

The tests compute expected values with it instead of typing them in, and the benchmarks use it as the
"what you would write in Python" peer. It reads a whole file from offset 0, line by line, keeps only
complete lines (up to the last ``\\n``) and returns a dict with the keys of a scan result.

Keep it readable: this module is the executable form of the spec. Every rule below names the part of
docs/activity.md it implements.

Where docs/activity.md says nothing, this reader makes the choices below (those of the Rust core, so
that a difference points at a rule the spec does state):

- a primary argument is trimmed and cut to ``text_limit`` like the texts; a blank value does not count;
- ``title``, ``session_id`` and ``cwd`` are trimmed; a blank one is ignored;
- a tool-call id (Claude ``tool_use.id``, Pi ``toolCall.id``, Codex ``call_id``) counts once per scan;
- a Codex ``custom_tool_call`` other than ``apply_patch`` has its raw ``input`` as primary argument;
- "whitespace" is ``str.strip()``'s; a whitespace-only line is ASCII whitespace (``\\x0c`` included).
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

TOOL_USES_KEPT = 100
FILES_TOUCHED_KEPT = 500
# "an id among the last 65,536 ids counted is not counted again"
MESSAGE_IDS_KEPT = 65_536
DEFAULT_TEXT_LIMIT = 500
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
FORMATS = ("claude-code", "pi", "codex", "gemini", "qwen", "copilot", "droid")
CATEGORY_KEYS = ("edit", "read", "command", "other")

# "Primary argument of a tool use": the first of these keys whose value is a non-empty string.
PRIMARY_KEYS = ("file_path", "notebook_path", "command", "cmd", "pattern", "query", "url", "path")
# A `command` list that starts with one of these shells and `-c` / `-lc` becomes its last element.
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
SHELL_FLAGS = frozenset({"-c", "-lc"})

# A prompt starting with one of these (after trimming leading whitespace) is not a person's.
SYNTHETIC_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "Caveat: The messages below",
)
# Codex user message blocks that are context the CLI adds, not the person's prompt.
CODEX_CONTEXT_PREFIXES = (
    "<environment_context",
    "<user_instructions",
    "<permissions",
    "<INSTRUCTIONS>",
    "# AGENTS.md",
    "<user_shell_command",
)
# apply_patch headers naming a file the patch writes.
PATCH_FILE_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")

# Whitespace that makes a line "empty or only whitespace" (ASCII whitespace but \x0b, as Rust's).
LINE_WHITESPACE = b" \t\n\x0c\r"

# docs/agent-formats.md section 6, used only until `sidelight.formats.DEFAULT_CATEGORIES` exists.
_FALLBACK_CATEGORIES: dict[str, dict[str, str]] = {
    "claude-code": {
        **dict.fromkeys(("edit", "multiedit", "write", "notebookedit"), "edit"),
        **dict.fromkeys(
            (
                "read",
                "glob",
                "grep",
                "ls",
                "notebookread",
                "lsp",
                "webfetch",
                "websearch",
                "readmcpresourcetool",
            ),
            "read",
        ),
        **dict.fromkeys(
            ("bash", "powershell", "monitor", "bashoutput", "killshell", "taskoutput", "taskstop"), "command"
        ),
    },
    "pi": {
        **dict.fromkeys(("edit", "write"), "edit"),
        **dict.fromkeys(("read", "grep", "find", "ls"), "read"),
        **dict.fromkeys(("bash", "bashexecution"), "command"),
    },
    "gemini": {
        **dict.fromkeys(("replace", "write_file"), "edit"),
        **dict.fromkeys(
            (
                "read_file",
                "read_many_files",
                "glob",
                "grep_search",
                "search_file_content",
                "list_directory",
                "web_fetch",
                "google_web_search",
            ),
            "read",
        ),
        **dict.fromkeys(
            ("run_shell_command", "read_background_output", "list_background_processes"), "command"
        ),
    },
    "codex": {
        "apply_patch": "edit",
        "view_image": "read",
        **dict.fromkeys(
            ("shell", "shell_command", "exec_command", "write_stdin", "local_shell_call", "container.exec"),
            "command",
        ),
    },
}

Loads = Callable[[str], Any]


def default_categories(format: str) -> dict[str, str]:
    """The built-in tool-name → category map of ``format`` (from ``sidelight.formats`` when it exists)."""
    try:
        from sidelight.formats import DEFAULT_CATEGORIES  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return dict(_FALLBACK_CATEGORIES[format])
    return dict(DEFAULT_CATEGORIES[format])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def json_loads(text: str) -> Any:
    """``json.loads`` without the ``NaN`` / ``Infinity`` extensions (strict JSON, like orjson)."""
    return json.loads(text, parse_constant=_reject_constant)


def ascii_lower(name: str) -> str:
    """Lowercase ASCII letters only (the category lookup key)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in name)


def is_synthetic(prompt: str) -> bool:
    return prompt.lstrip().startswith(SYNTHETIC_PREFIXES)


def command_text(command: list[str]) -> str:
    """``["bash", "-lc", "npm test"]`` → ``npm test``; any other list is joined by spaces."""
    if len(command) >= 3 and command[0].rsplit("/", 1)[-1] in SHELLS and command[1] in SHELL_FLAGS:
        return command[-1]
    return " ".join(command)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def primary_arg(tool_input: Any) -> str | None:
    """The primary argument of a tool's input object (docs/activity.md, "Primary argument")."""
    if not isinstance(tool_input, dict):
        return None
    for key in PRIMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if key == "command" and _is_str_list(value) and value:
            text = command_text(value)
            if text:
                return text
    return None


#: A tool use's details: (lines created, old text, new text); docs/activity.md, "Tool details".
Details = tuple[int | None, str | None, str | None]
DETAIL_CHARS = 100


def line_count(text: str) -> int:
    """Lines of a text: ``\\n`` separates them, a final newline starts no new one."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _snippet(value: Any) -> str | None:
    return value.strip()[:DETAIL_CHARS] if isinstance(value, str) else None


def input_details(tool_input: Any) -> Details:
    """``content`` (or Copilot's ``file_text``) lines, and ``old_string``/``new_string`` (or
    ``oldText``/``newText``, Copilot's ``old_str``/``new_str``, or the first ``edits`` element's), read in
    the input's key order as the core does."""
    if not isinstance(tool_input, dict):
        return (None, None, None)
    lines: int | None = None
    old: Any = None
    new: Any = None
    for key, value in tool_input.items():
        if key in ("content", "file_text") and isinstance(value, str):
            lines = line_count(value)
        elif key in ("old_string", "oldText", "old_str"):
            old = value if isinstance(value, str) else None
        elif key in ("new_string", "newText", "new_str"):
            new = value if isinstance(value, str) else None
        elif key == "edits" and isinstance(value, list) and value and old is None and new is None:
            first = value[0]
            if isinstance(first, dict):
                for k, v in first.items():
                    if k in ("old_string", "oldText"):
                        old = v if isinstance(v, str) else None
                    elif k in ("new_string", "newText"):
                        new = v if isinstance(v, str) else None
    return (lines, _snippet(old), _snippet(new))


def patch_details(patch: str) -> Details:
    """The first file of a patch: an added file's ``+`` lines, or an update's first ``-``/``+`` line."""
    lines: int | None = None
    old: str | None = None
    new: str | None = None
    section: str | None = None
    for raw in patch.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.startswith("*** "):
            if section is not None and not line.startswith("*** Move to: "):
                break
            if line.startswith("*** Add File: "):
                section, lines = "add", 0
            elif line.startswith("*** Update File: "):
                section = "update"
            continue
        if section == "add" and line.startswith("+"):
            lines = (lines or 0) + 1
        elif section == "update" and line.startswith("-") and old is None:
            old = _snippet(line[1:])
        elif section == "update" and line.startswith("+") and new is None:
            new = _snippet(line[1:])
    return (lines, old, new)


def patch_files(patch: str) -> list[str]:
    """The files named by the ``*** Add/Update/Delete File:`` and ``*** Move to:`` lines of a patch."""
    files = []
    for line in patch.split("\n"):
        for header in PATCH_FILE_HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if path:
                    files.append(path)
                break
    return files


class Activity:
    """What one scan accumulates; ``as_dict()`` has the keys of a scan result."""

    def __init__(self, categories: Mapping[str, str], text_limit: int) -> None:
        self.category_map = categories
        self.text_limit = text_limit
        self.messages = {"user": 0, "assistant": 0}
        self.tools: Counter[str] = Counter()
        self.categories = dict.fromkeys(CATEGORY_KEYS, 0)
        self.tool_uses: deque[list[str | int | None]] = deque(maxlen=TOOL_USES_KEPT)
        self.files_touched: dict[str, None] = {}
        self.first_user_text: str | None = None
        self.last_user_text: str | None = None
        self.last_assistant_text: str | None = None
        self.first_timestamp: str | None = None
        self.last_timestamp: str | None = None
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.title: str | None = None
        self.title_rank = 0
        self.lines = 0
        self.bytes_consumed = 0
        self.skipped = {"malformed_json": 0, "invalid_utf8": 0, "too_long": 0}
        self.entry_types: Counter[str] = Counter()
        self.seen_message_ids: set[str] = set()
        self.message_id_order: deque[str] = deque()  # the same ids, oldest first
        self.seen_tool_ids: set[str] = set()
        # The `timestamp` of the line being handled.
        self.timestamp: str | None = None

    # -- the common fields -------------------------------------------------------------------

    def cut(self, text: str) -> str:
        return text[: self.text_limit]

    def stamp(self) -> None:
        """The current line counts something: its timestamp moves first/last_timestamp."""
        if self.timestamp is not None:
            if self.first_timestamp is None:
                self.first_timestamp = self.timestamp
            self.last_timestamp = self.timestamp

    def prompt(self, text: str) -> None:
        """A user prompt: counted unless empty or synthetic; the first one is `first_user_text`."""
        text = text.strip()
        if not text or is_synthetic(text):
            return
        self.messages["user"] += 1
        if self.first_user_text is None:
            self.first_user_text = self.cut(text)
        self.last_user_text = self.cut(text)
        self.stamp()

    def assistant_line(self, message_id: Any = None) -> None:
        """A line of an assistant message; a response counts once per ``message_id`` (a string)."""
        self.stamp()
        if isinstance(message_id, str):
            if message_id in self.seen_message_ids:
                return
            self.seen_message_ids.add(message_id)
            self.message_id_order.append(message_id)
            if len(self.message_id_order) > MESSAGE_IDS_KEPT:
                self.seen_message_ids.discard(self.message_id_order.popleft())
        self.messages["assistant"] += 1

    def assistant_text(self, text: Any) -> None:
        if isinstance(text, str):
            text = text.strip()
            if text:
                self.last_assistant_text = self.cut(text)

    def tool_use(
        self,
        name: Any,
        primary: str | None,
        edited: list[str] | None = None,
        tool_id: Any = None,
        details: Details = (None, None, None),
    ) -> None:
        """One tool use, counted once per ``tool_id`` (a string) in a scan.

        ``primary`` is kept trimmed and cut to ``text_limit`` like the texts; ``edited``: the files an
        edit writes (default: its primary argument).
        """
        if not isinstance(name, str):
            return
        if isinstance(tool_id, str):
            if tool_id in self.seen_tool_ids:
                return
            self.seen_tool_ids.add(tool_id)
        if primary is not None:
            primary = self.cut(primary.strip())
        self.stamp()
        category = self.category_map.get(ascii_lower(name), "other")
        self.tools[name] += 1
        self.categories[category] += 1
        self.tool_uses.append([name, category, primary, self.timestamp, *details])
        if category == "edit":
            if edited is None:
                edited = [primary] if primary else []
            for path in edited:
                if len(self.files_touched) >= FILES_TOUCHED_KEPT:
                    break
                self.files_touched.setdefault(path, None)

    def set_first(self, field: str, value: Any) -> None:
        """``session_id`` / ``cwd``: from the first line that carries them (trimmed, not empty)."""
        if isinstance(value, str) and value.strip() and getattr(self, field) is None:
            setattr(self, field, value.strip())

    def set_title(self, value: Any, rank: int) -> None:
        """The newest title (trimmed, not empty) of the best kind seen so far (a higher ``rank`` wins)."""
        if isinstance(value, str) and value.strip() and rank >= self.title_rank:
            self.title = value.strip()
            self.title_rank = rank

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages": dict(self.messages),
            "tools": dict(self.tools),
            "categories": dict(self.categories),
            "tool_uses": list(self.tool_uses),
            "files_touched": list(self.files_touched),
            "first_user_text": self.first_user_text,
            "last_user_text": self.last_user_text,
            "last_assistant_text": self.last_assistant_text,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "lines": self.lines,
            "bytes_consumed": self.bytes_consumed,
            "skipped": dict(self.skipped),
            "entry_types": dict(self.entry_types),
        }


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The dict blocks of a content list (anything else: none)."""
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


def _texts(blocks: list[dict[str, Any]], types: tuple[str, ...]) -> list[str]:
    return [b["text"] for b in blocks if b.get("type") in types and isinstance(b.get("text"), str)]


# -- Claude Code ---------------------------------------------------------------------------------

CLAUDE_TITLE_FIELDS = {
    "custom-title": ("customTitle", 3),
    "ai-title": ("aiTitle", 2),
    "summary": ("summary", 1),
}


def claude_code_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    acc.set_first("session_id", line.get("sessionId"))
    acc.set_first("cwd", line.get("cwd"))
    if kind in CLAUDE_TITLE_FIELDS:
        field, rank = CLAUDE_TITLE_FIELDS[kind]
        acc.set_title(line.get(field), rank)
        return
    if kind == "user":
        claude_code_user(acc, line)
    elif kind == "assistant":
        claude_code_assistant(acc, line)
    # "attachment" and every other type: not counted.


def _tag(text: str, tag: str, *, last_close: bool = False) -> str | None:
    """The text between ``<tag>`` and ``</tag>`` (the last ``</tag>`` with ``last_close``), or None."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    close = f"</{tag}>"
    end = text.rfind(close) if last_close else text.find(close, start)
    return text[start:end] if end >= start else None


def claude_slash_command(prompt: str) -> str:
    """docs/activity.md, Claude Code, "A slash command the person typed that goes to the model": a
    prompt that starts with ``<command-message>`` and names a ``<command-name>`` is ``/name args``; any
    other prompt is returned as it is."""
    if not prompt.lstrip().startswith("<command-message>"):
        return prompt
    name_at = prompt.find("<command-name>")
    name = _tag(prompt, "command-name")
    if name is None or not name.strip():
        return prompt
    name = name.strip()
    after_name = prompt[prompt.find("</command-name>", name_at) + len("</command-name>") :]
    args = (_tag(after_name, "command-args", last_close=True) or "").strip()
    command = name if name.startswith("/") else "/" + name
    return f"{command} {args}" if args else command


def claude_code_user(acc: Activity, line: dict[str, Any]) -> None:
    if line.get("isMeta") is True or line.get("isCompactSummary") is True or line.get("isSidechain") is True:
        return
    message = line.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, str):
        acc.prompt(claude_slash_command(content))
    elif isinstance(content, list):
        blocks = _blocks(content)
        if any(block.get("type") == "tool_result" for block in blocks):
            return
        acc.prompt(claude_slash_command("\n".join(_texts(blocks, ("text",)))))


def claude_code_assistant(acc: Activity, line: dict[str, Any]) -> None:
    message = line.get("message")
    if not isinstance(message, dict) or message.get("model") == "<synthetic>":
        return
    acc.assistant_line(message.get("id"))
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text":
            acc.assistant_text(block.get("text"))
        elif kind == "tool_use":
            tool_input = block.get("input")
            details = input_details(tool_input)
            acc.tool_use(block.get("name"), primary_arg(tool_input), tool_id=block.get("id"), details=details)


# -- Pi ------------------------------------------------------------------------------------------


def pi_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    if kind == "session":
        acc.set_first("session_id", line.get("id"))
        acc.set_first("cwd", line.get("cwd"))
    elif kind == "session_info":
        acc.set_title(line.get("name"), 1)
    elif kind == "message":
        message = line.get("message")
        if isinstance(message, dict):
            pi_message(acc, message)
    # "custom_message" (ours, "session-update", or another extension's) and every other type: not counted.


def pi_message(acc: Activity, message: dict[str, Any]) -> None:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        if isinstance(content, str):
            acc.prompt(content)
        else:
            acc.prompt("\n".join(_texts(_blocks(content), ("text",))))
    elif role == "assistant":
        acc.assistant_line()
        for block in _blocks(content):
            kind = block.get("type")
            if kind == "text":
                acc.assistant_text(block.get("text"))
            elif kind == "toolCall":
                arguments = block.get("arguments")
                details = input_details(arguments)
                acc.tool_use(
                    block.get("name"), primary_arg(arguments), tool_id=block.get("id"), details=details
                )
    elif role == "bashExecution":
        acc.tool_use("bashExecution", primary_arg({"command": message.get("command")}))
    # toolResult, custom, branchSummary, compactionSummary: not counted.


# -- Codex ---------------------------------------------------------------------------------------


def codex_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    payload = line.get("payload")
    if not isinstance(payload, dict):
        payload = {}
    if kind == "session_meta":
        acc.set_first("session_id", payload.get("id"))
        acc.set_first("cwd", payload.get("cwd"))
    elif kind == "response_item":
        codex_item(acc, payload)
    elif kind is None and "payload" not in line:
        # A rollout from before session_meta: its first line {id, timestamp, instructions}.
        acc.set_first("session_id", line.get("id"))
    elif kind in CODEX_BARE_ITEMS and "payload" not in line:
        codex_item(acc, line)  # ... and its items, bare
    # event_msg, turn_context and every other type: not counted.


#: What an old rollout writes without the response_item wrapper.
CODEX_BARE_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
        "reasoning",
    }
)


def codex_item(acc: Activity, item: dict[str, Any]) -> None:
    kind = item.get("type")
    call_id = item.get("call_id")
    if kind == "message":
        blocks = _blocks(item.get("content"))
        role = item.get("role")
        if role == "user":
            texts = [
                text
                for text in _texts(blocks, ("input_text", "text"))
                if not text.strip().startswith(CODEX_CONTEXT_PREFIXES)
            ]
            acc.prompt("\n".join(texts))
        elif role == "assistant":
            acc.assistant_line()
            for text in _texts(blocks, ("output_text", "text")):
                acc.assistant_text(text)
        # developer / system: ignored.
    elif kind == "function_call":
        name = item.get("name")
        arguments = item.get("arguments")
        tool_input: Any = None
        if isinstance(arguments, str):
            try:
                tool_input = json_loads(arguments)
            except (ValueError, RecursionError):
                tool_input = None
        if not isinstance(tool_input, dict):
            tool_input = {}
        command = tool_input.get("command")
        patch: Any = None
        if name == "apply_patch":
            patch = tool_input.get("input")
            if not isinstance(patch, str):
                patch = tool_input.get("patch")
        elif _is_str_list(command) and len(command) > 1 and command[0] == "apply_patch":
            patch = command[-1]
        files = patch_files(patch) if isinstance(patch, str) else []
        details = patch_details(patch) if isinstance(patch, str) else input_details(tool_input)
        if files:  # an apply_patch, however it was called
            acc.tool_use("apply_patch", files[0], edited=files, tool_id=call_id, details=details)
        else:
            acc.tool_use(name, primary_arg(tool_input), tool_id=call_id, details=details)
    elif kind == "custom_tool_call":
        name = item.get("name")
        raw = item.get("input")
        if name == "apply_patch":
            files = patch_files(raw) if isinstance(raw, str) else []
            details = patch_details(raw) if isinstance(raw, str) else (None, None, None)
            acc.tool_use(name, files[0] if files else None, edited=files, tool_id=call_id, details=details)
        else:  # the raw input is the primary argument
            primary = raw if isinstance(raw, str) and raw.strip() else None
            acc.tool_use(name, primary, tool_id=call_id)
    elif kind in ("local_shell_call", "web_search_call"):
        action = item.get("action")
        key = "command" if kind == "local_shell_call" else "query"
        value = action.get(key) if isinstance(action, dict) else None
        acc.tool_use(kind, primary_arg({key: value}), tool_id=call_id)
    # reasoning, function_call_output, custom_tool_call_output and others: ignored.


# -- Gemini CLI ----------------------------------------------------------------------------------

# "Gemini CLI": the keys of a tool's arguments that give its primary argument, in this order.
GEMINI_PRIMARY_KEYS = ("file_path", "absolute_path", "command", "pattern", "query", "url", "dir_path", "path")
GEMINI_SESSION_CONTEXT = "<session_context>"
GEMINI_HOOK_OPEN, GEMINI_HOOK_CLOSE = "<hook_context>", "</hook_context>"


def gemini_without_hook_context(text: str) -> str:
    """A user part without the ``<hook_context>`` blocks at its start (an unclosed one: nothing left)."""
    rest = text.lstrip()
    while rest.startswith(GEMINI_HOOK_OPEN):
        end = rest.find(GEMINI_HOOK_CLOSE)
        if end < 0:
            return ""
        rest = rest[end + len(GEMINI_HOOK_CLOSE) :].lstrip()
    return rest


def _gemini_parts(content: Any) -> list[dict[str, Any]]:
    """A Gemini ``content``: a string is one text part; a list keeps its object parts."""
    if isinstance(content, str):
        return [{"text": content}]
    return _blocks(content)


def gemini_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    acc.set_first("session_id", line.get("sessionId"))
    patch = line.get("$set")
    if isinstance(patch, dict):
        acc.set_title(patch.get("summary"), 2)  # the history a patch restates is not counted again
    parts = _gemini_parts(line.get("content"))
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("thought") is not True]
    if kind == "user":
        if any("functionResponse" in p for p in parts):
            return  # tool results
        if texts and texts[0].lstrip().startswith(GEMINI_SESSION_CONTEXT):
            return  # the CLI's own context
        kept = [t for t in map(gemini_without_hook_context, texts) if t]
        if kept:
            acc.prompt("\n".join(kept))
    elif kind == "gemini":
        acc.assistant_line(line.get("id"))
        calls = line.get("toolCalls")
        if not isinstance(calls, list):  # a line with tool calls rewrites a reply already written
            for text in texts:
                acc.assistant_text(text)
        content_calls = [p.get("functionCall") for p in parts]
        for call in [*content_calls, *(calls if isinstance(calls, list) else [])]:
            if not isinstance(call, dict):
                continue
            args = call.get("args")
            args = args if isinstance(args, dict) else {}
            primary = next(
                (args[k] for k in GEMINI_PRIMARY_KEYS if isinstance(args.get(k), str) and args[k].strip()),
                None,
            )
            acc.tool_use(call.get("name"), primary, tool_id=call.get("id"), details=input_details(args))
    # info, error, warning, headers and patches: not counted.


# -- Qwen Code -----------------------------------------------------------------------------------

# How Qwen Code wraps a prompt hook's text, stored as a part of the prompt's own line.
QWEN_HOOK_CONTEXT = "<qwen:user-prompt-submit-context>"


def qwen_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    acc.set_first("session_id", line.get("sessionId"))
    acc.set_first("cwd", line.get("cwd"))
    message = line.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    if kind == "user":
        # A prompt a person typed has provenance "real_user" (older versions wrote none).
        if line.get("provenance", "real_user") != "real_user":
            return
        # "A `user` line with `subtype: "notification"` is a background task's notice."
        if line.get("subtype") == "notification":
            return
        texts = [
            p["text"]
            for p in parts
            if isinstance(p.get("text"), str)
            and not isinstance(p.get("functionCall"), dict)
            and p.get("thought") is not True
            and not p["text"].lstrip().startswith(QWEN_HOOK_CONTEXT)
        ]
        acc.prompt("\n".join(texts))
    elif kind == "assistant":
        acc.assistant_line()
        for p in parts:
            call = p.get("functionCall")
            if isinstance(call, dict):
                args = call.get("args")
                acc.tool_use(
                    call.get("name"), primary_arg(args), tool_id=call.get("id"), details=input_details(args)
                )
            elif p.get("thought") is not True:
                acc.assistant_text(p.get("text"))
    # tool_result and system (telemetry, attribution snapshots): not counted.


# -- GitHub Copilot CLI --------------------------------------------------------------------------


def copilot_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    data = line.get("data")
    if not isinstance(data, dict):
        data = {}
    if kind in ("session.start", "session.resume"):
        acc.set_first("session_id", data.get("sessionId"))
        context = data.get("context")
        acc.set_first("cwd", context.get("cwd") if isinstance(context, dict) else None)
    elif kind == "user.message":
        # `content` is what the person typed; `transformedContent` (with our hook's text) is not read.
        if isinstance(data.get("content"), str):
            acc.prompt(data["content"])
    elif kind == "assistant.message":
        acc.assistant_line(data.get("messageId"))
        acc.assistant_text(data.get("content"))
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if not isinstance(request, dict):
                continue
            args = request.get("arguments")
            args = args if isinstance(args, dict) else None
            acc.tool_use(
                request.get("name"),
                primary_arg(args),
                tool_id=request.get("toolCallId"),
                details=input_details(args),
            )
    # hook.start / hook.end (our own output among them), tool.execution_*, turns, usage: not counted.


# -- Factory Droid -------------------------------------------------------------------------------

#: Droid's keys of a tool input that name what it acts on, beside the common ones (`LS`, `Glob`).
DROID_KEYS = ("directory_path", "folder")


def droid_line(acc: Activity, line: dict[str, Any], kind: str | None) -> None:
    if kind == "session_start":
        acc.set_first("session_id", line.get("id"))
        acc.set_first("cwd", line.get("cwd"))
        acc.set_title(line.get("title"), 2)
        return
    message = line.get("message")
    # A message with a `visibility` is a hook's record (`user_only`) or a system reminder (`llm_only`).
    if kind != "message" or not isinstance(message, dict) or "visibility" in message:
        return
    content = message.get("content")
    if message.get("role") == "user":
        blocks = _blocks(content)
        if any(b.get("type") == "tool_result" for b in blocks):
            return
        acc.prompt(content if isinstance(content, str) else "\n".join(_texts(blocks, ("text",))))
    elif message.get("role") == "assistant":
        acc.assistant_line(line.get("id"))
        for block in _blocks(content):
            if block.get("type") == "text":
                acc.assistant_text(block.get("text"))
            elif block.get("type") == "tool_use":
                name, tool_input = block.get("name"), block.get("input")
                patch = (
                    tool_input.get("input") if name == "ApplyPatch" and isinstance(tool_input, dict) else None
                )
                files = patch_files(patch) if isinstance(patch, str) else []
                if files:
                    details = patch_details(patch) if isinstance(patch, str) else (None, None, None)
                    acc.tool_use(name, files[0], edited=files, tool_id=block.get("id"), details=details)
                    continue
                primary = primary_arg(tool_input)
                if primary is None and isinstance(tool_input, dict):
                    primary = primary_arg(
                        {"path": next((tool_input.get(k) for k in DROID_KEYS if k in tool_input), None)}
                    )
                acc.tool_use(name, primary, tool_id=block.get("id"), details=input_details(tool_input))
    # agent_turn_outcome and every other type: not counted.


# -- the reader ----------------------------------------------------------------------------------

LineHandler = Callable[[Activity, dict[str, Any], "str | None"], None]
HANDLERS: dict[str, LineHandler] = {
    "claude-code": claude_code_line,
    "pi": pi_line,
    "codex": codex_line,
    "gemini": gemini_line,
    "qwen": qwen_line,
    "copilot": copilot_line,
    "droid": droid_line,
}


def reference_scan(
    path: str | Path,
    format: str,
    *,
    categories: Mapping[str, str] | None = None,
    text_limit: int = DEFAULT_TEXT_LIMIT,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    loads: Loads = json_loads,
) -> dict[str, Any]:
    """Scan the complete lines of ``path`` from offset 0 the way docs/activity.md says.

    ``categories`` defaults to the built-in map of ``format``; ``loads`` decodes one line (a ``str``):
    ``json_loads`` (strict stdlib), ``orjson.loads``, …
    """
    if format not in HANDLERS:
        raise ValueError(f"unknown format: {format!r}")
    handler = HANDLERS[format]
    if categories is None:
        categories = default_categories(format)
    acc = Activity(categories, text_limit)
    with Path(path).open("rb") as file:
        for raw in file:
            if not raw.endswith(b"\n"):
                break  # a partial last line stays for the next scan
            acc.bytes_consumed += len(raw)
            if not raw.strip(LINE_WHITESPACE):
                continue  # empty lines are not counted anywhere
            acc.lines += 1
            line = raw[:-1]
            if len(line) > max_line_bytes:
                acc.skipped["too_long"] += 1
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                acc.skipped["invalid_utf8"] += 1
                continue
            try:
                obj = loads(text)
            except (ValueError, RecursionError):  # json and orjson errors are ValueErrors
                obj = None
            if not isinstance(obj, dict):
                acc.skipped["malformed_json"] += 1
                continue
            kind = obj.get("type")
            kind = kind if isinstance(kind, str) else None
            acc.entry_types[kind if kind is not None else "<none>"] += 1
            timestamp = obj.get("timestamp")
            acc.timestamp = timestamp if isinstance(timestamp, str) else None
            handler(acc, obj, kind)
    return acc.as_dict()


def normalize(result: dict[str, Any]) -> dict[str, Any]:
    """A scan result (this module's, ``_core.scan``'s, ``Activity.as_dict()``'s) as plain data."""
    out = dict(result)
    if "tool_uses" in out:
        out["tool_uses"] = [
            [
                use["name"],
                use["category"],
                use["primary_arg"],
                use["timestamp"],
                use.get("lines"),
                use.get("old_text"),
                use.get("new_text"),
            ]
            if isinstance(use, dict)
            else list(use)
            for use in out["tool_uses"]
        ]
    for key in ("messages", "tools", "categories", "skipped", "entry_types"):
        if key in out and out[key] is not None:
            out[key] = dict(out[key])
    if "files_touched" in out:
        out["files_touched"] = list(out["files_touched"])
    return out


def opencode_counts(db: str | Path, session_id: str) -> dict[str, Any]:
    """What docs/activity.md counts for one opencode session, read straight from opencode's SQLite
    database (not from sidelight's export): prompts (user messages with a text part that is neither
    ``synthetic`` nor ``ignored``), assistant messages (one per step), tool parts by name, the files of
    ``write``/``edit``/``multiedit`` calls, and how many synthetic parts (sidelight's digests) there are."""
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        roles = {
            mid: json.loads(data).get("role")
            for mid, data in connection.execute(
                "SELECT id, data FROM message WHERE session_id = ?", (session_id,)
            )
        }
        parts = connection.execute(
            "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id", (session_id,)
        ).fetchall()
    prompts: set[str] = set()
    synthetic = 0
    tools: Counter[str] = Counter()
    files: list[str] = []
    for mid, data in parts:
        part = json.loads(data)
        if part.get("type") == "text" and roles.get(mid) == "user":
            if part.get("synthetic"):
                synthetic += 1
            elif not part.get("ignored") and str(part.get("text", "")).strip():
                prompts.add(mid)
        elif part.get("type") == "tool":
            tools[part["tool"]] += 1
            path = part.get("state", {}).get("input", {}).get("filePath")
            if part["tool"] in ("write", "edit", "multiedit") and path and path not in files:
                files.append(path)
    return {
        "user": len(prompts),
        "assistant": sum(1 for role in roles.values() if role == "assistant"),
        "tools": dict(tools),
        "files": files,
        "synthetic": synthetic,
    }
