"""A throwaway Claude Code world for running ``sidelight hook claude-code`` as the host runs it.

Used by the hardening tests (crash safety, concurrency, faults, hostile content): sessions of one
project under ``HOME/.claude/projects/<sanitized cwd>/<id>.jsonl``, a state directory inside ``HOME``,
and the hook run as a subprocess with the host's JSON on stdin and nothing of the caller's environment
that could point it elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidelight.agents.claude_code import claude_project_dir
from tests.conftest import cli_command

STAMP = "2027-01-15T07:57:00.000Z"


def session_id(n: int) -> str:
    return f"{n:08d}-0000-4000-8000-000000000000"


@dataclass
class HookWorld:
    """``sessions`` Claude Code sessions of one project in ``root``; session ``n`` is ``session_id(n)``."""

    root: Path
    sessions: int = 3

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.project = self.root / "proj"
        self.state = self.home / "state"
        self.project.mkdir(parents=True, exist_ok=True)
        self.folder = claude_project_dir(self.home / ".claude" / "projects", self.project)
        self.folder.mkdir(parents=True, exist_ok=True)
        for n in range(self.sessions):
            self.prompt(n, f"first prompt of session {n}")

    def transcript(self, n: int) -> Path:
        return self.folder / f"{session_id(n)}.jsonl"

    def line(self, n: int, text: str) -> str:
        entry = {
            "type": "user",
            "message": {"role": "user", "content": text},
            "timestamp": STAMP,
            "sessionId": session_id(n),
            "cwd": str(self.project),
        }
        return json.dumps(entry) + "\n"

    def prompt(self, n: int, text: str) -> None:
        """Appends a typed prompt to session ``n``'s transcript."""
        with self.transcript(n).open("a", encoding="utf-8") as file:
            file.write(self.line(n, text))

    def payload(self, n: int, prompt: str = "what did the others do?", **extra: Any) -> bytes:
        data = {
            "session_id": session_id(n),
            "transcript_path": str(self.transcript(n)),
            "cwd": str(self.project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            **extra,
        }
        return json.dumps(data).encode()

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SIDELIGHT_", "CLAUDE_", "CODEX_", "PI_", "XDG_"))
        }
        env["HOME"] = str(self.home)
        env["SIDELIGHT_STATE_DIR"] = str(self.state)
        env.update(extra)
        return env

    def command(self, host: str = "claude-code") -> list[str]:
        return [*cli_command(), "hook", host]

    def run_hook(
        self, n: int, stdin: bytes | None = None, timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            self.command(),
            input=self.payload(n) if stdin is None else stdin,
            capture_output=True,
            env=self.env(**env),
            timeout=timeout,
            check=False,
        )

    def run_hook_for_a_gone_host(self, n: int, **env: str) -> subprocess.CompletedProcess[bytes]:
        """:meth:`run_hook` with stdout a pipe nobody reads any more (the host went away): the answer
        cannot be written. Its stderr is captured."""
        read, write = os.pipe()
        os.close(read)
        try:
            return subprocess.run(
                self.command(),
                input=self.payload(n),
                stdout=write,
                stderr=subprocess.PIPE,
                env=self.env(**env),
                timeout=60,
                check=False,
            )
        finally:
            os.close(write)

    def cursor_file(self, n: int) -> Path:
        return self.state / "cursors" / f"claude-code_{session_id(n)}.json"

    def log(self) -> str:
        path = self.state / "sidelight.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def context_of(output: bytes) -> str | None:
    """The ``additionalContext`` a hook printed (``None``: it printed nothing). Fails on anything else."""
    if not output.strip():
        return None
    data = json.loads(output)
    specific = data["hookSpecificOutput"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    context = specific["additionalContext"]
    assert isinstance(context, str)
    return context


#: A digest line of one sibling whose prompts are ``p<number>``: its short id, how many messages, the
#: first prompt's number.
_NUMBERED = re.compile(r'^- \w+ (\d{8}) \([^,)]*, (\d+) messages?\): "p(\d+)"', re.MULTILINE)


def reported_ranges(outputs: list[str | None]) -> dict[str, list[tuple[int, int]]]:
    """Per sibling (its short id), the prompts each hook output reported, ``[first, first + count)``, for
    siblings whose prompts are numbered ``p0``, ``p1``, ... (``None`` or ``""``: an output of nothing)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for output in outputs:
        context = context_of(output.encode()) if output else None
        for short, count, first in _NUMBERED.findall(context or ""):
            ranges.setdefault(short, []).append((int(first), int(first) + int(count)))
    return ranges
