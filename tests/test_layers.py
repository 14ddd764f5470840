"""The structure of the house: layers that point one way, no import cycle, no module loop in the core
crate, every module placed in a layer (``tests/support/layers.py``), and docs/architecture.md's layout
true to the code: every module listed, nothing listed that does not exist."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support import layers


def test_python_layers_point_one_way_without_cycles() -> None:
    assert layers.python_findings() == []


def test_the_core_crate_has_no_module_loop() -> None:
    assert layers.rust_findings() == []


ARCHITECTURE = layers.ROOT / "docs" / "architecture.md"
#: The layout tree: the first ```text block after the "## Layout" heading.
TREE = re.compile(r"^## Layout\n.*?^```text\n(?P<body>.*?)^```\n", re.M | re.S)
#: Folders of the package listed whole, not module by module.
LISTED_WHOLE = ("agents", "templates", "integrations", "testing")


def listed_paths(text: str) -> list[str]:
    """Every path the layout tree lists, relative to the repository: a line at the left margin names a
    path, a line indented by two a path in the folder above it; a line that ends with a colon is a
    layer's heading, one indented further the rest of an explanation."""
    tree = TREE.search(text)
    assert tree is not None, "no layout tree under '## Layout'"
    listed, folder = [], ""
    for line in tree["body"].splitlines():
        entry = re.match(r"( *)(\S+)", line)
        if entry is None or len(entry[1]) > 2 or line.rstrip().endswith(":"):
            continue
        if entry[1]:
            listed.append(folder + entry[2])
        else:
            folder = entry[2] if entry[2].endswith("/") else ""
            listed.append(entry[2])
    return listed


def architecture_findings(text: str, root: Path) -> list[str]:
    """What the layout tree gets wrong about the code under ``root``: a listed path that does not exist,
    a Python module (or stub) or a Rust source file of either crate that is not listed."""
    listed = listed_paths(text)
    findings = [f"listed but not in the repository: {path}" for path in listed if not (root / path).exists()]
    package = root / "python" / "sidelight"
    modules = [*package.rglob("*.py"), *package.rglob("*.pyi")]
    crates = [*(root / "rust").glob("*/src/**/*.rs")]
    for path in sorted([*modules, *crates]):
        relative = path.relative_to(root).as_posix()
        inside = path.relative_to(package).parts if path.is_relative_to(package) else ()
        if relative in listed:
            continue
        # A subpackage's __init__.py goes with its modules; the folders of LISTED_WHOLE go whole.
        whole = len(inside) > 1 and inside[0] in LISTED_WHOLE and f"python/sidelight/{inside[0]}/" in listed
        if whole or (len(inside) > 1 and inside[-1] == "__init__.py"):
            continue
        findings.append(f"not listed: {relative}")
    return findings


def test_docs_architecture_lists_every_module_and_nothing_else() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert architecture_findings(text, layers.ROOT) == []
    assert len(listed_paths(text)) > 100  # the tree was read


def test_the_architecture_check_finds_a_missing_and_an_unlisted_module(tmp_path: Path) -> None:
    for name in (
        "python/sidelight/__init__.py",
        "python/sidelight/digest.py",
        "python/sidelight/fleet/__init__.py",
        "python/sidelight/fleet/resp.py",
        "python/sidelight/templates/pi.py",
        "rust/core/src/lib.rs",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    text = textwrap.dedent(
        """\
        ## Layout

        ```text
        rust/core/src/                the core
          lib.rs                      its modules
        python/sidelight/             the package
          __init__.py                 the public API
          features:
          fleet/resp.py               the Redis client,
                                      said on two lines: reader.py is no entry
          reader.py                   sidelight read
          templates/                  the built-in plugins
        ```
        """
    )
    assert architecture_findings(text, tmp_path) == [
        "listed but not in the repository: python/sidelight/reader.py",
        "not listed: python/sidelight/digest.py",
    ]


def _package(tmp_path: Path, modules: dict[str, str]) -> Path:
    root = tmp_path / "sidelight"
    for name, text in modules.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_check_finds_an_upward_import_a_cycle_and_a_template_import(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "def f():\n    from sidelight.features import digest  # upward, inside a function\n",
            "features/__init__.py": "",
            "features/digest.py": "import sidelight.features.reader\n",
            "features/reader.py": "from sidelight.features.digest import x\n",
            "features/hook.py": "from sidelight.templates import default\n",
            "engine/__init__.py": "",
            "engine/paths.py": "from sidelight.watch import watcher  # the engine imports an entry point\n",
            "watch/__init__.py": "",
            "watch/watcher.py": "",
            "templates/__init__.py": "",
            "templates/default.py": "",
            "templates/volute.py": "from sidelight.templates import default\n",
        },
    )
    found = "\n".join(layers.python_findings(package))
    assert "sidelight.errors (contract) imports sidelight.features.digest (features), a higher layer" in found
    assert "import cycle at run time: sidelight.features.digest -> sidelight.features.reader" in found
    assert "sidelight.features.hook imports the built-in template sidelight.templates.default" in found
    assert "sidelight.templates.volute imports the built-in template sidelight.templates.default" in found
    assert "sidelight.engine.paths (engine) imports sidelight.watch.watcher (entry), a higher layer" in found


CHECKING = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"


def test_type_checking_imports_count_for_layers_but_not_for_cycles(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "features/__init__.py": "",
            "features/digest.py": f"{CHECKING}    from sidelight.features.reader import x\n",
            "features/reader.py": "import sidelight.features.digest\n",
            "records.py": f"{CHECKING}    from sidelight.features.hook import y\n",
            "features/hook.py": "",
        },
    )
    found = layers.python_findings(package)
    assert not any("cycle" in line for line in found)
    assert any("imports for type checking sidelight.features.hook" in line for line in found)


def test_the_check_finds_a_module_loop_in_a_crate(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "formats").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod activity;\npub mod formats;\npub mod tail;\n")
    (src / "activity.rs").write_text("use crate::tail;\n")
    (src / "tail.rs").write_text("")
    (src / "formats" / "mod.rs").write_text("mod pi;\nuse crate::activity::Sink;\n")
    (src / "formats" / "pi.rs").write_text("use crate::activity::{Sink, Text};\n")
    assert layers.rust_findings(src) == []
    (src / "activity.rs").write_text("use crate::tail;\nfn f() { crate::formats::pi::decode(); }\n")
    assert layers.rust_findings(src) == [f"module loop in {src}: activity -> formats"]


def test_the_cold_start_kit_is_its_folder_and_imports_nothing_above_it(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "",
            "_fast/__init__.py": "",
            "_fast/jsonio.py": "from sidelight._fast import _typing\n",
            "_fast/_typing.py": "import sidelight._core\n",
            # a new module of the folder is in the kit's layer without being listed anywhere
            "_fast/newcomer.py": "def f():\n    from sidelight.errors import SidelightError\n",
        },
    )
    assert layers.python_findings(package) == [
        f"{package / '_fast' / 'newcomer.py'}:2: sidelight._fast.newcomer (fast) imports sidelight.errors "
        "(contract), a higher layer"
    ]


#: The plugin contract: what a plugin imports to implement hooks and make their records.
CONTRACT = ("sidelight.hookspecs", "sidelight.records")
#: What the contract must not need: the plugin manager, and the formats (with the native module).
NOT_FOR_THE_CONTRACT = ("sidelight.plugins", "sidelight.formats")


def test_the_plugin_contract_reads_without_the_plugin_manager_or_the_formats() -> None:
    code = (
        "import sys\n"
        f"import {', '.join(CONTRACT)}\n"
        f"print(sorted(m for m in {NOT_FOR_THE_CONTRACT!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
    # nor at run time later: no import inside a function reaches them, or anything above the contract
    modules = layers.package_modules()
    reached, todo = set(), list(CONTRACT)
    while todo:
        module = todo.pop()
        if module in reached or module == "sidelight._core":
            continue
        reached.add(module)
        todo.extend(i.target for i in layers.imports_of(module, modules[module], modules) if i.runtime)
    assert sorted(reached.intersection(NOT_FOR_THE_CONTRACT)) == []
    contract = layers.LAYERS.index("contract")
    above = [m for m in reached if (layers.layer_of(m, modules[m].name == "__init__.py") or 0) > contract]
    assert sorted(above) == []
