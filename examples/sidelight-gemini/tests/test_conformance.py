"""The conformance suite of sidelight, run against this plugin (sidelight.testing)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import sidelight_gemini

from sidelight.testing import FormatConformance, ResolverConformance

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE = sorted(sidelight_gemini.SAMPLES.glob("*.jsonl"))[0]


class TestGeminiFormat(FormatConformance):
    format = sidelight_gemini.FORMAT
    # How sidelight's digest would look had it reached a Gemini prompt.
    injected_lines = (
        json.dumps(
            {
                "id": "inj",
                "timestamp": "t",
                "type": "user",
                "content": [{"text": "[Session Activity] (what your other sessions did)"}],
            }
        ),
    )


class TestGeminiResolver(ResolverConformance):
    resolver = next(iter(sidelight_gemini.sidelight_resolvers()))
    plugin = sidelight_gemini
    expected_sessions = 3

    def make_sessions(self, home: Path) -> None:
        tmp = home / ".gemini" / "tmp"
        for project, root in (("app", "/work/app"), ("site", "/work/site")):
            (tmp / project / "chats").mkdir(parents=True)
            (tmp / project / ".project_root").write_text(root)
        for sample in sidelight_gemini.SAMPLES.glob("*.jsonl"):
            (tmp / "app" / "chats" / sample.name).write_bytes(sample.read_bytes())
        # Another project's session, with an id of its own; and a subagent of it.
        text = SAMPLE.read_text().replace("6a6a6a6a-1b2c", "5c5c5c5c-1b2c")
        (tmp / "site" / "chats" / "session-2026-04-22T08-00-5c5c5c5c.jsonl").write_text(text)
        sub = tmp / "site" / "chats" / "5c5c5c5c-1b2c-4d5e-8f90-0123456789ab"
        sub.mkdir()
        (sub / "helper-1.jsonl").write_text(text)
        # A legacy whole-file JSON session is not listed (docs: limitations).
        (home / ".gemini" / "tmp" / "app" / "chats" / "session-2025-01-01T00-00-legacy01.json").write_text(
            "{}"
        )
