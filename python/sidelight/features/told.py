"""What a session was told within its turn (the news after a tool call, :mod:`sidelight.features.news`):
its ledger, ``<state dir>/news/SESSION.json``, read here by both the news and the digest, which does
not mention again a change the session heard of already. Imports nothing of the features (the digest
imports it on a prompt with a conflict)."""

# ruff: noqa: PTH123

from __future__ import annotations

from sidelight._fast import jsonio
from sidelight.statelayout import NEWS_DIR, session_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from sidelight.config import Settings

__all__ = ["news_file", "number", "read_news", "told_changes", "told_item"]


def news_file(settings: Settings, key: str) -> Path:
    """Session ``key``'s ledger of news within the turn."""
    return session_path(settings.state_dir, NEWS_DIR, key, ".json")


def read_news(path: Path | str) -> dict[str, Any]:
    """A ledger's content (empty when it is missing or broken)."""
    try:
        with open(path, "rb") as f:
            data = jsonio.loads(f.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def number(value: object) -> float:
    """``value`` when it is a number, else 0."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def told_item(item: object) -> bool:
    """Whether ``item`` is a told change as recorded: ``[this session's path, the sibling's key, the
    change's time, the sibling's path]``."""
    return isinstance(item, list) and len(item) == 4 and all(isinstance(item[i], str) for i in (0, 1, 3))


def told_changes(settings: Settings, key: str) -> dict[tuple[str, str], float]:
    """Per (sibling's session key, the file's real path as the sibling named it), the time of the
    latest change of it session ``key`` was told within a turn (what the digest does not repeat)."""
    out: dict[tuple[str, str], float] = {}
    told = read_news(news_file(settings, key)).get("told")
    for item in told if isinstance(told, list) else ():
        if told_item(item):
            when = number(item[2])
            if when > out.get((item[1], item[3]), -1.0):
                out[(item[1], item[3])] = when
    return out
