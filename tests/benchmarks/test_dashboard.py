"""The dashboard with 1,000 sessions (issue 22): time to first paint, time until every row is on the page,
a filter's time, and the update latency from a transcript's append to its row on the page.

``sidelight dashboard`` runs as a subprocess against a throwaway HOME of ``SESSIONS`` sessions in
``PROJECTS`` projects: two thirds Claude Code sessions written line by line (a prompt, an edit, a command,
a reply; their last activity spread over the last six hours, so every state is there), one third copies
of the real Pi sample (``tests/data/pi``). Debian's chromium (``make browser``) loads the page through
Playwright.

Reported in ``extra_info`` and printed (never asserted: a hang is the only failure):

- ``listen_s``: from the command's start to its URL line;
- ``first_contentful_paint_ms``: the browser's own ``first-contentful-paint`` entry (from navigation start);
- ``dom_content_loaded_ms`` / ``load_ms``: the navigation's timings;
- ``rows_ms``: from navigation start until every session's row is in the DOM;
- ``filter_ms``: choosing an agent in ``#filter-agent`` until every other row is hidden;
- ``update_ms_p50`` / ``update_ms_max``: ``UPDATES`` appends, one after the other to different sessions,
  each until its row shows the new message count;
- ``page_bytes``: the overview's HTML as the server sends it;
- ``idle_cpu_percent``: the server's CPU time (user + system, ``/proc``) over ``IDLE_SECONDS`` with the
  page open and no transcript written, as a share of one core.

Enabled (``--benchmark-enable``): 1,000 sessions (``SIDELIGHT_BENCH_DASHBOARD_SESSIONS``); smoke mode: 20.

    .venv/bin/pytest tests/benchmarks/test_dashboard.py --benchmark-enable -s -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from sidelight.agents.claude_code import claude_sanitize
from sidelight.agents.pi.paths import pi_encode_cwd
from tests.support.dashboard import (
    DATA,
    BrowserMissing,
    append,
    claude_prompt,
    claude_reply,
    iso,
    launch_chromium,
    start_dashboard,
)

pytestmark = pytest.mark.browser

SESSIONS = int(os.environ.get("SIDELIGHT_BENCH_DASHBOARD_SESSIONS", "1000"))
SMOKE_SESSIONS = 20
PROJECTS = 20
UPDATES = 5
#: How long the idle dashboard's CPU is measured (enabled mode; the smoke run takes 2 s).
IDLE_SECONDS = 60.0
#: Bound for one wait on the page (a hang is the failure; the times are printed, not asserted).
BOUND_MS = 120_000


def _edit(n: int, path: Path, moment: float) -> str:
    block = {
        "type": "tool_use",
        "id": f"tu{n}",
        "name": "Edit",
        "input": {"file_path": str(path), "old_string": "a", "new_string": "b"},
    }
    return _assistant(n, block, moment)


def _bash(n: int, command: str, moment: float) -> str:
    return _assistant(
        n, {"type": "tool_use", "id": f"tb{n}", "name": "Bash", "input": {"command": command}}, moment
    )


def _assistant(n: int, block: dict[str, Any], moment: float) -> str:
    entry = {
        "type": "assistant",
        "message": {"id": f"m{n}", "role": "assistant", "content": [block]},
        "timestamp": iso(moment),
    }
    return json.dumps(entry, separators=(",", ":")) + "\n"


def build_home(home: Path, sessions: int, now: float) -> list[Path]:
    """``sessions`` sessions in ``PROJECTS`` projects; returns the Claude Code transcripts (to append to)."""
    pi_sample = (DATA / "pi" / "four-tools-continue.jsonl").read_text(encoding="utf-8")
    claude: list[Path] = []
    for n in range(sessions):
        project = home / "work" / f"project-{n % PROJECTS:02d}"
        project.mkdir(parents=True, exist_ok=True)
        # Spread over six hours: the newest are active, then idle, then ended.
        last = now - (n * 6 * 3600 / max(sessions, 1))
        session_id = str(uuid.UUID(int=n + 1))
        if n % 3 == 2:
            folder = home / ".pi" / "agent" / "sessions" / pi_encode_cwd(str(project))
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
            path.write_text(
                pi_sample.replace("/tmp/sidelight-samples/pi/project", str(project)), encoding="utf-8"
            )
        else:
            folder = home / ".claude" / "projects" / claude_sanitize(str(project))
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{session_id}.jsonl"
            path.write_text(
                claude_prompt(f"task {n}: fix module {n % 50}", last - 30, project, session_id)
                + _edit(n, project / f"mod{n % 50}.py", last - 20)
                + _bash(n, "pytest -q", last - 10)
                + claude_reply(n, f"Fixed module {n % 50}.", last),
                encoding="utf-8",
            )
            claude.append(path)
        os.utime(path, (last, last))
    return claude


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.benchmark(group="dashboard")
def test_dashboard_with_many_sessions(benchmark, benchmarks_enabled, tmp_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: install the test extra (make build-dev)", pytrace=False)
    sessions = SESSIONS if benchmarks_enabled else SMOKE_SESSIONS
    home = tmp_path / "home"
    home.mkdir()
    now = time.time()
    claude = build_home(home, sessions, now)
    result: dict[str, Any] = {"sessions": sessions, "load_1m": round(os.getloadavg()[0], 2)}

    def run() -> None:
        with sync_playwright() as driver:
            try:
                browser = launch_chromium(driver)
            except BrowserMissing as missing:
                pytest.fail(str(missing), pytrace=False)
            server = start_dashboard(home, timeout=300)
            try:
                result["listen_s"] = round(server.seconds_to_listen, 2)
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.set_default_timeout(BOUND_MS)
                page.goto(server.url, wait_until="commit")
                page.wait_for_function(
                    "n => document.querySelectorAll('tr[data-session-id]').length >= n",
                    arg=sessions,
                    polling="raf",
                )
                result["rows_ms"] = round(page.evaluate("performance.now()"))
                page.wait_for_load_state("load")
                # The entry is made when the frame is presented, which may come after the load event.
                page.wait_for_function(
                    "() => performance.getEntriesByType('paint')"
                    ".some(e => e.name === 'first-contentful-paint')",
                    polling="raf",
                )
                timing = page.evaluate(
                    """() => {
                        const paint = performance.getEntriesByType("paint")
                            .find(e => e.name === "first-contentful-paint");
                        const nav = performance.getEntriesByType("navigation")[0];
                        return {fcp: paint ? paint.startTime : null,
                                dcl: nav ? nav.domContentLoadedEventEnd : null,
                                load: nav ? nav.loadEventEnd : null};
                    }"""
                )
                result["first_contentful_paint_ms"] = timing["fcp"] and round(timing["fcp"])
                result["dom_content_loaded_ms"] = timing["dcl"] and round(timing["dcl"])
                result["load_ms"] = timing["load"] and round(timing["load"])

                started = time.monotonic()
                page.select_option("#filter-agent", "pi")
                page.wait_for_function(
                    "() => [...document.querySelectorAll('tr[data-session-id]')]"
                    ".every(r => r.hidden === (r.dataset.agent !== 'pi'))",
                    polling="raf",
                )
                result["filter_ms"] = round((time.monotonic() - started) * 1000)
                page.select_option("#filter-agent", "")

                latencies = []
                for n, path in enumerate(claude[:UPDATES]):
                    session_id = path.stem
                    selector = f'tr[data-session-id*="{session_id}"]'
                    before = int(page.locator(f"{selector} td.messages").inner_text())
                    moment = time.time()
                    wrote = time.monotonic()
                    append(
                        path,
                        claude_prompt(f"again {n}", moment, path.parent, session_id)
                        + claude_reply(10_000 + n, "done", moment),
                    )
                    page.wait_for_function(
                        """([selector, count]) => {
                            const cell = document.querySelector(selector + " td.messages");
                            return cell && cell.textContent.trim() === String(count);
                        }""",
                        arg=[selector, before + 2],
                        polling="raf",
                    )
                    latencies.append((time.monotonic() - wrote) * 1000)
                result["update_ms_p50"] = round(statistics.median(latencies))
                result["update_ms_max"] = round(max(latencies))
                result["page_bytes"] = len(page.context.request.get(server.base + "/").body())
                idle = IDLE_SECONDS if benchmarks_enabled else 2.0
                before_cpu, started = _cpu_seconds(server.process.pid), time.monotonic()
                time.sleep(idle)
                spent = _cpu_seconds(server.process.pid) - before_cpu
                result["idle_cpu_percent"] = round(100 * spent / (time.monotonic() - started), 1)
                result["load_1m_after"] = round(os.getloadavg()[0], 2)
            finally:
                code, err = server.stop()
                browser.close()
            assert code == 0, err[-3000:]

    benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(f"\ndashboard, {sessions} sessions ({os.cpu_count()} cores): {result}")
    shutil.rmtree(home, ignore_errors=True)
