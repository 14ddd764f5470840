"""Executable docs: the Python API's blocks run, and the command output blocks match the real output.

The README is the front door (at most 300 lines, a digest on its first screen); the manual is in docs/.
A fenced block preceded by ``<!-- output: sidelight ARGS -->``, in the README or any docs/*.md, must equal
what ``sidelight ARGS`` prints (run beside the files the Python example of docs/python.md wrote). When one
differs, the test rewrites the block in place (not under CI) and fails, so ``git diff`` shows the change
to review.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, cli_command

README = ROOT / "README.md"
#: The README and the manual: every document whose blocks are checked.
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
#: The Python API's story: its blocks run in order, in one namespace.
PYTHON_API = ROOT / "docs" / "python.md"
#: Where every command's --help is shown.
CLI = ROOT / "docs" / "cli.md"
#: The README's most: a front door, not a manual.
README_MAX_LINES = 300
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```\n", re.M | re.S)
OUTPUT = re.compile(r"^<!-- output: (?P<command>[^>]*?) -->\n```text\n(?P<body>.*?)^```\n", re.M | re.S)
# argparse's layout of options changed in Python 3.13; the help blocks are written by 3.11 and 3.12.
HELP_LAYOUT_STABLE = sys.version_info < (3, 13)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line number, source)`` of each ```python block."""
    return [
        (text[: m.start()].count("\n") + 2, m["body"])
        for m in FENCE.finditer(text)
        if m["lang"] in {"python", "py"}
    ]


@pytest.fixture(scope="module")
def readme_namespace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the Python API's blocks in order, in one namespace (they tell one story)."""
    text = PYTHON_API.read_text(encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    cwd = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("readme"))
    try:
        for line, source in python_blocks(text):
            code = compile("\n" * (line - 1) + source, str(PYTHON_API), "exec")
            exec(code, namespace)
    finally:
        os.chdir(cwd)
    return namespace


def test_readme_opens_with_the_two_commands():
    first = FENCE.search(README.read_text(encoding="utf-8"))
    assert first is not None
    commands = [line.split("#")[0].strip() for line in first["body"].splitlines()]
    assert commands == ["make run", "make test"]


def test_the_readme_is_a_front_door():
    """At most 300 lines, a real digest on its first screen, and a link to every document of the manual."""
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines: move the manual to docs/"
    assert any(line.startswith("[Session Activity]") for line in lines[:60]), (
        "no digest in the first 60 lines"
    )
    first = EXAMPLE.search(text)
    assert first is not None and "[Session Activity]" in first["body"], "the digest shown is no checked run"
    unlinked = [doc.name for doc in DOCS[1:] if f"](docs/{doc.name})" not in text]
    assert unlinked == [], f"documents the README does not link: {unlinked}"


#: A relative link of a document: ``[text](path)``, ``[text](path#anchor)`` or ``[text](#anchor)``.
LINK = re.compile(r"\]\((?P<path>(?!https?:|mailto:)[^)#\s]*)(?:#(?P<anchor>[^)\s]+))?\)")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a document's headings."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.*)$", text, re.M)
    }


def test_every_link_between_the_documents_leads_somewhere():
    broken = []
    for doc in DOCS:
        for m in LINK.finditer(FENCE.sub("", doc.read_text(encoding="utf-8"))):
            target = (doc.parent / m["path"]).resolve() if m["path"] else doc
            if not target.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {m[0]}")
            elif m["anchor"] and target.suffix == ".md" and m["anchor"] not in anchors(target):
                broken.append(f"{doc.relative_to(ROOT)}: {m[0]} (no such heading)")
    assert broken == []


def test_python_api_examples(readme_namespace):
    assert python_blocks(PYTHON_API.read_text(encoding="utf-8")), "docs/python.md has no Python example"
    assert readme_namespace["activity"].messages.total == 2


def blocks(pattern: re.Pattern[str]) -> list[Any]:
    """``(document, command, body)`` of each block ``pattern`` finds, in the README and docs/."""
    return [
        pytest.param(doc, m["command"], m["body"], id=f"{doc.name}: {m['command']}")
        for doc in DOCS
        for m in pattern.finditer(doc.read_text(encoding="utf-8"))
    ]


def rewrite(doc: Path, marker: str, expected: str, shown: str) -> None:
    """Put what the command really printed in place of what ``doc`` said (not under CI)."""
    if not os.environ.get("CI"):
        text = doc.read_text(encoding="utf-8")
        doc.write_text(text.replace(marker + expected, marker + shown), encoding="utf-8")


@pytest.mark.parametrize(("doc", "command", "expected"), blocks(OUTPUT))
def test_command_output(doc, command, expected, readme_namespace):
    args = shlex.split(command)
    assert args[0] == "sidelight"
    if "--help" in args and not HELP_LAYOUT_STABLE:
        pytest.skip("argparse lays out help differently on this Python")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env["COLUMNS"] = "100"
    result = subprocess.run(
        [*cli_command(), *args[1:]],
        capture_output=True,
        text=True,
        env=env,
        cwd=readme_namespace["path"].parent,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    if result.stdout != expected:
        rewrite(doc, f"<!-- output: {command} -->\n```text\n", expected, result.stdout)
    assert result.stdout == expected, (
        f"{doc.name}: output of `{command}` was out of date: rewritten, review it"
    )


def test_every_command_is_documented():
    """Each subcommand's --help is in docs/cli.md."""
    from sidelight.cli import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    documented = {m["command"] for m in OUTPUT.finditer(CLI.read_text(encoding="utf-8"))}
    assert "sidelight --help" in documented
    for name in subcommands._name_parser_map:
        assert f"sidelight {name} --help" in documented


# ---------------------------------------------------------------------------------------------------
# Every command the README and docs/ show exists: the README's install commands work from a clone, and
# every `sidelight ...` command in a code block (or a code span) parses with the real parser.

INSTALL_BLOCK = re.compile(r"^<!-- install commands: [^>]*-->\n```sh\n(?P<body>.*?)^```\n", re.M | re.S)
#: `sidelight ...` in a code span of the prose (placeholders such as NAME parse as any value would; a
#: line sidelight prints, such as `sidelight dashboard: URL`, is no command).
SPAN = re.compile(r"`(?P<command>sidelight(?: (?![\w-]+:)[^`]*)?)`")
#: An optional part of a usage synopsis, `[--budget N]`: left out (each command's --help is checked whole).
OPTIONAL = re.compile(r" \[[^\]]*\]")
#: Installing sidelight by name, from an index where it is not published.
FROM_AN_INDEX = re.compile(r"\bpipx? install (?:-\S+ )*['\"]?sidelight\b")


def parse_error(command: str) -> str | None:
    """Why the real parser refuses ``command`` (``None``: it parses; ``--help`` and ``-V`` count)."""
    import contextlib
    import io

    from sidelight.cli import build_parser

    # `sidelight sessions | head -1`, `sidelight completion bash > FILE`: the command before the shell's part
    command = OPTIONAL.sub("", command)
    args = shlex.split(re.split(r" (?:\||>>?|2>&1|&&) ", command, maxsplit=1)[0], comments=True)
    assert args[0] == "sidelight", command
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(args[1:])
    except SystemExit as exit:
        if exit.code not in (0, None):
            return said.getvalue().strip().splitlines()[-1]
    return None


def commands_in_code(text: str) -> tuple[list[str], list[str]]:
    """The ``sidelight ...`` commands of every code block (``$ `` prompts and comments taken off),
    and those of the code spans in the prose (which may name a command without its arguments)."""
    found = []
    for block in FENCE.finditer(OUTPUT.sub("", text)):  # not the help texts
        if block["lang"] not in {"sh", "text", "bash", "console", ""}:
            continue
        lines = block["body"].splitlines()
        # A block with `$ ` prompts shows output too: only its prompted lines are commands.
        prompted = any(line.startswith("$ ") for line in lines)
        for line in lines:
            if prompted and not line.startswith("$ "):
                continue
            line = line.removeprefix("$ ").strip()
            if line.startswith("sidelight "):
                found.append(line)
    spans = [m["command"] for m in SPAN.finditer(FENCE.sub("", text))]
    return list(dict.fromkeys(found)), list(dict.fromkeys(spans))


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.name)
def test_every_sidelight_command_in_the_docs_parses(doc):
    in_blocks, spans = commands_in_code(doc.read_text(encoding="utf-8"))
    if doc == README:
        assert len(in_blocks) > 10 and len(spans) > 10, (in_blocks, spans)
    refused = {command: why for command in in_blocks if (why := parse_error(command)) is not None}
    for command in spans:  # `sidelight recap` names the command: only its missing arguments are fine
        why = parse_error(command)
        if why is not None and "arguments are required" not in why:
            refused[command] = why
    assert refused == {}, f"{doc.name}: commands the parser refuses"


def test_the_parse_check_refuses_what_does_not_exist():
    assert parse_error("sidelight read NAME --lines 50") is None
    assert parse_error("sidelight --help") is None
    assert "unknown command" in (parse_error("sidelight frobnicate") or "")
    assert "unrecognized arguments" in (parse_error("sidelight sessions --colour") or "")


def test_readme_install_commands_work_from_a_clone():
    import tomllib

    text = README.read_text(encoding="utf-8")
    blocks = list(INSTALL_BLOCK.finditer(text))
    assert blocks, "the README has no checked install block"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    problems = []
    for line in "".join(block["body"] for block in blocks).splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        command = " ".join(words)
        if words[0] == "make":
            if not re.search(rf"^{re.escape(words[1])}:", makefile, re.M):
                problems.append(f"{command}: no such target in the Makefile")
        elif words[:2] in (["pip", "install"], ["pipx", "install"]) and words[-1].endswith(".whl"):
            if words[-1] != "dist/sidelight-*.whl" or not re.search(
                r"maturin build .*--out dist$", makefile, re.M
            ):
                problems.append(f"{command}: not the wheel `make wheel` builds in dist/")
        elif words[:2] in (["pip", "install"], ["pipx", "install"]):
            spec = re.fullmatch(r"(?P<path>[^\[]+)(?:\[(?P<extras>[^\]]*)\])?", words[-1])
            if spec is None or not (ROOT / spec["path"]).joinpath("pyproject.toml").is_file():
                problems.append(f"{command}: not a path to this clone (sidelight is on no index)")
            elif spec["extras"] and not set(spec["extras"].split(",")) <= extras:
                problems.append(f"{command}: no such extra in pyproject.toml")
            elif words[0] == "pipx" and "sidelight" not in project["scripts"]:
                problems.append(f"{command}: pipx needs the sidelight script")
        elif words[0] == "sidelight":
            if (why := parse_error(command)) is not None:
                problems.append(f"{command}: {why}")
        else:
            problems.append(f"{command}: not a command this test knows how to check")
    assert problems == []
    for path in DOCS:
        assert FROM_AN_INDEX.search(path.read_text(encoding="utf-8")) is None, (
            f"{path}: pip install sidelight"
        )


# ---------------------------------------------------------------------------------------------------
# The docs' examples of read, history, recap, sessions, status and context are real runs: each
# block after ``<!-- example: [VAR=value ...] sidelight ARGS -->`` is ``$ COMMAND`` and what the command
# printed, run on the project's sample transcripts (tests/data, written by the real CLIs), placed
# where each agent keeps its sessions in a fresh HOME, with the clock at EXAMPLE_NOW and TZ=UTC. The
# temporary HOME is shown as /home/me. A block that differs is rewritten (not under CI) and fails.

EXAMPLE = re.compile(r"^<!-- example: (?P<command>[^>]*?) -->\n```text\n(?P<body>.*?)^```\n", re.M | re.S)
DATA = ROOT / "tests" / "data"
#: Each sample transcript and where its agent keeps it, relative to HOME.
SAMPLES = {
    "claude-code/four-tools-resume.jsonl": ".claude/projects/-tmp-sidelight-samples-claude-code-project/"
    "efe363b5-b821-4830-99c4-b4c7fff4e274.jsonl",
    "codex/four-tools-resume.jsonl": ".codex/sessions/2026/11/21/"
    "rollout-2026-11-21T21-20-32-01a1fffb-7517-7871-9b38-b9b39d5b1d71.jsonl",
    "pi/four-tools-continue.jsonl": ".pi/agent/sessions/--tmp-sidelight-samples-pi-project--/"
    "2026-11-21T21-20-27-365Z_01a1fffb-62e4-7073-aed8-e9b7ed9e653b.jsonl",
}
#: The examples' clock, 2026-11-21T23:00:00Z: a while after the samples were written (21:20-21:21).
EXAMPLE_NOW = 1795302000.0
#: Runs the CLI with ``time.time`` fixed (sidelight reads the clock only through it): ages, states.
FIXED_CLOCK = (
    "import sys, time\n"
    "now = float(sys.argv.pop(1))\n"
    "time.time = lambda: now\n"
    "from sidelight.cli import main\n"
    "sys.exit(main())\n"
)


@pytest.fixture(scope="module")
def example_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HOME holding the sample transcripts where their agents keep them, modified when they ended."""
    home = tmp_path_factory.mktemp("example") / "home"
    for sample, place in SAMPLES.items():
        target = home / place
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((DATA / sample).read_bytes())
        os.utime(target, (EXAMPLE_NOW - 5940, EXAMPLE_NOW - 5940))  # 21:21, when the samples ended
    return home


def test_the_docs_have_examples_of_every_reading_command():
    shown = {
        shlex.split(m["command"].split("sidelight ", 1)[1])[0]
        for doc in DOCS
        for m in EXAMPLE.finditer(doc.read_text(encoding="utf-8"))
    }
    assert shown >= {"read", "history", "recap", "sessions", "status", "context"}


@pytest.mark.parametrize(("doc", "command", "expected"), blocks(EXAMPLE))
def test_example(doc, command, expected, example_home, tmp_path):
    words = shlex.split(command)
    assignments = dict(word.split("=", 1) for word in words[: words.index("sidelight")])
    args = words[words.index("sidelight") + 1 :]
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "XDG_", "CLAUDE_", "CODEX_"))
    }
    for name in ("PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME", "NO_COLOR"):
        env.pop(name, None)
    env.update(HOME=str(example_home), SIDELIGHT_STATE_DIR=str(tmp_path / "state"), TZ="UTC", COLUMNS="100")
    env.update(assignments)
    result = subprocess.run(
        [sys.executable, "-c", FIXED_CLOCK, str(EXAMPLE_NOW), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    shown = f"$ {command}\n" + result.stdout.replace(str(example_home), "/home/me")
    if shown != expected:
        rewrite(doc, f"<!-- example: {command} -->\n```text\n", expected, shown)
    assert shown == expected, f"{doc.name}: example `{command}` was out of date: rewritten, review it"
