"""Where Pi keeps a session's file, and what its name says.

Pi writes ``<pi dir>/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``: the folder named after the working
directory (:func:`pi_encode_cwd`), the file after the session's uuid (:func:`pi_session_uuid`).
"""

# ruff: noqa: PTH119

from __future__ import annotations

import os

from sidelight._fast.patterns import Pattern
from sidelight.engine.paths import head_string_field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["TITLE_LINES", "pi_encode_cwd", "pi_session_uuid"]

#: A transcript's title line (``FormatSpec.title_lines``): the newest ``session_info`` line's name.
TITLE_LINES: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (("session_info", "type", ("name",)),)

_SEPARATORS = str.maketrans("/\\:", "---")
_UUID = Pattern(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_header_ids: dict[str, str | None] = {}


def pi_encode_cwd(cwd: str) -> str:
    """Pi's session folder name for ``cwd``: ``--`` + the path without its leading separator, with
    ``/``, ``\\`` and ``:`` turned into ``-``, + ``--``."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + stripped.translate(_SEPARATORS) + "--"


def pi_session_uuid(path: Path | str) -> str | None:
    """The uuid of ``<timestamp>_<uuid>.jsonl``, else the ``session`` header's ``id``."""
    stem = os.path.basename(os.fspath(path))
    stem = stem[:-6] if stem.endswith(".jsonl") else stem
    tail = stem.rsplit("_", 1)[-1]
    if _UUID().fullmatch(tail):
        return tail.lower()
    key = os.fspath(path)
    if key not in _header_ids:
        _header_ids[key] = head_string_field(path, "id", limit=4096)
    return _header_ids[key]
