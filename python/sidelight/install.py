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
up first, to ``<state dir>/backups/<target>/<YYYYmmddTHHMMSS>-<name>`` (never beside it, where a
project's ``.claude/`` would get it committed; never a file sidelight itself wrote as it is), and
replaced atomically; a settings file that is not valid JSON is refused, and nothing is changed. The
Gemini CLI's and Qwen Code's settings may hold comments and trailing commas, as those hosts read them
(JSONC): such a file is edited only where sidelight's entries go (:func:`edit_jsonc`), so its
comments stay. A file that is a symbolic link (a dotfiles manager's: stow, chezmoi, home-manager) is
written through: the link's target is replaced, in its own folder, and the link stays a link; one
whose target cannot be written is refused.

Uninstall takes away exactly what install added. Install records, per target, what it created and how
it changed each file (``<state dir>/installs/<target>.json``, see :class:`_Ledger`): a file that is
still what install wrote gets its earlier bytes back (or is removed, when install created it), a file
edited since loses only sidelight's entries (and is removed when install created it and nothing else
is left), and the folders install made are removed when they are left empty (one that another target's
install put something in goes with the last of them). Without a record (an
install by an older version) only sidelight's entries are removed and every file and folder stays.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidelight.errors import SidelightError
from sidelight.records import InstallResult
from sidelight.statefile import load_json_state, private_dir, write_atomic
from sidelight.statelayout import BACKUPS_DIR, INSTALLS_DIR
from sidelight.warm import AGENT_FOLDER_VARIABLES

if TYPE_CHECKING:
    from collections.abc import Callable

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
    "edit_jsonc",
    "hook_command",
    "install",
    "install_claude_code",
    "install_codex",
    "install_copilot",
    "install_file",
    "install_gemini",
    "install_opencode",
    "install_pi",
    "install_qwen",
    "install_service",
    "launchd_plist",
    "loads_jsonc",
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
    "uninstall_file",
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


def hook_command(host: str) -> str:
    """The shell command a host's hook runs: ``sidelight hook HOST``, sidelight by absolute path
    (:func:`sidelight_command`), quoted for a shell."""
    return " ".join(shlex.quote(part) for part in [*sidelight_command(), "hook", host])


def _is_ours(command: Any, host: str) -> bool:
    """A hook command sidelight installed: ``... sidelight ... hook HOST``."""
    if not isinstance(command, str) or "sidelight" not in command:
        return False
    return re.search(rf"(^|\s)hook\s+{re.escape(host)}\s*$", command) is not None


# ---------------------------------------------------------------------------------------------------
# Files: read, back up, write atomically


# In the state directory: INSTALLS_DIR records what install created and changed, one file per target
# (what uninstall may take away again, and nothing else); a file is copied to BACKUPS_DIR before install
# or uninstall changes it.


def _state_dir(state_dir: Path | None) -> Path:
    if state_dir is not None:
        return state_dir
    from sidelight.config import Settings

    return Settings.load().state_dir


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _read_text(path: Path) -> str | None:
    """A host file's text (``None``: there is none)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise InstallError(f"{path}: cannot read it ({error}); nothing was changed") from None


def _backup(path: Path, target: str, state_dir: Path) -> Path:
    """A copy of ``path`` in ``<state dir>/backups/<target>/<time>-<name>`` (``0600``, as every file
    of the state directory: a settings file may hold tokens)."""
    folder = state_dir / BACKUPS_DIR / target
    private_dir(folder)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    backup = folder / f"{stamp}-{path.name}"
    n = 1
    while backup.exists():
        n += 1
        backup = folder / f"{stamp}-{n}-{path.name}"
    write_atomic(backup, path.read_bytes())
    return backup


def _make_folders(folder: Path) -> list[str]:
    """Makes ``folder`` and the missing ones above it; the ones it made, outermost first."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    made = []
    for each in reversed(missing):
        try:
            each.mkdir()
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to remove
        made.append(str(each))
    return made


def _host_file(path: Path) -> Path:
    """The file behind the host's file ``path``: ``path`` itself, or the file its symbolic links name
    (a dotfiles manager's link: stow, chezmoi, home-manager), which is the one written or removed, so
    that the link stays a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _write_host_file(path: Path, text: str) -> None:
    """A host's file, written atomically (through a symbolic link: its target is replaced, in the
    target's folder, and the link kept); it keeps its mode (a new one is ``0644``, as the host would
    write it)."""
    target = _host_file(path)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    try:
        write_atomic(target, text.encode("utf-8"), mode=mode)
    except OSError as error:
        if target == path:
            raise
        raise InstallError(
            f"{path} is a link to {target}, which cannot be written ({error.strerror or error}); "
            "nothing was changed"
        ) from None


def _remove_host_file(path: Path) -> None:
    """Removes the host's file ``path`` that install created: through a symbolic link, the file
    install wrote (the link's target) goes, and the link stays as it was before install."""
    _host_file(path).unlink()


class _Ledger:
    """What install created and changed for one target at one place, so that uninstall takes away
    exactly that: ``<state dir>/installs/<target>.json`` maps the place (the target's main file) to

    - ``files``: for each file install wrote, the digest of what it wrote (``after``), whether it made
      the file (``created``), and how to undo it while the file is still what it wrote (``restore``:
      ``"delete"``, ``{"text": earlier text}``, or ``null`` once the file was edited since, when only
      sidelight's entries can be taken out);
    - ``folders``: the folders install made, removed again when uninstall leaves them empty.

    Installing twice keeps the first record: what was there before the first install is what
    uninstall gives back."""

    def __init__(self, target: str, place: Path, state_dir: Path | None = None) -> None:
        self.target = target
        self.place = str(place)
        self.state_dir = _state_dir(state_dir)
        self.path = self.state_dir / INSTALLS_DIR / f"{target}.json"
        document = load_json_state(self.path)
        self.document: dict[str, Any] = document if isinstance(document, dict) else {}
        places = self.document.get("places")
        self.places: dict[str, Any] = places if isinstance(places, dict) else {}
        entry = self.places.get(self.place)
        self.entry: dict[str, Any] = entry if isinstance(entry, dict) else {}
        files = self.entry.get("files")
        self.files: dict[str, Any] = files if isinstance(files, dict) else {}
        folders = self.entry.get("folders")
        self.folders: list[str] = (
            [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []
        )

    def record(self, path: Path) -> dict[str, Any] | None:
        found = self.files.get(str(path))
        return found if isinstance(found, dict) else None

    def is_as_written(self, path: Path, text: str | None) -> bool:
        """Whether ``path`` holds ``text`` and that is exactly what install last wrote there."""
        record = self.record(path)
        return record is not None and text is not None and record.get("after") == _digest(text)

    def created(self, path: Path) -> bool:
        record = self.record(path)
        return record is not None and record.get("created") is True

    def save(
        self, path: Path, text: str, verb: str, *, ours: Callable[[str], bool], whole: bool
    ) -> InstallResult:
        """Writes ``text`` to ``path`` (backing up what was there unless it is what sidelight wrote)
        and records how to undo it. ``ours(text)`` says whether earlier text holds sidelight's own
        entries (an install by an older version); ``whole``: the file is all sidelight's (a script),
        so an earlier one of sidelight's is simply removed by uninstall."""
        before = _read_text(path)
        record = self.record(path)
        as_written = self.is_as_written(path, before)
        backup = None if before is None or as_written else _backup(path, self.target, self.state_dir)
        self.folders += [f for f in _make_folders(_host_file(path).parent) if f not in self.folders]
        _write_host_file(path, text)
        restore: Any
        if before is None:
            created, restore = True, "delete"
        elif record is not None:  # a second install: the first one's record holds, if still true
            created, restore = record.get("created") is True, record.get("restore") if as_written else None
        elif ours(before):  # installed by a version that kept no record
            created, restore = whole, "delete" if whole else None
        else:
            created, restore = False, {"text": before}
        self.files[str(path)] = {"after": _digest(text), "created": created, "restore": restore}
        self._commit()
        where = f" (backup: {backup})" if backup else ""
        return InstallResult(
            target=self.target, path=path, changed=True, message=f"{verb} {path}{where}", backup=backup
        )

    def undo(self, path: Path, text: str | None) -> str | None:
        """Puts ``path`` back as it was before install when it still holds what install wrote: what
        was done (``removed`` or ``restored``), or ``None`` when it was edited since (or never
        recorded) and only sidelight's entries may be taken out of it."""
        record = self.record(path)
        if record is None or not self.is_as_written(path, text):
            return None
        restore = record.get("restore")
        if restore == "delete":
            _remove_host_file(path)
            return "removed"
        if isinstance(restore, dict) and isinstance(restore.get("text"), str):
            _write_host_file(path, restore["text"])
            return "restored"
        return None

    def rewrite(self, path: Path, text: str, verb: str) -> InstallResult:
        """Uninstall's write of a file edited since install: backed up first, as it holds more than
        sidelight's."""
        backup = _backup(path, self.target, self.state_dir)
        _write_host_file(path, text)
        return InstallResult(self.target, path, True, f"{verb} {path} (backup: {backup})", backup)

    def forget(self) -> list[str]:
        """Removes the folders install made that are empty now (innermost first), and the record of
        this place: the folders removed. A folder still holding what another install put there is
        handed over to that install's record, so it goes with the last of them, whatever the order
        of the uninstalls; the state directory's ``installs/`` goes once it holds no record."""
        removed, kept = [], []
        for folder in sorted(self.folders, key=lambda f: f.count(os.sep), reverse=True):
            try:
                Path(folder).rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                kept.append(folder)  # not empty: the user's files, or another install's
                continue
            removed.append(folder)
        if self.places.pop(self.place, None) is not None:
            self.entry, self.files, self.folders = {}, {}, []
            if self.places:
                self._write()
            else:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
        if kept:
            self._hand_over(kept)
        with contextlib.suppress(OSError):  # not empty: other targets' records
            self.path.parent.rmdir()
        return removed

    def _hand_over(self, folders: list[str]) -> None:
        """Adds each of ``folders`` to the record of every install (any target, any place) that put a
        file or made a folder inside it; a folder that holds none of theirs is the user's now."""
        for path in sorted(self.path.parent.glob("*.json")):
            if path == self.path:
                places = self.places
            else:
                record = load_json_state(path)
                found = record.get("places") if isinstance(record, dict) else None
                places = found if isinstance(found, dict) else {}
            changed = False
            for entry in places.values():
                if not isinstance(entry, dict):
                    continue
                files, made = entry.get("files"), entry.get("folders")
                made = [f for f in made if isinstance(f, str)] if isinstance(made, list) else []
                inside = [*(files if isinstance(files, dict) else ()), *made]
                taken = [
                    f for f in folders if f not in made and any(p.startswith(f + os.sep) for p in inside)
                ]
                if taken:
                    entry["folders"] = [*made, *taken]
                    changed = True
            if not changed:
                continue
            if path == self.path:
                self._write()
            else:
                _write_record(path, places)

    def _commit(self) -> None:
        self.entry = {"files": self.files, "folders": self.folders}
        self.places[self.place] = self.entry
        self._write()

    def _write(self) -> None:
        private_dir(self.path.parent)
        self.document = _write_record(self.path, self.places)


def _write_record(path: Path, places: dict[str, Any]) -> dict[str, Any]:
    """Writes a target's install record (``<state dir>/installs/<target>.json``): the document written."""
    document = {"version": 1, "places": places}
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return document


def _removed_message(path: Path, done: str, verb: str) -> str:
    """What uninstall says it did to ``path``."""
    if done == "removed":
        return f"removed {path} (sidelight had created it)"
    if done == "restored":
        return f"{verb} {path} (restored as it was before install)"
    return f"{verb} {path}"


def _with_folders(result: InstallResult, folders: list[str]) -> InstallResult:
    """``result`` saying which empty folders install had made and uninstall removed (the outermost:
    the others were inside them)."""
    outermost = [f for f in folders if str(Path(f).parent) not in folders]
    if not outermost:
        return result
    said = f"{result.message}, and the folder{'s' if len(outermost) > 1 else ''} {', '.join(outermost)}"
    said += " that install had made"
    return InstallResult(result.target, result.path, result.changed, said, result.backup, result.notes)


def _read_json(path: Path, what: str, *, comments: bool = False) -> dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------------
# JSONC: the Gemini CLI and Qwen Code read their settings.json as JSON with comments (``//``, ``/* */``)
# and trailing commas. loads_jsonc reads it; edit_jsonc changes such a text to hold another value by
# editing only what changed (a member or an element added, taken out or given another value):
# comments, blank lines, indentation, the order of keys and trailing commas stay byte for byte.


#: Deeper nesting than this is refused (a settings file is shallow; the parser recurses).
JSONC_MAX_DEPTH = 200

_JSONC_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSONC_LITERAL = re.compile(r"true|false|null")
_JSONC_SPACE = " \t\r\n"


class _JsoncNode:
    """A value of the text: where it is (``start``, ``end``), what it is, and for an object or array
    its members or elements and where it closes."""

    __slots__ = ("close", "end", "items", "start", "value")

    def __init__(
        self, start: int, end: int, value: Any, items: list[_JsoncItem] | None = None, close: int = -1
    ) -> None:
        self.start = start
        self.end = end
        self.value = value
        self.items = items
        self.close = close


class _JsoncItem:
    """A member of an object (``key``) or an element of an array (``key`` ``None``): where it starts (its
    key, for a member), its value, and where the comma after it is (``-1``: none)."""

    __slots__ = ("comma", "key", "node", "start")

    def __init__(self, key: str | None, start: int, node: _JsoncNode) -> None:
        self.key = key
        self.start = start
        self.node = node
        self.comma = -1


class _JsoncParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, pos: int | None = None) -> ValueError:
        at = self.pos if pos is None else pos
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return ValueError(f"{message}: line {line} column {column} (char {at})")

    def skip(self) -> None:
        """Past whitespace and comments."""
        text, pos = self.text, self.pos
        while pos < len(text):
            if text[pos] in _JSONC_SPACE:
                pos += 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                if end < 0:
                    raise self.fail("Unterminated comment", pos)
                pos = end + 2
            else:
                break
        self.pos = pos

    def document(self) -> _JsoncNode:
        self.skip()
        node = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("Extra data")
        return node

    def value(self, depth: int) -> _JsoncNode:
        if depth > JSONC_MAX_DEPTH:
            raise self.fail(f"Nested deeper than {JSONC_MAX_DEPTH} levels")
        text, start = self.text, self.pos
        char = text[start : start + 1]
        if char in ("{", "["):
            return self.container(depth)
        if char == '"':
            return self.string()
        match = _JSONC_NUMBER.match(text, start) or _JSONC_LITERAL.match(text, start)
        if match is None:
            raise self.fail("Expecting value")
        self.pos = match.end()
        return _JsoncNode(start, self.pos, json.loads(match.group()))

    def string(self) -> _JsoncNode:
        text, start = self.text, self.pos
        pos = start + 1
        while True:
            quote = text.find('"', pos)
            if quote < 0:
                raise self.fail("Unterminated string starting at", start)
            backslashes = 0
            while text[quote - 1 - backslashes] == "\\":
                backslashes += 1
            if backslashes % 2 == 0:
                break
            pos = quote + 1
        self.pos = quote + 1
        try:
            value = json.loads(text[start : self.pos])
        except ValueError as error:
            raise self.fail(f"Invalid string ({error})", start) from None
        return _JsoncNode(start, self.pos, value)

    def container(self, depth: int) -> _JsoncNode:
        text, start = self.text, self.pos
        is_object = text[start] == "{"
        closing = "}" if is_object else "]"
        items: list[_JsoncItem] = []
        value: Any = {} if is_object else []
        self.pos += 1
        while True:
            self.skip()
            if text.startswith(closing, self.pos):
                break
            item_start = self.pos
            key = None
            if is_object:
                if not text.startswith('"', self.pos):
                    raise self.fail("Expecting property name enclosed in double quotes")
                key = self.string().value
                self.skip()
                if not text.startswith(":", self.pos):
                    raise self.fail("Expecting ':' delimiter")
                self.pos += 1
                self.skip()
            item = _JsoncItem(key, item_start, self.value(depth + 1))
            items.append(item)
            if is_object:
                value[key] = item.node.value
            else:
                value.append(item.node.value)
            self.skip()
            if text.startswith(",", self.pos):
                item.comma = self.pos
                self.pos += 1
                continue
            if not text.startswith(closing, self.pos):
                raise self.fail(f"Expecting ',' delimiter or '{closing}'")
            break
        close = self.pos
        self.pos += 1
        return _JsoncNode(start, self.pos, value, items, close)


def _parse_jsonc(text: str) -> _JsoncNode:
    try:
        return _JsoncParser(text).document()
    except RecursionError:
        raise ValueError(f"Nested deeper than {JSONC_MAX_DEPTH} levels") from None


def loads_jsonc(text: str) -> Any:
    """The value of the JSONC ``text``; raises :class:`ValueError` (with the line and column) for
    anything else. A key given twice counts once, its last value (as JavaScript's ``JSON.parse``)."""
    return _parse_jsonc(text).value


def _jsonc_same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1``, ``1.0`` and ``True`` differ in a file)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_jsonc_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_jsonc_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _jsonc_shrinks(a: Any, b: Any) -> bool:
    """``b`` is ``a`` with members or elements taken out (at any depth), or ``a`` itself."""
    if isinstance(a, dict) and isinstance(b, dict):
        return b.keys() <= a.keys() and all(_jsonc_shrinks(a[k], b[k]) for k in b)
    if isinstance(a, list) and isinstance(b, list):
        return len(_jsonc_subsequence(a, b)) == len(b)
    return _jsonc_same(a, b)


def _jsonc_subsequence(old: list[Any], new: list[Any]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``: each element of ``new``, in order, taken for the first element of ``old`` left
    that it is made from (:func:`_jsonc_shrinks`); stops at the first it cannot pair."""
    pairs: list[tuple[int, int]] = []
    i = 0
    for j, wanted in enumerate(new):
        while i < len(old) and not _jsonc_shrinks(old[i], wanted):
            i += 1
        if i == len(old):
            break
        pairs.append((i, j))
        i += 1
    return pairs


class _JsoncEditor:
    """The edits (start, end, new text) that make a parsed text hold another value: with ``adding``
    false, all but the members and elements to add (what is taken out and what changes), so that no
    addition lands beside a removal; with it, all."""

    def __init__(self, text: str, *, adding: bool) -> None:
        self.text = text
        self.adding = adding
        self.edits: list[tuple[int, int, str]] = []
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.unit = _jsonc_indent_unit(text)

    def change(self, node: _JsoncNode, new: Any) -> None:
        if _jsonc_same(node.value, new):
            return
        if node.items is not None and isinstance(new, dict) and isinstance(node.value, dict):
            self.change_object(node, new)
        elif node.items is not None and isinstance(new, list) and isinstance(node.value, list):
            self.change_array(node, new)
        else:
            self.edits.append((node.start, node.end, self.dump(new, self.indent_at(node.start))))

    def change_object(self, node: _JsoncNode, new: dict[str, Any]) -> None:
        assert node.items is not None
        last = {item.key: index for index, item in enumerate(node.items)}
        gone = []
        for index, item in enumerate(node.items):
            assert item.key is not None
            if item.key not in new or last[item.key] != index:  # (an earlier twin counted for nothing)
                gone.append(index)
            else:
                self.change(item.node, new[item.key])
        self.delete(node, gone)
        added = [key for key in new if key not in last]
        if added:
            self.insert(node, [(key, new[key]) for key in added])

    def change_array(self, node: _JsoncNode, new: list[Any]) -> None:
        assert node.items is not None
        old = [item.node.value for item in node.items]
        if len(new) >= len(old):
            pairs = [(i, i) for i in range(len(old))]
        else:
            pairs = _jsonc_subsequence(old, new)
            if len(pairs) < len(new):
                pairs = [(i, i) for i in range(len(new))]
        for i, j in pairs:
            self.change(node.items[i].node, new[j])
        kept = {i for i, _ in pairs}
        self.delete(node, [i for i in range(len(old)) if i not in kept])
        if len(new) > len(old):
            self.insert(node, [(None, value) for value in new[len(old) :]])

    def delete(self, node: _JsoncNode, gone: list[int]) -> None:
        """Takes out the members or elements ``gone`` (indices), each with its comma, and its whole
        line when it had one to itself."""
        items = node.items
        if not gone or items is None:
            return
        text = self.text
        for index in gone:
            item = items[index]
            start, end = item.start, item.comma + 1 if item.comma >= 0 else item.node.end
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
            if not text[line_start:start].strip() and not text[end:line_end].strip():
                start, end = line_start, min(line_end + 1, len(text))
            self.edits.append((start, end, ""))
        kept = [index for index in range(len(items)) if index not in gone]
        if kept and kept[-1] < len(items) - 1 and items[-1].comma < 0:
            # What was the last one goes: the new last one loses its comma (the file had none there).
            self.edits.append((items[kept[-1]].comma, items[kept[-1]].comma + 1, ""))

    def insert(self, node: _JsoncNode, added: list[tuple[str | None, Any]]) -> None:
        """Adds members (``key``, value) or elements (``None``, value) at the end of ``node``."""
        items = node.items
        assert items is not None
        if not self.adding:
            return
        text, newline = self.text, self.newline
        outer = self.indent_at(node.start)
        last = items[-1] if items else None
        if last is not None and text[text.rfind("\n", 0, last.start) + 1 : last.start].strip() == "":
            inner = self.indent_at(last.start)
        else:
            inner = outer + self.unit
        entries = [
            (f"{json.dumps(key, ensure_ascii=False)}: " if key is not None else "") + self.dump(value, inner)
            for key, value in added
        ]
        trailing = last is not None and last.comma >= 0
        close_line = text.rfind("\n", 0, node.close) + 1
        if not text[close_line : node.close].strip() and close_line > node.start:
            # The closing bracket on a line of its own: one line per new entry, just above it.
            if last is not None and not trailing:
                self.edits.append((last.node.end, last.node.end, ","))
            lines = [f"{inner}{entry}," for entry in entries]
            if not trailing:
                lines[-1] = lines[-1][:-1]
            self.edits.append((close_line, close_line, "".join(line + newline for line in lines)))
        elif last is None:
            body = f",{newline}".join(f"{inner}{entry}" for entry in entries)
            self.edits.append((node.close, node.close, f"{newline}{body}{newline}{outer}"))
        elif trailing:
            self.edits.append((last.comma + 1, last.comma + 1, " " + ", ".join(entries) + ","))
        else:
            self.edits.append((last.node.end, last.node.end, ", " + ", ".join(entries)))

    def indent_at(self, pos: int) -> str:
        """The indentation of the line ``pos`` is on."""
        start = self.text.rfind("\n", 0, pos) + 1
        end = start
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        return self.text[start:end]

    def dump(self, value: Any, indent: str) -> str:
        """``value`` as JSON indented as the file is, its lines after the first at ``indent``."""
        out = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return out.replace("\n", self.newline + indent)

    def result(self) -> str:
        out = self.text
        for start, end, new in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            out = out[:start] + new + out[end:]
        return out


def _jsonc_indent_unit(text: str) -> str:
    """One level of the text's indentation: its first indented line's (two spaces when none is)."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def edit_jsonc(text: str, new: Any) -> str:
    """The JSONC ``text`` changed to hold ``new``, edited only where the value changes: a member or
    element added (after the last one, laid out as its neighbours), taken out (with its comma, and its
    line when it had one to itself) or given another value; every other byte stays. Raises
    :class:`ValueError` when ``text`` is not JSONC, or the edit would not read back as ``new``.

    >>> edit_jsonc('{\\n  // mine\\n  "theme": "Dracula",\\n}\\n', {"theme": "Dracula", "hooks": {}})
    '{\\n  // mine\\n  "theme": "Dracula",\\n  "hooks": {},\\n}\\n'
    """
    out = text
    for adding in (False, True):
        editor = _JsoncEditor(out, adding=adding)
        editor.change(_parse_jsonc(out), new)
        out = editor.result()
    try:
        back = loads_jsonc(out)
    except ValueError as error:  # pragma: no cover - a bug in the editor
        raise ValueError(f"the edited text would not be JSONC ({error})") from None
    if not _jsonc_same(back, new):  # pragma: no cover - a bug in the editor
        raise ValueError("the edited text would not hold what it should")
    return out


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


def _settings_text(path: Path, data: dict[str, Any], *, comments: bool) -> str:
    """The new text of the settings file ``path``, holding ``data``. ``comments``: a file of a host
    that reads JSONC which holds comments or trailing commas is edited only where it changes
    (:func:`edit_jsonc`), so that they stay; any other file is written whole."""
    text = _read_text(path) if comments else None
    if text is None or not text.strip():
        return _dump(data)
    try:
        json.loads(text)
    except ValueError:
        try:
            return edit_jsonc(text, data)
        except ValueError as error:
            raise InstallError(
                f"{path}: cannot change it and keep its comments ({error}); nothing was changed"
            ) from None
    return _dump(data)


def _holds_hooks(text: str, host: str, *, comments: bool = False) -> bool:
    """Whether a settings file's text holds sidelight's hooks for ``host`` (``comments``: the host
    reads the file as JSONC, as :func:`_install_hooks` does)."""
    try:
        data = loads_jsonc(text) if comments else json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and _remove_hooks(data, host) > 0


def _install_hooks(
    target: str,
    path: Path,
    events: tuple[str, ...],
    what: str,
    timeout: int = HOOK_TIMEOUT,
    *,
    comments: bool = False,
) -> InstallResult:
    """Adds sidelight's command hooks for ``events`` to the settings file ``path`` (``target`` is
    also the hook's host), recording what it did. ``comments``: the host reads the file as JSONC."""
    data = _read_json(path, f"{what} settings file", comments=comments)
    if not _add_hooks(data, path, target, events, hook_command(target), timeout):
        return InstallResult(target, path, False, f"already installed in {path}")
    return _Ledger(target, path).save(
        path,
        _settings_text(path, data, comments=comments),
        f"installed the {what} hooks in",
        ours=lambda t: _holds_hooks(t, target, comments=comments),
        whole=False,
    )


def _take_hooks_out(
    ledger: _Ledger, path: Path, data: dict[str, Any], verb: str, *, comments: bool = False
) -> InstallResult:
    """Uninstall's change to a settings file whose ``data`` has lost sidelight's hooks already: the
    file as it was before install when it is still what install wrote; else ``data`` written back
    (backed up; a JSONC file's comments kept, ``comments``), or the file removed when install created
    it and nothing else is left (not ``{}``)."""
    done = ledger.undo(path, _read_text(path))
    if done is None and not data and ledger.created(path):
        _remove_host_file(path)
        done = "removed"
    if done is None:
        return ledger.rewrite(path, _settings_text(path, data, comments=comments), verb)
    return InstallResult(ledger.target, path, True, _removed_message(path, done, verb))


def _uninstall_hooks(target: str, path: Path, what: str, *, comments: bool = False) -> InstallResult:
    """Removes sidelight's command hooks (only those) from the settings file ``path``, and what
    install created for them. ``comments``: the host reads the file as JSONC."""
    data = _read_json(path, f"{what} settings file", comments=comments)
    if not _remove_hooks(data, target):
        return InstallResult(target, path, False, f"not installed in {path}")
    ledger = _Ledger(target, path)
    result = _take_hooks_out(ledger, path, data, f"removed the {what} hooks from", comments=comments)
    return _with_folders(result, ledger.forget())


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
    return _install_hooks(
        "claude-code", _claude_settings_path(scope, home, cwd), CLAUDE_EVENTS, "Claude Code"
    )


def uninstall_claude_code(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Removes sidelight's hooks (only those) from Claude Code's ``settings.json``."""
    return _uninstall_hooks("claude-code", _claude_settings_path(scope, home, cwd), "Claude Code")


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
    config_text = _read_text(config_path) or ""
    new_config = _enable_codex_hooks(config_text, config_path)  # checked before anything is written
    results = []
    ledger = _Ledger("codex", hooks_path)
    if _add_hooks(data, hooks_path, "codex", CODEX_EVENTS, hook_command("codex")):
        verb = "installed the Codex hooks in"
        results.append(
            ledger.save(hooks_path, _dump(data), verb, ours=lambda t: _holds_hooks(t, "codex"), whole=False)
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
    data = _read_json(hooks_path, "Codex hooks file")
    if not _remove_hooks(data, "codex"):
        return [InstallResult("codex", hooks_path, False, f"not installed in {hooks_path}")]
    ledger = _Ledger("codex", hooks_path)
    as_written = ledger.is_as_written(hooks_path, _read_text(hooks_path))
    results = [_take_hooks_out(ledger, hooks_path, data, "removed the Codex hooks from")]
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
        done = ledger.undo(config_path, _read_text(config_path))
        if done is None:
            why = "config.toml was edited since install"
        else:
            results.append(
                InstallResult(
                    "codex",
                    config_path,
                    True,
                    _removed_message(config_path, done, "turned [features] hooks off again in"),
                )
            )
    folders = ledger.forget()
    results[-1] = _with_folders(results[-1], folders)
    if why:
        last = results[-1]
        note = CODEX_FLAG_STAYS.format(why=why)
        results[-1] = InstallResult(last.target, last.path, last.changed, last.message, last.backup, (note,))
    return results


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
    result = _install_hooks("gemini", path, GEMINI_EVENTS, "Gemini CLI", HOOK_TIMEOUT * 1000, comments=True)
    return InstallResult(
        result.target, path, result.changed, result.message, result.backup, (GEMINI_TRUST_NOTE,)
    )


def uninstall_gemini(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from the Gemini CLI's ``settings.json``."""
    return _uninstall_hooks("gemini", _gemini_settings_path(home), "Gemini CLI", comments=True)


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


def install_file(
    target: str,
    path: Path,
    text: str,
    what: str,
    ours: Callable[[str], bool],
    *,
    state_dir: Path | None = None,
) -> InstallResult:
    """Writes a file that is all sidelight's (Pi's extension, opencode's plugin, the skill): nothing
    when it already holds ``text``; else what is there is backed up (unless it is what sidelight
    wrote) and replaced. ``ours(text)`` tells sidelight's own file (uninstall removes only that)."""
    current = _read_text(path)
    if current == text:
        return InstallResult(target, path, False, f"already installed: {path}")
    return _Ledger(target, path, state_dir).save(path, text, f"installed the {what}", ours=ours, whole=True)


def uninstall_file(
    target: str, path: Path, ours: Callable[[str], bool], *, state_dir: Path | None = None
) -> InstallResult:
    """Removes a file :func:`install_file` wrote, when it is sidelight's, and the folders install made
    for it that are left empty; a file install replaced gets its earlier text back."""
    current = _read_text(path)
    if current is None:
        return InstallResult(target, path, False, f"not installed: {path}")
    ledger = _Ledger(target, path, state_dir)
    done = ledger.undo(path, current)
    if done is None:
        if not ours(current):
            raise InstallError(f"{path} was not written by sidelight; not removing it")
        path.unlink()
        done = "deleted"
    message = f"removed {path}" if done == "deleted" else _removed_message(path, done, "put back")
    return _with_folders(InstallResult(target, path, True, message), ledger.forget())


def _install_script(target: str, path: Path, source: str, what: str, marker: str) -> InstallResult:
    return install_file(target, path, source, what, lambda text: marker in text)


def _uninstall_script(target: str, path: Path, marker: str) -> InstallResult:
    return uninstall_file(target, path, lambda text: marker in text)


def install_pi(*, home: Path | None = None) -> InstallResult:
    """Copies sidelight's Pi extension to ``~/.pi/agent/extensions/sidelight.ts``."""
    return _install_script("pi", _pi_extension_path(home), pi_extension_source(), "Pi extension", PI_MARKER)


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
    return _install_script("opencode", path, opencode_plugin_source(), "opencode plugin", OPENCODE_MARKER)


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
    return _install_hooks("qwen", path, QWEN_EVENTS, "Qwen Code", HOOK_TIMEOUT * 1000, comments=True)


def uninstall_qwen(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from Qwen Code's user settings."""
    return _uninstall_hooks("qwen", _qwen_settings_path(home), "Qwen Code", comments=True)


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
    wanted = copilot_hooks(hook_command("copilot"))
    if data == wanted:
        return InstallResult("copilot", path, False, f"already installed in {path}")
    verb = "installed the Copilot CLI hooks in"
    return _Ledger("copilot", path).save(path, _dump(wanted), verb, ours=_copilot_text_is_ours, whole=True)


def _copilot_text_is_ours(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and _copilot_is_ours(data)


def uninstall_copilot(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's Copilot hooks file (only if it is sidelight's)."""
    path = _copilot_hooks_path(home)
    _read_json(path, "Copilot hooks file")  # a broken file is refused before anything is done
    return uninstall_file("copilot", path, _copilot_text_is_ours)


# ---------------------------------------------------------------------------------------------------
# The watcher as a service: a systemd user unit (Linux) or a launchd agent (macOS)

#: The systemd user unit's name.
SYSTEMD_UNIT = "sidelight-watch.service"
#: The launchd agent's label (and its plist's name).
LAUNCHD_LABEL = "dev.sidelight.watch"
#: Every service file sidelight writes carries this marker, so uninstall removes only its own.
SERVICE_MARKER = "sidelight-watch-service"
#: The variables passed on to the service when set at install time: where the state, the config and the
#: agents' sessions are (and those a plugin's resolver declares). The watcher must use the state
#: directory the hooks use (its snapshot, its socket), and find the sessions they find; a service does
#: not inherit the shell's environment.
SERVICE_ENVIRONMENT = ("SIDELIGHT_STATE_DIR", "SIDELIGHT_CONFIG", *AGENT_FOLDER_VARIABLES)
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
    """:data:`SERVICE_ENVIRONMENT` and the resolvers' ``variables`` (a plugin agent's folder), as set."""
    from sidelight.plugins import get_plugins

    declared = (v for r in get_plugins().resolvers().values() for v in r.variables)
    names = dict.fromkeys((*SERVICE_ENVIRONMENT, *sorted(declared)))
    return {name: os.environ[name] for name in names if os.environ.get(name)}


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
        ours = lambda text: SERVICE_MARKER in text  # noqa: E731
        results.append(
            _Ledger("service", path).save(path, text, f"installed the {what}", ours=ours, whole=True)
        )
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
    ledger = _Ledger("service", path)
    wants = path.parent / "default.target.wants"
    if str(path.parent) in ledger.folders:
        # systemctl enable made it in the folder install made; disable leaves it empty.
        with contextlib.suppress(OSError):
            wants.rmdir()
    results = [_with_folders(InstallResult("service", path, True, f"removed {path}"), ledger.forget())]
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
