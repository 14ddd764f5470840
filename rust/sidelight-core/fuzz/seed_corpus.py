"""Seed the fuzz corpora from the real transcripts (`make fuzz` runs this; nothing here is committed).

Each target gets pieces of the sample sessions written by the real agent CLIs (tests/data) and, when
the real Pi sessions of pi-mono in tests/data/pi-mono (SIDELIGHT_FUZZ_EXTRA adds directories),
encoded the way the target reads its input:

- decode_declared: a layout byte (even: Pi's, odd: Gemini's), then what decode_<format> gets;
- decode_<format>: a split byte, then consecutive lines of a transcript of that format (and a few of
  the other formats, since a decoder meets foreign lines too);
- tail: a config byte, then appends of the lines in pieces of varying size with scans, a rotation and
  a truncation in between;
- cursor: 24 bytes of cursor material, then a piece of a transcript.

Usage: python3 seed_corpus.py REPO_ROOT CORPUS_DIR [MAX_LEN]
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path

FORMATS = {"claude-code": "decode_claude_code", "pi": "decode_pi", "codex": "decode_codex"}


def transcripts(root: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {name: [] for name in FORMATS}
    for name in FORMATS:
        found[name] += sorted((root / "tests" / "data" / name).rglob("*.jsonl"))
    extra = [root / "tests" / "data" / "pi-mono"]
    extra += [Path(p) for p in os.environ.get("SIDELIGHT_FUZZ_EXTRA", "").split(os.pathsep) if p]
    for directory in extra:
        if directory.is_dir():
            found["pi"] += sorted(directory.glob("*.jsonl"))
    return found


def chunks(path: Path, limit: int) -> list[bytes]:
    """Runs of whole lines of at most `limit` bytes; a longer line is cut to the limit."""
    out: list[bytes] = []
    current = b""
    for line in path.read_bytes().splitlines(keepends=True):
        line = line[:limit]
        if current and len(current) + len(line) > limit:
            out.append(current)
            current = b""
        current += line
    if current:
        out.append(current)
    return out


def write(directory: Path, data: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def tail_ops(rng: random.Random, data: bytes) -> bytes:
    ops = bytearray([rng.randrange(256)])
    i = 0
    while i < len(data):
        n = rng.choice([1, 7, 64, 200, 255])
        ops += bytes([0, n]) + data[i : i + n]
        i += n
        roll = rng.random()
        if roll < 0.3:
            ops.append(4)  # scan
        elif roll < 0.32:
            ops.append(rng.choice([5, 6, 7, 8]))  # truncate, rotate, delete, overwrite
    return bytes(ops)


def main() -> None:
    root, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    max_len = int(sys.argv[3]) if len(sys.argv) > 3 else 16384
    rng = random.Random(7)
    counts: dict[str, int] = {}
    found = transcripts(root)
    for name, paths in found.items():
        # A few pieces of the other formats, appended to some seeds: a decoder meets foreign lines too.
        foreign = [c for other, ps in found.items() if other != name for p in ps[:1] for c in chunks(p, 2048)[:3]]
        for path in paths:
            seeds: list[tuple[str, bytes]] = []
            for k, piece in enumerate(chunks(path, max_len // 2)):
                mixed = piece + foreign[k] if k < len(foreign) else piece
                seeds.append((FORMATS[name], bytes([rng.randrange(256)]) + mixed))
                seeds.append(("tail", tail_ops(rng, piece[: max_len // 3])))
                seeds.append(("cursor", rng.randbytes(24) + piece))
            # Every distinct line on its own too, so that each entry shape is a seed.
            for line in dict.fromkeys(path.read_bytes().splitlines(keepends=True)[:400]):
                seeds.append((FORMATS[name], bytes([rng.randrange(256)]) + line))
            if name == "pi":
                # The declared decoder's first byte picks its layout: even for Pi's.
                seeds += [("decode_declared", b"\x00" + data) for target, data in seeds if target == "decode_pi"]
            for target, data in seeds:
                write(corpus / target, data[:max_len])
                counts[target] = counts.get(target, 0) + 1
    # Odd first byte: the Gemini-shaped layout (declared::samples::gemini), seeded from the real Gemini
    # CLI chats of tests/data (the example plugin is Kiro's now; its lines would teach this layout nothing).
    for path in sorted((root / "tests" / "data" / "gemini").rglob("*.jsonl")):
        for piece in chunks(path, max_len // 2):
            write(corpus / "decode_declared", (b"\x01" + bytes([rng.randrange(256)]) + piece)[:max_len])
            counts["decode_declared"] = counts.get("decode_declared", 0) + 1
    for target, n in sorted(counts.items()):
        print(f"seeded {target}: {n} inputs from {sum(len(p) for p in found.values())} transcripts")


if __name__ == "__main__":
    main()
