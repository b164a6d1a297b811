"""A throwaway PostgreSQL cluster for the tests: ``initdb`` + ``pg_ctl`` on a private temp directory.

PostgreSQL refuses to run as root, and CI runs as root: there the server's commands run as the
Debian package's ``postgres`` user (``runuser -u postgres --``) on a directory owned by it; anyone
else runs them as themselves. The server listens on a unix socket in that directory only (no TCP,
so nothing on the host can collide with it or reach it) with trust authentication, and with
``fsync`` off: a test cluster has no data worth a flush, and ``CREATE DATABASE`` per test stays
cheap.

Not pytest-postgresql: its ``postgresql_proc`` runs ``initdb``/``pg_ctl`` as the current user and
has no way to run them as another one, so under root (CI) it cannot start a server at all. This is
the small part of it we need, with that one difference.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

SERVER_USER = "postgres"
INSTALL_HINT = "install the Debian 'postgresql' package (as root, `bash .ci/components.sh` does)"


def find_bindir(path: str | None = None) -> Path | None:
    """The directory of ``initdb``/``pg_ctl``: on PATH, else Debian's newest ``/usr/lib/postgresql/N/bin``."""
    found = shutil.which("initdb", path=path)
    if found is not None and shutil.which("pg_ctl", path=path) is not None:
        return Path(found).parent
    versions = []
    for candidate in Path("/usr/lib/postgresql").glob("*/bin"):
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            try:
                versions.append((int(candidate.parent.name), candidate))
            except ValueError:
                continue
    return max(versions)[1] if versions else None


def missing_server(reason: str, env: Mapping[str, str]) -> tuple[str, str]:
    """What a test does without a server: ``("skip", why)``, or ``("fail", why)`` under ``CI=true``.

    CI must exercise the PostgreSQL store (``.ci/run`` installs the server first), so there a missing
    server is a broken setup, not a reason to pass quietly."""
    if env.get("CI", "").lower() == "true":
        return "fail", f"{reason} (CI=true: the PostgreSQL tests must run in CI; {INSTALL_HINT})"
    return "skip", f"{reason}: {INSTALL_HINT}"


def _free_port() -> int:
    # Only names the socket file (no TCP listener), but a free port keeps a later TCP setup honest.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PgServer:
    bindir: Path
    root: Path
    port: int
    as_user: str | None
    """Run the server's commands as this user (``runuser``), or None: as ourselves."""

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def conninfo(self, dbname: str = "postgres") -> str:
        return f"host={self.socket_dir} port={self.port} user={SERVER_USER} dbname={dbname}"

    def url(self, dbname: str = "postgres") -> str:
        """The same as a ``postgresql://`` URL (a unix socket host goes percent-encoded in the host)."""
        return f"postgresql://{SERVER_USER}@{quote(str(self.socket_dir), safe='')}:{self.port}/{dbname}"

    def _command(self, *argv: str) -> list[str]:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        return command if self.as_user is None else ["runuser", "-u", self.as_user, "--", *command]

    def _run(self, *argv: str) -> None:
        done = subprocess.run(self._command(*argv), capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr.strip()}\n{tail}"
            )

    def start(self) -> None:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SERVER_USER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        settings = {
            "listen_addresses": "''",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.socket_dir}'",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "100",
        }
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "60", "start"
        )

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is cut off, the data stays (the fault tests)."""
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-m", "fast", "-w", "-t", "60", "restart")

    def halt(self) -> None:
        """``pg_ctl stop -m fast``, keeping the data: the server is away until ``resume``."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def resume(self) -> None:
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", "60", "start")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start_server(bindir: Path) -> PgServer:
    """Start a cluster on a fresh temp directory; ``RuntimeError`` naming the step that failed."""
    as_user: str | None = None
    root = Path(tempfile.mkdtemp(prefix="lanecheck-pg-"))
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(
                f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as"
            ) from None
        if shutil.which("runuser") is None:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError("running as root and no `runuser` to run PostgreSQL as another user")
        as_user = SERVER_USER
        os.chown(root, owner.pw_uid, owner.pw_gid)
    (root / "sock").mkdir()
    if as_user is not None:
        owner = pwd.getpwnam(as_user)
        os.chown(root / "sock", owner.pw_uid, owner.pw_gid)
    server = PgServer(bindir, root, _free_port(), as_user)
    try:
        server.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return server
