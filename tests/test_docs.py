"""Executable docs: the README's Python blocks run, and its command output blocks match the real output.

A fenced block preceded by ``<!-- output: sidelight ARGS -->`` must equal what ``sidelight ARGS`` prints
(run beside the files the README's Python example wrote). When one differs, the test rewrites the block
in place (not under CI) and fails, so ``git diff README.md`` shows the change to review.
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
    """Run the README's Python blocks in order, in one namespace (they tell one story)."""
    text = README.read_text(encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    cwd = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("readme"))
    try:
        for line, source in python_blocks(text):
            code = compile("\n" * (line - 1) + source, str(README), "exec")
            exec(code, namespace)
    finally:
        os.chdir(cwd)
    return namespace


def test_readme_opens_with_the_two_commands():
    first = FENCE.search(README.read_text(encoding="utf-8"))
    assert first is not None
    commands = [line.split("#")[0].strip() for line in first["body"].splitlines()]
    assert commands == ["make run", "make test"]


def test_readme_python_examples(readme_namespace):
    assert python_blocks(README.read_text(encoding="utf-8")), "the README has no Python example"
    assert readme_namespace["activity"].messages.total == 2


def output_blocks() -> list[Any]:
    text = README.read_text(encoding="utf-8")
    return [pytest.param(m["command"], m["body"], id=m["command"]) for m in OUTPUT.finditer(text)]


@pytest.mark.parametrize(("command", "expected"), output_blocks())
def test_readme_command_output(command, expected, readme_namespace):
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
    if result.stdout != expected and not os.environ.get("CI"):
        text = README.read_text(encoding="utf-8")
        marker = f"<!-- output: {command} -->\n```text\n"
        README.write_text(text.replace(marker + expected, marker + result.stdout), encoding="utf-8")
    assert result.stdout == expected, f"README.md output of `{command}` was out of date: rewritten, review it"


def test_every_command_is_documented():
    """Each subcommand's --help is in the README."""
    from sidelight.cli import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    documented = {m["command"] for m in OUTPUT.finditer(README.read_text(encoding="utf-8"))}
    assert "sidelight --help" in documented
    for name in subcommands._name_parser_map:
        assert f"sidelight {name} --help" in documented
