"""Fixtures that run the real agent CLIs (Claude Code, Pi, Codex) offline against `mockapi.MockAPI`.

The CLIs come from `tests/e2e/clients` (`make clients` = `npm ci` there). Every run gets a throwaway HOME
inside pytest's `tmp_path`, so the user's real `~/.claude`, `~/.pi` and `~/.codex` are never touched, and
the only server a CLI talks to is the loopback mock.

    def test_x(agents):
        agents.mock.set_script([[mockapi.bash("ls"), mockapi.say("done")]])
        run = agents.claude("list the files")
        run.transcript  # ~/.claude/projects/<cwd>/<session>.jsonl written by this run
"""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.mockapi import MockAPI

CLIENTS_DIR = Path(__file__).resolve().parent / "clients"
BIN_DIR = CLIENTS_DIR / "node_modules" / ".bin"

CLAUDE_VERSION = "2.1.330"
CODEX_VERSION = "0.169.0"
QWEN_VERSION = "0.24.4"
COPILOT_VERSION = "1.0.102"
PI_VERSION = "0.73.1"
GEMINI_VERSION = "0.61.0"
OPENCODE_VERSION = "1.18.33"
CLINE_VERSION = "3.0.65"
#: Kimi CLI is a Python program (PyPI `kimi-cli`, Python >= 3.12): `make clients` builds it in a venv of its
#: own from tests/e2e/clients/kimi-requirements.txt; its tests are skipped without it.
KIMI_VERSION = "1.50.0"
KIMI_BIN = CLIENTS_DIR / "kimi-venv" / "bin" / "kimi"

# Model ids the mock answers as. Codex picks its tools from the model's metadata: a known slug
# (`gpt-5.5`) gets the freeform `apply_patch` tool; an unknown one would only get `exec_command`.
PI_MODEL = "mock-model"
CODEX_MODEL = "gpt-5.5"
# Given with -m: without it Gemini sends each turn a routing request to a flash-lite model first.
GEMINI_MODEL = "gemini-2.5-flash"
OPENCODE_MODEL = "mock-model"
CLINE_MODEL = "mock-model"

RUN_TIMEOUT = float(os.environ.get("SIDELIGHT_E2E_TIMEOUT", "120"))

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def client_bin(name: str) -> Path:
    """Path of an installed CLI; fails (does not skip) when the clients are missing."""
    path = BIN_DIR / name
    if not path.exists():
        pytest.fail(
            f"{path} is missing: the end-to-end tests need the real agent CLIs. Install them with "
            f"`make clients` (runs `npm ci` in {CLIENTS_DIR.relative_to(CLIENTS_DIR.parents[2])}).",
            pytrace=False,
        )
    return path


@dataclass
class RunResult:
    """One CLI invocation and the transcript files it created or appended to."""

    client: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration: float
    transcripts: list[Path]
    session_id: str | None = None
    output: dict[str, object] | None = None  # claude --output-format json

    @property
    def transcript(self) -> Path:
        """The main transcript (not a subagent's) written by this run."""
        main = [p for p in self.transcripts if "subagents" not in p.parts]
        if self.session_id:
            named = [p for p in main if self.session_id in p.name]
            if named:
                return named[0]
        assert main, f"{self.client} wrote no transcript\n{self.describe()}"
        return main[0]

    @property
    def subagent_transcripts(self) -> list[Path]:
        return [p for p in self.transcripts if "subagents" in p.parts]

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.duration:.1f}s\n"
            f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"
        )


def _snapshot(root: Path) -> dict[Path, tuple[int, int]]:
    if not root.exists():
        return {}
    out = {}
    for p in root.rglob("*.jsonl"):
        st = p.stat()
        out[p] = (st.st_size, st.st_mtime_ns)
    return out


def _changed(before: dict[Path, tuple[int, int]], after: dict[Path, tuple[int, int]]) -> list[Path]:
    return sorted(
        (p for p, sig in after.items() if before.get(p) != sig), key=lambda p: (len(p.parts), str(p))
    )


@dataclass
class AgentEnv:
    """A throwaway HOME and project directory, configured to talk to `mock`, and runners for the CLIs."""

    root: Path
    mock: MockAPI
    #: Copilot CLI unpacks about 235 MB into its cache on a HOME's first run: one cache for the whole
    #: test session (`XDG_CACHE_HOME`), see the `copilot_cache` fixture.
    copilot_cache: Path | None = None
    home: Path = field(init=False)
    project: Path = field(init=False)
    runs: list[RunResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        self.write_configs()

    # ---- configuration

    @property
    def claude_projects(self) -> Path:
        return self.home / ".claude" / "projects"

    @property
    def pi_sessions(self) -> Path:
        return self.home / ".pi" / "agent" / "sessions"

    @property
    def codex_sessions(self) -> Path:
        return self.home / ".codex" / "sessions"

    @property
    def gemini_chats(self) -> Path:
        return self.home / ".gemini" / "tmp"

    @property
    def qwen_projects(self) -> Path:
        return self.home / ".qwen" / "projects"

    @property
    def copilot_sessions(self) -> Path:
        return self.home / ".copilot" / "session-state"

    @property
    def kimi_sessions(self) -> Path:
        return self.home / ".kimi" / "sessions"

    def write_configs(self) -> None:
        qwen_dir = self.home / ".qwen"
        qwen_dir.mkdir(parents=True, exist_ok=True)
        # The OpenAI-compatible provider from the environment; no managed memory (a second, background
        # request per run).
        qwen = {
            "security": {"auth": {"selectedType": "openai"}},
            "memory": {"enableManagedAutoMemory": False},
        }
        (qwen_dir / "settings.json").write_text(json.dumps(qwen, indent=2))
        pi_dir = self.home / ".pi" / "agent"
        pi_dir.mkdir(parents=True, exist_ok=True)
        models = {
            "providers": {
                "mock": {
                    "baseUrl": self.mock.base_url,
                    "api": "anthropic-messages",
                    "apiKey": "dummy",
                    "models": [
                        {"id": PI_MODEL, "name": "Mock model", "contextWindow": 200000, "maxTokens": 8192}
                    ],
                }
            }
        }
        (pi_dir / "models.json").write_text(json.dumps(models, indent=2))
        codex_dir = self.home / ".codex"
        codex_dir.mkdir(parents=True, exist_ok=True)
        (codex_dir / "config.toml").write_text(
            f'model = "{CODEX_MODEL}"\n'
            'model_provider = "mock"\n'
            "\n"
            "[model_providers.mock]\n"
            'name = "mock"\n'
            f'base_url = "{self.mock.base_url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "MOCK_API_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
        )
        gemini_dir = self.home / ".gemini"
        gemini_dir.mkdir(parents=True, exist_ok=True)
        # An API key as the auth method (else `-p` exits 41), and nothing sent anywhere but the mock.
        gemini_settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
        (gemini_dir / "settings.json").write_text(json.dumps(gemini_settings, indent=2))
        kimi_dir = self.home / ".kimi"
        kimi_dir.mkdir(parents=True, exist_ok=True)
        # The mock as an OpenAI chat-completions provider; nothing sent anywhere else.
        (kimi_dir / "config.toml").write_text(
            "# the e2e tests' Kimi CLI: the loopback mock only\n"
            'default_model = "mock"\n'
            "telemetry = false\n"
            "\n"
            "[providers.mock]\n"
            'type = "openai_legacy"\n'
            f'base_url = "{self.mock.base_url}/v1"\n'
            'api_key = "dummy"\n'
            "\n"
            "[models.mock]\n"
            'provider = "mock"\n'
            'model = "mock-model"\n'
            "max_context_size = 128000\n"
        )

    def env(self, **extra: str) -> dict[str, str]:
        """A minimal environment: no inherited API keys, HOME pointing at the throwaway home."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TMPDIR": str(self.root / "tmp"),
        }
        (self.root / "tmp").mkdir(exist_ok=True)
        env.update(extra)
        return env

    # ---- hooks (see NOTES.md for where their output lands)

    def add_claude_hook(self, event: str, command: str, *, scope: str = "user", timeout: int = 10) -> Path:
        """Add a command hook for `event` to `~/.claude/settings.json` (`scope="project"`: the project's)."""
        base = self.home if scope == "user" else self.project
        settings_file = base / ".claude" / "settings.json"
        settings = json.loads(settings_file.read_text()) if settings_file.exists() else {}
        hook = {"type": "command", "command": command, "timeout": timeout}
        settings.setdefault("hooks", {}).setdefault(event, []).append({"hooks": [hook]})
        settings_file.parent.mkdir(parents=True, exist_ok=True)
        settings_file.write_text(json.dumps(settings, indent=2))
        return settings_file

    def add_codex_hook(self, event: str, command: str, *, timeout: int = 10) -> Path:
        """Add a command hook to `~/.codex/hooks.json` and enable hooks; `codex()` then trusts them."""
        hooks_file = self.home / ".codex" / "hooks.json"
        data = json.loads(hooks_file.read_text()) if hooks_file.exists() else {}
        hook = {"type": "command", "command": command, "timeout": timeout}
        data.setdefault("hooks", {}).setdefault(event, []).append({"hooks": [hook]})
        hooks_file.write_text(json.dumps(data, indent=2))
        config = self.home / ".codex" / "config.toml"
        if "[features]" not in config.read_text():
            config.write_text(config.read_text() + "\n[features]\nhooks = true\n")
        return hooks_file

    def add_gemini_hook(self, event: str, command: str, *, timeout_ms: int = 10000) -> Path:
        """Add a command hook for `event` (`BeforeAgent`, `SessionStart`, …) to `~/.gemini/settings.json`."""
        settings_file = self.home / ".gemini" / "settings.json"
        settings = json.loads(settings_file.read_text())
        hook = {"type": "command", "command": command, "timeout": timeout_ms}
        settings.setdefault("hooks", {}).setdefault(event, []).append({"hooks": [hook]})
        settings_file.write_text(json.dumps(settings, indent=2))
        return settings_file

    def add_pi_extension(self, name: str, source: str) -> Path:
        """Write a TypeScript extension to `~/.pi/agent/extensions/<name>.ts` (loaded as is)."""
        path = self.home / ".pi" / "agent" / "extensions" / f"{name}.ts"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        return path

    # ---- sidelight itself

    def sidelight(
        self, *args: str, check: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run the `sidelight` CLI (by absolute path) as the agents would: this HOME, in the project."""
        done = subprocess.run(
            [*sidelight_command(), *args],
            cwd=self.project,
            env=self.env(),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(
                f"sidelight {' '.join(args)} failed ({done.returncode})\n{done.stderr}", pytrace=False
            )
        return done

    def install_sidelight(self, *targets: str) -> None:
        """`sidelight install TARGET` into this HOME for each target (claude-code, codex, pi)."""
        for target in targets:
            self.sidelight("install", target)

    @property
    def sidelight_log(self) -> str:
        """The hook's log (`<state dir>/sidelight.log`), for failure messages."""
        path = self.home / ".local" / "state" / "sidelight" / "sidelight.log"
        return path.read_text() if path.exists() else "(no sidelight.log)"

    # ---- running

    def spawn(self, argv: Sequence[str], env: dict[str, str]) -> subprocess.Popen[str]:
        """Start a CLI in the project, its output piped, in a process group of its own (so a timeout,
        or a test, can kill the whole group)."""
        return subprocess.Popen(
            list(argv),
            cwd=self.project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def _run(
        self,
        client: str,
        argv: Sequence[str],
        env: dict[str, str],
        watch: Path,
        timeout: float | None,
    ) -> RunResult:
        before = _snapshot(watch)
        started = time.monotonic()
        proc = self.spawn(argv, env)
        try:
            stdout, stderr = proc.communicate(timeout=timeout or RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(
                f"{client} did not finish within {timeout or RUN_TIMEOUT}s\n$ {' '.join(argv)}\n"
                f"--- stdout\n{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}\n"
                f"--- mock\n{self.mock.summary()}",
                pytrace=False,
            )
        duration = time.monotonic() - started
        result = RunResult(
            client=client,
            argv=list(argv),
            returncode=proc.returncode,
            stdout=stdout,
            stderr=stderr,
            duration=duration,
            transcripts=_changed(before, _snapshot(watch)),
        )
        self.runs.append(result)
        return result

    @staticmethod
    def _check(result: RunResult, check: bool) -> RunResult:
        if check and result.returncode != 0:
            pytest.fail(f"{result.client} failed\n{result.describe()}", pytrace=False)
        return result

    def claude(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`claude -p PROMPT --output-format json` (with `--resume SESSION_ID` for a follow-up turn)."""
        argv, run_env = self.claude_command(prompt, resume=resume, extra_args=extra_args, env=env)
        result = self._run("claude", argv, run_env, self.claude_projects, timeout)
        try:
            out = json.loads(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else None
        except ValueError:
            out = None
        if isinstance(out, dict):
            result.output = out
            sid = out.get("session_id")
            result.session_id = sid if isinstance(sid, str) else None
        return self._check(result, check)

    def claude_command(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """The command line and environment of :meth:`claude` (for a test that starts it itself)."""
        argv = [
            str(client_bin("claude")),
            "--dangerously-skip-permissions",
            "-p",
            prompt,
            "--output-format",
            "json",
        ]
        if resume:
            argv += ["--resume", resume]
        argv += list(extra_args)
        run_env = self.env(
            ANTHROPIC_BASE_URL=self.mock.base_url,
            ANTHROPIC_API_KEY="dummy",
            IS_SANDBOX="1",  # allows --dangerously-skip-permissions as root
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            **(env or {}),
        )
        return argv, run_env

    def pi(
        self,
        prompt: str,
        *,
        session: Path | str | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`pi --provider mock --model ID -p PROMPT` (with `--session FILE` to continue a session)."""
        argv = [str(client_bin("pi")), "--offline", "--provider", "mock", "--model", PI_MODEL]
        if session is not None:
            argv += ["--session", str(session)]
        argv += [*extra_args, "-p", prompt]
        run_env = self.env(PI_OFFLINE="1", **(env or {}))
        result = self._run("pi", argv, run_env, self.pi_sessions, timeout)
        if result.transcripts:
            m = _UUID.search(result.transcripts[0].name)
            result.session_id = m.group(0) if m else None
        return self._check(result, check)

    def codex(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`codex exec` with approvals and sandbox bypassed (`codex exec resume ID PROMPT` to continue)."""
        argv = [str(client_bin("codex")), "exec"]
        if resume:
            argv += ["resume", resume]
        argv += ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        if (self.home / ".codex" / "hooks.json").exists():
            argv.append("--dangerously-bypass-hook-trust")  # hooks not trusted by a person do not run
        argv += [*extra_args, prompt]
        run_env = self.env(MOCK_API_KEY="dummy", **(env or {}))
        result = self._run("codex", argv, run_env, self.codex_sessions, timeout)
        if result.transcripts:
            m = _UUID.search(result.transcripts[0].name)
            result.session_id = m.group(0) if m else None
        if result.session_id is None:
            m = re.search(r"session id: (\S+)", result.stderr)
            result.session_id = m.group(1) if m else None
        return self._check(result, check)

    def opencode_setup(self) -> None:
        """The project's `opencode.json` (the mock as an OpenAI-compatible provider), and in every
        config folder opencode would otherwise install `@opencode-ai/plugin` into in the background (it
        has no network here), the `node_modules/` and `package-lock.json` that tell it the package is
        there (docs/hosts.md, "opencode"). Our plugin imports nothing from it."""
        config = {
            "$schema": "https://opencode.ai/config.json",
            "model": f"mock/{OPENCODE_MODEL}",
            "autoupdate": False,
            "share": "disabled",
            "provider": {
                "mock": {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": f"{self.mock.base_url}/v1", "apiKey": "dummy"},
                    "models": {OPENCODE_MODEL: {"name": "Mock"}},
                }
            },
        }
        (self.project / "opencode.json").write_text(json.dumps(config, indent=2))
        lock = {"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
        for folder in (self.home / ".config" / "opencode", self.project / ".opencode"):
            (folder / "node_modules").mkdir(parents=True, exist_ok=True)
            (folder / "package-lock.json").write_text(json.dumps(lock))

    @property
    def opencode_db(self) -> Path:
        return self.home / ".local" / "share" / "opencode" / "opencode.db"

    def opencode(
        self,
        prompt: str,
        *,
        session: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`opencode run --format json WORD...` (with `--session ID` to continue a session). The prompt
        goes as separate words (one argument with spaces reaches the model in literal quotes), and
        `PWD` is the project: opencode takes its directory from it, not from its working directory."""
        if not (self.project / "opencode.json").exists():
            self.opencode_setup()
        argv = [str(client_bin("opencode")), "run", "--format", "json"]
        if session is not None:
            argv += ["--session", session]
        argv += prompt.split()
        run_env = self.env(PWD=str(self.project), OPENCODE_DISABLE_MODELS_FETCH="1", **(env or {}))
        result = self._run("opencode", argv, run_env, self.opencode_db.parent, timeout)
        for line in result.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and isinstance(event.get("sessionID"), str):
                result.session_id = event["sessionID"]
                break
        return self._check(result, check)

    @property
    def cline_sessions(self) -> Path:
        return self.home / ".cline" / "data" / "sessions"

    def cline(
        self,
        prompt: str,
        *,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`cline --json PROMPT` (act mode, tools approved), after `cline auth` with the mock as its
        `openai-compatible` provider. Each run is a new session (`--id` is interactive only); its
        transcript is the session's `<id>.messages.json`. The hub daemon a run leaves behind is
        stopped (:meth:`stop_cline_daemons`)."""
        run_env = self.env(**(env or {}))
        if not (self.home / ".cline" / "data" / "settings" / "providers.json").exists():
            auth = [str(client_bin("cline")), "auth", "-p", "openai-compatible", "-k", "dummy"]
            auth += ["-m", CLINE_MODEL, "-b", f"{self.mock.base_url}/v1"]
            subprocess.run(auth, cwd=self.project, env=run_env, capture_output=True, timeout=60, check=True)
        before = set(self.cline_sessions.iterdir()) if self.cline_sessions.is_dir() else set()
        try:
            result = self._run(
                "cline", [str(client_bin("cline")), "--json", prompt], run_env, self.root, timeout
            )
        finally:
            self.stop_cline_daemons()
        new = sorted(set(self.cline_sessions.iterdir()) - before) if self.cline_sessions.is_dir() else []
        if new:
            result.session_id = new[0].name
            result.transcripts = [new[0] / f"{new[0].name}.messages.json"]
        return self._check(result, check)

    def stop_cline_daemons(self) -> None:
        """Stops the `cline --cline-hub-daemon` processes that runs with this HOME left running."""
        mine = f"HOME={self.home}".encode()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if b"--cline-hub-daemon" not in (proc / "cmdline").read_bytes():
                    continue
                if mine not in (proc / "environ").read_bytes().split(b"\0"):
                    continue
                os.kill(int(proc.name), signal.SIGTERM)
            except (OSError, ValueError):
                continue

    def gemini(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`gemini -p PROMPT --yolo -m MODEL --output-format json` (`--resume ID` to continue a session).

        The workspace is trusted through `GEMINI_CLI_TRUST_WORKSPACE` (hooks run only in a trusted one)."""
        argv = [
            str(client_bin("gemini")),
            "-p",
            prompt,
            "--yolo",
            "-m",
            GEMINI_MODEL,
            "--output-format",
            "json",
        ]
        if resume:
            argv += ["--resume", resume]
        argv += list(extra_args)
        run_env = self.env(
            GOOGLE_GEMINI_BASE_URL=self.mock.base_url,
            GEMINI_API_KEY="dummy",
            GEMINI_CLI_TRUST_WORKSPACE="true",
            **(env or {}),
        )
        result = self._run("gemini", argv, run_env, self.gemini_chats, timeout)
        try:
            start = result.stdout.find("{")
            out = json.loads(result.stdout[start:]) if start >= 0 else None
        except ValueError:
            out = None
        if isinstance(out, dict):
            result.output = out
            sid = out.get("session_id")
            result.session_id = sid if isinstance(sid, str) else None
        if result.session_id:
            # The chat is named after the first eight characters of the id; a run may touch more files.
            named = [p for p in result.transcripts if p.name.endswith(f"-{result.session_id[:8]}.jsonl")]
            result.transcripts = named + [p for p in result.transcripts if p not in named]
        return self._check(result, check)

    def qwen(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`qwen -p PROMPT --yolo` (with `--resume SESSION_ID` to continue a session)."""
        argv = [str(client_bin("qwen")), "-p", prompt, "--yolo", "-o", "json"]
        if resume:
            argv += ["--resume", resume]
        run_env = self.env(
            OPENAI_BASE_URL=f"{self.mock.base_url}/v1",
            OPENAI_API_KEY="dummy",
            OPENAI_MODEL="mock-model",
            QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
            **(env or {}),
        )
        result = self._run("qwen", argv, run_env, self.qwen_projects, timeout)
        if result.transcripts:
            m = _UUID.search(result.transcripts[0].name)
            result.session_id = m.group(0) if m else None
        return self._check(result, check)

    def copilot(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`copilot -p PROMPT --allow-all-tools` with a BYOK provider (`--resume=SESSION_ID` to continue)."""
        argv = [str(client_bin("copilot")), "-p", prompt, "--allow-all-tools"]
        if resume:
            argv.append(f"--resume={resume}")
        extra = {"XDG_CACHE_HOME": str(self.copilot_cache)} if self.copilot_cache is not None else {}
        run_env = self.env(
            COPILOT_PROVIDER_BASE_URL=f"{self.mock.base_url}/v1",
            COPILOT_PROVIDER_API_KEY="dummy",
            COPILOT_MODEL="mock-model",
            COPILOT_OFFLINE="true",
            COPILOT_AUTO_UPDATE="false",
            **extra,
            **(env or {}),
        )
        result = self._run("copilot", argv, run_env, self.copilot_sessions, timeout)
        if result.transcripts:
            result.session_id = result.transcripts[0].parent.name
        return self._check(result, check)

    def kimi(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> RunResult:
        """`kimi --print -p PROMPT` (with `-r SESSION_ID` to continue a session). Never `kimi` bare: the
        stub releases and a bare `kimi` download things."""
        if not KIMI_BIN.exists():
            pytest.skip(
                f"Kimi CLI {KIMI_VERSION} is not installed ({KIMI_BIN}): `make clients` builds it "
                "when a python3.13 or python3.12 is found"
            )
        argv = [str(KIMI_BIN), "--print"]
        if resume:
            argv += ["-r", resume]
        argv += ["-p", prompt]
        result = self._run("kimi", argv, self.env(**(env or {})), self.kimi_sessions, timeout)
        m = re.search(r"kimi -r (\S+)", result.stdout + result.stderr)
        result.session_id = m.group(1) if m else None
        result.transcripts = [p for p in result.transcripts if p.name == "wire.jsonl"]
        return self._check(result, check)


def sidelight_command() -> list[str]:
    """The `sidelight` console script beside this interpreter (the venv need not be on PATH)."""
    script = Path(sys.executable).with_name("sidelight")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sidelight"]


#: What every sidelight digest starts with (`sidelight.features.digest.HEADER`).
DIGEST_HEADER = "[Session Activity]"


def _item_texts(item: Any) -> list[str]:
    """The texts of one Anthropic message, OpenAI input item or chat-completions message."""
    if not isinstance(item, dict):
        return []
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    out = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            out.append(block["text"])
    return out


def digest_for(mock: MockAPI, prompt: str) -> str | None:
    """The sidelight digest that came with `prompt`: in the first model request carrying the prompt,
    the `[Session Activity]` block in the context messages right after it (Claude's `system` message,
    Pi's second `user` message, Codex's `developer` message), or inside the prompt's own message after
    the prompt (Qwen's `<qwen:user-prompt-submit-context>` part, Copilot's `<system_reminder>`). `None`
    when that prompt had no digest."""
    requests = [r for r in mock.model_requests() if isinstance(r.body, dict) and prompt in r.text()]
    if not requests:
        pytest.fail(f"no model request carried the prompt {prompt!r}\n{mock.summary()}", pytrace=False)
    body = requests[0].body
    if "contents" in body:
        return _gemini_digest(body["contents"], prompt)
    items = body.get("messages") or body.get("input") or []
    at = max(
        (
            i
            for i, item in enumerate(items)
            if item.get("role") == "user" and any(prompt in t for t in _item_texts(item))
        ),
        default=-1,
    )
    found = []
    own = _item_texts(items[at]) if at >= 0 else []
    for text in own[next((i for i, t in enumerate(own) if prompt in t), len(own)) :]:
        after = text[text.index(prompt) + len(prompt) :] if prompt in text else text
        if DIGEST_HEADER in after:
            block = after[after.index(DIGEST_HEADER) :]
            found.append(block.split("\n\n", 1)[0].split("\n</", 1)[0])
    for item in items[at + 1 :]:
        if item.get("type") not in (None, "message"):
            break  # a tool call or its output: past the prompt's context
        for text in _item_texts(item):
            if DIGEST_HEADER in text:
                block = text[text.index(DIGEST_HEADER) :]
                found.append(block.split("\n\n", 1)[0])
    return found[-1] if found else None


def _gemini_digest(contents: list[Any], prompt: str) -> str | None:
    """Gemini keeps a hook's context in the prompt's own user content, as a `<hook_context>` part (HTML
    escaped: `&gt;` for `>`)."""
    at = max(
        (
            i
            for i, c in enumerate(contents)
            if c.get("role") == "user" and any(prompt in p.get("text", "") for p in c.get("parts") or [])
        ),
        default=-1,
    )
    found = []
    for part in contents[at].get("parts") or [] if at >= 0 else []:
        text = html.unescape(part.get("text") or "")
        if text.startswith("<hook_context>") and DIGEST_HEADER in text:
            block = text[text.index(DIGEST_HEADER) :]
            found.append(block.split("</hook_context>", 1)[0].split("\n\n", 1)[0])
    return found[-1] if found else None


@pytest.fixture
def mock() -> Iterator[MockAPI]:
    """A started, empty-script mock; set the script with `mock.set_script(...)`."""
    with MockAPI(models=("claude-opus-5-5", PI_MODEL, CODEX_MODEL, GEMINI_MODEL)) as m:
        yield m


@pytest.fixture(scope="session")
def copilot_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `XDG_CACHE_HOME` for every Copilot run of the session: Copilot unpacks ~235 MB there once."""
    return tmp_path_factory.mktemp("copilot-cache")


@pytest.fixture
def agents(tmp_path: Path, mock: MockAPI, copilot_cache: Path) -> Iterator[AgentEnv]:
    """A throwaway HOME + project dir wired to `mock`, with `.claude()`, `.pi()`, `.codex()`, `.qwen()` and
    `.copilot()` runners."""
    env = AgentEnv(tmp_path, mock, copilot_cache)
    yield env
    env.stop_cline_daemons()  # a failed Cline run's hub daemon too


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return client_bin("claude")


@pytest.fixture(scope="session")
def pi_bin() -> Path:
    return client_bin("pi")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return client_bin("codex")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return client_bin("gemini")
