"""Installing sidelight's hooks into agent hosts, and removing them again.

- **Claude Code**: ``UserPromptSubmit``, ``SessionStart`` and ``SessionEnd`` command hooks in
  ``~/.claude/settings.json`` (``scope="user"``; ``CLAUDE_CONFIG_DIR`` is honoured) or
  ``<cwd>/.claude/settings.json`` (``scope="project"``).
- **Codex**: ``UserPromptSubmit`` and ``SessionStart`` in ``~/.codex/hooks.json`` (``CODEX_HOME``), plus
  ``[features] hooks = true`` in ``config.toml``.
- **Qwen Code**: ``UserPromptSubmit``, ``SessionStart`` and ``SessionEnd`` command hooks in
  ``~/.qwen/settings.json`` (``QWEN_HOME``; Claude Code's shape, timeout in milliseconds). Qwen runs
  user-level hooks without a trust step.
- **GitHub Copilot CLI**: ``userPromptSubmitted``, ``sessionStart`` and ``sessionEnd`` in a file of its
  own, ``~/.copilot/hooks/sidelight.json`` (``COPILOT_HOME``). Copilot runs user-level hooks without a
  trust step (a repository's ``.github/hooks`` would need its folder in ``trusted_folders``; sidelight
  does not use them).
- **Gemini CLI**: ``BeforeAgent``, ``SessionStart`` and ``SessionEnd`` command hooks in
  ``~/.gemini/settings.json`` (``GEMINI_CLI_HOME``), timeouts in milliseconds as Gemini reads them.
- **Pi**: the extension shipped in this package (``integrations/pi/sidelight.ts``) copied to
  ``~/.pi/agent/extensions/sidelight.ts`` (``PI_CODING_AGENT_DIR``), with sidelight's command baked in.
- **opencode**: the plugin shipped in this package (``integrations/opencode/sidelight.ts``) copied to
  ``~/.config/opencode/plugin/sidelight.ts`` (``scope="user"``; ``XDG_CONFIG_HOME`` is honoured) or
  ``<cwd>/.opencode/plugin/sidelight.ts`` (``scope="project"``), with sidelight's command baked in.
- **The watcher as a service**: a systemd user unit (Linux,
  ``$XDG_CONFIG_HOME/systemd/user/sidelight-watch.service``) or a launchd agent (macOS,
  ``~/Library/LaunchAgents/dev.sidelight.watch.plist``) that runs ``sidelight watch``, restarts it when it
  fails, and is started at once when the service manager answers.

Every hook calls sidelight by absolute path (:func:`sidelight_command`), so it works when sidelight's
virtual environment is not on ``PATH``. Installing twice changes nothing; a file that changes is backed
up first (``NAME.sidelight-backup-YYYYmmddTHHMMSS``) and replaced atomically; a settings file that is not
valid JSON is refused, and nothing is changed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidelight.errors import SidelightError
from sidelight.statefile import write_atomic

__all__ = [
    "CLAUDE_EVENTS",
    "CODEX_EVENTS",
    "COPILOT_EVENTS",
    "GEMINI_EVENTS",
    "HOOK_TIMEOUT",
    "LAUNCHD_LABEL",
    "QWEN_EVENTS",
    "SERVICE_ENVIRONMENT",
    "SYSTEMD_UNIT",
    "InstallError",
    "InstallResult",
    "claude_plugin_dir",
    "install",
    "install_claude_code",
    "install_codex",
    "install_copilot",
    "install_gemini",
    "install_opencode",
    "install_pi",
    "install_qwen",
    "install_service",
    "launchd_plist",
    "opencode_plugin_path",
    "opencode_plugin_source",
    "pi_extension_source",
    "service_path",
    "sidelight_command",
    "systemd_unit",
    "uninstall",
    "uninstall_claude_code",
    "uninstall_codex",
    "uninstall_copilot",
    "uninstall_gemini",
    "uninstall_opencode",
    "uninstall_pi",
    "uninstall_qwen",
    "uninstall_service",
]

#: The Claude Code hook events sidelight listens to.
CLAUDE_EVENTS = ("UserPromptSubmit", "SessionStart", "SessionEnd")
#: The Codex hook events sidelight listens to (Codex has no ``SessionEnd``).
CODEX_EVENTS = ("UserPromptSubmit", "SessionStart")
#: The Qwen Code hook events sidelight listens to (Claude Code's names).
QWEN_EVENTS = ("UserPromptSubmit", "SessionStart", "SessionEnd")
#: The GitHub Copilot CLI hook events sidelight listens to.
COPILOT_EVENTS = ("userPromptSubmitted", "sessionStart", "sessionEnd")
#: The Gemini CLI hook events sidelight listens to (``BeforeAgent``: each prompt).
GEMINI_EVENTS = ("BeforeAgent", "SessionStart", "SessionEnd")
#: Seconds the host waits for the hook (sidelight's own budget, ``time_budget``, is shorter).
HOOK_TIMEOUT = 10

INTEGRATIONS = Path(__file__).resolve().parent / "integrations"
#: The line of the Pi extension that holds the command; :func:`pi_extension_source` rewrites it.
_PI_COMMAND_LINE = re.compile(r"^const INSTALLED_COMMAND: string\[\] = .*$", re.MULTILINE)
#: Every file sidelight installs into Pi carries this marker, so uninstall removes only its own.
PI_MARKER = "sidelight-pi-extension"
#: The same for opencode's plugin (its command line is the Pi extension's, ``INSTALLED_COMMAND``).
OPENCODE_MARKER = "sidelight-opencode-plugin"


class InstallError(SidelightError, ValueError):
    """An install or uninstall could not be done; nothing was changed."""


@dataclass(frozen=True, slots=True)
class InstallResult:
    """What one install or uninstall step did."""

    target: str
    path: Path | None
    changed: bool
    message: str
    backup: Path | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------------------------------------------
# Finding sidelight


def sidelight_command() -> list[str]:
    """The command that runs this sidelight, by absolute path.

    In order: ``SIDELIGHT_BIN``; the ``sidelight`` script beside the running interpreter (a virtual
    environment's ``bin``); the script this process was started as; ``sidelight`` on ``PATH``; else this
    interpreter with ``-m sidelight``.
    """
    override = os.environ.get("SIDELIGHT_BIN", "").strip()
    if override:
        return shlex.split(override)
    names = ("sidelight.exe", "sidelight") if os.name == "nt" else ("sidelight",)
    candidates: list[Path] = []
    for name in names:
        candidates.append(Path(sys.executable).parent / name)
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in names:
        candidates.append(argv0)
    found = shutil.which("sidelight")
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "sidelight"]


def _hook_command(host: str) -> str:
    return " ".join(shlex.quote(part) for part in [*sidelight_command(), "hook", host])


def _is_ours(command: Any, host: str) -> bool:
    """A hook command sidelight installed: ``... sidelight ... hook HOST``."""
    if not isinstance(command, str) or "sidelight" not in command:
        return False
    return re.search(rf"(^|\s)hook\s+{re.escape(host)}\s*$", command) is not None


# ---------------------------------------------------------------------------------------------------
# Files: read, back up, write atomically


def _backup(path: Path) -> Path | None:
    if not path.exists():
        return None
    stamp = time.strftime("%Y%m%dT%H%M%S")
    backup = path.with_name(f"{path.name}.sidelight-backup-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.sidelight-backup-{stamp}-{n}")
    shutil.copy2(path, backup)
    return backup


def _write_atomic(path: Path, text: str) -> None:
    """A host's settings file, written atomically; it keeps its mode (a new one is ``0644``, as the
    host would write it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    write_atomic(path, text.encode("utf-8"), mode=mode)


def _read_json(path: Path, what: str) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InstallError(f"{path}: cannot read the {what} ({error}); nothing was changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as error:
        raise InstallError(
            f"{path}: the {what} is not valid JSON ({error}); fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: the {what} is not a JSON object; nothing was changed")
    return data


def _save(path: Path, text: str, target: str, verb: str) -> InstallResult:
    backup = _backup(path)
    _write_atomic(path, text)
    where = f" (backup: {backup})" if backup else ""
    return InstallResult(
        target=target, path=path, changed=True, message=f"{verb} {path}{where}", backup=backup
    )


# ---------------------------------------------------------------------------------------------------
# The command-hook settings shape shared by Claude Code and Codex


def _hooks_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not a JSON object; nothing was changed')
    return hooks


def _add_hooks(
    data: dict[str, Any],
    path: Path,
    host: str,
    events: tuple[str, ...],
    command: str,
    timeout: int = HOOK_TIMEOUT,
) -> bool:
    """Adds (or updates) our command hook for each event; True when something changed. ``timeout`` is
    in the host's unit (seconds for Claude Code and Codex, milliseconds for Gemini)."""
    hooks = _hooks_table(data, path)
    changed = False
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f'{path}: "hooks.{event}" is not a list; nothing was changed')
        found = False
        for group in groups:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and _is_ours(hook.get("command"), host):
                    if found:
                        continue
                    found = True
                    if hook.get("command") != command:
                        hook["command"] = command
                        changed = True
        if not found:
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
            changed = True
    return changed


def _remove_hooks(data: dict[str, Any], host: str) -> int:
    """Removes our command hooks (and groups and events left empty); the number removed."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [
                h for h in group["hooks"] if not (isinstance(h, dict) and _is_ours(h.get("command"), host))
            ]
            removed += len(group["hooks"]) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        elif groups:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------------
# Claude Code


def _claude_settings_path(scope: str, home: Path | None, cwd: Path | None) -> Path:
    if scope == "project":
        return (cwd or Path.cwd()) / ".claude" / "settings.json"
    if scope != "user":
        raise InstallError(f"unknown scope {scope!r}: use user or project")
    if home is not None:
        return home / ".claude" / "settings.json"
    from sidelight.config import Settings

    return Settings.load().claude_dirs[0] / "settings.json"


def install_claude_code(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Adds sidelight's hooks to Claude Code's ``settings.json``."""
    path = _claude_settings_path(scope, home, cwd)
    data = _read_json(path, "Claude Code settings file")
    if not _add_hooks(data, path, "claude-code", CLAUDE_EVENTS, _hook_command("claude-code")):
        return InstallResult("claude-code", path, False, f"already installed in {path}")
    return _save(path, _dump(data), "claude-code", "installed the Claude Code hooks in")


def uninstall_claude_code(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Removes sidelight's hooks (only those) from Claude Code's ``settings.json``."""
    path = _claude_settings_path(scope, home, cwd)
    data = _read_json(path, "Claude Code settings file")
    if not _remove_hooks(data, "claude-code"):
        return InstallResult("claude-code", path, False, f"not installed in {path}")
    return _save(path, _dump(data), "claude-code", "removed the Claude Code hooks from")


def claude_plugin_dir() -> Path:
    """The Claude Code plugin shipped in this package (``claude --plugin-dir PATH``)."""
    return INTEGRATIONS / "claude-code"


# ---------------------------------------------------------------------------------------------------
# Codex


def _codex_dir(home: Path | None) -> Path:
    if home is not None:
        return home / ".codex"
    from sidelight.config import Settings

    codex = Settings.load().codex_dir
    assert codex is not None
    return codex


def _enable_codex_hooks(text: str, path: Path) -> str | None:
    """``config.toml`` with ``[features] hooks = true``, editing as little as possible (``None``: as is)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InstallError(f"{path}: not valid TOML ({error}); fix it first, nothing was changed") from None
    features = data.get("features")
    if isinstance(features, dict) and features.get("hooks") is True:
        return None
    if features is not None and not isinstance(features, dict):
        raise InstallError(f"{path}: `features` is not a table; set `[features] hooks = true` by hand")
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[\s*features\s*\]\s*(#.*)?$")
    any_table = re.compile(r"^\s*\[")
    key = re.compile(r"^(\s*)hooks\s*=.*$")
    start = next((i for i, line in enumerate(lines) if header.match(line.rstrip("\r\n"))), None)
    if start is None:
        if isinstance(features, dict):  # features set with dotted keys or inline: do not guess
            raise InstallError(f"{path}: no [features] table to edit; set `[features] hooks = true` by hand")
        sep = "" if not text or text.endswith("\n") else "\n"
        blank = "\n" if text.strip() else ""
        new = f"{text}{sep}{blank}[features]\nhooks = true\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if any_table.match(lines[i])), len(lines))
        for i in range(start + 1, end):
            match = key.match(lines[i].rstrip("\r\n"))
            if match:
                newline = lines[i][len(lines[i].rstrip("\r\n")) :] or "\n"
                lines[i] = f"{match.group(1)}hooks = true{newline}"
                break
        else:
            lines.insert(start + 1, "hooks = true\n")
        new = "".join(lines)
    try:
        check = tomllib.loads(new)
    except tomllib.TOMLDecodeError as error:  # pragma: no cover - a bug in the edit above
        raise InstallError(f"{path}: could not enable hooks safely ({error}); nothing was changed") from None
    if check.get("features", {}).get("hooks") is not True:  # pragma: no cover
        raise InstallError(f"{path}: could not enable hooks safely; set `[features] hooks = true` by hand")
    return new


def install_codex(*, home: Path | None = None) -> list[InstallResult]:
    """Adds sidelight's hooks to ``~/.codex/hooks.json`` and turns on Codex's ``hooks`` feature."""
    codex = _codex_dir(home)
    hooks_path, config_path = codex / "hooks.json", codex / "config.toml"
    data = _read_json(hooks_path, "Codex hooks file")
    config_text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    new_config = _enable_codex_hooks(config_text, config_path)  # checked before anything is written
    results = []
    if _add_hooks(data, hooks_path, "codex", CODEX_EVENTS, _hook_command("codex")):
        results.append(_save(hooks_path, _dump(data), "codex", "installed the Codex hooks in"))
    else:
        results.append(InstallResult("codex", hooks_path, False, f"already installed in {hooks_path}"))
    if new_config is not None:
        results.append(_save(config_path, new_config, "codex", "enabled [features] hooks = true in"))
    note = (
        "Codex runs hooks only once you trust them: start codex and accept them "
        "(or pass --dangerously-bypass-hook-trust in automation)"
    )
    last = results[-1]
    results[-1] = InstallResult(last.target, last.path, last.changed, last.message, last.backup, (note,))
    return results


def uninstall_codex(*, home: Path | None = None) -> list[InstallResult]:
    """Removes sidelight's hooks from ``~/.codex/hooks.json``; the ``hooks`` feature flag stays on."""
    hooks_path = _codex_dir(home) / "hooks.json"
    data = _read_json(hooks_path, "Codex hooks file")
    note = "[features] hooks = true stays in config.toml (other hooks may need it); remove it by hand if not"
    if not _remove_hooks(data, "codex"):
        return [InstallResult("codex", hooks_path, False, f"not installed in {hooks_path}", notes=(note,))]
    result = _save(hooks_path, _dump(data), "codex", "removed the Codex hooks from")
    return [InstallResult(result.target, result.path, True, result.message, result.backup, (note,))]


# ---------------------------------------------------------------------------------------------------
# Gemini CLI

#: What ``install gemini`` says about trust: Gemini runs hooks only in a workspace it trusts, and
#: sidelight does not grant that trust itself.
GEMINI_TRUST_NOTE = (
    "the Gemini CLI runs hooks only in a trusted folder: trust it when Gemini asks "
    "(kept in ~/.gemini/trustedFolders.json), or set GEMINI_CLI_TRUST_WORKSPACE=true "
    "(or pass --skip-trust) in automation"
)


def _gemini_settings_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".gemini" / "settings.json"
    from sidelight.config import Settings

    gemini = Settings.load().gemini_dir
    assert gemini is not None
    return gemini / "settings.json"


def install_gemini(*, home: Path | None = None) -> InstallResult:
    """Adds sidelight's hooks to the Gemini CLI's user ``settings.json`` (its other settings stay)."""
    path = _gemini_settings_path(home)
    data = _read_json(path, "Gemini CLI settings file")
    command = _hook_command("gemini")
    if _add_hooks(data, path, "gemini", GEMINI_EVENTS, command, timeout=HOOK_TIMEOUT * 1000):
        result = _save(path, _dump(data), "gemini", "installed the Gemini CLI hooks in")
    else:
        result = InstallResult("gemini", path, False, f"already installed in {path}")
    return InstallResult(
        result.target, path, result.changed, result.message, result.backup, (GEMINI_TRUST_NOTE,)
    )


def uninstall_gemini(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from the Gemini CLI's ``settings.json``."""
    path = _gemini_settings_path(home)
    data = _read_json(path, "Gemini CLI settings file")
    if not _remove_hooks(data, "gemini"):
        return InstallResult("gemini", path, False, f"not installed in {path}")
    return _save(path, _dump(data), "gemini", "removed the Gemini CLI hooks from")


# ---------------------------------------------------------------------------------------------------
# Pi


def _pi_extension_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    from sidelight.config import Settings

    pi = Settings.load().pi_dir
    assert pi is not None
    return pi / "extensions" / "sidelight.ts"


def _script_source(folder: str, what: str, command: list[str] | None) -> str:
    """A shipped TypeScript file (Pi's extension, opencode's plugin) with ``command`` (default:
    :func:`sidelight_command`) baked into its ``INSTALLED_COMMAND`` line."""
    source = (INTEGRATIONS / folder / "sidelight.ts").read_text(encoding="utf-8")
    argv = sidelight_command() if command is None else command
    line = f"const INSTALLED_COMMAND: string[] = {json.dumps(argv)};"
    new, n = _PI_COMMAND_LINE.subn(lambda _: line, source, count=1)
    if n != 1:  # pragma: no cover - the shipped file lost its marker line
        raise InstallError(f"the shipped {what} has no INSTALLED_COMMAND line")
    return new


def pi_extension_source(command: list[str] | None = None) -> str:
    """The Pi extension with ``command`` (default: :func:`sidelight_command`) baked in."""
    return _script_source("pi", "Pi extension", command)


def _install_script(target: str, path: Path, source: str, what: str) -> InstallResult:
    if path.exists():
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InstallError(f"{path}: cannot read it ({error}); nothing was changed") from None
        if current == source:
            return InstallResult(target, path, False, f"already installed: {path}")
    return _save(path, source, target, f"installed the {what}")


def _uninstall_script(target: str, path: Path, marker: str) -> InstallResult:
    if not path.exists():
        return InstallResult(target, path, False, f"not installed: {path}")
    if marker not in path.read_text(encoding="utf-8", errors="replace"):
        raise InstallError(f"{path} was not written by sidelight; not removing it")
    path.unlink()
    return InstallResult(target, path, True, f"removed {path}")


def install_pi(*, home: Path | None = None) -> InstallResult:
    """Copies sidelight's Pi extension to ``~/.pi/agent/extensions/sidelight.ts``."""
    return _install_script("pi", _pi_extension_path(home), pi_extension_source(), "Pi extension")


def uninstall_pi(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's Pi extension (only if it is sidelight's)."""
    return _uninstall_script("pi", _pi_extension_path(home), PI_MARKER)


# ---------------------------------------------------------------------------------------------------
# opencode


def opencode_plugin_path(scope: str = "user", *, home: Path | None = None, cwd: Path | None = None) -> Path:
    """Where the opencode plugin goes: opencode's user plugin folder (``$XDG_CONFIG_HOME/opencode``,
    else ``~/.config/opencode``), or the project's ``.opencode/plugin`` for ``scope="project"``."""
    if scope == "project":
        return (cwd or Path.cwd()) / ".opencode" / "plugin" / "sidelight.ts"
    if home is not None:
        config = home / ".config"
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
        config = Path(xdg) if xdg else Path(os.environ.get("HOME") or Path.home()) / ".config"
    return config / "opencode" / "plugin" / "sidelight.ts"


def opencode_plugin_source(command: list[str] | None = None) -> str:
    """The opencode plugin with ``command`` (default: :func:`sidelight_command`) baked in."""
    return _script_source("opencode", "opencode plugin", command)


def install_opencode(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Copies sidelight's opencode plugin into opencode's plugin folder (:func:`opencode_plugin_path`);
    the other files there stay as they are."""
    path = opencode_plugin_path(scope, home=home, cwd=cwd)
    return _install_script("opencode", path, opencode_plugin_source(), "opencode plugin")


def uninstall_opencode(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Removes sidelight's opencode plugin (only if it is sidelight's)."""
    return _uninstall_script("opencode", opencode_plugin_path(scope, home=home, cwd=cwd), OPENCODE_MARKER)


# ---------------------------------------------------------------------------------------------------
# Qwen Code and GitHub Copilot CLI


def _home(home: Path | None) -> Path:
    if home is not None:
        return home
    from sidelight.config import Settings

    return Settings.load().home


def _agent_dir(home: Path | None, name: str) -> Path:
    """An agent's folder: ``home / name`` for a given home, else the settings' (``QWEN_HOME``…)."""
    if home is not None:
        return home / name
    from sidelight.config import Settings

    found: Path | None = getattr(Settings.load(), name.lstrip(".") + "_dir")
    assert found is not None
    return found


def _qwen_settings_path(home: Path | None) -> Path:
    return _agent_dir(home, ".qwen") / "settings.json"


def install_qwen(*, home: Path | None = None) -> InstallResult:
    """Adds sidelight's hooks to Qwen Code's user settings (``~/.qwen/settings.json``)."""
    path = _qwen_settings_path(home)
    data = _read_json(path, "Qwen Code settings file")
    command = _hook_command("qwen")
    if not _add_hooks(data, path, "qwen", QWEN_EVENTS, command, timeout=HOOK_TIMEOUT * 1000):
        return InstallResult("qwen", path, False, f"already installed in {path}")
    return _save(path, _dump(data), "qwen", "installed the Qwen Code hooks in")


def uninstall_qwen(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from Qwen Code's user settings."""
    path = _qwen_settings_path(home)
    data = _read_json(path, "Qwen Code settings file")
    if not _remove_hooks(data, "qwen"):
        return InstallResult("qwen", path, False, f"not installed in {path}")
    return _save(path, _dump(data), "qwen", "removed the Qwen Code hooks from")


def _copilot_hooks_path(home: Path | None) -> Path:
    return _agent_dir(home, ".copilot") / "hooks" / "sidelight.json"


def copilot_hooks(command: str) -> dict[str, Any]:
    """The contents of ``~/.copilot/hooks/sidelight.json``: one command hook for each event."""
    hook = {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT}
    return {"version": 1, "hooks": {event: [dict(hook)] for event in COPILOT_EVENTS}}


def _copilot_is_ours(data: dict[str, Any]) -> bool:
    hooks = data.get("hooks")
    return isinstance(hooks, dict) and any(
        isinstance(h, dict) and _is_ours(h.get("bash"), "copilot")
        for groups in hooks.values()
        if isinstance(groups, list)
        for h in groups
    )


def install_copilot(*, home: Path | None = None) -> InstallResult:
    """Writes sidelight's hooks file for GitHub Copilot CLI, ``~/.copilot/hooks/sidelight.json``."""
    path = _copilot_hooks_path(home)
    data = _read_json(path, "Copilot hooks file")
    if data and not _copilot_is_ours(data):
        raise InstallError(f"{path} was not written by sidelight; not replacing it")
    wanted = copilot_hooks(_hook_command("copilot"))
    if data == wanted:
        return InstallResult("copilot", path, False, f"already installed in {path}")
    return _save(path, _dump(wanted), "copilot", "installed the Copilot CLI hooks in")


def uninstall_copilot(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's Copilot hooks file (only if it is sidelight's)."""
    path = _copilot_hooks_path(home)
    data = _read_json(path, "Copilot hooks file")
    if not path.exists():
        return InstallResult("copilot", path, False, f"not installed: {path}")
    if not _copilot_is_ours(data):
        raise InstallError(f"{path} was not written by sidelight; not removing it")
    path.unlink()
    return InstallResult("copilot", path, True, f"removed {path}")


# ---------------------------------------------------------------------------------------------------
# The watcher as a service: a systemd user unit (Linux) or a launchd agent (macOS)

#: The systemd user unit's name.
SYSTEMD_UNIT = "sidelight-watch.service"
#: The launchd agent's label (and its plist's name).
LAUNCHD_LABEL = "dev.sidelight.watch"
#: Every service file sidelight writes carries this marker, so uninstall removes only its own.
SERVICE_MARKER = "sidelight-watch-service"
#: The variables passed on to the service when set at install time: where the state, the config and the
#: agents' sessions are. The watcher must use the state directory the hooks use (its snapshot, its
#: socket), and find the sessions they find; a service does not inherit the shell's environment.
SERVICE_ENVIRONMENT = (
    "SIDELIGHT_STATE_DIR",
    "SIDELIGHT_CONFIG",
    "XDG_STATE_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "PI_CODING_AGENT_DIR",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "COPILOT_HOME",
)
#: Seconds a ``systemctl`` or ``launchctl`` call may take.
SERVICE_MANAGER_TIMEOUT = 30


def _service_platform(platform: str | None) -> str:
    """``linux`` (systemd) or ``darwin`` (launchd); anything else is refused."""
    name = sys.platform if platform is None else platform
    if name.startswith("linux"):
        return "linux"
    if name == "darwin":
        return "darwin"
    raise InstallError(f"sidelight install service knows systemd (Linux) and launchd (macOS), not {name!r}")


def service_path(platform: str | None = None, *, home: Path | None = None) -> Path:
    """Where the service file goes: ``$XDG_CONFIG_HOME/systemd/user/sidelight-watch.service`` (default
    ``~/.config``) or ``~/Library/LaunchAgents/<label>.plist``."""
    home = home or Path(os.environ.get("HOME") or Path.home())
    if _service_platform(platform) == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(config) if config and Path(config).is_absolute() else home / ".config"
    return base / "systemd" / "user" / SYSTEMD_UNIT


def _service_environment() -> dict[str, str]:
    return {name: os.environ[name] for name in SERVICE_ENVIRONMENT if os.environ.get(name)}


def _systemd_quote(value: str, *, always: bool = False) -> str:
    """A word of a unit file: ``%`` (a specifier) and ``$`` (a variable in ``ExecStart``) doubled; in
    double quotes, with backslashes and quotes escaped, when it holds a space or a quote (or
    ``always``)."""
    escaped = value.replace("%", "%%").replace("$", "$$")
    if not always and escaped and not re.search(r"[\s\"'\\;]", escaped):
        return escaped
    escaped = escaped.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def systemd_unit(command: list[str], environment: dict[str, str]) -> str:
    """The systemd user unit that runs ``command watch`` and restarts it when it fails."""
    lines = [
        f"# {SERVICE_MARKER}: written by `sidelight install service`; `uninstall service` removes it.",
        "[Unit]",
        "Description=sidelight watch: follows the agents' sessions (sidelight status, hooks answered warm)",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_quote(part) for part in [*command, "watch"]),
        "Restart=on-failure",
        "RestartSec=5",
    ]
    lines += [f"Environment={_systemd_quote(f'{k}={v}', always=True)}" for k, v in environment.items()]
    lines += ["", "[Install]", "WantedBy=default.target", ""]
    return "\n".join(lines)


def launchd_plist(command: list[str], environment: dict[str, str], log: Path) -> str:
    """The launchd agent that runs ``command watch`` at login and again when it exits with an error."""
    import plistlib

    agent: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "Comment": f"{SERVICE_MARKER}: written by `sidelight install service`",
        "ProgramArguments": [*command, "watch"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    }
    if environment:
        agent["EnvironmentVariables"] = environment
    return plistlib.dumps(agent, sort_keys=False).decode("utf-8")


def _manager(name: str, args: list[str]) -> tuple[bool, str]:
    """Runs ``name args`` (found on ``PATH``): whether it succeeded, and its last line of output or why
    it could not run."""
    import subprocess

    found = shutil.which(name)
    if found is None:
        return False, f"{name} is not on PATH"
    try:
        done = subprocess.run(
            [found, *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=SERVICE_MANAGER_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return False, f"{name} {' '.join(args)}: {error}"
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return done.returncode == 0, said[-1] if said else f"exit status {done.returncode}"


def _shell(args: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in args)


def install_service(*, platform: str | None = None, home: Path | None = None) -> list[InstallResult]:
    """Writes the service that runs ``sidelight watch`` (systemd user unit or launchd agent) and starts
    it when the service manager answers; else says the one command that starts it."""
    system = _service_platform(platform)
    path = service_path(system, home=home)
    command = sidelight_command()
    environment = _service_environment()
    if system == "darwin":
        log = (
            (home or Path(os.environ.get("HOME") or Path.home())) / "Library" / "Logs" / "sidelight-watch.log"
        )
        text = launchd_plist(command, environment, log)
    else:
        text = systemd_unit(command, environment)
    current = None
    if path.exists():
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InstallError(f"{path}: cannot read it ({error}); nothing was changed") from None
        if SERVICE_MARKER not in current:
            raise InstallError(f"{path} was not written by sidelight; not replacing it")
    results: list[InstallResult] = []
    if current == text:
        results.append(InstallResult("service", path, False, f"already installed: {path}"))
    else:
        what = "launchd agent" if system == "darwin" else "systemd user unit"
        results.append(_save(path, text, "service", f"installed the {what}"))
    changed = results[0].changed
    runs = f"it runs: {_shell([*command, 'watch'])}"
    if environment:
        runs += ", with " + ", ".join(f"{k}={v}" for k, v in environment.items()) + " (as set now)"
    results.append(InstallResult("service", path, changed, runs))
    how = "unchanged" if not changed else ("new" if current is None else "replaced")
    start = _start_launchd(path, how) if system == "darwin" else _start_systemd(how)
    results.append(InstallResult("service", path, changed, start))
    return results


def _start_systemd(how: str) -> str:
    """``systemctl --user daemon-reload`` and ``enable --now`` (``how`` the file was written: ``new``,
    ``replaced``, then also ``try-restart``: a running unit keeps its old command line, or
    ``unchanged``); the command to run instead when the user's service manager cannot be reached."""
    enable = ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT]
    by_hand = f"systemctl --user daemon-reload && {_shell(enable)}"
    ok, said = _manager("systemctl", ["--user", "daemon-reload"])
    if not ok:
        return f"the user's systemd cannot be reached ({said}); to start the service, run: {by_hand}"
    ok, said = _manager("systemctl", enable[1:])
    if not ok:
        raise InstallError(f"{_shell(enable)} failed: {said}")
    if how == "replaced":
        ok, said = _manager("systemctl", ["--user", "try-restart", SYSTEMD_UNIT])
        if not ok:
            raise InstallError(f"systemctl --user try-restart {SYSTEMD_UNIT} failed: {said}")
    return f"enabled and started: {_shell(enable)} (logs: journalctl --user -u {SYSTEMD_UNIT})"


def _start_launchd(path: Path, how: str) -> str:
    """``launchctl bootstrap gui/UID PLIST`` (after ``bootout`` of the agent's old definition when its
    file was ``replaced``), else ``launchctl load -w``; the command to run when neither works. An agent
    already loaded from an ``unchanged`` file is left as it is."""
    domain = f"gui/{os.getuid()}"
    target = f"{domain}/{LAUNCHD_LABEL}"
    bootstrap = ["launchctl", "bootstrap", domain, str(path)]
    if shutil.which("launchctl") is None:
        return f"launchctl is not on PATH; to start the agent, run: {_shell(bootstrap)}"
    if how == "unchanged" and _manager("launchctl", ["print", target])[0]:
        return f"already loaded: {target}"
    if how == "replaced":
        _manager("launchctl", ["bootout", target])  # not loaded is fine
    _manager("launchctl", ["enable", target])  # as `load -w` does: a disabled agent would not start
    ok, said = _manager("launchctl", bootstrap[1:])
    if ok:
        return f"loaded and started: {_shell(bootstrap)}"
    ok, _legacy = _manager("launchctl", ["load", "-w", str(path)])
    if ok:
        return f"loaded and started: launchctl load -w {shlex.quote(str(path))}"
    return f"launchd did not load the agent ({said}); to start it, run: {_shell(bootstrap)}"


def uninstall_service(*, platform: str | None = None, home: Path | None = None) -> list[InstallResult]:
    """Stops and disables the service sidelight installed, and removes its file."""
    system = _service_platform(platform)
    path = service_path(system, home=home)
    if not path.exists():
        return [InstallResult("service", path, False, f"not installed: {path}")]
    if SERVICE_MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        raise InstallError(f"{path} was not written by sidelight; not removing it")
    stopped = _stop_launchd(path) if system == "darwin" else _stop_systemd(path)
    path.unlink()
    results = [InstallResult("service", path, True, f"removed {path}")]
    if stopped:
        results.insert(0, InstallResult("service", path, True, stopped))
    if system == "linux":
        _manager("systemctl", ["--user", "daemon-reload"])  # forget the removed unit (if it answers)
    return results


def _stop_systemd(path: Path) -> str:
    disable = ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT]
    ok, said = _manager("systemctl", disable[1:])
    if ok:
        return f"stopped and disabled: {_shell(disable)}"
    # No user manager to ask: take out the link `enable` made, so a later manager does not look for the
    # removed file; a service can only be running under a manager, which would have answered.
    link = path.parent / "default.target.wants" / SYSTEMD_UNIT
    if link.is_symlink():
        link.unlink()
        return f"the user's systemd cannot be reached ({said}); removed the link {link}"
    return f"the user's systemd cannot be reached ({said})"


def _stop_launchd(path: Path) -> str:
    target = f"gui/{os.getuid()}/{LAUNCHD_LABEL}"
    ok, said = _manager("launchctl", ["bootout", target])
    if ok:
        return f"stopped and unloaded: launchctl bootout {target}"
    ok, _legacy = _manager("launchctl", ["unload", "-w", str(path)])
    if ok:
        return f"stopped and unloaded: launchctl unload -w {shlex.quote(str(path))}"
    return f"launchd did not unload the agent ({said}); it may not have been loaded"


# ---------------------------------------------------------------------------------------------------
# Dispatch (the CLI)


def install(
    target: str, *, scope: str = "user", home: Path | None = None, cwd: Path | None = None
) -> list[InstallResult]:
    """Installs the hooks of ``target`` (``claude-code``, ``codex``, ``pi`` or ``opencode``), or the
    watcher as a ``service``."""
    if target == "claude-code":
        return [install_claude_code(scope, home=home, cwd=cwd)]
    if target == "codex":
        return install_codex(home=home)
    if target == "pi":
        return [install_pi(home=home)]
    if target == "gemini":
        return [install_gemini(home=home)]
    if target == "qwen":
        return [install_qwen(home=home)]
    if target == "copilot":
        return [install_copilot(home=home)]
    if target == "opencode":
        return [install_opencode(scope, home=home, cwd=cwd)]
    if target == "service":
        return install_service(home=home)
    raise InstallError(
        f"cannot install {target!r}: use claude-code, codex, pi, gemini, qwen, copilot, opencode or service"
    )


def uninstall(
    target: str, *, scope: str = "user", home: Path | None = None, cwd: Path | None = None
) -> list[InstallResult]:
    """Removes the hooks of ``target`` (``claude-code``, ``codex``, ``pi`` or ``opencode``), or the watcher's
    ``service``."""
    if target == "claude-code":
        return [uninstall_claude_code(scope, home=home, cwd=cwd)]
    if target == "codex":
        return uninstall_codex(home=home)
    if target == "pi":
        return [uninstall_pi(home=home)]
    if target == "gemini":
        return [uninstall_gemini(home=home)]
    if target == "qwen":
        return [uninstall_qwen(home=home)]
    if target == "copilot":
        return [uninstall_copilot(home=home)]
    if target == "opencode":
        return [uninstall_opencode(scope, home=home, cwd=cwd)]
    if target == "service":
        return uninstall_service(home=home)
    raise InstallError(
        f"cannot uninstall {target!r}: use claude-code, codex, pi, gemini, qwen, copilot, opencode or service"
    )
