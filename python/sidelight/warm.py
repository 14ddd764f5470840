"""The warm path's client and its wire format.

A running ``sidelight watch`` has every module loaded and every session listed; a hook process that asks
it, rather than importing all of that itself, costs about a bare interpreter start. This module is the
hook's side of that conversation, and everything both sides must agree on. The prompt hook imports it on
every prompt, before anything else of sidelight's, so it imports only what a bare interpreter has already
loaded (``os``, ``time``) and the C module ``_socket``: no ``typing``, no ``pathlib``, no ``json``, not
even the agents' index.

The conversation, on the Unix socket ``<state dir>/hook.sock`` (0600, in the 0700 state directory):

1. the hook sends ``SLH2 <meta bytes> <payload bytes>\\n``, the meta (NUL-separated: the build, the host,
   the working directory, then ``NAME=VALUE`` for each variable of :func:`environment`) and the host's
   payload as it came;
2. the watcher answers ``A <seconds>\\n`` when it takes the request (then it has at most that long), or
   ``D <reason>\\n`` when it declines it (another build or environment, too busy): the hook then runs
   in-process;
3. the hook says ``G`` if it still wants the answer. Only then does the watcher compose it: a hook
   that gave up waiting for step 2 (``SIDELIGHT_WARM_TIMEOUT``, default 50 ms) and runs in-process
   instead has closed the connection, and nothing moved twice;
4. the watcher sends ``<length>\\n`` and the answer's bytes (length 0: print nothing);
5. the hook prints the answer, flushes it, says ``K`` and exits. Only then does the watcher move the
   cursors: a hook killed before it printed (or that could not) leaves them where they were, and the
   next prompt gets the same news (at least once).

A hook talks only to its own user's watcher: the state directory must be the user's and writable by
nobody else (:func:`state_dir_problem`), and so must the config file read to find it; the socket must
be the user's, and so must the process listening on it (``SO_PEERCRED``) before anything is sent. It
believes the watcher's ``A <seconds>`` only up to its own time budget (:func:`answer_wait`), takes an
answer only in the shape above, and on anything else closes the connection (nothing moves) and
answers in-process. Whoever answers, the hook writes UTF-8 bytes (:func:`encode_answer`).

The hook does not wait for the cursors to move (``SLH1`` did: a ``C`` after them, 2-3 ms of every
prompt). Nothing can read them too early: the watcher holds the session's reading lock
(:meth:`sidelight.cursors.CursorStore.reading`) from before it composed the answer until they moved,
so the session's next prompt, warm or in-process, waits for them; a watcher that is stopped finishes
the commits it owes first (:meth:`sidelight.watch.serve.HookServer.stop`), and one killed before a
commit leaves the news for the next prompt (at least once, as above). What the hook's exit no longer
says, :meth:`sidelight.watch.serve.HookServer.settle` does: every commit owed was made.
"""

from __future__ import annotations

import os
import stat
import sys
import time

#: The state directory's config file and the running watcher's socket. Their names are part of the
#: layout :mod:`sidelight.statelayout` owns, which takes them from here: the warm client, which every
#: prompt loads before anything else, imports no other module of sidelight's.
CONFIG_FILE = "config.toml"
HOOK_SOCKET = "hook.sock"

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_TIME_BUDGET",
    "WATCHER_MARGIN",
    "Reader",
    "Request",
    "ask_watcher",
    "build_id",
    "config_file",
    "configured_state_dir",
    "decode_header",
    "decode_request",
    "default_state_dir",
    "duration_seconds",
    "encode_answer",
    "encode_request",
    "environment",
    "failure_log_dir",
    "read_own_file",
    "short_address",
    "state_dir_problem",
    "told_to_watcher",
    "untrusted",
]

#: The first word of every request (the protocol's version).
MAGIC = b"SLH2"
#: How long a hook waits for the watcher to take its request before it runs in-process (seconds).
DEFAULT_TIMEOUT = 0.05
#: ``SIDELIGHT_WARM_TIMEOUT``: that wait (``50ms``, ``0.1s``, ``0.05``); ``SIDELIGHT_WARM=off``: never ask.
TIMEOUT_VARIABLE = "SIDELIGHT_WARM_TIMEOUT"
#: The longest SIDELIGHT_WARM_TIMEOUT taken (a warm answer slower than this is no warm answer).
MAX_TIMEOUT = 60.0
SWITCH_VARIABLE = "SIDELIGHT_WARM"
#: Beyond the watcher's own time budget, how long a hook waits for an answer it was promised.
ANSWER_MARGIN = 2.0
#: How long an answer may take beyond the hook's time budget: what the watcher announces (``A <seconds>``
#: is the budget plus this), and the most a hook believes of what it announces.
WATCHER_MARGIN = 5.0
#: A hook's time budget (``time_budget``, ``SIDELIGHT_TIME_BUDGET``) when none is set.
DEFAULT_TIME_BUDGET = 2.0
#: The longest answer a hook takes from the watcher (bytes).
MAX_ANSWER = 16 << 20
#: What a request may hold (bytes): its header line, its meta, its payload.
MAX_HEADER = 64
MAX_META = 1 << 20
MAX_PAYLOAD = 64 << 20

#: How the name of an agent's folder variable ends. A hook tells a watcher every variable so named
#: (besides ``SIDELIGHT_*`` and ``HOME``), since it loads neither the plugins nor the agents' index: the
#: watcher compares those it knows (:data:`sidelight.agents.HOST_VARIABLES`, its resolvers' own) and
#: ignores the rest. Every built-in agent's variable is so named (``tests/test_agent_index.py``).
FOLDER_SUFFIXES = ("_HOME", "_DIR")
#: ``SIDELIGHT_*`` variables that do not change what a hook answers: the warm path's own, the
#: watcher's options, the command line's. A hook and a watcher that differ only in these still talk.
NOT_FOR_HOOKS = frozenset(
    {
        "SIDELIGHT_WARM",
        "SIDELIGHT_WARM_TIMEOUT",
        "SIDELIGHT_LOG_LEVEL",
        "SIDELIGHT_POLLING",
        "SIDELIGHT_DEBOUNCE",
        "SIDELIGHT_RECONCILE",
        "SIDELIGHT_STAT_APPENDS",
        "SIDELIGHT_ARCHIVE_TRANSCRIPTS",
        "SIDELIGHT_BIN",
        "SIDELIGHT_INSTALL_SCOPE",
        "SIDELIGHT_JSON",
        "SIDELIGHT_FORMAT",
    }
)
#: Longer socket paths do not fit a ``sockaddr_un`` (108 bytes on Linux, 104 on macOS): they are reached
#: through the state directory's descriptor (``/proc/self/fd/N/hook.sock``, Linux).
MAX_ADDRESS = 100
_OFF = frozenset({"0", "off", "no", "false"})


def told_to_watcher(name: str) -> bool:
    """Whether a hook tells a watcher the variable ``name`` (:func:`environment`)."""
    if name.startswith("SIDELIGHT_"):
        return name not in NOT_FOR_HOOKS
    return name == "HOME" or name.endswith(FOLDER_SUFFIXES)


def environment(env: Mapping[str, str], compared: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """The variables a hook's answer may depend on, sorted, as a hook tells them to a watcher: a
    watcher answers a hook only when those it compares (``SIDELIGHT_*`` and ``compared``: the agents'
    :data:`sidelight.agents.HOST_VARIABLES`, its resolvers' variables) match its own (it would otherwise
    load other settings, or list other sessions, than the hook would). Without ``compared``: every
    variable told."""
    if compared is None:
        return sorted((name, value) for name, value in env.items() if told_to_watcher(name))
    return sorted(
        (name, value)
        for name, value in env.items()
        if (name.startswith("SIDELIGHT_") and name not in NOT_FOR_HOOKS) or name in compared
    )


def default_state_dir(env: Mapping[str, str], home: str | None = None) -> str:
    """The state directory before the config file is read: ``SIDELIGHT_STATE_DIR``, else
    ``$XDG_STATE_HOME/sidelight``, else ``~/.local/state/sidelight``."""
    given = env.get("SIDELIGHT_STATE_DIR")
    if given is not None:
        return given
    if env.get("XDG_STATE_HOME"):
        return os.path.join(env["XDG_STATE_HOME"], "sidelight")
    home = home or env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".local", "state", "sidelight")


def build_id() -> str:
    """Which sidelight this is: its package folder and when it (and the hook's composer) last changed. A
    watcher of another build (an upgrade installed while it runs) declines, and the hook answers itself."""
    package = os.path.dirname(os.path.abspath(__file__))
    try:
        stamps = (
            os.stat(package).st_mtime_ns,
            os.stat(os.path.join(package, "features", "hook.py")).st_mtime_ns,
        )
    except OSError:
        stamps = (0, 0)
    return f"{package}:{stamps[0]}:{stamps[1]}"


class Request:
    """A hook request as the watcher reads it."""

    __slots__ = ("build", "cwd", "environment", "host", "payload")

    def __init__(
        self, build: str, host: str, cwd: str, environment: list[tuple[str, str]], payload: bytes
    ) -> None:
        self.build = build
        self.host = host
        self.cwd = cwd
        self.environment = environment
        self.payload = payload


def encode_request(
    host: str, payload: bytes, cwd: str, variables: Iterable[tuple[str, str]], build: str
) -> bytes:
    fields = [build, host, cwd, *(f"{name}={value}" for name, value in variables)]
    meta = "\0".join(fields).encode("utf-8", "surrogateescape")
    return b"%s %d %d\n%s%s" % (MAGIC, len(meta), len(payload), meta, payload)


def encode_answer(text: str) -> bytes:
    """An answer as it leaves sidelight, from the watcher to the hook and from the hook to its host:
    UTF-8 whatever the locale (every host reads its hook's output as UTF-8; an ASCII or Latin-1 stdout
    cannot hold the digest's dashes), a character UTF-8 cannot hold (a lone surrogate) as ``?``."""
    return text.encode("utf-8", "replace")


def decode_header(line: bytes) -> tuple[int, int]:
    """The meta's and the payload's lengths from a request's first line (``ValueError``: not one)."""
    parts = line.split()
    if len(parts) != 3 or parts[0] != MAGIC:
        raise ValueError("not a sidelight hook request")
    meta, payload = int(parts[1]), int(parts[2])
    if not (0 <= meta <= MAX_META and 0 <= payload <= MAX_PAYLOAD):
        raise ValueError("a hook request out of bounds")
    return meta, payload


def decode_request(meta: bytes, payload: bytes) -> Request:
    fields = meta.decode("utf-8", "surrogateescape").split("\0")
    if len(fields) < 3:
        raise ValueError("a hook request without its build, host and directory")
    variables = []
    for field in fields[3:]:
        name, equals, value = field.partition("=")
        if not equals:
            raise ValueError("a hook request with a malformed variable")
        variables.append((name, value))
    return Request(fields[0], fields[1], fields[2], sorted(variables), payload)


def short_address(path: str) -> tuple[str, int | None]:
    """An address ``bind``/``connect`` accept for the socket at ``path``, and the descriptor of its
    folder to close afterwards (``None``: the path itself fits)."""
    if len(os.fsencode(path)) <= MAX_ADDRESS:
        return path, None
    folder, name = os.path.split(path)
    fd = os.open(folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    return f"/proc/self/fd/{fd}/{name}", fd


#: Duration units (``90s``, ``30m``, ``250ms``), checked in this order (``ms`` before ``m`` and ``s``).
DURATION_UNITS = (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0), ("d", 86400.0))


def duration_seconds(text: str) -> float | None:
    """Seconds from ``90``, ``"90s"``, ``"30m"``, ``"8h"``, ``"1.5s"`` or ``"250ms"`` (``None``: not a
    duration). The one reading of a duration: :func:`sidelight.config.parse_duration` is this with
    its errors."""
    value = text.strip().lower()
    number, scale = value, 1.0
    for unit, seconds in DURATION_UNITS:
        if value.endswith(unit):
            number, scale = value[: -len(unit)], seconds
            break
    try:
        return float(number) * scale
    except ValueError:
        return None


def _timeout(env: Mapping[str, str]) -> float:
    text = env.get(TIMEOUT_VARIABLE, "")
    if not text.strip():
        return DEFAULT_TIMEOUT
    seconds = duration_seconds(text)
    # Not a duration, NaN, negative, or past a minute (inf overflowed the socket's timeout: the hook's
    # caller has no handler for OverflowError). The hook stays silent, so no error: the default.
    if seconds is None or not 0 <= seconds <= MAX_TIMEOUT:
        return DEFAULT_TIMEOUT
    return seconds


#: What :func:`read_own_file` calls the config file.
CONFIG = "the config file"


def config_file(env: Mapping[str, str], state_dir: str) -> str:
    """The config file: ``SIDELIGHT_CONFIG``, else ``config.toml`` in the state directory."""
    return env.get("SIDELIGHT_CONFIG") or os.path.join(state_dir, CONFIG_FILE)


def configured_state_dir(env: Mapping[str, str], data: Mapping[str, object]) -> str | None:
    """The state directory a config file's ``data`` sets (``None``: none, or ``SIDELIGHT_STATE_DIR``
    decides)."""
    if "state_dir" in data and "SIDELIGHT_STATE_DIR" not in env:
        return os.path.expanduser(str(data["state_dir"]))
    return None


# --- whose state: a folder in a shared place (/tmp) may have been made first by someone else --------------


def untrusted(found: os.stat_result) -> str | None:
    """Why a folder or file sidelight would use (``found``: its ``stat``) must not be used: it belongs to
    another user, or users other than its owner may write it; ``None``: it may be used. The one rule for
    the state directory, its socket, its config file and its caches: someone who made them first could
    read what a hook sends, answer in its place, or name the modules it imports."""
    if found.st_uid != os.geteuid():
        return f"belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o022:
        return f"can be written by other users (mode {stat.S_IMODE(found.st_mode):o})"
    return None


def state_dir_problem(path: str) -> str | None:
    """Why sidelight refuses the state directory ``path`` (:func:`untrusted`), as one line that says what
    to do; ``None``: it may be used, or it does not exist yet (sidelight makes it ``0700``). One
    ``stat``: every process checks it before it reads or writes anything there, and ``sidelight
    status`` says it (as a ``doctor`` would)."""
    try:
        found = os.stat(path)
    except OSError:
        return None  # nothing there yet, or nothing to judge: using it fails on its own
    reason = untrusted(found)
    if reason is None:
        return None
    if found.st_uid != os.geteuid():
        fix = "set SIDELIGHT_STATE_DIR to a folder of your own"
    else:
        fix = f"check what is in it, then chmod go-w {path}"
    return f"refusing the state directory {path}: it {reason}; {fix}"


def read_own_file(path: str, what: str) -> tuple[bytes | None, str | None]:
    """The bytes of ``what`` (``"the config file"``) at ``path``, and why sidelight refuses it, as one
    line that says what to do: ``(bytes, None)``; ``(None, None)``: there is none, or it is no regular
    file; ``(None, reason)``: it is refused (:func:`untrusted`, judged on the file opened, so what is
    read is what was judged). Raises :class:`OSError` when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return None, None  # a folder, a FIFO: none (as it always was)
        reason = untrusted(found)
        if reason is not None:
            if found.st_uid != os.geteuid():
                fix = "remove it, or use one of your own"
            else:
                fix = f"check it, then chmod go-w {path}"
            return None, f"refusing {what} {path}: it {reason}; {fix}"
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks), None
    finally:
        os.close(fd)


def failure_log_dir(env: Mapping[str, str]) -> str | None:
    """Where a hook that cannot load its settings says why: the state directory the environment names,
    or, when sidelight refuses that one (:func:`state_dir_problem`), the default one under ``HOME``;
    ``None``: that one is refused too."""
    state = default_state_dir(env)
    if state_dir_problem(state) is None:
        return state
    home = default_state_dir({"HOME": env.get("HOME") or os.path.expanduser("~")})
    if home != state and state_dir_problem(home) is None:
        return home
    return None


def _state_dir(env: Mapping[str, str]) -> tuple[str, bytes | None] | None:
    """The state directory as :meth:`sidelight.config.Settings.load` finds it (the rules above are its
    rules), and the config file's bytes; a config file is parsed only when it mentions ``state_dir``.
    ``None``: a state directory or config file sidelight refuses, or a config file that cannot be
    parsed: the hook runs in-process, which says why in its log."""
    state = default_state_dir(env)
    if state_dir_problem(state) is not None:
        return None
    try:
        text, refused = read_own_file(config_file(env, state), CONFIG)
    except OSError:
        return state, None
    if refused is not None:
        return None
    if text is None or b"state_dir" not in text or "SIDELIGHT_STATE_DIR" in env:
        return state, text
    data = _toml(text)
    if data is None:
        return None
    moved = configured_state_dir(env, data)
    if moved is not None and state_dir_problem(moved) is not None:
        return None
    return moved or state, text


def _toml(text: bytes) -> dict[str, object] | None:
    """A config file's settings (``None``: it cannot be parsed)."""
    import tomllib

    try:
        return tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _time_budget(env: Mapping[str, str], config: bytes | None) -> float:
    """The hook's own time budget, as :meth:`sidelight.config.Settings.load` reads it (a value it would
    refuse: the default, and the watcher declines anyway)."""
    given: object = env.get("SIDELIGHT_TIME_BUDGET")
    if given is None and config is not None and b"time_budget" in config:
        given = (_toml(config) or {}).get("time_budget")
    if given is None or isinstance(given, bool):
        return DEFAULT_TIME_BUDGET
    seconds = given if isinstance(given, int | float) else duration_seconds(str(given))
    if seconds is None or not 0 <= seconds < float("inf"):
        return DEFAULT_TIME_BUDGET
    return float(seconds)


def answer_wait(reply: bytes, env: Mapping[str, str], config: bytes | None = None) -> float:
    """How long to wait for an answer the watcher took (``reply``: its ``A <seconds>``): what it
    announced, at most what the hook's own time budget allows (its budget and the watcher's margin:
    a peer that says ``A 100`` does not hold a prompt for 100 s). ``ValueError``: no such reply
    (``A inf``, ``A nan``, ``A -1`` among them). The config file is parsed only for an announcement
    past the default budget's wait, when it sets ``time_budget``."""
    if not reply.startswith(b"A "):
        raise ValueError("not an acceptance")
    seconds = float(reply[2:])
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"not a time to wait: {reply[2:]!r}")
    limit = DEFAULT_TIME_BUDGET + WATCHER_MARGIN
    if seconds > limit and (env.get("SIDELIGHT_TIME_BUDGET") is not None or config is not None):
        limit = _time_budget(env, config) + WATCHER_MARGIN
    return min(seconds, limit)


def ask_watcher(
    host: str,
    payload: bytes,
    env: Mapping[str, str] | None = None,
    deliver: Callable[[str], bool] | None = None,
) -> str | None:
    """The watcher's answer to a hook (``""``: print nothing), or ``None`` when no watcher took it
    within the timeout (none runs, it is of another build or environment, it is busy, it failed, it
    said something else than the protocol): then the hook runs in-process. Never raises. ``deliver``
    writes the answer out and says whether it did; the watcher moves the cursors only once it did
    (without it: once the answer arrived).

    Nothing is sent to a socket that is not this user's: the state directory is not another user's nor
    writable by others (:func:`state_dir_problem`), the socket belongs to this user, and so does the
    process listening on it (``SO_PEERCRED``, where the platform says)."""
    env = os.environ if env is None else env
    if env.get(SWITCH_VARIABLE, "").strip().lower() in _OFF:
        return None
    try:
        found = _state_dir(env)
        if found is None:
            return None
        state, config = found
        path = os.path.join(state, HOOK_SOCKET)
        try:
            socket_file = os.lstat(path)
        except OSError:
            return None  # no watcher: nor the socket module, which a cold hook would import for nothing
        if not stat.S_ISSOCK(socket_file.st_mode) or socket_file.st_uid != os.geteuid():
            return None
        return _ask(path, host, payload, env, deliver, config)
    except Exception:  # OSError, a reply that is no number (ValueError, OverflowError)...: in-process
        return None


def _ask(
    path: str,
    host: str,
    payload: bytes,
    env: Mapping[str, str],
    deliver: Callable[[str], bool] | None = None,
    config: bytes | None = None,
) -> str | None:
    import _socket

    deadline = time.monotonic() + _timeout(env)
    address, folder = short_address(path)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            sock.connect(address)
        finally:
            if folder is not None:
                os.close(folder)
        peer = _peer_uid(sock)
        if peer is not None and peer != os.geteuid():
            return None  # another user's process listens there: it hears nothing
        sock.sendall(encode_request(host, payload, os.getcwd(), environment(env), build_id()))
        reader = Reader(sock)
        reply = reader.line(deadline)
        if not reply.startswith(b"A "):
            return None  # declined ("D <reason>"), or the connection closed
        answer_deadline = time.monotonic() + answer_wait(reply, env, config) + ANSWER_MARGIN
        sock.sendall(b"G")
        # From here on the watcher composes the answer; the cursors stay where they were until the hook
        # says it printed it. One that does not come in time, or not as the protocol says, is none:
        # the connection closes (the watcher moves nothing) and the hook answers itself.
        length = reader.line(answer_deadline)
        if not length.isdigit() or int(length) > MAX_ANSWER:
            return None
        answer = reader.exactly(int(length), answer_deadline).decode("utf-8")
        try:
            delivered = deliver is None or deliver(answer)
        except Exception:  # stdout closed (the host went away): not delivered, nothing moves
            return ""
        if delivered:
            try:  # noqa: SIM105 (contextlib would cost every prompt an import)
                sock.sendall(b"K")  # the watcher moves the cursors; the hook need not wait (see above)
            except OSError:
                pass  # printed all the same: not a second time in-process (the news comes again)
        return answer
    finally:
        sock.close()


def _peer_uid(sock: _socket.socket) -> int | None:
    """The user id of the process listening at the other end of ``sock`` (``None``: the platform does
    not say; the socket file's owner was checked)."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is not None:  # Linux: struct ucred {pid, uid, gid}
        credentials = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
        return int.from_bytes(credentials[4:8], sys.byteorder)
    option = getattr(_socket, "LOCAL_PEERCRED", None)
    if option is not None:  # macOS, the BSDs: struct xucred {version, uid, ...} at SOL_LOCAL (0)
        credentials = sock.getsockopt(0, option, 76)
        return int.from_bytes(credentials[4:8], sys.byteorder)
    return None


class Reader:
    """Lines and counted bytes from a socket, each read before a deadline (both sides use it)."""

    __slots__ = ("buffer", "sock")

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def _more(self, deadline: float) -> bool:
        self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = self.sock.recv(1 << 16)
        self.buffer += chunk
        return bool(chunk)

    def line(self, deadline: float, limit: int = MAX_HEADER) -> bytes:
        """Bytes up to a newline (without it); ``b""`` when the peer closed first."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line
            if len(self.buffer) > limit:
                raise ValueError("an over-long line on the hook socket")
            if not self._more(deadline):
                return b""

    def exactly(self, length: int, deadline: float) -> bytes:
        """``length`` bytes (``ValueError`` when the peer closes first)."""
        while len(self.buffer) < length:
            if not self._more(deadline):
                raise ValueError("the hook socket closed mid-message")
        data = bytes(self.buffer[:length])
        del self.buffer[:length]
        return data
