"""The sample transcripts in ``tests/data`` (written by the real agent CLIs), placed in a HOME where each
agent keeps its sessions: what ``tests/test_counts.py`` counts and ``make run`` (``run_demo.py``) shows.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"

#: Each sample, and where its agent keeps it (under HOME).
PLACES = {
    "claude-code/four-tools-resume.jsonl": ".claude/projects/-tmp-sidelight-samples-claude-code-project/"
    "efe363b5-b821-4830-99c4-b4c7fff4e274.jsonl",
    "claude-code/subagent.jsonl": ".claude/projects/-tmp-sidelight-samples-claude-code-subagent-project/"
    "d2f0fe18-9b2c-4094-9aca-781b3ce981be.jsonl",
    "codex/four-tools-resume.jsonl": ".codex/sessions/2026/11/21/"
    "rollout-2026-11-21T21-20-32-01a1fffb-7517-7871-9b38-b9b39d5b1d71.jsonl",
    "pi/four-tools-continue.jsonl": ".pi/agent/sessions/--tmp-sidelight-samples-pi-project--/"
    "2026-11-21T21-20-27-365Z_01a1fffb-62e4-7073-aed8-e9b7ed9e653b.jsonl",
    "qwen/four-tools-resume.jsonl": ".qwen/projects/-tmp-sidelight-samples-qwen-project/chats/"
    "46fd219f-6bf7-48f8-8df1-c2bbca99394b.jsonl",
    "copilot/four-tools-resume.jsonl": ".copilot/session-state/8ed2d4e8-0d21-4f05-bfa3-98490ef6f892/"
    "events.jsonl",
    "gemini/four-tools-resume.jsonl": ".gemini/tmp/project/chats/session-2026-11-25T05-49-6803eb87.jsonl",
    "droid/four-tools-resume.jsonl": ".factory/sessions/-tmp-sidelight-samples-droid-project/"
    "e9399b42-0e12-466c-9529-4d3b84cf3d5b.jsonl",
    "kimi/four-tools-resume.jsonl": ".kimi/sessions/882933f0a474eab5ab255a33cae246b3/"
    "6cb094a2-8125-43f6-9cd5-aa6ae9ee3050/wire.jsonl",
}
SUBAGENTS = ".claude/projects/-tmp-sidelight-samples-claude-code-subagent-project/"
SUBAGENTS += "d2f0fe18-9b2c-4094-9aca-781b3ce981be/subagents"


def place_samples(home: Path) -> None:
    """Every agent's sample where that agent writes it; opencode's as its database."""
    for sample, place in PLACES.items():
        target = home / place
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA / sample, target)
    shutil.copytree(DATA / "claude-code" / "subagent" / "subagents", home / SUBAGENTS)
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as connection:
        connection.executescript((DATA / "opencode" / "opencode.sql").read_text())
    connection.close()
