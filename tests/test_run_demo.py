"""``make run`` shows the main job (issue 33): the scan of the samples, then, in a throwaway HOME, what a
session is told about its siblings, a stale write refused once, and the status table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import run_demo

ROOT = Path(__file__).parent.parent


def test_make_run_scans_the_samples_then_runs_the_demo() -> None:
    recipe = re.search(r"^run:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert recipe is not None
    lines = recipe[1].splitlines()
    assert "sidelight scan tests/data/" in lines[0]
    assert lines[-1].strip() == "$(PY) -m tests.support.run_demo"


def test_the_demo_shows_the_digest_the_refusal_and_the_status(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_demo.main() == 0
    out = capsys.readouterr().out
    told, refused, status = re.split(r"^== \d\. .*\n", out, flags=re.M)[1:]
    assert told.startswith("[Session Activity]")
    assert "- codex 9d5b1d71" in told
    assert "[also touched by you: notes.txt]" in told
    assert refused.startswith("deny: sidelight stopped this write once: notes.txt was edited by codex")
    assert "the same write, retried: allow" in refused
    assert status.startswith("SESSION ")
    for agent in ("claude-code", "codex", "pi", "gemini", "qwen", "copilot", "opencode", "droid", "kimi"):
        assert re.search(rf"^\S.*\s{agent}\s+ended\s", status, re.M), agent
    assert "11 sessions, read from the transcripts" in status
    assert list(home.iterdir()) == []  # the demo keeps to a HOME of its own, removed after
