"""Real parts for the org index's tests: real git clones holding committed memory trees, and a
throwaway PostgreSQL cluster per test module with a fresh database per test (fixtures: import
`postgres_cluster` and `postgres_database` into a test module or conftest).

The cluster is Debian's `postgresql` server (`.ci/run` installs it): `initdb` and `pg_ctl` run
as the `postgres` system user when the tests run as root (root cannot run initdb), in a temp
dir that user owns, listening on a free port of 127.0.0.1 only, and the cluster is stopped and
removed after the module. Without the server binaries the PostgreSQL tests skip, saying why.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import entry_file, git
from teamlore.ops.org.stores import close_stores


def commit_memory(clone: Path, entries: dict[str, str | None], message: str = "memory") -> None:
    """Write (or, for None, delete) entries in the clone's memory tree and commit them."""
    folder = clone / ".threadshare/memory/entries"
    folder.mkdir(parents=True, exist_ok=True)
    for entry_id, body in entries.items():
        path = folder / f"{entry_id}.md"
        if body is None:
            path.unlink()
        else:
            path.write_text(entry_file(entry_id, body), encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", message)


def make_clone(root: Path, name: str, entries: dict[str, str | None]) -> Path:
    clone = root / name
    clone.mkdir(parents=True)
    git(clone, "init", "-q")
    git(clone, "remote", "add", "origin", f"https://github.com/acme/{name}.git")
    commit_memory(clone, entries)
    return clone


# --------------------------------------------------------------------------------------------
# PostgreSQL


def server_binaries() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Cluster:
    port: int
    start_command: tuple[str, ...] = ()  # pg_ctl … start, as the server's user
    stop_command: tuple[str, ...] = ()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """The server goes down (a fast shutdown: every connection is cut), data kept."""
        stop = [*self.stop_command, "-m", "fast", "stop"]
        subprocess.run(stop, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        """The same server back on the same port (`pg_ctl -w`: it accepts connections)."""
        subprocess.run([*self.start_command, "start"], check=True, capture_output=True, timeout=120)

    def admin(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]


def as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


class ClusterUnavailable(Exception):
    """Why no throwaway cluster can be started here."""


@contextlib.contextmanager
def throwaway_cluster(*, fsync: bool = False) -> Iterator[Cluster]:
    """initdb + pg_ctl (as `postgres` when root) in a temp dir, on a free port of 127.0.0.1;
    stopped and removed on exit. Raises ClusterUnavailable without the server binaries."""
    binaries = server_binaries()
    if binaries is None:
        raise ClusterUnavailable(
            "PostgreSQL server binaries (initdb, pg_ctl) are not installed: "
            "apt-get install postgresql (.ci/run does)"
        )
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        raise ClusterUnavailable("running as root without runuser: cannot run initdb as postgres")
    work = Path(tempfile.mkdtemp(prefix="teamlore-pg-"))
    if os.geteuid() == 0:
        shutil.chown(work, user="postgres", group="postgres")
    data, port = work / "data", free_port()
    initdb = [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
    initdb += ["-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
    subprocess.run(as_server_user(initdb), check=True, capture_output=True, timeout=120)
    options = (
        f"-p {port} -k {work} -c listen_addresses=127.0.0.1 -c fsync={'on' if fsync else 'off'}"
    )
    pg_ctl = str(binaries / "pg_ctl")
    start = [pg_ctl, "-D", str(data), "-l", str(work / "log"), "-o", options, "-w", "-t", "60"]
    subprocess.run(as_server_user([*start, "start"]), check=True, capture_output=True, timeout=120)
    try:
        yield Cluster(
            port, tuple(as_server_user(start)), tuple(as_server_user([pg_ctl, "-D", str(data)]))
        )
    finally:
        close_stores()
        stop = [pg_ctl, "-D", str(data), "-m", "immediate", "stop"]
        subprocess.run(as_server_user(stop), capture_output=True, timeout=120)
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_cluster() -> Iterator[Cluster]:
    try:
        with throwaway_cluster() as cluster:
            yield cluster
    except ClusterUnavailable as why:
        pytest.skip(str(why))


@pytest.fixture()
def postgres_database(postgres_cluster: Cluster) -> Iterator[str]:
    """A fresh database of the module's cluster, dropped after the test."""
    name = f"org_{uuid.uuid4().hex[:12]}"
    postgres_cluster.admin(f"CREATE DATABASE {name}")
    try:
        yield postgres_cluster.url(name)
    finally:
        close_stores()
        with contextlib.suppress(Exception):
            postgres_cluster.admin(f"DROP DATABASE {name} WITH (FORCE)")
