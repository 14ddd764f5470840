"""The state directory's layout: every file and folder name sidelight keeps there, spelled once.

The state directory (``$SIDELIGHT_STATE_DIR``, else ``$XDG_STATE_HOME/sidelight``, else
``~/.local/state/sidelight``; :func:`sidelight.warm.default_state_dir`) holds::

    config.toml             the config file (unless SIDELIGHT_CONFIG names another)
    sidelight.log           the hooks' and the watcher's log
    hook.sock               the running watcher's socket for warm hooks
    events.jsonl            session starts and ends the hooks record
    activity-events.jsonl   the watcher's event log (the jsonl-log sink)
    status.json             the watcher's snapshot (status.json.lock: its writers' lock)
    watch.lock              the running watcher's lock and pid
    history-keys.json       the history's keys of sessions seen
    facts.json              the long-term facts
    entry-points-*.json     the plugin manager's cache of entry points, one per sys.path
    watch/                  the watcher's cursors.json and lifecycle.json
    fleet/cursors.json      the fleet publisher's cursors
    cursors/                per session: its cursors into its siblings (SESSION.json)
    received/               per session: hashes of the blocks it was given
    long-term-given/        per session: the facts it was given
    prompts/                per session: when it last had a prompt
    pending-resume/         per session: a welcome back owed to it
    guard/                  per session: the stale writes it was refused
    news/                   per session: what it was told within a turn, and when it last looked
    mcp/                    per MCP caller no session names (its client and folder): its cursors
    handoffs/               per workspace: its handoff (HASH/_handoff.md); delivered/, pending/ (per
                            session)
    archive/                ended sessions (lifecycle records and gzip transcripts)
    requests/               what ``sidelight suspend`` / ``resume`` ask of the watcher
    installs/  backups/     what ``sidelight install`` changed, and the files it backed up
    exports/AGENT/          per agent that keeps its sessions in a database: sidelight's export of them,
                            and its index.json (older versions: AGENT/, moved on first use)
    dashboard/  recaps/     the dashboard's scratch files and the recaps it wrote (SESSION.md)

A file named after a session is named by :func:`session_name` and found by :func:`session_path`, the
one rule for every folder above: a file name never longer than :data:`NAME_BYTES` bytes, whatever the
session's key. ``tests/test_statelayout.py`` fails when a module of ``python/sidelight`` spells one of
these names itself.

The prompt hook imports this module on every prompt: it imports only ``os`` and :mod:`sidelight.warm`
(which the hook has loaded already, and which spells the two names a warm hook needs), no ``pathlib``,
no ``typing``, and ``zlib`` only for a session key too long to be a file name as it is.
"""

from __future__ import annotations

import os

# The export of opencode's sessions: spelled in the built-in agents' index, which tells whether opencode
# has sessions (the folder is its root) without importing its template.
from sidelight.agents import EXPORTS_DIR

# The config file (``SIDELIGHT_CONFIG`` may name another) and the running watcher's socket, which warm
# hooks ask: spelled in the warm client, whose import every prompt pays and which imports no module of
# sidelight's.
from sidelight.warm import CONFIG_FILE, HOOK_SOCKET

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "ACTIVITY_EVENTS_FILE",
    "ARCHIVE_DIR",
    "BACKUPS_DIR",
    "CONFIG_FILE",
    "CURSORS_DIR",
    "DASHBOARD_DIR",
    "DELIVERED_DIR",
    "ENTRY_POINTS_FILE",
    "EVENTS_FILE",
    "EXPORTS_DIR",
    "EXPORT_INDEX_FILE",
    "FACTS_FILE",
    "FLEET_CURSORS_FILE",
    "GIVEN_DIR",
    "GUARD_DIR",
    "HANDOFFS_DIR",
    "HANDOFF_FILE",
    "HISTORY_KEYS_FILE",
    "HOOK_SOCKET",
    "INSTALLS_DIR",
    "LOG_FILE",
    "MCP_DIR",
    "NAME_BYTES",
    "NEWS_DIR",
    "PENDING_HANDOFFS_DIR",
    "PENDING_RESUME_DIR",
    "PRIVATE_FILES",
    "PRIVATE_FOLDERS",
    "PROMPTS_DIR",
    "RECAPS_DIR",
    "RECEIVED_DIR",
    "REQUESTS_DIR",
    "STATUS_FILE",
    "WATCH_CURSORS_FILE",
    "WATCH_DIR",
    "WATCH_LIFECYCLE_FILE",
    "WATCH_LOCK_FILE",
    "is_state_entry",
    "safe_name",
    "session_name",
    "session_names",
    "session_path",
]

# --- files at the top of the state directory ----------------------------------------------------------

#: The log of the hooks and the watcher.
LOG_FILE = "sidelight.log"
#: Where the hooks record session starts and ends (the watcher and the handoff read it).
EVENTS_FILE = "events.jsonl"
#: The watcher's event log (the ``jsonl-log`` sink's file).
ACTIVITY_EVENTS_FILE = "activity-events.jsonl"
#: The watcher's snapshot (its writers lock ``status.json.lock``).
STATUS_FILE = "status.json"
#: The lock (and pid) of the running watcher.
WATCH_LOCK_FILE = "watch.lock"
#: The history's keys of the sessions it saw.
HISTORY_KEYS_FILE = "history-keys.json"
#: The long-term facts.
FACTS_FILE = "facts.json"
#: The plugin manager's cache of the entry points on one ``sys.path`` (``{path}``: its hash).
ENTRY_POINTS_FILE = "entry-points-{path}.json"

# --- folders, and the files in them -------------------------------------------------------------------

#: The watcher's own folder, and its two files in it.
WATCH_DIR = "watch"
WATCH_CURSORS_FILE = os.path.join(WATCH_DIR, "cursors.json")
WATCH_LIFECYCLE_FILE = os.path.join(WATCH_DIR, "lifecycle.json")
#: The fleet publisher's cursors.
FLEET_CURSORS_FILE = os.path.join("fleet", "cursors.json")
#: Per session: its cursors into its siblings (``SESSION.json``).
CURSORS_DIR = "cursors"
#: Per session: the hashes of the blocks it was given.
RECEIVED_DIR = "received"
#: Per session: the long-term facts it was given.
GIVEN_DIR = "long-term-given"
#: Per session: when it last had a prompt.
PROMPTS_DIR = "prompts"
#: Per session: a welcome back owed to it.
PENDING_RESUME_DIR = "pending-resume"
#: Per session: the stale writes the guard refused it (a retry goes through).
GUARD_DIR = "guard"
#: Per session: what it was told within a turn (the after-tool news), and when it last looked.
NEWS_DIR = "news"
#: Per caller of ``sidelight mcp`` that is no known session (its client's name and folder): its cursors.
MCP_DIR = "mcp"
#: Per workspace (a hash of its path): its handoff file, ``handoffs/HASH/_handoff.md``.
HANDOFFS_DIR = "handoffs"
#: The handoff's file name (in the state directory's folder of its workspace, or in the workspace).
HANDOFF_FILE = "_handoff.md"
#: One file per handoff delivered.
DELIVERED_DIR = os.path.join(HANDOFFS_DIR, "delivered")
#: Per session: the handoff it is to be given.
PENDING_HANDOFFS_DIR = os.path.join(HANDOFFS_DIR, "pending")
#: Ended sessions: their lifecycle records and gzip copies of their transcripts.
ARCHIVE_DIR = "archive"
#: What ``sidelight suspend`` / ``resume`` ask of the watcher.
REQUESTS_DIR = "requests"
#: What ``sidelight install`` changed (one ledger per target), and the files it backed up.
INSTALLS_DIR = "installs"
BACKUPS_DIR = "backups"
#: Per agent that keeps its sessions in a database: sidelight's export of them (:func:`export_dir`, in
#: :data:`EXPORTS_DIR`, whose name the agents' index spells: it is read before anything else), and its
#: index in it.
EXPORT_INDEX_FILE = "index.json"
#: The dashboard's scratch files, and the recaps it wrote (per session: ``SESSION.md``).
DASHBOARD_DIR = "dashboard"
RECAPS_DIR = "recaps"

#: The folders of the state directory that are sidelight's (:func:`sidelight.statefile.private_tree`
#: makes them private): each top-level folder named above.
PRIVATE_FOLDERS = frozenset(
    {
        CURSORS_DIR,
        RECEIVED_DIR,
        PROMPTS_DIR,
        PENDING_RESUME_DIR,
        GUARD_DIR,
        NEWS_DIR,
        MCP_DIR,
        GIVEN_DIR,
        HANDOFFS_DIR,
        ARCHIVE_DIR,
        REQUESTS_DIR,
        INSTALLS_DIR,
        BACKUPS_DIR,
        WATCH_DIR,
        os.path.dirname(FLEET_CURSORS_FILE),
        EXPORTS_DIR,
    }
)
#: The files at the top of the state directory that are sidelight's (with what their writers add:
#: ``NAME.lock``, ``NAME.1``, temporaries ``.NAME.*``).
PRIVATE_FILES = (
    LOG_FILE,
    EVENTS_FILE,
    STATUS_FILE,
    WATCH_LOCK_FILE,
    HISTORY_KEYS_FILE,
    FACTS_FILE,
    ACTIVITY_EVENTS_FILE,
)

# --- files named after a session ----------------------------------------------------------------------

#: The longest name (in UTF-8 bytes) :func:`session_name` gives: a file system's names take 255, and
#: the writers add a suffix (``.json``, ``.md``, ``.lock``, a temporary's ``.NAME.<pid>.<thread>.tmp``).
NAME_BYTES = 200
#: What older versions cut a long name to in some folders (its last characters).
_OLD_CUT = 200


def safe_name(key: str) -> str:
    """``key`` (a session key, ``host:id``…) with every character but a letter, a digit, ``-``, ``_``
    or ``.`` made ``_``; ``.`` and ``..`` are not names (``_``, ``__``). Any length: see
    :func:`session_name`."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
    return name if name.strip(".") else "_" * max(len(name), 1)


def export_dir(state_dir: Path | str, agent: str) -> str:
    """Where sidelight keeps its export of ``agent``'s sessions: ``<state dir>/exports/<agent>`` (the
    agent's name made a :func:`safe_name`). Older versions kept it at ``<state dir>/<agent>``: an export
    found there (and none here yet) is moved here, once (a ``stat`` when it is here already)."""
    name = safe_name(agent)
    folder = os.path.join(state_dir, EXPORTS_DIR, name)
    if not os.path.isdir(folder):
        old = os.path.join(state_dir, name)
        if os.path.isfile(os.path.join(old, EXPORT_INDEX_FILE)):
            try:
                os.makedirs(os.path.dirname(folder), mode=0o700, exist_ok=True)
                os.rename(old, folder)
            except OSError:
                return old  # (read where it is; a later call moves it)
    return folder


def session_name(key: str) -> str:
    """The file name of session ``key`` in every per-session folder: :func:`safe_name`, and when that
    is longer than :data:`NAME_BYTES` bytes its end followed by ``~`` and a hash of the whole key (two
    long keys with the same end get two names)."""
    name = safe_name(key)
    data = name.encode("utf-8")
    if len(data) <= NAME_BYTES:
        return name
    import zlib  # only for a key too long for a name: a C module, loaded in a moment

    whole = key.encode("utf-8", "surrogatepass")
    mark = f"~{zlib.crc32(whole):08x}{zlib.adler32(whole):08x}"
    end = data[len(data) - (NAME_BYTES - len(mark)) :].decode("utf-8", "ignore")
    return end + mark


def session_names(key: str, suffix: str = "") -> list[str]:
    """The name (with ``suffix``) of session ``key`` first, then the names older versions gave its files
    when the key is long (the whole :func:`safe_name`, or its last 200 characters): empty of these
    when the name did not change."""
    name = session_name(key)
    names = [name + suffix]
    if name != safe_name(key):
        safe = safe_name(key)
        for old in (safe + suffix, safe[-_OLD_CUT:] + suffix):
            if old not in names and len(old.encode("utf-8")) <= 255:
                names.append(old)
    return names


def session_path(state_dir: Path, folder: str, key: str, suffix: str = "") -> Path:
    """``<state_dir>/<folder>/<session name><suffix>``: the one place of session ``key``'s file in
    ``folder`` (one of the per-session folders above). A file an older version wrote under another
    name (a long key: :func:`session_names`) is renamed to this one on the way, so it is still read."""
    names = session_names(key, suffix)
    base = state_dir / folder
    path = base / names[0]
    for old in names[1:]:
        try:
            if not os.path.lexists(path):
                os.rename(base / old, path)
        except OSError:
            continue  # not there (the common case), or taken by another process first
        break
    return path


def is_state_entry(name: str) -> bool:
    """Whether ``name``, an entry at the top of the state directory, is one sidelight keeps there (a
    folder or file named above, with what its writers add: ``NAME.lock``, ``NAME.1``, ``.NAME.*``):
    what ``sidelight uninstall --purge`` may remove."""
    bare = name[1:] if name.startswith(".") else name
    known = (*PRIVATE_FOLDERS, DASHBOARD_DIR, RECAPS_DIR, CONFIG_FILE, HOOK_SOCKET, *PRIVATE_FILES)
    if any(bare == entry or bare.startswith(entry + ".") for entry in known):
        return True
    prefix, _, suffix = ENTRY_POINTS_FILE.partition("{path}")
    return bare.startswith(prefix) and suffix in bare
