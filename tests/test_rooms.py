"""Rooms by job: the plugin contract reads without the plugin manager or the formats, and the modules
split by job (``sidelight.lifecycle``, ``sidelight.recap.build``) still give every name their callers
import from them."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

from tests.support import layers

#: The plugin contract: the records plugins exchange and the hooks they implement.
CONTRACT = ("sidelight.records", "sidelight.hookspecs")
#: What reading the contract must not load: the plugin manager, and the formats (enums, declared layouts).
NOT_FOR_THE_CONTRACT = ("sidelight.plugins", "sidelight.formats")


def test_the_plugin_contract_imports_neither_the_plugin_manager_nor_the_formats() -> None:
    code = (
        "import sys\n"
        f"for name in {CONTRACT!r}:\n"
        "    __import__(name)\n"
        "from sidelight.records import HostEvent, Session\n"
        "from sidelight.hookspecs import hookimpl, hookspec\n"
        "from pathlib import Path\n"
        "Session(key='k', name='n', path=Path('/t.jsonl'), format='f', group='g', resolver='r')\n"
        "HostEvent(host='h', event='UserPromptSubmit', session_id='s', prompt='hi')\n"
        f"print(sorted(m for m in {NOT_FOR_THE_CONTRACT!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_nothing_the_contract_imports_at_run_time_imports_them() -> None:
    """Also the imports made inside functions, which a fresh process only makes when they run."""
    modules = layers.package_modules()
    reached: set[str] = set()
    todo = list(CONTRACT)
    while todo:
        module = todo.pop()
        if module in reached or module == "sidelight._core":
            continue
        reached.add(module)
        todo.extend(i.target for i in layers.imports_of(module, modules[module], modules) if i.runtime)
    assert set(CONTRACT) <= reached
    assert sorted(reached.intersection(NOT_FOR_THE_CONTRACT)) == []


#: The modules split by job, whose callers import from them as before.
SPLIT = ("sidelight.lifecycle", "sidelight.recap.build")


def _names_imported_from(modules: tuple[str, ...]) -> dict[str, set[str]]:
    """Every name the package and the tests import from each of ``modules`` (``from M import name``)."""
    found: dict[str, set[str]] = {module: set() for module in modules}
    for folder in (layers.PACKAGE, layers.ROOT / "tests"):
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module in found:
                    found[node.module].update(alias.name for alias in node.names)
    return found


def test_the_split_modules_still_give_every_name_their_callers_import() -> None:
    imported = _names_imported_from(SPLIT)
    assert {"SessionTracker", "archive_session", "judge_session"} <= imported["sidelight.lifecycle"]
    assert {"build_recap", "extractive_summary", "Recap"} <= imported["sidelight.recap.build"]
    for module, names in imported.items():
        loaded = importlib.import_module(module)
        missing = sorted(name for name in names if not hasattr(loaded, name))
        assert missing == [], module
        assert set(names) <= set(loaded.__all__), module
