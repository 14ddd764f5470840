"""sidelight._fast.logs: loggers that import logging on their first record, and the hook's log file.

Each case runs in a fresh interpreter: the test process has logging imported already (pytest does)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


def test_a_record_below_warning_imports_nothing_and_goes_nowhere(tmp_path: Path) -> None:
    done = _python(
        """
        import sys
        from sidelight._fast.logs import get_logger
        log = get_logger("sidelight.x")
        log.debug("d %s", 1); log.info("i")
        print("logging" in sys.modules, log.isEnabledFor(20))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]
    assert done.stderr == ""


def test_a_warning_without_configuration_goes_where_logging_sends_it(tmp_path: Path) -> None:
    done = _python(
        """
        from sidelight._fast.logs import get_logger
        get_logger("sidelight.x").warning("careful %s", "now")
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stderr.strip() == "careful now"  # logging's last resort, as with a plain logger


def test_the_hook_log_gets_info_and_up_with_its_caller_and_opens_no_file_for_nothing(tmp_path: Path) -> None:
    done = _python(
        """
        import sys
        from sidelight._fast.logs import get_logger, hook_log
        log = get_logger("sidelight.features.digest")
        with hook_log("state/quiet.log"):
            log.debug("not kept")
        print("logging" in sys.modules)
        with hook_log("state/sidelight.log"):
            log.info("kept %d", 1)
            try:
                1 / 0
            except ZeroDivisionError:
                log.exception("failed")
        log.info("after the block")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
    assert done.stderr == ""
    assert not (tmp_path / "state" / "quiet.log").exists()
    log = tmp_path / "state" / "sidelight.log"
    text = log.read_text()
    assert "INFO sidelight.features.digest: kept 1" in text
    assert "ERROR sidelight.features.digest: failed" in text and "ZeroDivisionError" in text
    assert "after the block" not in text
    assert log.stat().st_mode & 0o777 == 0o600
    assert log.parent.stat().st_mode & 0o777 == 0o700


def test_a_hook_log_that_cannot_be_opened_prints_nothing(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file where the folder should be")
    done = _python(
        """
        from sidelight._fast.logs import get_logger, hook_log
        with hook_log("state/sidelight.log"):
            get_logger("sidelight.features.hook").error("lost, quietly")
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stderr == ""


def test_a_logger_used_before_a_hook_log_still_writes_to_it(tmp_path: Path) -> None:
    done = _python(
        """
        from sidelight._fast.logs import get_logger, hook_log
        log = get_logger("sidelight.engine.reads")
        log.warning("before")  # imports logging: this logger now delegates directly
        with hook_log("state/sidelight.log"):
            log.warning("during")
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert "WARNING sidelight.engine.reads: during" in (tmp_path / "state" / "sidelight.log").read_text()
