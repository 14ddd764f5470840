"""Issue 29, items 1, 4 and 11: what sidelight writes into places a repository (or a dotfiles manager)
shaped.

1. In a workspace nothing is followed: ``_handoff.md`` is written only as a regular file of the user's
   (a link there is left as it is, the handoff not written there but still delivered), and
   ``.git/info/exclude`` only inside the work tree's own git directory, never through a link.
4. ``install`` into a symlinked settings file writes the link's target and keeps the link; ``uninstall``
   gives back exactly what was there, link included.
11. ``install gemini`` / ``install qwen`` accept settings with comments and trailing commas (JSONC) and
   keep the comments; ``uninstall`` gives the file back exactly.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from _thread import get_ident
from typing import TYPE_CHECKING

import pytest

from sidelight.config import Settings
from sidelight.discovery import list_sessions
from sidelight.plugins import Plugins
from sidelight.recap import handoff
from sidelight.records import SinkEvent
from sidelight.templates import handoff as handoff_plugin
from tests.test_recap_handoff import claude_transcript, context, start

if TYPE_CHECKING:
    from pathlib import Path

PREVIOUS = "11111111-1111-4111-8111-111111111111"
NEXT = "22222222-2222-4222-8222-222222222222"
BASHRC = "export PATH=$HOME/bin:$PATH\n"


@pytest.fixture
def project(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository whose handoff goes into the work tree (``handoff_location = project``)."""
    repo = tmp_path / "clone"
    (repo / "proj").mkdir(parents=True)
    git(repo, "init", "-q")
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")
    return (repo / "proj").resolve()


@pytest.fixture
def bashrc(home: Path) -> Path:
    path = home / ".bashrc"
    path.write_text(BASHRC, encoding="utf-8")
    return path


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    ).stdout


def end_session(home: Path, workspace: Path) -> None:
    """The watcher's ``session_end`` for the previous session: its sink writes the handoff."""
    session = next(s for s in list_sessions(Settings.load(), Plugins(entry_points=False)) if s.id == PREVIOUS)
    handoff_plugin._on_event(SinkEvent(kind="session_end", session=session))
    assert handoff_plugin.wait_for_handoffs(60)


# -- item 1: the handoff in a workspace --------------------------------------------------------------


def test_a_handoff_link_to_bashrc_is_not_followed_at_session_start(
    home: Path, project: Path, bashrc: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (project / "_handoff.md").symlink_to(bashrc)
    claude_transcript(home, project, PREVIOUS)
    with caplog.at_level(logging.WARNING, logger="sidelight"):
        text = context(start(project, NEXT, home))
    assert text is not None and text.startswith(handoff.FRAME)  # delivered all the same
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert (project / "_handoff.md").is_symlink()
    assert (project / "_handoff.md").readlink() == bashrc
    said = [r.getMessage() for r in caplog.records if "handoff not written" in r.getMessage()]
    assert len(said) == 1 and "symbolic link" in said[0]


def test_a_handoff_link_to_bashrc_is_not_followed_by_the_watcher(
    home: Path, project: Path, bashrc: Path
) -> None:
    (project / "_handoff.md").symlink_to(bashrc)
    claude_transcript(home, project, PREVIOUS)
    end_session(home, project)
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert (project / "_handoff.md").is_symlink()
    # A dangling link is no more followed (it would create the file it names).
    (project / "_handoff.md").unlink()
    (project / "_handoff.md").symlink_to(home / ".profile")
    end_session(home, project)
    assert not (home / ".profile").exists()


def test_a_handoff_link_s_target_is_not_read_as_the_handoff(home: Path, project: Path) -> None:
    previous = claude_transcript(home, project, PREVIOUS)
    size = previous.stat().st_size
    meta = {"session": f"claude-code:{PREVIOUS}", "size": size, "transcript": str(previous)}
    elsewhere = home / "planted.md"
    elsewhere.write_text(f"<!-- sidelight handoff {json.dumps(meta)} -->\nPLANTED TEXT\n", encoding="utf-8")
    (project / "_handoff.md").symlink_to(elsewhere)
    text = context(start(project, NEXT, home))
    assert text is not None and "PLANTED TEXT" not in text
    assert 'Last request: "What does notes.txt say now?"' in text


def test_a_handoff_of_its_own_is_replaced_and_a_hard_link_s_other_name_kept(
    home: Path, project: Path, bashrc: Path
) -> None:
    claude_transcript(home, project, PREVIOUS)
    os.link(bashrc, project / "_handoff.md")  # a regular file of the user's: replaced, not written into
    assert context(start(project, NEXT, home)) is not None
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    written = project / "_handoff.md"
    assert not written.is_symlink() and written.stat().st_ino != bashrc.stat().st_ino
    assert handoff.read_handoff(written) is not None
    assert written.stat().st_mode & 0o777 == 0o644


def test_a_planted_temporary_name_is_not_written_into(home: Path, project: Path, bashrc: Path) -> None:
    # The writer's temporary file is new (O_EXCL): a hard link planted under its name is not truncated.
    os.link(bashrc, project / f"._handoff.md.{os.getpid()}.{get_ident()}.tmp")
    assert handoff.store_handoff(project, Settings.load(), "the handoff\n") == project / "_handoff.md"
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert (project / "_handoff.md").read_text(encoding="utf-8") == "the handoff\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user's needs root")
def test_another_user_s_handoff_file_is_left_as_it_is(home: Path, project: Path) -> None:
    theirs = project / "_handoff.md"
    theirs.write_text("theirs\n", encoding="utf-8")
    os.chown(theirs, 4321, 4321)
    assert handoff.store_handoff(project, Settings.load(), "the handoff\n") is None
    assert theirs.read_text(encoding="utf-8") == "theirs\n" and theirs.stat().st_uid == 4321


def test_a_fifo_named_handoff_is_left_as_it_is(home: Path, project: Path) -> None:
    os.mkfifo(project / "_handoff.md")
    assert handoff.store_handoff(project, Settings.load(), "the handoff\n") is None
    assert handoff.read_handoff(project / "_handoff.md") is None  # not opened for long either


# -- item 1: info/exclude ------------------------------------------------------------------------------


def test_a_symlinked_info_exclude_gets_nothing_appended(home: Path, project: Path, bashrc: Path) -> None:
    exclude = project.parent / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(bashrc)
    assert handoff.store_handoff(project, Settings.load(), "the handoff\n") == project / "_handoff.md"
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert exclude.is_symlink()


def test_a_symlinked_info_folder_gets_nothing_written(home: Path, project: Path) -> None:
    info = project.parent / ".git" / "info"
    outside = home / "outside"
    outside.mkdir()
    for entry in info.iterdir():
        entry.unlink()
    info.rmdir()
    info.symlink_to(outside)
    handoff.store_handoff(project, Settings.load(), "the handoff\n")
    assert list(outside.iterdir()) == []


def test_a_symlinked_git_folder_is_not_followed(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")
    outside = home / "elsewhere"
    outside.mkdir()
    folder = (tmp_path / "shipped").resolve()
    folder.mkdir()
    (folder / ".git").symlink_to(outside)
    with pytest.raises(OSError, match="not followed"):
        handoff.exclude_from_git(folder / "_handoff.md")
    assert handoff.store_handoff(folder, Settings.load(), "the handoff\n") == folder / "_handoff.md"
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("points_to", ["home", "a fake worktree", "another repository"])
def test_a_git_file_pointing_out_of_the_repository_is_not_followed(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, points_to: str
) -> None:
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")
    folder = (tmp_path / "unpacked").resolve()
    folder.mkdir()
    if points_to == "home":
        target = home
    elif points_to == "a fake worktree":
        target = home / "wt" / "worktrees" / "x"  # says nothing of this work tree
        target.mkdir(parents=True)
        (target / "gitdir").write_text(str(home / "somewhere" / ".git") + "\n", encoding="utf-8")
    else:
        other = tmp_path / "other"
        other.mkdir()
        git(other, "init", "-q")
        target = other / ".git"
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    info = target / "info" / "exclude"
    exclude_before = info.read_bytes() if info.exists() else None
    (folder / ".git").write_text(f"gitdir: {target}\n", encoding="utf-8")
    assert handoff.store_handoff(folder, Settings.load(), "the handoff\n") == folder / "_handoff.md"
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before
    assert (info.read_bytes() if info.exists() else None) == exclude_before


def test_a_real_linked_worktree_is_still_excluded(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    worktree = (tmp_path / "wt").resolve()
    git(main, "worktree", "add", "-q", str(worktree))
    assert handoff.store_handoff(worktree, Settings.load(), "the handoff\n") == worktree / "_handoff.md"
    exclude = (main / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    assert "/_handoff.md" in exclude.splitlines()
    assert git(worktree, "status", "--porcelain", "--untracked-files=all") == ""
