"""Rooms by job: the modules split by job (``sidelight.features.lifecycle``,
``sidelight.features.recap.build``) still give
every name their callers import from them.

That the plugin contract (records, hookspecs) reads without the plugin manager or the formats is
``tests/test_layers.py::test_the_plugin_contract_reads_without_the_plugin_manager_or_the_formats``."""

from __future__ import annotations

import ast
import importlib

from tests.support import layers

#: The modules split by job, whose callers import from them as before.
SPLIT = ("sidelight.features.lifecycle", "sidelight.features.recap.build")


def _names_imported_from(modules: tuple[str, ...]) -> dict[str, set[str]]:
    """Every name the package and the tests import from each of ``modules`` (``from M import name``)."""
    found: dict[str, set[str]] = {module: set() for module in modules}
    for folder in (layers.PACKAGE, layers.ROOT / "tests"):
        for path in folder.rglob("*.py"):
            # the real agent CLIs' packages (tests/e2e/clients: npm's, and the Kimi CLI's venv)
            if "node_modules" in path.parts or "kimi-venv" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module in found:
                    found[node.module].update(alias.name for alias in node.names)
    return found


def test_the_split_modules_still_give_every_name_their_callers_import() -> None:
    imported = _names_imported_from(SPLIT)
    # also names imported inside functions only (the watcher archives an ended session)
    assert {"SessionTracker", "archive_session", "judge_session"} <= imported["sidelight.features.lifecycle"]
    assert {"build_recap", "extractive_summary", "Recap"} <= imported["sidelight.features.recap.build"]
    for module, names in imported.items():
        loaded = importlib.import_module(module)
        missing = sorted(name for name in names if not hasattr(loaded, name))
        assert missing == [], module
        assert names <= set(loaded.__all__), module
