"""Regenerate tests/data/{claude-code,codex,pi,gemini,qwen,copilot,opencode,droid,kimi,cline}/ with the real
CLIs and the scripted mock API.

    python -m tests.e2e.make_sample_data            # needs `make clients`; takes ~25 s
    python -m tests.e2e.make_sample_data opencode   # only the folders named

Every CLI runs in a fixed throwaway root (/tmp/sidelight-samples: HOME and project dir inside), so the
paths written into the transcripts are the same on every machine. The scripts used are below; the
README in tests/data describes the result.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.e2e.conftest import (
    CLAUDE_VERSION,
    CLINE_VERSION,
    CODEX_VERSION,
    COPILOT_VERSION,
    GEMINI_VERSION,
    KIMI_VERSION,
    OPENCODE_VERSION,
    PI_VERSION,
    QWEN_VERSION,
    AgentEnv,
)
from tests.e2e.droid import DROID_VERSION, droid_rpc
from tests.e2e.mockapi import MockAPI, Reply, Rule, bash, call, edit, read, say, write

ROOT = Path("/tmp/sidelight-samples")
DATA = Path(__file__).resolve().parents[1] / "data"

PROMPT_1 = "Create notes.txt with two lines, then change beta to gamma and show me the file."
PROMPT_2 = "What does notes.txt say now?"
FINAL_1 = "notes.txt now reads alpha, gamma."
FINAL_2 = "It says alpha and gamma."


def four_tools(target: Path) -> list[Reply]:
    return [
        bash("ls -la"),
        write(str(target), "alpha\nbeta\n"),
        edit(str(target), "beta", "gamma"),
        read(str(target)),
        say(FINAL_1),
    ]


def second_turn(target: Path) -> list[Reply]:
    return [bash(f"wc -l {target}"), say(FINAL_2)]


def env(name: str, mock: MockAPI) -> AgentEnv:
    root = ROOT / name
    if root.exists():
        shutil.rmtree(root)
    return AgentEnv(root, mock, ROOT / "copilot-cache")


def copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    print(f"{dest.relative_to(DATA.parent.parent)}  {dest.stat().st_size:>7} B  ({src})")
    return dest


def claude_samples(out: Path) -> None:
    with MockAPI() as mock:
        agents = env("claude-code", mock)
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), second_turn(target)])
        first = agents.claude(PROMPT_1)
        assert first.session_id
        agents.claude(PROMPT_2, resume=first.session_id)
        copy(first.transcript, out / "four-tools-resume.jsonl")

    with MockAPI() as mock:
        agents = env("claude-code-subagent", mock)
        marker = "Count the files in the project"
        mock.set_script(
            [
                [
                    call(
                        "Agent",
                        {
                            "description": "Count the files",
                            "prompt": f"{marker} and report the number.",
                            "subagent_type": "general-purpose",
                            "run_in_background": False,
                        },
                    ),
                    say("The subagent found 0 files."),
                ]
            ],
            rules=[Rule(marker, (bash("ls | wc -l"), say("There are 0 files.")))],
        )
        run = agents.claude("Use a subagent to count the files here.")
        copy(run.transcript, out / "subagent.jsonl")
        for sub in run.subagent_transcripts:
            copy(sub, out / "subagent" / "subagents" / sub.name)
            meta = sub.with_name(sub.stem + ".meta.json")
            if meta.exists():
                copy(meta, out / "subagent" / "subagents" / meta.name)
    claude_slash_samples(out)


SLASH_ARGS = "create TODO app by Next.js"


def claude_slash_samples(out: Path) -> None:
    """A session of slash commands: a custom command with arguments, one without, and a built-in
    local command (`/model`), which Claude Code answers itself without a model request."""
    with MockAPI() as mock:
        agents = env("claude-code-slash", mock)
        commands = agents.project / ".claude" / "commands"
        commands.mkdir(parents=True)
        (commands / "orchestrator.md").write_text(
            "Split the task into subtasks and run them.\n\nTask: $ARGUMENTS\n"
        )
        (commands / "hello.md").write_text("Say hello to the user.\n")
        target = agents.project / "todo.md"
        mock.set_script(
            [[write(str(target), "- [ ] a TODO app\n"), say("Planned the TODO app.")], [say("Hello!")]]
        )
        first = agents.claude(f"/orchestrator {SLASH_ARGS}")
        assert first.session_id
        agents.claude("/hello", resume=first.session_id)
        agents.claude("/model", resume=first.session_id)
        copy(first.transcript, out / "slash-commands.jsonl")


def pi_samples(out: Path) -> None:
    with MockAPI() as mock:
        agents = env("pi", mock)
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), second_turn(target)])
        first = agents.pi(PROMPT_1)
        agents.pi(PROMPT_2, session=first.transcript)
        copy(first.transcript, out / "four-tools-continue.jsonl")


def codex_samples(out: Path) -> None:
    with MockAPI() as mock:
        agents = env("codex", mock)
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), second_turn(target)])
        first = agents.codex(PROMPT_1)
        assert first.session_id
        agents.codex(PROMPT_2, resume=first.session_id)
        copy(first.transcript, out / "four-tools-resume.jsonl")


def gemini_samples(out: Path) -> None:
    """With sidelight's hook installed and a Claude Code session beside it, so that the chat holds a
    digest in a `<hook_context>` part (the format must leave it out)."""
    with MockAPI() as mock:
        agents = env("gemini", mock)
        agents.install_sidelight("gemini")
        target = agents.project / "notes.txt"
        mock.set_script([[say("Hello from Claude Code.")], four_tools(target), second_turn(target)])
        agents.claude("Say hello.")
        first = agents.gemini(PROMPT_1)
        assert first.session_id
        agents.gemini(PROMPT_2, resume=first.session_id)
        assert "[Session Activity]" in first.transcript.read_text()
        copy(first.transcript, out / "four-tools-resume.jsonl")


def qwen_samples(out: Path) -> None:
    with MockAPI() as mock:
        agents = env("qwen", mock)
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), second_turn(target)])
        first = agents.qwen(PROMPT_1)
        assert first.session_id
        agents.qwen(PROMPT_2, resume=first.session_id)
        copy(first.transcript, out / "four-tools-resume.jsonl")


def copilot_samples(out: Path) -> None:
    with MockAPI() as mock:
        agents = env("copilot", mock)
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), second_turn(target)])
        first = agents.copilot(PROMPT_1)
        assert first.session_id
        agents.copilot(PROMPT_2, resume=first.session_id)
        copy(first.transcript, out / "four-tools-resume.jsonl")


def droid_samples(out: Path) -> None:
    """Over Droid's JSON-RPC path (where its prompt hook fires), with sidelight's hooks installed and a
    Claude Code session beside it, so that the transcript holds the digest in a hook's record (the format
    must leave it out); the second prompt resumes the session in a new process (`droid.load_session`)."""
    with MockAPI() as mock:
        agents = env("droid", mock)
        agents.install_sidelight("droid")
        target = agents.project / "notes.txt"
        mock.set_script([[say("Hello from Claude Code.")], four_tools(target), second_turn(target)])
        agents.claude("Say hello.")
        first = droid_rpc(agents, PROMPT_1)
        droid_rpc(agents, PROMPT_2, resume=first.session_id)
        assert "[Session Activity]" in first.transcript.read_text()
        copy(first.transcript, out / "four-tools-resume.jsonl")


def kimi_samples(out: Path) -> None:
    with MockAPI() as mock:
        agents = env("kimi", mock)
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), second_turn(target)])
        first = agents.kimi(PROMPT_1)
        assert first.session_id
        agents.kimi(PROMPT_2, resume=first.session_id)
        copy(first.transcript, out / "four-tools-resume.jsonl")  # wire.jsonl: what sidelight reads
        copy(first.transcript.with_name("context.jsonl"), out / "four-tools-resume.context.jsonl")


def opencode_samples(out: Path) -> None:
    """opencode keeps its sessions in SQLite: the sample is the three tables as SQL, and the export
    sidelight makes of them (what the ``opencode`` format reads). Between the two prompts a Claude Code
    session does something, so that the second prompt carries sidelight's digest as a synthetic part."""
    import sqlite3

    with MockAPI() as mock:
        agents = env("opencode", mock)
        agents.install_sidelight("opencode")
        target = agents.project / "notes.txt"
        mock.set_script([four_tools(target), [say("Claude was here.")], second_turn(target)])
        first = agents.opencode(PROMPT_1)
        assert first.session_id
        agents.claude("Say hello.")
        agents.opencode(PROMPT_2, session=first.session_id)
        agents.sidelight("sessions")  # brings the export up to date
        export = (
            agents.home
            / ".local"
            / "state"
            / "sidelight"
            / "exports"
            / "opencode"
            / f"{first.session_id}.jsonl"
        )
        copy(export, out / "four-tools-continue.jsonl")
        with sqlite3.connect(f"file:{agents.opencode_db}?mode=ro", uri=True) as connection:
            lines = [
                f"-- opencode {OPENCODE_VERSION}: its session, message and part tables after "
                "tests/e2e/make_sample_data.py (sqlite3 opencode.db < opencode.sql rebuilds them)."
            ]
            for table in ("session", "message", "part"):
                (sql,) = connection.execute(
                    "SELECT sql FROM sqlite_master WHERE name = ?", (table,)
                ).fetchone()
                lines.append(" ".join(sql.split()) + ";")
            for table in ("session", "message", "part"):
                for (statement,) in connection.execute(
                    f"SELECT 'INSERT INTO {table} VALUES(' || "
                    + " || ',' || ".join(
                        f"quote({column})"
                        for (column,) in connection.execute(f"SELECT name FROM pragma_table_info('{table}')")
                    )
                    + f" || ');' FROM {table} ORDER BY rowid"
                ):
                    lines.append(statement)
        sql_file = out / "opencode.sql"
        sql_file.write_text("\n".join(lines) + "\n")
        print(f"{sql_file.relative_to(DATA.parent.parent)}  {sql_file.stat().st_size:>7} B")


def cline_samples(out: Path) -> None:
    """Cline's own tools (`run_commands`, `editor`, `read_files`), one turn: `--id` is interactive only.
    The sample is the session's folder as Cline left it: its messages document and its `<id>.json`."""
    with MockAPI() as mock:
        agents = env("cline", mock)
        target = agents.project / "notes.txt"
        mock.set_script(
            [
                [
                    call("run_commands", {"commands": ["ls -la"]}),
                    call("editor", {"path": str(target), "new_text": "alpha\nbeta\n"}),
                    call("editor", {"path": str(target), "old_text": "beta", "new_text": "gamma"}),
                    call("read_files", {"files": [{"path": str(target)}]}),
                    say(FINAL_1),
                ]
            ]
        )
        run = agents.cline(PROMPT_1)
        folder = run.transcript.parent
        for name in (f"{folder.name}.messages.json", f"{folder.name}.json"):
            copy(folder / name, out / "four-tools" / name)
            print(f"{(out / 'four-tools' / name).relative_to(DATA.parent.parent)}")


SAMPLES = {
    "claude-code": claude_samples,
    "pi": pi_samples,
    "codex": codex_samples,
    "gemini": gemini_samples,
    "qwen": qwen_samples,
    "copilot": copilot_samples,
    "opencode": opencode_samples,
    "droid": droid_samples,
    "kimi": kimi_samples,
    "cline": cline_samples,
}


def main() -> int:
    print(
        f"claude {CLAUDE_VERSION}, pi {PI_VERSION}, codex {CODEX_VERSION}, gemini {GEMINI_VERSION}, "
        f"qwen {QWEN_VERSION}, copilot {COPILOT_VERSION}, opencode {OPENCODE_VERSION}, "
        f"droid {DROID_VERSION}, kimi {KIMI_VERSION}, cline {CLINE_VERSION}; root {ROOT}"
    )
    names = sys.argv[1:] or list(SAMPLES)
    unknown = [n for n in names if n not in SAMPLES]
    if unknown:
        print(f"unknown sample set {unknown[0]!r}; choose from {', '.join(SAMPLES)}", file=sys.stderr)
        return 2
    for name in names:
        make = SAMPLES[name]
        out = DATA / name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        make(out)
    # Sanity: every sample is JSONL.
    for path in sorted(DATA.rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            json.loads(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
