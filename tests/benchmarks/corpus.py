"""A seeded generator of Claude-Code-shaped JSONL transcripts for the benchmarks.

The lines have the shapes of real Claude Code 2.1.x transcripts (docs/agent-formats.md sections 0 and 2): a
``queue-operation`` pair, a typed prompt as a plain string, about a dozen ``attachment`` lines per prompt
(some large: skill listings, file contents), assistant responses written one content block per line
sharing a ``message.id`` (thinking, text, tool_use), user ``tool_result`` lines with a ``toolUseResult``
copy of the result, ``progress``, ``system``, ``file-history-snapshot`` and ``last-prompt`` lines, and the
common metadata fields on every message line.

Tool result sizes are log-normal, up to a few MB; half of them are code full of ``\\n``, ``"``, ``\\`` and
non-ASCII text. The output is deterministic for a seed, and cached under ``tests/benchmarks/.corpus/``
keyed by shape, size, seed and ``GENERATOR_VERSION`` (bump it when the output changes).

``python -m tests.benchmarks.corpus SHAPE [MB] [SEED]`` writes one and prints its path.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

GENERATOR_VERSION = 1
CACHE_DIR = Path(__file__).parent / ".corpus"
SHAPES = ("realistic", "many_small", "few_huge", "short_lines", "escape_heavy", "adversarial")
MB = 1024 * 1024

CWD = "/home/dev/work/orbit-api"
VERSION = "2.1.328"
MODEL = "claude-sonnet-4-6"


def dumps(obj: Any) -> bytes:
    """Compact JSON with raw non-ASCII, like ``JSON.stringify`` in the CLI."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


# -- text material -------------------------------------------------------------------------------

WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "this",
    "be",
    "as",
    "are",
    "not",
    "we",
    "can",
    "you",
    "will",
    "have",
    "from",
    "by",
    "test",
    "file",
    "function",
    "error",
    "value",
    "return",
    "type",
    "module",
    "config",
    "build",
    "run",
    "check",
    "update",
    "fix",
    "add",
    "remove",
    "bug",
    "request",
    "response",
    "session",
    "cursor",
    "offset",
    "line",
    "parse",
    "decode",
    "server",
    "client",
    "cache",
    "index",
    "query",
    "async",
]
NON_ASCII = [
    "é",
    "ü",
    "ñ",
    "ø",
    "ß",
    "中文",
    "日本語",
    "한국어",
    "Ελληνικά",
    "Русский",
    "עברית",
    "العربية",
    "😀",
    "🚀",
    "✓",
    "→",
    "∑",
    "≤",
    "≥",
    "“quotes”",
    "‘single’",
    "—",
    "…",
]
CODE_LINES = (
    'def parse(line: str) -> dict:\n    return json.loads(line)  # "quoted" \\ backslash',
    'const re = /\\d+\\.\\d+/g; console.log("path: C:\\\\Users\\\\dev", `tpl ${x}`);',
    '    if (s[i] == \'"\') { out += "\\\\\\""; } else if (s[i] == \'\\n\') { out += "\\\\n"; }',
    'fn main() {\n    println!("{}\\t{:?}", "héllo wörld", vec![1, 2, 3]);\n}',
    "SELECT id, name FROM users WHERE email LIKE '%@exämple.com' AND note <> 'it''s';",
    '{"key": "value with \\"escapes\\" and \\u00e9", "n": [1, 2.5, -3e10, null, true]}',
    '\t\tlog.info("状态: %s → %d", state, count)  // 日本語のコメント',
    "    echo \"$HOME\\\\bin\" | sed -e 's/\\//\\\\/g' > /tmp/out.txt 2>&1",
    "class Cursor:\n    '''Offset, inode and hashes — see docs/activity.md.'''\n    __slots__ = ('offset',)",
    "<div class=\"row\">\\n  <span title='x'>&amp; «guillemets» 🚀</span>\\n</div>",
)
TOOL_NAMES = ("Bash", "Read", "Edit", "Write", "Grep", "Glob", "Bash", "Read", "Read", "Bash")
SYNTHETIC_PROMPTS = (
    "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
    "<local-command-stdout></local-command-stdout>",
    "[Request interrupted by user for tool use]",
    "<bash-input>git status</bash-input>",
)


class Material:
    """Pools of prose and code that large strings are sliced from (fast, yet seeded)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        prose = []
        for _ in range(20_000):
            word = rng.choice(WORDS) if rng.random() > 0.03 else rng.choice(NON_ASCII)
            prose.append(word + ("." if rng.random() < 0.08 else ""))
        self.prose = " ".join(prose)
        code = []
        for i in range(6_000):
            line = rng.choice(CODE_LINES)
            code.append(f"{i:5d}\t{line}")
        self.code = "\n".join(code)

    def slice(self, pool: str, n: int) -> str:
        if n <= 0:
            return ""
        parts = []
        while n > 0:
            start = self.rng.randrange(0, len(pool) - 1)
            part = pool[start : start + n]
            parts.append(part)
            n -= len(part)
        return "".join(parts)

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def sentence(self, lo: int = 5, hi: int = 30) -> str:
        return self.words(self.rng.randint(lo, hi)).capitalize() + "."

    def result_size(self, median: float, sigma: float, cap: int) -> int:
        return min(cap, max(10, int(self.rng.lognormvariate(math.log(median), sigma))))

    def result_text(self, size: int, code: bool | None = None) -> str:
        if code is None:
            code = self.rng.random() < 0.5
        return self.slice(self.code if code else self.prose, size)


# -- one Claude Code session -----------------------------------------------------------------------


@dataclass
class Profile:
    """Knobs of a generated session."""

    result_median: float = 1500.0
    result_sigma: float = 1.8
    result_cap: int = 3 * MB
    attachments: bool = True
    big_attachments: bool = True
    code_share: float = 0.5
    short_only: bool = False
    max_responses: int = 8


class ClaudeSession:
    """Writes the lines of one session, turn by turn, to ``out`` until ``target`` bytes are written."""

    def __init__(self, rng: random.Random, out: BinaryIO, profile: Profile, material: Material) -> None:
        self.rng = rng
        self.out = out
        self.p = profile
        self.m = material
        self.session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.parent: str | None = None
        self.clock = 1_763_681_581.0 + rng.randrange(0, 10_000_000)
        self.written = 0
        self.tool_n = 0

    # -- helpers

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def ts(self) -> str:
        self.clock += self.rng.random() * 3
        whole = int(self.clock)
        ms = int((self.clock - whole) * 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{ms:03d}Z"

    def emit(self, obj: dict[str, Any]) -> None:
        data = dumps(obj) + b"\n"
        self.out.write(data)
        self.written += len(data)

    def meta(self, kind: str, **fields: Any) -> dict[str, Any]:
        uid = self.uid()
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session_id,
            "version": VERSION,
            "gitBranch": "main",
            "type": kind,
            **fields,
            "uuid": uid,
            "timestamp": self.ts(),
        }
        self.parent = uid
        return line

    # -- line kinds

    def queue(self, prompt: str) -> None:
        for op in ("enqueue", "dequeue"):
            line = {
                "type": "queue-operation",
                "operation": op,
                "timestamp": self.ts(),
                "sessionId": self.session_id,
            }
            if op == "enqueue":
                line["content"] = prompt
            self.emit(line)

    def prompt(self) -> str:
        r = self.rng.random()
        if r < 0.08:
            text = self.rng.choice(SYNTHETIC_PROMPTS)
        elif r < 0.12:
            self.emit(self.meta("user", message={"role": "user", "content": self.m.sentence()}, isMeta=True))
            text = self.m.sentence()
        else:
            text = " ".join(self.m.sentence() for _ in range(self.rng.randint(1, 6)))
            if self.rng.random() < 0.2:
                text += (
                    " " + self.rng.choice(NON_ASCII) + "\n\n```\n" + self.m.slice(self.m.code, 300) + "\n```"
                )
        self.queue(text)
        content: Any = text if self.rng.random() < 0.85 else [{"type": "text", "text": text}]
        self.emit(
            self.meta(
                "user",
                message={"role": "user", "content": content},
                promptId=self.uid(),
                permissionMode="default",
            )
        )
        return text

    def attachments(self) -> None:
        kinds = [
            ("environment", 300),
            ("model", 60),
            ("date", 40),
            ("deferred_tools_delta", 2000),
            ("hook_additional_context", 400),
            ("todo_reminder", 300),
            ("plan_mode", 100),
            ("queued_command", 80),
            ("task_reminder", 200),
            ("prompt_snapshot", 600),
        ]
        if self.p.big_attachments:
            kinds += [
                ("skill_listing", self.rng.randint(8_000, 60_000)),
                ("file", self.rng.randint(2_000, 200_000)),
            ]
        else:
            kinds += [("skill_listing", 600), ("file", 800)]
        self.rng.shuffle(kinds)
        for kind, size in kinds:
            body: dict[str, Any] = {"type": kind}
            if kind == "hook_additional_context":
                body.update(content=["[Session Activity] " + self.m.sentence()], hookName="UserPromptSubmit")
            elif kind == "file":
                body.update(
                    filename=f"{CWD}/src/module_{self.rng.randint(0, 99)}.py",
                    content={"type": "text", "file": {"content": self.m.result_text(size, code=True)}},
                )
            else:
                body["content"] = self.m.result_text(size, code=False)
            self.emit(self.meta("attachment", attachment=body))

    def tool_input(self, name: str) -> dict[str, Any]:
        path = f"{CWD}/src/{self.rng.choice(WORDS)}_{self.rng.randint(0, 40)}.py"
        if name == "Bash":
            cmd = self.rng.choice(
                ("pytest -q", "git status", "cargo build --release", "rg -n 'TODO' src", "ls -la")
            )
            return {"command": cmd, "description": self.m.sentence(3, 8)}
        if name == "Read":
            return {"file_path": path} | ({"offset": 1, "limit": 200} if self.rng.random() < 0.3 else {})
        if name == "Edit":
            return {
                "file_path": path,
                "old_string": self.m.slice(self.m.code, 120),
                "new_string": self.m.slice(self.m.code, 140),
            }
        if name == "Write":
            return {
                "file_path": path,
                "content": self.m.result_text(self.m.result_size(2000, 1.2, 200_000), code=True),
            }
        if name == "Grep":
            return {
                "pattern": self.rng.choice(("def \\w+", "TODO", "import json", "unwrap\\(\\)")),
                "path": "src",
                "output_mode": "content",
            }
        return {"pattern": self.rng.choice(("**/*.py", "src/**/*.rs", "*.md"))}

    def tool_result(self, name: str, tool_id: str, tool_input: dict[str, Any], assistant_uuid: str) -> None:
        code = self.rng.random() < self.p.code_share
        if self.p.short_only:
            size = self.rng.randint(10, 120)
        else:
            size = self.m.result_size(self.p.result_median, self.p.result_sigma, self.p.result_cap)
        out = self.m.result_text(size, code)
        if name == "Bash":
            copy: dict[str, Any] = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            if self.rng.random() < 0.5 and not self.p.short_only:
                for _ in range(self.rng.randint(1, 3)):
                    self.emit(
                        self.meta(
                            "progress",
                            data={
                                "type": "bash_progress",
                                "output": self.m.slice(out, 200),
                                "elapsedTimeSeconds": 1,
                            },
                            toolUseID=tool_id,
                            parentToolUseID=tool_id,
                        )
                    )
        elif name == "Read":
            lines = out.count("\n") + 1
            copy = {
                "type": "text",
                "file": {
                    "filePath": tool_input["file_path"],
                    "content": out,
                    "numLines": lines,
                    "startLine": 1,
                    "totalLines": lines,
                },
            }
        elif name in ("Edit", "Write"):
            copy = {
                "type": "update",
                "filePath": tool_input["file_path"],
                "content": out,
                "structuredPatch": [],
                "originalFile": None,
            }
        else:
            copy = {
                "mode": "content",
                "numFiles": 3,
                "filenames": [],
                "content": out,
                "numLines": out.count("\n"),
            }
        result: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": out}
        if self.rng.random() < 0.1:
            result["is_error"] = True
        self.emit(
            self.meta(
                "user",
                message={"role": "user", "content": [result]},
                toolUseResult=copy,
                sourceToolAssistantUUID=assistant_uuid,
            )
        )

    def response(self, tools: int) -> None:
        """One assistant response: a line per content block, one ``message.id``; then the tool results."""
        msg_id = "msg_01" + "".join(
            self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789") for _ in range(22)
        )
        request_id = "req_011C" + self.uid().replace("-", "")[:20]
        blocks: list[dict[str, Any]] = []
        if self.rng.random() < 0.6:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": self.m.words(self.rng.randint(10, 200)),
                    "signature": "Eq" + self.uid() * 4,
                }
            )
        if self.rng.random() < 0.8 or not tools:
            blocks.append(
                {"type": "text", "text": " ".join(self.m.sentence() for _ in range(self.rng.randint(1, 4)))}
            )
        uses = []
        for _ in range(tools):
            self.tool_n += 1
            name = self.rng.choice(TOOL_NAMES)
            tool_id = f"toolu_{self.tool_n:06d}{self.uid()[:12]}"
            tool_input = self.tool_input(name)
            uses.append((name, tool_id, tool_input))
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": name,
                    "input": tool_input,
                    "caller": {"type": "direct"},
                }
            )
        usage = {
            "input_tokens": self.rng.randint(1, 9000),
            "cache_read_input_tokens": 12000,
            "output_tokens": 300,
            "service_tier": "standard",
        }
        last_uuid = ""
        for block in blocks:
            message = {
                "model": MODEL,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            line = self.meta("assistant", message=message, requestId=request_id)
            last_uuid = line["uuid"]
            self.emit(line)
        for name, tool_id, tool_input in uses:
            self.tool_result(name, tool_id, tool_input, last_uuid)

    def turn(self) -> None:
        text = self.prompt()
        if self.p.attachments:
            self.attachments()
        for _ in range(self.rng.randint(1, self.p.max_responses)):
            self.response(self.rng.choice((1, 1, 1, 2, 3)))
        self.response(0)
        self.emit(
            self.meta(
                "system", subtype="turn_duration", durationMs=self.rng.randint(1000, 90000), isMeta=False
            )
        )
        if self.rng.random() < 0.3:
            self.emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": self.uid(),
                    "snapshot": {"messageId": self.uid(), "trackedFileBackups": {}, "timestamp": self.ts()},
                    "isSnapshotUpdate": False,
                }
            )
        self.emit({"type": "last-prompt", "lastPrompt": text[:200], "sessionId": self.session_id})
        if self.rng.random() < 0.05:
            self.emit({"type": "ai-title", "aiTitle": self.m.sentence(3, 6), "sessionId": self.session_id})

    def short_turn(self) -> None:
        """Only short lines: small prompts, one-block responses, tiny results, progress, queue lines."""
        self.queue(self.m.sentence(2, 6))
        self.emit(self.meta("user", message={"role": "user", "content": self.m.sentence(2, 8)}))
        for _ in range(self.rng.randint(1, 6)):
            self.response(self.rng.choice((0, 1, 1)))
            self.emit(
                self.meta(
                    "progress", data={"type": "bash_progress", "output": self.m.words(3)}, toolUseID="toolu_x"
                )
            )

    def write(self, target: int) -> None:
        while self.written < target:
            if self.p.short_only:
                self.short_turn()
            else:
                self.turn()


# -- adversarial lines -----------------------------------------------------------------------------


def adversarial_lines(rng: random.Random, material: Material) -> Iterator[bytes]:
    """Valid lines in strange forms, mixed with lines every reader must skip. Each item ends in ``\\n``."""
    session = "adv-" + str(uuid.UUID(int=rng.getrandbits(128), version=4))
    n = 0
    while True:
        n += 1
        stamp = f"2026-11-21T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.000Z"
        kind = rng.randrange(14)
        if kind == 0:  # deep nesting inside an ignored field (200 levels: above serde_json's default 128)
            depth = rng.choice((50, 200))
            yield (
                dumps({"type": "progress", "sessionId": session, "data": None, "timestamp": stamp})[:-1]
                + b',"deep":'
                + b"[" * depth
                + b"]" * depth
                + b"}\n"
            )
        elif kind == 1:  # huge runs of backslashes and quotes in a tool result
            out = "\\" * rng.randint(1000, 200_000) + '"' * rng.randint(1, 500)
            result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": out}
            yield (
                dumps(
                    {
                        "type": "user",
                        "message": {"role": "user", "content": [result]},
                        "toolUseResult": {"stdout": out},
                        "timestamp": stamp,
                    }
                )
                + b"\n"
            )
        elif kind == 2:  # keys in unusual order, "type" last
            msg = {
                "content": [
                    {
                        "input": {"command": f"echo {n}"},
                        "name": "Bash",
                        "id": f"toolu_adv{n}",
                        "type": "tool_use",
                    }
                ],
                "id": f"msg_adv{n}",
                "model": MODEL,
            }
            yield (
                b'{"timestamp":"'
                + stamp.encode()
                + b'","message":'
                + dumps(msg)
                + b',"sessionId":"'
                + session.encode()
                + b'","type":"assistant"}\n'
            )
        elif kind == 3:  # \u escapes everywhere, surrogate pairs included
            text = material.sentence() + " é中😀🚀 \U0001f9ea " + rng.choice(NON_ASCII)
            yield (
                json.dumps(
                    {"type": "user", "message": {"role": "user", "content": text}, "timestamp": stamp},
                    ensure_ascii=True,
                ).encode()
                + b"\n"
            )
        elif kind == 4:  # blank and whitespace-only lines
            yield rng.choice((b"\n", b"   \n", b"\t\t\n", b" \r\n"))
        elif kind == 5:  # invalid UTF-8
            yield (
                b'{"type":"user","message":{"role":"user","content":"bad \xff\xfe byte"},"timestamp":"'
                + stamp.encode()
                + b'"}\n'
            )
        elif kind == 6:  # malformed JSON of several kinds
            yield rng.choice(
                (
                    b'{"type":"user","message":{"content":"unterminated}\n',
                    b"[1,2,3]\n",
                    b"not json\n",
                    b'{"type":"assistant",}\n',
                    b"{}}\n",
                    b"null\n",
                )
            )
        elif kind == 7:  # an assistant text with escapes, whitespace and non-ASCII
            text = "  \n" + material.slice(material.code, rng.randint(10, 3000)) + "\t\n "
            msg = {
                "id": f"msg_t{n}",
                "model": MODEL,
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            }
            yield dumps({"type": "assistant", "message": msg, "timestamp": stamp}) + b"\n"
        elif kind == 8:  # JSON whitespace between tokens
            yield (
                b'{ "type" : "user" ,\t"message" : { "content" : "  spaced\\tprompt  " } , "timestamp" : "'
                + stamp.encode()
                + b'" }\n'
            )
        elif kind == 9:  # numbers, nulls, booleans, nested arrays in ignored fields
            yield (
                dumps(
                    {
                        "type": "system",
                        "subtype": "x",
                        "n": [1, -0.0, 1e308, -1e-308, 12345678901234567890, True, None, [[[]]], {}],
                        "timestamp": stamp,
                    }
                )
                + b"\n"
            )
        elif kind == 10:  # an attachment holding conversation-like fields: never counted
            yield (
                dumps(
                    {
                        "type": "attachment",
                        "attachment": {"type": "file", "content": "x"},
                        "message": {"role": "user", "content": "not a prompt"},
                        "timestamp": stamp,
                    }
                )
                + b"\n"
            )
        elif kind == 11:  # types of the wrong JSON type
            yield rng.choice(
                (
                    b'{"type":["user"],"message":{"content":"x"}}\n',
                    b'{"type":"user","message":{"content":{"a":1}},"timestamp":"' + stamp.encode() + b'"}\n',
                    b'{"type":"assistant","message":{"content":"a string","id":null}}\n',
                    b'{"type":"assistant","message":{"content":[1,"x",null,{"type":"tool_use","name":7}]}}\n',
                )
            )
        elif kind == 12:  # a tool use with an edit and odd but valid paths
            path = rng.choice(
                ("/tmp/ä ö/ü.py", "C:\\Users\\dev\\file.txt", '/a/"quoted".md', "/emoji/😀.txt")
            )
            msg = {
                "id": f"msg_e{n}",
                "model": MODEL,
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_e{n}",
                        "name": "Write",
                        "input": {"file_path": path, "content": "x"},
                    }
                ],
            }
            yield dumps({"type": "assistant", "message": msg, "timestamp": stamp}) + b"\n"
        else:  # a plain prompt
            yield (
                dumps(
                    {
                        "type": "user",
                        "message": {"role": "user", "content": material.sentence()},
                        "timestamp": stamp,
                        "sessionId": session,
                    }
                )
                + b"\n"
            )


# -- shapes and the cache --------------------------------------------------------------------------


def _write_sessions(
    out: BinaryIO, rng: random.Random, material: Material, profile: Profile, target: int, per_session: int
) -> None:
    written = 0
    while written < target:
        session = ClaudeSession(rng, out, profile, material)
        session.write(min(per_session, target - written))
        written += session.written


def _realistic(directory: Path, size: int, rng: random.Random, material: Material) -> None:
    with (directory / "realistic.jsonl").open("wb") as out:
        ClaudeSession(rng, out, Profile(), material).write(size)


def _many_small(directory: Path, size: int, rng: random.Random, material: Material) -> None:
    per_file = 20 * 1024  # about the size of one turn of this profile
    profile = Profile(
        result_median=150, result_sigma=1.0, result_cap=8_000, big_attachments=False, max_responses=2
    )
    for i in range(max(1, size // per_file)):
        with (directory / f"session-{i:05d}.jsonl").open("wb") as out:
            ClaudeSession(rng, out, profile, material).write(1)  # one turn


def _few_huge(directory: Path, size: int, rng: random.Random, material: Material) -> None:
    profile = Profile(result_median=60_000, result_sigma=1.5, result_cap=6 * MB)
    for i in range(3):
        with (directory / f"huge-{i}.jsonl").open("wb") as out:
            ClaudeSession(rng, out, profile, material).write(size // 3)


def _short_lines(directory: Path, size: int, rng: random.Random, material: Material) -> None:
    with (directory / "short_lines.jsonl").open("wb") as out:
        ClaudeSession(rng, out, Profile(short_only=True, attachments=False), material).write(size)


def _escape_heavy(directory: Path, size: int, rng: random.Random, material: Material) -> None:
    profile = Profile(result_median=8_000, result_sigma=1.2, result_cap=2 * MB, code_share=1.0)
    with (directory / "escape_heavy.jsonl").open("wb") as out:
        ClaudeSession(rng, out, profile, material).write(size)


def _adversarial(directory: Path, size: int, rng: random.Random, material: Material) -> None:
    written = 0
    with (directory / "adversarial.jsonl").open("wb") as out:
        for line in adversarial_lines(rng, material):
            out.write(line)
            written += len(line)
            if written >= size:
                break
        out.write(b'{"type":"user","message":{"content":"a partial last line, no newline"}')


WRITERS: dict[str, Callable[[Path, int, random.Random, Material], None]] = {
    "realistic": _realistic,
    "many_small": _many_small,
    "few_huge": _few_huge,
    "short_lines": _short_lines,
    "escape_heavy": _escape_heavy,
    "adversarial": _adversarial,
}


def corpus(shape: str, size_mb: float, seed: int = 0) -> list[Path]:
    """The files of ``shape`` (about ``size_mb`` MB in all), generated once and cached; sorted paths."""
    if shape not in WRITERS:
        raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")
    key = f"{shape}-{size_mb:g}mb-seed{seed}-v{GENERATOR_VERSION}"
    directory = CACHE_DIR / key
    if not (directory / ".done").exists():
        tmp = CACHE_DIR / f".{key}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        rng = random.Random(f"{shape}/{seed}")
        WRITERS[shape](tmp, int(size_mb * MB), rng, Material(rng))
        (tmp / ".done").write_text(key)
        shutil.rmtree(directory, ignore_errors=True)
        tmp.rename(directory)
    return sorted(directory.glob("*.jsonl"))


def total_bytes(paths: list[Path]) -> int:
    return sum(path.stat().st_size for path in paths)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] not in SHAPES:
        sys.exit(f"usage: python -m tests.benchmarks.corpus {{{'|'.join(SHAPES)}}} [MB] [SEED]")
    files = corpus(args[0], float(args[1]) if len(args) > 1 else 8, int(args[2]) if len(args) > 2 else 0)
    print(f"{len(files)} files, {total_bytes(files) / MB:.1f} MB: {files[0].parent}")
