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

import errno
import json
import logging
import os
import random
import subprocess
from _thread import get_ident
from typing import TYPE_CHECKING

import pytest

from sidelight import install as installer
from sidelight.agents.gemini.install import GEMINI_EVENTS
from sidelight.agents.qwen.install import QWEN_EVENTS
from sidelight.config import Settings
from sidelight.engine.discovery import list_sessions
from sidelight.features.recap import handoff
from sidelight.install.jsonc import edit_jsonc, loads_jsonc
from sidelight.install.service import SERVICE_MARKER
from sidelight.plugins import Plugins
from sidelight.records import SinkEvent
from sidelight.statefile import write_atomic
from sidelight.templates import handoff as handoff_plugin
from tests.conftest import cli_command
from tests.support import installers
from tests.test_install import TARGETS
from tests.test_recap_handoff import claude_transcript, context, start

if TYPE_CHECKING:
    from pathlib import Path

PREVIOUS = "11111111-1111-4111-8111-111111111111"
NEXT = "22222222-2222-4222-8222-222222222222"
BASHRC = "export PATH=$HOME/bin:$PATH\n"


@pytest.fixture
def in_project(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Handoffs go into the workspace (``handoff_location = project``)."""
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")


@pytest.fixture
def project(in_project: None, tmp_path: Path) -> Path:
    """A cloned repository whose handoff goes into the work tree."""
    repo = tmp_path / "clone"
    (repo / "proj").mkdir(parents=True)
    git(repo, "init", "-q")
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


def test_a_symlinked_git_folder_is_not_followed(in_project: None, home: Path, tmp_path: Path) -> None:
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
    in_project: None, home: Path, tmp_path: Path, points_to: str
) -> None:
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


def test_a_real_linked_worktree_is_still_excluded(in_project: None, home: Path, tmp_path: Path) -> None:
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


# -- item 4: dotfile links survive install and uninstall ----------------------------------------------

#: For each target, the files install writes (as a dotfiles manager would link them) and what they
#: held before install: test_install's for the settings files, a user's own for the rest.
LINKED: dict[str, dict[str, str]] = {
    **{target: TARGETS[target] for target in ("claude-code", "codex", "gemini", "qwen")},
    "copilot": {".copilot/hooks/sidelight.json": ""},
    "pi": {".pi/agent/extensions/sidelight.ts": "// my own extension\n"},
    "opencode": {".config/opencode/plugin/sidelight.ts": "// my own plugin\n"},
    "skill": {".claude/skills/sessions/SKILL.md": "---\nname: sessions\n---\nmine\n"},
}


def sidelight_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "PI_", "QWEN_"))}
    env.update(HOME=str(home), PATH=str(home / "no-service-managers") + os.pathsep + "/usr/bin:/bin")
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("GEMINI_CLI_HOME", None)
    env.pop("COPILOT_HOME", None)
    return subprocess.run(
        [*cli_command(), *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def link_dotfiles(home: Path, files: dict[str, str]) -> dict[Path, Path]:
    """Each of ``files`` as a link in HOME to a file of ``~/dotfiles`` (stow's way): link -> target."""
    links = {}
    for name, text in files.items():
        target = home / "dotfiles" / name.replace("/", "__")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        link = home / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        links[link] = target
    return links


@pytest.mark.parametrize("target", sorted(LINKED))
def test_install_writes_through_a_dotfile_link_and_uninstall_gives_it_back(home: Path, target: str) -> None:
    links = link_dotfiles(home, LINKED[target])
    installed = sidelight_cli(home, "install", target)
    assert installed.returncode == 0, installed.stderr
    for link, dotfile in links.items():
        assert link.is_symlink() and link.readlink() == dotfile, f"install replaced the link {link}"
    assert any(
        dotfile.read_text(encoding="utf-8") != LINKED[target][str(link.relative_to(home))]
        for link, dotfile in links.items()
    )
    assert sidelight_cli(home, "install", target).returncode == 0  # twice: still the link
    removed = sidelight_cli(home, "uninstall", target)
    assert removed.returncode == 0, removed.stderr
    for link, dotfile in links.items():
        assert link.is_symlink() and link.readlink() == dotfile, f"uninstall replaced the link {link}"
        assert dotfile.read_text(encoding="utf-8") == LINKED[target][str(link.relative_to(home))]
    assert sorted(p.name for p in (home / "dotfiles").iterdir()) == sorted(d.name for d in links.values())


def test_a_dangling_dotfile_link_gets_its_file_and_loses_it_again(home: Path) -> None:
    link = home / ".claude" / "settings.json"
    link.parent.mkdir()
    dotfile = home / "dotfiles" / "claude" / "settings.json"  # not made yet, nor its folders
    link.symlink_to(dotfile)
    assert sidelight_cli(home, "install", "claude-code").returncode == 0
    assert link.is_symlink() and "hook claude-code" in dotfile.read_text(encoding="utf-8")
    done = sidelight_cli(home, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.readlink() == dotfile
    assert not (home / "dotfiles").exists()  # the file and the folders install made for it


def test_a_link_whose_target_cannot_be_written_is_refused_as_it_is(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ((link, dotfile),) = link_dotfiles(home, {".claude/settings.json": "{}\n"}).items()

    def read_only(path: Path, *args: object, **kwargs: object) -> None:
        if path.is_relative_to(home / "dotfiles"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        write_atomic(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("sidelight.install.ledger.write_atomic", read_only)
    with pytest.raises(
        installer.InstallError, match=r"is a link to .*cannot be written.*nothing was changed"
    ):
        installers.install("claude-code", home=home)
    assert link.is_symlink() and dotfile.read_text(encoding="utf-8") == "{}\n"


def test_the_service_file_stays_a_link(home: Path) -> None:
    unit = ".config/systemd/user/sidelight-watch.service"
    old = f"# {SERVICE_MARKER}: an older one\n[Service]\nExecStart=/old/sidelight watch\n"
    ((link, dotfile),) = link_dotfiles(home, {unit: old}).items()
    done = sidelight_cli(home, "install", "service")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.readlink() == dotfile
    assert "ExecStart=/old/sidelight" not in dotfile.read_text(encoding="utf-8")


# -- item 11: JSONC settings --------------------------------------------------------------------------

JSONC_SETTINGS = """// Gemini settings, managed by hand
{
  /* the look */
  "theme": "Dracula", // dark, always
  "security": {
    "auth": {"selectedType": "gemini-api-key",}, // trailing comma: fine for the CLI
  },
  "hooks": {
    // my own tool, before each prompt
    "BeforeAgent": [
      {"hooks": [{"type": "command", "command": "/usr/bin/other-tool", "timeout": 500}]},
    ],
  },
}
"""

COMMENTS = [line.strip() for line in JSONC_SETTINGS.splitlines() if "//" in line or "/*" in line]


def settings_of(home: Path, target: str) -> Path:
    return home / f".{target}" / "settings.json"


@pytest.mark.parametrize("target", ["gemini", "qwen"])
def test_jsonc_settings_are_installed_into_keeping_their_comments(home: Path, target: str) -> None:
    path = settings_of(home, target)
    path.parent.mkdir()
    path.write_text(JSONC_SETTINGS, encoding="utf-8")
    (result,) = installers.install(target, home=home)
    assert result.changed
    text = path.read_text(encoding="utf-8")
    for comment in COMMENTS:
        assert any(comment in line for line in text.splitlines()), comment
    data = loads_jsonc(text)
    assert data["theme"] == "Dracula" and data["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    events = GEMINI_EVENTS if target == "gemini" else QWEN_EVENTS
    assert set(data["hooks"]) >= set(events)
    assert data["hooks"]["BeforeAgent"][0]["hooks"][0]["command"] == "/usr/bin/other-tool"  # kept first
    for event in events:
        mine = [
            h for g in data["hooks"][event] for h in g["hooks"] if h["command"].endswith(f"hook {target}")
        ]
        assert len(mine) == 1 and mine[0]["timeout"] == 10000
    (again,) = installers.install(target, home=home)
    assert not again.changed and path.read_text(encoding="utf-8") == text
    (removed,) = installers.uninstall(target, home=home)
    assert removed.changed and "restored as it was" in removed.message
    assert path.read_text(encoding="utf-8") == JSONC_SETTINGS  # byte for byte


@pytest.mark.parametrize("target", ["gemini", "qwen"])
def test_jsonc_settings_edited_since_install_lose_only_sidelight_s_hooks(home: Path, target: str) -> None:
    path = settings_of(home, target)
    path.parent.mkdir()
    path.write_text(JSONC_SETTINGS, encoding="utf-8")
    installers.install(target, home=home)
    mine = '"theme": "Dracula", // dark, always\n'
    added = mine + '  // added after install\n  "vimMode": true,\n'
    path.write_text(path.read_text(encoding="utf-8").replace(mine, added), encoding="utf-8")
    (removed,) = installers.uninstall(target, home=home)
    assert removed.changed and removed.backup is not None  # edited since: only sidelight's hooks go
    # What was there before install, byte for byte, with what the user added since.
    assert path.read_text(encoding="utf-8") == JSONC_SETTINGS.replace(mine, added)


@pytest.mark.parametrize("target", ["gemini", "qwen"])
def test_jsonc_settings_with_an_older_install_s_hooks_lose_them_at_uninstall(home: Path, target: str) -> None:
    """A commented settings file that holds a hook an older sidelight installed without a record: install
    knows the hook for its own (read as JSONC), so uninstall takes sidelight's hooks out rather than
    restoring the file with the old hook in it."""
    path = settings_of(home, target)
    path.parent.mkdir()
    old = '{"type": "command", "command": "/old/venv/bin/sidelight hook ' + target + '", "timeout": 10000}'
    older = JSONC_SETTINGS.replace(
        '"BeforeAgent": [\n', '"BeforeAgent": [\n      // an older install\n      {"hooks": [' + old + "]},\n"
    )
    assert older != JSONC_SETTINGS
    path.write_text(older, encoding="utf-8")
    (result,) = installers.install(target, home=home)
    assert result.changed
    installers.uninstall(target, home=home)
    left = loads_jsonc(path.read_text(encoding="utf-8"))
    commands = [h["command"] for groups in left["hooks"].values() for g in groups for h in g["hooks"]]
    assert commands == ["/usr/bin/other-tool"], commands


@pytest.mark.parametrize("target", ["gemini", "qwen"])
def test_a_broken_jsonc_file_is_refused_with_one_line(home: Path, target: str) -> None:
    path = settings_of(home, target)
    path.parent.mkdir()
    path.write_text('{"theme": "Dracula" /* never closed\n}\n', encoding="utf-8")
    done = sidelight_cli(home, "install", target)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Unterminated comment: line 1" in lines[0] and "comments" in lines[0]
    assert path.read_text(encoding="utf-8") == '{"theme": "Dracula" /* never closed\n}\n'


def test_claude_code_settings_stay_strict_json(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"theme": "dark", // no\n}\n', encoding="utf-8")
    with pytest.raises(installer.InstallError, match="not valid JSON"):
        installers.install("claude-code", home=home)


# -- JSONC (loads_jsonc, edit_jsonc) ------------------------------------------------------------------


def test_jsonc_reads_comments_and_trailing_commas_and_nothing_else() -> None:
    text = '{"a": "// not a comment", "b": "/* nor this */", "c": "say \\"hi\\" \\\\", /* x */ "d": [1,],}'
    expected = {"a": "// not a comment", "b": "/* nor this */", "c": 'say "hi" \\', "d": [1]}
    assert loads_jsonc(text) == expected
    assert loads_jsonc('{"a": 1, "a": 2}') == {"a": 2}  # as JSON.parse
    for bad, why in [
        ("[,]", "Expecting value"),
        ('{"a" 1}', "Expecting ':'"),
        ('{"a": "b}', "Unterminated string"),
        ("[NaN]", "Expecting value"),
        ("{'a': 1}", "Expecting property name"),
        ("[1] 2", "Extra data"),
        ("[1 /* x", "Unterminated comment"),
        ("", "Expecting value"),
        ("[" * 1000 + "]" * 1000, "Nested deeper"),
    ]:
        with pytest.raises(ValueError, match=why):
            loads_jsonc(bad)


def _random_value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice([1, "s", True, None, 2.5, "a//b", "/*x*/"])
    if roll < 0.7:
        return {f"k{i}": _random_value(rng, depth + 1) for i in range(rng.randint(0, 4))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _render(value: object, rng: random.Random, indent: str = "") -> str:
    """``value`` as JSONC laid out by chance: comments, trailing commas, one line or many."""
    if not isinstance(value, dict | list):
        return json.dumps(value)
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    many = rng.random() < 0.7
    parts = []
    for key, item in items:
        before = ("// note\n" + indent + "  " if many else "/* n */ ") if rng.random() < 0.3 else ""
        part = (json.dumps(key) + ": " if key is not None else "") + _render(item, rng, indent + "  ")
        parts.append(before + part + (" /* after */" if rng.random() < 0.2 else ""))
    trailing = "," if parts and rng.random() < 0.4 else ""
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    if not many:
        return opening + ", ".join(parts) + trailing + closing
    if not parts:
        return opening + "\n" + indent + closing
    body = (",\n" + indent + "  ").join(parts)
    return opening + "\n" + indent + "  " + body + trailing + "\n" + indent + closing


def _changed(value: object, rng: random.Random) -> object:
    """``value`` with members and elements taken out, added and replaced by chance."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            roll = rng.random()
            if roll < 0.15:
                continue
            out[key] = _random_value(rng) if roll < 0.25 else _changed(item, rng)
        if rng.random() < 0.2:
            out[f"new{rng.randint(0, 99)}"] = _random_value(rng)
        return out
    if isinstance(value, list):
        items = [_changed(item, rng) for item in value]
        if items and rng.random() < 0.3:
            del items[rng.randrange(len(items))]
        elif rng.random() < 0.3:
            items.append(_random_value(rng))
        return items
    return value


def test_jsonc_edits_hold_the_new_value_and_keep_what_did_not_change() -> None:
    for seed in range(400):
        rng = random.Random(seed)
        value = {f"t{i}": _random_value(rng) for i in range(rng.randint(0, 4))}
        text = "// header\n" + _render(value, rng) + "\n// footer\n"
        assert loads_jsonc(text) == value, text
        new = _changed(value, rng)
        out = edit_jsonc(text, new)
        assert loads_jsonc(out) == new, (seed, text, out)
        assert out.startswith("// header\n") and out.endswith("\n// footer\n")
        assert edit_jsonc(text, value) == text  # nothing to change: not a byte changed
