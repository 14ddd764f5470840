"""Fields are read by their JSON meaning (issue 30, item 6): a transcript rewritten with the whitespace
and key order JSON allows (``json.dumps`` writes a space after every colon and comma) is detected as
the same format, counts the same, groups with the same siblings and has the same title as the
compact original the agent wrote.

Every built-in format's real sample in ``tests/data/`` is rewritten line by line. opencode is left
out: its sessions are a database, and the export sidelight reads is written by sidelight itself.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from sidelight.agents import claude_code, codex, qwen
from sidelight.agents.pi import paths as pi_paths
from sidelight.config import Settings
from sidelight.engine import paths
from sidelight.engine.scanning import detect_format, scan
from sidelight.plugins import Plugins

DATA = Path(__file__).parent / "data"

#: Each format's sample, its session id (as the place its agent keeps it names it), and the working
#: directory the sample was written in.
SAMPLES = {
    "claude-code": ("four-tools-resume.jsonl", "efe363b5-b821-4830-99c4-b4c7fff4e274"),
    "pi": ("four-tools-continue.jsonl", "01a1fffb-62e4-7073-aed8-e9b7ed9e653b"),
    "codex": ("four-tools-resume.jsonl", "01a1fffb-7517-7871-9b38-b9b39d5b1d71"),
    "qwen": ("four-tools-resume.jsonl", "46fd219f-6bf7-48f8-8df1-c2bbca99394b"),
    "copilot": ("four-tools-resume.jsonl", "8ed2d4e8-0d21-4f05-bfa3-98490ef6f892"),
    "gemini": ("four-tools-resume.jsonl", "6803eb87"),
}
FORMATS = tuple(SAMPLES)

#: The title lines each agent appends when a session is named (none for the agents without titles).
TITLES: dict[str, list[dict[str, Any]]] = {
    "claude-code": [
        {"type": "ai-title", "aiTitle": "Notes file edits", "sessionId": SAMPLES["claude-code"][1]},
        {
            "type": "custom-title",
            "customTitle": "notes: beta to gamma",
            "sessionId": SAMPLES["claude-code"][1],
        },
    ],
    "pi": [{"type": "session_info", "id": "f00d", "parentId": None, "name": "notes in pi"}],
    "gemini": [
        {"$set": {"summary": "Notes, beta to gamma"}},
        {"$set": {"lastUpdated": "2026-11-25T06:00:00.000Z"}},
    ],
}
EXPECTED_TITLES = {
    "claude-code": "notes: beta to gamma",
    "pi": "notes in pi",
    "gemini": "Notes, beta to gamma",
}


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def spaced(obj: Any) -> str:
    """As ``json.dumps`` writes it by default: a space after every colon and comma, non-ASCII escaped."""
    return json.dumps(obj)


def reordered(obj: Any) -> str:
    """Spaced, with every line's keys in the reverse order."""
    return json.dumps(dict(reversed(list(obj.items()))) if isinstance(obj, dict) else obj)


VARIANTS = {"spaced": spaced, "reordered": reordered}


def sample_text(fmt: str, project: str | None = None) -> str:
    """The format's sample with its title lines appended (compact, as the agents write them), its
    working directory made ``project``."""
    text = (DATA / fmt / SAMPLES[fmt][0]).read_text(encoding="utf-8")
    text += "".join(compact(line) + "\n" for line in TITLES.get(fmt, ()))
    if project is not None:
        text = text.replace(f"/tmp/sidelight-samples/{fmt}/project", project)
    return text


def rewrite(text: str, write: Any) -> str:
    """Every line of ``text`` parsed and written again by ``write``."""
    return "".join(write(json.loads(line)) + "\n" for line in text.splitlines() if line.strip())


def meaning(path: Path) -> dict[str, Any]:
    """What a scan of ``path`` found, without what depends on its bytes (sizes, offsets, its path)."""
    found = scan(path).as_dict()
    for field in ("path", "file_size", "offset", "cursor", "bytes_consumed", "pending_bytes"):
        found.pop(field)
    return found


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_detection_counts_and_title_are_the_same(tmp_path: Path, fmt: str, variant: str) -> None:
    original = tmp_path / "compact.jsonl"
    original.write_text(sample_text(fmt), encoding="utf-8")
    other = tmp_path / f"{variant}.jsonl"
    other.write_text(rewrite(sample_text(fmt), VARIANTS[variant]), encoding="utf-8")
    assert other.read_bytes() != original.read_bytes()

    assert detect_format(original) == detect_format(other) == fmt
    assert meaning(other) == meaning(original)
    assert meaning(original)["messages"]["user"] > 0  # the scan read the conversation
    spec = Plugins(entry_points=False).format(fmt)
    assert spec is not None
    title = paths.read_title(original, spec.title_lines)
    assert title == EXPECTED_TITLES.get(fmt)
    assert paths.read_title(other, spec.title_lines) == title


def place(home: Path, fmt: str, project: str, text: str) -> Path:
    """``text`` as the transcript of ``fmt``'s sample session, where its agent keeps it under ``home``."""
    sid = SAMPLES[fmt][1]
    where = {
        "claude-code": f".claude/projects/{claude_code.claude_sanitize(project)}/{sid}.jsonl",
        "pi": f".pi/agent/sessions/{pi_paths.pi_encode_cwd(project)}/2026-11-21T21-20-27-365Z_{sid}.jsonl",
        "codex": f".codex/sessions/2026/11/21/rollout-2026-11-21T21-20-32-{sid}.jsonl",
        "qwen": f".qwen/projects/{qwen.project_folder(project)}/chats/{sid}.jsonl",
        "copilot": f".copilot/session-state/{sid}/events.jsonl",
        "gemini": f".gemini/tmp/project/chats/session-2026-11-25T05-49-{sid}.jsonl",
    }[fmt]
    path = home / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if fmt == "gemini":  # Gemini CLI groups its chats by this file, not by their lines
        (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {project: "project"}}))
    return path


def siblings(home: Path, project: str, odd: str | None = None, variant: str = "") -> dict[str, Any]:
    """Every format's session of one project, each as its agent wrote it but ``odd``'s, rewritten as
    ``variant`` says: for each format, its session's group and the formats of its siblings (the
    sessions in its group)."""
    for fmt in FORMATS:
        text = sample_text(fmt, project)
        place(home, fmt, project, rewrite(text, VARIANTS[variant]) if fmt == odd else text)
    settings = Settings.load(env={"HOME": os.fspath(home)}, home=home)
    listed = [
        s
        for r in Plugins(entry_points=False).resolvers().values()
        for s in r.list_sessions(settings)
        if s.format in FORMATS
    ]
    assert sorted(s.format for s in listed) == sorted(FORMATS)
    return {
        s.format: (s.group, {o.format for o in listed if o.group == s.group and o is not s}) for s in listed
    }


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_session_groups_with_the_same_siblings(tmp_path: Path, fmt: str, variant: str) -> None:
    project = tmp_path / "shared project"
    project.mkdir()
    where = os.path.realpath(project)
    expected = siblings(tmp_path / "compact-home", where)
    assert expected == {f: (where, set(FORMATS) - {f}) for f in FORMATS}
    assert siblings(tmp_path / f"{variant}-home", where, fmt, variant) == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_session_ids_read_from_a_head(tmp_path: Path, variant: str) -> None:
    write = VARIANTS[variant]
    # An old flat Claude Code subagent file names its parent session in its lines.
    subagent = DATA / "claude-code" / "subagent" / "subagents" / "agent-a2dfded9a6ae64437.jsonl"
    flat = tmp_path / "agent-a2dfded9a6ae64437.jsonl"
    flat.write_text(rewrite(subagent.read_text(encoding="utf-8"), write), encoding="utf-8")
    assert claude_code.claude_flat_parent(os.fspath(flat)) == "d2f0fe18-9b2c-4094-9aca-781b3ce981be"
    # A Pi session or a Codex rollout whose file name has no uuid: the header's id.
    pi_file = tmp_path / "pi-session.jsonl"
    pi_file.write_text(rewrite(sample_text("pi"), write), encoding="utf-8")
    assert pi_paths.pi_session_uuid(pi_file) == SAMPLES["pi"][1]
    rollout = tmp_path / "rollout-x.jsonl"
    rollout.write_text(rewrite(sample_text("codex"), write), encoding="utf-8")
    assert codex.rollout_id(os.fspath(rollout)) == SAMPLES["codex"][1]


def test_the_byte_scan_reads_keys_not_look_alikes() -> None:
    line = b'{"a": "\\"cwd\\": \\"/no\\"", "cwd"\t:\r "/yes", "type" : "x", "b": ["type", "session_meta"]}'
    assert paths.head_string_field("", "cwd", data=line) == "/yes"
    assert paths.has_field(line, "type", "x")
    assert not paths.has_field(line, "type", "session_meta")
    assert paths.head_string_field("", "cwd", data=b'{"cwd" : 1, "x": {"cwd": "/nested"}}') == "/nested"


@hypothesis.settings(max_examples=3000)
@hypothesis.given(
    st.lists(
        st.sampled_from([b'"', b"\\", b":", b"k", b"v", b" ", b"\t", b'"k"', b'"v"', b'"k": "v"']),
        max_size=14,
    )
)
def test_a_field_is_found_as_the_pattern_finds_it(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert paths.has_field(data, "k", "v") == (re.search(rb'"k"[ \t\n\r]*:[ \t\n\r]*"v"', data) is not None)
