"""Command ``sidelight context``: what a session's next host event would receive, without moving anything."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from sidelight.cli.common import EXIT_OK, EXPECTED_ERRORS, fail, format_option, json_line, paint

if TYPE_CHECKING:
    import argparse

    from sidelight.features.hook import Plan

__all__ = ["register"]

EVENTS = {"prompt": "UserPromptSubmit", "start": "SessionStart"}
SOURCES = ("startup", "resume", "compact", "clear")


def register(commands: Any) -> None:
    """Adds ``context``."""
    context = commands.add_parser(
        "context",
        help="show what a session's next prompt or start would receive",
        description="Show exactly what sidelight would inject at SESSION's next host event, and why: "
        "each block (the digest, long-term facts, a handoff, a welcome back, the session's own "
        "context) with its size, and what was left out for the budget or as already received. "
        "Nothing moves: no cursor, no marker, no claim. SESSION is as for 'sidelight read'.",
    )
    context.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session name, key, id, id prefix or path [default: the most recent session of this "
        "folder's project, as the digest's scope sees it]",
    )
    format_option(context, "SESSION's transcript's format")
    context.add_argument(
        "--event",
        choices=tuple(EVENTS),
        default="prompt",
        help="the host event: its next prompt, or a start [default: prompt]",
    )
    context.add_argument(
        "--source",
        choices=SOURCES,
        help="what kind of start (with --event start) [default: resume, or startup for an empty transcript]",
    )
    context.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: event, session, budget, tokens, blocks, left_out, text",
    )
    context.set_defaults(run=_context_command, parser=context)


def _context_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.engine.discovery import resolve_session
    from sidelight.features.hook import host_event, plan_event
    from sidelight.plugins import get_plugins

    if args.source is not None and args.event != "start":
        parser.error("--source goes with --event start")
    try:
        settings = Settings.load()
        plugins = get_plugins()
        session = resolve_session(args.session, settings, plugins, args.format)
        event = host_event(session, args.event, args.source, plugins.injectors())
        plan = plan_event(event, settings, plugins, measure=True)
    except EXPECTED_ERRORS as error:
        return fail(error)
    out = sys.stdout
    if args.json:
        json_line(plan.as_dict(), out)
    else:
        out.write(format_plan(plan))
    return EXIT_OK


def format_plan(plan: Plan) -> str:
    """The plan as people read it: a heading, one line per block then its text, what was left out."""
    lines = [
        paint(
            f"{plan.session or '?'}: next {plan.event}, {plan.tokens} of {plan.budget} tokens "
            f"({len(plan.blocks)} block{'' if len(plan.blocks) == 1 else 's'})",
            "header",
        )
    ]
    for block in plan.blocks:
        cut = ", cut to the budget" if block.cut else ""
        heading = f"== {block.name}: {block.tokens} tokens, {block.chars} characters{cut}"
        lines += ["", paint(heading, "header"), block.text]
    for left in plan.left_out:
        lines += [
            "",
            f"-- left out: {left.name} ({left.reason}): {left.tokens} tokens, {left.chars} characters",
        ]
    if not plan.blocks and not plan.left_out:
        lines += ["", "(nothing to inject)"]
    return "\n".join(lines) + "\n"
