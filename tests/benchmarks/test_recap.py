"""Recap time and memory: the 2.4 MB real Pi session and a generated Claude-Code-shaped session of
200 MB (``SIDELIGHT_BENCH_MB``; 8 MB in smoke mode).

Group ``recap``: one peer per transcript, each built with the default settings (1,000-token budget, the
built-in estimate, summarizer and embedder). Correctness goes to ``extra_info`` and is asserted: the
budget holds, the recap names the files edited last and the last request. Group ``recap-memory``: the
peak RSS of a process that builds the recap of a small and of a 4x larger generated transcript; the
growth must stay far below the file's growth (the transcript is streamed, only chunk summaries kept).
No time is asserted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sidelight.features.recap.build import Recap, build_recap
from tests.benchmarks.corpus import MB, corpus
from tests.conftest import PI_CORPUS


def _check(recap: Recap) -> None:
    assert recap.tokens <= recap.budget
    assert recap.last_request and recap.files_edited
    assert recap.files_edited[0] in recap.text
    assert "\n## Unfinished\n- " in recap.text or "\n## How it ended\n- " in recap.text


@pytest.mark.parametrize("peer", ["pi-2.4mb", "generated"])
def test_recap_time(benchmark: Any, peer: str, shape_mb: Any) -> None:
    benchmark.group = "recap"
    if peer == "pi-2.4mb":
        path = PI_CORPUS / "before-compaction.jsonl"
    else:
        path = corpus("realistic", shape_mb("realistic"))[0]
    size = path.stat().st_size
    rounds = 1 if size > 50 * MB else 3
    recap = benchmark.pedantic(build_recap, args=(path,), rounds=rounds, iterations=1)
    _check(recap)
    benchmark.extra_info.update(
        file_mb=round(size / MB, 1),
        lines=recap.lines_read,
        chunks=len(recap.chunks),
        tokens=recap.tokens,
        files_edited_last=list(recap.files_edited[:2]),
    )
    if benchmark.stats is not None:
        median = benchmark.stats.stats.median
        benchmark.extra_info["mb_per_s"] = round(size / MB / median, 1)


PEAK_RSS = """
import sys
from pathlib import Path
from sidelight.features.recap.build import build_recap
if sys.argv[1] != "-":
    recap = build_recap(sys.argv[1])
    assert recap.tokens <= recap.budget
status = Path("/proc/self/status").read_text()
print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
"""


def _peak_rss_kb(path: str) -> int:
    out = subprocess.run([sys.executable, "-c", PEAK_RSS, path], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def test_recap_memory_is_flat_in_file_size(benchmark: Any, benchmarks_enabled: bool) -> None:
    benchmark.group = "recap-memory"
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux) for the peak RSS of a process")
    small_mb, large_mb = (50, 200) if benchmarks_enabled else (2, 8)
    small, large = corpus("realistic", small_mb)[0], corpus("realistic", large_mb)[0]
    small_kb, large_kb = benchmark.pedantic(
        lambda: (_peak_rss_kb(str(small)), _peak_rss_kb(str(large))), rounds=1
    )
    delta_file_kb = (large.stat().st_size - small.stat().st_size) // 1024
    benchmark.extra_info.update(
        import_only_kb=_peak_rss_kb("-"),
        small_file_mb=round(small.stat().st_size / MB, 1),
        small_peak_kb=small_kb,
        large_file_mb=round(large.stat().st_size / MB, 1),
        large_peak_kb=large_kb,
        growth_kb=large_kb - small_kb,
    )
    assert large_kb - small_kb < max(32 * 1024, delta_file_kb // 4), benchmark.extra_info
