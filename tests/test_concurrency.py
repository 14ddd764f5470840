"""Concurrency (issue 7, guarantee 3): 64 hook processes on one state directory lose no update.

Two ways:

- 64 real ``sidelight hook claude-code`` processes at once, one per session of a 64-session project,
  every one reading its 63 siblings: all exit 0 with a valid payload, and every reader's cursors end at
  the ends of its siblings' files;
- 64 processes running the hook's orchestration (:func:`sidelight.features.digest.get_session_updates`) with a
  counting summarizer, all sharing ONE cursor file (as the volute template does), each appending to its
  own transcript between reads: every reader counts every sibling's prompts exactly once (the model:
  the prompts each file holds), and the shared file ends with every reader's cursors at the ends.

Many hooks of ONE reader at once (issue 19): every cursor save recorded, none moves backwards, and
the digests together report every prompt of the siblings exactly once.

Two watchers on one state directory are refused:
``tests/test_watch.py::test_a_second_watcher_on_one_state_directory_is_refused``.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from sidelight.cursors import CursorStore
from sidelight.features.digest import CARRIED_OVER
from tests.support.hook_world import HookWorld, context_of, reported_ranges, session_id

#: The issue's 64 processes (``slow``: about a minute on two busy cores), and a fast variant.
COUNTS = [pytest.param(16, id="16"), pytest.param(64, id="64", marks=pytest.mark.slow)]


@pytest.mark.parametrize("count", COUNTS)
def test_hook_processes_at_once(tmp_path: Path, count: int) -> None:
    world = HookWorld(tmp_path, sessions=count)
    for n in range(0, count, 3):
        world.prompt(n, f"second prompt of {n}")
    hooks = [
        subprocess.Popen(
            world.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=world.env(SIDELIGHT_TIME_BUDGET="120s"),
        )
        for _ in range(count)
    ]
    outputs = [p.communicate(world.payload(n), timeout=300) for n, p in enumerate(hooks)]
    more: list[int] = []
    for n, (process, (out, err)) in enumerate(zip(hooks, outputs, strict=True)):
        assert process.returncode == 0, err
        context = context_of(out)
        assert context is not None and context.startswith("[Session Activity]"), n
        assert len(context) <= 500
        counted = re.search(r"^\+(\d+) more sessions?$", context, re.MULTILINE)
        more.append(int(counted[1]) if counted else 0)
    sizes = {f"claude-code:{session_id(n)}": world.transcript(n).stat().st_size for n in range(count)}
    for n in range(count):
        me = f"claude-code:{session_id(n)}"
        entries = CursorStore(world.cursor_file(n)).read(me)
        # Beside its siblings' cursors, a reader may keep one for itself (the files it touched).
        offsets = {k: v["offset"] for k, v in entries.items() if k != me}
        # Every sibling it named is read to its end; the ones only counted ("+N more sessions") wait.
        assert all(offsets[k] == sizes[k] for k in offsets) and set(offsets) <= set(sizes) - {me}
        # Of those, the most relevant CARRIED_OVER wait; the others are marked read as counted.
        assert len(offsets) + min(more[n], CARRIED_OVER) == count - 1
    assert not list(world.state.rglob("*.corrupt-*"))
    assert "Traceback" not in world.log()


_READER = textwrap.dedent(
    """
    import json, sys
    from dataclasses import replace
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.formats import DEFAULT_CATEGORIES
    from sidelight.hookspecs import hookimpl
    from sidelight.plugins import Plugins
    from sidelight.records import FormatSpec, ResolverSpec, Session, SummarizerSpec
    from sidelight.features import digest
    from sidelight.features.digest import get_session_updates

    # The readers this process plays, one after the other; each appends to its own transcript and reads
    # its siblings ``rounds`` times (without appending, when ``rounds`` is 0, until nothing is left: a
    # sibling only counted in "+N more sessions" is named by a later read).
    root, count, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    readers = [int(n) for n in sys.argv[4].split(",")]
    shared = root / "state" / "shared-cursors.json"
    sessions = [
        Session(key=f"t:{n}", name=str(n), path=root / f"{n}.jsonl", format="claude-code", group="g",
                resolver="t", id=str(n), cursor_file=shared)
        for n in range(count)
    ]
    counted: dict[str, int] = {}

    class Host:
        @hookimpl
        def sidelight_formats(self):
            yield FormatSpec(name="claude-code", decoder="claude-code",
                             categories=DEFAULT_CATEGORIES["claude-code"])

        @hookimpl
        def sidelight_resolvers(self):
            yield ResolverSpec(name="t", list_sessions=lambda settings: list(sessions),
                               current=lambda event, settings: None)

        @hookimpl
        def sidelight_summarizers(self):
            def count_them(activity):
                return f"- {activity.session.name}: {activity.user_messages}"
            yield SummarizerSpec(name="count", summarize=count_them)

    def take(digest):  # counts the prompts the digest names, per sibling; True when it had nothing
        for named in (digest or "").splitlines()[1:]:
            if named.startswith("- "):
                name, prompts = named[2:].split(": ")
                counted[name] = counted.get(name, 0) + int(prompts)
        return digest is None

    # Room for every sibling in one digest: what is counted here is each prompt named exactly once under
    # concurrency, not what a full digest leaves out (tests/test_updates.py checks that).
    digest.DEFAULT_LIMIT = 1 << 20
    plugins = Plugins(builtins=(), entry_points=False)
    plugins.register(Host(), name="host")
    settings = replace(Settings.load(env={}, home=root), state_dir=root / "state", time_budget=300.0,
                       first_look_bytes=1 << 30, scope="all")
    for me in readers:
        counted.clear()
        line = '{"type":"user","message":{"role":"user","content":"p"},"sessionId":"%d"}\\n' % me
        for i in range(rounds):
            with open(root / f"{me}.jsonl", "a") as f:
                f.write(line * 2)
            take(get_session_updates(sessions[me], settings=settings, plugins=plugins))
        while not rounds and not take(get_session_updates(sessions[me], settings=settings, plugins=plugins)):
            pass
        print(json.dumps(counted), flush=True)
    """
)


@pytest.mark.parametrize("count", COUNTS)
def test_readers_sharing_one_cursor_file_count_every_prompt_once(tmp_path: Path, count: int) -> None:
    rounds = 2
    for n in range(count):
        (tmp_path / f"{n}.jsonl").write_text("")

    def run(rounds: int, readers: list[list[int]]) -> list[dict[str, int]]:
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _READER,
                    str(tmp_path),
                    str(count),
                    str(rounds),
                    ",".join(map(str, r)),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for r in readers
        ]
        results: list[dict[str, int]] = []
        for process in children:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err.decode()
            results.extend(json.loads(line) for line in out.splitlines())
        return results

    # Everyone appends and reads at once, one process per reader; then one more read each, with nothing
    # appended, picks up what was written after a reader's last look.
    first = run(rounds, [[n] for n in range(count)])
    second = run(0, [list(range(count))])
    prompts = {str(n): (tmp_path / f"{n}.jsonl").read_bytes().count(b"\n") for n in range(count)}
    assert set(prompts.values()) == {2 * rounds}
    for me in range(count):
        total = {k: first[me].get(k, 0) + second[me].get(k, 0) for k in prompts if k != str(me)}
        assert total == {k: v for k, v in prompts.items() if k != str(me)}, me
    state = json.loads((tmp_path / "state" / "shared-cursors.json").read_bytes())
    sizes = {f"t:{n}": (tmp_path / f"{n}.jsonl").stat().st_size for n in range(count)}
    assert set(state) == set(sizes)
    for reader, entries in state.items():
        offsets = {k: v["offset"] for k, v in entries.items() if k != reader}  # and maybe its own
        assert offsets == {k: v for k, v in sizes.items() if k != reader}


# -- many hooks of ONE reader at once (issue 19 item 5) ---------------------------------------------------

_SAME_READER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path

    from sidelight import statefile
    from sidelight.features.hook import handle_hook

    # Every save of a cursor file, in the order they happen: _write runs under the file's lock.
    saves, outputs, go, payload, rounds = sys.argv[1:6]
    write = statefile.SharedState._write

    def logged(self, data):
        write(self, data)
        with open(saves, "ab") as file:
            file.write(data.replace(b"\\n", b" ") + b"\\n")

    statefile.SharedState._write = logged
    while not os.path.exists(go):
        time.sleep(0.005)
    got = [handle_hook("claude-code", payload.encode()) for _ in range(int(rounds))]
    with open(outputs, "a") as file:
        file.writelines(json.dumps(o) + "\\n" for o in got)
    """
)


def test_concurrent_hooks_of_one_reader_never_repeat_or_lose_lines_and_never_move_back(
    tmp_path: Path,
) -> None:
    """Qwen Code's second, empty-prompt call, or two messages of one channel answered at once: hooks of
    one reader session run together while its siblings append. Every save is recorded: no cursor ever
    moves backwards, and the prompts the digests report, put together, are every prompt once."""
    world = HookWorld(tmp_path, sessions=3)
    env = world.env(SIDELIGHT_TIME_BUDGET="120s", SIDELIGHT_WARM="off")
    assert world.run_hook(0, SIDELIGHT_TIME_BUDGET="120s", SIDELIGHT_WARM="off").returncode == 0
    saves, outputs, go = tmp_path / "saves.jsonl", tmp_path / "outputs.jsonl", tmp_path / "go"
    written = {1: 0, 2: 0}
    stop = threading.Event()

    def append() -> None:
        while not stop.is_set():
            for n in written:
                world.prompt(n, f"p{written[n]}")
                written[n] += 1
            time.sleep(0.002)

    hooks = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _SAME_READER,
                str(saves),
                str(outputs),
                str(go),
                world.payload(0).decode(),
                "6",
            ],
            env=env,
            stderr=subprocess.PIPE,
        )
        for _ in range(6)
    ]
    appender = threading.Thread(target=append)
    appender.start()
    go.touch()
    try:
        for process in hooks:
            _, err = process.communicate(timeout=300)
            assert process.returncode == 0, err.decode()
    finally:
        stop.set()
        appender.join()
    # What was appended after the last of them looked is reported by one more prompt.
    last = world.run_hook(0, SIDELIGHT_TIME_BUDGET="120s", SIDELIGHT_WARM="off")
    delivered = [json.loads(line) for line in outputs.read_text().splitlines()]
    delivered.append(last.stdout.decode() or None)

    me = f"claude-code:{session_id(0)}"
    offsets: dict[str, list[int]] = {}
    for line in saves.read_text().splitlines():
        for writer, entry in json.loads(line).get(me, {}).items():
            offsets.setdefault(writer, []).append(entry["offset"])
    assert set(offsets) >= {f"claude-code:{session_id(n)}" for n in written}
    for writer, seen in offsets.items():
        backwards = [(a, b) for a, b in itertools.pairwise(seen) if b < a]
        assert not backwards, f"{writer}: a cursor moved back {len(backwards)} times"

    ranges = reported_ranges(delivered)
    for n, total in written.items():
        covered = sorted(ranges.get(session_id(n)[:8], []))
        prompts = [p for first, end in covered for p in range(first, end)]
        assert len(prompts) == len(set(prompts)), f"session {n}: some prompts were reported twice"
        assert prompts == list(range(total)), f"session {n}: prompts lost"
