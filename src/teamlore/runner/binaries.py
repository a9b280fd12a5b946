"""Which runner CLI binary would run, and its identity (docs/runner.md, "Conformance").

A binary's identity is its resolved path's file content digest (sha256) plus size, and the
version it reports. Both go into every plan (through the runner profile digest) and into the
conformance record's fingerprint, so a replaced or upgraded CLI voids pending plans and needs a
fresh `memory reverify-runner`. Hashing a 400 MB native binary takes a second or two, so the
digest is cached in the state dir keyed by (path, device, inode, size, mtime, ctime).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.core.paths import read_private_file, resolve_home, write_private_file

CACHE_FILE = "runner-binaries.json"
VERSION_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class BinaryIdentity:
    name: str
    path: Path
    sha256: str
    size: int
    version: str

    def to_json(self) -> dict[str, Any]:
        """What plans and conformance records carry (the file name, never the absolute path)."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "size": self.size,
            "version": self.version,
        }

    @property
    def fingerprint(self) -> str:
        return digest(self.to_json())


def resolve_binary(command: str, *, env_var: str, environ: Mapping[str, str]) -> Path:
    """The runner CLI: `$<env_var>` if set, else `command` on PATH; RUNNER_BINARY_NOT_FOUND."""
    chosen = environ.get(env_var) or command
    found = shutil.which(chosen, path=environ.get("PATH"))
    if found is None:
        where = f"${env_var}" if environ.get(env_var) else "PATH"
        raise errors.TeamloreError(
            errors.RUNNER_BINARY_NOT_FOUND,
            f"{Path(chosen).name} was not found or is not executable ({where})",
            binary=Path(chosen).name,
        )
    return Path(found).resolve()


def _file_sha256(path: Path, home: Path | None) -> tuple[str, int]:
    stat = path.stat()
    key = digest(
        [
            str(v)
            for v in (
                path,
                stat.st_dev,
                stat.st_ino,
                stat.st_size,
                stat.st_mtime_ns,
                stat.st_ctime_ns,
            )
        ]
    )
    cache_path = resolve_home(home) / CACHE_FILE
    cache: dict[str, str] = {}
    try:
        loaded = orjson.loads(read_private_file(cache_path))
        if isinstance(loaded, dict):
            cache = {str(k): str(v) for k, v in loaded.items()}
    except (OSError, orjson.JSONDecodeError):
        cache = {}
    if key in cache:
        return cache[key], stat.st_size
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    cache = {key: sha.hexdigest(), **dict(list(cache.items())[:31])}
    write_private_file(cache_path, orjson.dumps(cache))
    return sha.hexdigest(), stat.st_size


def probe_version(path: Path, env: Mapping[str, str], cwd: Path) -> str:
    """`<binary> --version`, first line; RUNNER_VERSION_PROBE_FAILED when it cannot say."""
    try:
        done = subprocess.run(
            [str(path), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=dict(env),
            cwd=cwd,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise errors.TeamloreError(
            errors.RUNNER_VERSION_PROBE_FAILED, f"{path.name} --version did not answer in time"
        ) from None
    except OSError as exc:
        raise errors.TeamloreError(
            errors.RUNNER_BINARY_NOT_FOUND, f"cannot execute {path.name} ({exc.strerror})"
        ) from None
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    if done.returncode != 0 or not lines or len(lines[0]) > 200:
        raise errors.TeamloreError(
            errors.RUNNER_VERSION_PROBE_FAILED,
            f"{path.name} --version exited {done.returncode} without a version line",
        )
    return lines[0].strip()


def identify(path: Path, *, env: Mapping[str, str], cwd: Path, home: Path | None) -> BinaryIdentity:
    if not os.access(path, os.X_OK):
        raise errors.TeamloreError(
            errors.RUNNER_BINARY_NOT_FOUND, f"{path.name} is not executable", binary=path.name
        )
    sha, size = _file_sha256(path, home)
    version = probe_version(path, env, cwd)
    return BinaryIdentity(path.name, path, sha, size, version)
