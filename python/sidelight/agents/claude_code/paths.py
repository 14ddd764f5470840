"""Where Claude Code keeps a session's files, and what a file of it says.

Claude Code writes ``<claude dir>/projects/<project>/<session id>.jsonl``, the project folder named after
the working directory (:func:`claude_sanitize`); a session's subagents write
``<project>/<session id>/subagents/**/agent-*.jsonl`` (older versions: ``<project>/agent-<id>.jsonl``
beside the parent, whose lines carry the parent's ``sessionId``).
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast.patterns import Pattern
from sidelight.engine.paths import HEAD_BYTES, head_string_field, js_hash36, read_head, real, stat_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.config import Settings
    from sidelight.lines import Subagent

__all__ = [
    "CLAUDE_MAX_SANITIZED",
    "TITLE_LINES",
    "WRITE_TOOLS",
    "claude_dirs",
    "claude_flat_parent",
    "claude_project_dir",
    "claude_project_dirs",
    "claude_sanitize",
    "claude_subagent",
    "claude_subagent_paths",
    "claude_subagents_under",
]

#: Claude Code's tools that write a file: its ``PreToolUse`` hook, matched to these, is the stale-write
#: guard's (docs/guard.md).
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")

#: Claude Code cuts a sanitized project directory name to this many characters and adds ``-<hash>``.
CLAUDE_MAX_SANITIZED = 200

#: A transcript's title lines, in order of precedence (``FormatSpec.title_lines``): the newest
#: ``custom-title``, else ``ai-title``, else ``summary`` line (older versions wrote ``summary`` first).
TITLE_LINES: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("custom-title", "type", ("customTitle",)),
    ("ai-title", "type", ("aiTitle",)),
    ("summary", "type", ("summary",)),
)

#: Every ASCII character but a letter or a digit, as ``-`` (Claude Code's project folder names).
_ASCII_DASHES = {c: "-" for c in range(128) if not chr(c).isalnum()}


def claude_sanitize(cwd: str) -> str:
    """Claude Code's project directory name for ``cwd``: every non-alphanumeric character becomes
    ``-``; a name over 200 characters is cut to 200 and given ``-<hash>`` (the Claude Agent SDK's
    stand-in for the CLI's hash, :func:`sidelight.engine.paths.js_hash36`: the CLI uses ``Bun.hash``, so
    existing folders are looked up by prefix, :func:`claude_project_dir`)."""
    # Claude Code is JavaScript: it replaces UTF-16 code units, so a character outside the BMP
    # becomes two dashes.
    if cwd.isascii():
        name = cwd.translate(_ASCII_DASHES)
    else:
        name = "".join(c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-" for c in cwd)
    if len(name) <= CLAUDE_MAX_SANITIZED:
        return name
    return f"{name[:CLAUDE_MAX_SANITIZED]}-{js_hash36(cwd)}"


def _canonical_cwd(cwd: Path | str) -> str:
    path = real(os.fspath(cwd))
    if path.isascii():
        return path  # already NFC, without importing unicodedata for every prompt
    import unicodedata

    return unicodedata.normalize("NFC", path)


def claude_project_dir(projects: Path, cwd: Path | str) -> Path:
    """The folder of ``cwd``'s transcripts under a ``projects`` folder: the exact sanitized name if it
    exists, else (for a name over 200 characters) an existing ``<first 200>-<hash>`` folder found by
    prefix, else the name sidelight would give it (which may not exist yet)."""
    canonical = _canonical_cwd(cwd)
    name = claude_sanitize(canonical)
    candidate = projects / name
    if len(name) <= CLAUDE_MAX_SANITIZED or candidate.is_dir():
        return candidate
    prefix = name[:CLAUDE_MAX_SANITIZED] + "-"
    try:
        with os.scandir(projects) as entries:
            for entry in entries:
                if entry.name.startswith(prefix) and entry.is_dir():
                    return Path(entry.path)
    except OSError:
        pass
    return candidate


def claude_project_dirs(claude_dir: Path) -> Iterator[os.DirEntry[str]]:
    """The project folders of one Claude Code configuration folder (none if it does not exist), under
    its resolved path, so the transcripts found there have canonical paths without resolving each."""
    try:
        with os.scandir(real(os.fspath(claude_dir / "projects"))) as entries:
            dirs = [e for e in entries if e.is_dir()]
    except OSError:
        return
    yield from dirs


def claude_dirs(settings: Settings) -> list[Path]:
    """The Claude folders, each once (``~/.config/claude`` may be a link to ``~/.claude``)."""
    seen: set[str] = set()
    out = []
    for d in settings.claude_dirs:
        r = real(os.fspath(d))
        if r not in seen:
            seen.add(r)
            out.append(d)
    return out


_claude_flat_parents: dict[tuple[str, int, int], str | None] = {}


def claude_subagents_under(session_folder: Path) -> list[Path]:
    """``agent-*.jsonl`` anywhere under ``<session>/subagents/`` (workflow runs nest them deeper)."""
    found: list[Path] = []
    top = session_folder / "subagents"
    for folder, dirs, files in os.walk(top, onerror=lambda error: None):
        dirs.sort()
        found.extend(
            Path(folder, f) for f in sorted(files) if f.startswith("agent-") and f.endswith(".jsonl")
        )
    return found


def claude_flat_parent(path: str) -> str | None:
    """The parent session of an old-layout ``agent-<id>.jsonl``: the ``sessionId`` of its lines."""
    key = stat_key(path)
    if key is None:
        return None
    if key not in _claude_flat_parents:
        _claude_flat_parents[key] = head_string_field(path, "sessionId")
    return _claude_flat_parents[key]


_SIDECHAIN = Pattern(rb'"isSidechain"\s*:\s*true')


def claude_subagent(path: Path | str) -> Subagent | None:
    """The subagent whose own transcript ``path`` is (``None``: not a subagent's), with what its
    ``agent-<id>.meta.json`` says: ``agentType`` (``general-purpose``, ``Explore``, a custom agent's
    name) and ``description`` (the parent's few words for the task); older versions wrote no such
    file (``FormatSpec.subagent``).

    A subagent's transcript (``<session>/subagents/agent-<id>.jsonl``, or an old flat
    ``agent-<id>.jsonl`` beside its parent) starts with the parent's task for it, a line marked
    ``isSidechain``; a session's own transcript never does (older versions wrote a subagent's turns
    inline, after the session's own first prompt).
    """
    head = read_head(path, HEAD_BYTES)
    end = head.find(b"\n")
    first = head if end < 0 else head[:end]
    if b'"isSidechain"' not in first or not _SIDECHAIN().search(first):
        return None
    from sidelight.lines import Subagent  # (a recap's question, never a prompt's)

    meta: object = None
    text = os.fspath(path)
    if text.endswith(".jsonl"):
        # Read as a transcript's head is: a FIFO named like the meta file holds nothing up.
        try:  # noqa: SIM105 (contextlib: an import on every prompt)
            meta = jsonio.loads(read_head(text[: -len(".jsonl")] + ".meta.json", HEAD_BYTES) or b"null")
        except (ValueError, RecursionError):
            pass
    if not isinstance(meta, dict):
        return Subagent()

    def field(name: str) -> str | None:
        value = meta.get(name)
        return value.strip() or None if isinstance(value, str) else None

    return Subagent(agent_type=field("agentType"), description=field("description"))


def claude_subagent_paths(project: Path, session_id: str) -> tuple[Path, ...]:
    """The subagent transcripts of one session (new layout, then old flat files naming it)."""
    found = claude_subagents_under(project / session_id)
    try:
        with os.scandir(project) as entries:
            flat = sorted(
                (e.path for e in entries if e.name.startswith("agent-") and e.name.endswith(".jsonl")),
            )
    except OSError:
        flat = []
    found.extend(Path(p) for p in flat if claude_flat_parent(p) == session_id)
    return tuple(found)
