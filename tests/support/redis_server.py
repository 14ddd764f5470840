"""A real Redis server for the fleet tests and benchmarks: Debian's ``redis-server`` on a free loopback
port, in a temporary folder, started and stopped by the test that needs it.

The server is required: without ``redis-server`` (``make redis-server`` installs it) or the ``redis``
client, the fleet tests *fail* with a line that says what to install. They are skipped only when
``SIDELIGHT_SKIP_REDIS=1`` is set on purpose, so that CI can never pass by not running them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

#: Set to 1 to skip the tests that need a Redis server (they fail without one otherwise).
SKIP_VARIABLE = "SIDELIGHT_SKIP_REDIS"
#: Read at import: the tests' throwaway-HOME fixture clears ``SIDELIGHT_*`` variables.
SKIP = os.environ.get(SKIP_VARIABLE) == "1"
START_TIMEOUT = 20.0


def require_redis() -> str:
    """The ``redis-server`` executable; fails (or skips, with ``SIDELIGHT_SKIP_REDIS=1``) without it
    or without the ``redis`` client."""
    why = None
    server = shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).is_file()), None
    )
    if server is None:
        why = "redis-server is not installed (make redis-server, or apt-get install redis-server)"
    else:
        try:
            import redis  # noqa: F401
        except ImportError:
            why = "the redis client is not installed (pip install -e '.[test]')"
    if why is not None:
        if SKIP:
            pytest.skip(f"{why}; skipped because {SKIP_VARIABLE}=1")
        pytest.fail(f"{why}; set {SKIP_VARIABLE}=1 to skip the fleet tests on purpose", pytrace=False)
    assert server is not None
    return server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """``redis-server`` on ``127.0.0.1:port`` with its files in ``directory``.

    ``persistent=True`` turns the append-only file on with an fsync per write (a restart keeps every
    acknowledged write); otherwise nothing is saved. ``password`` requires AUTH. ``tls`` is
    ``(cert, key, ca)``: the port speaks TLS only.
    """

    def __init__(
        self,
        directory: Path,
        *,
        port: int | None = None,
        persistent: bool = False,
        password: str | None = None,
        tls: tuple[Path, Path, Path] | None = None,
    ) -> None:
        self.executable = require_redis()
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.persistent = persistent
        self.password = password
        self.tls = tls
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        scheme = "rediss" if self.tls else "redis"
        auth = f":{self.password}@" if self.password else ""
        url = f"{scheme}://{auth}127.0.0.1:{self.port}/0"
        if self.tls:
            url += f"?ssl_ca_certs={self.tls[2]}"
        return url

    def command(self) -> list[str]:
        args = [self.executable, "--bind", "127.0.0.1", "--dir", str(self.directory), "--save", ""]
        args += ["--daemonize", "no", "--loglevel", "warning", "--logfile", str(self.directory / "redis.log")]
        if self.tls:
            cert, key, ca = self.tls
            args += ["--port", "0", "--tls-port", str(self.port), "--tls-auth-clients", "no"]
            args += ["--tls-cert-file", str(cert), "--tls-key-file", str(key), "--tls-ca-cert-file", str(ca)]
        else:
            args += ["--port", str(self.port)]
        if self.persistent:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        if self.password:
            args += ["--requirepass", self.password]
        return args

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + START_TIMEOUT
        while not self.ping():
            if self.process.poll() is not None:
                _out, err = self.process.communicate()
                log = self.directory / "redis.log"
                detail = err.decode(errors="replace") + (
                    log.read_text(errors="replace") if log.exists() else ""
                )
                pytest.fail(f"redis-server exited with {self.process.returncode}: {detail.strip()}")
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"redis-server did not answer on port {self.port} within {START_TIMEOUT:.0f}s")
            time.sleep(0.02)
        return self

    def client(self) -> Any:
        """A ``redis.Redis`` client of this server."""
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5)

    def ping(self) -> bool:
        try:
            client = self.client()
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:
            return False

    def kill(self) -> None:
        """Stops the server at once (SIGKILL: a crash, not a clean shutdown)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.communicate(timeout=START_TIMEOUT)
        self.process = None

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL after a while)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.communicate(timeout=START_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def restart(self) -> None:
        """A crash (SIGKILL) and a start on the same port."""
        self.kill()
        self.start()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def make_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1, made with ``openssl``: ``(cert, key, ca)``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / "ca.key", directory / "ca.crt"
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.crt"
    ext = directory / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n", encoding="utf-8")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=sidelight-test-ca",
        "-keyout", str(ca_key), "-out", str(ca))  # fmt: skip
    run(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        str(key),
        "-out",
        str(csr),
    )
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
        "-days", "1", "-extfile", str(ext), "-out", str(cert))  # fmt: skip
    return cert, key, ca
