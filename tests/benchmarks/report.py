"""Print MB/s per peer and shape, and the ratios against stdlib json, msgspec and the newline pass.

    .venv/bin/pytest tests/benchmarks --benchmark-enable -p no:randomly --benchmark-json=bench.json
    .venv/bin/python -m tests.benchmarks.report bench.json [--markdown]

MB/s is the corpus size (``extra_info["bytes"]``, MiB) over the median time of a round. The ratio columns
say how many times faster than ``reference-json`` and ``msgspec`` a peer is, and which share of the
physical limits it reaches: ``wc -l`` (native read + newline count, one thread) and ``read-only`` (the
copy from the page cache alone). ``newline`` is the same count in Python, slower than ``wc -l``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

MB = 1024 * 1024
PEER_ORDER = (
    "read-only",
    "wc-l",
    "newline",
    "sidelight",
    "sidelight-many",
    "msgspec",
    "reference-orjson",
    "reference-json",
)


def rows(data: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{shape: {peer: {"mbs": …, "best": …, "size": …, "agreement": …}}}``."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for bench in data.get("benchmarks", []):
        info = bench.get("extra_info", {})
        if "shape" not in info or "bytes" not in info:
            continue
        stats = bench["stats"]
        size = info["bytes"] / MB
        table.setdefault(info["shape"], {})[info["peer"]] = {
            "mbs": size / stats["median"],
            "best": size / stats["min"],
            "size": size,
            "files": info.get("files", 1),
            "agreement": info.get("agreement", "?"),
        }
    return table


def render(data: dict[str, Any], markdown: bool = False) -> str:
    table = rows(data)
    header = ["shape", "peer", "MB/s", "best MB/s", "x json", "x msgspec", "of wc -l", "of read", "agrees"]
    lines = []
    for shape, peers in table.items():
        json_mbs = peers.get("reference-json", {}).get("mbs")
        msgspec_mbs = peers.get("msgspec", {}).get("mbs")
        wc_mbs = peers.get("wc-l", {}).get("mbs")
        read_mbs = peers.get("read-only", {}).get("mbs")
        any_peer = next(iter(peers.values()))
        label = f"{shape} ({any_peer['size']:.0f} MB, {any_peer['files']} files)"
        for peer in sorted(peers, key=lambda p: PEER_ORDER.index(p) if p in PEER_ORDER else 99):
            row = peers[peer]
            agreement = row["agreement"]
            lines.append(
                [
                    label,
                    peer,
                    f"{row['mbs']:.0f}",
                    f"{row['best']:.0f}",
                    f"{row['mbs'] / json_mbs:.1f}x" if json_mbs else "-",
                    f"{row['mbs'] / msgspec_mbs:.1f}x" if msgspec_mbs else "-",
                    f"{row['mbs'] / wc_mbs:.0%}" if wc_mbs else "-",
                    f"{row['mbs'] / read_mbs:.0%}" if read_mbs else "-",
                    agreement if isinstance(agreement, str) else "NO",
                ]
            )
            label = ""
    memory = [b for b in data.get("benchmarks", []) if b.get("group") == "memory"]
    out = _table(header, lines, markdown)
    for bench in memory:
        info = bench.get("extra_info", {})
        out += (
            f"\npeak RSS of sidelight.scan: {info.get('small_file_mb')} MB file → "
            f"{info.get('small_peak_kb')} KB, "
            f"{info.get('large_file_mb')} MB file → {info.get('large_peak_kb')} KB "
            f"(import only: {info.get('import_only_kb')} KB)\n"
        )
    return out


def _table(header: list[str], lines: list[list[str]], markdown: bool) -> str:
    widths = [max(len(str(row[i])) for row in [header, *lines]) for i in range(len(header))]
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in lines]
    else:
        out = [
            "  ".join(
                cell.ljust(w) if i < 2 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
            for row in [header, *lines]
        ]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    paths = [arg for arg in argv if not arg.startswith("--")]
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = json.loads(Path(paths[0]).read_text())
    print(render(data, markdown="--markdown" in argv), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
