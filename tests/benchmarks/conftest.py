"""Fixtures of the throughput benchmarks: corpus sizes that follow whether benchmarks are enabled."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from tests.benchmarks.corpus import corpus
from tests.benchmarks.peers import reference_orjson

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

#: Corpus size in MB per shape: (when benchmarks run for real, when they run once as smoke tests).
#: ``realistic``, ``few_huge`` are ``SIDELIGHT_BENCH_MB`` (default 200) when enabled.
SMOKE_MB = {
    "realistic": 8,
    "many_small": 2,
    "few_huge": 4,
    "short_lines": 2,
    "escape_heavy": 3,
    "adversarial": 2,
}


def bench_mb() -> float:
    return float(os.environ.get("SIDELIGHT_BENCH_MB", "200"))


def enabled_mb(shape: str) -> float:
    mb = bench_mb()
    return {
        "realistic": mb,
        "many_small": 40,  # 2,000 sessions of about 20 KB
        "few_huge": mb,
        "short_lines": mb / 4,
        "escape_heavy": mb / 2,
        "adversarial": mb / 10,
    }[shape]


@pytest.fixture(scope="session")
def benchmarks_enabled(request: pytest.FixtureRequest) -> bool:
    session = getattr(request.config, "_benchmarksession", None)
    return session is not None and not session.disabled


@pytest.fixture(scope="session")
def shape_mb(benchmarks_enabled: bool) -> Callable[[str], float]:
    def size(shape: str) -> float:
        return enabled_mb(shape) if benchmarks_enabled else SMOKE_MB[shape]

    return size


@pytest.fixture(scope="session")
def corpora(shape_mb: Callable[[str], float]) -> Callable[[str], list[Path]]:
    """``corpora(shape)``: the files of a shape at the size for this run (generated once, cached)."""
    cache: dict[str, list[Path]] = {}

    def files(shape: str) -> list[Path]:
        if shape not in cache:
            cache[shape] = corpus(shape, shape_mb(shape))
        return cache[shape]

    return files


@pytest.fixture(scope="session")
def expected(corpora: Callable[[str], list[Path]]) -> Callable[[str], list[dict[str, Any]]]:
    """``expected(shape)``: the reference reader's results (with orjson), computed once per shape."""
    cache: dict[str, list[dict[str, Any]]] = {}

    def results(shape: str) -> list[dict[str, Any]]:
        if shape not in cache:
            cache[shape] = reference_orjson(corpora(shape))
        return cache[shape]

    return results
