"""The real Factory Droid CLI, run offline against `mockapi.MockAPI` (docs/hosts-next.md, "Factory Droid").

Droid's binary comes from `@factory/cli-linux-x64` in `tests/e2e/clients` (`make clients`; the `@factory/cli`
shim's postinstall, which would fetch it, is blocked). Its model is a `customModels` entry of
`~/.factory/settings.json` speaking chat completions to the mock (`custom:MockChat-0`).

`droid_rpc` drives it the way its IDE and daemon do, `droid exec --input-format stream-jsonrpc -o
stream-jsonrpc`: the only path on which its `UserPromptSubmit` hook fires (a `droid exec PROMPT` run fires
the tool hooks only). One JSON-RPC request a line on stdin: `droid.initialize_session` (or
`droid.load_session` to resume offline), then `droid.add_user_message` per prompt, each answered when the
notification `agent_turn_completed` arrives.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import CLIENTS_DIR, RUN_TIMEOUT, AgentEnv

DROID_VERSION = "0.225.2"
DROID_BIN = CLIENTS_DIR / "node_modules" / "@factory" / "cli-linux-x64" / "bin" / "droid"
#: The model id Droid gives the first `customModels` entry (`custom:<displayName>-<index>`).
DROID_MODEL = "custom:MockChat-0"


def droid_bin() -> Path:
    """Droid's binary; skips the test when it is not installed."""
    if not DROID_BIN.is_file():
        pytest.skip(f"Factory Droid's binary is not installed ({DROID_BIN}): run `make clients`")
    return DROID_BIN


def configure(agents: AgentEnv) -> None:
    """Droid's model: the mock, as a chat-completions `customModels` entry."""
    path = agents.home / ".factory" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(path.read_text()) if path.exists() else {}
    settings["customModels"] = [
        {
            "model": "mock-model",
            "displayName": "MockChat",
            "baseUrl": f"{agents.mock.base_url}/v1",
            "apiKey": "dummy",
            "provider": "generic-chat-completion-api",
            "maxOutputTokens": 4096,
        }
    ]
    path.write_text(json.dumps(settings, indent=2))


@dataclass
class DroidRun:
    """One `droid exec` JSON-RPC process: its session, its transcript and what it printed."""

    session_id: str
    transcript: Path
    messages: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""

    def notifications(self, kind: str) -> list[dict[str, Any]]:
        out = []
        for m in self.messages:
            note = (m.get("params") or {}).get("notification") or {}
            if note.get("type") == kind:
                out.append(note)
        return out


def _request(ident: int, method: str, params: dict[str, Any]) -> str:
    body = {"jsonrpc": "2.0", "type": "request", "factoryApiVersion": "1.0.0", "id": str(ident)}
    return json.dumps({**body, "method": method, "params": params}) + "\n"


def droid_rpc(
    agents: AgentEnv, *prompts: str, resume: str | None = None, timeout: float | None = None
) -> DroidRun:
    """Runs `prompts` one after the other in one Droid session (a new one, or `resume`'s) over JSON-RPC."""
    binary = droid_bin()
    configure(agents)
    proc = subprocess.Popen(
        [str(binary), "exec", "--input-format", "stream-jsonrpc", "-o", "stream-jsonrpc"],
        cwd=agents.project,
        env=agents.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    readers = [
        threading.Thread(target=pump, daemon=True),
        threading.Thread(target=lambda: errors.extend(proc.stderr or ()), daemon=True),
    ]
    for reader in readers:
        reader.start()

    def finish() -> None:
        """Waits for the readers to see the pipes' ends, and closes them."""
        for reader in readers:
            reader.join(timeout=10)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()

    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + (timeout or RUN_TIMEOUT)

    def fail(why: str) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        finish()
        tail = "".join(errors)[-3000:]
        pytest.fail(f"droid: {why}\n--- stderr\n{tail}\n--- mock\n{agents.mock.summary()}", pytrace=False)

    def wait_for(done: Any) -> dict[str, Any]:
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                fail(f"no answer within {timeout or RUN_TIMEOUT}s")
                raise AssertionError from None
            if line is None:
                fail(f"exited ({proc.wait()}) before answering")
            try:
                message: dict[str, Any] = json.loads(line or "")
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            messages.append(message)
            if done(message):
                return message

    def send(text: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(text)
        proc.stdin.flush()

    if resume is None:
        params = {
            "machineId": "m1",
            "cwd": str(agents.project),
            "modelId": DROID_MODEL,
            "autonomyLevel": "high",
        }
        send(_request(1, "droid.initialize_session", params))
    else:
        send(_request(1, "droid.load_session", {"sessionId": resume}))
    answer = wait_for(lambda m: m.get("type") == "response" and m.get("id") == "1")
    if "error" in answer:
        fail(f"the session did not start: {answer['error']}")
    session_id = resume or answer["result"]["sessionId"]
    for n, prompt in enumerate(prompts, start=2):
        send(_request(n, "droid.add_user_message", {"text": prompt}))
        wait_for(
            lambda m: (
                ((m.get("params") or {}).get("notification") or {}).get("type") == "agent_turn_completed"
            )
        )
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finish()
    found = list((agents.home / ".factory" / "sessions").glob(f"*/{session_id}.jsonl"))
    assert found, f"droid wrote no transcript for {session_id}\n{''.join(errors)[-3000:]}"
    return DroidRun(session_id, found[0], messages, "".join(errors))
