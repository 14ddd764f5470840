"""A small Redis client for the hooks' reads of the fleet stream (``XREVRANGE``, ``XREAD``).

A prompt hook reads the fleet's stream within its time budget. The ``redis`` package costs about 170 ms
to import, more than a whole hook without a fleet; this client costs a socket. It speaks RESP2 over
TCP, TLS or a Unix socket, authenticates and selects a database from the same URLs as ``redis``:

    redis://[[user]:password@]host[:port][/db]
    rediss://...?ssl_ca_certs=/ca.pem&ssl_certfile=/c.pem&ssl_keyfile=/k.pem&ssl_cert_reqs=required
    unix:///path/redis.sock?db=0&password=...

Replies have the shapes ``redis-py`` gives (bytes; stream entries as ``(id, {field: value})``).
Every failure is an :class:`OSError`: :class:`RespError` for an error reply, :class:`ReplyTooLargeError`
for a reply past the client's caps, :class:`TimeoutError` for a server that does not answer in time.
The watcher's publisher, which pipelines writes, uses the ``redis`` package.

A hook cannot trust the server: a Redis that trickles its reply a byte at a time, announces a 300 MB
string or an endless array must cost it a bounded time and memory. So ``deadline`` (a
``time.monotonic()`` moment) bounds the whole conversation, connect, send and every ``recv`` (each
waits at most what is left, and at most ``timeout``); a reply may hold at most ``max_bytes`` bytes of
strings and ``max_items`` array elements, nested at most :data:`MAX_DEPTH` deep; a single string longer
than ``max_string`` is read past and thrown away (its bytes are never kept), and stands in the reply as
:data:`TOO_LARGE`. The reply buffer is one ``bytearray`` read through an offset: no copy of the
buffer per ``recv`` or per line.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import parse_qs, unquote, urlsplit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

__all__ = [
    "MAX_BYTES",
    "MAX_ITEMS",
    "MAX_STRING",
    "TOO_LARGE",
    "ReplyTooLargeError",
    "RespClient",
    "RespError",
]

#: Bytes of strings one reply may hold (what the client keeps in memory for it).
MAX_BYTES: Final = 8 * 1024 * 1024
#: Array elements one reply may hold, all levels together.
MAX_ITEMS: Final = 200_000
#: A string longer than this is read past, not kept (:data:`TOO_LARGE` stands in for it).
MAX_STRING: Final = 1024 * 1024
#: How deep arrays may nest (a stream reply nests four deep).
MAX_DEPTH: Final = 16
#: A status or number line longer than this is no RESP reply.
MAX_LINE: Final = 4096
#: What :meth:`RespClient.command` returns in place of a string longer than ``max_string``.
TOO_LARGE: Final = b"\x00sidelight: string too large\x00"

#: Stream entries: ``(id, {field: value})``.
Entry = tuple[bytes, dict[bytes, bytes]]


class RespError(ConnectionError):
    """Redis answered with an error (a wrong password, an unknown command, a wrong type)."""


class ReplyTooLargeError(ConnectionError):
    """A reply past the client's caps (bytes, elements, nesting): the connection is closed, as the rest
    of the reply was not read."""


class RespClient:
    """One connection; connects on the first command. Use as a context manager, or :meth:`close`.

    ``timeout``: the longest wait for any one step (connecting, each ``recv``); ``deadline``: a
    ``time.monotonic()`` moment by which everything must be done (``None``: no overall bound), past which
    every call raises :class:`TimeoutError`; ``max_bytes``, ``max_items``, ``max_string``: the caps of
    one reply (see the module docs)."""

    def __init__(
        self,
        url: str,
        timeout: float,
        *,
        deadline: float | None = None,
        max_bytes: int = MAX_BYTES,
        max_items: int = MAX_ITEMS,
        max_string: int = MAX_STRING,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.max_items = max_items
        self.max_string = max_string
        self._sock: socket.socket | None = None
        self._buffer = bytearray()
        self._pos = 0  # where the unread part of _buffer starts
        self._bytes_left = max_bytes
        self._items_left = max_items

    def __enter__(self) -> RespClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        self._buffer, self._pos = bytearray(), 0
        if sock is not None:
            sock.close()

    # -- commands ----------------------------------------------------------------------------------

    def xrevrange(self, stream: str, max: str = "+", min: str = "-", count: int | None = None) -> list[Entry]:
        args = ["XREVRANGE", stream, max, min] + ([] if count is None else ["COUNT", str(count)])
        return [_entry(item) for item in self.command(*args) or ()]

    def xread(self, streams: Mapping[str, str], count: int | None = None) -> list[list[Any]] | None:
        """``[[stream, [entry, ...]], ...]``, or ``None`` when nothing is newer (no blocking)."""
        args = ["XREAD"] + ([] if count is None else ["COUNT", str(count)])
        args += ["STREAMS", *streams, *streams.values()]
        reply = self.command(*args)
        if reply is None:
            return None
        return [[name, [_entry(item) for item in entries or ()]] for name, entries in reply]

    def command(self, *args: str | bytes) -> Any:
        """Sends one command and returns its reply. After a failure the connection is closed (the next
        command opens another): what is left of a reply in flight is never taken for the next one."""
        if self._sock is None:
            self._connect()
        self._bytes_left, self._items_left = self.max_bytes, self.max_items
        try:
            self._send(args)
            return self._reply(0)
        except BaseException:
            self.close()
            raise

    def _wait(self) -> float:
        """How long the next step may wait: ``timeout``, or less when the deadline is nearer. Raises
        :class:`TimeoutError` when the deadline has passed."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("Redis did not answer within the fleet read's deadline")
        return min(self.timeout, left)

    # -- the connection ----------------------------------------------------------------------------

    def _connect(self) -> None:
        parts = urlsplit(self.url)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if parts.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self._wait())
            try:
                sock.connect(unquote(parts.path))
            except BaseException:
                sock.close()
                raise
        elif parts.scheme in ("redis", "rediss"):
            wait = self._wait()
            sock = socket.create_connection((parts.hostname or "localhost", parts.port or 6379), wait)
            sock.settimeout(self._wait())
            if parts.scheme == "rediss":
                sock = _wrap_tls(sock, parts.hostname or "localhost", query)
        else:
            raise RespError(f"not a Redis URL: {parts.scheme or '(no scheme)'}://")
        self._sock, self._buffer, self._pos = sock, bytearray(), 0
        username = unquote(parts.username) if parts.username else query.get("username")
        password = unquote(parts.password) if parts.password else query.get("password")
        try:
            if password:
                self.command(*(["AUTH", username] if username else ["AUTH"]), password)
            db = parts.path.strip("/") if parts.scheme != "unix" else query.get("db", "")
            if db and db != "0":
                self.command("SELECT", db)
        except BaseException:
            self.close()
            raise

    def _send(self, args: tuple[str | bytes, ...]) -> None:
        assert self._sock is not None
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg.encode() if isinstance(arg, str) else arg
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self._sock.settimeout(self._wait())
        self._sock.sendall(b"".join(out))

    def _line(self) -> bytes:
        scanned = 0  # unread bytes already searched (counted from _pos: _fill may move the buffer)
        while True:
            end = self._buffer.find(b"\r\n", self._pos + scanned)
            if end >= 0:
                line = bytes(self._buffer[self._pos : end])
                self._pos = end + 2
                return line
            unread = len(self._buffer) - self._pos
            if unread > MAX_LINE:
                raise ReplyTooLargeError(f"a RESP line longer than {MAX_LINE} bytes")
            scanned = max(0, unread - 1)  # the \r may be the last byte so far
            self._fill()

    def _exactly(self, size: int) -> bytes:
        if size > self.max_string:
            self._skip(size + 2)
            return TOO_LARGE
        self._bytes_left -= size
        if self._bytes_left < 0:
            raise ReplyTooLargeError(f"a reply larger than {self.max_bytes} bytes")
        while len(self._buffer) - self._pos < size + 2:
            self._fill()
        data = bytes(self._buffer[self._pos : self._pos + size])
        self._pos += size + 2
        return data

    def _skip(self, size: int) -> None:
        """Reads past ``size`` bytes without keeping them (at most one ``recv`` of them at a time)."""
        while True:
            available = len(self._buffer) - self._pos
            if available >= size:
                self._pos += size
                return
            size -= available
            self._buffer, self._pos = bytearray(), 0
            self._fill()

    def _fill(self) -> None:
        assert self._sock is not None
        if self._pos and self._pos >= len(self._buffer) // 2:
            del self._buffer[: self._pos]  # drop what was read: the buffer holds one unread stretch
            self._pos = 0
        self._sock.settimeout(self._wait())
        chunk = self._sock.recv(65536)
        if not chunk:
            raise ConnectionError("Redis closed the connection")
        self._buffer += chunk

    def _reply(self, depth: int) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RespError(rest.decode("utf-8", "replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self._exactly(size)
        if kind == b"*":
            size = int(rest)
            if size < 0:
                return None
            self._items_left -= size
            if self._items_left < 0:
                raise ReplyTooLargeError(f"a reply of more than {self.max_items} elements")
            if depth >= MAX_DEPTH:
                raise ReplyTooLargeError(f"a reply nested deeper than {MAX_DEPTH} arrays")
            return [self._reply(depth + 1) for _ in range(size)]
        raise ConnectionError(f"not a RESP reply: {line[:40]!r}")


def _entry(item: Any) -> Entry:
    entry_id, flat = item
    flat = flat or []
    return entry_id, dict(zip(flat[::2], flat[1::2], strict=True))


def _wrap_tls(sock: socket.socket, host: str, query: Mapping[str, str]) -> socket.socket:
    import ssl

    context = ssl.create_default_context(cafile=query.get("ssl_ca_certs"))
    if query.get("ssl_certfile"):
        context.load_cert_chain(query["ssl_certfile"], query.get("ssl_keyfile"))
    requirement = query.get("ssl_cert_reqs", "required").lower()
    if requirement in ("none", "optional"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE if requirement == "none" else ssl.CERT_OPTIONAL
    elif query.get("ssl_check_hostname", "true").lower() in ("false", "0", "no"):
        context.check_hostname = False
    try:
        return context.wrap_socket(sock, server_hostname=host)
    except BaseException:
        sock.close()
        raise
