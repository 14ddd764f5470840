"""The plugin manager: records per hook, broken plugins, conflicts, SIDELIGHT_PLUGINS, `sidelight plugins`.

Every test builds its own manager (``Plugins(builtins=(), entry_points=False)``) or a fake installed
distribution on a temporary ``sys.path`` entry; none touches the process-wide one.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
import time
import types
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest

from sidelight import agents as agents_index
from sidelight import hookspecs
from sidelight import plugins as plugins_module
from sidelight.agents import BUILTIN_AGENTS
from sidelight.config import Settings
from sidelight.hookspecs import hookimpl
from sidelight.plugins import BUILTINS, PluginConflictError, Plugins
from sidelight.records import (
    FormatSpec,
    HostEvent,
    InjectorSpec,
    ResolverSpec,
    Session,
    SessionActivity,
    SinkEvent,
    SinkSpec,
    SummarizerSpec,
)


def fresh() -> Plugins:
    return Plugins(builtins=(), entry_points=False)


def plugin(**hooks: Any) -> types.SimpleNamespace:
    """A plugin object whose hooks return the given records."""
    namespace = types.SimpleNamespace()
    for name, records in hooks.items():

        def impl(records: Any = records) -> Any:
            return list(records)

        impl.__name__ = name
        setattr(namespace, name, hookimpl(impl))
    return namespace


def session(name: str, tmp_path: Path) -> Session:
    return Session(
        key=f"test:{name}",
        name=name,
        path=tmp_path / f"{name}.jsonl",
        format="fake",
        group="g",
        resolver="fake",
    )


# --- one test per hook -----------------------------------------------------------------------------


def test_hook_sidelight_formats() -> None:
    plugins = fresh()
    plugins.register(
        plugin(sidelight_formats=[FormatSpec(name="one", decoder="pi", categories={"Patch": "edit"})])
    )
    plugins.register(
        plugin(sidelight_formats=[FormatSpec(name="two", decoder="pi", categories={"run": "command"})])
    )
    formats = plugins.formats()
    assert list(formats) == ["two", "one"]  # the newest registered first
    assert all(isinstance(spec, FormatSpec) for spec in formats.values())
    assert formats["one"].decoder == "pi"
    assert plugins.categories() == {"pi": {"patch": "edit", "run": "command"}}


def test_hook_sidelight_resolvers(tmp_path: Path) -> None:
    known = [session("a", tmp_path), session("b", tmp_path)]
    resolver = ResolverSpec(
        name="fake",
        list_sessions=lambda settings: iter(known),
        current=lambda event, settings: known[0] if event.session_id == "a" else None,
    )
    plugins = fresh()
    plugins.register(plugin(sidelight_resolvers=[resolver]))
    (spec,) = plugins.resolvers().values()
    assert isinstance(spec, ResolverSpec)
    settings = Settings.load(env={}, home=tmp_path)
    assert [s.name for s in spec.list_sessions(settings)] == ["a", "b"]
    assert spec.current(HostEvent(host="x", event="UserPromptSubmit", session_id="a"), settings) == known[0]
    assert list(spec.roots(settings)) == []


def test_hook_sidelight_summarizers(tmp_path: Path) -> None:
    plugins = fresh()
    plugins.register(plugin(sidelight_summarizers=[SummarizerSpec(name="late", summarize=lambda a: "late")]))
    plugins.register(plugin(sidelight_summarizers=[SummarizerSpec(name="early", summarize=lambda a: None)]))
    summarizers = plugins.summarizers()
    assert list(summarizers) == ["early", "late"]
    activity = SessionActivity(session=session("a", tmp_path), user_messages=1)
    first = next(line for spec in summarizers.values() if (line := spec.summarize(activity)) is not None)
    assert first == "late"


def test_hook_sidelight_summarizers_builtin_default_is_asked_last() -> None:
    plugins = Plugins(entry_points=False)
    plugins.register(plugin(sidelight_summarizers=[SummarizerSpec(name="mine", summarize=lambda a: None)]))
    names = list(plugins.summarizers())
    assert names[0] == "mine"
    if len(names) > 1:  # the built-in default, once it is written, comes last
        assert names[-1] == "default"


def test_hook_sidelight_injectors() -> None:
    def read_event(payload: Any) -> HostEvent | None:
        return HostEvent(host="fake", event="UserPromptSubmit", raw=payload) if "fake" in payload else None

    injector = InjectorSpec(name="fake", read_event=read_event, render=lambda e, text: text and f"<{text}>")
    plugins = fresh()
    plugins.register(plugin(sidelight_injectors=[injector]))
    spec = plugins.injectors()["fake"]
    assert isinstance(spec, InjectorSpec)
    event = spec.read_event({"fake": 1})
    assert event is not None and event.host == "fake"
    assert spec.read_event({}) is None
    assert spec.render(event, "news") == "<news>"
    assert spec.render(event, None) is None


def test_hook_sidelight_sinks(tmp_path: Path) -> None:
    seen: list[SinkEvent] = []
    plugins = fresh()
    plugins.register(plugin(sidelight_sinks=[SinkSpec(name="list", emit=seen.append)]))
    plugins.register(plugin(sidelight_sinks=[SinkSpec(name="null", emit=lambda event: None)]))
    sinks = plugins.sinks()
    assert list(sinks) == ["null", "list"]
    event = SinkEvent(kind="activity", session=session("a", tmp_path))
    for sink in sinks.values():
        sink.emit(event)
    assert seen == [event]


# --- failures ---------------------------------------------------------------------------------------


def test_a_hook_that_raises_is_skipped(caplog: pytest.LogCaptureFixture) -> None:
    @hookimpl
    def sidelight_formats() -> Any:
        raise RuntimeError("boom")

    plugins = fresh()
    plugins.register(types.SimpleNamespace(sidelight_formats=sidelight_formats), name="raiser")
    plugins.register(plugin(sidelight_formats=[FormatSpec(name="ok", decoder="pi")]), name="fine")
    with caplog.at_level(logging.WARNING, logger="sidelight"):
        assert list(plugins.formats()) == ["ok"]
    assert [(b.name, b.error) for b in plugins.broken] == [
        ("raiser", "sidelight_formats: RuntimeError: boom")
    ]
    assert "raiser" in caplog.text and "boom" in caplog.text


def test_two_plugins_claiming_one_name_is_an_error() -> None:
    plugins = fresh()
    plugins.register(plugin(sidelight_formats=[FormatSpec(name="pi", decoder="pi")]), name="first_plugin")
    plugins.register(plugin(sidelight_formats=[FormatSpec(name="pi", decoder="pi")]), name="second_plugin")
    with pytest.raises(PluginConflictError, match="first_plugin") as raised:
        plugins.formats()
    assert "second_plugin" in str(raised.value) and "'pi'" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_check_pending_catches_a_misspelled_hook() -> None:
    @hookimpl
    def sidelight_formatz() -> Any:  # a typo: no such hook
        return []

    with pytest.raises(pluggy.PluginValidationError, match="sidelight_formatz"):
        fresh().register(types.SimpleNamespace(sidelight_formatz=sidelight_formatz), name="typo")


# --- entry points: fake installed distributions -----------------------------------------------------


#: The module name of the last distribution made.
GOOD_MODULE: list[str] = [""]


def make_distribution(root: Path, name: str, source: str, version: str = "1.0") -> str:
    """A distribution ``name`` in ``root`` (a ``sys.path`` entry) whose entry point (group ``sidelight``,
    named ``name``) is a new module with ``source``. Returns the module name."""
    module = f"{name}_{uuid.uuid4().hex[:8]}"
    GOOD_MODULE[0] = module
    (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[sidelight]\n{name} = {module}\n", encoding="utf-8")
    return module


GOOD = """
    from sidelight.hookspecs import hookimpl
    from sidelight.records import FormatSpec

    @hookimpl
    def sidelight_formats():
        return [FormatSpec(name="{format}", decoder="claude-code")]
"""
BROKEN = """
    raise ImportError("this plugin needs a package that is not installed")
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary ``sys.path`` entry for fake distributions; their modules are forgotten afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("SIDELIGHT_PLUGINS", raising=False)
    # where the entry points found are kept: not made here, so kept only by the tests that make it
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))
    before = set(sys.modules)
    yield root
    for name in set(sys.modules) - before:
        if hasattr(sys.modules[name], "__file__") and str(root) in str(sys.modules[name].__file__):
            del sys.modules[name]


def test_entry_points_load_with_their_version(site: Path) -> None:
    make_distribution(site, "goodplug", GOOD.replace("{format}", "good-format"), version="2.3")
    plugins = Plugins(builtins=())
    assert "good-format" in plugins.formats()
    (info,) = [i for i in plugins.info() if i.name == "goodplug"]
    assert info.version == "2.3" and not info.builtin and info.hooks == ("sidelight_formats",)


def test_a_broken_plugin_is_skipped_with_a_warning(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    make_distribution(site, "brokenplug", BROKEN)
    make_distribution(site, "goodplug", GOOD.replace("{format}", "good-format"))
    with caplog.at_level(logging.WARNING, logger="sidelight"):
        plugins = Plugins(builtins=())
    assert [b.name for b in plugins.broken] == ["brokenplug"]
    assert "ImportError" in plugins.broken[0].error and "not installed" in plugins.broken[0].error
    assert "brokenplug" in caplog.text and "skipped" in caplog.text
    assert "good-format" in plugins.formats()  # the others still load
    assert not plugins.manager.has_plugin("brokenplug")


def test_a_misspelled_hook_in_an_entry_point_makes_it_broken(site: Path) -> None:
    make_distribution(
        site, "typoplug", GOOD.replace("sidelight_formats", "sidelight_formatz").replace("{format}", "x")
    )
    plugins = Plugins(builtins=())
    assert [b.name for b in plugins.broken] == ["typoplug"]
    assert "sidelight_formatz" in plugins.broken[0].error


def test_sidelight_plugins_restricts_the_entry_points(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(site, "alpha", GOOD.replace("{format}", "alpha-format"))
    make_distribution(site, "beta", GOOD.replace("{format}", "beta-format"))
    monkeypatch.setenv("SIDELIGHT_PLUGINS", "beta")
    assert "alpha-format" not in Plugins(builtins=()).formats()
    assert "beta-format" in Plugins(builtins=()).formats()
    monkeypatch.setenv("SIDELIGHT_PLUGINS", "")
    assert not {"alpha-format", "beta-format"} & set(Plugins(builtins=()).formats())
    monkeypatch.delenv("SIDELIGHT_PLUGINS")
    assert {"alpha-format", "beta-format"} <= set(Plugins(builtins=()).formats())
    assert "alpha-format" in Plugins(builtins=(), only=["alpha"]).formats()


def test_builtins_register_through_the_same_hooks() -> None:
    plugins = Plugins(entry_points=False)
    names = [info.name for info in plugins.info()]
    assert names == list(BUILTINS)
    assert all(info.builtin for info in plugins.info())


# --- the built-in templates alone: their hooks called without pluggy --------------------------------

FAMILIES = sorted(
    name.removeprefix("sidelight_") for name in vars(hookspecs) if name.startswith("sidelight_")
)


def test_the_templates_mark_their_hooks_as_sidelight_hookimpl_does() -> None:
    def twin() -> None:
        pass

    mark = hookimpl(twin).sidelight_impl  # type: ignore[attr-defined]
    for name in BUILTINS:
        module = importlib.import_module(name)
        marked = {n: v for n, v in vars(module).items() if hasattr(v, "sidelight_impl")}
        assert marked, name
        for hook, function in marked.items():
            assert isinstance(function, types.FunctionType) and hook.startswith("sidelight_"), (name, hook)
            assert function.sidelight_impl == mark, (name, hook)  # type: ignore[attr-defined]
            assert function.sidelight_impl is not mark  # type: ignore[attr-defined]


def test_the_builtins_alone_are_collected_without_pluggy_as_pluggy_collects_them() -> None:
    quick, through_pluggy = Plugins(entry_points=False), Plugins(entry_points=False)
    assert through_pluggy.manager is not None
    assert FAMILIES and "formats" in FAMILIES
    for family in FAMILIES:
        quick._import_family(family)  # the templates with this hook, imported on first ask
        assert quick._implementations(family) == through_pluggy._implementations(family), family
        mine, theirs = quick._collect(family), through_pluggy._collect(family)
        assert list(mine) == list(theirs), family
        assert [type(spec) for spec in mine.values()] == [type(spec) for spec in theirs.values()]
    assert quick.broken == through_pluggy.broken == []
    assert quick._manager is None  # pluggy was never needed
    assert list(quick.resolvers()) == [
        "redis-streams",
        "volute",
        "cline",
        "kimi",
        "droid",
        "opencode",
        "gemini",
        "copilot",
        "qwen",
        "codex",
        "pi",
        "claude-code",
    ]


# --- the built-in templates, imported when something asks for what they provide -------------------

DATA = Path(__file__).parent / "data"
#: Each agent template with a root test, with the variable that moves its folder.
AGENTS = {
    "claude_code": "CLAUDE_CONFIG_DIR",
    "pi": "PI_CODING_AGENT_DIR",
    "codex": "CODEX_HOME",
    "qwen": "QWEN_HOME",
    "copilot": "COPILOT_HOME",
    "gemini": "GEMINI_CLI_HOME",
    "opencode": "XDG_DATA_HOME",
    "kimi": "KIMI_SHARE_DIR",
    "cline": "CLINE_DIR",
}


def test_the_table_of_what_each_template_provides_is_the_templates_own() -> None:
    assert set(plugins_module._PROVIDES) == set(BUILTINS)
    for name in BUILTINS:
        hooks = plugins_module._plain_hooks(importlib.import_module(name))
        assert hooks is not None, name  # each is called without pluggy, so its import can wait
        provided = {hook.removeprefix("sidelight_"): tuple(s.name for s in f()) for hook, f in hooks.items()}
        table = plugins_module._PROVIDES[name]
        assert set(provided) == set(table), name
        for family, names in table.items():
            if names is not None:  # None: asked for as a whole family only
                assert provided[family] == names, (name, family)
        for spec in hooks.get("sidelight_formats", lambda: ())():
            assert spec.decoder == spec.name, name  # categories(decoders) imports by decoder
    checked = {agent.module for agent in BUILTIN_AGENTS if agent.sessions_here is not None}
    # Droid's folder moves with no variable of its own: tests/test_droid.py checks its root test.
    assert checked == {f"sidelight.agents.{a}" for a in (*AGENTS, "droid")}
    claude_code = importlib.import_module("sidelight.agents.claude_code")
    assert agents_index.other_agents_hosts(claude_code.__name__) == claude_code._OTHER_HOSTS


def _agent_session(agent: str, folder: Path, cwd: Path) -> None:
    """One session of ``agent`` where its resolver lists it, ``folder`` being the agent's own folder
    (the one its variable names; for opencode, the data folder)."""
    sid = "0000abcd-0000-4000-8000-00000000abcd"
    if agent == "claude_code":
        target = folder / "projects" / "-work-app" / f"{sid}.jsonl"
        shutil.copy(DATA / "claude-code" / "four-tools-resume.jsonl", _parent(target))
    elif agent == "pi":
        target = folder / "sessions" / "--work-app--" / f"2026-01-01T00-00-00-000Z_{sid}.jsonl"
        shutil.copy(DATA / "pi" / "four-tools-continue.jsonl", _parent(target))
    elif agent == "codex":
        target = folder / "sessions" / "2026" / "01" / "01" / f"rollout-2026-01-01T10-00-00-{sid}.jsonl"
        shutil.copy(DATA / "codex" / "four-tools-resume.jsonl", _parent(target))
    elif agent == "qwen":
        target = folder / "projects" / "-work-app" / "chats" / f"{sid}.jsonl"
        shutil.copy(DATA / "qwen" / "four-tools-resume.jsonl", _parent(target))
    elif agent == "copilot":
        target = folder / "session-state" / sid / "events.jsonl"
        shutil.copy(DATA / "copilot" / "four-tools-resume.jsonl", _parent(target))
    elif agent == "gemini":
        target = folder / "tmp" / "app" / "chats" / "session-2026-01-01T10-00-0000abcd.jsonl"
        shutil.copy(DATA / "gemini" / "four-tools-resume.jsonl", _parent(target))
    elif agent == "kimi":
        target = folder / "sessions" / "882933f0a474eab5ab255a33cae246b3" / sid / "wire.jsonl"
        shutil.copy(DATA / "kimi" / "four-tools-resume.jsonl", _parent(target))
    elif agent == "cline":
        sample = DATA / "cline" / "four-tools"
        for path in sample.iterdir():
            shutil.copy(path, _parent(folder / "data" / "sessions" / path.name.split(".")[0] / path.name))
    else:
        import sqlite3

        db = _parent(folder / "opencode" / "opencode.db")
        with sqlite3.connect(db) as connection:
            connection.executescript((DATA / "opencode" / "opencode.sql").read_text())
        connection.close()


def _parent(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _default_folder(agent: str, home: Path) -> Path:
    return {
        "claude_code": home / ".claude",
        "pi": home / ".pi" / "agent",
        "codex": home / ".codex",
        "qwen": home / ".qwen",
        "copilot": home / ".copilot",
        "gemini": home / ".gemini",
        "opencode": home / ".local" / "share",
        "kimi": home / ".kimi",
        "cline": home / ".cline",
    }[agent]


def _layouts() -> Iterator[tuple[str, str | None, str]]:
    """(id, the agent given a session, where: its default folder, the folder its variable names, or
    the default one while the variable names another; or only its folder without sessions)."""
    yield "empty", None, ""
    for agent in AGENTS:
        yield f"{agent}-bare", agent, "bare"
        yield f"{agent}-default", agent, "default"
        yield f"{agent}-variable", agent, "variable"
        yield f"{agent}-elsewhere", agent, "elsewhere"


@pytest.mark.parametrize(
    ("agent", "where"), [(a, w) for _, a, w in _layouts()], ids=[i for i, _, _ in _layouts()]
)
def test_the_root_tests_agree_with_each_templates_roots_and_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str | None, where: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(tmp_path / "state")}
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("KIMI_SHARE_DIR", raising=False)
    monkeypatch.delenv("CLINE_DIR", raising=False)
    monkeypatch.delenv("CLINE_DATA_DIR", raising=False)
    if agent is not None:
        moved = tmp_path / "moved"
        if where in ("variable", "elsewhere"):
            value = str(moved / ".gemini" if agent == "gemini" else moved)
            env[AGENTS[agent]] = str(moved) if agent == "gemini" else value
            if agent in ("opencode", "kimi", "cline"):  # read from the environment, as they are
                monkeypatch.setenv(AGENTS[agent], str(moved))
        folder = moved / ".gemini" if where == "variable" and agent == "gemini" else moved
        if where in ("default", "elsewhere", "bare"):
            folder = _default_folder(agent, home)
        if where == "bare":
            folder.mkdir(parents=True)  # the agent's folder, none of its sessions' folders
        else:
            _agent_session(agent, folder, tmp_path)
    settings = Settings.load(env=env, home=home)
    for name in AGENTS:
        module = importlib.import_module(f"sidelight.agents.{name}")
        record = agents_index.agent_of(module.__name__)
        assert record is not None and record.sessions_here is not None
        here = record.sessions_here(settings)
        roots = module.roots(settings)
        sessions = list(module.list_sessions(settings))
        expected = name == agent and where in ("default", "variable")
        assert here == expected, (name, here)
        assert bool(sessions) == expected, (name, sessions)
        assert bool(roots) <= here, (name, roots)
        if name not in ("opencode", "cline"):  # their root is their export folder, made by a listing
            assert bool(roots) == expected, (name, roots)


def test_the_hosts_a_template_names_a_new_session_for_are_in_the_table(tmp_path: Path) -> None:
    # Without any agent's folder, a resolver's current() answers only for the hosts the table names
    # (a new session's first prompt), so a hook of another host can leave its template out.
    home = tmp_path / "home"
    home.mkdir()
    settings = Settings.load(env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(tmp_path / "s")}, home=home)
    hosts = {*agents_index.HOOK_HOSTS, "kiro"}
    named: set[tuple[str, str]] = set()
    for name in AGENTS:
        module = importlib.import_module(f"sidelight.agents.{name}")
        for host in hosts:
            event = HostEvent(
                host=host,
                event="UserPromptSubmit",
                session_id="ses_0123456789abcdefABCDEFghij" if host == "opencode" else str(uuid.uuid4()),
                cwd=tmp_path / "work",
                transcript_path=None if host in ("opencode", "copilot") else tmp_path / "work" / "t.jsonl",
            )
            if module.current(event, settings) is not None:
                named.add((name, host))
                agent = agents_index.agent_of(module.__name__)
                assert agent is not None and agents_index.may_name_current(agent, host), (name, host)
    # (the test can fail: these hosts' templates do name a session here)
    assert {("claude_code", "kiro"), ("claude_code", "agent-sdk"), ("copilot", "copilot")} <= named


def test_a_prompt_imports_only_the_templates_it_can_need(tmp_path: Path) -> None:
    # A fresh process (the templates already imported here would hide what a prompt imports): the
    # resolvers a prompt asks for in a HOME with only ~/.claude give the sessions all of them give.
    home = tmp_path / "home"
    _agent_session("claude_code", home / ".claude", tmp_path)
    code = (
        "import json, sys\n"
        "from sidelight.config import Settings\n"
        "from sidelight.plugins import Plugins\n"
        "plugins = Plugins(entry_points=False)\n"
        "settings = Settings.load()\n"
        "some = sorted(plugins.resolvers(settings, 'claude-code'))\n"
        "plugins.injector('claude-code'); plugins.format('claude-code'); plugins.summarizers()\n"
        "plugins.categories({'claude-code'})\n"
        "plugin = ('sidelight.templates.', 'sidelight.agents.')\n"
        "loaded = sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith(plugin))\n"
        "listed = lambda rs: sorted(str(s.path) for r in rs.values() for s in r.list_sessions(settings))\n"
        "mine = listed(plugins.resolvers(settings))\n"
        "every = listed(plugins.resolvers())\n"
        "print(json.dumps([some, loaded, mine == every, len(every)]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_"))}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(tmp_path / "state"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    some, loaded, same, count = json.loads(done.stdout)
    assert some == ["claude-code", "volute"]
    assert loaded == ["claude_code", "default", "volute"]
    assert same and count == 1


def test_the_fleets_resolver_is_asked_only_when_a_fleet_is_set(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from sidelight.config import Settings\n"
        "from sidelight.plugins import Plugins\n"
        "plugins = Plugins(entry_points=False)\n"
        "print(json.dumps(sorted(plugins.resolvers(Settings.load(), 'claude-code'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_"))}
    env.update(HOME=str(tmp_path), SIDELIGHT_STATE_DIR=str(tmp_path / "state"))
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    env["SIDELIGHT_REDIS_URL"] = "redis://127.0.0.1:1"
    fleet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "redis-streams" not in json.loads(alone.stdout)
    assert "redis-streams" in json.loads(fleet.stdout)


def test_the_whole_family_imports_every_template_that_provides_it() -> None:
    plugins = Plugins(entry_points=False)
    through_pluggy = Plugins(entry_points=False)
    assert through_pluggy.manager is not None
    assert list(plugins.injectors()) == list(through_pluggy.injectors())
    assert len(plugins.injectors()) == 11
    assert plugins.injector("gemini") is plugins.injectors()["gemini"]
    assert plugins.format("nope") is None and plugins.injector("nope") is None
    assert list(plugins.formats()) == list(through_pluggy.formats())
    assert list(plugins.sinks()) == list(through_pluggy.sinks()) == ["redis-streams", "handoff", "jsonl-log"]
    assert plugins.categories({"opencode"}) == {"opencode": plugins.categories()["opencode"]}


def test_registering_a_plugin_hands_the_hooks_to_pluggy() -> None:
    plugins = Plugins(entry_points=False)
    assert "default" in plugins.summarizers() and plugins._manager is None
    plugins.register(plugin(sidelight_summarizers=[SummarizerSpec(name="mine", summarize=lambda a: None)]))
    assert plugins._manager is not None
    assert list(plugins.summarizers()) == ["mine", "default"]  # the newest registered first, as ever


def test_a_template_with_options_pluggy_orders_is_left_to_pluggy(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("sidelight_test_tryfirst_template")

    @hookimpl(tryfirst=True)
    def sidelight_summarizers() -> Any:
        return [SummarizerSpec(name="first", summarize=lambda a: None)]

    module.sidelight_summarizers = sidelight_summarizers  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    plugins = Plugins(builtins=(module.__name__, "sidelight.templates.default"), entry_points=False)
    assert plugins._manager is not None
    # registered first, called first all the same: pluggy's order, which registration order is not
    assert list(plugins.summarizers()) == ["first", "default"]


def test_a_prompt_hook_process_with_only_the_builtins_never_imports_pluggy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from sidelight.plugins import get_plugins\n"
        "plugins = get_plugins()\n"
        "assert plugins.injectors() and plugins.resolvers() and plugins.formats() and plugins.summarizers()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pluggy', 'sidelight.hookspecs')))\n"
        "plugins.info()\n"
        "print('pluggy' in sys.modules)\n"
    )
    env = {**os.environ, "SIDELIGHT_STATE_DIR": str(tmp_path), "PYTHONPATH": ""}
    env.pop("SIDELIGHT_PLUGINS", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines() == ["[]", "True"]


# --- the entry points found, kept between processes ---------------------------------------------------


def _settled(folder: Path) -> Path:
    """``folder`` as if it last changed a minute ago (a folder changed in the last seconds is not trusted
    to show its next change, and is not kept)."""
    moment = time.time() - 60
    os.utime(folder, (moment, moment))
    return folder


@pytest.fixture
def kept(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The state directory exists, so the entry points found are kept; yields the number of times they
    were looked for on ``sys.path`` (for the tests' own folders: other ``sys.path`` folders may have
    changed in the last seconds, so their changes are not waited for)."""
    (tmp_path / "state").mkdir()
    monkeypatch.setattr(plugins_module, "_RACY_SECONDS", 0.0)
    scans = [0]
    real = plugins_module.find_entry_points

    def counting(group: str) -> list[plugins_module.EntryPoint]:
        scans[0] += 1
        return real(group)

    monkeypatch.setattr(plugins_module, "find_entry_points", counting)
    _settled(site)
    yield scans


def test_the_entry_points_found_are_kept_for_the_next_process(
    site: Path, kept: list[int], tmp_path: Path
) -> None:
    make_distribution(site, "goodplug", GOOD.replace("{format}", "good-format"), version="2.0")
    _settled(site)
    for _ in range(3):
        plugins = Plugins(builtins=())
        assert "good-format" in plugins.formats()
        (info,) = plugins.info()
        assert info.version == "2.0"
    assert kept == [1]  # looked for once, then read from the state directory
    (file,) = (tmp_path / "state").glob("entry-points-*.json")
    assert oct(file.stat().st_mode & 0o777) == oct(0o600)
    assert json.loads(file.read_text())["entry_points"][0][:2] == ["goodplug", GOOD_MODULE[0]]


def test_a_plugin_installed_after_the_entry_points_were_kept_is_loaded(site: Path, kept: list[int]) -> None:
    plugins = Plugins(builtins=())
    assert plugins.formats() == {} and plugins._manager is None
    assert Plugins(builtins=()).formats() == {} and kept == [1]  # kept: nothing installed
    make_distribution(site, "lateplug", GOOD.replace("{format}", "late-format"))  # site's time changes
    plugins = Plugins(builtins=())
    assert "late-format" in plugins.formats() and [i.name for i in plugins.info()] == ["lateplug"]
    assert kept == [2]


def test_a_plugin_removed_after_the_entry_points_were_kept_is_gone(site: Path, kept: list[int]) -> None:
    make_distribution(site, "goneplug", GOOD.replace("{format}", "gone-format"))
    _settled(site)
    assert "gone-format" in Plugins(builtins=()).formats()
    shutil.rmtree(next(site.glob("goneplug-*.dist-info")))
    assert Plugins(builtins=()).formats() == {}
    assert kept == [2]


def test_a_folder_changed_in_the_last_seconds_is_not_kept(
    site: Path, kept: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plugins_module, "_RACY_SECONDS", 2.0)
    make_distribution(site, "newplug", GOOD.replace("{format}", "new-format"))  # just now
    assert "new-format" in Plugins(builtins=()).formats()
    assert list((tmp_path / "state").glob("entry-points-*.json")) == []
    assert "new-format" in Plugins(builtins=()).formats()
    assert kept == [2]


def test_damaged_or_stale_kept_entry_points_are_looked_for_again(
    site: Path, kept: list[int], tmp_path: Path
) -> None:
    assert Plugins(builtins=()).formats() == {}
    (file,) = (tmp_path / "state").glob("entry-points-*.json")
    for damage in ("{not json", '{"key": 1}', "[]", '{"key": null, "entry_points": 5}'):
        file.write_text(damage)
        assert Plugins(builtins=()).formats() == {}
    assert kept == [5]
    assert json.loads(file.read_text())["entry_points"] == []  # written again


def test_sys_path_is_part_of_the_key(
    site: Path, kept: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Plugins(builtins=()).formats() == {}
    other = _settled_folder_with_plugin(tmp_path / "other", "otherplug", "other-format")
    monkeypatch.syspath_prepend(str(other))
    assert "other-format" in Plugins(builtins=()).formats()
    assert len(list((tmp_path / "state").glob("entry-points-*.json"))) == 2
    assert kept == [2]


def _settled_folder_with_plugin(folder: Path, name: str, format_name: str) -> Path:
    folder.mkdir()
    make_distribution(folder, name, GOOD.replace("{format}", format_name))
    return _settled(folder)


# --- sidelight plugins --------------------------------------------------------------------------------


def test_sidelight_plugins_lists_the_builtins(run_cli: Any) -> None:
    result = run_cli("plugins")
    assert result.returncode == 0, result.stderr
    for name in BUILTINS:
        assert f"{name} " in result.stdout
    assert "(built-in)" in result.stdout
    assert result.stderr == ""


def test_sidelight_plugins_json(run_cli: Any) -> None:
    result = run_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["name"] for r in records] == list(BUILTINS)
    for record in records:
        assert record["builtin"] is True and record["loaded"] is True and record["errors"] == []
        assert set(record["provides"]) <= {
            "agents",
            "formats",
            "resolvers",
            "summarizers",
            "injectors",
            "sinks",
        }
        assert all(hook.startswith("sidelight_") for hook in record["hooks"])


def test_sidelight_plugins_shows_third_party_and_broken(run_cli: Any, site: Path) -> None:
    make_distribution(site, "goodplug", GOOD.replace("{format}", "good-format"), version="4.5")
    make_distribution(site, "brokenplug", BROKEN)
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    result = run_cli("plugins", env=env)
    assert result.returncode == 0, result.stderr
    assert "goodplug 4.5 (plugin)\n  hooks: sidelight_formats\n  formats: good-format\n" in result.stdout
    assert "not loaded:\n  brokenplug: ImportError: this plugin needs" in result.stdout
    assert "plugin brokenplug was skipped" in result.stderr


def test_sidelight_plugins_conflict_is_one_line_and_exit_1(run_cli: Any, site: Path) -> None:
    make_distribution(site, "oneplug", GOOD.replace("{format}", "same"))
    make_distribution(site, "twoplug", GOOD.replace("{format}", "same"))
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    result = run_cli("plugins", env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "oneplug" in lines[0] and "twoplug" in lines[0] and "'same'" in lines[0]
