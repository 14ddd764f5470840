"""Collapsing a transcript into a plain log: one line per message or tool call.

A session's transcript is mostly tool output (file contents, command output, API request blobs). For a
recap, each tool call becomes one plain sentence that keeps the detail where state changed and drops
the output, whatever the agent (any of the seven built in, or a plugin's format):

- **observational** (looked, changed nothing): ``Read src/app.py (15 lines).``,
  ``Listed directory src: app.py, tests/.``, ``Searched for 'TODO' in src (3 matches).``,
  ``Recalled: 'deploy steps'.``, read-only shell commands (``Ran `git diff`.``);
- **consequential** (changed something): ``Edited src/app.py: replaced 'x = 1' with 'x = 2'.``,
  ``Wrote notes.txt (20 lines).``, ``Remembered: 'the API key lives in vault'.``,
  ``Asked user: 'Which database?'. Response: 'Postgres'.``, commands with their outcome when the result
  shows it (``Ran `pytest -q`: failed (exit 1): 2 failed, 10 passed.``);
- **meta**: status checks (``git status``, polling a background command, reading a plan) are dropped;
  ``Finished: '...'`` and plan updates are kept.

User and assistant text passes through (sanitized: terminal escapes stripped, secrets redacted);
thinking blocks, tool output and sidelight's own injected text do not.

The transcript is decoded by the native core, whatever its format (a built-in one, a declared one or
one a plugin decodes in Python), and read in chunks of entries (lines longer than a limit are skipped
without being read into memory), so a file of any size is collapsed in bounded memory. Only the
collapsing is done here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from sidelight import _core
from sidelight.commands import (
    EXIT_CODE,
    command_key,
    command_outcome,
    command_parts,
    is_read_only,
    is_status_check,
)
from sidelight.features.reader import squeeze_blank_lines
from sidelight.formats import categories_for
from sidelight.lines import KINDS, Chunk, Line, LineKind, Subagent
from sidelight.redact import redact, sanitize, sanitize_lines

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

__all__ = [
    "KINDS",
    "Chunk",
    "Line",
    "LineKind",
    "ToolCall",
    "ToolResult",
    "TranscriptLog",
    "collapse_tool",
    "command_key",
    "command_outcome",
    "is_acknowledgement",
]


#: Lines of a transcript longer than this are skipped (streamed past, never held in memory).
MAX_LINE_BYTES: Final = 8 * 1024 * 1024
#: User and assistant text is kept up to this many characters per message.
TEXT_LIMIT: Final = 4000
#: Cuts inside a tool line: a snippet of edited text, a command, a path, a question or answer.
SNIPPET_LIMIT: Final = 60
COMMAND_LIMIT: Final = 100
PATH_LIMIT: Final = 160
QUOTE_LIMIT: Final = 160
#: How many directory entries a listing names.
LISTED_ENTRIES: Final = 8
#: Tool calls waiting for their result; past this, the oldest is written without one.
MAX_PENDING: Final = 256


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the transcript recorded it, whatever the format."""

    name: str
    args: Mapping[str, Any]
    id: str | None = None
    timestamp: str | None = None
    #: Codex ``apply_patch`` and other custom tools take one raw string instead of arguments.
    raw_input: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returned: its text, whether it failed, and structured details where the agent
    records them (Claude Code ``toolUseResult``, Pi ``details``)."""

    text: str = ""
    is_error: bool = False
    details: Mapping[str, Any] = field(default_factory=dict)
    #: How many lines the whole text has, when ``text`` holds only its ends (``None``: it is whole).
    lines: int | None = None


#: Makes a tool's line: ``line(kind, text, path=None, failed=False)``.
_Make: TypeAlias = "Callable[..., Line]"


# --- one tool call ----------------------------------------------------------------------------------


# The command rules (a retry's key, an outcome from the output) are shared with the digest.


def clip(text: str, limit: int) -> str:
    """:func:`~sidelight.redact.sanitize` cut at a word boundary: a text longer than ``limit`` ends
    with the last whole word that fits and ``…`` (mid-word only when its first half has no space)."""
    out = sanitize(text, limit)
    if not out.endswith("…") or len(out) < 2:
        return out
    kept = out[:-1]
    space = kept.rfind(" ")
    if space > limit // 2:
        kept = kept[:space].rstrip(" ,;:")
    return kept + "…"


def _quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    return "'" + clip(text, limit) + "'"


def _replacement(old: str, new: str) -> str:
    """What an edit did to its text: ``replaced 'a' with 'b'``, ``inserted 'b'`` or ``removed 'a'``."""
    if not old and new:
        return f"inserted '{new}'"
    if old and not new:
        return f"removed '{old}'"
    return f"replaced '{old}' with '{new}'"


#: Control characters sent to a running command, by what they do.
_KEYS: Final = {
    "\x03": "Interrupted a running command (Ctrl-C)",
    "\x04": "Closed a running command's input (Ctrl-D)",
}


def _snippet_pair(old: str, new: str) -> tuple[str, str]:
    """The changed part of an edit: the lines that differ, common leading and trailing lines dropped
    (secrets redacted first: a line may hold the rest of a key cut by a line break)."""
    old_lines, new_lines = _redacted_lines(old), _redacted_lines(new)
    start = 0
    while start < min(len(old_lines), len(new_lines)) - 1 and old_lines[start] == new_lines[start]:
        start += 1
    end = 0
    while (
        end < min(len(old_lines), len(new_lines)) - start - 1 and old_lines[-1 - end] == new_lines[-1 - end]
    ):
        end += 1
    old_part = "\n".join(old_lines[start : len(old_lines) - end])
    new_part = "\n".join(new_lines[start : len(new_lines) - end])
    return clip(old_part, SNIPPET_LIMIT), clip(new_part, SNIPPET_LIMIT)


def _line_count(text: str) -> int:
    return 0 if not text else text.count("\n") + (0 if text.endswith("\n") else 1)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("ch") else f"{n} {word}s"


def _first(args: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value:
            return value
    return None


_MARKUP_LINE: Final = re.compile(r"^\s*<([\w-]+)[^>]*>.*</\1>\s*$")


def _redacted_lines(text: str) -> list[str]:
    """The lines of ``text``, secrets redacted before it is split (a key cut by a line break is
    redacted whole, not its first part only)."""
    return redact(text).split("\n")


def _content_lines(lines: list[str]) -> list[str]:
    """The non-blank ``lines``, without lines that are only markup (``<tag>…</tag>``)."""
    return [line for line in lines if line.strip() and not _MARKUP_LINE.match(line)]


def _result_lines(result: ToolResult | None) -> list[str]:
    """The non-blank lines of a result, without lines that are only markup, secrets redacted."""
    if result is None:
        return []
    return _content_lines(_redacted_lines(result.text))


def _error_line(result: ToolResult) -> str:
    first = next((line for line in _redacted_lines(result.text) if line.strip()), "")
    return sanitize(first, QUOTE_LIMIT)


# Tool-name families beyond the format's categories (lowercase names).
_MEMORY_WRITE: Final = re.compile(
    r"remember|save_memory|memory_(?:write|add|save|store)|add_memory|"
    r"create_entities|add_observations|store_memory|memorize"
)
_MEMORY_READ: Final = re.compile(
    r"recall|search_memory|memory_(?:search|read|get|query)|search_nodes|"
    r"open_nodes|read_graph|retrieve_memor"
)
_ASK_USER: Final = frozenset(
    {"askuserquestion", "request_user_input", "ask_user", "askuser", "ask_followup_question", "question"}
)
_FINISH: Final = frozenset(
    {"attempt_completion", "finish", "task_complete", "complete_task", "done", "submit"}
)
_PLAN: Final = frozenset({"todowrite", "update_plan", "taskcreate", "taskupdate"})
_STATUS_TOOLS: Final = frozenset(
    {
        "bashoutput",
        "taskoutput",
        "monitor",
        "todoread",
        "tasklist",
        "taskget",
        "toolsearch",
        "killshell",
        "taskstop",
    }
)
_SUBAGENT: Final = frozenset({"task", "agent", "spawn_agent"})
_DIRECTORY_TOOLS: Final = frozenset({"ls", "list_dir", "list_directory"})
_FILE_SEARCH_TOOLS: Final = frozenset({"glob", "find", "find_files"})
_TEXT_SEARCH_TOOLS: Final = frozenset({"grep", "search", "rg"})
_WEB_SEARCH_TOOLS: Final = frozenset({"websearch", "web_search", "web_search_call"})
_FETCH_TOOLS: Final = frozenset({"webfetch", "web_fetch", "fetch"})


def collapse_tool(
    call: ToolCall,
    result: ToolResult | None,
    category: str = "other",
    cwd: str | None = None,
) -> Line | None:
    """One plain line for a tool call and its result (``None``: a status check, dropped).

    ``category`` is the format's category of the tool (``edit``, ``read``, ``command``, ``other``);
    ``cwd`` is the session's directory, which paths are shown relative to.
    """
    name = call.name
    lower = name.lower()
    args = call.args
    stamp = call.timestamp

    def path_of(value: str | None) -> str:
        return _show_path(value, cwd) if value else "a file"

    def line(
        kind: LineKind, text: str, path: str | None = None, failed: bool = False, action: str | None = None
    ) -> Line:
        return Line(kind=kind, text=text, timestamp=stamp, tool=name, path=path, failed=failed, action=action)

    failed = result is not None and result.is_error
    if lower in _STATUS_TOOLS or (lower == "write_stdin" and not args.get("chars")):
        return None
    if category == "edit" or lower == "apply_patch":
        return _collapse_edit(call, result, cwd, line)
    if category == "command" or lower in {"bashexecution"}:
        command = _first(args, "command", "cmd") or ""
        if isinstance(args.get("command"), list):  # Codex `shell`: ["bash", "-lc", "..."]
            words = [str(w) for w in args["command"]]
            command = words[-1] if len(words) >= 3 and words[1] in {"-lc", "-c"} else " ".join(words)
        if lower == "write_stdin":
            chars = str(args.get("chars"))
            if chars in _KEYS:
                return line("consequential", f"{_KEYS[chars]}.")
            if not sanitize(chars, SNIPPET_LIMIT):  # only keys that show nothing (Enter, Escape...)
                keys = ", ".join(f"U+{ord(c):04X}" for c in chars[:5])
                return line("consequential", f"Sent keys to a running command ({keys}).")
            return line("consequential", f"Sent input to a running command: {_quote(chars, SNIPPET_LIMIT)}.")
        if not command:
            return line("observational", f"Used {sanitize(name, 40)}.")
        if is_status_check(command):
            return None
        if cwd and len(cwd) > 1:
            command = command.replace(cwd.rstrip("/") + "/", "")
        shown = "`" + sanitize(command, COMMAND_LIMIT) + "`"
        who = "User ran" if lower == "bashexecution" else "Ran"
        outcome_failed, outcome = command_outcome(result.text, result.is_error) if result else (None, None)
        listing = _listing(command, result)
        if listing is not None and not outcome_failed:
            return line("observational", listing)
        if is_read_only(command):
            # Looking changes nothing, even when it fails (grep finding nothing exits with 1).
            said = f": {outcome}" if outcome_failed and outcome else ""
            return line("observational", f"{who} {shown}{said}.")
        action = f"run:{command_key(command)}"
        if result is None:
            return line("consequential", f"{who} {shown} (no result recorded).", action=action)
        if outcome is None:
            return line("consequential", f"{who} {shown}.", action=action)
        return line("consequential", f"{who} {shown}: {outcome}.", failed=bool(outcome_failed), action=action)
    if lower in _ASK_USER:
        return _collapse_question(call, result, line)
    if lower in _FINISH:
        text = _first(args, "result", "summary", "message", "text") or (result.text if result else "")
        return line("meta", f"Finished: {_quote(text)}.")
    if lower in _PLAN:
        return _collapse_plan(call, line)
    if lower == "exitplanmode":
        return line("meta", f"Proposed a plan: {_quote(_first(args, 'plan') or '')}.")
    if lower == "enterplanmode":
        return None
    if _MEMORY_WRITE.search(lower):
        text = _first(args, "content", "text", "memory", "fact", "note", "value") or json.dumps(
            args, sort_keys=True, ensure_ascii=False
        )
        return line("consequential", f"Remembered: {_quote(text)}.", failed=failed)
    if _MEMORY_READ.search(lower):
        query = _first(args, "query", "q", "search", "text", "names") or ""
        return line("observational", f"Recalled: {_quote(query)}.")
    if lower in _SUBAGENT:
        task = _first(args, "description", "prompt", "message", "task") or ""
        kind = _first(args, "subagent_type", "agent_type")
        who = f"a subagent ({sanitize(kind, 40)})" if kind else "a subagent"
        report = result.text.split("The report follows:", 1)[-1] if result is not None else ""
        answer = _result_lines(ToolResult(text=report))
        said = f" Result: {_quote(answer[0])}." if answer else ""
        return line("consequential", f"Delegated to {who}: {_quote(task)}.{said}", failed=failed)
    if category == "read" or lower in _DIRECTORY_TOOLS | _FILE_SEARCH_TOOLS | _TEXT_SEARCH_TOOLS:
        return _collapse_read(call, result, cwd, line)
    if lower == "skill":
        return line("observational", f"Used skill {_quote(_first(args, 'skill', 'name', 'command') or '')}.")
    primary = _first(args, "file_path", "path", "url", "query", "command", "pattern", "name")
    suffix = f" {_quote(primary, SNIPPET_LIMIT)}" if primary else ""
    outcome_text = f" Failed: {_error_line(result)}." if failed and result else ""
    return line("observational", f"Used {sanitize(name, 60)}{suffix}.{outcome_text}", failed=failed)


def _collapse_edit(call: ToolCall, result: ToolResult | None, cwd: str | None, line: _Make) -> Line:
    args = call.args
    lower = call.name.lower()
    if lower == "apply_patch":
        patch = call.raw_input if call.raw_input is not None else _first(args, "input", "patch") or ""
        return _collapse_patch(patch, result, cwd, line)
    raw_path = _first(args, "file_path", "path", "notebook_path", "filePath")
    shown = _show_path(raw_path, cwd) if raw_path else "a file"
    path = shown if raw_path else None
    if result is not None and result.is_error:
        return line(
            "consequential",
            f"Failed to edit {shown}: {_error_line(result)}.",
            path=None,
            failed=True,
            action=f"edit:{shown}",
        )
    edits = args.get("edits")
    if isinstance(edits, list) and edits:  # Pi `edit{path, edits: [...]}`, Claude `MultiEdit`
        pairs = [
            (str(e.get("oldText", e.get("old_string", ""))), str(e.get("newText", e.get("new_string", ""))))
            for e in edits
            if isinstance(e, dict)
        ]
        if len(pairs) == 1:
            old, new = _snippet_pair(*pairs[0])
            return line("consequential", f"Edited {shown}: {_replacement(old, new)}.", path=path)
        old, new = _snippet_pair(*pairs[0]) if pairs else ("", "")
        return line(
            "consequential",
            f"Edited {shown}: {len(pairs)} replacements (first: '{old}' with '{new}').",
            path=path,
        )
    old_text = _first(args, "old_string", "oldText", "old_str")
    new_text = args.get("new_string", args.get("newText", args.get("new_str")))
    if old_text is not None or (isinstance(new_text, str) and new_text and "content" not in args):
        old, new = _snippet_pair(old_text or "", str(new_text or ""))
        return line("consequential", f"Edited {shown}: {_replacement(old, new)}.", path=path)
    content = args.get("content", args.get("new_source"))
    if isinstance(content, str):
        if lower == "notebookedit":
            mode = _first(args, "edit_mode") or "replace"
            return line("consequential", f"Edited notebook {shown} ({mode} a cell).", path=path)
        return line("consequential", f"Wrote {shown} ({_plural(_line_count(content), 'line')}).", path=path)
    return line("consequential", f"Edited {shown}.", path=path)


_PATCH_HEADER: Final = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)


def _collapse_patch(patch: str, result: ToolResult | None, cwd: str | None, line: _Make) -> Line:
    """Codex ``apply_patch``: one sentence for the files the patch adds, updates or deletes."""
    headers = list(_PATCH_HEADER.finditer(patch))
    if result is not None and (result.is_error or command_outcome(result.text)[0]):
        target = _show_path(headers[0].group(2).strip(), cwd) if headers else "files"
        return line(
            "consequential",
            f"Failed to patch {target}: {_error_line(result)}.",
            failed=True,
            action=f"edit:{target}",
        )
    if not headers:
        return line("consequential", "Applied a patch.")
    parts: list[str] = []
    first_path: str | None = None
    for index, header in enumerate(headers):
        action, raw = header.group(1), header.group(2).strip()
        shown = _show_path(raw, cwd)
        first_path = first_path or shown
        end = headers[index + 1].start() if index + 1 < len(headers) else len(patch)
        body = patch[header.end() : end].split("\n")
        added = [b[1:] for b in body if b.startswith("+")]
        removed = [b[1:] for b in body if b.startswith("-")]
        if action == "Add":
            parts.append(f"Wrote {shown} ({_plural(len(added), 'line')})")
        elif action == "Delete":
            parts.append(f"Deleted {shown}")
        else:
            old, new = _snippet_pair("\n".join(removed), "\n".join(added))
            parts.append(f"Edited {shown}: {_replacement(old, new)}")
        if len(parts) == 3 and len(headers) > 3:
            parts.append(f"and {len(headers) - 3} more files")
            break
    return line("consequential", "; ".join(parts) + ".", path=first_path)


def _collapse_read(call: ToolCall, result: ToolResult | None, cwd: str | None, line: _Make) -> Line:
    args = call.args
    lower = call.name.lower()
    failed = result is not None and result.is_error
    if failed and result is not None:
        target = _first(args, "file_path", "path", "pattern", "url", "query") or call.name
        return line(
            "observational", f"Failed to read {_show_path(target, cwd)}: {_error_line(result)}.", failed=True
        )
    if lower in _DIRECTORY_TOOLS:
        where = _show_path(_first(args, "path", "dir") or ".", cwd)
        entries = [sanitize(e.strip().lstrip("- "), 60) for e in _result_lines(result)]
        entries = [e for e in entries if e and not e.startswith(("/", "NOTE"))]
        return line("observational", f"Listed directory {where}: {_entry_list(entries)}.")
    if lower in _FILE_SEARCH_TOOLS | _TEXT_SEARCH_TOOLS:
        pattern = _first(args, "pattern", "query", "regex", "glob") or ""
        scope = _first(args, "path", "glob")
        where_text = f" in {_show_path(scope, cwd)}" if scope and scope != pattern else ""
        matches = _match_count(result)
        counted = f" ({_plural(matches, 'match')})" if matches is not None else ""
        what = "files" if lower in _FILE_SEARCH_TOOLS else "for"
        return line(
            "observational", f"Searched {what} {_quote(pattern, SNIPPET_LIMIT)}{where_text}{counted}."
        )
    if lower in _WEB_SEARCH_TOOLS:
        return line(
            "observational", f"Searched the web for {_quote(_first(args, 'query') or '', SNIPPET_LIMIT)}."
        )
    if lower in _FETCH_TOOLS:
        return line("observational", f"Fetched {sanitize(_first(args, 'url') or 'a page', PATH_LIMIT)}.")
    raw_path = _first(args, "file_path", "path", "notebook_path", "uri")
    shown = _show_path(raw_path, cwd) if raw_path else sanitize(call.name, 40)
    lines: int | None = None
    details = result.details if result is not None else {}
    file_info = details.get("file") if isinstance(details, dict) else None
    if isinstance(file_info, dict) and isinstance(file_info.get("numLines"), int):
        lines = file_info["numLines"]
    elif result is not None and result.lines is not None:
        lines = result.lines
    elif result is not None and result.text:
        lines = _line_count(result.text)
    if lower in {"read", "notebookread", "view_image", "read_file"}:
        verb = "Viewed" if lower == "view_image" else "Read"
        count = f" ({_plural(lines, 'line')})" if lines is not None and lower != "view_image" else ""
        return line("observational", f"{verb} {shown}{count}.")
    return line("observational", f"Used {sanitize(call.name, 60)} on {shown}.")


def _match_count(result: ToolResult | None) -> int | None:
    if result is None:
        return None
    details = result.details
    for key in ("numFiles", "numMatches", "numLines"):
        value = details.get(key) if isinstance(details, dict) else None
        if isinstance(value, int):
            return value
    text = result.text.strip()
    if not text or text.lower().startswith(("no files found", "no matches", "no results")):
        return 0
    found = re.match(r"Found (\d+)", text)
    # A count shows no text: the lines as written (redaction may take a line into a key's marker).
    return int(found.group(1)) if found else len(_content_lines(result.text.split("\n")))


def _entry_list(entries: list[str]) -> str:
    if not entries:
        return "empty"
    shown = ", ".join(entries[:LISTED_ENTRIES])
    more = len(entries) - LISTED_ENTRIES
    return shown + (f" (+{more} more)" if more > 0 else "")


def _listing(command: str, result: ToolResult | None) -> str | None:
    """``Listed directory PATH: a, b/.`` for a plain ``ls`` command."""
    parts = command_parts(command)
    if len(parts) != 1 or parts[0][0] != "ls" or result is None:
        return None
    targets = [w for w in parts[0][1:] if not w.startswith("-")]
    if len(targets) > 1:
        return None
    long_format = any(w.startswith("-") and "l" in w for w in parts[0][1:])
    entries: list[str] = []
    for raw in _result_lines(result):
        if raw.startswith("total ") or raw.rstrip().endswith(":") or EXIT_CODE.search(raw):
            continue
        name = raw.split()[-1] if long_format and raw.split() else raw.strip()
        if long_format and raw[:1] == "d" and name not in {".", ".."}:
            name += "/"
        if name not in {".", "..", "./", "../"}:
            entries.append(sanitize(name, 60))
    where = sanitize(targets[0], PATH_LIMIT) if targets else "."
    return f"Listed directory {where}: {_entry_list(entries)}."


def _collapse_question(call: ToolCall, result: ToolResult | None, line: _Make) -> Line:
    args = call.args
    questions = args.get("questions")
    asked: list[str] = []
    if isinstance(questions, list):
        for q in questions:
            if isinstance(q, dict) and isinstance(q.get("question"), str):
                asked.append(q["question"])
            elif isinstance(q, str):
                asked.append(q)
    if not asked:
        text = _first(args, "question", "prompt", "message", "text")
        if text:
            asked.append(text)
    answer = ""
    if result is not None:
        answers = result.details.get("answers") if isinstance(result.details, dict) else None
        if isinstance(answers, dict) and answers:
            answer = "; ".join(str(v) for v in answers.values())
        else:
            answer = result.text.strip()
            found = re.findall(r'"[^"]*"\s*=\s*"([^"]*)"', answer)
            if found:
                answer = "; ".join(found)
    question = " / ".join(asked) or "a question"
    response = f" Response: {_quote(answer)}." if answer else " No response recorded."
    return line("consequential", f"Asked user: {_quote(question)}.{response}", failed=False)


def _collapse_plan(call: ToolCall, line: _Make) -> Line:
    items = plan_items(call.args)
    if not items:
        subject = _first(call.args, "subject", "description", "content", "title")
        if subject:
            return line("meta", f"Plan: added {_quote(subject, SNIPPET_LIMIT)}.")
        return line("meta", "Updated the plan.")
    done = sum(1 for _, status in items if status == "completed")
    current = next((text for text, status in items if status == "in_progress"), None)
    pending = next((text for text, status in items if status != "completed"), None)
    text = f"Plan: {done} of {len(items)} done"
    if current:
        text += f"; working on {_quote(current, SNIPPET_LIMIT)}"
    elif pending:
        text += f"; next {_quote(pending, SNIPPET_LIMIT)}"
    return line("meta", text + ".")


def plan_items(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(text, status)`` of each item of a plan tool's arguments (Claude ``TodoWrite{todos}``, Codex
    ``update_plan{plan}``); statuses are ``pending``, ``in_progress`` or ``completed``."""
    raw = args.get("todos", args.get("plan"))
    items: list[tuple[str, str]] = []
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict):
                text = item.get("content", item.get("step", item.get("text")))
                status = str(item.get("status", "pending")).lower().replace(" ", "_").replace("-", "_")
                if isinstance(text, str) and text.strip():
                    items.append((text, "completed" if status in {"completed", "done"} else status))
    return items


def _show_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when inside it, sanitized and cut (the end of a long path kept)."""
    path = path.strip()
    if cwd:
        base = cwd.rstrip("/") + "/"
        if path.startswith(base):
            path = path[len(base) :] or "."
        elif path == cwd.rstrip("/"):
            path = "."
    clean = sanitize(path, 100_000)
    return clean if len(clean) <= PATH_LIMIT else "…" + clean[-(PATH_LIMIT - 1) :]


# --- acknowledgements -------------------------------------------------------------------------------

_ACKNOWLEDGEMENTS: Final = frozenset(
    [
        "ok",
        "okay",
        "k",
        "yes",
        "y",
        "yep",
        "yeah",
        "sure",
        "thanks",
        "thank",
        "thx",
        "ty",
        "cool",
        "nice",
        "great",
        "good",
        "fine",
        "perfect",
        "done",
        "go",
        "continue",
        "proceed",
        "lgtm",
        "alright",
        "right",
        "agreed",
        "👍",
        "no",
        "nope",
    ]
)


def is_acknowledgement(text: str) -> bool:
    """A user message that asks for nothing new (``ok``, ``thanks!``, ``go on``, ``yes please``)."""
    words = re.findall(r"[\w'👍]+", text.lower())
    return len(words) <= 3 and all(
        w in _ACKNOWLEDGEMENTS or w in {"please", "on", "ahead", "you", "it", "do"} for w in words
    )


# --- reading a transcript ---------------------------------------------------------------------------

#: How much the core reads per call: a chunk ends after the line that brings its entries or the bytes
#: read to these (so the entries held at once stay small, whatever the file's size).
CHUNK_ENTRIES: Final = 512
CHUNK_BYTES: Final = 1 << 20
#: A tool result keeps this many characters of each end (``command_outcome`` reads 2000 of each).
RESULT_LIMIT: Final = 32_000
#: How many tool-call ids are remembered to show a call written again (a reply rewritten whole) once.
SEEN_CALLS: Final = 65_536


@dataclass(slots=True)
class _Pending:
    call: ToolCall
    category: str
    result: ToolResult | None = None
    done: bool = False


class TranscriptLog:
    """The collapsed log of one transcript, streamed: iterate over it for its :class:`Line` s.

    The transcript is decoded by the native core (``_core.read_entries``, in chunks), so every format
    it knows collapses: the built-in ones, declared formats and Python-decoded ones. After (or during)
    iteration it knows the session's ``cwd``, ``session_id`` and ``format``, and how the session
    stopped: ``interrupted`` is true when the last turn has no final assistant text (killed or Ctrl+C
    mid-turn, a tool call without a result, a Pi ``aborted`` stop, a Codex ``turn_aborted``).
    """

    def __init__(
        self,
        path: Path | str,
        format: str = "auto",
        *,
        categories: Mapping[str, str] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        start_offset: int = 0,
    ) -> None:
        self.path = Path(path)
        #: Where reading starts (the start of a line): a recap of a huge transcript may read its tail only.
        self.start_offset = start_offset
        if format == "auto":
            from sidelight.engine.scanning import resolve_format

            format = resolve_format(str(self.path), format).value
        known = (*_core.FORMATS, *_core.declared_formats())
        if format not in known:
            from sidelight.errors import UnknownFormatError

            raise UnknownFormatError(f"unknown transcript format {format!r}; use {', '.join(known)}")
        self.format = format
        from sidelight.plugins import get_plugins

        spec = get_plugins().format(format)
        #: The subagent whose own transcript this is, as its format tells (``FormatSpec.subagent``): its
        #: lines are read as its entries, the first prompt being its parent's task.
        self.subagent: Subagent | None = (
            spec.subagent(self.path) if spec is not None and spec.subagent is not None else None
        )
        #: A tool result's text as a person reads it (``FormatSpec.tool_output``).
        self._tool_output = spec.tool_output if spec is not None else None
        table = categories if categories is not None else categories_for(format)
        self.categories = {k.lower(): v for k, v in table.items()}
        self.max_line_bytes = max_line_bytes
        self.cwd: str | None = None
        self.session_id: str | None = None
        self.first_timestamp: str | None = None
        self.last_timestamp: str | None = None
        self.lines_read = 0
        self.lines_skipped = 0
        self.interrupted = False
        #: Tool calls by category (``edit``, ``read``, ``command``, ``other``), each call once, as a
        #: scan counts them.
        self.tool_counts: dict[str, int] = {}
        #: The last plan the session wrote (``TodoWrite``, ``update_plan``): ``(item, status)``.
        self.plan: list[tuple[str, str]] = []
        self._queue: deque[Line | _Pending] = deque()
        self._pending: dict[str, _Pending] = {}
        self._seen_calls: dict[int, None] = {}
        self._last_role: str | None = None
        self._aborted = False

    def __iter__(self) -> Iterator[Line]:
        for kind, stamp, call_id, name, text, data, is_error, lines in self._entries():
            if kind == "result":
                self._result(call_id, _tool_result(text or "", data, is_error, lines, self._tool_output))
                continue
            if kind == "session_id":
                self.session_id = text
                continue
            if kind == "cwd":
                self.cwd = text
                continue
            # What came before is complete (a result follows its call at once when on its line).
            yield from self._drain(force=len(self._pending) > MAX_PENDING)
            if kind in ("user", "assistant"):
                self._aborted = False
                self._text("user" if kind == "user" else "assistant", text or "", stamp)
            elif kind == "tool" and name is not None:
                self._tool(call_id, name, text, data, stamp)
            elif kind == "compacted":
                self._emit(Line(kind="meta", text="The context was compacted.", timestamp=stamp))
            elif kind == "aborted":
                self._aborted = True
        unanswered = bool(self._pending)
        yield from self._drain(force=True)
        self.interrupted = unanswered or self._aborted or self._last_role in {"user", "tool"}

    # - reading entries

    def _entries(self) -> Iterator[_core._LogEntryTuple]:
        """The transcript's entries from the core, chunk by chunk, from :attr:`start_offset` on."""
        path = os.fspath(self.path)

        def chunk(offset: int, entries: int, size: int) -> tuple[list[_core._LogEntryTuple], int]:
            found, end, read, skipped, first, last = _core.read_entries(
                path,
                self.format,
                offset,
                entries,
                size,
                self.max_line_bytes,
                TEXT_LIMIT + 1,
                RESULT_LIMIT,
                sidechain=self.subagent is not None,
            )
            self.lines_read += read
            self.lines_skipped += skipped
            # The earliest and the latest (a Pi session branched from another starts before its header).
            if first is not None and (self.first_timestamp is None or first < self.first_timestamp):
                self.first_timestamp = first
            if last is not None and (self.last_timestamp is None or last > self.last_timestamp):
                self.last_timestamp = last
            return found, end

        offset = self.start_offset
        if offset > 0:
            # The session's header (Pi `session`, Codex `session_meta`) still tells its cwd and id.
            header, _ = chunk(0, 1, 1)
            yield from (entry for entry in header if entry[0] in ("session_id", "cwd"))
        while True:
            entries, end = chunk(offset, CHUNK_ENTRIES, CHUNK_BYTES)
            yield from entries
            if end == offset:
                return
            offset = end

    # - the queue of lines and calls waiting for results

    def _emit(self, line: Line) -> None:
        self._queue.append(line)

    def _tool(
        self, call_id: int | None, name: str, text: str | None, data: str | None, stamp: str | None
    ) -> None:
        if call_id is not None:
            if call_id in self._seen_calls:
                return  # written again (a reply rewritten whole): shown once
            self._seen_calls[call_id] = None
            if len(self._seen_calls) > SEEN_CALLS:
                del self._seen_calls[next(iter(self._seen_calls))]
        args: Any = {}
        raw_input = text
        if data is not None:
            try:
                args = json.loads(data)
            # Codex arguments that are not JSON, or a value nested past the recursion limit (the
            # decoder recurses once per level): the text stays what the call shows.
            except (ValueError, RecursionError):
                raw_input = data
        call = ToolCall(
            name=name,
            args=args if isinstance(args, dict) else {},
            id=None if call_id is None else format(call_id, "016x"),
            timestamp=stamp,
            raw_input=raw_input,
        )
        category = self.categories.get(name.lower(), "other")
        self.tool_counts[category] = self.tool_counts.get(category, 0) + 1
        role_before = self._last_role
        self._call(call)
        if name == "bashExecution":
            self._last_role = role_before  # a person's own command (Pi): the agent owes no answer
        else:
            self._aborted = False

    def _call(self, call: ToolCall) -> None:
        category = self.categories.get(call.name.lower(), "other")
        if call.name.lower() in _PLAN:
            items = plan_items(call.args)
            if items:
                self.plan = items
        pending = _Pending(call, category)
        self._queue.append(pending)
        if call.id:
            self._pending[call.id] = pending
        else:
            pending.done = True
        self._last_role = "tool"

    def _result(self, call_id: int | None, result: ToolResult) -> None:
        if call_id is None:
            # The call just before, on the same line (a person's own command comes with its output).
            last = self._queue[-1] if self._queue else None
            if isinstance(last, _Pending) and last.call.id is None and last.result is None:
                last.result = result
            return
        pending = self._pending.pop(format(call_id, "016x"), None)
        if pending is not None:
            pending.result = result
            pending.done = True

    def _drain(self, force: bool = False) -> Iterator[Line]:
        queue = self._queue
        while queue:
            item = queue[0]
            if isinstance(item, _Pending):
                if not item.done and not force:
                    return
                queue.popleft()
                if item.call.id:
                    self._pending.pop(item.call.id, None)
                line = collapse_tool(item.call, item.result, item.category, self.cwd)
                if line is not None:
                    yield line
            else:
                queue.popleft()
                yield item

    def _text(self, role: Literal["user", "assistant"], text: str, stamp: str | None) -> None:
        if role == "user":
            # A new prompt: calls still waiting for results never got them.
            for pending in self._pending.values():
                pending.done = True
            self._pending.clear()
        clean = _clean_text(text)
        if not clean:
            return
        from sidelight.features.digest import is_digest_text

        if is_digest_text(clean):
            return
        self._emit(Line(kind=role, text=clean, timestamp=stamp))
        self._last_role = role


def _tool_result(
    text: str, details: str | None, is_error: bool, lines: int, output: Callable[[str], str] | None
) -> ToolResult:
    """A result as the core reads it: ``details`` a JSON text, ``lines`` those of the whole text (kept
    when ``text`` is only its ends)."""
    parsed: Any = {}
    if details is not None:
        # RecursionError: details nested past the recursion limit say nothing a recap shows.
        with contextlib.suppress(ValueError, RecursionError):
            parsed = json.loads(details)
    whole = None if _line_count(text) == lines else lines
    if output is not None:
        text = output(text)
    return ToolResult(
        text=text, is_error=is_error, details=parsed if isinstance(parsed, dict) else {}, lines=whole
    )


def _clean_text(text: str) -> str:
    """Message text as the recap keeps it: secrets redacted, control characters removed, blank lines
    squeezed, cut to :data:`TEXT_LIMIT` characters."""
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + " …"
    return "\n".join(squeeze_blank_lines(sanitize_lines(text).split("\n")))
