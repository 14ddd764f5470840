"""Regenerate tests/data/{claude-code,codex,pi,qwen,copilot}/ with the real CLIs and the scripted mock API.

    python -m tests.e2e.make_sample_data              # needs `make clients`; takes ~20 s
    python -m tests.e2e.make_sample_data qwen copilot # only these

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
    CODEX_VERSION,
    COPILOT_VERSION,
    PI_VERSION,
    QWEN_VERSION,
    AgentEnv,
)
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


SAMPLES = {
    "claude-code": claude_samples,
    "pi": pi_samples,
    "codex": codex_samples,
    "qwen": qwen_samples,
    "copilot": copilot_samples,
}


def main() -> int:
    print(
        f"claude {CLAUDE_VERSION}, pi {PI_VERSION}, codex {CODEX_VERSION}, qwen {QWEN_VERSION}, "
        f"copilot {COPILOT_VERSION}; root {ROOT}"
    )
    names = sys.argv[1:] or list(SAMPLES)
    unknown = [n for n in names if n not in SAMPLES]
    if unknown:
        print(f"unknown sample set {unknown[0]!r}; choose from {', '.join(SAMPLES)}", file=sys.stderr)
        return 2
    for name, make in ((n, SAMPLES[n]) for n in names):
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
