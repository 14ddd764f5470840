"""``sidelight install kimi``: a ``PreToolUse`` command hook matched to Kimi's write tools (the stale-write
guard), as a ``[[hooks]]`` table appended to ``~/.kimi/config.toml`` (``KIMI_SHARE_DIR``; timeout in
seconds, 1-600). Kimi CLI 1.50 sends the model nothing a prompt or after-tool hook answers, so no other
hook is installed (docs/hosts-next.md).

The user's file is kept as it is, comments and layout: install appends its table at the end (an array of
tables may follow any table), uninstall takes out exactly the ``[[hooks]]`` tables whose command is
sidelight's (and the comment line install wrote above them), or gives the file back as it was when it is
still what install left.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

import re
import tomllib
from typing import TYPE_CHECKING, Any

from sidelight.install.command import HOOK_TIMEOUT, hook_command, is_hook_command
from sidelight.install.ledger import InstallError, Ledger, read_text, removed_message, with_folders
from sidelight.records import InstallerSpec, InstallResult

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["INSTALLER", "KIMI_EVENTS", "KIMI_MATCHERS", "install_kimi", "uninstall_kimi"]

#: The Kimi CLI hook events sidelight listens to.
KIMI_EVENTS = ("PreToolUse",)
#: The tools each event's hook runs for: the agent's ``WRITE_TOOLS``, spelled here too since the agent's
#: module imports this one (tests/test_kimi.py checks they agree).
KIMI_MATCHERS = {"PreToolUse": "WriteFile|StrReplaceFile"}
#: The comment install writes above its tables (taken out with them).
MARK = "# sidelight: the stale-write guard (`sidelight uninstall kimi` removes it)"

_TABLE = re.compile(r"^\s*\[")
_HOOKS = re.compile(r"^\s*\[\[\s*hooks\s*\]\]\s*(#.*)?$")


def _config_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".kimi" / "config.toml"
    import os
    from pathlib import Path

    from sidelight.config import Settings

    # The agent's kimi_dir (not imported: the agent's module imports this one).
    moved = os.environ.get("KIMI_SHARE_DIR")
    return (Path(moved) if moved else Settings.load().home / ".kimi") / "config.toml"


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InstallError(f"{path}: not valid TOML ({error}); fix it first, nothing was changed") from None


def _ours(hooks: Any) -> int:
    """How many of a parsed ``hooks`` array are sidelight's."""
    if not isinstance(hooks, list):
        return 0
    return sum(1 for h in hooks if isinstance(h, dict) and is_hook_command(h.get("command"), "kimi"))


def _quote(text: str) -> str:
    """A TOML basic string."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _tables() -> str:
    command = hook_command("kimi")
    out = [MARK]
    for event in KIMI_EVENTS:
        out += ["[[hooks]]", f"event = {_quote(event)}"]
        if event in KIMI_MATCHERS:
            out.append(f"matcher = {_quote(KIMI_MATCHERS[event])}")
        out += [f"command = {_quote(command)}", f"timeout = {HOOK_TIMEOUT}"]
    return "\n".join(out) + "\n"


def _without_ours(text: str) -> tuple[str, int]:
    """``text`` without sidelight's ``[[hooks]]`` tables (each from its header to the next table), the
    comment line install wrote above them, and the blank line before that: the text and how many went."""
    lines = text.splitlines(keepends=True)
    keep: list[str] = []
    removed = 0
    i = 0
    while i < len(lines):
        if not _HOOKS.match(lines[i].rstrip("\r\n")):
            keep.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if _TABLE.match(lines[j])), len(lines))
        # The comments and blank lines at its end belong to what follows.
        while end > i + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        try:
            table = tomllib.loads("".join(lines[i + 1 : end]))
        except tomllib.TOMLDecodeError:
            table = {}
        if is_hook_command(table.get("command"), "kimi"):
            removed += 1
            if keep and keep[-1].rstrip("\r\n") == MARK:
                keep.pop()
                if keep and not keep[-1].strip():
                    keep.pop()
        else:
            keep += lines[i:end]
        i = end
    return "".join(keep), removed


def install_kimi(*, home: Path | None = None) -> InstallResult:
    """Appends sidelight's hook tables to Kimi CLI's ``config.toml``, keeping everything else."""
    path = _config_path(home)
    text = read_text(path) or ""
    data = _parse(text, path)
    hooks = data.get("hooks", [])
    headers = any(_HOOKS.match(line) for line in text.splitlines())
    if not isinstance(hooks, list) or (hooks and not headers):
        raise InstallError(f"{path}: `hooks` is not an array of [[hooks]] tables; add sidelight's by hand")
    if _ours(hooks) == len(KIMI_EVENTS):
        return InstallResult("kimi", path, False, f"already installed in {path}")
    base, _ = _without_ours(text)  # an older, partial install of ours goes first
    sep = "" if not base or base.endswith("\n") else "\n"
    blank = "\n" if base.strip() else ""
    new = f"{base}{sep}{blank}{_tables()}"
    if _ours(_parse(new, path).get("hooks")) != len(KIMI_EVENTS):  # pragma: no cover - a bug above
        raise InstallError(f"{path}: could not add the hooks safely; nothing was changed")
    return Ledger("kimi", path).save(
        path,
        new,
        "installed the Kimi CLI hooks in",
        ours=lambda t: _without_ours(t)[1] > 0,
        whole=False,
    )


def uninstall_kimi(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hook tables (only those) from Kimi CLI's ``config.toml``."""
    path = _config_path(home)
    text = read_text(path)
    if text is None:
        return InstallResult("kimi", path, False, f"not installed in {path}")
    new, removed = _without_ours(text)
    if not removed:
        return InstallResult("kimi", path, False, f"not installed in {path}")
    _parse(new, path)
    ledger = Ledger("kimi", path)
    verb = "removed the Kimi CLI hooks from"
    done = ledger.undo(path, text)
    if done is None and not new.strip() and ledger.created(path):
        from sidelight.install.ledger import remove_host_file

        remove_host_file(path)
        done = "removed"
    if done is None:
        result = ledger.rewrite(path, new, verb)
    else:
        result = InstallResult("kimi", path, True, removed_message(path, done, verb))
    return with_folders(result, ledger.forget())


#: ``sidelight install kimi`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="kimi",
    install=lambda scope: [install_kimi()],
    uninstall=lambda scope: [uninstall_kimi()],
    description="a PreToolUse hook table in ~/.kimi/config.toml",
    scopes=("user",),
)
