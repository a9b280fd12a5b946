"""Fixtures of the org index's tests: a throwaway PostgreSQL cluster per test module
(org_support.py says how it is started), a fresh database per test, and the backend matrix."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from org_support import Cluster, as_server_user, free_port, server_binaries

from teamlore.ops.org.stores import close_stores

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="module")
def postgres_cluster() -> Iterator[Cluster]:
    binaries = server_binaries()
    if binaries is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl) are not installed: "
            "apt-get install postgresql (.ci/run does)"
        )
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start initdb as postgres")
    work = Path(tempfile.mkdtemp(prefix="teamlore-pg-"))
    if os.geteuid() == 0:
        shutil.chown(work, user="postgres", group="postgres")
    data, port = work / "data", free_port()
    subprocess.run(
        as_server_user(
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    options = f"-p {port} -k {work} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        as_server_user(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(work / "log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        yield Cluster(port)
    finally:
        close_stores()
        subprocess.run(
            as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(work, ignore_errors=True)


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


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, home: Path) -> Iterator[str | None]:
    """None (the embedded index under `home`), then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        close_stores()
        return
    yield request.getfixturevalue("postgres_database")
