"""The dashboard from outside: a scripted multi-agent run in a throwaway HOME, ``sidelight dashboard`` as a
subprocess, and the system's chromium driven by Playwright.

Shared by the browser tests (``tests/browser``) and the 1,000-session benchmark
(``tests/benchmarks/test_dashboard.py``).

The run is made of the transcripts the real CLIs wrote (``tests/data``): each sample is moved into one
project folder of the temporary HOME (its working directory rewritten) and into the present (every
timestamp shifted by the same amount, so the gaps between its lines stay those the CLI wrote). Every
sample touches ``<project>/notes.txt``, which makes the collisions real ones.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sidelight.agents.claude_code import claude_sanitize
from sidelight.agents.pi.paths import pi_encode_cwd
from tests.conftest import cli_command

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
#: Where make_sample_data ran each CLI; the samples name this folder as their working directory.
SAMPLE_ROOT = "/tmp/sidelight-samples"

#: The one line ``sidelight dashboard`` prints once it listens.
URL_LINE = re.compile(r"^sidelight dashboard: (?P<url>(?P<base>http://[^/\s]+)/\?token=(?P<token>[^\s&#]+))$")

_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
# Pi stamps its messages in epoch milliseconds too ("timestamp":1795296027412).
_MILLIS = re.compile(r'("timestamp":\s*)(\d{13})\b')


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def moved_sample(agent: str, sample: str, project: Path, last: float) -> str:
    """The sample ``tests/data/<agent>/<sample>`` as if written in ``project`` and ended at ``last``."""
    text = (DATA / agent / sample).read_text(encoding="utf-8")
    stamps = [_epoch(s) for s in _ISO.findall(text)]
    shift = last - max(stamps)

    def iso_shifted(match: re.Match[str]) -> str:
        return iso(_epoch(match.group()) + shift)

    def millis_shifted(match: re.Match[str]) -> str:
        return f"{match.group(1)}{int(match.group(2)) + round(shift * 1000)}"

    text = _MILLIS.sub(millis_shifted, _ISO.sub(iso_shifted, text))
    # The working directory, and every path under it (notes.txt), now lie in the project.
    return text.replace(f"{SAMPLE_ROOT}/{agent}/project", str(project))


def _write(path: Path, text: str, last: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (last, last))
    return path


def _first_line(text: str) -> dict[str, Any]:
    first: dict[str, Any] = json.loads(text.split("\n", 1)[0])
    return first


def place_claude_code(
    home: Path, project: Path, last: float, sample: str = "four-tools-resume.jsonl"
) -> Path:
    text = moved_sample("claude-code", sample, project, last)
    session_id = next(json.loads(line)["sessionId"] for line in text.splitlines() if '"sessionId"' in line)
    folder = home / ".claude" / "projects" / claude_sanitize(str(project))
    return _write(folder / f"{session_id}.jsonl", text, last)


def place_codex(home: Path, project: Path, last: float) -> Path:
    text = moved_sample("codex", "four-tools-resume.jsonl", project, last)
    meta = _first_line(text)["payload"]
    started = datetime.fromisoformat(meta["timestamp"].replace("Z", "+00:00"))
    name = f"rollout-{started:%Y-%m-%dT%H-%M-%S}-{meta['id']}.jsonl"
    return _write(home / ".codex" / "sessions" / f"{started:%Y/%m/%d}" / name, text, last)


def place_pi(home: Path, project: Path, last: float) -> Path:
    text = moved_sample("pi", "four-tools-continue.jsonl", project, last)
    header = _first_line(text)
    started = datetime.fromisoformat(header["timestamp"].replace("Z", "+00:00"))
    name = f"{started:%Y-%m-%dT%H-%M-%S-%f}"[:-3] + f"Z_{header['id']}.jsonl"
    return _write(home / ".pi" / "agent" / "sessions" / pi_encode_cwd(str(project)) / name, text, last)


def place_qwen(home: Path, project: Path, last: float) -> Path:
    text = moved_sample("qwen", "four-tools-resume.jsonl", project, last)
    session_id = next(json.loads(line)["sessionId"] for line in text.splitlines() if '"sessionId"' in line)
    folder = home / ".qwen" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project)) / "chats"
    return _write(folder / f"{session_id}.jsonl", text, last)


@dataclass
class Run:
    """A scripted multi-agent run: who wrote which transcript, in which project."""

    home: Path
    project: Path
    other_project: Path
    #: agent -> its transcript.
    transcripts: dict[str, Path] = field(default_factory=dict)
    #: A Claude Code session in ``other_project`` that ended hours ago; its prompt is markup.
    quiet: Path | None = None

    @property
    def shared_file(self) -> str:
        return str(self.project / "notes.txt")

    def env(self) -> dict[str, str]:
        return dashboard_env(self.home)


#: The prompt of the quiet session: markup a page must show as text, never run.
HOSTILE_PROMPT = 'Render <script>alert("prompt")</script> and <img src=x onerror="alert(1)"> as text'


def scripted_run(home: Path, now: float | None = None) -> Run:
    """Five sessions of four agents: in ``work/app``, Claude Code and Pi wrote a minute ago (both touched
    ``notes.txt``: a collision) and Codex three hours ago (it touched ``notes.txt`` too, but an ended
    session collides with nobody); in ``work/site``, Qwen Code wrote two minutes ago, and a second
    Claude Code session ended five hours ago, its one prompt :data:`HOSTILE_PROMPT` and its reply."""
    now = time.time() if now is None else now
    project = home / "work" / "app"
    other = home / "work" / "site"
    for folder in (project, other):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "notes.txt").write_text("alpha\ngamma\n", encoding="utf-8")
    run = Run(home=home, project=project.resolve(), other_project=other.resolve())
    run.transcripts["claude-code"] = place_claude_code(home, run.project, now - 60)
    run.transcripts["pi"] = place_pi(home, run.project, now - 50)
    run.transcripts["codex"] = place_codex(home, run.project, now - 3 * 3600)
    run.transcripts["qwen"] = place_qwen(home, run.other_project, now - 120)
    quiet_id = "5e55a0e0-0000-4000-8000-00000000beef"
    then = now - 5 * 3600
    text = claude_prompt(HOSTILE_PROMPT, then - 5, run.other_project, quiet_id) + claude_reply(
        1, "Done: shown as text.", then
    )
    folder = home / ".claude" / "projects" / claude_sanitize(str(run.other_project))
    run.quiet = _write(folder / f"{quiet_id}.jsonl", text, then)
    return run


def claude_prompt(text: str, moment: float, cwd: Path, session_id: str = "s") -> str:
    """One Claude Code prompt line, as the CLI writes it: compact JSON (sidelight finds the `cwd` in a
    transcript's head as `"cwd":"`), the fields sidelight reads."""
    entry = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "timestamp": iso(moment),
        "sessionId": session_id,
        "cwd": str(cwd),
        "uuid": f"u-{moment:.6f}",
    }
    return json.dumps(entry, separators=(",", ":")) + "\n"


def claude_reply(n: int, text: str, moment: float) -> str:
    entry = {
        "type": "assistant",
        "message": {"id": f"msg_{n}", "role": "assistant", "content": [{"type": "text", "text": text}]},
        "timestamp": iso(moment),
        "uuid": f"a-{n}",
    }
    return json.dumps(entry, separators=(",", ":")) + "\n"


def append(path: Path, text: str) -> None:
    # As the agents write: open, append, close.
    with path.open("a", encoding="utf-8") as file:
        file.write(text)


# -- the server --------------------------------------------------------------------------------------------


def dashboard_env(home: Path) -> dict[str, str]:
    """This environment with HOME and the state directory in ``home``, and no agent or sidelight
    variable of the real user's leaking in."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SIDELIGHT_")
        and key
        not in (
            "CLAUDE_CONFIG_DIR",
            "PI_CODING_AGENT_DIR",
            "CODEX_HOME",
            "QWEN_HOME",
            "COPILOT_HOME",
            "BROWSER",
        )
    }
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"), COLUMNS="100")
    return env


@dataclass
class Dashboard:
    """A running ``sidelight dashboard``."""

    process: subprocess.Popen[str]
    url: str
    base: str
    token: str
    #: What it printed on stdout: the URL line, and after :meth:`stop` anything else (the contract: nothing).
    lines: list[str]
    seconds_to_listen: float
    # A file, not a pipe: a server that logs much would block on a full pipe nobody reads until the end.
    errors: IO[bytes]

    def stop(self, timeout: float = 20.0) -> tuple[int, str]:
        """SIGTERM, as a service manager stops it; returns the exit code and what it wrote on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            out, _ = self.process.communicate(timeout=timeout)
            code = self.process.returncode
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
            code = -9
        self.lines.extend(out.splitlines(keepends=True))
        return code, _read_all(self.errors)


def _read_all(file: IO[bytes]) -> str:
    file.seek(0)
    text = file.read().decode("utf-8", "replace")
    file.close()
    return text


def start_dashboard(home: Path, *args: str, timeout: float = 60.0) -> Dashboard:
    """``sidelight dashboard --port 0 --no-browser`` in ``home``, once it printed the line with its URL.

    Fails with what the process wrote when it exits first, prints something else, or stays silent for
    ``timeout`` seconds (a bound for a loaded machine, not a measure)."""
    argv = [*cli_command(), "dashboard", "--port", "0", "--no-browser", *args]
    started = time.monotonic()
    errors = tempfile.TemporaryFile()  # noqa: SIM115 (outlives this call: Dashboard.stop reads and closes it)
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=dashboard_env(home),
        cwd=home,
    )
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    line = ""
    try:
        if selector.select(timeout):
            line = process.stdout.readline()
    finally:
        selector.close()
    listening = time.monotonic() - started
    found = URL_LINE.match(line.rstrip("\n"))
    if found is None:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            out, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
        raise AssertionError(
            f"`{' '.join(argv[-5:])}` did not print its URL line within {timeout:.0f}s "
            f"(exit {process.returncode}); stdout: {(line + out)[-2000:]!r}; "
            f"stderr: {_read_all(errors)[-3000:]!r}"
        )
    return Dashboard(
        process=process,
        url=found["url"],
        base=found["base"],
        token=found["token"],
        lines=[line],
        seconds_to_listen=listening,
        errors=errors,
    )


# -- the browser -------------------------------------------------------------------------------------------


def chromium_executable() -> str:
    """Debian's chromium (``make browser``); fails, naming the target, when it is not installed."""
    found = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(found, os.X_OK):
        raise BrowserMissing(
            "chromium is missing: the dashboard's browser tests drive the system's headless chromium. "
            "Install it with `make browser` (apt-get install chromium)."
        )
    return found


class BrowserMissing(Exception):
    """The system browser or Playwright is not installed."""


def launch_chromium(playwright: Playwright) -> Browser:
    # Playwright's own browser build is downloaded from hosts CI cannot reach: the distribution's
    # chromium is driven instead. --no-sandbox: the tests run as root, where chromium refuses its sandbox.
    return playwright.chromium.launch(executable_path=chromium_executable(), args=["--no-sandbox"])


def screenshot(out: Path) -> None:
    """The overview of the scripted run, as the README shows it (``docs/dashboard-overview.png``)."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="sidelight-demo-") as tmp, sync_playwright() as driver:
        home = Path(tmp) / "home"
        home.mkdir()
        scripted_run(home)
        server = start_dashboard(home)
        browser = launch_chromium(driver)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.goto(server.url)
            page.wait_for_selector("tr[data-session-id]")
            # The live stream stays open (no network idle): wait for the chart to be drawn instead.
            page.wait_for_selector("#timeline :is(canvas, svg)")
            page.wait_for_timeout(500)
            page.screenshot(path=str(out))
        finally:
            browser.close()
            code, err = server.stop()
        if code != 0:
            raise SystemExit(f"the dashboard stopped with exit {code}: {err[-2000:]}")
    print(f"{out}: {out.stat().st_size // 1024} KB")


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "screenshot":
        raise SystemExit("usage: python -m tests.support.dashboard screenshot OUT.png")
    screenshot(Path(sys.argv[2]))
