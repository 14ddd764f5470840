"""The conformance suite of sidelight, run against this plugin (sidelight.testing)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

import sidelight_kiro

from sidelight.testing import FormatConformance, ResolverConformance

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE = sorted(sidelight_kiro.SAMPLES.glob("*.jsonl"))[0]


class TestKiroFormat(FormatConformance):
    format = sidelight_kiro.FORMAT
    # How sidelight's digest would look had it reached a Kiro prompt.
    injected_lines = (
        json.dumps(
            {
                "version": "v1",
                "kind": "Prompt",
                "data": {
                    "message_id": "inj",
                    "content": [
                        {"kind": "text", "data": "[Session Activity] (what your other sessions did)"}
                    ],
                },
            }
        ),
    )


class TestKiroResolver(ResolverConformance):
    resolver = next(iter(sidelight_kiro.sidelight_resolvers()))
    # Annotated: mypy reads a module assigned in a class body as an instance variable.
    plugin: ClassVar[object] = sidelight_kiro
    expected_sessions = 3

    def make_sessions(self, home: Path) -> None:
        cli = home / ".kiro" / "sessions" / "cli"
        cli.mkdir(parents=True)
        for sample in sidelight_kiro.SAMPLES.glob("*.json*"):
            (cli / sample.name).write_bytes(sample.read_bytes())
        # Another project's session, with an id of its own (its sidecar names another folder).
        other = "5c5c5c5c-1b2c-4d5e-8f90-0123456789ab"
        (cli / f"{other}.jsonl").write_bytes(SAMPLE.read_bytes())
        (cli / f"{other}.json").write_text(json.dumps({"session_id": other, "cwd": "/work/site"}))
        # The lock a running Kiro CLI holds, and a sidecar without a transcript: neither is a session.
        (cli / f"{other}.lock").write_text("{}")
        (cli / "9d9d9d9d-0000-4000-8000-000000000000.json").write_text("{}")
