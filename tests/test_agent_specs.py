"""The agents as records: each built-in agent's AgentSpec, Plugins.agents(), and what derives from them.

The hooks each built-in agent declares are checked against the table of docs/hosts-midturn.md (what
was observed with each host); the tables kept per agent elsewhere (the dashboard's injected places,
the test fixture's isolated variables, the hosts that cannot inject at start, the generic resolvers,
the digest's short names) are checked to come from the registered agents, a plugin's among them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from sidelight import plugins as plugins_module
from sidelight.dashboard.data import last_injected
from sidelight.engine.discovery import is_generic
from sidelight.features.facts import injects_at_start
from sidelight.hookspecs import hookimpl
from sidelight.plugins import PluginConflictError, Plugins
from sidelight.records import HOOK_MOMENTS, AgentSpec, HostHook, Session
from tests.conftest import ROOT
from tests.support.pytest_run import run_pytest

DOCS = ROOT / "docs" / "hosts-midturn.md"
EXAMPLE = ROOT / "examples" / "sidelight-kiro"

#: The built-in agents, by name, and the row of docs/hosts-midturn.md's table each is.
AGENTS = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "pi": "Pi",
    "gemini": "Gemini CLI",
    "qwen": "Qwen Code",
    "opencode": "opencode",
    "copilot": "Copilot CLI",
    "droid": "Factory Droid",
}
#: The built-in agents whose hosts were observed since (docs/hosts-next.md, not hosts-midturn.md's table):
#: told less than every prompt; their tests say what they do.
NEXT_AGENTS = ("kimi", "cline")
INSTALLERS = ("claude-code", "codex", "pi", "gemini", "qwen", "copilot", "opencode", "droid", "kimi", "cline")


@pytest.fixture(scope="module")
def builtin() -> dict[str, AgentSpec]:
    return dict(Plugins(entry_points=False).agents())


def _table() -> dict[str, list[str]]:
    """docs/hosts-midturn.md's table: the host → its cells (event that carries text, where it lands,
    persisted, block a write, timeout unit)."""
    rows: dict[str, list[str]] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] not in ("host", "---"):
            rows[cells[0]] = cells[1:]
    return rows


def _pre_tool_text_hosts() -> set[str]:
    """The hosts the doc's pitfalls name as sending a pre-tool hook's text at all (with the result)."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"hosts that send it at all \(([^)]*)\)", text)
    assert found is not None
    return {" ".join(name.split()).removesuffix(" via steer") for name in found.group(1).split(",")}


def test_every_built_in_agent_declares_itself(builtin: dict[str, AgentSpec]) -> None:
    assert set(builtin) == {*AGENTS, *NEXT_AGENTS, "volute"}
    titles = {name: agent.title for name, agent in builtin.items()}
    assert titles == {
        "claude-code": "Claude Code",
        "pi": "Pi",
        "codex": "Codex CLI",
        "qwen": "Qwen Code",
        "copilot": "GitHub Copilot CLI",
        "gemini": "Gemini CLI",
        "opencode": "opencode",
        "droid": "Factory Droid",
        "kimi": "Kimi CLI",
        "cline": "Cline CLI",
        "volute": "volute",
    }
    plugins = Plugins(entry_points=False)
    formats, resolvers, installers = plugins.formats(), plugins.resolvers(), plugins.installers()
    injectors = plugins.injectors()
    for name, agent in builtin.items():
        assert set(agent.formats) <= set(formats), name
        assert agent.resolver in resolvers, name
        assert agent.installer is None or agent.installer in installers, name
        assert all(host in injectors for host in agent.hosts), name
        moments = [hook.moment for hook in agent.hooks]
        assert len(moments) == len(set(moments)) and set(moments) <= set(HOOK_MOMENTS), name
    assert {a.installer for a in builtin.values() if a.installer} == set(INSTALLERS)
    assert builtin["claude-code"].hosts == ("claude-code", "agent-sdk")
    volute = builtin["volute"]
    assert (volute.formats, volute.hosts, volute.installer, volute.hooks) == ((), (), None, ())


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_agents_tool_hooks_are_what_the_host_was_seen_to_do(
    name: str, builtin: dict[str, AgentSpec]
) -> None:
    agent = builtin[name]
    carries, _lands, _kept, blocks, unit = _table()[AGENTS[name]]
    named = set(re.findall(r"`([^`(]+)", carries))
    # Every prompt is answered with text that reaches the model.
    assert agent.can("prompt", "inject")
    # After a tool (or a batch): the events that carry text, each one sidelight's answer reaches.
    after = {h.event for h in agent.hooks if h.moment in ("after_tool", "after_batch") and "inject" in h.can}
    assert after and after <= named, (after, named)
    assert agent.hook("after_tool") is not None
    # Before a tool: it can refuse where the host can block a write; its text reaches the model (with
    # the result) only on the hosts that send it.
    assert agent.can("before_tool", "refuse") == blocks.startswith("yes")
    assert agent.can("before_tool", "inject") == (AGENTS[name] in _pre_tool_text_hosts())
    assert agent.timeout_unit == {"s": "s", "ms": "ms", "none": ""}[unit.split()[0]]


def test_kimi_is_told_only_by_refusing_a_write(builtin: dict[str, AgentSpec]) -> None:
    """Kimi CLI 1.50 reads a hook's output only for a block (docs/hosts-next.md): its prompt and
    after-tool hooks fire and carry nothing to the model; its PreToolUse refuses."""
    kimi = builtin["kimi"]
    assert not kimi.can("prompt", "inject") and not kimi.can("after_tool", "inject")
    assert kimi.can("before_tool", "refuse") and not kimi.can("before_tool", "inject")
    assert kimi.timeout_unit == "s"
    assert "| Kimi CLI " in (ROOT / "docs" / "hosts-next.md").read_text(encoding="utf-8")


def test_a_hosts_start_injection_follows_its_agent(builtin: dict[str, AgentSpec]) -> None:
    plugins = Plugins(entry_points=False)
    hosts = {host for agent in builtin.values() for host in agent.hosts}
    assert {host for host in hosts if not injects_at_start(host, plugins)} == {"pi", "opencode"}
    assert injects_at_start("a-host-of-no-agent", plugins)
    plugins.register(_agent_plugin(hooks=(HostHook("start", "onStart"),)), name="my_agent")
    assert not injects_at_start("my-agent", plugins)


def _agent_plugin(**fields: Any) -> types.ModuleType:
    module = types.ModuleType("my_agent")

    @hookimpl
    def sidelight_agents() -> Any:
        yield AgentSpec(
            **{"name": "my-agent", "formats": ("my-agent",), "resolver": "my-agent", "hosts": ("my-agent",)}
            | fields
        )

    module.sidelight_agents = sidelight_agents  # type: ignore[attr-defined]
    return module


def test_hook_sidelight_agents() -> None:
    plugins = Plugins(entry_points=False)
    plugins.register(_agent_plugin(title="My Agent", short_name="mine"), name="my_agent")
    assert next(iter(plugins.agents())) == "my-agent"  # a plugin's come first
    mine = plugins.agent("my-agent")
    assert mine is not None and (mine.title, mine.short_name) == ("My Agent", "mine")
    assert plugins.agent("nobody") is None
    assert plugins.agent_of_host("my-agent") is mine
    claude = plugins.agent_of_host("agent-sdk")  # not an agent's name: every agent is asked
    assert claude is not None and claude.name == "claude-code"
    twice = Plugins(entry_points=False)
    twice.register(_agent_plugin(), name="one")
    twice.register(_agent_plugin(), name="two")
    with pytest.raises(PluginConflictError, match="two plugins define the agent 'my-agent'"):
        twice.agents()


def test_asking_for_one_agent_imports_no_other_agents_module() -> None:
    code = (
        "import sys\n"
        "from sidelight.plugins import Plugins\n"
        "assert Plugins(entry_points=False).agent('codex').title == 'Codex CLI'\n"
        "print(sorted(m for m in sys.modules if m.startswith('sidelight.agents.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['sidelight.agents.codex']"


def test_the_generic_resolvers_are_the_agents_own() -> None:
    plugins = Plugins(entry_points=False)
    assert {r for r in plugins.resolvers() if is_generic(r, plugins)} == {*AGENTS, *NEXT_AGENTS}
    plugins.register(_agent_plugin(), name="my_agent")
    assert is_generic("my-agent", plugins)
    assert not is_generic("volute", plugins)  # its minds' transcripts are other agents'
    assert not is_generic("no-such-resolver", plugins)


def test_a_plugin_agents_injected_text_is_read_where_it_says(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "prompt", "text": "what is [Session Activity] about?", "timestamp": "2026-01-01T00:00:00Z"},
        {
            "type": "hook_output",
            "text": "[Session Activity] (report)\n- ours</ctx>",
            "timestamp": "2026-01-01T00:00:01Z",
        },
        {"type": "prompt", "text": "[Session Activity] pasted", "timestamp": "2026-01-01T00:00:02Z"},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    def injected_values(line: Any) -> Any:
        if line.get("type") == "hook_output":
            yield from line["text"].split("</ctx>")

    plugins = Plugins(entry_points=False)
    plugins.register(
        _agent_plugin(injected_where="My Agent's hook output", injected_values=injected_values),
        name="my_agent",
    )
    found = last_injected(transcript, "my-agent", plugins=plugins)
    assert found is not None
    assert (found["text"], found["where"]) == (
        "(Session Activity) (report)\n- ours",
        "My Agent's hook output",
    )
    anywhere = last_injected(transcript, "another-format", plugins=plugins)
    assert anywhere is not None and anywhere["where"] == "a line of its transcript"
    assert anywhere["text"] == "(Session Activity) pasted"


def test_a_digest_line_names_a_plugin_agent_by_its_short_name(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins = Plugins(entry_points=False)
    plugins.register(_agent_plugin(short_name="mine"), name="my_agent")
    monkeypatch.setattr(plugins_module, "_plugins", plugins)
    monkeypatch.setattr(plugins_module, "_agent_names", {})

    def session(format: str) -> Session:
        return Session(key="k", name="n", path=Path("/x"), format=format, group="g", resolver="r")

    assert [session(f).agent for f in ("my-agent", "claude-code", "pi", "other")] == [
        "mine",
        "claude",
        "pi",
        "other",
    ]


def test_the_test_fixture_isolates_every_agents_folder_variables(tmp_path: Path) -> None:
    test = tmp_path / "test_isolated.py"
    test.write_text(
        "import os\n"
        "def test_home(sidelight_home):\n"
        "    names = ('VOLUTE_HOME', 'VOLUTE_MINDS_DIR', 'XDG_DATA_HOME', 'QWEN_HOME')\n"
        "    left = [name for name in names if name in os.environ]\n"
        "    assert left == []\n"
    )
    env = {
        **os.environ,
        **dict.fromkeys(("VOLUTE_HOME", "VOLUTE_MINDS_DIR", "XDG_DATA_HOME", "QWEN_HOME"), "/real"),
    }
    result = run_pytest(test, env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_kiro_example_declares_its_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.delitem(sys.modules, "sidelight_kiro", raising=False)
    import sidelight_kiro  # type: ignore[import-not-found]

    plugins = Plugins(entry_points=False)
    plugins.register(sidelight_kiro, name="kiro")
    kiro = plugins.agents()["kiro"]
    assert (kiro.title, kiro.formats, kiro.resolver, kiro.installer) == (
        "Kiro CLI",
        ("kiro",),
        "kiro",
        "kiro",
    )
    assert kiro.resolver in plugins.resolvers() and kiro.installer in plugins.installers()
    assert is_generic("kiro", plugins)
