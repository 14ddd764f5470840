"""A host's hook settings file: reading it (JSON, or JSONC where the host reads that), writing it back
changed only where sidelight's entries go, and the hooks table many hosts share.

The table is ``{"hooks": {EVENT: [{"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}``
(or, for a host whose hooks file is the table itself, ``top``, ``{EVENT: [...]}``); sidelight's entries
in it are the commands :func:`sidelight.install.command.is_hook_command` knows. A settings file that is
not valid JSON (or JSONC, for a host that reads it so) is refused and nothing is
changed; a JSONC file with comments or trailing commas is edited only where sidelight's entries go
(:func:`sidelight.install.jsonc.edit_jsonc`), so its comments stay.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sidelight.install.command import HOOK_TIMEOUT, hook_command, is_hook_command
from sidelight.install.jsonc import edit_jsonc, loads_jsonc
from sidelight.install.ledger import (
    InstallError,
    Ledger,
    read_text,
    remove_host_file,
    removed_message,
    with_folders,
)
from sidelight.records import InstallResult

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "add_hooks",
    "dump_json",
    "holds_hooks",
    "install_hooks",
    "read_json",
    "remove_hooks",
    "settings_text",
    "take_hooks_out",
    "uninstall_hooks",
]


def read_json(path: Path, what: str, *, comments: bool = False) -> dict[str, Any]:
    """The JSON object in ``path`` (``{}``: no file, or an empty one). ``comments``: the host reads the
    file as JSONC (:func:`loads_jsonc`: comments and trailing commas), and so does this."""
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
        if not comments:
            raise InstallError(
                f"{path}: the {what} is not valid JSON ({error}); fix it first, nothing was changed"
            ) from None
        try:
            data = loads_jsonc(text)
        except ValueError as error:
            raise InstallError(
                f"{path}: the {what} is not valid JSON, even with comments and trailing commas "
                f"({error}); fix it first, nothing was changed"
            ) from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: the {what} is not a JSON object; nothing was changed")
    return data


def _hooks_table(data: dict[str, Any], path: Path, *, top: bool = False) -> dict[str, Any]:
    if top:
        return data
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not a JSON object; nothing was changed')
    return hooks


def add_hooks(
    data: dict[str, Any],
    path: Path,
    host: str,
    events: tuple[str, ...],
    command: str,
    timeout: int = HOOK_TIMEOUT,
    matchers: Mapping[str, str] | None = None,
    *,
    top: bool = False,
) -> bool:
    """Adds (or updates) our command hook for each event; True when something changed. ``timeout`` is
    in the host's unit (seconds or milliseconds: as that host reads it). ``matchers``: per event, the
    ``matcher`` of its group (the tools a before-tool hook runs for). ``top``: the events are the
    file's own keys (no ``hooks`` object)."""
    hooks = _hooks_table(data, path, top=top)
    changed = False
    for event in events:
        matcher = (matchers or {}).get(event)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f'{path}: "hooks.{event}" is not a list; nothing was changed')
        found = False
        for group in groups:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and is_hook_command(hook.get("command"), host):
                    if found:
                        continue
                    found = True
                    if hook.get("command") != command:
                        hook["command"] = command
                        changed = True
                    if matcher is not None and group.get("matcher") != matcher:
                        group["matcher"] = matcher
                        changed = True
        if not found:
            entry = {"type": "command", "command": command, "timeout": timeout}
            groups.append({"matcher": matcher, "hooks": [entry]} if matcher else {"hooks": [entry]})
            changed = True
    return changed


def remove_hooks(data: dict[str, Any], host: str, *, top: bool = False) -> int:
    """Removes our command hooks (and groups and events left empty); the number removed. ``top``: the
    events are the file's own keys."""
    hooks = data if top else data.get("hooks")
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
                h
                for h in group["hooks"]
                if not (isinstance(h, dict) and is_hook_command(h.get("command"), host))
            ]
            removed += len(group["hooks"]) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        elif groups:
            del hooks[event]
    if not hooks and not top:
        del data["hooks"]
    return removed


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def settings_text(path: Path, data: dict[str, Any], *, comments: bool) -> str:
    """The new text of the settings file ``path``, holding ``data``. ``comments``: a file of a host
    that reads JSONC which holds comments or trailing commas is edited only where it changes
    (:func:`edit_jsonc`), so that they stay; any other file is written whole."""
    text = read_text(path) if comments else None
    if text is None or not text.strip():
        return dump_json(data)
    try:
        json.loads(text)
    except ValueError:
        try:
            return edit_jsonc(text, data)
        except ValueError as error:
            raise InstallError(
                f"{path}: cannot change it and keep its comments ({error}); nothing was changed"
            ) from None
    return dump_json(data)


def holds_hooks(text: str, host: str, *, comments: bool = False, top: bool = False) -> bool:
    """Whether a settings file's text holds sidelight's hooks for ``host`` (``comments``: the host
    reads the file as JSONC, as :func:`install_hooks` does; ``top``: the events are its own keys)."""
    try:
        data = loads_jsonc(text) if comments else json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and remove_hooks(data, host, top=top) > 0


def install_hooks(
    target: str,
    path: Path,
    events: tuple[str, ...],
    what: str,
    timeout: int = HOOK_TIMEOUT,
    *,
    comments: bool = False,
    matchers: Mapping[str, str] | None = None,
    top: bool = False,
) -> InstallResult:
    """Adds sidelight's command hooks for ``events`` to the settings file ``path`` (``target`` is
    also the hook's host), recording what it did. ``comments``: the host reads the file as JSONC.
    ``matchers``: per event, the tools its hook runs for (:func:`add_hooks`). ``top``: the events are
    the file's own keys."""
    data = read_json(path, f"{what} settings file", comments=comments)
    if not add_hooks(data, path, target, events, hook_command(target), timeout, matchers, top=top):
        return InstallResult(target, path, False, f"already installed in {path}")
    return Ledger(target, path).save(
        path,
        settings_text(path, data, comments=comments),
        f"installed the {what} hooks in",
        ours=lambda t: holds_hooks(t, target, comments=comments, top=top),
        whole=False,
    )


def take_hooks_out(
    ledger: Ledger, path: Path, data: dict[str, Any], verb: str, *, comments: bool = False
) -> InstallResult:
    """Uninstall's change to a settings file whose ``data`` has lost sidelight's hooks already: the
    file as it was before install when it is still what install wrote; else ``data`` written back
    (backed up; a JSONC file's comments kept, ``comments``), or the file removed when install created
    it and nothing else is left (not ``{}``)."""
    done = ledger.undo(path, read_text(path))
    if done is None and not data and ledger.created(path):
        remove_host_file(path)
        done = "removed"
    if done is None:
        return ledger.rewrite(path, settings_text(path, data, comments=comments), verb)
    return InstallResult(ledger.target, path, True, removed_message(path, done, verb))


def uninstall_hooks(
    target: str, path: Path, what: str, *, comments: bool = False, top: bool = False
) -> InstallResult:
    """Removes sidelight's command hooks (only those) from the settings file ``path``, and what
    install created for them. ``comments``: the host reads the file as JSONC; ``top``: the events are
    its own keys."""
    data = read_json(path, f"{what} settings file", comments=comments)
    if not remove_hooks(data, target, top=top):
        return InstallResult(target, path, False, f"not installed in {path}")
    ledger = Ledger(target, path)
    result = take_hooks_out(ledger, path, data, f"removed the {what} hooks from", comments=comments)
    return with_folders(result, ledger.forget())
