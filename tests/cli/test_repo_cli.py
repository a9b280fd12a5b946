"""Sessions from anywhere and repositories that come and go, through the real `teamlore`
executable: `sync` maps sessions recorded on Windows or another machine and says how many it
could not map, skips a registered repository that is gone, `sessions list --unmapped` shows the
folders, `repo list` and `repo forget PATH` (docs/sessions.md)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sessions.records import (
    codex_agent_message,
    codex_event,
    codex_meta,
    codex_user_message,
    write_jsonl,
)
from support import git, refusal_lines, shared_fixtures, teamlore_cli
from teamlore.sessions.index_db import MIGRATIONS, SESSION_GIT, index_db_path

REMOTE = "git@github.com:team/shop.git"


def _repo(path: Path, remote: str | None = REMOTE) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "first")
    if remote:
        git(path, "remote", "add", "origin", remote)
    return path


def _session(root: Path, name: str, cwd: str, git_meta: dict[str, str] | None = None) -> None:
    session_id = f"0199{name:0>4}"[:8] + "-0000-7000-8000-000000000001"
    write_jsonl(
        root / f"rollout-2026-01-01T00-00-00-{session_id}.jsonl",
        [
            codex_meta(session_id, cwd=cwd, git=git_meta or {}),
            codex_user_message(f"work on {name}"),
            codex_agent_message("done"),
            codex_event("task_complete"),
        ],
    )


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return teamlore_cli(*args, cwd=cwd)


def _json(*args: str) -> dict[str, Any]:
    proc = _cli(*args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.fixture()
def world(home: Path, tmp_path: Path) -> dict[str, Path]:
    """A registered repository `shop` with a remote, and three Codex sessions recorded elsewhere:
    on Windows in a clone of `shop` (Codex recorded its remote), on Windows in a folder with no
    repository, and on another machine's home."""
    shop = _repo(tmp_path / "src" / "shop")
    sessions = tmp_path / "codex"
    commit = git(shop, "rev-parse", "HEAD")
    _session(
        sessions,
        "a",
        "C:\\Users\\me\\src\\shop",
        {"repository_url": "https://github.com/Team/Shop", "commit_hash": commit},
    )
    _session(sessions, "b", "C:\\Users\\me\\src\\tools\\[id]")
    _session(sessions, "c", "/Users/me/code/shop/web")
    # the world's set-up, run in this process: each test runs its commands in the executable
    from teamlore.ops.registry import OpContext, run_operation

    payload = {"sources": [f"codex={sessions}"], "repository": str(shop)}
    run_operation("sync", OpContext(cwd=tmp_path, home=home), payload)
    return {"shop": shop, "sessions": sessions}


def _sync(world: dict[str, Path]) -> dict[str, Any]:
    return _json("sync", "--source", f"codex={world['sessions']}")


def test_sync_maps_a_windows_session_by_its_recorded_remote_and_counts_the_rest(world) -> None:
    delivery = _sync(world)["delivery"]
    assert delivery["sessionsMapped"] == 1 and delivery["sessionsUnmapped"] == 2
    assert delivery["mappedBy"] == {"cwd": 0, "gitRemote": 1, "pathAlias": 0}
    text = _cli("sync", "--source", f"codex={world['sessions']}").stdout
    assert "1 repository: 1 session mapped (1 by git remote)" in text
    assert (
        "2 sessions could not be mapped to a registered repository;"
        " `teamlore sessions list --unmapped` shows their folders." in " ".join(text.split())
    )


def test_sessions_list_unmapped_shows_the_recorded_folders_literally(world) -> None:
    listed = _json("sessions", "list", "--unmapped")["sessions"]
    assert sorted(s["cwd"] for s in listed) == [
        "/Users/me/code/shop/web",
        "C:\\Users\\me\\src\\tools\\[id]",
    ]
    assert all(s["repository"] is None for s in listed)
    everything = _json("sessions", "list")["sessions"]
    assert len(everything) == 3
    text = _cli("sessions", "list", "--unmapped").stdout
    assert text.splitlines()[0].split() == ["sessions", "newest", "(UTC)", "folder"]
    folded = "".join(text.split())  # the table may fold long cells
    assert "C:\\Users\\me\\src\\tools\\[id]" in folded and "/Users/me/code/shop/web" in folded


def test_a_folder_under_the_users_home_is_shown_from_the_tilde(world, tmp_path: Path) -> None:
    web = world["shop"] / "web"
    _session(world["sessions"], "d", str(web))
    (tmp_path / "notes").mkdir()
    _session(world["sessions"], "e", str(tmp_path / "notes"))  # in no repository
    _sync(world)
    listed = {s["cwd"]: s for s in _json("sessions", "list")["sessions"]}
    assert str(web) in listed  # programs get the folder as recorded
    user = {"HOME": str(tmp_path), "COLUMNS": "80"}
    # the listing that shows folders (a session with a prompt is titled by it elsewhere)
    text = teamlore_cli("sessions", "list", "--unmapped", env=user).stdout
    assert "~/notes" in "".join(text.split()) and str(tmp_path) not in text
    key = listed[str(web)]["sessionKey"][:12]
    first = teamlore_cli("sessions", "show", key, env=user).stdout.splitlines()[0]
    assert first.startswith(f"{key} codex ~/src/shop/web ")


def test_path_aliases_in_config_toml_map_the_other_machines_sessions(world, home: Path) -> None:
    src = world["shop"].parent
    config = home / "config.toml"
    aliases = f'"/Users/me/code" = "{src}", "C:\\\\Users\\\\me\\\\src" = "{src}"'
    config.write_text(config.read_text() + f"\n[paths]\naliases = {{ {aliases} }}\n")
    delivery = _sync(world)["delivery"]
    assert delivery["mappedBy"] == {"cwd": 0, "gitRemote": 1, "pathAlias": 1}
    assert delivery["sessionsUnmapped"] == 1  # tools/[id] does not exist under src
    listed = _json("sessions", "list")["sessions"]
    mapped = {s["cwd"]: s["repository"] for s in listed}
    assert mapped["/Users/me/code/shop/web"]["name"] == "shop"
    # at 80 columns with a repository column, the start column shows the day (the title keeps
    # its room)
    listing = teamlore_cli("sessions", "list", env={"COLUMNS": "80"}).stdout
    assert listing.splitlines()[0].split() == [
        *("session", "provider", "day", "(UTC)", "turns", "repository", "title", "/", "cwd")
    ]
    wide = teamlore_cli("sessions", "list", env={"COLUMNS": "160"}).stdout
    assert wide.splitlines()[0].split()[2:4] == ["started", "(UTC)"]


def test_an_alias_that_is_not_an_absolute_local_path_is_refused(world, home: Path) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text() + '\n[paths]\naliases = { "C:\\\\src" = "src" }\n')
    before = _json("sessions", "list")
    proc = _cli("sync", "--source", f"codex={world['sessions']}", "--format", "json")
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "CONFIG_INVALID" and "[paths]" in error["message"]
    assert _json("sessions", "list") == before


def test_unmapped_and_repository_together_are_a_usage_error(world) -> None:
    proc = _cli("sessions", "list", "--unmapped", "--repository", str(world["shop"]))
    assert proc.returncode == 2
    assert "INVALID_ARGUMENT" in proc.stderr and "Traceback" not in proc.stderr


def _config_paths(home: Path) -> list[str]:
    return [line for line in (home / "config.toml").read_text().splitlines() if "path =" in line]


@pytest.mark.parametrize("how", ["deleted", "moved", "replaced", "not-a-repository"])
def test_a_registered_repository_that_is_gone_is_reported_and_skipped(
    world, home: Path, tmp_path: Path, how: str
) -> None:
    other = _repo(tmp_path / "other", remote=None)
    _json("sync", "--source", f"codex={world['sessions']}", "--repository", str(other))
    shop = world["shop"]
    if how == "deleted":
        shutil.rmtree(shop)
    elif how == "moved":
        shop.rename(tmp_path / "shop-moved")
    elif how == "replaced":  # the folder is now a worktree of another repository
        shutil.rmtree(shop)
        git(other, "worktree", "add", "-q", "-b", "feature", str(shop))
    else:
        shutil.rmtree(shop / ".git")
    git(other, "commit", "-q", "--allow-empty", "-m", "second")

    result = _sync(world)
    expected = "missing" if how in ("deleted", "moved") else how
    delivery = result["delivery"]
    assert delivery["repositoriesSkipped"] == [
        {"path": str(shop), "name": "shop", "reason": expected}
    ]
    assert delivery["commitsAdded"] == 1  # the other repository was still scanned
    text = _cli("sync", "--source", f"codex={world['sessions']}")
    assert text.returncode == 0
    assert f"skipped {shop}:" in text.stdout
    statuses = {r["name"]: r["status"] for r in _json("repo", "list")["repositories"]}
    assert statuses == {"shop": expected, "other": "ok"}


def test_repo_forget_keeps_the_sessions_and_drops_the_mapping(world, home: Path) -> None:
    shop = world["shop"]
    _sync(world)
    assert len(_config_paths(home)) == 1
    shutil.rmtree(shop)  # a repository deleted from disk can still be forgotten
    result = _json("repo", "forget", str(shop))
    assert result["forgotten"]["name"] == "shop" and result["sessionsKept"] == 1
    assert result["repositoryHistoryKept"] is False
    assert _json("repo", "list") == {"repositories": []}
    assert _config_paths(home) == []
    listed = _json("sessions", "list")["sessions"]
    assert len(listed) == 3 and all(s["repository"] is None for s in listed)
    assert _json("sessions", "search", "work on a")["hits"]
    status = _json("status")
    assert (status["repositories"], status["commits"], status["deliveryEdges"]) == (0, 0, 0)
    assert len(_json("sessions", "list", "--unmapped")["sessions"]) == 3


def test_repo_forget_refuses_what_is_not_registered_and_changes_nothing(
    world, home: Path, tmp_path: Path
) -> None:
    config_before = (home / "config.toml").read_bytes()
    listed_before = _json("repo", "list")
    proc = _cli("repo", "forget", str(tmp_path / "never-registered"), "--format", "json")
    assert proc.returncode == 1
    refusal = json.loads(proc.stdout)["error"]
    assert refusal["code"] == "REPOSITORY_NOT_REGISTERED"
    # registering it (the code's usual next) is the opposite of what forget asked for
    assert refusal["next"] == (
        "Forget one of the paths `teamlore repo list` shows; this one is not in."
    )
    text = _cli("repo", "forget", str(tmp_path))
    assert text.returncode == 1
    assert text.stderr.startswith("error REPOSITORY_NOT_REGISTERED:")
    assert "`teamlore repo list` shows them" in refusal_lines(text.stderr)[0]
    assert (home / "config.toml").read_bytes() == config_before
    assert _json("repo", "list") == listed_before
    assert _cli("repo", "forget").returncode == 2  # PATH is required


def test_a_repository_filter_naming_an_unregistered_worktree_says_so(world, tmp_path: Path) -> None:
    """`sessions search -r PATH` / `sessions list -r PATH` before `sync --repository PATH` said
    "No matching turns" / "No sessions match these filters": nothing ever maps to it."""
    other = _repo(tmp_path / "src" / "other")
    for command in (["sessions", "search", "deploy"], ["sessions", "list"]):
        proc = _cli(*command, "--repository", str(other))
        assert proc.returncode == 1 and refusal_lines(proc.stderr) == [
            "error REPOSITORY_NOT_REGISTERED: other is not registered, so no session is linked"
            " to it",
            "  next: Register it: `teamlore sync --repository PATH` (`.` for here).",
        ]
    listed = _json("sessions", "list", "--repository", str(world["shop"]))
    assert listed["sessions"]  # a registered one filters as before


def test_repo_list_text_and_forget_from_inside_the_worktree(world, tmp_path: Path) -> None:
    text = _cli("repo", "list").stdout
    assert "shop" in text and "ok" in text and str(world["shop"]) in "".join(text.split())
    (world["shop"] / "sub").mkdir()
    proc = _cli("repo", "forget", "../", cwd=world["shop"] / "sub")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Forgot shop (")
    assert "1 session that belonged to it stays indexed and searchable." in proc.stdout
    empty = _cli("repo", "list").stdout
    assert "No repository is registered. `teamlore sync --repository PATH` registers one." in empty


def test_an_index_from_before_the_recorded_remote_reads_codex_files_again(world, home) -> None:
    conn = sqlite3.connect(index_db_path(home), isolation_level=None)
    for column in ("git_remote", "git_commit"):
        conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
    # tables of later migrations
    for table in ("turn_vectors", "turn_vector_blocks", "vector_spaces", "turn_passages"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(SESSION_GIT)}")
    conn.close()
    upgraded = _sync(world)
    assert upgraded["files"]["changed"] == 3  # read again, for session_meta.git
    assert upgraded["delivery"]["mappedBy"]["gitRemote"] == 1
    assert _sync(world)["files"]["changed"] == 0


def test_real_windows_and_mac_codex_sessions_map_to_clones_registered_here(
    home: Path, tmp_path: Path
) -> None:
    """Real Codex files: `battle-cities` was recorded on Windows (`C:\\repos\\BattleCity`) with
    its https remote; `gildore-arena` on Linux in another user's home with an ssh remote. Clones
    registered here with those remotes (spelled differently) own them."""
    real = shared_fixtures("sessions", "codex")
    sources = tmp_path / "codex"
    sources.mkdir()
    for name in ("battle-cities-0.142.4.jsonl", "gildore-arena-0.130.0.jsonl"):
        shutil.copy(real / name, sources / name)
    battle = _repo(tmp_path / "BattleCity", remote="git@github.com:cryptosodi/battle-cities")
    gildore = _repo(tmp_path / "arena", remote="https://github.com/inspi-writer001/gildore-arena")
    for root in (battle, gildore):
        _json("sync", "--source", f"codex={sources}", "--repository", str(root))
    delivery = _json("sync", "--source", f"codex={sources}")["delivery"]
    assert delivery["mappedBy"]["gitRemote"] == 2 and delivery["sessionsUnmapped"] == 0
    names = {s["cwd"]: s["repository"]["name"] for s in _json("sessions", "list")["sessions"]}
    assert names == {
        "C:\\repos\\BattleCity": "BattleCity",
        "/home/inspiration-gx/Documents/gildore-project/gildore-arena": "arena",
    }


def test_sync_counts_in_the_right_number(home: Path, tmp_path: Path) -> None:
    """One file, one session, one turn: the text says so in the singular."""
    one = tmp_path / "one"
    _session(one, "e", "/nowhere")
    text = " ".join(_cli("sync", "--source", f"codex={one}").stdout.split())
    assert "Indexed 1 changed of 1 file (" in text
    assert "1 session, 1 turn written. Index holds 1 session, 1 turn." in text
    assert "Embedded 1 turn for hybrid search; 1 of 1 turn has a vector." in text
