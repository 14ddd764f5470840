"""The built-in resolvers (Claude Code, Pi, Codex, volute) over layouts built in a throwaway HOME.

The transcripts are copies of the real samples in ``tests/data/`` (and ``tests/fixtures/older-shapes``),
with their working directory and ids rewritten to fit each layout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from sidelight.agents import claude_code, codex, pi, volute
from sidelight.agents.pi import paths as pi_paths
from sidelight.config import Settings
from sidelight.engine import paths
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.plugins import Plugins
from sidelight.records import HostEvent, Session

DATA = Path(__file__).parent / "data"
OLDER = Path(__file__).parent / "fixtures" / "older-shapes"

CC_SAMPLE = DATA / "claude-code" / "four-tools-resume.jsonl"
CC_SAMPLE_ID = "efe363b5-b821-4830-99c4-b4c7fff4e274"
CC_SAMPLE_CWD = "/tmp/sidelight-samples/claude-code/project"
CC_SUB = DATA / "claude-code" / "subagent.jsonl"
CC_SUB_ID = "d2f0fe18-9b2c-4094-9aca-781b3ce981be"
CC_SUB_CWD = "/tmp/sidelight-samples/claude-code-subagent/project"
CC_SUB_AGENT = DATA / "claude-code" / "subagent" / "subagents" / "agent-a2dfded9a6ae64437.jsonl"
PI_SAMPLE = DATA / "pi" / "four-tools-continue.jsonl"
PI_SAMPLE_ID = "01a1fffb-62e4-7073-aed8-e9b7ed9e653b"
PI_SAMPLE_CWD = "/tmp/sidelight-samples/pi/project"
CODEX_SAMPLE = DATA / "codex" / "four-tools-resume.jsonl"
CODEX_SAMPLE_ID = "01a1fffb-7517-7871-9b38-b9b39d5b1d71"
CODEX_SAMPLE_CWD = "/tmp/sidelight-samples/codex/project"


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    """Each test starts with empty process caches (they are keyed by path, and tmp paths differ)."""
    paths._titles.clear()
    paths.real.cache_clear()
    volute._find_volute_mind.cache_clear()
    claude_code._project_cwds.clear()
    claude_code._claude_flat_parents.clear()
    pi._folder_cwds.clear()
    pi_paths._header_ids.clear()
    codex._meta.clear()
    volute._seen_minds.clear()


def copy_sample(
    src: Path, dst: Path, replacements: dict[str, str], append: list[dict[str, object]] | None = None
) -> Path:
    text = src.read_text(encoding="utf-8")
    for old, new in replacements.items():
        text = text.replace(old, new)
    for line in append or ():
        text += json.dumps(line, separators=(",", ":")) + "\n"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(text, encoding="utf-8")
    return dst


def uuid(n: int, version: int = 4) -> str:
    return f"{n:08x}-0000-{version}000-8000-{n:012x}"


def settings_for(home: Path, **env: str) -> Settings:
    return Settings.load(env={"HOME": str(home), **env}, home=home)


def real(p: Path | str) -> str:
    return os.path.realpath(p)


def claude_session(
    projects: Path,
    cwd: Path,
    session_id: str,
    *,
    sample: Path = CC_SAMPLE,
    sample_id: str = CC_SAMPLE_ID,
    sample_cwd: str = CC_SAMPLE_CWD,
    append: list[dict[str, object]] | None = None,
) -> Path:
    project = projects / claude_code.claude_sanitize(real(cwd))
    return copy_sample(
        sample, project / f"{session_id}.jsonl", {sample_cwd: str(cwd), sample_id: session_id}, append
    )


def ev(host: str, event: str = "UserPromptSubmit", **fields: Any) -> HostEvent:
    return HostEvent(host=host, event=event, **fields)  # type: ignore[arg-type]


def by_key(sessions: list[Session]) -> dict[str, Session]:
    keys = [s.key for s in sessions]
    assert len(keys) == len(set(keys)), keys
    return {s.key: s for s in sessions}


# --- plugins --------------------------------------------------------------------------------------


def test_templates_register_formats_and_resolvers_without_conflicts() -> None:
    plugins = Plugins(entry_points=False)
    formats = plugins.formats()
    assert {name: spec.decoder for name, spec in formats.items()} == {
        "claude-code": "claude-code",
        "pi": "pi",
        "codex": "codex",
        "gemini": "gemini",
        "qwen": "qwen",
        "copilot": "copilot",
        "droid": "droid",
        "opencode": "opencode",  # decoded in Python (its sessions are a database, exported as lines)
        "kimi": "kimi",
        "cline": "cline",  # decoded in Python (its sessions are rewritten documents, exported as lines)
    }
    for name, spec in formats.items():
        assert dict(spec.categories) == DEFAULT_CATEGORIES.get(name, dict(spec.categories))
        assert spec.injected_markers == ("[Session Activity]",)
    assert {"claude-code", "pi", "codex", "gemini", "qwen", "copilot", "opencode", "droid", "volute"} <= set(
        plugins.resolvers()
    )
    assert plugins.categories()["claude-code"]["bash"] == "command"


# --- Claude Code ----------------------------------------------------------------------------------


def test_claude_code_sessions_subagents_titles_and_groups(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    alpha = tmp_path / "work" / "alpha"
    beta = tmp_path / "work" / "beta.d"  # a dot: sanitized to '-'
    alpha.mkdir(parents=True)
    beta.mkdir(parents=True)
    s1, s2, s3, s4 = uuid(1), uuid(2), uuid(3), uuid(4)
    main1 = claude_session(projects, alpha, s1)
    main2 = claude_session(projects, alpha, s2, sample=CC_SUB, sample_id=CC_SUB_ID, sample_cwd=CC_SUB_CWD)
    main3 = claude_session(
        projects,
        alpha,
        s3,
        append=[
            {"type": "ai-title", "aiTitle": "An AI title", "sessionId": s3},
            {"type": "custom-title", "customTitle": "Deploy work", "sessionId": s3},
            {"type": "ai-title", "aiTitle": "A newer AI title", "sessionId": s3},
        ],
    )
    main4 = claude_session(
        projects, beta, s4, append=[{"type": "ai-title", "aiTitle": "Beta title", "sessionId": s4}]
    )
    project_alpha = main1.parent
    assert project_alpha.name == claude_code.claude_sanitize(real(alpha))
    assert main4.parent.name.endswith("-work-beta-d")
    # New layout: subagents of s2, a nested workflow run, a sidecar, a journal and tool results.
    sub_a = copy_sample(
        CC_SUB_AGENT, project_alpha / s2 / "subagents" / CC_SUB_AGENT.name, {CC_SUB_CWD: str(alpha)}
    )
    sub_b = copy_sample(
        CC_SUB_AGENT,
        project_alpha / s2 / "subagents" / "workflows" / "run-1" / "agent-bbbb.jsonl",
        {CC_SUB_CWD: str(alpha)},
    )
    (project_alpha / s2 / "subagents" / "agent-x.meta.json").write_text("{}")
    (project_alpha / s2 / "subagents" / "workflows" / "run-1" / "journal.jsonl").write_text("{}\n")
    (project_alpha / s1 / "tool-results").mkdir(parents=True)
    (project_alpha / s1 / "tool-results" / "toolu_1.txt").write_text("big output")
    # Old flat layout: agent files beside the sessions, naming their parent in sessionId.
    flat = copy_sample(
        CC_SUB_AGENT, project_alpha / "agent-flat01.jsonl", {CC_SUB_ID: s1, CC_SUB_CWD: str(alpha)}
    )
    copy_sample(CC_SUB_AGENT, project_alpha / "agent-orphan.jsonl", {CC_SUB_ID: uuid(99)})

    settings = settings_for(home)
    found = by_key(list(claude_code.list_sessions(settings)))
    assert set(found) == {f"claude-code:{s}" for s in (s1, s2, s3, s4)}
    one, two, three, four = (found[f"claude-code:{s}"] for s in (s1, s2, s3, s4))
    assert (one.path, one.id, one.name, one.format, one.resolver) == (
        main1,
        s1,
        s1[:8],
        "claude-code",
        "claude-code",
    )
    assert one.extra_paths == (flat,)
    assert two.path == main2 and set(two.extra_paths) == {sub_a, sub_b}
    assert three.path == main3 and three.name == "Deploy work"  # custom title beats any AI title
    assert four.name == "Beta title"
    assert one.group == two.group == three.group == real(alpha)
    assert four.group == real(beta)
    assert one.cursor_file is None
    assert claude_code.roots(settings) == [projects]


def test_claude_code_older_shapes_layout(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    shutil.copytree(OLDER / "claude-code" / "-work-repo", projects / "-work-repo")
    found = by_key(list(claude_code.list_sessions(settings_for(home))))
    old = found["claude-code:11111111-1111-4111-8111-111111111111"]
    new = found["claude-code:22222222-2222-4222-8222-222222222222"]
    assert len(found) == 2  # agent-a1b2c3d4.jsonl is not a session
    assert old.name == "login work"  # custom-title beats the summary line
    assert new.name == "Config loader audit"
    assert [p.name for p in old.extra_paths] == ["agent-a1b2c3d4.jsonl"]
    assert [p.name for p in new.extra_paths] == ["agent-e5f6a7b8.jsonl"]
    assert old.group == new.group == real("/work/repo")


def test_claude_config_dir_with_two_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = tmp_path / "cc-a", tmp_path / "cc-b"
    proj = tmp_path / "proj"
    proj.mkdir()
    a = claude_session(first / "projects", proj, uuid(1))
    b = claude_session(second / "projects", proj, uuid(2))
    (home / ".claude" / "projects" / "-x").mkdir(parents=True)  # ignored: CLAUDE_CONFIG_DIR wins
    settings = settings_for(home, CLAUDE_CONFIG_DIR=f"{first},{second}")
    found = by_key(list(claude_code.list_sessions(settings)))
    assert {s.path for s in found.values()} == {a, b}
    assert {s.group for s in found.values()} == {real(proj)}
    event = ev("claude-code", session_id=uuid(2), cwd=proj)
    current = claude_code.current(event, settings)
    assert current is not None and current.path == b and current.key == f"claude-code:{uuid(2)}"
    # A new session is placed under the first folder.
    new = claude_code.current(ev("claude-code", session_id=uuid(3), cwd=proj), settings)
    assert new is not None and new.path == a.parent / f"{uuid(3)}.jsonl" and not new.path.exists()


def test_claude_sanitize_rule_and_long_cwd(tmp_path: Path) -> None:
    assert claude_code.claude_sanitize("/Users/foo/.volute") == "-Users-foo--volute"
    assert claude_code.claude_sanitize("/tmp/aq-spike-deny.4kpu") == "-tmp-aq-spike-deny-4kpu"
    assert claude_code.claude_sanitize("/tmp/é x_y") == "-tmp---x-y"
    assert claude_code.claude_sanitize("/a/\U0001f600") == "-a---"  # one UTF-16 surrogate pair, two dashes
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    long_cwd = tmp_path / ("deep-" + "x" * 120) / ("more_" + "y" * 120)
    long_cwd.mkdir(parents=True)
    sanitized = claude_code.claude_sanitize(real(long_cwd))
    assert len(sanitized) > 200 and sanitized[200] == "-"
    # The CLI's hash (Bun.hash) differs from ours: the folder is found by its 200-character prefix.
    cli_dir = projects / (sanitized[:200] + "-cli1hash")
    sid = uuid(7)
    copy_sample(CC_SAMPLE, cli_dir / f"{sid}.jsonl", {CC_SAMPLE_CWD: str(long_cwd), CC_SAMPLE_ID: sid})
    settings = settings_for(home)
    (listed,) = claude_code.list_sessions(settings)
    assert listed.group == real(long_cwd) and listed.path.parent == cli_dir
    assert claude_code.claude_project_dir(projects, long_cwd) == cli_dir
    # A new session of that cwd (no transcript yet) goes into the existing folder.
    event = ev("claude-code", session_id=uuid(8), cwd=long_cwd)
    new = claude_code.current(event, settings)
    assert new is not None and new.path == cli_dir / f"{uuid(8)}.jsonl"
    assert new.group == listed.group
    # Without any folder yet, sidelight names one with its own hash.
    other = tmp_path / ("z" * 230)
    made = claude_code.claude_project_dir(projects, other)
    assert made.name == claude_code.claude_sanitize(real(other))
    assert made.name.startswith(claude_code.claude_sanitize(real(other))[:200] + "-")
    assert paths.js_hash36("") == "0" and paths.js_hash36("a") == "2p"


def test_claude_code_current_for_each_event_shape(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    proj = tmp_path / "proj"
    proj.mkdir()
    sid = uuid(1)
    main = claude_session(projects, proj, sid)
    settings = settings_for(home)

    def event(**fields: object) -> HostEvent:
        return HostEvent(**{"host": "claude-code", "event": "UserPromptSubmit", **fields})  # type: ignore[arg-type]

    by_path = claude_code.current(event(session_id=sid, transcript_path=main, cwd=proj), settings)
    assert by_path is not None and by_path.path == main and by_path.group == real(proj) and by_path.id == sid
    # The transcript path through a symlink resolves to the same session.
    link = tmp_path / "link.jsonl"
    link.symlink_to(main)
    via_link = claude_code.current(event(transcript_path=link), settings)
    assert via_link is not None and via_link.path == main and via_link.key == by_path.key
    by_id = claude_code.current(event(session_id=sid), settings)
    assert by_id is not None and by_id.path == main
    # First prompt of a new session: the file is written lazily, the hook already names it.
    lazy_path = main.parent / f"{uuid(2)}.jsonl"
    lazy = claude_code.current(event(session_id=uuid(2), transcript_path=lazy_path, cwd=proj), settings)
    assert (
        lazy is not None and lazy.path == lazy_path and lazy.group == real(proj) and lazy.name == uuid(2)[:8]
    )
    # A brand-new project: no folder at all yet.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    brand_new = claude_code.current(event(session_id=uuid(3), cwd=fresh), settings)
    assert brand_new is not None
    assert brand_new.path == projects / claude_code.claude_sanitize(real(fresh)) / f"{uuid(3)}.jsonl"
    assert brand_new.group == real(fresh)
    # The agent SDK sends the same fields.
    sdk = claude_code.current(event(host="agent-sdk", session_id=sid, transcript_path=main), settings)
    assert sdk is not None and sdk.path == main
    # Codex and Pi events are never Claude Code sessions, even with a matching id.
    assert claude_code.current(event(host="codex", session_id=sid, transcript_path=main), settings) is None
    assert claude_code.current(event(host="pi", session_id=sid), settings) is None
    assert claude_code.current(event(), settings) is None


# --- Pi -------------------------------------------------------------------------------------------


def pi_session(
    sessions: Path, cwd: Path, session_id: str, append: list[dict[str, object]] | None = None
) -> Path:
    folder = sessions / pi_paths.pi_encode_cwd(real(cwd))
    name = f"2026-11-21T21-20-{int(session_id[:8], 16) % 60:02d}-000Z_{session_id}.jsonl"
    return copy_sample(PI_SAMPLE, folder / name, {PI_SAMPLE_CWD: str(cwd), PI_SAMPLE_ID: session_id}, append)


def test_pi_sessions_for_two_cwds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".pi" / "agent" / "sessions"
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    a = pi_session(sessions, one, uuid(1, 7))
    b = pi_session(
        sessions,
        one,
        uuid(2, 7),
        append=[
            {"type": "session_info", "id": "aa", "parentId": None, "name": "Old name"},
            {"type": "session_info", "id": "bb", "parentId": "aa", "name": "Refactor config"},
        ],
    )
    c = pi_session(sessions, two, uuid(3, 7))
    assert a.parent.name == pi_paths.pi_encode_cwd(real(one)) and a.parent.name.startswith("--")
    settings = settings_for(home)
    found = by_key(list(pi.list_sessions(settings)))
    assert set(found) == {f"pi:{uuid(n, 7)}" for n in (1, 2, 3)}
    sa, sb, sc = (found[f"pi:{uuid(n, 7)}"] for n in (1, 2, 3))
    assert (sa.path, sa.format, sa.resolver, sa.id) == (a, "pi", "pi", uuid(1, 7))
    assert sa.name == uuid(1, 7)[-8:]  # UUIDv7: the random end, not the shared timestamp start
    assert sb.name == "Refactor config"
    assert sa.group == sb.group == real(one) and sc.group == real(two)
    assert sc.path == c
    assert pi.roots(settings) == [sessions]
    # The extension passes the session file.
    event = ev("pi", transcript_path=b, cwd=one)
    assert pi.current(event, settings) == sb
    # Pi writes nothing before the first reply: a new file in a known folder.
    new_path = a.parent / f"2026-11-21T22-00-00-000Z_{uuid(4, 7)}.jsonl"
    new = pi.current(ev("pi", transcript_path=new_path, cwd=one), settings)
    assert (
        new is not None and new.key == f"pi:{uuid(4, 7)}" and new.group == real(one) and new.path == new_path
    )
    # ... and in a folder that does not exist yet.
    three = tmp_path / "three"
    new_folder = sessions / pi_paths.pi_encode_cwd(str(three)) / f"x_{uuid(5, 7)}.jsonl"
    made = pi.current(ev("pi", transcript_path=new_folder, cwd=three), settings)
    assert made is not None and made.group == real(three)
    # By id, and not for other hosts' files.
    assert pi.current(ev("pi", "SessionStart", session_id=uuid(3, 7)), settings) == sc
    other = ev("claude-code", transcript_path=tmp_path / "x.jsonl")
    assert pi.current(other, settings) is None


def test_pi_encode_cwd() -> None:
    assert pi_paths.pi_encode_cwd("/tmp/x/proj") == "--tmp-x-proj--"
    assert pi_paths.pi_encode_cwd("C:\\Users\\me\\p.q") == "--C--Users-me-p.q--"
    assert pi.decode_folder("--tmp-x-proj--") == "/tmp/x/proj"


# --- Codex ----------------------------------------------------------------------------------------


def codex_rollout(sessions: Path, day: str, cwd: Path, session_id: str) -> Path:
    y, m, d = day.split("-")
    name = f"rollout-{day}T10-00-00-{session_id}.jsonl"
    return copy_sample(
        CODEX_SAMPLE,
        sessions / y / m / d / name,
        {CODEX_SAMPLE_CWD: str(cwd), CODEX_SAMPLE_ID: session_id},
    )


def test_codex_rollouts_across_dates(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".codex" / "sessions"
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    a = codex_rollout(sessions, "2026-10-31", one, uuid(1, 7))
    b = codex_rollout(sessions, "2026-11-01", one, uuid(2, 7))
    c = codex_rollout(sessions, "2026-11-21", two, uuid(3, 7))
    (sessions / "2026" / "11" / "21" / "notes.txt").write_text("not a rollout")
    (home / ".codex" / "archived_sessions").mkdir()
    settings = settings_for(home)
    found = by_key(list(codex.list_sessions(settings)))
    assert [s.path for s in found.values()] == [a, b, c]
    sa, sb, sc = found.values()
    assert sa.key == f"codex:{uuid(1, 7)}" and sa.id == uuid(1, 7) and sa.name == uuid(1, 7)[-8:]
    assert sa.group == sb.group == real(one) and sc.group == real(two)
    assert (sa.format, sa.resolver) == ("codex", "codex")
    # Codex's hook input: session_id, transcript_path, cwd.
    event = ev("codex", session_id=uuid(2, 7), transcript_path=b, cwd=one)
    assert codex.current(event, settings) == sb
    assert codex.current(ev("codex", "SessionStart", session_id=uuid(3, 7)), settings) == sc
    lazy_path = sessions / "2026" / "11" / "22" / f"rollout-2026-11-22T09-00-00-{uuid(4, 7)}.jsonl"
    lazy = codex.current(
        ev("codex", session_id=uuid(4, 7), transcript_path=lazy_path, cwd=two),
        settings,
    )
    assert lazy is not None and lazy.key == f"codex:{uuid(4, 7)}" and lazy.group == real(two)
    # A Claude Code event is not a Codex session.
    cc = ev("claude-code", session_id=uuid(9), transcript_path=tmp_path / "t.jsonl")
    assert codex.current(cc, settings) is None


def test_codex_id_from_session_meta_when_the_name_has_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".codex" / "sessions" / "2026" / "11" / "21"
    copy_sample(CODEX_SAMPLE, folder / "rollout-odd.jsonl", {CODEX_SAMPLE_CWD: str(tmp_path)})
    (only,) = codex.list_sessions(settings_for(home))
    assert only.id == CODEX_SAMPLE_ID and only.group == real(tmp_path)


# --- one project, three agents --------------------------------------------------------------------


def test_one_project_groups_sessions_across_formats(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "shared-project"
    project.mkdir()
    cc = claude_session(home / ".claude" / "projects", project, uuid(1))
    pi_path = pi_session(home / ".pi" / "agent" / "sessions", project, uuid(2, 7))
    cx = codex_rollout(home / ".codex" / "sessions", "2026-11-21", project, uuid(3, 7))
    claude_session(home / ".claude" / "projects", tmp_path, uuid(4))  # another project
    settings = settings_for(home)
    plugins = Plugins(entry_points=False)
    everything = [s for r in plugins.resolvers().values() for s in r.list_sessions(settings)]
    groups = {s.path: s.group for s in everything}
    assert groups[cc] == groups[pi_path] == groups[cx] == real(project)
    assert sum(1 for g in groups.values() if g == real(project)) == 3
    me = claude_code.current(
        ev("claude-code", session_id=uuid(1), transcript_path=cc, cwd=project),
        settings,
    )
    assert me is not None
    assert {s.path for s in everything if s.group == me.group and s.key != me.key} == {pi_path, cx}


# --- volute ---------------------------------------------------------------------------------------


def make_sdk_mind(tmp_path: Path, home: Path) -> tuple[Path, dict[str, Path]]:
    mind = tmp_path / "minds" / "alice"
    (mind / "home").mkdir(parents=True)
    sessions = mind / ".volute" / "sessions"
    sessions.mkdir(parents=True)
    projects = home / ".claude" / "projects"
    transcripts: dict[str, Path] = {}
    for n, name in enumerate(("main", "discord", "email", "new-x"), start=1):
        sid = uuid(100 + n)
        (sessions / f"{name}.json").write_text(json.dumps({"sessionId": sid}))
        transcripts[name] = claude_session(projects, mind / "home", sid)
    (sessions / "broken.json").write_text("{not json")
    (sessions / "nofile.json").write_text(json.dumps({"sessionId": uuid(199)}))  # no transcript yet
    # A subagent of main, in the new layout.
    main = transcripts["main"]
    copy_sample(CC_SUB_AGENT, main.parent / main.stem / "subagents" / "agent-m1.jsonl", {})
    return mind, transcripts


def make_pi_mind(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    mind = tmp_path / "minds" / "bob"
    (mind / "home").mkdir(parents=True)
    root = mind / ".volute" / "pi-sessions"
    newest: dict[str, Path] = {}
    for name in ("main", "discord", "new-y"):
        for n in range(3):
            path = pi_session(root.parent / "tmp", mind / "home", uuid(200 + n + 10 * len(name), 7))
            target = root / name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
            stamp = 1_700_000_000 + 100 * n
            os.utime(target, (stamp, stamp))
            newest[name] = target
    (root / "empty").mkdir()
    return mind, newest


def test_volute_minds_named_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alice, transcripts = make_sdk_mind(tmp_path, home)
    bob, newest = make_pi_mind(tmp_path)
    settings = settings_for(
        home, SIDELIGHT_VOLUTE_DIRS=os.pathsep.join([str(alice), str(bob), str(tmp_path)])
    )
    found = by_key(list(volute.list_sessions(settings)))
    ra, rb = real(alice), real(bob)
    assert set(found) == {
        f"volute:{ra}:main",
        f"volute:{ra}:discord",
        f"volute:{ra}:email",
        f"volute:{rb}:main",
        f"volute:{rb}:discord",
    }
    main = found[f"volute:{ra}:main"]
    assert (main.name, main.path, main.format, main.group, main.resolver) == (
        "main",
        transcripts["main"],
        "claude-code",
        ra,
        "volute",
    )
    assert main.id == uuid(101)
    assert main.cursor_file == Path(ra) / ".volute" / "session-cursors.json"
    assert [p.name for p in main.extra_paths] == ["agent-m1.jsonl"]
    assert found[f"volute:{ra}:email"].path == transcripts["email"]
    pi_main = found[f"volute:{rb}:main"]
    assert (pi_main.format, pi_main.path, pi_main.group) == ("pi", newest["main"], rb)
    assert pi_main.cursor_file == Path(rb) / ".volute" / "session-cursors.json"

    # current(): a Claude Code hook in the mind's home, by transcript path or by sessionId.
    cc_event = ev(
        "claude-code",
        session_id=uuid(102),
        transcript_path=transcripts["discord"],
        cwd=alice / "home",
    )
    assert volute.current(cc_event, settings) == found[f"volute:{ra}:discord"]
    by_id = ev("agent-sdk", session_id=uuid(103), cwd=alice / "home")
    assert volute.current(by_id, settings) == found[f"volute:{ra}:email"]
    # The sessionId is known but Claude Code has not written the transcript yet.
    lazy = volute.current(
        ev("agent-sdk", session_id=uuid(199), cwd=alice / "home"),
        settings,
    )
    assert lazy is not None and lazy.name == "nofile" and not lazy.path.exists()
    # new-* sessions are nobody's named session.
    skipped = ev("claude-code", session_id=uuid(104), cwd=alice / "home")
    assert volute.current(skipped, settings) is None
    # A Pi hook: any file of the session's folder, even one not written yet.
    pi_event = ev("pi", transcript_path=newest["discord"], cwd=bob / "home")
    assert volute.current(pi_event, settings) == found[f"volute:{rb}:discord"]
    fresh = bob / ".volute" / "pi-sessions" / "main" / f"2026-12-01T00-00-00-000Z_{uuid(299, 7)}.jsonl"
    got = volute.current(ev("pi", transcript_path=fresh), settings)
    assert got is not None and got.key == f"volute:{rb}:main" and got.path == fresh and got.id == uuid(299, 7)
    # Outside any mind: not volute's.
    outside = ev("claude-code", session_id=uuid(1), cwd=tmp_path)
    assert volute.current(outside, settings) is None


def test_volute_mind_found_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    alice, transcripts = make_sdk_mind(tmp_path, home)
    # No volute_dirs configured: the mind is found because it is in volute's minds folder.
    settings = settings_for(home, VOLUTE_MINDS_DIR=str(tmp_path / "minds"))
    assert list(volute.list_sessions(settings)) == []
    # A hook runs in the session's working directory, <mind>/home.
    monkeypatch.chdir(alice / "home")
    assert {s.name for s in volute.list_sessions(settings)} == {"main", "discord", "email"}
    monkeypatch.chdir(tmp_path)
    assert list(volute.list_sessions(settings)) == []
    # A mind that current() found is listed from then on.
    event = ev("claude-code", transcript_path=transcripts["main"], cwd=alice / "home")
    assert volute.current(event, settings) is not None
    assert {s.name for s in volute.list_sessions(settings)} == {"main", "discord", "email"}


def test_a_volute_config_folder_in_home_is_not_a_mind(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".volute").mkdir(parents=True)  # volute's own config folder
    (home / "project").mkdir()
    # Not even when the folder is vouched for (listed in volute_dirs).
    settings = settings_for(home, SIDELIGHT_VOLUTE_DIRS=str(home))
    assert volute.find_volute_mind(str(home / "project"), settings) is None


def test_volute_transcripts_are_listed_once_under_their_volute_name(tmp_path: Path) -> None:
    from sidelight.engine import discovery

    home = tmp_path / "home"
    alice, transcripts = make_sdk_mind(tmp_path, home)
    settings = settings_for(home, SIDELIGHT_VOLUTE_DIRS=str(alice))
    plugins = Plugins(entry_points=False)
    sessions = discovery.list_sessions(settings, plugins)
    by_path: dict[Path, list[Session]] = {}
    for s in sessions:
        by_path.setdefault(Path(real(s.path)), []).append(s)
    assert all(len(v) == 1 for v in by_path.values())
    assert by_path[Path(real(transcripts["main"]))][0].resolver == "volute"
    assert by_path[Path(real(transcripts["new-x"]))][0].resolver == "claude-code"
    event = ev(
        "claude-code",
        session_id=uuid(101),
        transcript_path=transcripts["main"],
        cwd=alice / "home",
    )
    current = discovery.current_session(event, settings, plugins)
    assert current is not None and current.key == f"volute:{real(alice)}:main"


# --- tolerance ------------------------------------------------------------------------------------


def test_odd_layouts_never_raise(tmp_path: Path) -> None:
    home = tmp_path / "home"
    claude = home / ".claude"
    claude.mkdir(parents=True)
    (claude / "projects").write_text("a file, not a folder")
    settings = settings_for(home)
    plugins = Plugins(entry_points=False)
    assert [s for r in plugins.resolvers().values() for s in r.list_sessions(settings)] == []

    (claude / "projects").unlink()
    project = claude / "projects" / "-odd"
    project.mkdir(parents=True)
    (project / "garbage.jsonl").write_bytes(b"\xff\xfe not json\n{\n")
    (project / "empty.jsonl").write_bytes(b"")
    (project / "dangling.jsonl").symlink_to(tmp_path / "missing.jsonl")
    (project / "folder.jsonl").mkdir()
    (project / "agent-weird.jsonl").write_text('{"sessionId": 5}\n')
    pi_dir = home / ".pi" / "agent" / "sessions"
    (pi_dir / "--x--").mkdir(parents=True)
    (pi_dir / "--x--" / "nouuid.jsonl").write_text("garbage\n")
    (pi_dir / "stray.jsonl").write_text("{}\n")
    codex_dir = home / ".codex" / "sessions"
    (codex_dir / "2026" / "not-a-month").mkdir(parents=True)
    (codex_dir / "2026" / "11" / "21").mkdir(parents=True)
    (codex_dir / "2026" / "11" / "21" / "rollout-bad.jsonl").write_text("\n")
    (codex_dir / "stray.txt").write_text("x")
    mind = tmp_path / "mind"
    (mind / ".volute" / "sessions").mkdir(parents=True)
    (mind / ".volute" / "sessions" / "main.json").write_text('["not", "an", "object"]')
    (mind / ".volute" / "pi-sessions").write_text("a file")
    settings = settings_for(home, SIDELIGHT_VOLUTE_DIRS=f"{mind}{os.pathsep}{tmp_path / 'nowhere'}")
    listed = by_key([s for r in plugins.resolvers().values() for s in r.list_sessions(settings)])
    assert set(listed) == {"claude-code:garbage", "claude-code:empty"}
    assert listed["claude-code:garbage"].group == real(project)  # no cwd anywhere: the folder
    odd_events = [
        HostEvent(host="claude-code", event="UserPromptSubmit"),
        ev("claude-code", session_id="../../etc/passwd"),
        ev("pi", transcript_path=tmp_path / "nope" / "x.jsonl"),
        ev("codex", transcript_path=tmp_path / "dir"),
        ev("whatever", "SessionEnd", cwd=tmp_path / "missing"),
    ]
    for event in odd_events:
        for resolver in plugins.resolvers().values():
            resolver.current(event, settings)  # no exception
    empty = settings_for(tmp_path / "nobody")
    for resolver in plugins.resolvers().values():
        assert list(resolver.list_sessions(empty)) == []
        assert list(resolver.roots(empty)) == []


# --- cost -----------------------------------------------------------------------------------------


def test_listing_cost_for_1000_claude_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reports the listing time over 1,000 sessions in 20 projects (not asserted: machines differ)."""
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    sample = CC_SAMPLE.read_text(encoding="utf-8")
    for p in range(20):
        cwd = tmp_path / "work" / f"project-{p}"
        folder = projects / claude_code.claude_sanitize(real(cwd))
        folder.mkdir(parents=True)
        text = sample.replace(CC_SAMPLE_CWD, str(cwd))
        for s in range(50):
            sid = uuid(p * 1000 + s)
            extra = ""
            if s % 5 == 0:
                extra = json.dumps(
                    {"type": "custom-title", "customTitle": f"t{p}-{s}", "sessionId": sid},
                    separators=(",", ":"),
                )
                extra += "\n"
            (folder / f"{sid}.jsonl").write_text(text.replace(CC_SAMPLE_ID, sid) + extra, encoding="utf-8")
    settings = settings_for(home)
    timings = []
    for label in ("cold", "warm"):
        start = time.perf_counter()
        sessions = list(claude_code.list_sessions(settings))
        timings.append((label, time.perf_counter() - start))
    assert len(sessions) == 1000
    assert sum(1 for s in sessions if s.name.startswith("t")) == 200
    assert len({s.group for s in sessions}) == 20
    with capsys.disabled():
        size = CC_SAMPLE.stat().st_size // 1024
        print(
            f"\nclaude-code list_sessions, 1,000 sessions of ~{size} KB in 20 projects: "
            + ", ".join(f"{label} {seconds * 1000:.1f} ms" for label, seconds in timings)
        )


def test_listed_paths_are_canonical_and_linked_config_folders_count_once(tmp_path: Path) -> None:
    """Roots are resolved once, so listed paths need no resolving per file (the orchestrator compares
    paths), and ``~/.config/claude`` linked to ``~/.claude`` does not list each session twice."""
    home = tmp_path / "home"
    target = tmp_path / "real-claude"
    proj = tmp_path / "proj"
    proj.mkdir()
    main = claude_session(target / "projects", proj, uuid(1))
    home.mkdir()
    (home / ".claude").symlink_to(target)
    (home / ".config").mkdir()
    (home / ".config" / "claude").symlink_to(target)
    (tmp_path / "pi-real" / "sessions").mkdir(parents=True)
    pi_path = pi_session(tmp_path / "pi-real" / "sessions", proj, uuid(2, 7))
    (home / ".pi").mkdir()
    (home / ".pi" / "agent").symlink_to(tmp_path / "pi-real")
    codex_path = codex_rollout(tmp_path / "codex-real" / "sessions", "2026-11-21", proj, uuid(3, 7))
    (home / ".codex").symlink_to(tmp_path / "codex-real")
    settings = settings_for(home)
    plugins = Plugins(entry_points=False)
    listed = [s for r in plugins.resolvers().values() for s in r.list_sessions(settings)]
    assert sorted(str(s.path) for s in listed) == sorted(real(p) for p in (main, pi_path, codex_path))
    assert all(str(s.path) == real(s.path) for s in listed)


def test_child_path_is_the_plain_join(tmp_path: Path) -> None:
    """The listing's fast path makes the same Path as ``folder / name``, text, hash and all."""
    from sidelight.engine.paths import child_path

    (tmp_path / "a b.jsonl").write_text("")
    with os.scandir(tmp_path) as entries:
        entry = next(iter(entries))
    made = child_path(tmp_path, entry.name, entry.path)
    joined = tmp_path / entry.name
    assert made == joined and hash(made) == hash(joined)
    assert str(made) == str(joined) == entry.path
    assert made.parent == tmp_path and made.name == "a b.jsonl" and made.suffix == ".jsonl"
    assert made.stat().st_size == 0 and made.exists()


def test_a_listed_titled_session_is_the_one_the_keywords_make(tmp_path: Path) -> None:
    # TitledSession.listed (the listing's quick constructor) makes the session the keyword call makes:
    # the same fields, the same lazy title, equal and of one hash.
    transcript = tmp_path / "abc.jsonl"
    transcript.write_text('{"type":"custom-title","customTitle":"Fix the parser"}\n')
    fields: dict[str, Any] = {
        "key": "claude-code:abc",
        "path": transcript,
        "format": "claude-code",
        "group": str(tmp_path),
        "resolver": "claude-code",
        "id": "abc",
        "extra_paths": (tmp_path / "agent-1.jsonl",),
        "title_lines": claude_code.TITLE_LINES,
        "fallback": "abc",
    }
    made = paths.TitledSession(**fields)
    listed = paths.TitledSession.listed(**fields)
    assert type(listed) is type(made)
    assert [getattr(listed, slot) for slot in Session.__slots__ if slot != "name"] == [
        getattr(made, slot) for slot in Session.__slots__ if slot != "name"
    ]
    assert (listed._title_lines, listed._fallback) == (made._title_lines, made._fallback)
    assert listed.name == made.name == "Fix the parser"
    assert listed == made and hash(listed) == hash(made) and repr(listed) == repr(made)
    untitled = paths.TitledSession.listed(**{**fields, "path": tmp_path / "gone.jsonl"})
    assert untitled.name == "abc"


# --- the file-name and head rules written without `re` (the hook's process defers it) ---------------

#: A key ``k`` with JSON's whitespace around its colon, and its string value.
_FIELD_PATTERN = re.compile(rb'"' + re.escape(b"k") + rb'"[ \t\n\r]*:[ \t\n\r]*"((?:[^"\\]|\\.)*)"')


@hypothesis.settings(max_examples=3000)
@hypothesis.given(
    st.lists(
        st.sampled_from([b'"', b"\\", b"\n", b"a", b":", b"k", b" ", b"\t", b'"k":"', b'"k"', b'"k" : "']),
        max_size=14,
    )
)
def test_a_heads_string_field_is_found_as_the_pattern_finds_it(parts: list[bytes]) -> None:
    data = b"".join(parts)
    match = _FIELD_PATTERN.search(data)
    assert paths._string_after(data, b'"k"') == (match.group(1) if match else None)


@hypothesis.given(st.text(alphabet=st.sampled_from("aZ09/._-: \\é\U0001f600\u00a0")))
def test_folder_names_are_made_as_the_agents_patterns_make_them(cwd: str) -> None:
    claude = re.sub(r"[^a-zA-Z0-9]", lambda m: "--" if ord(m.group()) > 0xFFFF else "-", cwd)
    made = claude_code.claude_sanitize(cwd)
    assert made == claude if len(claude) <= 200 else made.startswith(claude[:200] + "-")
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    assert pi_paths.pi_encode_cwd(cwd) == "--" + re.sub(r"[/\\:]", "-", stripped) + "--"
