"""Shell commands as a recap and the digest read them: what a command runs (its program and subcommand,
to match a retry), whether it only looks, and how it went, from its output.

One rule for both readers: a recap says ``Ran `pytest -q`: failed (exit 1): 2 failed, 10 passed.``, and
the digest ``ran pytest -q (failed, exit 1)``; a command that only looks (``grep`` finding nothing exits
with 1) is never said to have failed, nor one run again with success since.
"""

from __future__ import annotations

import re
import shlex

# Not ``typing``: the prompt hook's digest loads this module when a sibling ran a command (see
# tests/test_hook_imports.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Final

    from sidelight.types import ToolUse

__all__ = [
    "EXIT_CODE",
    "command_failure",
    "command_key",
    "command_outcome",
    "command_parts",
    "is_read_only",
    "is_status_check",
    "latest_failure",
    "written_files",
]


EXIT_CODE: Final = re.compile(
    r"(?:process exited with code|command exited with code|exit code:?|exit status:?|exited with code)"
    r"\s*(-?\d+)",
    re.IGNORECASE,
)
_TEST_SUMMARY: Final = (
    # pytest: "==== 2 failed, 10 passed in 0.31s ====" (also "1 passed, 1 warning in ...")
    re.compile(r"=+ ((?:\d+ \w+(?: \w+)?,? ?)+) in [\d.]+m?s(?: \([^)]*\))? =+"),
    # cargo: "test result: FAILED. 3 passed; 1 failed; 0 ignored"
    re.compile(r"test result: \w+\. (\d+ passed; \d+ failed)"),
    # jest / vitest: "Tests:  1 failed, 4 passed, 5 total" / "Tests  2 failed | 8 passed (10)"
    re.compile(r"^\s*Tests:?\s+((?:\d+ \w+[,|]?\s*)+)", re.MULTILINE),
    # go: "FAIL\tpkg/x\t0.01s" / "ok  \tpkg/x\t0.01s"
    re.compile(r"^(FAIL|ok)\s+\S+\s+[\d.]+s", re.MULTILINE),
)
_FAILED_TESTS: Final = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b|\bFAIL\b|test result: FAILED")


def _outcome(text: str, is_error: bool) -> tuple[bool | None, int | None, str | None]:
    """``(failed, exit code, test summary)`` of a command from its output (``failed`` is ``None`` when
    the output does not say)."""
    code: int | None = None
    head, tail = text[:2000], text[-2000:]
    for part in (tail, head):
        found = EXIT_CODE.findall(part)
        if found:
            code = int(found[-1])
            break
    tests: str | None = None
    for pattern in _TEST_SUMMARY:
        matches = pattern.findall(tail) or pattern.findall(head)
        if matches:
            tests = " ".join(str(matches[-1]).split()).rstrip(",|; ")
            break
    failed: bool | None
    if code is not None:
        failed = code != 0
    elif is_error:
        failed = True
    elif tests is not None:
        failed = _FAILED_TESTS.search(tests) is not None
    else:
        failed = None
    return failed, code, tests


def command_outcome(text: str, is_error: bool = False) -> tuple[bool | None, str | None]:
    """``(failed, summary)`` of a command from its output: failed is ``None`` when the output does not
    say; the summary is the exit code and a test summary line when there is one
    (``"exit 1: 2 failed, 10 passed"``)."""
    failed, code, tests = _outcome(text, is_error)
    if failed is None:
        return None, None
    parts = [f"failed (exit {code})" if failed and code is not None else "failed" if failed else "ok"]
    if tests:
        parts.append(tests)
    return failed, ": ".join(parts)


def command_failure(command: str, text: str, is_error: bool = False) -> str | None:
    """How ``command`` failed, in a few words (``failed, exit 1``, or ``failed`` without a code), from
    its output; ``None`` when it succeeded, its output does not say, or it only looks (a recap shows
    such a command as looking, whatever its exit code)."""
    failed, code, _ = _outcome(text, is_error)
    if not failed or is_read_only(command):
        return None
    return "failed" if code is None else f"failed, exit {code}"


def latest_failure(tool_uses: Iterable[ToolUse]) -> tuple[ToolUse, str] | None:
    """The most recent command among ``tool_uses`` (oldest first, results kept: ``scan_many(...,
    results=True)``) that failed and was not run again with success since (the same
    :func:`command_key`), with how it failed (:func:`command_failure`); ``None``: none did."""
    told: list[tuple[ToolUse, bool]] = []
    for use in tool_uses:
        if use.category != "command" or not use.primary_arg or use.result is None:
            continue
        failed, _, _ = _outcome(use.result, use.result_error)
        if failed is not None:  # None: the output does not say, neither a failure nor a fix
            told.append((use, failed))
    if not any(failed for _, failed in told):
        return None  # the common case, on every prompt's digest: no command key to work out
    last: dict[str, tuple[ToolUse, str] | None] = {}
    for use, failed in told:
        assert use.primary_arg is not None and use.result is not None  # as filtered above
        key = command_key(use.primary_arg)
        said = command_failure(use.primary_arg, use.result, use.result_error) if failed else None
        last.pop(key, None)  # the newest run of each key last, for the order below
        last[key] = None if said is None else (use, said)
    failures = [found for found in last.values() if found is not None]
    return failures[-1] if failures else None


# Shell commands that only look: their line is observational, and status checks among them are dropped.
_READ_ONLY_COMMANDS: Final = frozenset(
    [
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "sed",
        "awk",
        "grep",
        "rg",
        "ag",
        "find",
        "fd",
        "ls",
        "tree",
        "wc",
        "file",
        "stat",
        "du",
        "df",
        "pwd",
        "which",
        "type",
        "echo",
        "printf",
        "diff",
        "cmp",
        "jq",
        "nl",
        "sort",
        "uniq",
        "cut",
        "tr",
        "realpath",
        "basename",
        "dirname",
        "env",
        "printenv",
        "date",
        "whoami",
        "id",
        "uname",
        "ps",
        "top",
        "free",
    ]
)
_READ_ONLY_GIT: Final = frozenset(
    ["diff", "log", "show", "blame", "grep", "ls-files", "rev-parse", "branch", "remote", "describe"]
)
_STATUS_COMMANDS: Final = frozenset({"git status", "pwd", "jobs", "ps", "whoami", "date"})
_OPERATORS: Final = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>"})


def _command_tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote
        return command.split()


def command_parts(command: str) -> list[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``||``, ``;``, ``|``), as words."""
    parts: list[list[str]] = [[]]
    for token in _command_tokens(command):
        if token in _OPERATORS:
            parts.append([])
        else:
            parts[-1].append(token)
    return [p for p in parts if p]


#: Programs a command's output is piped into to look at it: they say nothing about what the command did.
_FILTERS: Final = frozenset(
    {
        "tail",
        "head",
        "grep",
        "rg",
        "egrep",
        "fgrep",
        "wc",
        "sort",
        "uniq",
        "less",
        "more",
        "cat",
        "tee",
        "cut",
    }
)
#: Subcommands whose next word names what is run (``npm run build``, ``uv run pytest``).
_RUNNERS: Final = frozenset({"run", "exec", "x", "run-script"})
#: Commands a chain ends with that only report (``cargo test && echo done``).
_CHAIN_NOISE: Final = frozenset({"echo", "printf", "true", ":", "sleep", "clear"})
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SUBCOMMAND: Final = re.compile(r"^[a-z][a-z0-9:_-]*$")


def command_key(command: str) -> str:
    """What a shell line runs, as program and subcommand, for matching a retry: ``mix dialyzer 2>&1 |
    tail -20`` and ``cd app && mix dialyzer | tail -5`` are both ``mix dialyzer``; ``git add . && git
    commit -m "Release"`` is ``git commit`` (the last significant command of a chain).

    Pipes into filters (``tail``, ``head``, ``grep``...), redirections, environment assignments and
    ``cd`` are dropped; ``npm run build`` keeps the script's name and ``python -m pytest`` the module's.
    """
    parts: list[tuple[list[str], bool]] = [([], False)]
    for token in _command_tokens(command):
        if token in _OPERATORS:
            parts.append(([], token in {"|", "|&"}))
        else:
            parts[-1][0].append(token)
    key: list[str] = []
    for words, piped in parts:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name == "cd" or (piped and name in _FILTERS) or (key and name in _CHAIN_NOISE):
            continue
        key = [name]
        rest = words[1:]
        if name.startswith("python") and rest[:1] == ["-m"] and len(rest) > 1:
            key += rest[:2]
        elif rest and _SUBCOMMAND.match(rest[0]):
            key.append(rest[0])
            if rest[0] in _RUNNERS and len(rest) > 1 and _SUBCOMMAND.match(rest[1]):
                key.append(rest[1])
    return " ".join(key) or " ".join(command.split())


def is_status_check(command: str) -> bool:
    parts = [p for p in command_parts(command) if p[0] != "cd"]
    return bool(parts) and all(" ".join(p[:2]) in _STATUS_COMMANDS or p[0] in _STATUS_COMMANDS for p in parts)


def is_read_only(command: str) -> bool:
    """Every part of the command only looks (``cd x && rg foo | head``); ``sed -i``, ``tee`` and
    redirections into files do not."""
    parts = command_parts(command)
    for words in parts:
        for index, word in enumerate(words):
            if word in _REDIRECTS and words[index + 1 : index + 2] != ["/dev/null"]:
                return False
        name = words[0].rsplit("/", 1)[-1]
        if name == "cd":
            continue
        if name == "git" and len(words) > 1 and words[1] in _READ_ONLY_GIT | {"status"}:
            continue
        if name == "sed" and any(w.startswith("-i") for w in words[1:]):
            return False
        if name not in _READ_ONLY_COMMANDS:
            return False
    return bool(parts)


#: Programs that change every file they are given, and those that change only their last argument.
_WRITES_EACH: Final = frozenset({"tee", "rm", "truncate", "touch", "unlink", "shred"})
_WRITES_LAST: Final = frozenset({"cp", "mv", "install", "rsync", "ln"})
#: Programs that change the files they are given with ``-i`` (in place).
_IN_PLACE: Final = frozenset({"sed", "perl"})
#: ``git`` subcommands that put files back as a commit had them.
_GIT_RESTORES: Final = frozenset({"checkout", "restore"})


def written_files(command: str) -> list[str]:
    """The files a shell line writes, as it names them (relative to its directory): the targets of its
    redirections (not ``/dev/null``), every file of ``tee``, ``rm``, ``touch``..., the last argument of
    ``cp``, ``mv``, ``rsync``..., the files of ``sed -i`` and ``perl -i``, the paths of ``git
    checkout`` / ``git restore``. A guess from the words alone (no variables, no globs): what it names
    is all it says.

    >>> written_files("cp -p app.orig app.py && sed -i s/a/b/ x.py | tee log.txt > out.txt")
    ['app.py', 'x.py', 'out.txt', 'log.txt']
    """
    found: list[str] = []
    for words in command_parts(command):
        kept: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            if word in _REDIRECTS:
                target = words[index + 1 : index + 2]
                if target and target[0] != "/dev/null":
                    found.append(target[0])
                index += 2
                continue
            kept.append(word)
            index += 1
        while kept and _ASSIGNMENT.match(kept[0]):
            kept = kept[1:]
        if not kept:
            continue
        name = kept[0].rsplit("/", 1)[-1]
        args = [word for word in kept[1:] if not word.startswith("-")]
        if name in _WRITES_EACH:
            found += args
        elif name in _WRITES_LAST and len(args) >= 2:
            found.append(args[-1])
        elif name in _IN_PLACE and any(w.startswith("-i") or w == "-pi" for w in kept[1:]):
            found += args[1:] if not any(w == "-e" for w in kept[1:]) else args
        elif name == "git" and args[:1] and args[0] in _GIT_RESTORES:
            found += args[1:]
    return list(dict.fromkeys(found))
