"""The watcher's record of each session it follows (:class:`Row`: where it is, what it is called, its
counts) and the view of it the status snapshot holds (:func:`status_row`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sidelight.features.lifecycle import PATH_LIMIT, SessionCounts
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sidelight.records import Session

__all__ = ["Row", "row_for", "status_row"]


@dataclass(slots=True)
class Row:
    """One session the watcher follows: where it is and what it is called (as of the last listing its
    scans came from), and its counts, the one record of them (:class:`SessionCounts`, which a tracker
    the watcher feeds shares). What ``sidelight status`` shows of it is a view, :func:`status_row`."""

    key: str
    name: str
    agent: str
    group: str
    path: str
    resolver: str
    counts: SessionCounts = field(default_factory=SessionCounts)
    #: The listing's Session object the name and group were last taken from.
    seen: Session | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Row:
        """The row :func:`status_row` rendered (a snapshot's session record)."""
        row = cls(
            key=str(data["key"]),
            name=str(data.get("name") or data["key"]),
            agent=str(data.get("agent") or ""),
            group=str(data.get("group") or ""),
            path=str(data.get("path") or ""),
            resolver=str(data.get("resolver") or ""),
        )
        counts = row.counts
        counts.user_messages = int(data.get("user_messages") or 0)
        counts.assistant_messages = int(data.get("assistant_messages") or 0)
        found = data.get("categories")
        if isinstance(found, dict):
            counts.categories.update({k: int(v) for k, v in found.items() if isinstance(v, int)})
        tools = data.get("tools")
        if isinstance(tools, dict):
            counts.tools = {str(k): int(v) for k, v in tools.items() if isinstance(v, int)}
        counts.lines = int(data.get("lines") or 0)
        counts.last_timestamp = data.get("last_timestamp")
        last = data.get("last_activity")
        counts.activity_seconds = float(last) if isinstance(last, int | float) else None
        files = data.get("recent_files")
        counts.touched_files = [str(f) for f in files] if isinstance(files, list) else []
        return row


def status_row(row: Row) -> dict[str, Any]:
    """The status row of a session (a record of ``status.json``'s ``sessions``, before its state): a
    view of the watcher's record, rendered when the snapshot is written."""
    counts = row.counts
    return {
        "key": row.key,
        "name": row.name,
        "agent": row.agent,
        "group": row.group,
        "path": row.path,
        "resolver": row.resolver,
        # The agent's id of the session: its host's registry of running sessions names it by that.
        "session_id": None if row.seen is None else row.seen.id,
        "user_messages": counts.user_messages,
        "assistant_messages": counts.assistant_messages,
        "messages": counts.user_messages + counts.assistant_messages,
        "categories": dict(counts.categories),
        "tools": dict(counts.tools),
        "lines": counts.lines,
        "last_timestamp": counts.last_timestamp,
        "last_activity": counts.last_activity,
        # The core's paths as the transcript gave them: sanitized here, where they reach a state file
        # (a path may hold a token: ``/tmp/ghp_...``), not on the scanning path.
        "recent_files": [sanitize(path, PATH_LIMIT) for path in counts.touched_files],
    }


def row_for(session: Session) -> Row:
    return Row(
        key=session.key,
        name=session.name,
        agent=session.format,
        group=session.group,
        path=str(session.path),
        resolver=session.resolver,
    )
