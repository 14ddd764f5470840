"""``make run``: sidelight's main job on the sample transcripts, in a throwaway HOME, in seconds.

The samples in ``tests/data`` (written by the real agent CLIs) are placed where each agent keeps its
sessions; one more Claude Code session, written here, works in the Codex sample's folder and read
``notes.txt`` a minute before that Codex session edited it. Then, as Claude Code would run them:

1. ``sidelight hook claude-code`` on a typed prompt (UserPromptSubmit): the ``[Session Activity]``
   digest that session is told about its siblings;
2. ``sidelight hook claude-code`` on a ``Write`` of ``notes.txt`` (PreToolUse): the stale write refused,
   and the same write retried let through;
3. ``sidelight status``: the table of every session.

No network, no agent CLI, no watcher; the HOME is removed after. Run: ``python -m tests.support.run_demo``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from sidelight.agents.claude_code import claude_project_dir
from tests.support.samples import place_samples

#: The Codex sample's folder, and the file its session edited at 21:20:32 (``apply_patch``).
PROJECT = "/tmp/sidelight-samples/codex/project"
NOTES = f"{PROJECT}/notes.txt"
#: This session: it started and read ``notes.txt`` before the Codex session changed it.
SESSION = "5e55101a-0000-4000-8000-000000000033"
READ_AT = "2026-11-21T21:19:30.000Z"
#: Environment that could point sidelight or an agent elsewhere than the throwaway HOME.
FOREIGN = (
    "SIDELIGHT_",
    "CLAUDE_",
    "CODEX_",
    "PI_",
    "XDG_",
    "QWEN_",
    "COPILOT_",
    "CLINE_",
    "GEMINI_",
    "KIMI_",
)


def write_session(home: Path) -> Path:
    """This session's transcript: a typed prompt, then a ``Read`` of ``notes.txt`` and its result."""
    transcript = claude_project_dir(home / ".claude" / "projects", PROJECT) / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    common = {"sessionId": SESSION, "cwd": PROJECT, "timestamp": READ_AT}
    read = {"type": "tool_use", "id": "toolu_demo_1", "name": "Read", "input": {"file_path": NOTES}}
    result = {"type": "tool_result", "tool_use_id": "toolu_demo_1", "content": "alpha\nbeta\n"}
    lines = [
        {"type": "user", "message": {"role": "user", "content": "tidy up notes.txt"}},
        {"type": "assistant", "message": {"id": "msg_demo_1", "role": "assistant", "content": [read]}},
        {"type": "user", "message": {"role": "user", "content": [result]}},
    ]
    transcript.write_text("".join(json.dumps({**common, **line}) + "\n" for line in lines), encoding="utf-8")
    return transcript


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"))
    return env


def sidelight(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sidelight", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout


def hook(env: dict[str, str], transcript: Path, event: str, **fields: Any) -> dict[str, Any]:
    """What ``sidelight hook claude-code`` answers to ``event`` of this session (``{}``: nothing)."""
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": PROJECT,
        "hook_event_name": event,
        **fields,
    }
    out = sidelight(env, "hook", "claude-code", stdin=json.dumps(payload))
    answer: dict[str, Any] = json.loads(out).get("hookSpecificOutput", {}) if out.strip() else {}
    return answer


def title(text: str) -> None:
    print(f"\n== {text}")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="sidelight-run-") as tmp:
        home = Path(tmp)
        place_samples(home)
        transcript = write_session(home)
        env = environment(home)
        print("A throwaway HOME with every agent's sample sessions (tests/data), and one Claude Code session")
        print(f"in {PROJECT} that read notes.txt before the Codex session there (its sibling) edited it.")

        title("1. Its next typed prompt (UserPromptSubmit) is told what its siblings did:")
        told = hook(env, transcript, "UserPromptSubmit", prompt="finish tidying notes.txt")
        print(told.get("additionalContext", "(nothing)"))

        title("2. It tries to Write notes.txt (PreToolUse): the stale write is refused, once:")
        write = {"file_path": NOTES, "content": "alpha\nbeta\ndelta\n"}
        denied = hook(
            env, transcript, "PreToolUse", tool_name="Write", tool_input=write, tool_use_id="toolu_demo_2"
        )
        print(f"{denied.get('permissionDecision', 'allow')}: {denied.get('permissionDecisionReason', '')}")
        again = hook(
            env, transcript, "PreToolUse", tool_name="Write", tool_input=write, tool_use_id="toolu_demo_3"
        )
        print(f"the same write, retried: {again.get('permissionDecision', 'allow')}")

        title("3. sidelight status:")
        print(sidelight(env, "status"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
