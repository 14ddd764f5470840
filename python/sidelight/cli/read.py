"""Commands ``sidelight read`` (a session's recent conversation) and ``sidelight sessions`` (the list)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from sidelight.cli.common import (
    EXIT_OK,
    EXPECTED_ERRORS,
    fail,
    faithful,
    format_option,
    json_line,
    logger,
    no_redact_option,
    number_option,
    paint,
)

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]


def register(commands: Any) -> None:
    """Adds ``read`` and ``sessions``."""
    read = commands.add_parser(
        "read",
        help="show a session's recent conversation",
        description="Show the last entries of a session's transcript, oldest first: local times, user "
        "and assistant text, and one [Tool argument → result] line per tool use (one short line of "
        "its result). Thinking, raw tool output and metadata are left out. SESSION is a transcript, or "
        "a folder (its newest transcript), when it exists on disk; else a name (as in the digest), a "
        "session key or id, or a prefix (at least 4 characters) of an id or of the name 'sidelight "
        "sessions' shows. Only the main transcript is read, not a session's subagent files.",
    )
    read.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session name, key, id, id prefix or path [default: the most recent session of this "
        "folder's project, as the digest's scope sees it]",
    )
    format_option(read)
    read.add_argument(
        "-n",
        "--lines",
        type=number_option(),
        default=os.environ.get("SIDELIGHT_READ_LINES", "50"),  # a string default goes through type=
        metavar="N",
        help="how many entries to show [env: SIDELIGHT_READ_LINES; default: 50]",
    )
    read.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per entry: timestamp, role, text, tool_name, primary_arg (as the "
        "transcript has them, secrets redacted), result (one short line), result_error, cut (what was cut)",
    )
    no_redact_option(read)
    read.set_defaults(run=_read_command, parser=read)

    sessions = commands.add_parser(
        "sessions",
        help="list the sessions sidelight can see",
        description="List the sessions the resolvers find (every registered agent's: 'sidelight plugins' "
        "lists them), grouped as siblings are, most recently modified first: the sessions of one git "
        "repository (its main checkout, linked worktrees, subfolders) under its main checkout's folder, "
        "each naming its worktree (branch, else folder) and subfolder when it is not the main "
        "checkout's root; outside git (or with scope = directory), by working directory.",
    )
    sessions.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per session: name, key, id, format, group, resolver, path, size, "
        "modified, subagents, subagent_paths, resumed, resumed_paths (later files of the session's own "
        "transcript, as a resumed session may write), and the counts 'sidelight status' shows: messages, "
        "user_messages, assistant_messages, categories, partial; where it works in git: repository (the "
        "main checkout's folder), worktree (its branch or folder, when not the main checkout), subfolder",
    )
    sessions.set_defaults(run=_sessions_command, parser=sessions)


def _read_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.engine.discovery import resolve_session
    from sidelight.features.reader import TEXT_LIMIT, format_entries, read_session, result_line
    from sidelight.plugins import get_plugins

    try:
        plugins = get_plugins()
        session = resolve_session(args.session, Settings.load(), plugins, args.format)
        logger.info("%s: %s (%s)", session.name, session.path, session.format)
        # One character more than a text keeps: --json says which texts were cut.
        entries = read_session(session, plugins, args.lines, text_limit=TEXT_LIMIT + 1)
    except EXPECTED_ERRORS as error:
        return fail(error)
    if not entries:
        logger.warning("%s: no conversation yet", session.name)
        return EXIT_OK
    out = sys.stdout
    if args.json:
        for entry in entries:
            record = faithful(
                entry.as_dict(), {"text": TEXT_LIMIT, "primary_arg": TEXT_LIMIT}, redact=args.redact
            )
            # A result as its one short line (as the text output shows it), never the raw output.
            record["result"] = result_line(entry.result, error=entry.result_error)
            json_line(record, out)
    else:
        out.write(format_entries([_cut(entry) for entry in entries]))
    return EXIT_OK


def _cut(entry: Any) -> Any:
    """``entry`` with its text cut back to what the text output shows (it was read one character
    longer, for --json to tell a cut text)."""
    import dataclasses

    from sidelight.features.reader import TEXT_LIMIT

    if entry.text is None or len(entry.text) <= TEXT_LIMIT:
        return entry
    return dataclasses.replace(entry, text=entry.text[:TEXT_LIMIT])


def _sessions_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.engine.discovery import list_sessions
    from sidelight.features.reader import describe_sessions
    from sidelight.plugins import get_plugins
    from sidelight.watch.status import collect_status, grouped

    try:
        settings = Settings.load()
        plugins = get_plugins()
        records = describe_sessions(list_sessions(settings, plugins))
        # The counts every command gives for a session: status's (the watcher's, else the transcripts').
        counted = {row.key: row for row in collect_status(settings, plugins).rows}
    except EXPECTED_ERRORS as error:
        return fail(error)
    for record in records:
        found = counted.get(str(record["key"]))
        record.update(
            messages=None if found is None else found.messages,
            user_messages=None if found is None else found.user_messages,
            assistant_messages=None if found is None else found.assistant_messages,
            categories=None if found is None else dict(found.categories),
            partial=None if found is None else found.partial,
        )
    records.sort(key=lambda r: str(r["modified"] or ""), reverse=True)
    places, headings = grouped([str(r["group"]) for r in records], settings.scope != "directory")
    for record, place in zip(records, places, strict=True):
        record.update(place.as_dict())
    out = sys.stdout
    if args.json:
        for record in records:
            json_line(record, out)
        return EXIT_OK
    if not records:
        logger.warning("no sessions found (see 'sidelight plugins' for the resolvers)")
        return EXIT_OK
    groups = {heading: [records[i] for i in indexes] for heading, indexes in headings.items()}
    notes = {id(record): place.note for record, place in zip(records, places, strict=True)}
    home = str(settings.home).rstrip("/")
    # A name two sessions share cannot pick one: show their keys, which can.
    counts = Counter(r["name"] for r in records)
    shared = {name for name, n in counts.items() if n > 1}
    first = True
    for group, members in groups.items():
        if not first:
            out.write("\n")
        first = False
        out.write(paint(_clean(_tilde(group, home)), "header") + "\n")
        rows = [
            (
                _clean(str(r["name"]), 40),
                str(r["format"]),
                _modified(r["modified"]),
                _size(r["size"]),
                _counted(r),
                _clean(_tilde(str(r["path"]), home), 200) + _extra_files(r) + _where(notes[id(r)]),
                _clean(str(r["key"]), 200),
            )
            for r in members
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        for record, row in zip(members, rows, strict=True):
            cells = [cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)]
            out.write("  " + "  ".join(cells) + "  " + row[5] + "\n")
            if record["name"] in shared:
                out.write("  " + " " * (widths[0] + 2) + "key: " + row[6] + "\n")
    return EXIT_OK


def _where(note: str) -> str:
    """`` [worktree feature-x, in sub/]``: where a session works in its repository, when that is not the
    main checkout's root."""
    return f" [{_clean(note, 80)}]" if note else ""


def _extra_files(record: dict[str, Any]) -> str:
    """`` (+1 resumed file, 2 subagents)``: a session's other files, a later file of its own transcript
    (a Gemini resume) told apart from its subagents'; empty when it has none."""
    parts = [
        _plural(record.get("resumed") or 0, "resumed file"),
        _plural(record.get("subagents") or 0, "subagent"),
    ]
    told = [part for part in parts if part]
    return f" (+{', '.join(told)})" if told else ""


def _plural(count: int, noun: str) -> str:
    return "" if not count else f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _counted(record: dict[str, Any]) -> str:
    """``9 msgs, 5 tools`` (``+``: from the transcript's end only, as in ``status``); ``-``: unknown."""
    messages, categories = record.get("messages"), record.get("categories")
    if not isinstance(messages, int) or not isinstance(categories, dict):
        return "-"
    mark = "+" if record.get("partial") else ""
    return f"{messages}{mark} msgs, {sum(categories.values())}{mark} tools"


def _modified(value: object) -> str:
    if not isinstance(value, str):
        return "-"
    return value[:16].replace("T", " ")


def _size(value: object) -> str:
    if not isinstance(value, int):
        return "-"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _tilde(path: str, home: str) -> str:
    return "~" + path[len(home) :] if home and (path == home or path.startswith(home + "/")) else path


def _clean(text: str, width: int = 120) -> str:
    from sidelight.redact import sanitize_lines

    line = " ".join(sanitize_lines(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"
