"""The layers of ``python/sidelight`` and the module graph of the core crate, checked (``make lint``).

Python: every module of the package sits in one layer of :data:`LAYERS`, from the cold-start kit
(``sidelight._fast``, every module of its folder) and the contract (records, formats, plugins, state
files) through the engine (discovery, reads) and the features (digest, reader, history, recap, fleet…)
up to the entry points (the hook, the watcher, the templates) and the command line. An import made at
run time (at module level or inside a function) may point down or sideways, never up, and the imports
made at run time form no cycle. Imports made for type checking only may point sideways or down too,
never up. The built-in templates are plugins: only the plugin manager loads them (by name); no module
imports one, not even another template.

Rust: the top-level modules of ``rust/sidelight-core/src`` (``formats/`` counts as one) use each other
without a loop.

``python -m tests.support.layers`` prints every finding and exits 1 when there is one.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "sidelight"
CORE = ROOT / "rust" / "sidelight-core" / "src"

#: The layers, lowest first. A module's layer is where it sits in the package (:func:`layer_of`):
#: ``_core`` is native; the folder ``_fast/`` is the cold-start kit (``sidelight._fast`` says why: it
#: imports nothing of sidelight but itself and the native module); the package's top-level modules and
#: ``install/`` (what an installer plugin imports) are the contract plugins program against, with
#: ``agents/__init__.py`` (the static index of the built-in agents, data every layer reads); ``engine/``
#: and ``features/`` are those layers; ``dashboard/`` shows what the entry points read (only the command
#: line imports it, lazily: its web framework is an extra); ``cli/`` and ``__main__`` are the command
#: line; every other folder (the watcher, the agents, the templates, the integrations, the testing kit)
#: and the package itself are the entry points.
LAYERS: tuple[str, ...] = ("native", "fast", "contract", "engine", "features", "entry", "dashboard", "cli")

#: The folders named after their layer (the first folder of a module's path below the package).
_FOLDER_LAYERS = {
    "_fast": "fast",
    "install": "contract",
    "engine": "engine",
    "features": "features",
    "dashboard": "dashboard",
    "cli": "cli",
}


#: The packages of built-in plugins: only the plugin manager loads their modules (by name); a module of
#: one agent's folder may import its own folder's others. ``sidelight.agents`` itself, the index of the
#: built-in agents, is data every layer may read.
PLUGIN_PACKAGES = ("sidelight.templates", "sidelight.agents")


def _plugin_unit(module: str) -> str | None:
    """The plugin ``module`` belongs to (``sidelight.agents.codex`` for ``sidelight.agents.codex.x``)."""
    for package in PLUGIN_PACKAGES:
        if module.startswith(package + "."):
            return ".".join(module.split(".")[:3])
    return None


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


@dataclass(frozen=True, slots=True)
class Import:
    source: str
    target: str
    line: int
    runtime: bool


def layer_of(module: str, package: bool = False) -> int | None:
    """The index in :data:`LAYERS` of ``module`` (a package's ``__init__`` when ``package``), from where
    it sits in the package (``None``: not sidelight's)."""
    parts = module.split(".")
    if parts[0] != "sidelight":
        return None
    if module == "sidelight._core":
        name = "native"
    elif module == "sidelight":
        name = "entry"
    elif module == "sidelight.__main__":
        name = "cli"
    elif module == "sidelight.agents":
        name = "contract"
    elif parts[1] in _FOLDER_LAYERS:
        name = _FOLDER_LAYERS[parts[1]]
    elif len(parts) == 2 and not package:
        name = "contract"
    else:
        name = "entry"
    return LAYERS.index(name)


def package_modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name, with ``_core`` (native, so without a ``.py``)."""
    modules = {"sidelight._core": package / "_core.pyi"}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The package modules ``module`` imports: at run time, or for type checking only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking = _type_checking_nodes(tree)
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            # `from sidelight import _core` imports the submodule; `from sidelight import x` a name.
            names = [f"{origin}.{alias.name}" for alias in node.names]
            names = [n if n in modules else origin for n in names]
        for name in names:
            if name != "sidelight" and not name.startswith("sidelight."):
                continue
            target = resolve(name)
            if target is not None and target != module:
                found.append(Import(module, target, node.lineno, id(node) not in checking))
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def python_findings(package: Path = PACKAGE) -> list[str]:
    """What breaks the layers of the package, one line each (empty: nothing)."""
    modules = package_modules(package)
    findings: list[str] = []
    runtime: dict[str, set[str]] = {name: set() for name in modules}

    def layer(name: str) -> int | None:
        return layer_of(name, package=name in modules and modules[name].name == "__init__.py")

    for module, path in modules.items():
        if module == "sidelight._core":
            continue
        for imp in imports_of(module, path, modules):
            where = f"{_shown(path)}:{imp.line}"
            if imp.runtime:
                runtime[module].add(imp.target)
            source_layer, target_layer = layer(module), layer(imp.target)
            if source_layer is not None and target_layer is not None and target_layer > source_layer:
                kind = "imports" if imp.runtime else "imports for type checking"
                findings.append(
                    f"{where}: {module} ({LAYERS[source_layer]}) {kind} {imp.target} "
                    f"({LAYERS[target_layer]}), a higher layer"
                )
            unit = _plugin_unit(imp.target)
            if unit is not None and unit != _plugin_unit(module):
                findings.append(
                    f"{where}: {module} imports the built-in template {imp.target}; only the plugin "
                    "manager loads templates (by name)"
                )
    findings.extend(f"import cycle at run time: {' -> '.join(c)}" for c in _cycles(runtime))
    return findings


#: ``crate::name`` in a use declaration or a path.
_CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
_SUPER_PATH = re.compile(r"\bsuper::([a-z_][a-z0-9_]*)")


def crate_modules(src: Path = CORE) -> dict[str, list[Path]]:
    """The top-level modules of a crate's ``src`` and their files (a folder module is one module)."""
    modules: dict[str, list[Path]] = {}
    for path in sorted(src.rglob("*.rs")):
        relative = path.relative_to(src)
        top = relative.parts[0].removesuffix(".rs")
        modules.setdefault(top, []).append(path)
    return modules


def rust_findings(src: Path = CORE) -> list[str]:
    """The loops between the top-level modules of the core crate (``lib`` is the root, left out)."""
    modules = crate_modules(src)
    graph: dict[str, set[str]] = {name: set() for name in modules if name not in ("lib", "main")}
    for name, paths in modules.items():
        if name not in graph:
            continue
        for path in paths:
            text = path.read_text(encoding="utf-8")
            targets = set(_CRATE_PATH.findall(text))
            if path.parent == src:  # `super::` of a top-level file is the crate root
                targets |= set(_SUPER_PATH.findall(text))
            graph[name] |= {t for t in targets if t in graph and t != name}
    return [f"module loop in {_shown(src)}: {' -> '.join(c)}" for c in _cycles(graph)]


def main() -> int:
    findings = python_findings() + rust_findings()
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} layering problems", file=sys.stderr)
        return 1
    print("layers: no upward import, no import cycle in python/sidelight; no module loop in the core crate")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
