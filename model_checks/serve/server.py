"""Binding the port and running the app on uvicorn: in the foreground (the command) or in a
thread (tests, screenshots)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from model_checks.serve.app import create_app


class CannotListen(OSError):
    """The address cannot be listened on (port taken or not ours, host unknown): the message names
    it, ``option`` the command-line option at fault."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option

    def __str__(self) -> str:
        return str(self.args[0])


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), bound before the server starts so a
    taken port is refused up front, not logged by uvicorn after start-up."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as problem:
        raise CannotListen(f"cannot resolve host {host!r}: {problem.strerror}", "--host") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as problem:
        sock.close()
        raise CannotListen(f"cannot listen on {host} port {port}: {problem.strerror}", "--port") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def _server(sock: socket.socket, quiet: bool) -> uvicorn.Server:
    config = uvicorn.Config(create_app(), log_level="warning" if quiet else "info", lifespan="off")
    return uvicorn.Server(config)


def serve_forever(sock: socket.socket, quiet: bool = False) -> None:
    """Run until interrupted (Ctrl-C)."""
    _server(sock, quiet).run(sockets=[sock])


@contextmanager
def running(host: str = "127.0.0.1", port: int = 0, timeout: float = 20.0) -> Iterator[str]:
    """The app served in a background thread for the ``with`` block; yields its base URL."""
    sock = bind(host, port)
    server = _server(sock, quiet=True)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"the explorer did not start within {timeout} s")
        time.sleep(0.02)
    try:
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
