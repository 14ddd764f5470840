"""Fixtures of the dashboard's browser tests: one headless chromium per test module (Debian's, installed
by ``make browser``, driven by Playwright), a fresh page (its own context: no cookie carried over) per
test, a scripted multi-agent run in a throwaway HOME, and ``sidelight dashboard`` serving it.

A missing chromium or Playwright fails the tests, naming the make target, as the end-to-end tests name
``make clients``: a browser test that skips would hide that the dashboard was never looked at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.dashboard import (
    BrowserMissing,
    Dashboard,
    Run,
    launch_chromium,
    scripted_run,
    start_dashboard,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright


# Module-scoped, not session-scoped: while Playwright's sync API is open, its event loop counts as the
# running one in the main thread, so every later test calling asyncio.run() (tests/test_hosts.py) would
# fail with "cannot be called from a running event loop".
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "playwright is missing: the browser tests drive chromium with it. Install the test extra "
            "with `make build-dev` (pip install -e '.[test]').",
            pytrace=False,
        )
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    try:
        browser = launch_chromium(playwright)
    except BrowserMissing as missing:
        pytest.fail(str(missing), pytrace=False)
    yield browser
    browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page in a context of its own; an error thrown by the page's scripts fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    if errors:
        pytest.fail(f"the page's scripts threw: {errors}", pytrace=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    home = tmp_path_factory.mktemp("dashboard") / "home"
    home.mkdir()
    return scripted_run(home)


@pytest.fixture(scope="module")
def dashboard(run: Run) -> Iterator[Dashboard]:
    """``sidelight dashboard --port 0 --no-browser`` in the run's HOME; stopped with SIGTERM, which must
    end it with exit 0 and no traceback, having printed nothing but its URL line on stdout."""
    server = start_dashboard(run.home)
    yield server
    code, err = server.stop()
    assert code == 0 and "Traceback" not in err, f"the dashboard stopped with exit {code}: {err[-3000:]}"
    assert len(server.lines) == 1, f"more than the URL line on stdout: {server.lines}"
