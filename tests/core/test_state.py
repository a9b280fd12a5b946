"""State dir, origin secret and keyed ids, config, locks."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from teamlore.core import errors, keys, paths, refusals
from teamlore.core.config import Config, RepositoryConfig, load_config, save_config
from teamlore.core.lock import file_lock
from teamlore.core.paths import ensure_private_file, state_dir, write_private_file


def test_state_dir_is_created_private(home: Path) -> None:
    assert state_dir() == home
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700


def test_keyed_ids_are_stable_per_machine_and_domain_separated(home: Path) -> None:
    state_dir()
    a = keys.session_key("codex", "0199-abc", home)
    assert a == keys.session_key("codex", "0199-abc", home)
    assert a != keys.session_key("claude", "0199-abc", home)
    assert keys.keyed_id("repository", "x", home) != keys.keyed_id("worktree", "x", home)
    assert "0199" not in a and len(a) == keys.KEY_HEX_CHARS
    secret = home / "secret"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600


def test_keys_differ_across_machines(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    assert keys.keyed_id("session", "s", one) != keys.keyed_id("session", "s", two)


def test_config_round_trips_and_is_private(home: Path) -> None:
    state_dir()
    config = Config(
        sources={"codex": ["/x/y", 'we"ird\\path']},
        repositories=[RepositoryConfig(path="/r", repository_key="a", worktree_key="b")],
    )
    save_config(config, home)
    assert load_config(home) == config
    assert stat.S_IMODE(os.stat(home / "config.toml").st_mode) == 0o600


def test_broken_config_is_a_clear_error(home: Path) -> None:
    state_dir()
    (home / "config.toml").write_text("sources = [unclosed")
    with pytest.raises(errors.TeamloreError) as caught:
        load_config(home)
    assert caught.value.code == "CONFIG_INVALID"


def test_a_second_holder_refuses_at_once_then_gets_the_lock_when_released(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l.lock"
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with file_lock(path):
            held.set()
            assert release.wait(10)
        done.set()

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    with pytest.raises(errors.TeamloreError) as caught, file_lock(path, wait_seconds=0):
        pass
    assert caught.value.code == "LOCK_BUSY"
    release.set()
    assert done.wait(10)
    with file_lock(path, wait_seconds=0):  # free now: no waiting needed
        pass
    thread.join()


def test_a_waiting_holder_gets_the_lock_once_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / "l.lock"
    acquired = threading.Event()

    def waiter() -> None:
        with file_lock(path, wait_seconds=30):
            acquired.set()

    with file_lock(path):
        thread = threading.Thread(target=waiter)
        thread.start()
        assert not acquired.is_set()  # it cannot have the lock while we hold it
    thread.join(30)
    assert acquired.is_set()


def test_loose_secret_and_config_are_tightened_and_symlinks_refused(
    home: Path, tmp_path: Path
) -> None:
    state_dir()
    keys.keyed_id("session", "s", home)
    save_config(Config(), home)
    for name in ("secret", "config.toml"):
        os.chmod(home / name, 0o644)
    keys._load_secret.cache_clear()
    keys.keyed_id("session", "s", home)
    load_config(home)
    assert {stat.S_IMODE(os.stat(home / n).st_mode) for n in ("secret", "config.toml")} == {0o600}
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text("")
    (home / "config.toml").unlink()
    (home / "config.toml").symlink_to(elsewhere)
    with pytest.raises(errors.TeamloreError) as caught:
        load_config(home)
    assert caught.value.code == "CONFIG_INVALID"


def test_missing_parents_of_the_state_dir_are_created_private(tmp_path: Path) -> None:
    from teamlore.core.paths import ensure_private_dir

    old = os.umask(0)
    try:
        target = ensure_private_dir(tmp_path / "a" / "b" / "state")
    finally:
        os.umask(old)
    for directory in (tmp_path / "a", tmp_path / "a" / "b", target):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


def test_a_state_dir_no_file_system_can_hold_is_state_dir_unsafe(tmp_path: Path) -> None:
    from teamlore.core.paths import ensure_private_dir

    with pytest.raises(errors.TeamloreError) as caught:
        ensure_private_dir(tmp_path / ("x" * 5_000) / "state")
    assert caught.value.code == "STATE_DIR_UNSAFE" and "File name too long" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_state_dir_that_is_a_symlink_or_a_file_is_refused_saying_which(tmp_path: Path) -> None:
    from teamlore.core.paths import ensure_private_dir

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("mine")
    for place, says in (("link", "is a symbolic link"), ("file", "is not a directory")):
        with pytest.raises(errors.TeamloreError) as caught:
            ensure_private_dir(tmp_path / place)
        assert caught.value.code == "STATE_DIR_UNSAFE" and says in str(caught.value)
    assert (tmp_path / "file").read_text() == "mine" and not any((tmp_path / "real").iterdir())


def test_a_path_too_long_anywhere_is_its_own_code_not_internal() -> None:
    refusal = refusals.refusal_for(
        OSError(errno.ENAMETOOLONG, "File name too long", "/home/mei/" + "x" * 5_000)
    )
    assert refusal.code == "PATH_TOO_LONG" and refusal.exit_code == 1
    assert "/home/mei" not in refusal.message and len(refusal.message) < 300


def test_threads_replacing_one_private_file_at_once_never_collide(tmp_path: Path) -> None:
    """The MCP server runs calls in threads of one process: two of them saving the same state
    file (a Skill manifest) each write their own work file, so neither renames the other's
    away (it failed with FileNotFoundError); the file ends whole, as one of them wrote it."""
    target = tmp_path / "claude.json"
    start = threading.Barrier(4)
    failures: list[BaseException] = []

    def save(n: int) -> None:
        start.wait()
        try:
            for _ in range(200):
                write_private_file(target, f"writer {n}\n".encode() * 64)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(set(target.read_bytes().splitlines())) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claude.json"]  # no work file left


def test_a_side_file_removed_while_it_is_made_private_is_made_anew_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's last connection deletes a database's `-wal` at any moment; here right
    after this one found it existing (the window is microseconds wide, so the deletion is put
    there: the race itself, run for seconds, failed a connect about once a second)."""
    wal = tmp_path / "memory-state.sqlite3-wal"
    wal.write_bytes(b"")
    wal.chmod(0o644)
    real_lstat = os.lstat
    removals = []

    def deleted_first(path: os.PathLike[str] | str) -> os.stat_result:
        if not removals:
            removals.append(path)
            os.unlink(path)
        return real_lstat(path)

    monkeypatch.setattr(paths.os, "lstat", deleted_first)
    ensure_private_file(wal)

    assert removals == [wal]
    assert stat.S_IMODE(real_lstat(wal).st_mode) == 0o600
