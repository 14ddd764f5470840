"""Commands ``sidelight history`` (a session's capped recent conversation) and ``remember``, ``facts``,
``forget`` (the long-term facts)."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sidelight.cli.common import (
    EXIT_OK,
    EXPECTED_ERRORS,
    MAX_TOKENS,
    fail,
    format_option,
    json_line,
    logger,
    number_option,
    paint,
)

if TYPE_CHECKING:
    import argparse

    from sidelight.features.history import Message

__all__ = ["register"]


def register(commands: Any) -> None:
    """Adds ``history``, ``remember``, ``facts`` and ``forget``."""
    from sidelight.features.facts import SCOPES
    from sidelight.features.history import DEFAULT_MAX_MESSAGES, DEFAULT_MAX_TOKENS

    history = commands.add_parser(
        "history",
        help="print a session's recent conversation, capped, for a host to send to a model",
        description="Print the recent conversation of a session, oldest first: each prompt, and each "
        "reply with one [Tool argument] line per tool use, at most --max-messages messages and "
        "--max-tokens tokens (the newest kept). Our own injected blocks are left out; secrets are "
        "redacted. SESSION is what 'sidelight read' takes (a name, key, id, id prefix or transcript "
        "path) or a host's key such as discord:1234; a host-named session whose newest transcript "
        "is empty is seeded from its earlier ones.",
    )
    history.add_argument("session", metavar="SESSION", help="a session name, key, id, id prefix or path")
    format_option(history)
    history.add_argument(
        "-n",
        "--max-messages",
        type=number_option(),
        default=os.environ.get("SIDELIGHT_HISTORY_MESSAGES", str(DEFAULT_MAX_MESSAGES)),
        metavar="N",
        help=f"at most N messages [env: SIDELIGHT_HISTORY_MESSAGES; default: {DEFAULT_MAX_MESSAGES}]",
    )
    history.add_argument(
        "-t",
        "--max-tokens",
        type=number_option(maximum=MAX_TOKENS, what="a number of tokens"),
        default=os.environ.get("SIDELIGHT_HISTORY_TOKENS", str(DEFAULT_MAX_TOKENS)),
        metavar="N",
        help=f"at most N tokens in all [env: SIDELIGHT_HISTORY_TOKENS; default: {DEFAULT_MAX_TOKENS}]",
    )
    history.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per message: role, content, timestamp (with --subagent-context, one "
        "object: context)",
    )
    history.add_argument(
        "--subagent-context",
        action="store_true",
        help="print instead the one line 'Context from main conversation: ...' for a delegated task",
    )
    history.set_defaults(run=_history_command, parser=history)

    remember = commands.add_parser(
        "remember",
        help="remember a fact across sessions",
        description="Store a fact that every new session is told at its start, in its [Long-term "
        "context] block. Adding a fact again (the same words, whatever the case, spacing or final "
        "punctuation) confirms it instead of storing a copy. Secrets in it are redacted.",
    )
    remember.add_argument("text", metavar="TEXT", help="the fact, in a few words")
    remember.add_argument(
        "-s",
        "--scope",
        choices=SCOPES,
        default="user",
        help="user: about the person (default); agent: something the agent learned",
    )
    remember.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: action (remembered or confirmed), id, text, scope, created, confirmed, "
        "confirmations",
    )
    remember.set_defaults(run=_remember_command, parser=remember)

    facts = commands.add_parser(
        "facts",
        help="list the remembered facts",
        description="List the remembered facts, oldest first: id, scope, when last confirmed, text.",
    )
    facts.add_argument("-s", "--scope", choices=SCOPES, help="only the facts of this scope")
    facts.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per fact: id, text, scope, created, confirmed, confirmations",
    )
    facts.set_defaults(run=_facts_command, parser=facts)

    forget = commands.add_parser(
        "forget",
        help="forget a remembered fact",
        description="Remove a remembered fact, named by its id (or the first 4+ characters of it, as "
        "'sidelight facts' shows) or by its text.",
    )
    forget.add_argument("fact", metavar="FACT", help="a fact id, id prefix or text")
    forget.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: action (forgot), id, text, scope, created, confirmed, confirmations",
    )
    forget.set_defaults(run=_forget_command, parser=forget)


def _history_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.features.history import history, subagent_context
    from sidelight.plugins import get_plugins

    try:
        settings = Settings.load()
        plugins = get_plugins()
        target: Any = args.session
        if args.format != "auto":
            from sidelight.engine.discovery import resolve_session

            target = resolve_session(args.session, settings, plugins, args.format)
        if args.subagent_context:
            line = subagent_context(target, settings=settings, plugins=plugins)
            if line is None:
                logger.warning("%s: no user request yet", args.session)
                return EXIT_OK
            if args.json:
                json_line({"context": line})
            else:
                sys.stdout.write(line + "\n")
            return EXIT_OK
        messages = history(target, args.max_messages, args.max_tokens, settings=settings, plugins=plugins)
    except EXPECTED_ERRORS as error:
        return fail(error)
    if not messages:
        logger.warning("%s: no conversation yet", args.session)
        return EXIT_OK
    out = sys.stdout
    if args.json:
        for message in messages:
            json_line(message.as_dict(), out)
    else:
        out.write(format_messages(messages))
    return EXIT_OK


def format_messages(messages: list[Message]) -> str:
    """The messages for a person: ``[HH:MM] User:`` (with the date when they span days) and the
    content indented beneath it."""
    from sidelight.features.reader import local_time

    moments = [local_time(m.timestamp) for m in messages]
    days = {moment.date() for moment in moments if moment is not None}
    stamp_format = "%Y-%m-%d %H:%M" if len(days) > 1 else "%H:%M"
    out: list[str] = []
    for message, moment in zip(messages, moments, strict=True):
        stamp = f"[{moment.strftime(stamp_format)}] " if moment is not None else ""
        out.append(paint(f"{stamp}{'User' if message.role == 'user' else 'Assistant'}:", "header"))
        out.extend("    " + _printable(line) if line.strip() else "" for line in message.content.split("\n"))
    return "".join(line + "\n" for line in out)


def _printable(line: str) -> str:
    return "".join(ch if ch.isprintable() or ch == "\t" else " " for ch in line)


def _remember_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.features.facts import FactStore

    if not args.text.strip():
        parser.error("TEXT is empty; say the fact in a few words")
    try:
        fact, created = FactStore.for_settings(Settings.load()).add(args.text, args.scope)
    except EXPECTED_ERRORS as error:
        return fail(error)
    if args.json:
        json_line({"action": "remembered" if created else "confirmed", **fact.as_dict()})
    elif created:
        sys.stdout.write(f"remembered {fact.id} ({fact.scope}): {fact.text}\n")
    else:
        times = "time" if fact.confirmations == 1 else "times"
        sys.stdout.write(
            f"confirmed {fact.id} ({fact.scope}, said {fact.confirmations} {times}): {fact.text}\n"
        )
    return EXIT_OK


def _facts_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.features.facts import FactStore

    try:
        facts = FactStore.for_settings(Settings.load()).list(args.scope)
    except EXPECTED_ERRORS as error:
        return fail(error)
    out = sys.stdout
    if args.json:
        for fact in facts:
            json_line(fact.as_dict(), out)
        return EXIT_OK
    if not facts:
        logger.warning("no facts remembered yet (add one with 'sidelight remember TEXT')")
        return EXIT_OK
    for fact in facts:
        when = datetime.fromtimestamp(fact.confirmed).astimezone().strftime("%Y-%m-%d %H:%M")
        out.write(f"{fact.id}  {fact.scope:<5}  {when}  {_printable(fact.text)}\n")
    return EXIT_OK


def _forget_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.features.facts import FactStore

    if not args.fact.strip():
        parser.error("FACT is empty; give its id (see 'sidelight facts') or its text")
    try:
        fact = FactStore.for_settings(Settings.load()).forget(args.fact)
    except EXPECTED_ERRORS as error:
        return fail(error)
    if args.json:
        json_line({"action": "forgot", **fact.as_dict()})
    else:
        sys.stdout.write(f"forgot {fact.id} ({fact.scope}): {fact.text}\n")
    return EXIT_OK
