"""What install wrote, and giving it back: the ledger of each target, the backups, the host's files.

Installing twice changes nothing; a file that changes is backed up first, to
``<state dir>/backups/<target>/<YYYYmmddTHHMMSS>-<name>`` (never beside it, where a project's settings
folder would get it committed; never a file sidelight itself wrote as it is), and replaced atomically. A
file that is a symbolic link (a dotfiles manager's: stow, chezmoi, home-manager) is written through: the
link's target is replaced, in its own folder, and the link stays a link; one whose target cannot be
written is refused.

Uninstall takes away exactly what install added. Install records, per target, what it created and how
it changed each file (``<state dir>/installs/<target>.json``, see :class:`Ledger`): a file that is
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
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidelight.errors import SidelightError
from sidelight.records import InstallResult
from sidelight.statefile import load_json_state, private_dir, write_atomic
from sidelight.statelayout import BACKUPS_DIR, INSTALLS_DIR

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "InstallError",
    "Ledger",
    "install_file",
    "read_text",
    "remove_host_file",
    "removed_message",
    "uninstall_file",
    "with_folders",
]


class InstallError(SidelightError, ValueError):
    """An install or uninstall could not be done; nothing was changed."""


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


def read_text(path: Path) -> str | None:
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


def remove_host_file(path: Path) -> None:
    """Removes the host's file ``path`` that install created: through a symbolic link, the file
    install wrote (the link's target) goes, and the link stays as it was before install."""
    _host_file(path).unlink()


class Ledger:
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
        before = read_text(path)
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
            remove_host_file(path)
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


def removed_message(path: Path, done: str, verb: str) -> str:
    """What uninstall says it did to ``path``."""
    if done == "removed":
        return f"removed {path} (sidelight had created it)"
    if done == "restored":
        return f"{verb} {path} (restored as it was before install)"
    return f"{verb} {path}"


def with_folders(result: InstallResult, folders: list[str]) -> InstallResult:
    """``result`` saying which empty folders install had made and uninstall removed (the outermost:
    the others were inside them)."""
    outermost = [f for f in folders if str(Path(f).parent) not in folders]
    if not outermost:
        return result
    said = f"{result.message}, and the folder{'s' if len(outermost) > 1 else ''} {', '.join(outermost)}"
    said += " that install had made"
    return InstallResult(result.target, result.path, result.changed, said, result.backup, result.notes)


def install_file(
    target: str,
    path: Path,
    text: str,
    what: str,
    ours: Callable[[str], bool],
    *,
    state_dir: Path | None = None,
) -> InstallResult:
    """Writes a file that is all sidelight's (a host's extension or plugin, the skill): nothing
    when it already holds ``text``; else what is there is backed up (unless it is what sidelight
    wrote) and replaced. ``ours(text)`` tells sidelight's own file (uninstall removes only that)."""
    current = read_text(path)
    if current == text:
        return InstallResult(target, path, False, f"already installed: {path}")
    return Ledger(target, path, state_dir).save(path, text, f"installed the {what}", ours=ours, whole=True)


def uninstall_file(
    target: str, path: Path, ours: Callable[[str], bool], *, state_dir: Path | None = None
) -> InstallResult:
    """Removes a file :func:`install_file` wrote, when it is sidelight's, and the folders install made
    for it that are left empty; a file install replaced gets its earlier text back."""
    current = read_text(path)
    if current is None:
        return InstallResult(target, path, False, f"not installed: {path}")
    ledger = Ledger(target, path, state_dir)
    done = ledger.undo(path, current)
    if done is None:
        if not ours(current):
            raise InstallError(f"{path} was not written by sidelight; not removing it")
        path.unlink()
        done = "deleted"
    message = f"removed {path}" if done == "deleted" else removed_message(path, done, "put back")
    return with_folders(InstallResult(target, path, True, message), ledger.forget())
