"""One repository is one project (issue 31, item 1): a folder's git repository read from ``.git`` without
running git (:mod:`sidelight.engine.repos`), sessions in one repository's checkouts and subfolders are
siblings under ``scope = repository`` (the default), the same file in two worktrees is one file for
conflicts, and a sibling in another worktree is said to be there. ``scope = directory`` keeps the old
rule. Real repositories: ``git init`` and ``git worktree add`` in temporary folders."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from sidelight.config import ConfigError, Settings
from sidelight.engine import repos
from sidelight.engine.discovery import siblings_of
from sidelight.engine.repos import Repository, repository_of
from sidelight.features.digest import get_session_updates
from sidelight.plugins import Plugins
from sidelight.records import SessionActivity
from sidelight.templates.default import summarize
from tests.test_updates import NOW, FakeHost, append, prompt, session, tool

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    repos.forget()
    yield
    repos.forget()


def two_worktrees(main: Path, linked: Path, app: str = "print(1)\n") -> None:
    """Makes ``main`` a repository with one commit on ``main`` (``app.py`` holding ``app``, and
    ``sub/x.txt``), and ``linked`` its linked worktree of branch ``feature-x``."""
    (main / "sub").mkdir(parents=True, exist_ok=True)
    git(main, "init", "-q", "-b", "main")
    (main / "app.py").write_text(app)
    (main / "sub" / "x.txt").write_text("x\n")
    git(main, "add", ".")
    git(main, "commit", "-qm", "one")
    git(main, "worktree", "add", "-q", "-b", "feature-x", str(linked))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit on ``main``, a subfolder ``sub/``, and a linked worktree
    ``wt-feature`` (branch ``feature-x``) beside it."""
    two_worktrees(tmp_path / "repo", tmp_path / "wt-feature")
    return tmp_path / "repo"


# -- the repository of a folder ---------------------------------------------------------------------


def test_a_checkout_its_subfolders_and_its_linked_worktrees_are_one_repository(repo: Path) -> None:
    linked = repo.parent / "wt-feature"
    main = repository_of(str(repo))
    assert main == Repository(str((repo / ".git").resolve()), str(repo.resolve()), "main", None)
    assert repository_of(str(repo / "sub")) == main
    other = repository_of(str(linked / "sub"))
    assert other is not None
    assert other.identity == main.identity
    assert (other.root, other.branch, other.label) == (str(linked.resolve()), "feature-x", "feature-x")
    assert other.relative(str(linked.resolve() / "sub" / "x.txt")) == "sub/x.txt"
    assert other.relative(str(repo.resolve() / "app.py")) is None


def test_a_detached_worktree_is_named_by_its_folder(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "--detach", str(repo.parent / "wt-detached"))
    found = repository_of(str(repo.parent / "wt-detached"))
    assert found is not None and found.branch is None and found.head is not None and len(found.head) == 8
    assert found.label == "wt-detached"
    assert found.identity == str((repo / ".git").resolve())


def test_a_submodule_is_a_repository_of_its_own(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    (lib / "l.py").write_text("x\n")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    found = repository_of(str(repo / "lib"))
    assert found is not None and found.identity == str((repo / ".git" / "modules" / "lib").resolve())
    assert found.root == str((repo / "lib").resolve())
    main = repository_of(str(repo))
    assert main is not None and main.identity != found.identity


def test_where_a_folder_and_a_file_lie_in_their_repository(repo: Path, tmp_path: Path) -> None:
    """What ``sessions``, ``status`` and the dashboard ask: a folder's main checkout, worktree and
    subfolder, and a file's path relative to its worktree (one key in every worktree)."""
    main, linked = repo.resolve(), (repo.parent / "wt-feature").resolve()
    found = repos.placement(str(main / "sub"))
    assert found is not None and (found[0].checkout, found[1], found[2]) == (str(main), None, "sub")
    found = repos.placement(str(linked))
    assert found is not None and (found[0].checkout, found[1], found[2]) == (str(main), "feature-x", "")
    for outside in (str(tmp_path), "relative/folder", "", None, "/a\0b"):
        assert repos.placement(outside) is None
    ours = repos.file_in_repository(str(main / "app.py"))
    theirs = repos.file_in_repository(str(linked / "app.py"))
    assert ours is not None and theirs is not None
    assert (ours[0].identity, ours[1]) == (theirs[0].identity, theirs[1]) == (str(main / ".git"), "app.py")
    assert theirs[0].label == "feature-x"
    assert repos.file_in_repository(str(linked / "sub" / "new" / "y.txt"))[1] == "sub/new/y.txt"  # type: ignore[index]
    for outside in (str(tmp_path / "x.py"), "app.py", str(main), "/a\0b/c"):
        assert repos.file_in_repository(outside) is None


def test_a_bare_repository_and_a_submodule_are_shown_as_their_own_folder(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(bare, "worktree", "add", "-q", str(tmp_path / "from-bare"), "main")
    found = repository_of(str(tmp_path / "from-bare"))
    assert found is not None and found.checkout == str(bare.resolve())
    place = repos.placement(str(tmp_path / "from-bare"))
    assert place is not None and place[1] == "main"  # no main checkout: every worktree is named
    assert Repository("/r/.git/modules/lib", "/r/lib").checkout == "/r/lib"


def test_a_folder_outside_git_costs_a_few_stats_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    looked: list[str] = []
    real_lstat = os.lstat

    def counting(path: str, *args: object, **kwargs: object) -> os.stat_result:
        looked.append(str(path))
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", counting)
    assert repository_of(str(folder)) is None
    assert len(looked) == len(folder.parts)  # one lstat of <folder>/.git per folder up to /
    looked.clear()
    assert repository_of(str(folder)) is None
    assert repository_of(str(tmp_path / "a")) is None  # a folder walked on the way: known too
    assert looked == []
    assert repository_of("relative/folder") is None and repository_of(None) is None


def test_within_looks_only_under_the_repository_s_worktrees(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked = (repo.parent / "wt-feature").resolve()
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    git(repo, "worktree", "add", "-q", "-b", "gone", str(tmp_path / "wt-gone"))
    (tmp_path / "wt-gone" / ".git").unlink()  # a worktree deleted without a prune: its entry stays
    mine = repository_of(str(repo))
    assert mine is not None
    assert set(repos.worktree_roots(mine)) == {
        str(repo.resolve()),
        str(linked),
        str((tmp_path / "wt-gone").resolve()),
    }
    found = repos.within(mine, str(linked / "sub"))
    assert found is not None and found.branch == "feature-x"
    assert repos.within(mine, str(repo.resolve() / "sub")) == mine
    assert repos.within(mine, str(nested.resolve())) is None  # a repository of its own, nested
    assert repos.within(mine, str((tmp_path / "wt-gone").resolve())) is None
    assert repos.within(mine, None) is None
    looked: list[str] = []
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: looked.append(str(path)))
    assert repos.within(mine, str(tmp_path / "elsewhere")) is None
    assert looked == []  # outside every worktree: not looked at


# -- hostile .git files: not in git, never an error ------------------------------------------------------


def _hostile(folder: Path, kind: str, elsewhere: Path) -> None:
    dot = folder / ".git"
    if kind == "points nowhere":
        dot.write_text(f"gitdir: {folder / 'gone'}\n")
    elif kind == "points to itself":
        dot.write_text("gitdir: .\n")
    elif kind == "points to its own .git file":
        dot.write_text("gitdir: .git\n")
    elif kind == "no gitdir line":
        dot.write_text("hello\n")
    elif kind == "huge":
        dot.write_bytes(b"gitdir: " + b"a" * (1 << 20))
    elif kind == "nul":
        dot.write_bytes(b"gitdir: /tmp\0/x\n")
    elif kind == "a symbolic link":
        dot.symlink_to(elsewhere / ".git")
    elif kind == "a link loop":
        dot.symlink_to(dot)
    elif kind == "a fifo":
        os.mkfifo(dot)
    elif kind == "another repository's worktree":
        # A worktree git directory that does not name this .git back.
        dot.write_text(f"gitdir: {elsewhere / '.git' / 'worktrees' / 'wt-feature'}\n")
    elif kind == "another repository's git dir":
        dot.write_text(f"gitdir: {elsewhere / '.git'}\n")
    elif kind == "a .git folder without HEAD":
        dot.mkdir()
    elif kind == "a huge HEAD":
        dot.mkdir()
        (dot / "HEAD").write_bytes(b"ref: refs/heads/" + b"x" * (1 << 20))
    elif kind == "a HEAD that is no HEAD":
        dot.mkdir()
        (dot / "HEAD").write_text("<html>\n")
    else:  # pragma: no cover
        raise AssertionError(kind)


HOSTILE = [
    "points nowhere",
    "points to itself",
    "points to its own .git file",
    "no gitdir line",
    "huge",
    "nul",
    "a symbolic link",
    "a link loop",
    "a fifo",
    "another repository's worktree",
    "another repository's git dir",
    "a .git folder without HEAD",
    "a huge HEAD",
    "a HEAD that is no HEAD",
]


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_git_file_is_not_in_git(repo: Path, tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "shipped"
    (folder / "deep").mkdir(parents=True)
    _hostile(folder, kind, repo)
    assert repository_of(str(folder / "deep")) is None
    assert repository_of(str(folder)) is None
    # Inside a real repository, a hostile .git below it is no way into it either.
    inner = repo / "vendor"
    inner.mkdir()
    _hostile(inner, kind, repo)
    assert repository_of(str(inner)) is None
    assert repository_of(str(repo)) is not None


def test_an_unreadable_git_file_or_head_is_not_in_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    linked = repo.parent / "wt-feature"
    refused = {str(linked / ".git"), str(repo / ".git" / "HEAD")}
    real_open = os.open

    def unreadable(path: str, *args: object, **kwargs: object) -> int:
        if str(path) in refused:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", unreadable)
    assert repository_of(str(linked)) is None
    assert repository_of(str(repo / "sub")) is None


def test_the_handoff_still_lists_itself_in_a_linked_worktree_s_exclude(repo: Path) -> None:
    from sidelight.features.recap.handoff import _git_dir

    linked = repo.parent / "wt-feature"
    assert _git_dir(linked) == repo / ".git"
    assert _git_dir(repo) == repo / ".git"
    assert _git_dir(repo / "sub") is None


# -- who is a sibling ------------------------------------------------------------------------------------


def test_siblings_by_repository_directory_all_and_names(repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "transcripts"
    root.mkdir()
    linked = repo.parent / "wt-feature"
    outside = tmp_path / "plain"
    (outside / "inner").mkdir(parents=True)
    other = tmp_path / "other-repo"
    other.mkdir()
    git(other, "init", "-q")
    groups = {
        "main": repo,
        "twin": repo,
        "sub": repo / "sub",
        "wt": linked,
        "wt-sub": linked / "sub",
        "other": other,
        "plain": outside,
        "plain-inner": outside / "inner",
    }
    sessions = {name: session(root, name, str(folder.resolve())) for name, folder in groups.items()}
    sessions["no-folder"] = session(root, "no-folder", "codex:abc")
    everyone = list(sessions.values())

    def names(reader: str, scope: str | frozenset[str]) -> set[str]:
        return {s.name for s in siblings_of(sessions[reader], everyone, scope)}

    same_repository = {"main", "twin", "sub", "wt", "wt-sub"}
    for reader in same_repository:
        assert names(reader, "repository") == same_repository - {reader}, reader
        assert names(reader, "project") == same_repository - {reader}, reader
    assert names("main", "directory") == {"twin"}
    assert names("wt", "directory") == set()
    # Outside git, as before: the same folder only (a subfolder outside git is another project).
    assert names("plain", "repository") == set()
    assert names("other", "repository") == set()
    assert names("no-folder", "repository") == set()
    assert names("main", "all") == set(sessions) - {"main"}
    assert names("main", frozenset({"wt", "plain"})) == {"wt", "plain"}


def test_the_scope_setting(tmp_path: Path) -> None:
    def scope(value: str | None) -> object:
        env = {} if value is None else {"SIDELIGHT_SCOPE": value}
        return Settings.load(env=env, home=tmp_path).scope

    assert scope(None) == "repository"
    assert scope("repository") == "repository"
    assert scope("project") == "repository"  # the default's former name
    assert scope("directory") == "directory"
    assert scope("all") == "all"
    assert scope("discord, email") == frozenset({"discord", "email"})
    with pytest.raises(ConfigError, match="'repository', 'directory', 'all'"):
        scope(" , ")


# -- the digest: one file in two worktrees, and which worktree ---------------------------------------------


@pytest.fixture
def digest_world(repo: Path, tmp_path: Path):
    root = tmp_path / "transcripts"
    root.mkdir()
    linked = (repo.parent / "wt-feature").resolve()
    main_dir = repo.resolve()
    sessions = {
        "main": session(root, "main", str(main_dir)),
        "feature": session(root, "feature", str(linked)),
        "deep": session(root, "deep", str(main_dir / "sub")),
    }
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost(list(sessions.values())), name="fake-host")
    settings = replace(
        Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state", first_look_bytes=4096
    )

    def updates(scope: str = "repository") -> str | None:
        return get_session_updates("main", settings=replace(settings, scope=scope), plugins=plugins, now=NOW)

    return sessions, main_dir, linked, updates


def test_the_same_file_in_two_worktrees_is_one_file_and_the_worktree_is_named(digest_world) -> None:
    sessions, main_dir, linked, updates = digest_world
    append(
        sessions["main"].path, prompt("read the app"), tool("Read", {"file_path": f"{main_dir}/app.py"}, 1)
    )
    append(
        sessions["feature"].path,
        prompt("change the app"),
        tool("Edit", {"file_path": f"{linked}/app.py"}, 2),
        tool("Edit", {"file_path": f"{linked}/notes.md"}, 3),
    )
    append(sessions["deep"].path, prompt("look below"), tool("Edit", {"file_path": "x.txt"}, 4))
    digest = updates() or ""
    rows = digest.splitlines()[1:]
    assert len(rows) == 2, digest
    assert rows[0].startswith(
        '- claude feature (worktree feature-x, 3m ago, 3 messages) [also touched by you: app.py]: "change'
    ), digest
    assert "-> edited notes.md, app.py" in rows[0]
    # A subfolder of the reader's own worktree is no other worktree.
    assert rows[1].startswith("- claude deep (3m ago, 2 messages): ") and "worktree" not in rows[1]


def test_a_file_touched_in_a_subfolder_session_is_the_same_file(digest_world) -> None:
    sessions, main_dir, _, updates = digest_world
    append(sessions["main"].path, prompt("edit x"), tool("Edit", {"file_path": f"{main_dir}/sub/x.txt"}, 1))
    append(sessions["deep"].path, prompt("edit x too"), tool("Edit", {"file_path": "x.txt"}, 2))
    digest = updates() or ""
    assert "- claude deep (3m ago, 2 messages) [also touched by you: x.txt]" in digest, digest


def test_scope_directory_keeps_the_other_worktree_out(digest_world) -> None:
    sessions, main_dir, linked, updates = digest_world
    append(sessions["main"].path, prompt("read"), tool("Read", {"file_path": f"{main_dir}/app.py"}, 1))
    append(sessions["feature"].path, prompt("change"), tool("Edit", {"file_path": f"{linked}/app.py"}, 2))
    assert updates("directory") is None
    # With every session a sibling, the other worktree is named but the paths are its own.
    wide = updates("all") or ""
    assert "(worktree feature-x, 3m ago" in wide and "[also touched by you: app.py]" in wide


def test_the_default_summarizer_names_a_worktree_safely(tmp_path: Path) -> None:
    base = SessionActivity(session=session(tmp_path, "s", "/p"), user_messages=1, first_user_text="hi")
    assert summarize(base) == '- claude s (1 message): "hi"'
    named = replace(base, worktree="feat\x1b[31m/" + "x" * 80)
    line = summarize(named) or ""
    assert line.startswith("- claude s (worktree feat[31m/xxx") or line.startswith(
        "- claude s (worktree feat/"
    )
    assert "\x1b" not in line and len(line.split("(worktree ", 1)[1].split(",", 1)[0]) <= 40
