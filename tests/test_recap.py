"""The session recap: scoring properties, determinism, the budget, the real transcripts, settings, the
``sidelight recap`` command and the plugin hooks it uses."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tracemalloc
from typing import TYPE_CHECKING, Any

import pytest

import sidelight
from sidelight import hookimpl
from sidelight.config import ConfigError, Settings
from sidelight.features.recap.build import (
    ChunkSummary,
    RecapSettings,
    build_recap,
    centrality,
    extractive_summary,
    hashed_ngram_vectors,
    recency,
    score_chunks,
)
from sidelight.features.recap.collapse import Chunk, Line
from sidelight.plugins import Plugins
from sidelight.records import ChunkSummarizerSpec, EmbedderSpec, Session
from sidelight.tokens import estimate_tokens
from tests.conftest import PI_CORPUS, ROOT

if TYPE_CHECKING:
    from pathlib import Path

DATA = ROOT / "tests" / "data"
REAL = [
    DATA / "claude-code" / "four-tools-resume.jsonl",
    DATA / "claude-code" / "subagent.jsonl",
    DATA / "pi" / "four-tools-continue.jsonl",
    DATA / "codex" / "four-tools-resume.jsonl",
]
PI_SESSIONS = [PI_CORPUS / "before-compaction.jsonl", PI_CORPUS / "large-session.jsonl"]
needs_corpus = pytest.mark.skipif(not PI_SESSIONS[0].is_file(), reason="the shared Pi corpus is not there")


def summary(index: int, text: str, consequential: int = 0, end: int | None = None) -> ChunkSummary:
    return ChunkSummary(
        index=index,
        turn=index + 1,
        start=index * 10,
        end=end or (index + 1) * 10,
        summary=text,
        consequential=consequential,
    )


# --- scoring ----------------------------------------------------------------------------------------


def test_a_chunk_that_repeats_a_memory_ranks_lower() -> None:
    memory = "The staging database runs Postgres 16 on port 5433 behind pgbouncer"
    repeated = summary(0, f'User asked: "where does staging run?". Assistant: "{memory}."', end=20)
    fresh = summary(
        1,
        'User asked: "add retries to the uploader". '
        'Assistant: "Retries with jitter added to the S3 uploader."',
        end=20,
    )
    without = score_chunks([repeated, fresh], total_lines=20)
    with_memory = score_chunks(
        [repeated, fresh], total_lines=20, memories=[memory, "unrelated note about lunch"]
    )
    assert without[0].novelty == without[1].novelty == 1.0
    assert with_memory[0].novelty < 0.6 < with_memory[1].novelty
    assert with_memory[0].score < with_memory[1].score


def test_the_last_chunk_with_an_edit_outranks_an_early_read_only_chunk() -> None:
    chunks = [
        summary(
            0,
            'User asked: "look at the parser". Read src/parser.py (200 lines). '
            'Assistant: "The parser handles tokens."',
        ),
        *(
            summary(
                i,
                f'User asked: "question {i} about the lexer". Read src/lexer.py. '
                f'Assistant: "The lexer part {i}."',
            )
            for i in range(1, 9)
        ),
        summary(
            9,
            "User asked: \"fix the parser bug\". Edited src/parser.py: replaced 'x' with 'y'. "
            'Assistant: "Fixed."',
            consequential=1,
        ),
    ]
    scored = score_chunks(chunks, total_lines=100)
    assert scored[-1].score > scored[0].score
    assert scored[-1].action_weight == 1.25 and scored[0].action_weight == 1.0


def test_score_parts() -> None:
    assert recency(1.0, 0.25) == 1.0 and recency(0.75, 0.25) == 0.5 and recency(0.0, 0.25) == 2**-4
    vectors = [
        dict(enumerate(v))
        for v in hashed_ngram_vectors(["parser tokens grammar", "parser grammar rules", "lunch menu pizza"])
    ]
    ranks = centrality(vectors)
    assert abs(sum(ranks) / len(ranks) - 1.0) < 1e-9  # mean 1
    assert ranks[2] < ranks[0] and ranks[2] < ranks[1]  # the odd one out is least central
    assert centrality([]) == [] and centrality(vectors[:1]) == [1.0]
    settings = RecapSettings(alpha=1.0)
    scored = score_chunks([summary(0, "a b", consequential=3)], 10, recap=settings)
    assert scored[0].action_weight == 4.0


def test_hashed_vectors_are_deterministic_across_processes() -> None:
    code = (
        "from sidelight.features.recap.build import hashed_ngram_vectors as h\n"
        "v = h(['Edited parser.py twice'])\n"
        "print(sum(i * x for i, x in enumerate(v[0])))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


# --- the summary ------------------------------------------------------------------------------------


def test_extractive_summary() -> None:
    chunk = Chunk(
        index=0,
        lines=(
            Line("user", "Fix the flaky upload test. It fails on CI."),
            Line("observational", "Read tests/test_upload.py (80 lines)."),
            Line(
                "consequential",
                "Edited src/upload.py: replaced 'a' with 'b'.",
                path="src/upload.py",
                tool="Edit",
            ),
            Line(
                "consequential",
                "Edited src/upload.py: replaced 'c' with 'd'.",
                path="src/upload.py",
                tool="Edit",
            ),
            Line("consequential", "Ran `pytest -q`: ok: 12 passed.", tool="Bash"),
            Line("assistant", "Done."),
            Line(
                "assistant", "The upload test no longer depends on the wall clock. It uses a fake timer now."
            ),
        ),
    )
    text = extractive_summary(chunk)
    assert text == (
        'User asked: "Fix the flaky upload test. It fails on CI." Edited src/upload.py (2 edits); '
        'Ran `pytest -q`: ok: 12 passed. Assistant: "The upload test no longer depends on the wall clock. '
        'It uses a fake timer now."'
    )
    assert len(extractive_summary(chunk, limit=60)) <= 60


# --- whole recaps -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_cli_transcripts(path: Path) -> None:
    recap = build_recap(path)
    text = recap.text
    assert text.startswith(f"# Recap of session {recap.format.replace('claude-code', 'claude')} ")
    assert str(path) not in text  # named by agent and id, not by its path
    assert "Nothing recorded" not in text
    # No heading without lines under it.
    assert not any(a.startswith("#") and not b.strip() for a, b in itertools.pairwise(text.splitlines()))
    assert recap.tokens <= 1000
    if path.name.startswith("four-tools"):
        assert 'Last request: "What does notes.txt say now?"' in text
        assert "Files edited last: notes.txt." in text
        assert recap.files_edited == ("notes.txt",)


@needs_corpus
def test_real_pi_sessions_name_the_last_files_and_request() -> None:
    first = build_recap(PI_SESSIONS[0])
    assert first.last_request == "what did i just execute?"
    assert first.files_edited[:2] == (
        "packages/coding-agent/src/modes/interactive/interactive-mode.ts",
        "packages/coding-agent/src/core/agent-session.ts",
    )
    assert 'Last request: "what did i just execute?"' in first.text
    assert (
        "Files edited last: packages/coding-agent/src/modes/interactive/interactive-mode.ts, " in first.text
    )
    second = build_recap(PI_SESSIONS[1])
    assert second.last_request == "yeah, do it all"
    assert second.files_edited[0] == "packages/coding-agent/test/test-theme-colors.ts"
    # The session ended with two failing commands (the release commit and the publish).
    assert any("npm run publish" in item for item in second.unfinished)
    # The chunks shown are the best-scored ones, in session order.
    assert list(second.selected) == sorted(second.selected) and second.selected
    best = max(second.chunks, key=lambda c: c.score)
    assert best.chunk.index in second.selected


@needs_corpus
@pytest.mark.parametrize("budget", [1, 20, 60, 150, 400, 1000, 2500])
def test_the_budget_is_never_exceeded(budget: int) -> None:

    def words(text: str) -> int:  # a counter that is not the estimate
        return len(text.split())

    for path in [*REAL, *PI_SESSIONS]:
        recap = build_recap(path, budget=budget)
        assert estimate_tokens(recap.text) <= budget, path
        assert recap.tokens == estimate_tokens(recap.text)
        assert words(build_recap(path, budget=budget, count=words).text) <= budget


@needs_corpus
def test_recaps_are_byte_identical() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    code = (
        "import sys; from sidelight.features.recap.build import build_recap; "
        "sys.stdout.write(build_recap(sys.argv[1]).text)"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code, str(PI_SESSIONS[1])],
            capture_output=True,
            check=True,
            env={**env, "PYTHONHASHSEED": seed, "TZ": tz},
        ).stdout
        for seed, tz in (("0", "UTC"), ("12345", "Asia/Tokyo"))
    }
    assert len(outputs) == 1
    assert build_recap(PI_SESSIONS[1]).text.encode() in outputs


def test_memory_is_bounded_on_a_big_session(tmp_path: Path) -> None:
    """About 12 MB of turns: the chunk summaries are compacted, the transcript is never held."""
    path = tmp_path / "big.jsonl"
    blob = "x = 1\n" * 4000  # 24 KB of tool output per turn
    with path.open("w") as out:
        out.write(
            json.dumps({"type": "session", "id": "big", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z"})
            + "\n"
        )
        for i in range(500):
            stamp = f"2026-01-01T{i // 60 % 24:02d}:{i % 60:02d}:00Z"
            out.write(
                json.dumps(
                    {
                        "type": "message",
                        "timestamp": stamp,
                        "message": {"role": "user", "content": f"step {i}: change module {i}"},
                    }
                )
                + "\n"
            )
            out.write(
                json.dumps(
                    {
                        "type": "message",
                        "timestamp": stamp,
                        "message": {
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "toolCall",
                                    "id": f"c{i}",
                                    "name": "write",
                                    "arguments": {"path": f"/w/m{i}.py", "content": blob},
                                }
                            ],
                        },
                    }
                )
                + "\n"
            )
            out.write(
                json.dumps(
                    {
                        "type": "message",
                        "timestamp": stamp,
                        "message": {
                            "role": "toolResult",
                            "toolCallId": f"c{i}",
                            "toolName": "write",
                            "content": [{"type": "text", "text": blob}],
                        },
                    }
                )
                + "\n"
            )
            out.write(
                json.dumps(
                    {
                        "type": "message",
                        "timestamp": stamp,
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": f"Module {i} is written."}],
                        },
                    }
                )
                + "\n"
            )
    size = path.stat().st_size
    assert size > 10_000_000
    settings = RecapSettings(chunk_chars=300, max_chunks=40)
    tracemalloc.start()
    try:
        recap = build_recap(path, recap_settings=settings)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size / 4, f"peak {peak} bytes for a {size}-byte transcript"
    assert len(recap.chunks) <= settings.max_chunks
    assert recap.files_edited[0] == "m499.py" and recap.last_request == "step 499: change module 499"
    assert recap.turns == 500


def test_settings_from_env_and_config(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "state").mkdir()
    (home / "state" / "config.toml").write_text("[recap]\nbudget = 1500\nalpha = 0.5\n", encoding="utf-8")
    monkeypatch.setenv("SIDELIGHT_RECAP_ALPHA", "0.75")
    recap = RecapSettings.load(Settings.load())
    assert (recap.budget, recap.alpha, recap.embedder) == (1500, 0.75, "hashed-ngrams")
    monkeypatch.setenv("SIDELIGHT_RECAP_BUDGET", "lots")
    with pytest.raises(ConfigError, match="budget must be a whole number"):
        RecapSettings.load(Settings.load())
    monkeypatch.setenv("SIDELIGHT_RECAP_BUDGET", "100")
    monkeypatch.setenv("SIDELIGHT_RECAP_DAMPING", "1.5")
    with pytest.raises(ConfigError, match="damping"):
        RecapSettings.load(Settings.load())


# --- hooks ------------------------------------------------------------------------------------------


class _Plugin:
    def __init__(self) -> None:
        self.seen: list[Chunk] = []

    @hookimpl
    def sidelight_chunk_summarizers(self) -> Any:
        def summarize(chunk: Chunk) -> str | None:
            self.seen.append(chunk)
            edits = [line.path for line in chunk.lines if line.path]
            return f"EDITS {' '.join(edits)}" if edits else None

        yield ChunkSummarizerSpec(name="edits", summarize=summarize)

    @hookimpl
    def sidelight_embedders(self) -> Any:
        def embed(texts: Any) -> list[list[float]]:
            return [[1.0, float(len(t) % 7)] for t in texts]

        yield EmbedderSpec(name="lengths", embed=embed)


def test_hook_sidelight_chunk_summarizers() -> None:
    plugins = Plugins(entry_points=False)
    plugin = _Plugin()
    plugins.register(plugin, name="mine")
    assert list(plugins.chunk_summarizers()) == ["edits", "extractive"]  # the built-in one last
    recap = build_recap(DATA / "pi" / "four-tools-continue.jsonl", plugins=plugins)
    assert plugin.seen and "EDITS notes.txt notes.txt" in recap.text
    # A chunk the plugin does not answer for falls back to the built-in summary.
    chunks = [
        c.chunk.summary for c in build_recap(DATA / "claude-code" / "subagent.jsonl", plugins=plugins).chunks
    ]
    assert chunks[0].startswith("User asked:")


def test_hook_sidelight_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins = Plugins(entry_points=False)
    plugins.register(_Plugin(), name="mine")
    assert set(plugins.embedders()) == {"hashed-ngrams", "lengths"}
    chunks = [summary(0, "aaaaaaa"), summary(1, "bbb")]
    default = score_chunks(chunks, 20, plugins=plugins)
    chosen = score_chunks(chunks, 20, plugins=plugins, recap=RecapSettings(embedder="lengths"))
    # "aaaaaaa" has length 7 = 0 mod 7: the vector (1, 0); "bbb" (1, 3): a cosine of about 0.32.
    assert [round(c.centrality, 6) for c in chosen] == [1.0, 1.0]
    assert default[0].novelty == chosen[0].novelty == 1.0
    memories = score_chunks(
        chunks, 20, memories=["ccccccc"], plugins=plugins, recap=RecapSettings(embedder="lengths")
    )
    assert memories[0].novelty == 0.05  # the same vector as the memory: the floor
    monkeypatch.setenv("SIDELIGHT_RECAP_EMBEDDER", "nope")
    assert RecapSettings.load().embedder == "nope"
    assert (
        score_chunks(chunks, 20, plugins=plugins, recap=RecapSettings.load())[0].novelty == 1.0
    )  # falls back


# --- the command ------------------------------------------------------------------------------------


def test_cli_recap(run_cli: Any, home: Path, tmp_path: Path) -> None:
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    path = DATA / "codex" / "four-tools-resume.jsonl"
    result = run_cli("recap", path, env=env)
    assert result.returncode == 0, result.stderr
    title = build_recap(path).text.split("\n", 1)[0]
    assert result.stdout == build_recap(path).text.replace(title, f'{title} "{path.stem}"', 1)
    as_json = json.loads(run_cli("recap", path, "--json", "--budget", "300", env=env).stdout)
    assert (
        as_json["budget"] == 300
        and as_json["tokens"] <= 300
        and as_json["last_request"] == "What does notes.txt say now?"
    )
    assert {"novelty", "centrality", "recency", "action_weight", "score"} <= set(as_json["chunks"][0])
    written = run_cli("recap", path, "--write", tmp_path, env=env)
    assert written.returncode == 0 and (tmp_path / "_handoff.md").read_text().startswith(
        "<!-- sidelight handoff {"
    )
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (["recap", "no-such-session"], "no session matches 'no-such-session'", 1),
        (["recap", "x", "--budget", "0"], "must be at least 1", 2),
        (["recap", "x", "--budget", "many"], "must be a number of tokens", 2),
        (["recap", str(ROOT / "README.md")], "README.md", 1),
    ],
)
def test_cli_recap_errors(run_cli: Any, home: Path, args: list[str], message: str, code: int) -> None:
    result = run_cli(*args, env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")})
    assert result.returncode == code
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_cli_recap_bad_setting(run_cli: Any, home: Path) -> None:
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state"), "SIDELIGHT_RECAP_ALPHA": "much"}
    result = run_cli("recap", DATA / "pi" / "four-tools-continue.jsonl", env=env)
    assert result.returncode == 2 and "alpha must be a number" in result.stderr


# --- what the recap says happened -------------------------------------------------------------------


def _record(kind: str, content: Any, minute: int) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": "s-recap",
        "cwd": "/w",
        "timestamp": f"2026-01-01T10:{minute:02d}:00Z",
        "message": {"role": kind, "content": content},
    }


def claude_session(path: Path, turns: list[tuple[str, list[tuple[str, str, bool]]]]) -> Path:
    """A Claude Code transcript: per turn a prompt, then Bash calls ``(command, output, is_error)``,
    then a reply."""
    records: list[dict[str, Any]] = []
    n = 0
    for prompt, commands in turns:
        records.append(_record("user", prompt, n % 60))
        for command, output, is_error in commands:
            n += 1
            call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command}}
            result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": output, "is_error": is_error}
            records += [_record("assistant", [call], n % 60), _record("user", [result], n % 60)]
        records.append(_record("assistant", [{"type": "text", "text": f"Done with: {prompt}"}], n % 60))
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def hello_session(path: Path, reply: str) -> Path:
    """A one-turn Claude Code session that said hello (its file named by its id, as Claude Code's are)."""
    records = [_record("user", "hello", 0), _record("assistant", [{"type": "text", "text": reply}], 0)]
    for record in records:
        record["sessionId"] = "3b6589c9-1111-4222-8333-944455556666"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def empty_sections(text: str) -> list[str]:
    """The headings of ``text`` with nothing under them."""
    lines = [*text.splitlines(), ""]
    return [a for a, b in itertools.pairwise(lines) if a.startswith("#") and (not b.strip() or b[0] == "#")]


@pytest.mark.parametrize("reply", ["Hello! How can I help you today?", "Hello."])
def test_a_session_that_said_hello_gets_a_few_lines(tmp_path: Path, reply: str) -> None:
    """A session with little in it gets a recap of a few lines: named by agent and id (not its path),
    no empty section, no filler, and nothing quoted twice."""
    path = hello_session(tmp_path / "3b6589c9-1111-4222-8333-944455556666.jsonl", reply)
    text = build_recap(path).text
    lines = text.splitlines()
    assert lines[:2] == ["# Recap of session claude 3b6589c9", "2026-01-01 10:00 UTC; 1 turn; ended."]
    assert str(tmp_path) not in text and "previous session" not in text
    assert '## What happened\n- Turn 1 (2026-01-01 10:00 UTC): User asked: "hello".' in text
    assert empty_sections(text) == [] and "Nothing recorded" not in text
    assert text.count('"hello"') == 1 and text.count(reply) == 1, text
    assert len([line for line in lines if line.strip()]) <= 6 and len(text) <= 320, text
    if reply.endswith("?"):  # a question left for the user is still said, without its words again
        assert lines[-2:] == [
            "## Unfinished",
            "- The assistant's last message, quoted above, asked the user a question.",
        ]
    else:
        assert "## Unfinished" not in text


def test_the_header_names_the_session_by_agent_id_and_name(tmp_path: Path) -> None:
    path = hello_session(tmp_path / "3b6589c9-1111-4222-8333-944455556666.jsonl", "Hi.")
    session = Session("claude-code:3b6589c9", "Fix the tests", path, "claude-code", "/w", "claude-code")
    assert build_recap(path, session=session).text.startswith(
        '# Recap of session claude 3b6589c9 "Fix the tests"\n'
    )
    # A name that is the id, or a file name made of it, is not said twice.
    named = Session("claude-code:3b6589c9", path.stem, path, "claude-code", "/w", "claude-code")
    assert build_recap(path, session=named).text.startswith("# Recap of session claude 3b6589c9\n")


def test_a_failure_retried_differently_is_fixed_later(tmp_path: Path) -> None:
    """The same program and subcommand working later clears a failure, however the line around it
    changed (a pipe into tail, ``2>&1``, a ``git add . &&`` in front)."""
    path = claude_session(
        tmp_path / "s.jsonl",
        [
            (
                "Run dialyzer and release.",
                [
                    ("mix dialyzer 2>&1 | tail -20", "Exit code 2\ndone (warnings were emitted)", True),
                    ('git commit -m "Release"', "Exit code 1\nnothing added to commit", True),
                    ("mix dialyzer 2>&1 | tail -5", "done (passed successfully)", False),
                    ('cd /w && git add . && git commit -m "Release"', "[main 1a2b3c] Release", False),
                ],
            )
        ],
    )
    recap = build_recap(path)
    assert not any("Still failing" in item for item in recap.unfinished), recap.unfinished
    assert recap.unfinished[0] == (
        'Failed, then fixed later: `mix dialyzer 2>&1 | tail -20`; `git commit -m "Release"`.'
    )
    # Nothing is left open: the last section says how it ended, with no filler.
    assert "\n## How it ended\n- Failed, then fixed later: " in recap.text
    assert "## Unfinished" not in recap.text and "Nothing recorded" not in recap.text


def test_failures_of_earlier_turns_are_not_forgotten(tmp_path: Path) -> None:
    """A failure listed above is never followed by "no ... failures": one of an earlier turn that was
    not tried again is named; one that worked in a later turn is fixed later."""
    path = claude_session(
        tmp_path / "s.jsonl",
        [
            (
                "Deploy and test.",
                [
                    ("make deploy", "Exit code 2\nno target", True),
                    ("npm test", "Exit code 1\n1 failed", True),
                ],
            ),
            ("Now the docs please.", [("npm test -- --watch=false", "Tests: 3 passed, 3 total", False)]),
        ],
    )
    recap = build_recap(path)
    assert "Failed earlier and not tried again: Ran `make deploy`: failed (exit 2)." in recap.unfinished
    assert "Failed, then fixed later: `npm test`." in recap.unfinished
    assert not any(item.startswith("Nothing recorded") for item in recap.unfinished)


def test_turns_are_labelled_as_ranges(tmp_path: Path) -> None:
    """Eleven short turns in one chunk: one bullet for turns 1 to 11, and the header says 11 turns."""
    path = claude_session(
        tmp_path / "s.jsonl",
        [(f"Step {i}: bump the version.", [(f"make bump{i}", "ok", False)]) for i in range(11)],
    )
    recap = build_recap(path)
    assert "; 11 turns; ended." in recap.text
    bullets = [line for line in recap.text.splitlines() if line.startswith("- Turn")]
    assert len(bullets) == 1 and bullets[0].startswith("- Turns 1–11 (2026-01-01 10:00 UTC): "), bullets


def test_the_last_action_is_one_of_the_last_turn(tmp_path: Path) -> None:
    """An interrupted last turn that did nothing yet has no "Last action" from an earlier turn."""
    path = claude_session(tmp_path / "s.jsonl", [("Build it.", [("make build", "ok", False)])])
    with path.open("a") as out:
        out.write(json.dumps(_record("user", "Now deploy it.", 30)) + "\n")
    recap = build_recap(path)
    assert recap.interrupted
    assert recap.unfinished[0] == 'The session was interrupted while working on "Now deploy it."'


def test_a_budget_too_small_for_the_header(run_cli: Any, home: Path) -> None:
    """``-b 10`` is refused with one clear line (exit 2); a library caller gets whole words."""
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    path = DATA / "codex" / "four-tools-resume.jsonl"
    result = run_cli("recap", path, "-b", "10", env=env)
    assert result.returncode == 2 and not result.stdout
    assert "a budget of 10 tokens is too small for the recap's header" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    needed = result.stderr.split("give -b ")[1].split()[0]  # the CLI names the session: a longer header
    assert run_cli("recap", path, "-b", needed, env=env).returncode == 0
    assert build_recap(path).header_tokens < int(needed)
    text = build_recap(path, budget=10).text
    assert text and (DATA / "codex" / "four-tools-resume.jsonl").read_text()  # something is said
    assert build_recap(path).text.startswith(text) and text.split()[-1] in build_recap(path).text.split()


def test_long_quotes_start_and_end_with_whole_words(tmp_path: Path) -> None:
    words = " ".join(f"word{i}" for i in range(120))  # one sentence, longer than any quote
    path = claude_session(tmp_path / "s.jsonl", [(words, [("make build", "ok", False)])])
    text = path.read_text().replace("Done with: ", "")
    path.write_text(text)
    recap = build_recap(path)
    request = recap.text.split('Last request: "')[1].split('"')[0]
    stopped = recap.unfinished[-1].split('said: "')[1].rstrip('"')
    assert request.endswith("…") and request[:-1].split()[-1] in words.split(), request
    assert stopped.startswith("…") and stopped[1:].split()[0] in words.split(), stopped


# --- subagents --------------------------------------------------------------------------------------

SUBAGENT = DATA / "claude-code" / "subagent" / "subagents" / "agent-a2dfded9a6ae64437.jsonl"


def test_a_subagent_transcript_is_recapped_as_its_own_work(run_cli: Any, home: Path) -> None:
    """The real subagent file: its task (its parent's, no person's prompt), its tool use and its result;
    one turn in the header and in the bullets, and its tool uses counted as ``scan`` counts them."""
    recap = build_recap(SUBAGENT)
    header = recap.text.split("\n\n")[0].splitlines()
    assert header[0] == "# Recap of subagent (general-purpose) of session claude d2f0fe18"
    assert header[1] == "2026-11-21 21:20 UTC; 1 turn (given by its parent); ended."
    assert header[2:] == [
        'Subagent (general-purpose) task: "Count the files in the project and report the number."',
        "Tool uses: 1 (1 command).",
        'Result (its last message, returned to the parent): "There are 0 files."',
    ]
    assert scan_tools(SUBAGENT) == "1 (1 command)"
    bullets = [line for line in recap.text.splitlines() if line.startswith("- Turn")]
    assert bullets == [
        '- Turn 1 (2026-11-21 21:20 UTC): Task: "Count the files in the project and report the number." '
        'Ran `ls | wc -l`. Assistant: "There are 0 files."'
    ]
    assert recap.turns == 1 and "Last request" not in recap.text
    assert recap.unfinished == ()  # nothing open, and its result is in the header
    assert "\n## " in recap.text and "## Unfinished" not in recap.text
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    as_json = json.loads(run_cli("recap", SUBAGENT, "--json", env=env).stdout)
    assert as_json["subagent"] == {
        "agent_type": "general-purpose",
        "description": "Count the files",
        "task": "Count the files in the project and report the number.",
    }
    assert build_recap(DATA / "claude-code" / "subagent.jsonl").subagent is None


def scan_tools(path: Path) -> str:
    """``sidelight scan``'s tool count and categories: ``N (a edit, b read...)``."""
    activity = sidelight.scan(path)
    parts = ", ".join(f"{n} {c}" for c, n in activity.categories.as_dict().items() if n)
    return f"{activity.categories.total} ({parts})"


def _side(kind: str, content: Any, second: int) -> dict[str, Any]:
    record = _record(kind, content, 0)
    record.update(isSidechain=True, agentId="e1", timestamp=f"2026-01-01T10:00:{second:02d}Z")
    if kind == "assistant":
        record["message"]["id"] = f"m{second}"
    return record


def explore_subagent(folder: Path) -> Path:
    """A hand-made Explore subagent in the current layout: it searches and reads, then gets a second
    instruction from its parent and runs the tests, which fail."""
    subagents = folder / "s-recap" / "subagents"
    subagents.mkdir(parents=True)
    calls = [
        ("Grep", {"pattern": "loadConfig", "path": "/w/src"}, "src/a.ts\nsrc/b.ts", False),
        ("Read", {"file_path": "/w/src/a.ts"}, "export function loadConfig() {}", False),
        ("Bash", {"command": "npm test"}, "Exit code 1\nTests: 1 failed, 3 passed, 4 total", True),
    ]
    records = [_side("user", "Find every config loader.", 0)]
    for n, (name, args, output, is_error) in enumerate(calls, start=1):
        if n == 3:
            records.append(
                _side("assistant", [{"type": "text", "text": "Two loaders: src/a.ts and src/b.ts."}], 5)
            )
            records.append(_side("user", "Also run the tests.", 6))
        use = {"type": "tool_use", "id": f"e{n}", "name": name, "input": args}
        result = {"type": "tool_result", "tool_use_id": f"e{n}", "content": output, "is_error": is_error}
        records += [_side("assistant", [use], 2 * n + 5), _side("user", [result], 2 * n + 6)]
    records.append(_side("assistant", [{"type": "text", "text": "The tests fail: 1 failed, 3 passed."}], 20))
    path = subagents / "agent-e1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (subagents / "agent-e1.meta.json").write_text(
        json.dumps({"agentType": "Explore", "description": "Find loaders"})
    )
    return path


def test_an_exploring_subagent_shows_what_it_looked_at(tmp_path: Path) -> None:
    """A subagent that only searched and read says so; its parent's second instruction is named, its
    failure is left unfinished, and its counts are those of ``scan``."""
    path = explore_subagent(tmp_path)
    recap = build_recap(path, recap_settings=RecapSettings(chunk_chars=200))
    assert 'Subagent (Explore) task: "Find every config loader."' in recap.text
    assert 'Last instruction from the parent: "Also run the tests."' in recap.text
    assert f"Tool uses: {scan_tools(path)}." in recap.text and scan_tools(path) == "3 (2 read, 1 command)"
    assert "; 2 turns (given by its parent); ended." in recap.text
    bullets = [line for line in recap.text.splitlines() if line.startswith("- Turn")]
    assert bullets[0].startswith('- Turn 1 (2026-01-01 10:00 UTC): Task: "Find every config loader." ')
    assert "Searched for 'loadConfig' in src (2 matches); Read src/a.ts (1 line)." in bullets[0]
    assert bullets[1].startswith(
        '- Turn 2 (2026-01-01 10:00 UTC): Task: "Also run the tests." Ran `npm test`: failed'
    )
    assert recap.unfinished[0].startswith("Still failing at the end: Ran `npm test`: failed (exit 1)")
    assert (
        'Result (its last message, returned to the parent): "The tests fail: 1 failed, 3 passed."'
        in recap.text
    )


def test_a_subagent_without_its_meta_file_or_with_a_fifo_for_one(tmp_path: Path) -> None:
    """The meta file is optional (older versions wrote none), and a FIFO in its place holds nothing up."""
    path = explore_subagent(tmp_path)
    meta = path.with_name("agent-e1.meta.json")
    meta.unlink()
    assert build_recap(path).text.count("Subagent task: ") == 1
    os.mkfifo(meta)
    assert "Subagent task: " in build_recap(path).text


def test_a_subagents_meta_file_is_redacted_like_its_lines(tmp_path: Path) -> None:
    path = explore_subagent(tmp_path)
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    meta = {"agentType": "Explore\x1b[31m", "description": f"use {secret}"}
    path.with_name("agent-e1.meta.json").write_text(json.dumps(meta))
    recap = build_recap(path)
    assert recap.subagent is not None
    assert recap.subagent["description"] == "use [REDACTED:github-token]"
    assert secret not in json.dumps(recap.as_dict()) and "\x1b" not in recap.text
