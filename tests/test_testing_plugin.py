"""sidelight.testing: its checks catch what they say they catch; its pytest plugin stays out of the way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from sidelight import hookimpl
from sidelight.config import Settings
from sidelight.formats import Blocks, Event, Layout
from sidelight.plugins import Plugins
from sidelight.records import FormatSpec, HostEvent, ResolverSpec, Session, SummarizerSpec
from sidelight.testing import check_digest, check_format, check_resolver
from tests.support.pytest_run import run_pytest

LAYOUT = Layout(
    role="type", assistant_roles=("bot",), message_id="id", skip_prompt_prefixes=("[Session Activity]",)
)
RECORDS: list[dict[str, object]] = [
    {"type": "user", "content": "first prompt", "timestamp": "t1"},
    {"id": "m1", "type": "bot", "content": [{"type": "text", "text": "working"}], "timestamp": "t2"},
    {"type": "user", "content": "second prompt", "timestamp": "t3"},
    {"id": "m2", "type": "bot", "content": "done", "timestamp": "t4"},
]


def _sample(tmp_path: Path, records: list[dict[str, object]] = RECORDS) -> Path:
    path = tmp_path / "sample.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _decode(line: bytes) -> list[Event]:
    r = json.loads(line)
    if r.get("type") == "user":
        return [Event.entry_type("user"), Event.user(r["content"], r.get("timestamp"))]
    if r.get("type") == "bot":
        content = r["content"]
        text = content if isinstance(content, str) else content[-1]["text"]
        return [Event.entry_type("bot"), Event.assistant(text, r.get("timestamp"), r.get("id"))]
    raise ValueError("an entry this decoder does not know")


def test_a_conforming_format_has_no_problem(tmp_path: Path) -> None:
    spec = FormatSpec(name="c-ok", layout=LAYOUT, injected_markers=("[Session Activity]",))
    injected = json.dumps({"type": "user", "content": "[Session Activity] (what your other sessions did)"})
    assert check_format(spec, [_sample(tmp_path)], [injected]) == []


def test_a_layout_with_wrong_paths_is_caught(tmp_path: Path) -> None:
    spec = FormatSpec(name="c-wrong", layout=replace(LAYOUT, role=("kind",)))
    problems = check_format(spec, [_sample(tmp_path)])
    assert any("no sample has a prompt" in p for p in problems), problems


def test_injected_text_counted_as_a_prompt_is_caught(tmp_path: Path) -> None:
    spec = FormatSpec(
        name="c-echo",
        layout=replace(LAYOUT, skip_prompt_prefixes=()),
        injected_markers=("[Session Activity]",),
    )
    injected = json.dumps({"type": "user", "content": "[Session Activity] x"})
    problems = check_format(spec, [_sample(tmp_path)], [injected])
    assert any("injected text was counted" in p for p in problems), problems
    records: list[dict[str, object]] = [*RECORDS, {"type": "user", "content": "[Session Activity] echoed"}]
    problems = check_format(spec, [_sample(tmp_path, records)])
    assert any("last_user_text is sidelight's own injected text" in p for p in problems), problems


def test_a_decoder_that_rejects_unknown_entries_is_caught(tmp_path: Path) -> None:
    spec = FormatSpec(name="c-strict", decode=_decode)
    problems = check_format(spec, [_sample(tmp_path)])
    assert any("unknown entries were counted as malformed" in p for p in problems), problems


def test_a_fallback_that_disagrees_with_its_layout_is_caught(tmp_path: Path) -> None:
    def no_replies(line: bytes) -> list[Event]:
        return [
            e
            for e in (_decode(line) if b'"bot"' in line or b'"user"' in line else [])
            if e.kind != "assistant"
        ]

    spec = FormatSpec(name="c-disagree", layout=LAYOUT, decode=no_replies)
    problems = check_format(spec, [_sample(tmp_path)])
    assert any("its decode function against its layout" in p and "messages" in p for p in problems), problems


def test_a_fallback_whose_results_disagree_with_its_layout_is_caught(tmp_path: Path) -> None:
    layout = replace(LAYOUT, blocks=Blocks(tool=("call",), result=("result",)))
    records: list[dict[str, object]] = [
        *RECORDS[:2],
        {"id": "m3", "type": "bot", "content": [{"type": "call", "id": "c1", "name": "sh", "input": {}}]},
        {
            "type": "user",
            "content": [{"type": "result", "tool_use_id": "c1", "content": "ok", "is_error": True}],
        },
        *RECORDS[2:],
    ]

    def decode(line: bytes, *, flag: bool) -> list[Event]:
        r = json.loads(line)
        content = r.get("content")
        if isinstance(content, list) and content[0].get("type") == "call":
            return [Event.entry_type("bot"), Event.assistant(None, None, r["id"]), Event.tool("sh", id="c1")]
        if isinstance(content, list) and content[0].get("type") == "result":
            return [Event.entry_type("user"), Event.result("c1", "ok", is_error=flag)]
        return _decode(line) if b'"bot"' in line or b'"user"' in line else []

    agree = FormatSpec(name="c-results", layout=layout, decode=lambda line: decode(line, flag=True))
    assert check_format(agree, [_sample(tmp_path, records)]) == []
    wrong = FormatSpec(name="c-results-wrong", layout=layout, decode=lambda line: decode(line, flag=False))
    problems = check_format(wrong, [_sample(tmp_path, records)])
    assert problems == [
        "format c-results-wrong: sample sample.jsonl, its decode function against its layout: "
        "tool use 1 (sh) has the result ('ok', False), expected ('ok', True)"
    ]


def _resolver(root: Path, sessions: list[Session], current: object = None) -> ResolverSpec:
    def now(event: HostEvent, settings: Settings) -> Session | None:
        if current is not None:
            raise RuntimeError("boom")
        return None

    return ResolverSpec(name="r", list_sessions=lambda s: sessions, current=now, roots=lambda s: [root])


def test_resolver_invariants(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, state_dir=tmp_path / "state")
    inside = tmp_path / "root" / "a.jsonl"
    ok = Session(key="r:a", name="a", path=inside, format="pi", group="g", resolver="r")
    assert check_resolver(_resolver(tmp_path / "root", [ok]), settings, {"pi"}) == []
    twin = replace(ok, key="r:b")
    outside = replace(ok, key="r:c", name="c", path=tmp_path / "elsewhere" / "c.jsonl")
    odd = replace(ok, key="r:d", name="d", format="nope")
    problems = check_resolver(
        _resolver(tmp_path / "root", [ok, twin, outside, odd], current=True), settings, {"pi"}
    )
    text = "\n".join(problems)
    assert "two sessions have the name 'a'" in text
    assert "is outside its roots" in text
    assert "unknown format 'nope'" in text
    assert "current() raised RuntimeError" in text


def test_the_digest_stays_within_its_cap_and_a_raising_summarizer_is_reported(tmp_path: Path) -> None:
    sample = _sample(tmp_path)
    sessions = [
        Session(key=f"r:{k}", name=f"s{k}", path=sample, format="c-ok", group="g", resolver="r")
        for k in range(30)
    ]

    class Plugin:
        @hookimpl
        def sidelight_formats(self) -> list[FormatSpec]:
            return [FormatSpec(name="c-ok", layout=LAYOUT)]

        @hookimpl
        def sidelight_resolvers(self) -> list[ResolverSpec]:
            return [_resolver(tmp_path, sessions)]

        @hookimpl
        def sidelight_summarizers(self) -> list[SummarizerSpec]:
            return [SummarizerSpec(name="long", summarize=lambda a: "- " + a.session.name + " " + "x" * 400)]

    plugins = Plugins(entry_points=False, builtins=("sidelight.templates.default",))
    plugins.register(Plugin())
    settings = Settings(home=tmp_path, state_dir=tmp_path / "state")
    assert check_digest(plugins, settings) == []

    class Raising:
        @hookimpl
        def sidelight_summarizers(self) -> list[SummarizerSpec]:
            return [SummarizerSpec(name="raises", summarize=lambda a: 1 / 0)]  # type: ignore[arg-type,return-value]

    plugins.register(Raising())
    assert any("summarizer raises: raised ZeroDivisionError" in p for p in check_digest(plugins, settings))


def test_the_pytest_plugin_gives_isolated_fixtures_and_imports_nothing_heavy(tmp_path: Path) -> None:
    # Beyond what ``import sidelight`` and pytest load, the plugin adds only its own small modules.
    light = (
        "import sys, pytest, sidelight; before = set(sys.modules); import sidelight.testing.plugin; "
        "new = sorted(set(sys.modules) - before); "
        "assert new == ['sidelight.testing', 'sidelight.testing.conformance', "
        "'sidelight.testing.plugin'], new"
    )
    subprocess.run([sys.executable, "-c", light], check=True)
    test = tmp_path / "test_uses_fixtures.py"
    test.write_text(
        "import os\n"
        "def test_home(sidelight_home, sidelight_settings, sidelight_plugins):\n"
        "    assert os.environ['HOME'] == str(sidelight_home)\n"
        "    assert sidelight_settings.home == sidelight_home\n"
        "    assert 'claude-code' in sidelight_plugins.formats()\n"
        "    assert not os.environ.get('CLAUDE_CONFIG_DIR')\n"
    )
    env = {**os.environ, "CLAUDE_CONFIG_DIR": "/nonexistent/real"}
    result = run_pytest(test, env)
    assert result.returncode == 0, result.stdout + result.stderr
