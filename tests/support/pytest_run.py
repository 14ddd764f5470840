"""Running pytest on a test file in a fresh process, as a project that uses sidelight's fixtures would."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_pytest(test: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -q test`` in ``test``'s folder with ``env``, none of this project's options."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", str(test)],
        cwd=test.parent,
        env=dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
