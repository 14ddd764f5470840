"""The state directory's layout (:mod:`sidelight.statelayout`): every name spelled once, and one rule
for the files named after a session.

A session's key is the agent's id with the host in front, and some hosts' ids are paths: a key can be
longer than a file name may be. Every per-session folder names its files by :func:`session_name`
(never more than 200 bytes), and a file an older version wrote under its long name is still found.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from sidelight import statelayout
from sidelight.config import Settings
from sidelight.cursors import CursorStore
from sidelight.engine.reads import cursor_file
from sidelight.features import resume
from sidelight.features.facts import _given_marker
from sidelight.records import Session
from sidelight.statelayout import (
    CURSORS_DIR,
    NAME_BYTES,
    PROMPTS_DIR,
    RECEIVED_DIR,
    safe_name,
    session_name,
    session_names,
    session_path,
)

PACKAGE = Path(statelayout.__file__).parent


def settings_for(home: Path) -> Settings:
    return Settings.load(env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}, home=home)


def session(key: str, home: Path) -> Session:
    return Session(key, "s", home / "t.jsonl", "claude-code", str(home), "claude-code", id=key)


#: A key as long as the path-named sessions of some hosts get: 300 characters.
LONG = "opencode:" + "/home/someone/projects/" * 12 + "x" * 15


def test_a_short_key_keeps_the_name_older_versions_gave_it() -> None:
    key = "claude-code:2f0c1d7e-6b7f-4d0e-9a3c-1b2c3d4e5f60"
    assert session_name(key) == "claude-code_2f0c1d7e-6b7f-4d0e-9a3c-1b2c3d4e5f60"
    assert session_names(key, ".json") == [session_name(key) + ".json"]  # nothing older to look for
    assert session_name("pi:a b/c.d") == "pi_a_b_c.d"
    assert session_name("x" * NAME_BYTES) == "x" * NAME_BYTES


def test_a_long_key_gets_a_name_a_file_system_takes_and_keeps_apart_from_its_neighbours() -> None:
    assert len(LONG) > 255
    name = session_name(LONG)
    assert len(name.encode()) <= NAME_BYTES
    kept, _, mark = name.rpartition("~")
    assert safe_name(LONG).endswith(kept) and len(mark) == 16  # its end, and a hash of the whole key
    # two keys that end alike (what a cut to the last characters made one name)
    other = "pi:" + LONG[len("opencode:") :]
    assert safe_name(LONG)[-200:] == safe_name(other)[-200:]
    assert session_name(LONG) != session_name(other)
    # letters outside ASCII take more than a byte each: the limit is in bytes
    wide = "gemini:" + "é" * 180
    assert len(session_name(wide).encode()) <= NAME_BYTES
    assert session_name(wide) == session_name(wide)  # stable
    # no name that means a folder
    assert session_name(".") == "_"
    assert session_name("..") == "__"
    assert session_name("") == "_"


def test_every_per_session_file_of_a_long_key_can_be_written(tmp_path: Path) -> None:
    # Before, the cursor file, the prompt marker, the pending handoff and resume
    # of a key this long were named with all of it: the file system refused the name (ENAMETOOLONG),
    # so such a session never kept its cursors.
    settings = settings_for(tmp_path)
    current = session(LONG, tmp_path)
    store = CursorStore(cursor_file(current, settings))
    store.update(current.key, {"pi:sibling": {"offset": 10, "size": 10}})
    assert store.read(current.key) == {"pi:sibling": {"offset": 10, "size": 10}}
    assert resume.mark_prompt(current, settings, now=1000.0) is None
    assert resume.last_prompt(current, settings) == 1000.0
    paths = [
        cursor_file(current, settings),
        _given_marker(settings, LONG),
        session_path(settings.state_dir, PROMPTS_DIR, LONG),
    ]
    for path in paths:
        assert len(path.name.encode()) <= NAME_BYTES + len(".json"), path


@pytest.mark.parametrize(
    ("folder", "suffix", "old"),
    [
        # the cursor files, prompt markers, pending handoffs and resumes, covered notes: the whole name
        (CURSORS_DIR, ".json", lambda safe: safe + ".json"),
        (PROMPTS_DIR, "", lambda safe: safe),
        # the received hashes, the given facts and the dashboard's recaps: its last 200 characters
        (RECEIVED_DIR, "", lambda safe: safe[-200:]),
    ],
)
def test_a_file_an_older_version_named_for_a_long_key_is_still_read(
    tmp_path: Path, folder: str, suffix: str, old: object
) -> None:
    key = "codex:" + "k" * 230  # long enough to be cut now, short enough for the old whole name
    safe = safe_name(key)
    assert callable(old)
    written = tmp_path / folder / old(safe)
    written.parent.mkdir(parents=True)
    written.write_text("kept", encoding="utf-8")
    path = session_path(tmp_path, folder, key, suffix)
    assert path.name == session_name(key) + suffix != written.name
    assert path.read_text(encoding="utf-8") == "kept"  # moved to its new name, once
    assert not written.exists()
    assert session_path(tmp_path, folder, key, suffix) == path


def test_a_new_file_wins_over_an_old_one(tmp_path: Path) -> None:
    key = "codex:" + "k" * 230
    (tmp_path / CURSORS_DIR).mkdir()
    old = tmp_path / CURSORS_DIR / (safe_name(key) + ".json")
    new = tmp_path / CURSORS_DIR / (session_name(key) + ".json")
    old.write_text("old", encoding="utf-8")
    new.write_text("new", encoding="utf-8")
    assert session_path(tmp_path, CURSORS_DIR, key, ".json").read_text(encoding="utf-8") == "new"
    assert old.exists()


def test_the_cursor_file_of_a_long_key_an_older_version_wrote_is_read(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    key = "claude-code:" + "a" * 220
    current = session(key, tmp_path)
    old = settings.state_dir / CURSORS_DIR / f"{safe_name(key)}.json"
    old.parent.mkdir(parents=True)
    CursorStore(old).update(key, {"pi:sibling": {"offset": 5, "size": 5}})
    assert CursorStore(cursor_file(current, settings)).read(key) == {"pi:sibling": {"offset": 5, "size": 5}}


# --- every name once -------------------------------------------------------------------------------------


def _layout_names() -> tuple[set[str], set[str]]:
    """The layout's file names (with a dot) and folder names (each part of its paths)."""
    files: set[str] = set()
    folders: set[str] = set()
    for name, value in vars(statelayout).items():
        if not name.isupper() or not isinstance(value, str) or name == "TYPE_CHECKING":
            continue
        *parents, last = Path(value).parts
        folders.update(parents)
        (files if "." in last else folders).add(last)
    return files, folders


#: Literals that are the same word as a name of the layout but another thing, by module.
ALLOWED = {
    # Copilot's own transcript file in its session folder
    ("agents/copilot/__init__.py", "events.jsonl"),
    # Codex's own config file; opencode's own folders (its plugins, its database)
    ("agents/codex/install.py", "config.toml"),
    ("agents/kimi/install.py", "config.toml"),
    ("agents/opencode/install.py", "opencode"),
    # opencode's database folder, in the agents' index (which also spells the export's folder, as the
    # warm client does its two names below: it is read before anything else, and statelayout takes it)
    ("agents/__init__.py", "opencode"),
    # the made-up path of a remote session (``/fleet/HOST/KEY``), no file
    ("features/fleet/streams.py", "fleet"),
    # the two names the warm client needs, spelled where it imports nothing of sidelight's (statelayout
    # takes them from there)
    ("warm.py", "config.toml"),
    ("warm.py", "hook.sock"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _spelled(path: Path, root: Path, files: set[str], folders: set[str]) -> list[str]:
    """The layout's names ``path`` spells itself: a file name in any string, a folder name where a path
    is made (``x / "name"``, ``os.path.join(..., "name")``, ``Path(..., "name")``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    joined: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            joined.update(id(side) for side in (node.left, node.right))
        elif isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if func in {"os.path.join", "Path", "join"}:
                joined.update(id(arg) for arg in node.args)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
            continue
        text = node.value
        if text in files or text.startswith("entry-points-") or (id(node) in joined and text in folders):
            found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {text!r}")
    return found


def test_every_name_of_the_state_directory_is_spelled_only_in_the_layout() -> None:
    files, folders = _layout_names()
    assert {"sidelight.log", "activity-events.jsonl", "hook.sock", "status.json"} <= files
    assert {"cursors", "received", "handoffs", "delivered", "pending", "watch"} <= folders
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "statelayout.py":
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        spelled = _spelled(path, PACKAGE, files, folders)
        found += [line for line in spelled if (relative, line.split("'")[-2]) not in ALLOWED]
    assert found == []


def test_the_check_finds_a_name_spelled_elsewhere(tmp_path: Path) -> None:
    files, folders = _layout_names()
    module = tmp_path / "probe.py"
    module.write_text(
        '"""sidelight.log in a docstring is prose."""\n'
        'LOG = "sidelight.log"\n'
        'def f(state):\n    return state / "cursors", {"cursors": 1}\n',
        encoding="utf-8",
    )
    found = _spelled(module, tmp_path, files, folders)
    assert [line.split(": ", 1)[1] for line in found] == ["'sidelight.log'", "'cursors'"]


# --- the session of a host event, resolved once ------------------------------------------------------


def test_a_host_event_resolves_its_session_once_and_hands_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.engine import discovery
    from sidelight.features import hook
    from sidelight.features.hook import handle_hook
    from sidelight.features.recap import handoff
    from sidelight.plugins import Plugins
    from tests.test_resume import claude_event, claude_session

    asked: list[str] = []
    resolve = discovery.current_session

    def counted(event: Any, settings: Settings, plugins: Plugins) -> Session | None:
        asked.append(event.event)
        return resolve(event, settings, plugins)

    for module in (discovery, hook, handoff):
        monkeypatch.setattr(module, "current_session", counted)
    path, session_id, cwd = claude_session(tmp_path)
    settings, plugins = settings_for(tmp_path), Plugins(entry_points=False)
    for name in ("SessionStart", "UserPromptSubmit"):
        handle_hook(
            "claude-code",
            claude_event(path, session_id, cwd, name, prompt="hi"),
            settings=settings,
            plugins=plugins,
        )
    # the digest, the long-term facts, the handoff and the welcome back all had it from the hook
    assert asked == ["SessionStart", "UserPromptSubmit"]
    assert not hasattr(discovery, "_last_current")  # no memo of the last event's session
