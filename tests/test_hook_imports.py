"""What a prompt hook loads: only what a prompt needs.

A hook runs on every prompt of every agent, so whatever its process imports is paid for on every
prompt. These tests pin down which modules the real hook process loads, which is deterministic where a
timing is not (the timings are in ``tests/benchmarks/test_hook.py``), and that the public API of
``import sidelight`` stays what it was while its names are imported on first use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.support.hook_world import HookWorld, context_of

if TYPE_CHECKING:
    from pathlib import Path

#: The hook as the ``sidelight`` command runs it, then the names of every module it loaded (on stderr).
HOOK = (
    "import json, sys\n"
    "from sidelight.cli import main\n"
    "code = main(['hook', 'claude-code'])\n"
    "sys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    "raise SystemExit(code)\n"
)

#: Never loaded by a prompt that gets a digest of its siblings' news.
NOT_FOR_A_PROMPT = (
    # the rest of the command line: the hook's fast path comes before the argument parser
    "argparse",
    "sidelight.cli.read",
    "sidelight.cli.history",
    "sidelight.cli.watch",
    "sidelight.install",
    # the MCP server (sidelight mcp) and its SDK: an extra a prompt never needs
    "sidelight.cli.mcp",
    "sidelight.integrations.mcp_server",
    "mcp",
    "pydantic",
    # the rest of the library: transcripts as conversations, the watcher, recaps, fleets
    "sidelight.features.history",
    "sidelight.features.reader",
    "sidelight.engine.scanning",
    "sidelight.features.lifecycle",
    "sidelight.features.recap",
    "sidelight.features.recap.handoff",
    "sidelight.features.recap.build",
    "sidelight.features.recap.model",
    "sidelight.features.recap.chunks",
    "sidelight.features.recap.rank",
    "sidelight.features.recap.render",
    "sidelight.features.recap.collapse",
    "sidelight.tokens",
    "sidelight.watch.watcher",
    "sidelight.watch.status",
    "sidelight.features.fleet.streams",
    "sidelight._fast.resp",
    # slow to import, and needed only elsewhere: a config file, a stored fact or delivered handoff,
    # package versions, terminal output, the watcher's fast JSON, the redis package
    "tomllib",
    "hashlib",
    "importlib.metadata",
    "rich",
    "orjson",
    "redis",
    # pluggy and the hookspecs: with only the built-in templates, their hooks are called without it
    "pluggy",
    "sidelight.hookspecs",
    # a plugin's own format (declared, or decoded in Python): made only when a plugin has one
    "sidelight._declared",
    # the records are written out (sidelight._fast._record): making dataclasses, and inspect with them
    "dataclasses",
    "inspect",
    # a transcript's ...Z timestamps are read with arithmetic (sidelight.timestamps)
    "datetime",
    # a hook that logs nothing: loggers import logging on their first record (sidelight._fast.logs)
    "logging",
    # type annotations are for type checkers: the names a class statement needs come from
    # sidelight._fast._typing
    "typing",
    # with-blocks are written as classes or try statements
    "contextlib",
    # locks from _thread; the handoff's writer thread starts only at a session's end
    "threading",
)


def _prompt_in_python(world: HookWorld, code: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """Python running ``code`` in a process of its own, given session 0's prompt on stdin, in the hook
    world's project and environment (``env`` added); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=world.payload(0),
        capture_output=True,
        env=world.env(**env),
        cwd=world.project,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_prompt_hook_loads_only_what_a_prompt_needs(tmp_path: Path) -> None:
    world = HookWorld(tmp_path, sessions=2)
    assert world.run_hook(0).returncode == 0  # the first look: cursors are saved
    world.prompt(1, "news from the sibling")
    done = _prompt_in_python(world, HOOK)
    context = context_of(done.stdout)
    assert context is not None and "news from the sibling" in context  # the whole prompt path ran
    loaded = set(json.loads(done.stderr))
    assert "sidelight.features.hook" in loaded
    assert sorted(loaded.intersection(NOT_FOR_A_PROMPT)) == []
    assert sorted(m for m in loaded if m.startswith(PLUGIN_MODULES)) == CLAUDE_CODE_PROMPT
    assert world.log().count("ERROR") == 0


#: Where the built-in plugins' modules are.
PLUGIN_MODULES = ("sidelight.templates.", "sidelight.agents.")

#: The built-in templates a Claude Code prompt imports in a HOME with only ``~/.claude``: its resolver and
#: format with its folder rules, its injector, volute's minds (found around the working directory), the
#: default summarizer. Not the other agents' templates, the watcher's sinks, nor, with no ``redis_url``,
#: the fleet's resolver.
CLAUDE_CODE_PROMPT = [
    "sidelight.agents.claude_code",
    "sidelight.agents.volute",
    "sidelight.templates.default",
]

#: A folder of each other agent's sessions in HOME, with the template that then lists them.
AGENT_FOLDERS = {
    "pi": ".pi/agent/sessions",
    "codex": ".codex/sessions",
    "qwen": ".qwen/projects",
    "copilot": ".copilot/session-state",
    "gemini": ".gemini/tmp",
    "kimi": ".kimi/sessions",
}

#: The modules of an agent's folder beside its template that its listing imports (its folder rules).
AGENT_RULES = {"pi": ("sidelight.agents.pi.paths",)}


def _prompt_templates(world: HookWorld, **env: str) -> list[str]:
    world.prompt(1, "news from the sibling")
    done = _prompt_in_python(world, HOOK, **env)
    assert "news from the sibling" in (context_of(done.stdout) or "")
    return sorted(m for m in json.loads(done.stderr) if m.startswith(PLUGIN_MODULES))


def test_a_prompt_imports_another_agents_template_once_its_sessions_folder_exists(tmp_path: Path) -> None:
    world = HookWorld(tmp_path, sessions=2)
    assert world.run_hook(0).returncode == 0
    assert _prompt_templates(world) == CLAUDE_CODE_PROMPT
    for agent, folder in AGENT_FOLDERS.items():
        (world.home / folder).mkdir(parents=True)
        own = [f"sidelight.agents.{agent}", *AGENT_RULES.get(agent, ())]
        expected = sorted([*CLAUDE_CODE_PROMPT, *own])
        assert _prompt_templates(world) == expected, agent
        (world.home / folder).rmdir()
    # an agent's folder moved by its variable
    moved = tmp_path / "codex-home"
    (moved / "sessions").mkdir(parents=True)
    expected = sorted([*CLAUDE_CODE_PROMPT, "sidelight.agents.codex"])
    assert _prompt_templates(world, CODEX_HOME=str(moved)) == expected
    # opencode's sessions are in its database, under XDG_DATA_HOME when that is set
    data = tmp_path / "data"
    (data / "opencode").mkdir(parents=True)
    (data / "opencode" / "opencode.db").write_bytes(b"")
    assert _prompt_templates(world) == CLAUDE_CODE_PROMPT
    expected = sorted([*CLAUDE_CODE_PROMPT, "sidelight.agents.opencode"])
    assert _prompt_templates(world, XDG_DATA_HOME=str(data)) == expected
    # its export folder in the state directory is its root from then on
    assert _prompt_templates(world) == expected
    assert world.log().count("ERROR") == 0


def test_the_hooks_own_process_imports_re_json_and_urls_only_if_used(tmp_path: Path) -> None:
    # pathlib imports urllib.parse (which compiles a pattern as it is imported, and imports ipaddress for
    # URLs a hook never parses), and re with it, and so do sidelight's modules for patterns a prompt
    # seldom uses (sidelight._fast.patterns); json's decoder imports re too (sidelight._fast.jsonio does
    # not). The hook's own process (sys.argv, not main(argv)) defers them, and each is the real module once
    # used.
    world = HookWorld(tmp_path, sessions=2)
    assert world.run_hook(0).returncode == 0
    world.prompt(1, "news from the sibling")
    code = (
        "import sys\n"
        "sys.argv = ['sidelight', 'hook', 'claude-code']\n"
        # an exit handler: the hook's process then returns from main rather than end at once
        "import atexit\n"
        "atexit.register(int)\n"
        "from sidelight.cli import main\n"
        "code = main()\n"
        "real = lambda name: name in sys.modules and '__file__' in vars(sys.modules[name])\n"
        "loaded = [n for n in ('re', 'enum', 'json', 'urllib.parse', 'ipaddress') if real(n)]\n"
        "assert 'pathlib' in sys.modules and 'fnmatch' in sys.modules\n"
        "import ipaddress, pathlib, re, urllib.parse\n"
        "from urllib.parse import urlsplit\n"
        "used = (str(ipaddress.ip_address('::1')), pathlib.PurePosixPath('/a b').as_uri(),\n"
        "        re.sub('b+', 'c', 'abb'), urllib.parse.quote('a b'), urlsplit('http://h/p').netloc)\n"
        "sys.stderr.write(repr((code, loaded, used, real('re'), real('urllib.parse'))))\n"
    )
    done = _prompt_in_python(world, code)
    assert "news from the sibling" in (context_of(done.stdout) or "")
    # enum: sidelight.formats' Format and Category are StrEnums.
    expected = (0, ["enum"], ("::1", "file:///a%20b", "ac", "a%20b", "h"), True, True)
    assert done.stderr.decode() == repr(expected)


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def test_import_sidelight_imports_nothing_else_of_it() -> None:
    code = (
        "import sys, sidelight\n"
        "print(sorted(m for m in sys.modules if m.startswith('sidelight')))\n"
        # the submodules it used to import on the way are still there as attributes
        "print(sidelight.formats.Layout.__name__, sidelight.types.Activity.__name__)\n"
        "print(sidelight._core.__name__, sidelight.scanning.scan is sidelight.scan)\n"
    )
    assert run_python(code).splitlines() == ["['sidelight']", "Layout Activity", "sidelight._core True"]


def test_the_cold_start_kit_as_a_package_imports_nothing() -> None:
    # sidelight._fast is a folder of stand-ins, each imported by name; its __init__ loads nothing more.
    code = "import sys, sidelight\nbefore = set(sys.modules)\nimport sidelight._fast\n"
    code += "print(sorted(set(sys.modules) - before))\n"
    assert run_python(code) == "['sidelight._fast']"


def test_public_names_are_the_same_whatever_is_imported_first() -> None:
    # `sidelight.history` is the function, also when its module was imported first (it is
    # `sidelight.features.history`, so the import system sets no attribute of the package itself).
    code = (
        "import sidelight.cli.history, sidelight.features.history as module\n"
        "import sidelight\n"
        "from sidelight import history\n"
        "assert history is module.history is sidelight.history, (history, sidelight.history)\n"
        "assert sidelight.Message is sidelight.history.__globals__['Message']\n"
        "missing = [name for name in sidelight.__all__ if getattr(sidelight, name, None) is None]\n"
        "assert not missing, missing\n"
        "assert set(sidelight.__all__) <= set(dir(sidelight))\n"
        "print('ok')\n"
    )
    assert run_python(code) == "ok"


def test_the_run_time_named_tuple_is_typings() -> None:
    # sidelight._fast._typing.NamedTuple makes, from one class statement, the class typing.NamedTuple makes.
    code = (
        "import pickle, typing\n"
        "from sidelight._fast import _typing\n"
        "def make(base):\n"
        "    class Point(base):\n"
        "        '''A point.'''\n"
        "        x: int\n"
        "        y: int = 2\n"
        "        def total(self):\n"
        "            return self.x + self.y\n"
        "    return Point\n"
        "ours, theirs = make(_typing.NamedTuple), make(typing.NamedTuple)\n"
        "for cls in (ours, theirs):\n"
        "    p = cls(1)\n"
        "    print(cls.__name__, cls.__qualname__.split('.')[-1], cls._fields, cls._field_defaults,\n"
        "          cls.__doc__, repr(p), p.total(), p._replace(y=5), tuple(cls.__annotations__),\n"
        "          issubclass(cls, tuple))\n"
        "class Late(_typing.NamedTuple):\n"
        "    a: int = 1\n"
        "    b: int = 2\n"
        "assert pickle.loads(pickle.dumps(Late(3))) == Late(3)\n"
        "try:\n"
        "    class Bad(_typing.NamedTuple):\n"
        "        a: int = 1\n"
        "        b: int\n"
        "except TypeError:\n"
        "    print('refused')\n"
    )
    ours, theirs, refused = run_python(code).splitlines()
    assert ours == theirs
    assert refused == "refused"


def test_the_hooks_own_process_ends_at_once_only_when_nothing_is_left_to_run(tmp_path: Path) -> None:
    # The hook's process skips the interpreter's teardown once its answer is out (cli.hooks._end_process),
    # unless something still has to run: an exit handler (a plugin's, logging's) runs as in any process.
    world = HookWorld(tmp_path, sessions=2)
    assert world.run_hook(0).returncode == 0
    mark = tmp_path / "exit-handler-ran"
    for handler in (False, True):
        world.prompt(1, f"news {handler}")
        code = (
            "import atexit, sys\n"
            f"if {handler}:\n"
            f"    atexit.register(lambda: open({str(mark)!r}, 'w').write('ran'))\n"
            # a buffered write nobody flushes: the interpreter's teardown writes it out, os._exit does not
            f"unflushed = open({str(tmp_path / 'unflushed')!r}, 'w')\n"
            "unflushed.write('teardown')\n"
            "sys.argv = ['sidelight', 'hook', 'claude-code']\n"
            "from sidelight.cli import main\n"
            "raise SystemExit(main())\n"
        )
        done = _prompt_in_python(world, code)
        assert f"news {handler}" in (context_of(done.stdout) or "")
        assert mark.exists() is handler
        assert (tmp_path / "unflushed").read_text() == ("teardown" if handler else "")
    assert world.log().count("ERROR") == 0
