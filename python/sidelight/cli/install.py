"""Commands ``sidelight install TARGET`` and ``sidelight uninstall TARGET``: every registered installer
(the built-in agents', the service's and the plugins' alike), ``skill`` and ``mcp --host HOST``."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

__all__ = ["install_targets", "register"]

#: ``sidelight install skill``: the reader's SKILL.md, in a folder ``--dir`` may name; every other
#: target is a registered installer (``sidelight_installers``: the built-in hosts' and the plugins').
SKILL = "skill"
#: ``sidelight install mcp --host HOST``: the MCP server in a host's MCP config
#: (:mod:`sidelight.integrations.mcp_hosts`).
MCP = "mcp"


def install_targets() -> list[str]:
    """What ``sidelight install`` / ``uninstall`` know how to set up: every registered installer (by
    name: the built-in agents', the service's and the plugins' alike) and ``skill``."""
    from sidelight.plugins import get_plugins

    return [*sorted([*get_plugins().installers(), MCP]), SKILL]


def _project_targets() -> list[str]:
    """The targets that can be set up for one project (``--scope project``); the others are the user's."""
    from sidelight.plugins import get_plugins

    installers = get_plugins().installers()
    return [name for name in sorted(installers) if "project" in installers[name].scopes] + [SKILL, MCP]


def _mcp_hosts() -> list[str]:
    """The hosts ``install mcp --host`` knows (asked for only by ``install mcp`` and ``--help``)."""
    from sidelight.integrations.mcp_hosts import HOSTS

    return sorted(HOSTS)


def register(commands: Any) -> None:
    """Adds ``install`` and ``uninstall`` to the ``sidelight`` parser."""
    from sidelight.cli.common import RegisteredNames

    # The registered installers, asked for when TARGET is checked (not to build the parser).
    targets = RegisteredNames(install_targets)
    install = commands.add_parser(
        "install",
        help="install sidelight's hooks into an agent host, or the watcher as a service",
        description=_INSTALL_ABOUT,
        formatter_class=_install_help(),
    )
    install.add_argument("target", metavar="TARGET", choices=targets, help=_TARGET_HELP)
    install.add_argument(
        "--scope",
        choices=("user", "project"),
        default=None,  # given or not: only a given one is refused where it does not apply
        help="the user's settings or this project's [env: SIDELIGHT_INSTALL_SCOPE; default: user]",
    )
    install.add_argument(
        "--dir", metavar="DIRECTORY", help="skill: the folder for SKILL.md (another agent's skills folder)"
    )
    install.add_argument("--host", metavar="HOST", help=_HOST_HELP)
    install.add_argument("--json", action="store_true", help=_RESULT_JSON)
    install.set_defaults(run=_install_command, parser=install)

    uninstall = commands.add_parser(
        "uninstall",
        help="remove sidelight's hooks from an agent host, or the watcher's service",
        description="Remove exactly what 'sidelight install' added: its hook entries (other hooks and "
        "settings stay; a file still as install left it gets its earlier bytes back), the files it "
        "created and the folders it made, once empty (never a file or folder that was there before). A "
        "file edited since install is backed up to <state dir>/backups/TARGET/ first. service: stop and "
        "disable the watcher's service and remove its file.",
        formatter_class=_install_help(),
    )
    uninstall.add_argument("target", metavar="TARGET", choices=targets, help=_TARGET_HELP)
    uninstall.add_argument(
        "--scope",
        choices=("user", "project"),
        default=None,  # given or not: only a given one is refused where it does not apply
        help="the user's settings or this project's [default: user]",
    )
    uninstall.add_argument(
        "--dir", metavar="DIRECTORY", help="skill: the folder for SKILL.md (another agent's skills folder)"
    )
    uninstall.add_argument(
        "--purge",
        action="store_true",
        help="also remove sidelight's state directory (cursors, logs, archive, config.toml; a backup "
        "of a file you had edited stays), once no other target is installed",
    )
    uninstall.add_argument("--host", metavar="HOST", help=_HOST_HELP)
    uninstall.add_argument("--json", action="store_true", help=_RESULT_JSON)
    uninstall.set_defaults(run=_uninstall_command, parser=uninstall)


#: The registered installers (the built-ins' and the installed plugins'), named in ``--help``.
_TARGET_HELP = "%(choices)s"
#: ``sidelight install --help`` after what each target sets up (:func:`_install_help`).
_INSTALL_ABOUT = (
    "skill: a SKILL.md for agents. Running it twice changes nothing; a changed file is backed up first, "
    "to <state dir>/backups/TARGET/. The hooks and the service call sidelight by absolute path."
)


def _install_help() -> type[argparse.HelpFormatter]:
    """The help formatter of ``install`` and ``uninstall``: what each target sets up (the registered
    installers' descriptions) and the targets ``--scope project`` applies to are asked for when the help
    is shown, so that only ``--help`` loads the installers."""
    import argparse  # loaded already: the parser is being built

    class InstallHelp(argparse.HelpFormatter):
        def add_text(self, text: str | None) -> None:
            if text == _INSTALL_ABOUT:
                from sidelight.plugins import get_plugins

                installers = get_plugins().installers()
                text = (
                    "".join(f"{name}: {installers[name].description}; " for name in sorted(installers)) + text
                )
            super().add_text(text)

        def _get_help_string(self, action: argparse.Action) -> str | None:
            text = super()._get_help_string(action)
            if action.dest == "scope" and text is not None:
                return f"{', '.join(_project_targets())}: {text}"
            if action.dest == "host" and text is not None:
                return f"{text}: {', '.join(_mcp_hosts())}"
            return text

    return InstallHelp


_HOST_HELP = "mcp: the host whose MCP config gets the sidelight server (docs/mcp.md)"
_RESULT_JSON = "one JSON object per file or service step: target, path, changed, message, backup, notes"


def _install_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    scope = _scope(parser, args)
    code = _install_or_uninstall(args.target, scope, args.dir, install=True, json=args.json, host=args.host)
    if code == 0 and not args.json:
        sys.stdout.write(_next_step(args.target, args.host) + "\n")
    return code


def _next_step(target: str, host: str | None = None) -> str:
    """The one line ``install`` ends with: what to do next to see it work."""
    if target == "mcp":
        return f"next: restart {host or 'the host'}; its 'sidelight mcp' server then answers the digest tool"
    if target == "service":
        return "next: 'sidelight status' shows the watcher running"
    if target == SKILL:
        return "next: ask an agent about its sibling sessions; 'sidelight sessions' lists what it can read"
    return f"next: start a new {target} session and type a prompt; 'sidelight status' then lists it"


def _uninstall_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings

    state_dir = Settings.load().state_dir
    if args.purge:
        others = _installed_targets(state_dir, but=args.target)
        if others:
            many = len(others) > 1
            parser.error(
                f"{', '.join(others)} {'are' if many else 'is'} still installed, and its uninstall needs "
                f"the state --purge removes: uninstall {'them' if many else 'it'} first"
            )
    scope = _scope(parser, args)
    code = _install_or_uninstall(args.target, scope, args.dir, install=False, json=args.json, host=args.host)
    if code != 0 or args.json:
        return code
    if not args.purge:
        sys.stdout.write(f"sidelight's state stays in {state_dir} (--purge removes it)\n")
        return code
    removed, kept = _purge(state_dir)
    for path in removed:
        sys.stdout.write(f"removed {path}\n")
    for path, why in kept:
        sys.stdout.write(f"kept {path}: {why}\n")
    if not removed and not kept:
        sys.stdout.write(f"nothing to remove: {state_dir} does not exist\n")
    return code


def _installed_targets(state_dir: Path, but: str) -> list[str]:
    """The targets, other than ``but``, whose install records still name a file (what their uninstall
    needs)."""
    import json

    from sidelight.statelayout import INSTALLS_DIR

    found = []
    for record in sorted((state_dir / INSTALLS_DIR).glob("*.json")):
        try:
            document = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        places = document.get("places") if isinstance(document, dict) else None
        files = (
            [p.get("files") for p in places.values() if isinstance(p, dict)]
            if isinstance(places, dict)
            else []
        )
        if record.stem != but and any(files):
            found.append(record.stem)
    return found


def _purge(state_dir: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Remove what sidelight keeps in ``state_dir`` (:func:`~sidelight.statelayout.is_state_entry`),
    and the folder once empty; what was removed, and what was kept and why: a backup of a file a
    person edited, and anything sidelight did not put there (a state directory set to a shared folder)."""
    import shutil

    from sidelight.statelayout import BACKUPS_DIR, is_state_entry

    removed: list[Path] = []
    kept: list[tuple[Path, str]] = []
    try:
        entries = sorted(state_dir.iterdir())
    except FileNotFoundError:
        return removed, kept
    for entry in entries:
        if not is_state_entry(entry.name):
            kept.append((entry, "not sidelight's"))
        elif entry.name == BACKUPS_DIR and any(entry.rglob("*")):
            kept.append(
                (entry, "backups of files you had edited; remove it by hand once you do not need them")
            )
        else:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
    if not kept:
        state_dir.rmdir()
        removed.append(state_dir)
    return removed, kept


def _scope(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The scope to install ``args.target`` in. ``--scope project`` or ``--dir`` where they do not
    apply is a usage error (exit 2), not something else done with exit 0; ``SIDELIGHT_INSTALL_SCOPE``,
    set once for every target, is a default and only warned about where it does not apply."""
    from sidelight.cli.common import logger

    target = args.target
    if args.host is not None and target != MCP:
        parser.error(f"--host applies to mcp only; {target} is a host itself")
    if target == MCP and not (args.host or "").strip():
        parser.error(f"mcp needs --host HOST: {', '.join(_mcp_hosts())}")
    if args.dir is not None and target != "skill":
        parser.error(f"--dir applies to skill only; {target} is installed where {target} reads it")
    if args.dir is not None:
        from pathlib import Path

        folder = Path(args.dir).expanduser()
        if not args.dir.strip():
            parser.error("--dir needs a folder")
        if folder.exists() and not folder.is_dir():
            parser.error(f"--dir {args.dir}: not a folder; give the folder SKILL.md goes in")
    if args.scope is not None:
        if args.scope == "project" and target not in _project_targets():
            parser.error(
                f"--scope project applies to {', '.join(_project_targets())}; {target} is set up for the user"
            )
        return str(args.scope)
    scope = os.environ.get("SIDELIGHT_INSTALL_SCOPE", "").strip() or "user"
    if scope not in ("user", "project"):
        parser.error(f"SIDELIGHT_INSTALL_SCOPE={scope} is no scope; use user or project")
    if scope == "project" and target not in _project_targets():
        logger.warning(
            "SIDELIGHT_INSTALL_SCOPE=project applies to %s; %s is set up for the user",
            ", ".join(_project_targets()),
            target,
        )
        return "user"
    return scope


def _install_or_uninstall(
    target: str,
    scope: str,
    directory: str | None,
    *,
    install: bool,
    json: bool = False,
    host: str | None = None,
) -> int:
    from sidelight import install as installer
    from sidelight.cli.common import fail, json_line, logger
    from sidelight.plugins import get_plugins

    try:
        if target == SKILL:
            results = [_skill(scope, directory, install=install)]
        elif target == MCP:
            from sidelight.config import Settings
            from sidelight.integrations.mcp_hosts import install_mcp, uninstall_mcp

            results = [(install_mcp if install else uninstall_mcp)(str(host).strip(), scope, Settings.load())]
        else:
            spec = get_plugins().installers()[target]
            results = list((spec.install if install else spec.uninstall)(scope))
    except (installer.InstallError, OSError, ValueError) as error:
        return fail(error)
    for result in results:
        if json:
            record = {
                "target": result.target,
                "path": None if result.path is None else os.fspath(result.path),
                "changed": result.changed,
                "message": result.message,
                "backup": None if result.backup is None else os.fspath(result.backup),
                "notes": list(result.notes),
            }
            json_line(record)
        else:
            sys.stdout.write(result.message + "\n")
        for note in result.notes:
            logger.warning("%s", note)
    return 0


def _skill(scope: str, directory: str | None, *, install: bool) -> Any:
    """``install skill`` belongs to the reader (:mod:`sidelight.features.reader`); this only routes to it."""
    from pathlib import Path

    from sidelight import install as installer
    from sidelight.config import Settings
    from sidelight.features.reader import install_skill_report, is_skill, skill_path
    from sidelight.statefile import regular_file_target

    settings = Settings.load()
    folder = Path(directory) if directory else None
    if install:
        report = install_skill_report(scope, folder, settings)
        if report.action == "unchanged":
            return installer.InstallResult("skill", report.path, False, f"already installed: {report.path}")
        where = f" (backup: {report.backup})" if report.backup else ""
        return installer.InstallResult(
            "skill", report.path, True, f"{report.action} {report.path}{where}", report.backup
        )
    path = skill_path(scope, folder, settings)
    regular_file_target(path)  # reading a FIFO would block
    try:
        return installer.uninstall_file("skill", path, is_skill, state_dir=settings.state_dir)
    except installer.InstallError:
        raise installer.InstallError(
            f"{path} differs from sidelight's skill; remove it by hand if you want"
        ) from None
