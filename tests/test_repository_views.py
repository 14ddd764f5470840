"""`sidelight sessions` and `sidelight status` by repository (issue 31, item 1): the sessions of one git
repository (its main checkout, a linked worktree, a subfolder) under its main checkout's folder, each
saying its worktree (branch) and subfolder when it is not the main checkout's root; a session outside
git under its own folder, as before; ``--json`` adds ``repository``, ``worktree`` and ``subfolder``.
``scope = directory`` groups ``sessions`` by working directory and keeps ``status`` one list, as do
sessions all outside git. Real repositories (``git worktree add``)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from sidelight.config import Settings
from sidelight.plugins import Plugins
from sidelight.watch.status import collect_status, print_json, render_table
from tests.test_dashboard import claude_in, tool_use, worktrees  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

MAIN, LINKED, SUB, PLAIN = "aaaa1111", "bbbb2222", "cccc3333", "dddd4444"


@pytest.fixture
def world(worktrees: dict[str, Any], tmp_path: Path) -> dict[str, Any]:  # noqa: F811
    """The dashboard's repository (sessions in the main checkout, the linked worktree ``feature-x`` and
    the main checkout's ``sub/``), and a session in a folder outside git."""
    plain = tmp_path / "plain"
    plain.mkdir()
    claude_in(
        worktrees["home"], f"{PLAIN}-0000-4000-8000-00000000000d", plain.resolve(), [tool_use("Read", "a", 1)]
    )
    return {**worktrees, "plain": plain.resolve()}


def line_of(lines: list[str], short: str) -> str:
    (line,) = [line for line in lines if line.split() and line.split()[0].startswith(short[:4])]
    return line


def test_status_groups_the_sessions_of_a_repository_under_its_main_checkout(world: dict[str, Any]) -> None:
    report = collect_status(Settings.load(), Plugins(entry_points=False))
    lines = render_table(report).splitlines()
    main, plain = str(world["main"]), str(world["plain"])
    assert lines[0].split()[0] == "SESSION" and lines[0].split()[-1] == "WHERE", lines
    assert sorted(line for line in lines if not line.startswith(" ") and line.startswith("/")) == sorted(
        [main, plain]
    ), lines
    at = lines.index(main)
    group = lines[at + 1 : at + 4]
    assert all(line.startswith("  ") for line in group), lines
    assert sorted(line.split()[0][:4] for line in group) == ["aaaa", "bbbb", "cccc"], lines
    assert line_of(group, LINKED).endswith("worktree feature-x")
    assert line_of(group, SUB).endswith("in sub/")
    assert line_of(group, MAIN).split()[-1] != "feature-x" and "worktree" not in line_of(group, MAIN)
    assert lines[lines.index(plain) + 1].startswith("  dddd")

    # scope = directory: one list, as before (each row still says its worktree).
    directory = replace(Settings.load(), scope="directory")
    by_folder = render_table(collect_status(directory, Plugins(entry_points=False))).splitlines()
    assert not [line for line in by_folder if line.startswith(("/", " "))], by_folder
    assert line_of(by_folder, LINKED).endswith("worktree feature-x")


def test_status_json_adds_the_repository_the_worktree_and_the_subfolder(world: dict[str, Any]) -> None:
    out = io.StringIO()
    print_json(collect_status(Settings.load(), Plugins(entry_points=False)), out)
    rows = {row["key"].split(":", 1)[1][:8]: row for row in map(json.loads, out.getvalue().splitlines())}
    main = str(world["main"])
    assert {k: (r["repository"], r["worktree"], r["subfolder"]) for k, r in rows.items()} == {
        MAIN: (main, None, None),
        LINKED: (main, "feature-x", None),
        SUB: (main, None, "sub"),
        PLAIN: (None, None, None),
    }
    assert rows[LINKED]["group"] == str(world["linked"])  # the old fields as they were


def test_sessions_lists_a_repository_together_with_each_worktree_named(
    world: dict[str, Any], run_cli
) -> None:
    env = {"HOME": str(world["home"]), "SIDELIGHT_STATE_DIR": str(world["home"] / "state")}
    done = run_cli("sessions", env=env)
    assert done.returncode == 0, done.stderr
    blocks = {block.splitlines()[0]: block.splitlines()[1:] for block in done.stdout.strip().split("\n\n")}
    main = str(world["main"])
    assert set(blocks) == {main, str(world["plain"])}, done.stdout
    assert len(blocks[main]) == 3
    assert line_of(blocks[main], LINKED).endswith("[worktree feature-x]"), done.stdout
    assert line_of(blocks[main], SUB).endswith("[in sub/]"), done.stdout
    assert not line_of(blocks[main], MAIN).endswith("]"), done.stdout

    listed = [json.loads(line) for line in run_cli("sessions", "--json", env=env).stdout.splitlines()]
    by_id = {record["id"][:8]: record for record in listed}
    assert (by_id[LINKED]["repository"], by_id[LINKED]["worktree"], by_id[LINKED]["group"]) == (
        main,
        "feature-x",
        str(world["linked"]),
    )
    assert (by_id[PLAIN]["repository"], by_id[PLAIN]["worktree"], by_id[PLAIN]["subfolder"]) == (
        None,
        None,
        None,
    )
