"""The git repository a folder is in, found without running git: one repository is one project.

A folder's repository is found by walking up to the nearest ``.git``: a folder (the main checkout), or
a file ``gitdir: ...`` (a linked worktree, whose git directory names the common one in its
``commondir``, or a submodule). Its identity is the real path of the common git directory, so the main
checkout, every linked worktree and every subfolder of them are one repository; each :class:`Repository`
also says its worktree's root and branch (``HEAD``: ``ref: refs/heads/NAME``, else a detached commit).

Nothing a folder holds is trusted: a ``.git`` that is a link, a FIFO or an unreadable file, a ``gitdir:``
that points anywhere but to a git directory made for this worktree (its ``gitdir`` file names this
``.git`` back) or a submodule's under a repository above, a ``HEAD`` that is missing, huge or no ``HEAD``
at all: the folder is not in git (``None``), never an error. Answers are cached per folder for
:data:`CACHE_SECONDS` (a hook asks for a few folders; the watcher answers many hooks), so a folder outside
git costs a few ``lstat`` calls once, and its subfolders and neighbours a dictionary look-up.
"""

# Hot path (a prompt whose siblings work in other folders): plain str paths and os functions.
# ruff: noqa: PTH100, PTH116, PTH118, PTH119, PTH120, PTH208

from __future__ import annotations

import os
import stat
import time

from sidelight._fast._record import record

__all__ = [
    "CACHE_SECONDS",
    "Repository",
    "common_git_dir",
    "file_in_repository",
    "forget",
    "placement",
    "repository_of",
    "within",
    "worktree_roots",
]

#: How long an answer about a folder is kept (the watcher lives long; a branch is switched, a folder
#: becomes a repository).
CACHE_SECONDS = 10.0
#: At most this many folders are remembered; more, and all are forgotten.
CACHE_SIZE = 4096
#: The most of a ``.git`` file, a ``commondir``, ``gitdir`` or ``HEAD`` read: git's own are one short line.
POINTER_BYTES = 4096
#: At most this many linked worktrees of one repository are looked for (:func:`worktree_roots`).
WORKTREES_READ = 256

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY


@record(frozen=True)
class Repository:
    """The git repository a folder is in, as its worktree sees it. (A record written out, not a
    dataclass: :mod:`sidelight._fast._record`.)"""

    __slots__ = ("branch", "head", "identity", "root")

    #: The real path of the repository's common git directory: the same for every worktree of it.
    identity: str
    #: The worktree's root: the folder that holds its ``.git``.
    root: str
    #: The worktree's branch (``refs/heads/NAME`` is ``NAME``), ``None`` when its ``HEAD`` is detached.
    branch: str | None
    #: The short commit a detached ``HEAD`` is at (``None``: on a branch).
    head: str | None

    def __init__(self, identity: str, root: str, branch: str | None = None, head: str | None = None) -> None:
        object.__setattr__(self, "identity", identity)
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "branch", branch)
        object.__setattr__(self, "head", head)

    @property
    def label(self) -> str:
        """How a digest line names the worktree: its branch, else its folder's name."""
        return self.branch or os.path.basename(self.root) or self.root

    @property
    def checkout(self) -> str:
        """The folder the repository is shown as: its main checkout's (the folder that holds the common
        ``.git``); for a bare repository its git directory; for a submodule its worktree's root."""
        identity = self.identity
        if os.path.basename(identity) == ".git":
            return os.path.dirname(identity)
        return self.root if "/.git/modules/" in identity else identity

    def relative(self, path: str) -> str | None:
        """``path`` (absolute, normal) relative to the worktree's root; ``None`` when it is outside."""
        root = self.root.rstrip("/")
        if path.startswith(root + "/"):
            return path[len(root) + 1 :]
        return "" if path == root else None


def _read_pointer(path: str) -> str:
    """The text of the small regular file ``path``, never through a link and never more than
    :data:`POINTER_BYTES` (a bigger file is no git pointer). Raises :class:`OSError`."""
    fd = os.open(path, _READ_FLAGS)
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file; not read")
        data = file.read(POINTER_BYTES + 1)
    if len(data) > POINTER_BYTES:
        raise OSError(f"{path}: too big for a git pointer; not read")
    if b"\0" in data:
        raise OSError(f"{path}: a NUL byte; no git pointer")
    return data.decode("utf-8", "replace").strip()


def common_git_dir(folder: str) -> tuple[str, str] | None:
    """The git directory of the worktree whose ``.git`` is directly in ``folder``, and the common git
    directory of its repository (for a main checkout both are ``folder/.git``); ``None`` when ``folder``
    holds no ``.git``. Raises :class:`OSError` for a ``.git`` that is not followed: a symbolic link, or a
    ``gitdir:`` file that points anywhere but to a git directory of a repository that vouches for this
    worktree: a linked worktree's ``<common>/worktrees/<name>`` whose ``gitdir`` file names this ``.git``
    back, or a submodule's ``<superproject>/.git/modules/...`` in a repository that holds ``folder``."""
    dot = os.path.join(folder, ".git")
    try:
        found = os.lstat(dot)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISDIR(found.st_mode):
        return dot, dot
    if not stat.S_ISREG(found.st_mode):
        raise OSError(f"{dot}: neither a folder nor a gitdir file; not followed")
    text = _read_pointer(dot)
    if not text.startswith("gitdir:"):
        raise OSError(f"{dot}: no gitdir line; not followed")
    git_dir = os.path.realpath(os.path.join(folder, text[len("gitdir:") :].strip()))
    if os.path.basename(os.path.dirname(git_dir)) == "worktrees":
        try:
            # Absolute, or relative to the worktree's git directory (worktree.useRelativePaths).
            back = os.path.join(git_dir, _read_pointer(os.path.join(git_dir, "gitdir")))
            vouched = os.path.samestat(os.lstat(back), found)
        except (OSError, ValueError):
            vouched = False
        if vouched:
            try:
                common = os.path.join(git_dir, _read_pointer(os.path.join(git_dir, "commondir")))
            except FileNotFoundError:  # (git has written it since 2.5; the layout says the same)
                common = os.path.dirname(os.path.dirname(git_dir))
            if stat.S_ISDIR(os.stat(common).st_mode):
                return git_dir, os.path.normpath(common)
    above = os.path.dirname(os.path.abspath(folder))
    while True:
        modules = os.path.join(above, ".git", "modules")
        if git_dir.startswith(modules + "/"):
            if stat.S_ISDIR(os.lstat(os.path.join(above, ".git")).st_mode):
                return git_dir, git_dir
            break
        parent = os.path.dirname(above)
        if parent == above:
            break
        above = parent
    raise OSError(f"{dot} points to {git_dir}, which is no git directory of this work tree; not followed")


#: What is not known yet (a cache miss), and what says "no ``.git`` here: ask the folder above".
_MISSING: object = object()
_ABOVE: object = object()

_found: dict[str, Repository | None] = {}
_roots: dict[str, tuple[str, ...]] = {}
_since = 0.0


def forget() -> None:
    """Forgets every answer (tests; a watcher that knows a repository changed)."""
    _found.clear()
    _roots.clear()


def _fresh() -> None:
    """Forgets every answer older than :data:`CACHE_SECONDS`, or all when there are too many."""
    global _since
    now = time.monotonic()
    if now - _since > CACHE_SECONDS or len(_found) > CACHE_SIZE:
        forget()
        _since = now


def repository_of(folder: str | None) -> Repository | None:
    """The repository ``folder`` (an absolute path) is in, ``None`` when it is in none, or its nearest
    ``.git`` is not followed (:func:`common_git_dir`), or its ``HEAD`` is unreadable or no ``HEAD``."""
    if not folder or folder[0] != "/":
        return None
    _fresh()
    known = _found.get(folder, _MISSING)
    if known is not _MISSING:
        return known  # type: ignore[return-value]
    walked = []
    found: object = None
    current = folder
    while True:
        known = _found.get(current, _MISSING)
        if known is not _MISSING:
            found = known
            break
        walked.append(current)
        found = _here(current)
        if found is not _ABOVE:
            break
        parent = os.path.dirname(current)
        if parent == current:
            found = None
            break
        current = parent
    for each in walked:
        _found[each] = found  # type: ignore[assignment]
    return found  # type: ignore[return-value]


def worktree_roots(repository: Repository) -> tuple[str, ...]:
    """The folders the worktrees of ``repository`` may be in: its own root, the main checkout's (the
    folder that holds the common ``.git``) and every linked worktree's its common directory lists
    (``worktrees/<name>/gitdir``, at most :data:`WORKTREES_READ`). A folder under none of them is in
    another repository, told without a look at it; one under them may still be in a repository nested
    there (:func:`within` looks)."""
    _fresh()
    identity = repository.identity
    known = _roots.get(identity)
    if known is not None and repository.root in known:
        return known
    roots = dict.fromkeys([repository.root])
    if os.path.basename(identity) == ".git":
        roots[os.path.dirname(identity)] = None
    folder = os.path.join(identity, "worktrees")
    try:
        names = sorted(os.listdir(folder))[:WORKTREES_READ]
    except (OSError, ValueError):
        names = []
    for name in names:
        git_dir = os.path.join(folder, name)
        try:
            dot = os.path.join(git_dir, _read_pointer(os.path.join(git_dir, "gitdir")))
        except (OSError, ValueError):
            continue  # pruned, or no worktree git made
        roots[os.path.realpath(os.path.dirname(os.path.normpath(dot)))] = None
    _roots[identity] = found = tuple(roots)
    return found


def within(repository: Repository, folder: str | None) -> Repository | None:
    """The repository of ``folder`` when it is ``repository`` (another worktree of it, or a subfolder),
    else ``None``: a folder outside its :func:`worktree_roots` costs a few string comparisons."""
    if not folder:
        return None
    for root in worktree_roots(repository):
        if folder == root or folder.startswith(root.rstrip("/") + "/"):
            found = repository_of(folder)
            return found if found is not None and found.identity == repository.identity else None
    return None


def _real(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def placement(folder: str | None) -> tuple[Repository, str | None, str] | None:
    """Where the folder ``folder`` (absolute) lies in git: its repository, the label of its worktree
    when that is not the main checkout (:attr:`Repository.checkout`), and the folder relative to its
    worktree's root (``""`` at the root); ``None`` outside git. What ``sessions``, ``status`` and the
    dashboard say of a session's working directory."""
    real = _real(folder) if folder and folder[0] == "/" else None
    found = repository_of(real)
    if found is None or real is None:
        return None
    worktree = None if found.root == found.checkout else found.label
    return found, worktree, found.relative(real) or ""


def file_in_repository(path: str) -> tuple[Repository, str] | None:
    """The repository the file ``path`` (absolute) is in, as its worktree sees it, and the file's path
    relative to that worktree's root: the same file in every worktree of one repository has the same
    pair of :attr:`Repository.identity` and relative path. ``None`` outside git."""
    real = _real(path) if path and path[0] == "/" else None
    found = None if real is None else repository_of(os.path.dirname(real))
    relative = None if found is None or real is None else found.relative(real)
    return None if found is None or not relative else (found, relative)


def _here(folder: str) -> object:
    """The repository whose ``.git`` is directly in ``folder``, ``None`` (not in git: a ``.git`` not
    followed, or a folder that cannot be looked into), or :data:`_ABOVE` (no ``.git`` here)."""
    try:
        dirs = common_git_dir(folder)
        if dirs is None:
            return _ABOVE
        branch, head = _head(_read_pointer(os.path.join(dirs[0], "HEAD")))
        if branch is None and head is None:
            return None
        return Repository(os.path.realpath(dirs[1]), os.path.realpath(folder), branch, head)
    except (OSError, ValueError):
        return None


def _head(text: str) -> tuple[str | None, str | None]:
    """The branch a ``HEAD`` names, or the short commit a detached one is at; ``(None, None)`` when the
    text is no ``HEAD``."""
    if text.startswith("ref:"):
        ref = text[4:].strip()
        if not ref.startswith("refs/") or "\n" in ref:
            return None, None
        return (ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref), None
    if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
        return None, text[:8]
    return None, None
