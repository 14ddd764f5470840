"""A small Redis client for the hooks' reads of the fleet stream (``XREVRANGE``, ``XREAD``).

A prompt hook reads the fleet's stream within its time budget. The ``redis`` package costs about 170 ms
to import, more than a whole hook without a fleet; this client costs a socket. It speaks RESP2 over
TCP, TLS or a Unix socket, authenticates and selects a database from the same URLs as ``redis``:

    redis://[[user]:password@]host[:port][/db]
    rediss://...?ssl_ca_certs=/ca.pem&ssl_certfile=/c.pem&ssl_keyfile=/k.pem&ssl_cert_reqs=required
    unix:///path/redis.sock?db=0&password=...

Replies have the shapes ``redis-py`` gives (bytes; stream entries as ``(id, {field: value})``).
Every failure is an :class:`OSError`: :class:`RespError` for an error reply, :class:`TimeoutError` for
a server that does not answer within ``timeout`` seconds. The watcher's publisher, which pipelines
writes, uses the ``redis`` package.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["RespClient", "RespError"]

#: Stream entries: ``(id, {field: value})``.
Entry = tuple[bytes, dict[bytes, bytes]]


class RespError(ConnectionError):
    """Redis answered with an error (a wrong password, an unknown command, a wrong type)."""


class RespClient:
    """One connection; connects on the first command. Use as a context manager, or :meth:`close`."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buffer = b""

    def __enter__(self) -> RespClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        sock, self._sock = self._sock, None
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
        """Sends one command and returns its reply."""
        if self._sock is None:
            self._connect()
        self._send(args)
        return self._reply()

    # -- the connection ----------------------------------------------------------------------------

    def _connect(self) -> None:
        parts = urlsplit(self.url)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if parts.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(unquote(parts.path))
            except BaseException:
                sock.close()
                raise
        elif parts.scheme in ("redis", "rediss"):
            sock = socket.create_connection((parts.hostname or "localhost", parts.port or 6379), self.timeout)
            sock.settimeout(self.timeout)
            if parts.scheme == "rediss":
                sock = _wrap_tls(sock, parts.hostname or "localhost", query)
        else:
            raise RespError(f"not a Redis URL: {parts.scheme or '(no scheme)'}://")
        self._sock, self._buffer = sock, b""
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
        self._sock.sendall(b"".join(out))

    def _line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 2 :]
                return line
            self._fill()

    def _exactly(self, size: int) -> bytes:
        while len(self._buffer) < size + 2:
            self._fill()
        data, self._buffer = self._buffer[:size], self._buffer[size + 2 :]
        return data

    def _fill(self) -> None:
        assert self._sock is not None
        chunk = self._sock.recv(65536)
        if not chunk:
            raise ConnectionError("Redis closed the connection")
        self._buffer += chunk

    def _reply(self) -> Any:
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
            return None if size < 0 else [self._reply() for _ in range(size)]
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
