"""Every hook is documented, tested and has a runnable example (after datasette's test_docs.py).

For each hookspec in :mod:`sidelight.hookspecs`:

- ``docs/plugins.md`` has a ``## sidelight_<name>`` section whose signature block matches
  ``inspect.signature`` and that names every field of the record the hook returns;
- some test file defines ``test_hook_sidelight_<name>``;
- the example in the hookspec's docstring, and the one in its docs section, run: each is executed as
  a module, registered in a fresh plugin manager, and the hook's records are used.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from sidelight import _core, hookspecs
from sidelight.config import Settings
from sidelight.features.recap.collapse import Chunk, Line
from sidelight.plugins import Plugins
from sidelight.records import (
    HOOK_ABILITIES,
    HOOK_MOMENTS,
    AgentSpec,
    ChunkSummarizerSpec,
    EmbedderSpec,
    FormatSpec,
    HostEvent,
    InjectorSpec,
    InstallerSpec,
    ResolverSpec,
    Session,
    SessionActivity,
    SinkEvent,
    SinkSpec,
    SummarizerSpec,
    TokenCounterSpec,
)
from tests.conftest import ROOT

DOCS = ROOT / "docs" / "plugins.md"
TESTS = ROOT / "tests"

HOOKS = sorted(
    name for name, value in vars(hookspecs).items() if name.startswith("sidelight_") and callable(value)
)
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```\n", re.M | re.S)


def test_there_are_hooks() -> None:
    assert HOOKS == [
        "sidelight_agents",
        "sidelight_chunk_summarizers",
        "sidelight_embedders",
        "sidelight_formats",
        "sidelight_injectors",
        "sidelight_installers",
        "sidelight_resolvers",
        "sidelight_sinks",
        "sidelight_summarizers",
        "sidelight_token_counters",
    ]


def sections() -> dict[str, str]:
    """``## heading`` → the text up to the next ``## ``."""
    text = DOCS.read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def expected_signature(name: str) -> str:
    """``sidelight_formats() -> Iterable[FormatSpec]``: the signature as the docs spell it."""
    signature = str(inspect.signature(getattr(hookspecs, name)))
    return name + signature.replace("'", "")  # annotations are strings (from __future__ import annotations)


def record_type(name: str) -> type[Any]:
    """The record class a hook returns: ``Iterable[FormatSpec]`` → ``FormatSpec``."""
    hints = typing.get_type_hints(getattr(hookspecs, name))
    (record,) = typing.get_args(hints["return"])
    assert dataclasses.is_dataclass(record)
    return typing.cast(type[Any], record)


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented(name: str) -> None:
    section = sections().get(name)
    assert section is not None, f"docs/plugins.md has no '## {name}' section"
    blocks = [m["body"].strip() for m in FENCE.finditer(section)]
    assert blocks, f"the {name} section has no code block"
    assert blocks[0] == expected_signature(name), (
        f"the {name} section's signature is {blocks[0]!r}; the hookspec says {expected_signature(name)!r}"
    )


@pytest.mark.parametrize("name", HOOKS)
def test_hook_records_are_documented(name: str) -> None:
    section = sections()[name]
    record = record_type(name)
    missing = [f.name for f in dataclasses.fields(record) if f"`{f.name}`" not in section]
    assert not missing, f"the {name} section does not describe {record.__name__} fields {missing}"


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_test(name: str) -> None:
    pattern = re.compile(rf"^\s*def test_hook_{name}\b", re.M)
    files = [path for path in TESTS.rglob("test_*.py") if pattern.search(path.read_text(encoding="utf-8"))]
    assert files, f"no test named test_hook_{name} in tests/"


def docstring_example(name: str) -> str:
    doc = inspect.getdoc(getattr(hookspecs, name)) or ""
    assert "Example::" in doc, f"{name}'s docstring has no 'Example::'"
    return textwrap.dedent(doc.split("Example::", 1)[1]).strip("\n") + "\n"


def docs_example(name: str) -> str:
    examples = [m["body"] for m in FENCE.finditer(sections()[name]) if "@hookimpl" in m["body"]]
    assert len(examples) == 1, f"the {name} section should have one example with @hookimpl"
    return examples[0]


def load_example(source: str, label: str) -> Plugins:
    """Runs ``source`` as a module and registers it, alone, in a fresh plugin manager."""
    module = types.ModuleType(f"example_{label}")
    exec(compile(source, f"<{label}>", "exec"), module.__dict__)
    plugins = Plugins(builtins=(), entry_points=False)
    plugins.register(module, name=label)
    return plugins


def exercise(name: str, plugins: Plugins, tmp_path: Path) -> None:
    """Gets the hook's records from the manager and uses each of them once."""
    family = name.removeprefix("sidelight_")
    records = list(getattr(plugins, family)().values())
    assert records, f"the {name} example provides no record"
    settings = Settings.load(env={}, home=tmp_path)
    session = Session(
        key="k", name="other", path=tmp_path / "s.jsonl", format="claude-code", group="g", resolver="r"
    )
    for record in records:
        assert isinstance(record, record_type(name))
        if isinstance(record, FormatSpec):
            assert record.decoder in _core.FORMATS
            assert set(record.categories.values()) <= {"edit", "read", "command", "other"}
        elif isinstance(record, ResolverSpec):
            assert list(record.list_sessions(settings)) == []  # an empty home has no sessions
            event = HostEvent(host="x", event="UserPromptSubmit", transcript_path=tmp_path / "none.jsonl")
            assert record.current(event, settings) is None
            assert all(isinstance(root, Path) for root in record.roots(settings))
        elif isinstance(record, SummarizerSpec):
            assert record.summarize(SessionActivity(session=session)) is None
            line = record.summarize(SessionActivity(session=session, user_messages=2, categories={"edit": 1}))
            assert isinstance(line, str) and "other" in line
        elif isinstance(record, InjectorSpec):
            assert record.read_event({"unrelated": True}) is None
            host_event = record.read_event({"my_agent_session": "s1", "prompt": "hi"})
            assert isinstance(host_event, HostEvent)
            assert record.render(host_event, None) is None
            assert isinstance(record.render(host_event, "[Session Activity]"), str)
        elif isinstance(record, InstallerSpec):
            home = tmp_path / "installer-home"
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("HOME", str(home))
                patch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "installer-state"))
                (done,) = record.install("user")
                assert done.changed and done.path is not None and done.path.is_file()
                (undone,) = record.uninstall("user")
                assert undone.changed and not home.exists()  # the folders install made are gone too
        elif isinstance(record, SinkSpec):
            record.emit(SinkEvent(kind="activity", session=session))
        elif isinstance(record, TokenCounterSpec):
            assert record.count("") == 0 and record.count("a few words here") > 0
        elif isinstance(record, EmbedderSpec):
            vectors = record.embed(["fix the test", "edit the docs"])
            assert len(vectors) == 2 and len(vectors[0]) == len(vectors[1]) > 0
        elif isinstance(record, AgentSpec):
            assert record.name and record.title and record.timeout_unit in ("s", "ms", "")
            moments = [hook.moment for hook in record.hooks]
            assert len(moments) == len(set(moments)) and set(moments) <= set(HOOK_MOMENTS)
            assert all(hook.can <= set(HOOK_ABILITIES) for hook in record.hooks)
            if record.injected_values is not None:
                assert list(record.injected_values({"type": "unrelated"})) == []
        elif isinstance(record, ChunkSummarizerSpec):
            chunk = Chunk(index=0, lines=(Line("consequential", "Edited a.py.", path="a.py"),))
            assert isinstance(record.summarize(chunk), str)
        else:  # pragma: no cover
            raise AssertionError(f"unexpected record {record!r}")


@pytest.mark.parametrize("name", HOOKS)
def test_hook_docstring_example_runs(name: str, tmp_path: Path) -> None:
    exercise(name, load_example(docstring_example(name), f"{name}_docstring"), tmp_path)


@pytest.mark.parametrize("name", HOOKS)
def test_hook_docs_example_runs(name: str, tmp_path: Path) -> None:
    exercise(name, load_example(docs_example(name), f"{name}_docs"), tmp_path)


def test_packaging_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert "[project.entry-points.sidelight]" in text
    assert f"group `{hookspecs.PROJECT}`" in text
    for topic in ("SIDELIGHT_PLUGINS", "check_pending", "Plugins.broken", "summarizers are asked in order"):
        assert topic in text, f"docs/plugins.md does not mention {topic}"


EXAMPLE = ROOT / "examples" / "sidelight-kiro"


@pytest.mark.parametrize("doc", ["plugins.md", "tutorial.md"])
def test_the_example_layout_in_the_docs_is_the_example_s(doc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Kiro layout the docs show is the one examples/sidelight-kiro declares (and its tests run)."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.delitem(sys.modules, "sidelight_kiro", raising=False)
    import sidelight_kiro  # type: ignore[import-not-found]

    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    (block,) = [
        m["body"] for m in FENCE.finditer(text) if m["lang"] == "python" and "LAYOUT = Layout(" in m["body"]
    ]
    namespace: dict[str, Any] = {}
    exec(compile(block, f"docs/{doc}", "exec"), namespace)  # the docs' own example, run as written
    assert namespace["LAYOUT"] == sidelight_kiro.LAYOUT
    if "FORMAT" in namespace:
        # The tutorial's categories are a part of the example's, each as the example maps it.
        shown = dict(namespace["FORMAT"].categories)
        assert shown.items() <= sidelight_kiro.CATEGORIES.items()


def test_the_tutorial_s_entry_point_is_the_example_s() -> None:
    entry = 'kiro = "sidelight_kiro"'
    assert entry in (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert entry in (EXAMPLE / "pyproject.toml").read_text(encoding="utf-8")
