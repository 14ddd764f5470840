"""Command ``sidelight plugins``: every plugin, the hooks it implements and the names it provides."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from sidelight.cli.common import EXIT_FAILED, EXIT_OK, EXPECTED_ERRORS, fail, json_line, paint

if TYPE_CHECKING:
    import argparse

    from sidelight.plugins import Plugins

__all__ = ["FAMILIES", "plugin_records", "register"]


#: The record families, in the order ``sidelight plugins`` shows them.
FAMILIES: tuple[str, ...] = ("agents", "formats", "resolvers", "summarizers", "injectors", "sinks")


def register(commands: Any) -> None:
    """Adds ``plugins``."""
    plugins = commands.add_parser(
        "plugins",
        help="list the plugins and what they provide",
        description="List every plugin (the built-in templates and those installed under the "
        "entry-point group 'sidelight'): its version, the hooks it implements and the agents, "
        "formats, resolvers, summarizers, injectors and sinks it provides; then the plugins that failed to "
        "load. SIDELIGHT_PLUGINS (comma-separated entry-point names) restricts which plugins load. "
        "Two plugins that claim one name are an error (exit 1).",
    )
    plugins.add_argument(
        "--check",
        action="store_true",
        help="run the quick conformance checks (sidelight.testing) on every plugin: formats on their "
        "sample transcripts, resolvers on this machine's sessions, the digest's cap; one line per "
        "problem, exit 1 when there is one",
    )
    plugins.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per plugin: name, version, builtin, loaded, hooks, provides, errors",
    )
    plugins.set_defaults(run=_plugins_command, parser=plugins)


def plugin_records(plugins: Plugins) -> list[dict[str, Any]]:
    """One record per plugin, registered ones first (in registration order), then those that failed to load.

    Raises :class:`sidelight.plugins.PluginConflictError` when two plugins claim one name.
    """
    for family in FAMILIES:  # raise on a conflict before anything is shown
        getattr(plugins, family)()
    provides: dict[str, dict[str, list[str]]] = {}
    for family in FAMILIES:
        hook = getattr(plugins.manager.hook, f"sidelight_{family}")
        for impl in hook.get_hookimpls():
            try:
                names = [record.name for record in impl.function() or ()]
            except Exception:  # already recorded in plugins.broken by the collection above
                continue
            provides.setdefault(impl.plugin_name, {})[family] = names
    errors: dict[str, list[str]] = {}
    for broken in plugins.broken:
        errors.setdefault(broken.name, []).append(broken.error)
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for info in plugins.info():
        seen.add(info.name)
        records.append(
            {
                "name": info.name,
                "version": info.version,
                "builtin": info.builtin,
                "loaded": True,
                "hooks": list(info.hooks),
                "provides": provides.get(info.name, {}),
                "errors": errors.get(info.name, []),
            }
        )
    for name, messages in errors.items():
        if name not in seen:
            records.append(
                {
                    "name": name,
                    "version": None,
                    "builtin": False,
                    "loaded": False,
                    "hooks": [],
                    "provides": {},
                    "errors": messages,
                }
            )
    return records


def _check_command(json_lines: bool) -> int:
    from sidelight.config import Settings
    from sidelight.plugins import get_plugins
    from sidelight.testing import check_plugins

    try:
        report = check_plugins(get_plugins(), Settings.load())
    except EXPECTED_ERRORS as error:
        return fail(error)
    out = sys.stdout
    for owner, problems in report.items():
        for problem in problems:
            if json_lines:
                json_line({"plugin": owner, "problem": problem}, out)
            else:
                out.write(f"{owner}: {problem}\n")
    count = sum(len(p) for p in report.values())
    if not json_lines:
        out.write(f"{count} problem{'' if count == 1 else 's'}\n" if count else "all plugins conform\n")
    return EXIT_FAILED if count else EXIT_OK


def _plugins_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.plugins import get_plugins

    if args.check:
        return _check_command(args.json)
    try:
        records = plugin_records(get_plugins())
    except EXPECTED_ERRORS as error:
        return fail(error)
    out = sys.stdout
    if args.json:
        for record in records:
            json_line(record, out)
        return EXIT_OK
    loaded = [r for r in records if r["loaded"]]
    for record in loaded:
        kind = "built-in" if record["builtin"] else "plugin"
        version = f" {record['version']}" if record["version"] else ""
        out.write(paint(f"{record['name']}{version} ({kind})", "header") + "\n")
        hooks = ", ".join(record["hooks"]) or "none"
        out.write(f"  hooks: {hooks}\n")
        for family in FAMILIES:
            names = record["provides"].get(family)
            if names:
                out.write(f"  {family}: {', '.join(names)}\n")
        for problem in record["errors"]:
            out.write(f"  failed: {problem}\n")
    failed = [r for r in records if not r["loaded"]]
    if failed:
        out.write("\nnot loaded:\n")
        for record in failed:
            for problem in record["errors"]:
                out.write(f"  {record['name']}: {problem}\n")
    return EXIT_OK
