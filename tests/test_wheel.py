"""The wheel `make wheel` builds installs and runs where no Rust toolchain is on PATH.

``tests/support/wheel_smoke.sh`` does the work (``.ci/run`` calls it right after ``make wheel``, before
``make test``): a fresh venv, ``pip install`` of the wheel with PATH=/usr/bin:/bin, then ``sidelight
--version``, a scan and a Claude Code prompt hook in a throwaway HOME. Here it runs on the wheel in dist/,
when there is one.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

SMOKE = ROOT / "tests" / "support" / "wheel_smoke.sh"
NO_RUST_PATH = "/usr/bin:/bin"
WHEELS = sorted((ROOT / "dist").glob("sidelight-*.whl"))


@pytest.mark.skipif(not WHEELS, reason="no wheel in dist/: `make wheel` builds one (.ci/run does)")
@pytest.mark.skipif(
    any(shutil.which(tool, path=NO_RUST_PATH) for tool in ("cargo", "rustc")),
    reason=f"cargo or rustc is on {NO_RUST_PATH}: the wheel cannot be tried without Rust here",
)
def test_the_wheel_installs_and_runs_without_rust() -> None:
    done = subprocess.run(
        ["bash", str(SMOKE), str(WHEELS[-1])], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wheel smoke passed" in done.stdout


def test_the_smoke_test_refuses_a_missing_wheel(tmp_path) -> None:
    done = subprocess.run(
        ["bash", str(SMOKE), str(tmp_path / "sidelight-0.0.0-none.whl")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("wheel smoke: no wheel at ")


def test_make_builds_fail_without_cargo_instead_of_downloading_rust() -> None:
    # maturin's build backend downloads a Rust toolchain when cargo is missing, unless this is set.
    done = subprocess.run(
        ["make", "-s", "--eval", "maturin-env: ; @echo $$MATURIN_NO_INSTALL_RUST", "maturin-env"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "1\n"), done.stderr
