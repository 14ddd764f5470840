"""`sidelight dashboard` in a real browser (issue 22): Debian's headless chromium, driven by Playwright, on
the page the command serves for a scripted run of Claude Code, Pi, Codex and Qwen Code sessions made from
the transcripts the real CLIs wrote (``tests.support.dashboard.scripted_run``).

One server and one browser for the module; each test opens its own page (a fresh context: no cookie).
"""

from __future__ import annotations

import http.client
import json
import subprocess
import time
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Page, expect

from sidelight.dashboard.app import FORBIDDEN
from tests.conftest import cli_command
from tests.support import watching
from tests.support.dashboard import (
    HOSTILE_PROMPT,
    Dashboard,
    Run,
    append,
    claude_prompt,
    claude_reply,
    dashboard_env,
    scripted_run,
    start_dashboard,
)

pytestmark = pytest.mark.browser

#: Bound for the page to show what a transcript just got (the server looks every half second): a
#: hang is the failure, the latency itself is printed, not asserted.
LIVE_BOUND_MS = 20_000


def status_rows(run: Run) -> dict[str, dict[str, Any]]:
    """``sidelight status --json`` in the run's HOME, by session key: what the page must agree with."""
    done = subprocess.run(
        [*cli_command(), "status", "--json"],
        capture_output=True,
        text=True,
        env=dashboard_env(run.home),
        timeout=120,
        check=True,
    )
    rows = (json.loads(line) for line in done.stdout.splitlines() if line.strip())  # JSON lines
    return {row["key"]: row for row in rows}


def rows(page: Page, project: str | None = None) -> list[dict[str, str]]:
    """Every session row of the overview (of one project's section), as the DOM says it."""
    scope = f'section.project[data-project="{project}"] ' if project else ""
    found: list[dict[str, str]] = page.eval_on_selector_all(
        f"{scope}tr[data-session-id]",
        """rows => rows.map(row => ({
            id: row.dataset.sessionId,
            agent: row.dataset.agent,
            state: row.dataset.state,
            messages: (row.querySelector("td.messages") || {}).textContent?.trim() ?? null,
            stateText: (row.querySelector("td.state") || {}).textContent?.trim() ?? null,
            hidden: row.hidden,
            text: row.textContent,
        }))""",
    )
    return found


def open_overview(page: Page, dashboard: Dashboard) -> None:
    response = page.goto(dashboard.url)
    assert response is not None and response.status == 200, response and response.status
    expect(page.locator("tr[data-session-id]").first).to_be_attached()


def test_the_overview_lists_every_session_of_the_run_by_project(page: Page, dashboard: Dashboard, run: Run):
    open_overview(page, dashboard)
    expected = status_rows(run)
    shown = {row["id"]: row for row in rows(page)}
    # The page's ids are the sessions' keys or their agents' own ids; both name one session.
    by_key = {
        key: next((s for i, s in shown.items() if i in (key, key.split(":", 1)[1])), None) for key in expected
    }
    assert all(by_key.values()), f"sessions missing from the page: {[k for k, v in by_key.items() if not v]}"
    assert len(shown) == len(expected)
    for key, row in expected.items():
        cell = by_key[key]
        assert cell is not None
        assert (cell["agent"], cell["state"], cell["messages"]) == (
            row["agent"],
            row["state"],
            str(row["messages"]),
        ), key
        assert row["state"] in (cell["stateText"] or "")
    app = sorted(r["agent"] for r in rows(page, str(run.project)))
    site = sorted(r["agent"] for r in rows(page, str(run.other_project)))
    assert app == ["claude-code", "codex", "pi"]
    assert site == ["claude-code", "qwen"]
    states = {r["agent"]: r["state"] for r in rows(page, str(run.project))}
    assert states == {"claude-code": "active", "pi": "active", "codex": "ended"}
    # The timeline is drawn by the charting library shipped in the package: something is in it.
    expect(page.locator("#timeline")).to_be_visible()
    assert page.eval_on_selector("#timeline", "t => t.querySelectorAll('canvas, svg, path, rect').length") > 0


def test_a_session_that_writes_is_updated_live_without_a_reload(page: Page, dashboard: Dashboard, run: Run):
    assert run.quiet is not None
    open_overview(page, dashboard)
    row = page.locator('tr[data-session-id*="5e55a0e0"]')
    expect(row).to_have_attribute("data-state", "ended")
    before = int(row.locator("td.messages").inner_text())
    # A reload would clear this: the update must come in place.
    page.evaluate("window.__sidelight_no_reload = true")

    now = time.time()
    wrote = time.monotonic()
    append(
        run.quiet,
        claude_prompt(
            "Back again: add a test", now, run.other_project, "5e55a0e0-0000-4000-8000-00000000beef"
        )
        + claude_reply(2, "Added it.", now),
    )
    page.wait_for_function(
        """([selector, count]) => {
            const row = document.querySelector(selector);
            return row && row.dataset.state === "active"
                && row.querySelector("td.messages").textContent.trim() === String(count);
        }""",
        arg=['tr[data-session-id*="5e55a0e0"]', before + 2],
        polling="raf",
        timeout=LIVE_BOUND_MS,
    )
    latency_ms = (time.monotonic() - wrote) * 1000
    print(
        f"\nlive update: transcript appended -> row active with {before + 2} messages in {latency_ms:.0f} ms"
    )
    assert page.evaluate("window.__sidelight_no_reload") is True
    expect(row.locator("td.state")).to_contain_text("active")


def test_the_collision_view_shows_the_shared_file_with_both_sessions(
    page: Page, dashboard: Dashboard, run: Run
):
    open_overview(page, dashboard)
    item = page.locator(f'#collisions li[data-file="{run.shared_file}"]')
    expect(item).to_have_count(1)
    text = item.inner_text()
    live = {r["agent"]: r["id"] for r in rows(page, str(run.project))}
    html = item.inner_html()

    def named(agent: str) -> bool:
        session_id = live[agent]
        short = session_id.rsplit(":", 1)[-1][:8]
        return session_id in html or quote(session_id, safe="") in html or short in text

    assert named("claude-code") and named("pi"), text
    # Codex touched notes.txt too, three hours ago: an ended session collides with nobody.
    assert not named("codex"), text
    # Qwen's notes.txt is another project's file.
    assert page.locator(f'#collisions li[data-file="{run.other_project / "notes.txt"}"]').count() == 0


def test_a_request_without_the_token_is_refused(page: Page, dashboard: Dashboard):
    response = page.goto(dashboard.base + "/")
    assert response is not None and response.status == 403
    # The refusal says how to open the dashboard, and shows nothing of the sessions.
    assert page.inner_text("body").strip() == FORBIDDEN.strip()
    assert page.locator("tr[data-session-id]").count() == 0
    wrong = page.goto(dashboard.base + "/?token=" + "x" * len(dashboard.token))
    assert wrong is not None and wrong.status == 403
    for path in ("/events", "/session/anything"):
        refused = page.request.get(dashboard.base + path)
        assert refused.status == 403, path
    # With the token but another Host (DNS rebinding: a page of evil.example resolved to 127.0.0.1).
    where = urlsplit(dashboard.base)
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=20)
    try:
        connection.request(
            "GET", f"/?token={dashboard.token}", headers={"Host": f"evil.example:{where.port}"}
        )
        status = connection.getresponse().status
    finally:
        connection.close()
    assert status in (400, 403), status


def test_the_filters_hide_the_other_agents_states_and_projects(page: Page, dashboard: Dashboard, run: Run):
    open_overview(page, dashboard)
    page.select_option("#filter-agent", "pi")
    page.wait_for_function(
        "() => [...document.querySelectorAll('tr[data-session-id]')]"
        ".every(r => r.hidden === (r.dataset.agent !== 'pi'))"
    )
    shown = [r for r in rows(page) if not r["hidden"]]
    assert [r["agent"] for r in shown] == ["pi"]
    assert len(rows(page)) >= 5
    page.select_option("#filter-agent", "")
    page.select_option("#filter-state", "ended")
    page.wait_for_function(
        "() => [...document.querySelectorAll('tr[data-session-id]')]"
        ".every(r => r.hidden === (r.dataset.state !== 'ended'))"
    )
    assert "codex" in [r["agent"] for r in rows(page) if not r["hidden"]]
    page.select_option("#filter-state", "")
    page.select_option("#filter-project", str(run.other_project))
    page.wait_for_function(
        "project => [...document.querySelectorAll('tr[data-session-id]')]"
        ".every(r => r.hidden === (r.closest('section.project').dataset.project !== project))",
        arg=str(run.other_project),
    )
    assert sorted(r["agent"] for r in rows(page) if not r["hidden"]) == ["claude-code", "qwen"]
    expect(page.locator(f'section.project[data-project="{run.project}"]')).to_be_hidden()
    page.select_option("#filter-project", "")
    # The search box: a part of a session's name, any case, as it is typed.
    target = next(r for r in rows(page) if r["agent"] == "codex")
    name = page.locator(f'tr[data-session-id="{target["id"]}"] td.name').inner_text()
    page.fill("#filter-search", name[:6].upper())
    page.wait_for_function(
        "id => [...document.querySelectorAll('tr[data-session-id]')]"
        ".every(r => r.hidden === (r.dataset.sessionId !== id))",
        arg=target["id"],
    )
    expect(page.locator("#shown-count")).to_have_text("1 shown")
    assert "q=" in page.url  # a reload or a shared link keeps it
    page.fill("#filter-search", "")
    # Sorting from the keyboard: the messages header's link, focused and pressed, sorts every section.
    header = page.locator(f'section.project[data-project="{run.project}"] th[data-sort="messages"]')
    header.locator("a").focus()
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-sort", "descending")
    counts = [int(r["messages"]) for r in rows(page, str(run.project))]
    assert counts == sorted(counts, reverse=True) and len(set(counts)) > 1, counts
    assert "sort=messages" in page.url


def test_the_session_page_shows_its_conversation_as_text(page: Page, dashboard: Dashboard, run: Run):
    dialogs: list[str] = []

    def dismissed(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismissed)
    open_overview(page, dashboard)
    session_id = page.locator('tr[data-session-id*="5e55a0e0"]').get_attribute("data-session-id")
    assert session_id
    response = page.goto(f"{dashboard.base}/session/{quote(session_id, safe='')}")
    assert response is not None and response.status == 200
    body = page.locator("body")
    for markup in HOSTILE_PROMPT.split(" and "):
        expect(body).to_contain_text(markup.removeprefix("Render ").removesuffix(" as text"))
    expect(body).to_contain_text("Done: shown as text.")
    injected = page.evaluate(
        """() => [...document.querySelectorAll("script")].some(s => s.textContent.includes('alert("prompt")'))
            || document.querySelector('img[src="x"]') !== null"""
    )
    assert not injected
    assert dialogs == []


def test_with_a_running_watcher_the_page_follows_its_snapshot(page: Page, tmp_path):
    """As people run it: ``sidelight watch`` in the background, the dashboard reading its snapshot."""
    home = tmp_path / "home"
    home.mkdir()
    run = scripted_run(home)
    assert run.quiet is not None
    env = dashboard_env(home)
    watcher = watching.start_serving([*cli_command(), "watch"], env, home, home / "state")
    try:
        server = start_dashboard(home)
        try:
            open_overview(page, server)
            expect(page.locator("body")).to_contain_text(f"from the running watcher (pid {watcher.pid})")
            row = page.locator('tr[data-session-id*="5e55a0e0"]')
            expect(row).to_have_attribute("data-state", "ended")
            before = int(row.locator("td.messages").inner_text())
            now = time.time()
            wrote = time.monotonic()
            append(
                run.quiet,
                claude_prompt("And the docs", now, run.other_project, "5e55a0e0-0000-4000-8000-00000000beef")
                + claude_reply(3, "Updated.", now),
            )
            expect(row).to_have_attribute("data-state", "active", timeout=LIVE_BOUND_MS)
            expect(row.locator("td.messages")).to_have_text(str(before + 2), timeout=LIVE_BOUND_MS)
            print(f"\nlive update through the watcher: {(time.monotonic() - wrote) * 1000:.0f} ms")
        finally:
            code, err = server.stop()
        assert code == 0, err[-3000:]
    finally:
        errors = watching.stop(watcher).decode()
    assert watcher.returncode == 0, errors[-3000:]
