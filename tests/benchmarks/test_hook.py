"""Whole-process prompt-hook time: `sidelight hook claude-code` with real stdin, as Claude Code runs it.

Peers in one group (``hook``), each a fresh process per round:

- ``python -c pass``: bare interpreter start-up, the floor;
- ``1 sibling``: a project with the current session and one sibling that has news every round;
- ``N siblings``: 1,000 siblings (20 in smoke mode) of which 10 have news every round;
- the same two ``warm``: a ``sidelight watch`` runs on the state and answers the hooks (the warm path); every
  round must have been answered by it (its snapshot counts them), not by the hook falling back.

The sessions live in a throwaway HOME and are Claude-Code-shaped; a first, untimed hook run creates the
cursors, so every timed round reads only the news appended just before it (``pedantic`` setup). Each
round's output is checked (a digest naming the sessions with news); the medians' ratios go to
``extra_info`` (``n_siblings_vs_1_sibling``, ``vs_bare_python``). The target is that 1,000 siblings cost
at most 2x one sibling; issue 18's, that a warm hook costs at most 2x a bare start and a cold one
at most 4x. No time is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli_command
from tests.support import watching

#: Siblings in the large case, when benchmarks are enabled and in smoke mode.
MANY = int(os.environ.get("SIDELIGHT_BENCH_SIBLINGS", "1000"))
SMOKE_MANY = 20
#: Siblings with news in every round of the large case.
NEWS = 10
ROUNDS = int(os.environ.get("SIDELIGHT_BENCH_HOOK_ROUNDS", "15"))
#: Generous, so the benchmark measures the work rather than the hook giving up on it.
TIME_BUDGET = "60s"

#: Medians by peer, for the ratios (the peers run in the order listed).
_medians: dict[str, float] = {}


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _line(session_id: str, cwd: str, kind: str, content: Any, n: str) -> str:
    entry: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.330",
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "timestamp": _stamp(),
    }
    if kind == "user":
        entry["message"] = {"role": "user", "content": content}
    else:
        entry["message"] = {"id": f"msg_{n}", "type": "message", "role": "assistant", "content": content}
    return json.dumps(entry, separators=(",", ":")) + "\n"


def _turn(session_id: str, cwd: str, prompt: str, n: str) -> str:
    """One prompt with a command, its (code-heavy) result and a reply: about 3 KB."""
    tool_id = f"toolu_{n}"
    output = "\n".join(f"{i:4d}  def function_{i}(x):  return x * {i}  # {prompt}" for i in range(40))
    return "".join(
        [
            _line(session_id, cwd, "user", prompt, n),
            _line(
                session_id,
                cwd,
                "assistant",
                [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "make test"}}],
                n + "a",
            ),
            _line(
                session_id,
                cwd,
                "user",
                [{"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": False}],
                n,
            ),
            _line(session_id, cwd, "assistant", [{"type": "text", "text": f"Done with {prompt}."}], n + "b"),
        ]
    )


class Project:
    """A throwaway HOME with one Claude Code project holding the current session and ``n`` siblings."""

    def __init__(self, root: Path, siblings: int, news: int) -> None:
        self.home = root / "home"
        self.cwd = root / "project"
        self.cwd.mkdir(parents=True)
        folder = (
            self.home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in str(self.cwd))
        )
        folder.mkdir(parents=True)
        self.state = self.home / ".local" / "state" / "sidelight"
        self.current = str(uuid.uuid4())
        self.current_path = folder / f"{self.current}.jsonl"
        self.current_path.write_text(_turn(self.current, str(self.cwd), "the current session", "cur"))
        self.siblings: list[Path] = []
        for i in range(siblings):
            sid = str(uuid.uuid4())
            path = folder / f"{sid}.jsonl"
            path.write_text(
                "".join(_turn(sid, str(self.cwd), f"sibling {i} turn {t}", f"{i}_{t}") for t in range(6))
            )
            self.siblings.append(path)
        self.news = self.siblings[:news]
        self.round = 0
        # Without PYTHONDONTWRITEBYTECODE: an installed sidelight has its bytecode compiled (pip does it
        # at install; the first, untimed hook does it here), and a hook that compiles every module from
        # source each time measures the compiler.
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        self.env.update(HOME=str(self.home), SIDELIGHT_TIME_BUDGET=TIME_BUDGET)
        self.stdin = json.dumps(
            {
                "session_id": self.current,
                "transcript_path": str(self.current_path),
                "cwd": str(self.cwd),
                "prompt_id": "p",
                "permission_mode": "bypassPermissions",
                "hook_event_name": "UserPromptSubmit",
                "prompt": "what did the others do?",
            }
        ).encode()

    def add_news(self) -> None:
        self.round += 1
        for i, path in enumerate(self.news):
            sid = path.stem
            with path.open("a") as file:
                file.write(_turn(sid, str(self.cwd), f"news {self.round}", f"news_{i}_{self.round}"))

    def hook(self) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*cli_command(), "hook", "claude-code"],
            input=self.stdin,
            capture_output=True,
            env=self.env,
            cwd=self.cwd,
            check=False,
            timeout=300,
        )


def _serve(project: Project) -> subprocess.Popen[bytes]:
    """``sidelight watch`` on the project's state, once it answers hooks from its first listing. The hooks
    may wait up to a second for it to take them: the benchmark measures answers, not fallbacks."""
    project.env["SIDELIGHT_WARM_TIMEOUT"] = "1s"
    return watching.start_serving([*cli_command(), "watch"], project.env, project.cwd, project.state)


def _median(benchmark: Any) -> float | None:
    stats = getattr(benchmark, "stats", None)
    inner = getattr(stats, "stats", None)
    return getattr(inner, "median", None)


def _digest(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def _rounds(benchmark: Any, project: Project, warm: bool) -> list[subprocess.CompletedProcess[bytes]]:
    """The project's hook timed, each round after new news (``warm``: answered by a ``sidelight watch``,
    and every round must have been, not by the hook falling back to itself); what each round printed."""
    done: list[subprocess.CompletedProcess[bytes]] = []

    def run() -> None:
        done.append(project.hook())

    watcher = _serve(project) if warm else None
    try:
        if benchmark.disabled:
            project.add_news()
            benchmark(run)
        else:
            benchmark.pedantic(run, setup=project.add_news, rounds=ROUNDS, iterations=1, warmup_rounds=1)
        if watcher is not None:
            answered = watching.answered(project.state, len(done))
            benchmark.extra_info["answered_warm"] = answered
            assert answered == len(done), f"{answered} of {len(done)} hooks answered warm"
    finally:
        if watcher is not None:
            watching.stop(watcher)
    return done


@pytest.mark.benchmark(group="hook")
def test_hook_bare_python(benchmark: Any) -> None:
    def run() -> None:
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    benchmark.extra_info["peer"] = "python -c pass"
    if benchmark.disabled:
        benchmark(run)
        return
    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    median = _median(benchmark)
    if median is not None:
        _medians["bare"] = median


@pytest.mark.benchmark(group="hook")
@pytest.mark.parametrize("case", ["1 sibling", "many siblings", "1 sibling warm", "many siblings warm"])
def test_hook_whole_process(benchmark: Any, tmp_path: Path, case: str) -> None:
    if case.startswith("1 sibling"):
        siblings, news = 1, 1
    else:
        siblings, news = (SMOKE_MANY if benchmark.disabled else MANY), NEWS
    warm = case.endswith("warm")
    project = Project(tmp_path, siblings, news)
    benchmark.extra_info.update(peer=case, siblings=siblings, with_news=news, time_budget=TIME_BUDGET)

    # First looks, not timed: they create the cursors, and the siblings a full digest left out for room
    # and kept for later (digest.CARRIED_OVER) are named by the next few, until nothing is new.
    for _ in range(20):
        first = project.hook()
        assert first.returncode == 0, first.stderr
        if "[Session Activity]" not in _digest(first):
            break
    else:
        raise AssertionError("the first looks never drained")
    outputs = [_digest(done) for done in _rounds(benchmark, project, warm)]

    # Correctness, every round: a digest that reports the news (at most 500 characters, so with many
    # sessions some lines become "+N more sessions").
    for digest in outputs:
        assert digest.startswith("[Session Activity]"), digest
        assert len(digest) <= 500
        assert "news " in digest and "ran make test" in digest, digest
    shown = [line for line in outputs[-1].splitlines() if line.startswith("- ")]
    benchmark.extra_info["digest_lines"] = len(shown)
    benchmark.extra_info["digest_chars"] = len(outputs[-1])
    log = project.state / "sidelight.log"
    benchmark.extra_info["hook_warnings"] = log.read_text().count("WARNING") if log.exists() else 0

    median = _median(benchmark)
    if median is None:
        return
    _medians[case] = median
    if "bare" in _medians:
        benchmark.extra_info["vs_bare_python"] = round(median / _medians["bare"], 2)
    single = "1 sibling warm" if warm else "1 sibling"
    if case.startswith("many siblings") and single in _medians:
        benchmark.extra_info["n_siblings_vs_1_sibling"] = round(median / _medians[single], 2)


# --- the stale-write guard's before-tool hook (issue 31, item 7) ---------------------------------------


def _tool(session_id: str, cwd: str, name: str, args: dict[str, Any], n: str) -> str:
    """One tool call and its result."""
    tool_id = f"toolu_{n}"
    return _line(
        session_id, cwd, "assistant", [{"type": "tool_use", "id": tool_id, "name": name, "input": args}], n
    ) + _line(
        session_id,
        cwd,
        "user",
        [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok", "is_error": False}],
        n,
    )


def _tool_event(project: Project, event: str, tool: str, args: dict[str, Any], **more: Any) -> bytes:
    """The hook input of the current session's ``event`` (before or after a tool) for ``tool``."""
    return json.dumps(
        {
            "session_id": project.current,
            "transcript_path": str(project.current_path),
            "cwd": str(project.cwd),
            "permission_mode": "bypassPermissions",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": args,
            "tool_use_id": "toolu_now",
            **more,
        }
    ).encode()


def _before_write(project: Project, refused: bool) -> None:
    """The project's hook becomes a ``PreToolUse`` of a ``Write`` of ``app.py``, which the current
    session read after every sibling was written; each round, the siblings with news ran a command
    (the write goes through), and with ``refused`` the first of them edited ``app.py`` too (every
    round's write is refused, for a new change)."""
    app = str(project.cwd / "app.py")
    with project.current_path.open("a") as file:
        file.write(_tool(project.current, str(project.cwd), "Read", {"file_path": app}, "cur_read"))
    project.stdin = _tool_event(project, "PreToolUse", "Write", {"file_path": app, "content": "x = 1\n"})
    plain = project.add_news
    if not refused:
        return

    def add_news() -> None:
        plain()
        editor = project.news[0]
        edit = {"file_path": app, "old_string": "x", "new_string": "y"}
        with editor.open("a") as file:
            file.write(_tool(editor.stem, str(project.cwd), "Edit", edit, f"edit_{project.round}"))

    project.add_news = add_news  # type: ignore[method-assign]


@pytest.mark.benchmark(group="hook")
@pytest.mark.parametrize(
    "case",
    [
        "write, many siblings",
        "write, many siblings warm",
        "write refused, many siblings",
        "write refused, many siblings warm",
    ],
)
def test_before_write_hook(benchmark: Any, tmp_path: Path, case: str) -> None:
    """A ``PreToolUse`` of a write with 1,000 siblings (20 in smoke mode), 10 of them with news every
    round: the write goes through, or (``refused``) one of them edited the file and the guard refuses
    each round's write (a new change each time)."""
    siblings = SMOKE_MANY if benchmark.disabled else MANY
    warm = case.endswith("warm")
    refused = "refused" in case
    project = Project(tmp_path, siblings, NEWS)
    _before_write(project, refused)
    benchmark.extra_info.update(peer=case, siblings=siblings, with_news=NEWS)
    first = project.hook()  # untimed: compiles the bytecode; nothing changed yet, so nothing refused
    assert first.returncode == 0 and not first.stdout.strip(), (first.stdout, first.stderr)
    outputs = [done.stdout for done in _rounds(benchmark, project, warm)]
    for out in outputs:
        if not refused:
            assert not out.strip(), out
            continue
        answer = json.loads(out)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny", answer
        assert "app.py was edited by claude session" in answer["permissionDecisionReason"], answer
    median = _median(benchmark)
    if median is not None and "bare" in _medians:
        benchmark.extra_info["vs_bare_python"] = round(median / _medians["bare"], 2)


# --- the news within the turn's after-tool hook (issue 31, items 3 and 7) --------------------------------


@pytest.mark.benchmark(group="hook")
@pytest.mark.parametrize(
    "case",
    [
        "after tool, many siblings",
        "after tool, many siblings warm",
        "after tool, quiet siblings",
        "after tool, quiet siblings warm",
    ],
)
def test_after_tool_hook(benchmark: Any, tmp_path: Path, case: str) -> None:
    """A ``PostToolUse`` of a ``Bash`` call with 1,000 siblings (20 in smoke mode) and no collision:
    the current session read ``app.py``; each round 10 siblings have news that touches no file of it
    (``many``), or none has written since the last look (``quiet``: one ``stat`` each). Nothing is
    said."""
    siblings = SMOKE_MANY if benchmark.disabled else MANY
    warm = case.endswith("warm")
    project = Project(tmp_path, siblings, NEWS)
    app = str(project.cwd / "app.py")
    with project.current_path.open("a") as file:
        file.write(_tool(project.current, str(project.cwd), "Read", {"file_path": app}, "cur_read"))
    response = {"stdout": "app.py", "stderr": "", "interrupted": False}
    project.stdin = _tool_event(project, "PostToolUse", "Bash", {"command": "ls"}, tool_response=response)
    if "quiet" in case:
        project.add_news = lambda: None  # type: ignore[method-assign]
    benchmark.extra_info.update(peer=case, siblings=siblings, with_news=0 if "quiet" in case else NEWS)
    first = project.hook()  # untimed: compiles the bytecode, and looks once
    assert first.returncode == 0 and not first.stdout.strip(), (first.stdout, first.stderr)
    for done in _rounds(benchmark, project, warm):
        assert done.returncode == 0 and not done.stdout.strip(), done.stdout
    median = _median(benchmark)
    if median is not None and "bare" in _medians:
        benchmark.extra_info["vs_bare_python"] = round(median / _medians["bare"], 2)
