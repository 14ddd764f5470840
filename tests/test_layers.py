"""The structure of the house: layers that point one way, no import cycle, no module loop in the core
crate, every module placed in a layer and listed in the README's Layout (``tests/support/layers.py``)."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

from tests.support import layers

if TYPE_CHECKING:
    from pathlib import Path


def test_python_layers_point_one_way_without_cycles() -> None:
    assert layers.python_findings() == []


def test_the_core_crate_has_no_module_loop() -> None:
    assert layers.rust_findings() == []


def test_every_module_is_listed_in_the_readme_layout() -> None:
    readme = (layers.ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## Layout") : readme.index("## Development")]
    listed = set(re.findall(r"[\w/]+\.(?:py|pyi)\b", layout))
    names = {path.name for path in layers.PACKAGE.rglob("*.py")}
    folders = {f"{path.parent.name}/" for path in layers.PACKAGE.rglob("*.py")}
    missing = []
    for path in sorted(layers.PACKAGE.rglob("*.py")):
        relative = path.relative_to(layers.PACKAGE).as_posix()
        top = relative.split("/", 1)[0]
        # A wing's modules are listed one by one; templates/, integrations/ and testing/ as folders.
        if relative in listed or (relative.endswith("__init__.py") and relative != "__init__.py"):
            continue
        if top in ("templates", "integrations", "testing") and f"{top}/" in layout:
            continue
        missing.append(relative)
    assert missing == [], f"not in the README's Layout: {missing}"
    assert names and folders  # the walk found the package


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
            "errors.py": "def f():\n    from sidelight import digest  # upward, inside a function\n",
            "digest.py": "import sidelight.reader\n",
            "reader.py": "from sidelight.digest import x\n",
            "hook.py": "from sidelight.templates import default\n",
            "templates/__init__.py": "",
            "templates/default.py": "",
            "templates/volute.py": "from sidelight.templates import default\n",
            "mystery.py": "",
        },
    )
    found = "\n".join(layers.python_findings(package))
    assert "sidelight.errors (contract) imports sidelight.digest (features), a higher layer" in found
    assert "import cycle at run time: sidelight.digest -> sidelight.reader" in found
    assert "sidelight.hook imports the built-in template sidelight.templates.default" in found
    assert "sidelight.templates.volute imports the built-in template sidelight.templates.default" in found
    assert "sidelight.mystery: in no layer" in found


CHECKING = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"


def test_type_checking_imports_count_for_layers_but_not_for_cycles(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "digest.py": f"{CHECKING}    from sidelight.reader import x\n",
            "reader.py": "import sidelight.digest\n",
            "records.py": f"{CHECKING}    from sidelight.hook import y\n",
            "hook.py": "",
        },
    )
    found = layers.python_findings(package)
    assert not any("cycle" in line for line in found)
    assert any("imports for type checking sidelight.hook" in line for line in found)


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
