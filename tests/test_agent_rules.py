"""An agent's own rules reach the engine through the records it registers, for a plugin as for a
built-in: its title lines, its resumed files and subagents (``FormatSpec``), its earlier transcripts and
where its sessions read a handoff (``ResolverSpec``). No feature module names the agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from sidelight import plugins as plugins_module
from sidelight.config import Settings
from sidelight.engine import paths
from sidelight.features.recap.collapse import TranscriptLog
from sidelight.features.recap.handoff import handoff_path
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import FormatSpec, ResolverSpec, Session, Subagent
from sidelight.statelayout import EXPORT_INDEX_FILE, EXPORTS_DIR, export_dir

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: A plugin agent's title line: ``{"kind": "title", "text": …}``.
TITLES = (("title", "kind", ("text",)),)


def _session(path: Path, extra: tuple[Path, ...] = (), format: str = "kiwi") -> Session:
    return Session(
        key=f"kiwi:{path.stem}",
        name=path.stem,
        path=path,
        format=format,
        group=str(path.parent),
        resolver="kiwi",
        extra_paths=extra,
    )


class Kiwi:
    """A third-party agent: its format and resolver, with the agent's own rules as fields."""

    def __init__(self, workspace: Path | None = None, earlier: tuple[Path, ...] = ()) -> None:
        self.workspace = workspace
        self.earlier = earlier

    @hookimpl
    def sidelight_formats(self) -> Iterator[FormatSpec]:
        yield FormatSpec(name="kiwi", decoder="claude-code", title_lines=TITLES, resumes_beside=True)

    @hookimpl
    def sidelight_resolvers(self) -> Iterator[ResolverSpec]:
        yield ResolverSpec(
            name="kiwi",
            list_sessions=lambda settings: (),
            current=lambda event, settings: None,
            history_paths=lambda session: self.earlier,
            handoff_in_workspace=lambda workspace, settings: workspace == self.workspace,
        )


def _plugins(plugin: object) -> Plugins:
    plugins = Plugins(entry_points=False)
    plugins.register(plugin, name="kiwi")
    return plugins


def test_a_plugin_formats_title_lines_name_its_sessions(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(
        '{"kind": "title", "text": "Old name"}\n{"kind": "message"}\n'
        '{"kind":"title","text":"Fix the parser"}\n'
    )
    assert paths.read_title(transcript, TITLES) == "Fix the parser"  # the newest, whatever the spacing
    titled = paths.TitledSession(
        key="kiwi:s",
        path=transcript,
        format="kiwi",
        group=str(tmp_path),
        resolver="kiwi",
        title_lines=TITLES,
        fallback="s",
    )
    assert titled.name == "Fix the parser"
    assert paths.read_title(transcript, ()) is None  # a format without title lines has none


def test_a_plugin_formats_resumed_files_are_its_own_not_subagents(tmp_path: Path) -> None:
    first, later = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    child = tmp_path / "a" / "child.jsonl"
    session = _session(first, (later, child))
    assert paths.resumed_paths(session, _plugins(Kiwi())) == (later,)
    # A format that does not resume beside its first file: every extra file is a subagent's.
    assert paths.resumed_paths(_session(first, (later, child), format="claude-code"), _plugins(Kiwi())) == ()


def test_a_plugin_resolver_keeps_the_handoff_in_its_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = (tmp_path / "mind").resolve()
    workspace.mkdir()
    other = (tmp_path / "project").resolve()
    other.mkdir()
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(plugins_module, "_plugins", _plugins(Kiwi(workspace)))
    settings = Settings.load()
    assert handoff_path(workspace, settings) == workspace / "_handoff.md"
    assert handoff_path(other, settings).is_relative_to(tmp_path / "state")


def test_a_plugin_resolvers_earlier_transcripts_are_in_its_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.features.history import _transcripts

    # (its own state directory: the history's key index would hold another run's paths for the key)
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))

    current, earlier = tmp_path / "now.jsonl", tmp_path / "before.jsonl"
    for path in (current, earlier):
        path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    plugins = _plugins(Kiwi(earlier=(earlier,)))
    found = _transcripts([_session(current)], [], Settings.load(), plugins)
    assert sorted(str(t.path) for t in found) == sorted([str(current), str(earlier)])


class Subagents:
    """A format whose files say whose subagent they are, and whose tool output has a preamble."""

    @hookimpl
    def sidelight_formats(self) -> Iterator[FormatSpec]:
        yield FormatSpec(
            name="claude-code",
            decoder="claude-code",
            subagent=lambda path: Subagent("reviewer", "Review " + path.stem),
            tool_output=lambda text: text.upper(),
        )


def test_a_formats_subagent_and_tool_output_rules_reach_the_recap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugins = Plugins(builtins=(), entry_points=False)
    plugins.register(Subagents(), name="subagents")
    monkeypatch.setattr(plugins_module, "_plugins", plugins)
    transcript = tmp_path / "task.jsonl"
    transcript.write_text(
        '{"type":"user","message":{"role":"user","content":"list"},"cwd":"/w","sessionId":"s"}\n'
        '{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1",'
        '"name":"Bash","input":{"command":"ls"}}]}}\n'
        '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",'
        '"content":"notes.txt"}]}}\n'
    )
    log = TranscriptLog(transcript, "claude-code")
    assert log.subagent == Subagent(agent_type="reviewer", description="Review task")
    assert "NOTES.TXT" in "\n".join(line.render() for line in log)


def test_an_agents_export_moves_from_its_old_folder_once(tmp_path: Path) -> None:
    old = tmp_path / "kiwi"
    old.mkdir()
    (old / EXPORT_INDEX_FILE).write_text("{}")
    (old / "s.jsonl").write_text("{}\n")
    folder = export_dir(tmp_path, "kiwi")
    assert folder == str(tmp_path / EXPORTS_DIR / "kiwi")
    assert (tmp_path / EXPORTS_DIR / "kiwi" / "s.jsonl").is_file() and not old.exists()
    assert export_dir(tmp_path, "kiwi") == folder  # from then on, where it is
    # A folder named like an agent that holds no export is left alone.
    (tmp_path / "plain").mkdir()
    assert export_dir(tmp_path, "plain") == str(tmp_path / EXPORTS_DIR / "plain")
    assert (tmp_path / "plain").is_dir()
