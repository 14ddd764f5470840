"""Command ``sidelight recap``: a ranked, token-budgeted recap of a session
(:mod:`sidelight.features.recap.build`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from sidelight.cli.common import (
    EXIT_OK,
    EXPECTED_ERRORS,
    MAX_TOKENS,
    colour_on,
    fail,
    format_option,
    json_line,
    logger,
    number_option,
    paint,
)

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]


def register(commands: Any) -> None:
    """Adds ``recap``."""
    recap = commands.add_parser(
        "recap",
        help="recap a session: what it did, ranked, within a token budget",
        description="Build the recap of a session from its transcript (finished or interrupted): its "
        "tool calls collapsed into plain lines, chunked by turns, each chunk scored by novelty "
        "(against the long-term memories), centrality, recency and consequential actions, and the "
        "best chunks shown in order within the budget, ending with what was left unfinished. SESSION "
        "is a name, key, id, id prefix or transcript path ('sidelight sessions' lists them). The same "
        "session gives the same recap, byte for byte.",
        epilog="Settings: [recap] in the config file or SIDELIGHT_RECAP_* (budget, chunk_chars, alpha, "
        "recency_half_life, novelty_floor, embedder, summarizer...); SIDELIGHT_TOKEN_COUNTER picks "
        "the token counter. See docs/recap.md.",
    )
    recap.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session name, key, id, id prefix or path [default: the most recent session of this "
        "folder's project, as the digest's scope sees it]",
    )
    format_option(recap)
    recap.add_argument(
        "-b",
        "--budget",
        type=number_option(maximum=MAX_TOKENS, what="a number of tokens"),
        default=None,
        metavar="N",
        help="most tokens the recap may take [env: SIDELIGHT_RECAP_BUDGET; default: 1000]",
    )
    recap.add_argument(
        "-w",
        "--write",
        metavar="PATH",
        help="also write the recap as a handoff file (atomically); a folder gets _handoff.md inside it; "
        "anything but a regular file (a FIFO, a device) is refused",
    )
    recap.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: the text, tokens, budget, source, last request, files edited, "
        "unfinished items, and every chunk with its score parts",
    )
    recap.set_defaults(run=_recap_command, parser=recap)


def _recap_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.engine.discovery import resolve_session
    from sidelight.errors import NotARegularFileError
    from sidelight.features.recap.handoff import build_for_session, handoff_document, write_handoff
    from sidelight.plugins import get_plugins
    from sidelight.statefile import regular_file_target
    from sidelight.statelayout import HANDOFF_FILE
    from sidelight.watch.status import session_state

    target: Path | None = None
    try:
        if args.write:
            # Checked before any work: a FIFO or device given as -w is refused (exit 2), untouched.
            target = Path(args.write)
            target = regular_file_target(target / HANDOFF_FILE if target.is_dir() else target)
        settings = Settings.load()
        plugins = get_plugins()
        session = resolve_session(args.session, settings, plugins, args.format)
        logger.info("%s: %s (%s)", session.name, session.path, session.format)
        size = session.path.stat().st_size
        # What `sidelight status` shows for it: a Codex session quiet for a minute is in progress, not
        # ended (Codex says nothing when it ends).
        state = session_state(session, settings, plugins)
        recap = build_for_session(session, settings, plugins, budget=args.budget, state=state)
    except EXPECTED_ERRORS as error:
        return fail(error)
    if recap.budget < recap.header_tokens:
        parser.error(
            f"a budget of {recap.budget} tokens is too small for the recap's header "
            f"({recap.header_tokens} tokens): give -b {recap.header_tokens} or more"
        )
    logger.info(
        "%d lines read, %d chunks, %d shown, %d of %d tokens",
        recap.lines_read,
        len(recap.chunks),
        len(recap.selected),
        recap.tokens,
        recap.budget,
    )
    if target is not None:
        try:
            write_handoff(target, handoff_document(recap, session, size))
        except NotARegularFileError as error:  # put there since the check above
            return fail(error)
        except OSError as error:
            return fail(error, os.fspath(target))
        logger.info("written to %s", target)
    out = sys.stdout
    if args.json:
        json_line(recap.as_dict(), out)
    elif colour_on():
        # The Markdown headings (# Recap ..., ## Unfinished) as headers; the text is otherwise the same.
        out.write(
            "".join(
                paint(line, "header") if line.startswith("#") else line
                for line in recap.text.splitlines(True)
            )
        )
    else:
        out.write(recap.text)
    return EXIT_OK
