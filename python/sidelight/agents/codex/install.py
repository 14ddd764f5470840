"""``sidelight install codex``: ``UserPromptSubmit`` and ``SessionStart`` command hooks, and a
``PreToolUse`` hook matched to ``apply_patch`` (the stale-write guard) and a ``PostToolUse`` hook for
every tool (the news within the turn), in
``~/.codex/hooks.json`` (``CODEX_HOME``; Codex has no ``SessionEnd``), plus ``[features] hooks = true``
in ``config.toml``, which uninstall turns off again when install turned it on and nothing may need it.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

import re
import tomllib
from typing import TYPE_CHECKING

from sidelight.install.command import hook_command
from sidelight.install.ledger import InstallError, Ledger, read_text, removed_message, with_folders
from sidelight.install.settings import (
    add_hooks,
    dump_json,
    holds_hooks,
    read_json,
    remove_hooks,
    take_hooks_out,
)
from sidelight.records import InstallerSpec, InstallResult

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["CODEX_EVENTS", "CODEX_FLAG_STAYS", "INSTALLER", "install_codex", "uninstall_codex"]

#: The Codex hook events sidelight listens to (Codex has no ``SessionEnd``).
CODEX_EVENTS = ("UserPromptSubmit", "SessionStart", "PreToolUse", "PostToolUse")
#: The tools each event's hook runs for (the others: every one): the agent's ``WRITE_TOOLS``, spelled
#: here too since the agent's module imports this one (tests/test_edit_guard.py checks they agree).
CODEX_MATCHERS = {"PreToolUse": "apply_patch"}


def _codex_dir(home: Path | None) -> Path:
    if home is not None:
        return home / ".codex"
    from sidelight.config import Settings

    codex = Settings.load().codex_dir
    assert codex is not None
    return codex


def _enable_hooks_feature(text: str, path: Path) -> str | None:
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
    data = read_json(hooks_path, "Codex hooks file")
    config_text = read_text(config_path) or ""
    new_config = _enable_hooks_feature(config_text, config_path)  # checked before anything is written
    results = []
    ledger = Ledger("codex", hooks_path)
    if add_hooks(data, hooks_path, "codex", CODEX_EVENTS, hook_command("codex"), matchers=CODEX_MATCHERS):
        verb = "installed the Codex hooks in"
        results.append(
            ledger.save(
                hooks_path, dump_json(data), verb, ours=lambda t: holds_hooks(t, "codex"), whole=False
            )
        )
    else:
        results.append(InstallResult("codex", hooks_path, False, f"already installed in {hooks_path}"))
    if new_config is not None:
        verb = "enabled [features] hooks = true in"
        results.append(ledger.save(config_path, new_config, verb, ours=lambda _: False, whole=False))
    note = (
        "Codex runs hooks only once you trust them: start codex and accept them "
        "(or pass --dangerously-bypass-hook-trust in automation)"
    )
    last = results[-1]
    results[-1] = InstallResult(last.target, last.path, last.changed, last.message, last.backup, (note,))
    return results


#: What uninstall says when it leaves Codex's ``hooks`` feature on.
CODEX_FLAG_STAYS = (
    "[features] hooks = true stays in config.toml ({why}); remove it by hand if nothing needs it"
)


def uninstall_codex(*, home: Path | None = None) -> list[InstallResult]:
    """Removes sidelight's hooks from ``~/.codex/hooks.json``, and turns the ``hooks`` feature off again
    when install turned it on, ``config.toml`` is as install left it, and no hooks were added since."""
    codex = _codex_dir(home)
    hooks_path, config_path = codex / "hooks.json", codex / "config.toml"
    data = read_json(hooks_path, "Codex hooks file")
    if not remove_hooks(data, "codex"):
        return [InstallResult("codex", hooks_path, False, f"not installed in {hooks_path}")]
    ledger = Ledger("codex", hooks_path)
    as_written = ledger.is_as_written(hooks_path, read_text(hooks_path))
    results = [take_hooks_out(ledger, hooks_path, data, "removed the Codex hooks from")]
    # Hooks there before install ran without the flag then, and do again; hooks added since may
    # have come to rely on it.
    added_since = not as_written and bool(data.get("hooks"))
    why = ""
    if ledger.record(config_path) is None:
        if ledger.record(hooks_path) is None:  # installed by a version that kept no record
            why = "other hooks may need it"
    elif added_since:
        why = "the hooks added to hooks.json since install may need it"
    else:
        done = ledger.undo(config_path, read_text(config_path))
        if done is None:
            why = "config.toml was edited since install"
        else:
            results.append(
                InstallResult(
                    "codex",
                    config_path,
                    True,
                    removed_message(config_path, done, "turned [features] hooks off again in"),
                )
            )
    folders = ledger.forget()
    results[-1] = with_folders(results[-1], folders)
    if why:
        last = results[-1]
        note = CODEX_FLAG_STAYS.format(why=why)
        results[-1] = InstallResult(last.target, last.path, last.changed, last.message, last.backup, (note,))
    return results


#: ``sidelight install codex`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="codex",
    install=lambda scope: install_codex(),
    uninstall=lambda scope: uninstall_codex(),
    description="~/.codex/hooks.json and [features] hooks = true in config.toml",
    scopes=("user",),
)
