"""A damaged origin secret is refused with recovery steps, never silently replaced.

Every key (repositoryKey, worktreeKey, sessionKey, evidence ids) derives from the secret; a new
one would register the worktree twice and void confirmations and plans. Real `teamlore`
processes against a real git repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import git, teamlore_cli
from teamlore.core import keys


def _register(home: Path, repo: Path) -> tuple[int, dict[str, Any]]:
    empty = repo.parent / "no-sessions"  # a source must be there (SOURCE_NOT_FOUND): an empty one
    empty.mkdir(exist_ok=True)
    done = teamlore_cli(
        "sync",
        "--repository",
        str(repo),
        "--source",
        f"codex={empty}",
        "--format",
        "json",
        env={"TEAMLORE_HOME": str(home)},
    )
    return done.returncode, json.loads(done.stdout or "{}")


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, bytes]:
    root = tmp_path_factory.mktemp("secret")
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    home = root / "home"
    rc, out = _register(home, repo)
    assert rc == 0, out
    return home, repo, out["repository"]["repositoryKey"], (home / "secret").read_bytes()


DAMAGE = st.one_of(
    # (a cut at exactly SECRET_BYTES leaves the whole secret: the first format, same keys)
    st.integers(min_value=0, max_value=keys.SECRET_FILE_BYTES - 1)
    .filter(lambda n: n != keys.SECRET_BYTES)
    .map(lambda n: ("cut", n)),
    st.tuples(
        st.just("flip"),
        st.integers(min_value=0, max_value=keys.SECRET_FILE_BYTES - 1),
        st.integers(min_value=1, max_value=255),
    ),
    st.binary(min_size=1, max_size=200).map(lambda b: ("append", b)),
)


def _damaged(good: bytes, damage: tuple[Any, ...]) -> bytes:
    if damage[0] == "cut":
        return good[: damage[1]]
    if damage[0] == "flip":
        data = bytearray(good)
        data[damage[1]] ^= damage[2]
        return bytes(data)
    return good + damage[1]


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(damage=DAMAGE)
def test_a_damaged_secret_is_refused_and_never_replaced(
    registered: tuple[Path, Path, str, bytes], damage: tuple[Any, ...]
) -> None:
    home, repo, key, good = registered
    secret, config = home / "secret", home / "config.toml"
    config_before = config.read_bytes()
    secret.write_bytes(_damaged(good, damage))
    broken = secret.read_bytes()
    try:
        rc, out = _register(home, repo)
        assert rc == 1 and out["error"]["code"] == "SECRET_DAMAGED", out
        assert "backup" in out["error"]["message"]
        assert secret.read_bytes() == broken and config.read_bytes() == config_before
    finally:
        secret.write_bytes(good)
    rc, out = _register(home, repo)
    assert rc == 0 and out["repository"]["repositoryKey"] == key


def test_a_first_format_secret_keeps_its_keys_and_gains_a_check(
    registered: tuple[Path, Path, str, bytes],
) -> None:
    home, repo, key, good = registered
    (home / "secret").write_bytes(good[: keys.SECRET_BYTES])
    rc, out = _register(home, repo)
    assert rc == 0 and out["repository"]["repositoryKey"] == key
    assert (home / "secret").read_bytes() == good


def test_an_empty_secret_in_a_state_dir_that_never_made_keys_is_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "secret").write_bytes(b"")
    first = keys.keyed_id("session", "s", home)
    keys._load_secret.cache_clear()
    assert keys.keyed_id("session", "s", home) == first
    assert len((home / "secret").read_bytes()) == keys.SECRET_FILE_BYTES
