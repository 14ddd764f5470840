"""One repository is one project (issue 31, item 1), with the real Claude Code CLI.

The project is a git repository with a linked worktree beside it (branch ``feature-x``). A Claude Code
session in the main checkout reads ``app.py``; another, started in the linked worktree, edits its own
``app.py``. The first session's next prompt hears of the second, in the worktree it names, with
``app.py`` flagged as a file it touched too: the same repository path in two worktrees is one file.
"""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import edit, read, say, write
from tests.test_repository_scope import two_worktrees

pytestmark = pytest.mark.e2e


def test_a_session_in_a_linked_worktree_is_a_sibling_and_its_edit_a_conflict(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    main, linked = agents.project, agents.root / "wt-feature"
    two_worktrees(main, linked, "VERSION = 1\n")
    agents.mock.set_script(
        [
            [read(str(main / "app.py")), say("main: read it")],
            [edit(str(linked / "app.py"), "VERSION = 1", "VERSION = 2"), say("feature: bumped")],
            [say("main: noted")],
        ]
    )
    cc = agents.claude("main: read the app")
    agents.project = linked  # the runners start the CLIs in the project folder: this one, in the worktree
    try:
        feature = agents.claude("feature: bump the version")
    finally:
        agents.project = main
    assert cc.session_id and feature.session_id
    assert (linked / "app.py").read_text() == "VERSION = 2\n" and (
        main / "app.py"
    ).read_text() == "VERSION = 1\n"
    agents.claude("main: what happened?", resume=cc.session_id)

    digest = digest_for(agents.mock, "main: what happened?")
    assert digest is not None, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    print(digest)  # the report quotes this line
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert line.startswith(f"- claude {short_id(feature.session_id)} (worktree feature-x, "), digest
    assert "[also touched by you: app.py]" in line and "-> edited app.py" in line, digest
    assert "ERROR" not in agents.sidelight_log


def test_codex_in_a_linked_worktree_and_claude_in_a_subfolder_are_siblings(agents: AgentEnv) -> None:
    """Codex edits ``app.py`` in the linked worktree (``apply_patch``); a Claude Code session started in
    ``repo/sub/`` writes a note there. The Claude Code session in the main checkout hears both on its
    next prompt: the Codex one in the worktree it names, with ``app.py`` flagged; the subfolder one as
    a plain sibling (same worktree, no worktree named)."""
    agents.install_sidelight("claude-code", "codex")
    main, linked = agents.project, agents.root / "wt-feature"
    two_worktrees(main, linked, "VERSION = 1\n")
    agents.mock.set_script(
        [
            [read(str(main / "app.py")), say("main: read it")],
            [edit("app.py", "VERSION = 1", "VERSION = 2"), say("feature: bumped")],
            [write(str(main / "sub" / "notes.txt"), "sub notes\n"), say("sub: noted")],
            [say("main: noted")],
        ]
    )
    cc = agents.claude("main: read the app")
    try:
        agents.project = linked
        feature = agents.codex("feature: bump the version")
        agents.project = main / "sub"
        sub = agents.claude("sub: write the notes")
    finally:
        agents.project = main
    assert cc.session_id and feature.session_id and sub.session_id
    assert (linked / "app.py").read_text() == "VERSION = 2\n", feature.describe()
    assert (main / "app.py").read_text() == "VERSION = 1\n"
    assert (main / "sub" / "notes.txt").read_text() == "sub notes\n"
    agents.claude("main: what happened?", resume=cc.session_id)

    digest = digest_for(agents.mock, "main: what happened?")
    assert digest is not None, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    print(digest)  # the report quotes it
    lines = [line for line in digest.splitlines() if line.startswith("- ")]
    (codex,) = [line for line in lines if short_id(feature.session_id) in line]
    assert codex.startswith(f"- codex {short_id(feature.session_id)} (worktree feature-x, "), digest
    assert "[also touched by you: app.py]" in codex and "app.py" in codex.split("->", 1)[1], digest
    (claude,) = [line for line in lines if short_id(sub.session_id) in line]
    assert claude.startswith(f"- claude {short_id(sub.session_id)} ("), digest
    assert "worktree" not in claude and "notes.txt" in claude, digest
    assert "ERROR" not in agents.sidelight_log
