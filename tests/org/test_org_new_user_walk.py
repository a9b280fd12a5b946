"""What a new user's walk of the org index on PostgreSQL found (docs/org.md), each through the
real `teamlore org` commands: a clone git cannot enter, secrets in a file's name, in an
evidence path and in a remote's path, `--database ""`, settings libpq refuses, a line break in
a file's name, a sync the database's loss cut off, and the wording of out-of-range options.
On the embedded index and on a real PostgreSQL server where the behaviour is the store's."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from org_support import Cluster, free_port, make_clone
from support import entry_file, git, in_process, refusal_lines, teamlore_cli
from teamlore.cli.main import app

CLI = [sys.executable, "-m", "teamlore.cli.main"]
TOKEN = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5z"  # the shape of a GitHub token, made up


def org(home: Path, database: str | None, *args: str) -> tuple[int, str]:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    done = CliRunner().invoke(app, ["org", *args], env=env)
    return done.exit_code, done.output


def org_json(home: Path, database: str | None, *args: str) -> dict[str, Any]:
    code, output = org(home, database, *args, "--format", "json")
    assert code in (0, 1), output
    result: dict[str, Any] = json.loads(output)
    return result


def by_name(result: dict[str, Any], key: str = "repository") -> dict[str, dict[str, Any]]:
    return {r[key]: r for r in result["repositories"]}


# ---------------------------------------------------------------------------------------------
# a clone git cannot enter


# root reads any folder whatever its mode: without these capabilities (dropped for the child by
# setpriv) a folder of mode 000 stops root as it stops a person
_WITHOUT_OVERRIDE = [
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
    "--",
]


def as_a_person(tmp_path: Path) -> list[str]:
    """The prefix under which a folder of mode 000 cannot be entered: none for a user; for root
    (CI), root without the capabilities that override a folder's mode. Skips, saying why, only
    where neither holds."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: root enters a folder of mode 000")
    probe = tmp_path / "probe"
    probe.mkdir()
    probe.chmod(0)
    check = "import os, sys\ntry: os.listdir(sys.argv[1])\nexcept PermissionError: sys.exit(3)"
    done = subprocess.run(
        [*_WITHOUT_OVERRIDE, sys.executable, "-c", check, str(probe)], capture_output=True
    )
    probe.chmod(0o700)
    if done.returncode != 3:
        pytest.skip(f"root cannot drop CAP_DAC_OVERRIDE here: {done.stderr.decode()[-200:]}")
    return _WITHOUT_OVERRIDE


def org_process(prefix: list[str], home: Path, database: str | None, *args: str) -> Any:
    env = {
        **os.environ,
        "TEAMLORE_HOME": str(home),
        "TEAMLORE_ORG_DATABASE": database or "",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "COLUMNS": "200",
    }
    argv = [*prefix, sys.executable, "-m", "teamlore.cli.main", "org", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture()
def locked(tmp_path: Path) -> Iterator[list[Path]]:
    """Folders whose mode is set to 000 by the test; given back their mode after it."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        folder.chmod(0o755)


def test_a_clone_git_cannot_enter_is_reported_and_every_other_repository_is_synced(
    home: Path, database: str | None, tmp_path: Path, locked: list[Path]
) -> None:
    """`chmod 000 ~/src/long-longword; teamlore org sync` stopped the whole sync with
    `GIT_FAILED: cannot start git: Permission denied` and no result per repository, and
    `org status` still said `ok`: the clone is `missing` with why, the others are synced."""
    person = as_a_person(tmp_path)
    clones = tmp_path / "src"
    billing = make_clone(clones, "billing", {"deploy": "Deploy with the blue-green script."})
    unreadable = make_clone(clones, "long-longword", {"cache": "Cache keys carry the tenant."})
    behind = make_clone(tmp_path / "shut", "web", {"css": "Use CSS modules for components."})
    for clone in (billing, unreadable, behind):
        org_json(home, database, "add", str(clone))
    locked += [unreadable, behind.parent]  # the clone itself; a folder on the clone's path
    for folder in locked:
        folder.chmod(0)

    done = org_process(person, home, database, "sync", "--lexical", "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    synced = by_name(json.loads(done.stdout))
    assert synced["billing"]["outcome"] == "synced"
    why = "the clone's folder cannot be read: Permission denied (its mode or owner)"
    for name in ("long-longword", "web"):
        assert (synced[name]["outcome"], synced[name]["problem"]) == ("missing", why)
    text = org_process(person, home, database, "sync", "--lexical")
    assert text.returncode == 1
    assert f"long-longword  missing  0 documents\n    {why}\n" in text.stdout
    assert "Not synced: long-longword, web (see above); exit 1." in text.stdout
    status = org_process(person, home, database, "status", "--format", "json")
    states = {
        r["name"]: (r["state"], r["problem"]) for r in json.loads(status.stdout)["repositories"]
    }
    assert states == {
        "billing": ("ok", None),
        "long-longword": ("missing", why),
        "web": ("missing", why),
    }
    assert str(tmp_path) not in status.stdout  # served to every token's holder: no clone's path

    # `org add` names the folder it could not read
    added = org_process(person, home, database, "add", str(unreadable), "--name", "again")
    first = refusal_lines(added.stderr)[0]
    assert added.returncode == 1
    assert first == f"error PERMISSION_DENIED: {unreadable}: {why}"


# ---------------------------------------------------------------------------------------------
# secrets in what the index keeps and serves


def commit_file(clone: Path, relative: str, text: str) -> None:
    path = clone / ".threadshare/memory/entries" / relative
    path.write_text(text, encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "add")


def test_a_secret_in_a_files_name_and_an_absolute_evidence_path_are_masked_in_the_index(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """The token in a finding's message was masked and the file's name holding it was stored
    and served whole (`findings.file`, `threadshare_org_status`); an absolute evidence path
    kept all after its masked home (`'/h…[9 chars]/src/app/main.py'`)."""
    clone = make_clone(tmp_path / "src", "web", {"css": "Use CSS modules for components."})
    org_json(home, database, "add", str(clone))
    commit_file(clone, f"{TOKEN}.md", entry_file(TOKEN, "Deploy with the script."))
    pointing = entry_file("main-entry", "The entry point.").replace(
        '"paths":[]', '"paths":["/home/mei/src/app/main.py"]'
    )
    commit_file(clone, "main-entry.md", pointing)

    sync_json = org_json(home, database, "sync", "--lexical")
    sync_text = org(home, database, "sync", "--lexical")[1]
    status = org_json(home, database, "status")
    status_text = org(home, database, "status")[1]
    for said in (json.dumps(sync_json), sync_text, json.dumps(status), status_text):
        assert TOKEN not in said and TOKEN[4:12] not in said
        assert "src/app/main.py" not in said
    (web,) = status["repositories"]
    files = {f["file"] for f in web["findings"]}
    assert files == {
        ".threadshare/memory/entries/ghp_…[41 chars].md",
        ".threadshare/memory/entries/main-entry.md",
    }
    assert (
        "field `evidence`: paths: evidence path '/hom…[25 chars]' is absolute (evidence paths "
        "are repo-relative)"
    ) in {f["message"] for f in web["findings"]}


def test_a_secret_in_the_remotes_path_is_masked(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """`git remote set-url origin https://github.com/ghp_…/web.git`: the public identity strips
    a user and a password, not a token where the owner goes; it was stored and served whole."""
    clone = make_clone(tmp_path / "src", "web", {"css": "Use CSS modules for components."})
    org_json(home, database, "add", str(clone))
    git(clone, "remote", "set-url", "origin", f"https://github.com/{TOKEN}/web.git")
    (web,) = org_json(home, database, "sync", "--lexical")["repositories"]
    assert (web["remote"], web["remoteChanged"]) == ("github.com/ghp_…[41 chars]/web", True)
    text = org(home, database, "sync", "--lexical")[1]
    status = org_json(home, database, "status")
    assert status["repositories"][0]["remote"] == "github.com/ghp_…[41 chars]/web"
    for said in (text, json.dumps(status), org(home, database, "list")[1]):
        assert TOKEN not in said and TOKEN[4:12] not in said
    # added with it: masked from the start
    again = make_clone(tmp_path / "more", "api", {"auth": "Tokens live in the vault."})
    git(again, "remote", "set-url", "origin", f"git@github.com:acme/{TOKEN}.git")
    added = org_json(home, database, "add", str(again))
    assert added["remote"] == "github.com/acme/ghp_…[41 chars]"


def stored_by_an_older_teamlore(
    home: Path, database: str | None, remote: str, problem: str, file: str = "entries/a.md"
) -> None:
    """The repository's row as a teamlore before the masking wrote it: its remote, problem and
    a finding's file name holding the secret whole."""
    finding = {"rule": "secret", "severity": "block", "file": file, "line": 1, "message": "…"}
    update = "UPDATE org_repositories SET remote = ?, problem = ?, findings = ?"
    if database is None:
        conn = sqlite3.connect(home / "org.sqlite3")
        with conn:
            conn.execute(update, (remote, problem, json.dumps([finding])))
        conn.close()
    else:
        import psycopg
        from psycopg.types.json import Jsonb

        with psycopg.connect(database) as pg:
            pg.execute(update.replace("?", "%s"), (remote, problem, Jsonb([finding])))


def test_a_remote_stored_whole_before_the_masking_is_never_shown_whole(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """A remote stored with its token before the masking: `org status` served it whole until a
    sync ran, and the sync, reading it as changed, said `(was github.com/ghp_…/web)` with the
    token whole, in its JSON and text (a cron job's log). Masked when read, it is the same
    remote as the one masked now; when the remote did change, the one it was is masked."""
    clone = make_clone(tmp_path / "src", "web", {"css": "Use CSS modules for components."})
    org_json(home, database, "add", str(clone))
    git(clone, "remote", "set-url", "origin", f"https://github.com/{TOKEN}/web.git")
    stored_by_an_older_teamlore(
        home, database, f"github.com/{TOKEN}/web", f"git cannot read {TOKEN}/web", f"{TOKEN}.md"
    )
    masked = "github.com/ghp_…[41 chars]/web"

    status = org_json(home, database, "status")
    (web,) = status["repositories"]
    assert (web["remote"], web["problem"]) == (masked, "git cannot read ghp_…[41 chars]/web")
    assert [f["file"] for f in web["findings"]] == ["ghp_…[41 chars].md"]
    for said in (json.dumps(status), org(home, database, "status")[1]):
        assert TOKEN not in said and TOKEN[4:12] not in said
    (web,) = org_json(home, database, "sync", "--lexical")["repositories"]
    assert (web["remote"], web["remoteChanged"], web["previousRemote"]) == (masked, False, None)

    git(clone, "remote", "set-url", "origin", "https://github.com/acme/web.git")
    stored_by_an_older_teamlore(home, database, f"github.com/{TOKEN}/web", "")
    sync_json = org_json(home, database, "sync", "--lexical")
    (web,) = sync_json["repositories"]
    assert (web["remote"], web["remoteChanged"]) == ("github.com/acme/web", True)
    assert web["previousRemote"] == masked
    stored_by_an_older_teamlore(home, database, f"github.com/{TOKEN}/web", "")
    sync_text = org(home, database, "sync", "--lexical")[1]
    assert f"(was {masked})" in sync_text
    for said in (json.dumps(sync_json), sync_text):
        assert TOKEN not in said and TOKEN[4:12] not in said


# ---------------------------------------------------------------------------------------------
# the connection string


@pytest.mark.parametrize("command", [("status",), ("sync",), ("search", "deploy"), ("list",)])
def test_an_empty_database_option_is_a_usage_error_not_the_default_index(
    home: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """`--database ""` (a script's unset variable) used TEAMLORE_ORG_DATABASE or the embedded
    index without a word, exit 0."""
    clone = make_clone(tmp_path / "src", "web", {"css": "Use CSS modules for components."})
    org_json(home, None, "add", str(clone))
    for args in ((*command, "--database", ""), (*command, "-d", " ")):
        code, output = org(home, None, *args, "--format", "json")
        error = json.loads(output)["error"]
        assert (code, error["code"]) == (2, "INVALID_ARGUMENT"), output
        assert error["message"].startswith("--database: the URL is empty (an unset variable?)")


def test_org_serve_with_an_empty_database_option_refuses_before_it_listens(home: Path) -> None:
    done = subprocess.run(
        [*CLI, "org", "serve", "--port", str(free_port()), "--database", ""],
        env={**os.environ, "TEAMLORE_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=60,  # without the refusal it serves the embedded index until killed
    )
    assert done.returncode == 2
    assert refusal_lines(done.stderr)[0].startswith("error INVALID_ARGUMENT: --database: ")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            "postgresql://bob:hunter2@127.0.0.1:99999/orga",
            "invalid port number (a port is 1-65535)",
        ),
        ("postgresql://bob:hunter2@127.0.0.1/orga?sslmode=bogus", "invalid sslmode value"),
        (
            "postgresql://bob:hunter2@127.0.0.1:sixty/orga",
            'invalid integer value for connection option "port"',
        ),
        ("host=a,b port=1,2,3 dbname=orga user=bob", "could not match 3 port numbers to 2 hosts"),
        # a host name: psycopg looked it up with the port first, which said "Servname not
        # supported" or that the host was not found (ORG_DATABASE_UNAVAILABLE)
        (
            "postgresql://bob:hunter2@localhost:sixty/orga",
            'invalid integer value for connection option "port"',
        ),
        ("postgresql://bob:hunter2@localhost:-5/orga", "invalid port number (a port is 1-65535)"),
        ("postgresql://bob:hunter2@db.invalid/orga?sslmode=bogus", "invalid sslmode value"),
    ],
)
def test_a_setting_libpq_refuses_is_an_invalid_url_not_an_unreachable_server(
    home: Path, url: str, problem: str
) -> None:
    """libpq parses these, then refuses a setting before it tries any server: it was
    ORG_DATABASE_UNAVAILABLE (exit 1) in psycopg's words (`connection is bad: invalid port
    number: "99999"`)."""
    text = in_process("org", "status", "--database", url)
    as_json = in_process("org", "status", "--database", url, "--format", "json")
    for done in (text, as_json):
        assert done.returncode == 2, done.stderr
        said = done.stdout + done.stderr
        assert "bob" not in said and "hunter2" not in said and "connection is bad" not in said
    first, *rest = refusal_lines(text.stderr)
    assert first == (
        f"error ORG_DATABASE_URL_INVALID: the org database's URL has a setting libpq refuses: "
        f"{problem}"
    )
    assert [line.split(":")[0] for line in rest] == ["  next"]
    assert json.loads(as_json.stdout)["error"]["code"] == "ORG_DATABASE_URL_INVALID"


def test_a_server_libpq_cannot_use_is_told_in_libpqs_words_not_psycopgs(home: Path) -> None:
    url = f"postgresql://127.0.0.1:{free_port()}/orga?gssencmode=require"  # no credentials here
    done = in_process("org", "status", "--database", url)
    assert done.returncode == 1
    first = refusal_lines(done.stderr)[0]
    assert first.startswith("error ORG_DATABASE_UNAVAILABLE: cannot use the org database at ")
    assert "connection is bad" not in first and "connection failed" not in first


# ---------------------------------------------------------------------------------------------
# the text view


def test_a_line_break_in_a_files_name_is_escaped_in_the_text_view(
    home: Path, tmp_path: Path
) -> None:
    """`entries/new⏎line.md:2 block …` came out on two lines, where ESC and U+202E are shown as
    their escapes: each finding is one line (`path:line block rule message`)."""
    clone = make_clone(tmp_path / "src", "web", {"css": "Use CSS modules for components."})
    org_json(home, None, "add", str(clone))
    commit_file(clone, "new\nline.md", entry_file("new-line", "Body text here."))
    commit_file(clone, "tab\tand\rreturn.md", entry_file("tab-and-return", "Body text here."))
    for command in ("sync", "status"):
        text = org(home, None, *((command, "--lexical") if command == "sync" else (command,)))[1]
        lines = [line for line in text.splitlines() if "slug.id-mismatch" in line]
        assert lines == [
            "    .threadshare/memory/entries/new\\x0aline.md:2 block slug.id-mismatch field "
            "`id`: id 'new-line' does not match the file name 'new\\nline.md'",
            "    .threadshare/memory/entries/tab\\x09and\\x0dreturn.md:2 block slug.id-mismatch "
            "field `id`: id 'tab-and-return' does not match the file name "
            "'tab\\tand\\rreturn.md'",
        ], text


# ---------------------------------------------------------------------------------------------
# a sync the database's loss cut off


def test_a_sync_the_databases_loss_cut_off_says_which_repositories_it_synced(
    home: Path, postgres_database: str, postgres_cluster: Cluster, tmp_path: Path
) -> None:
    """`pg_ctl stop -m immediate` mid-sync printed one error: the repositories committed before
    it went unreported. Now they are said (text and JSON), then the error."""
    for name in ("alpha", "beta", "gamma"):
        clone = make_clone(tmp_path / "src", name, {f"{name}-note": f"How {name} deploys."})
        org_json(home, postgres_database, "add", str(clone))
    for fmt in ("json", "text"):
        if fmt == "text":  # the same again: each repository has a change to sync
            for name in ("alpha", "beta", "gamma"):
                commit_file(tmp_path / "src" / name, "more.md", entry_file("more", f"{name} 2."))
        paused = tmp_path / f"paused-{fmt}"
        env = {
            **os.environ,
            "TEAMLORE_HOME": str(home),
            "TEAMLORE_ORG_DATABASE": postgres_database,
            "TEAMLORE_PAUSEPOINT": f"org.sync.repository-done={paused}",
            "TEAMLORE_ORG_POOL_WAIT_S": "0.5",
            "PYTHONPATH": os.pathsep.join(sys.path),
            "COLUMNS": "200",
        }
        argv = [sys.executable, "-m", "teamlore.cli.main", "org", "sync", "--lexical"]
        sync = subprocess.Popen(
            [*argv, "--format", fmt], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 60
            while not paused.exists():  # alpha is synced and committed; beta is next
                assert sync.poll() is None and time.monotonic() < deadline, sync.communicate()
                time.sleep(0.02)
            stop = [*postgres_cluster.stop_command, "-m", "immediate", "stop"]
            subprocess.run(stop, check=True, capture_output=True, timeout=120)
            paused.unlink()
            out, err = (part.decode() for part in sync.communicate(timeout=120))
        finally:
            if sync.poll() is None:
                sync.kill()
            postgres_cluster.start()
        assert sync.returncode == 1, out + err
        if fmt == "json":
            error = json.loads(out)["error"]
            assert error["code"] == "ORG_DATABASE_UNAVAILABLE"
            done = error["details"]["repositories"]
            assert [(r["repository"], r["outcome"], r["added"]) for r in done] == [
                ("alpha", "synced", 1)
            ]
            assert error["details"]["notSynced"] == ["beta", "gamma"]
        else:
            assert out.splitlines() == [
                "alpha  synced  2 documents (1 added, 0 changed, 0 deleted)",
                "Stopped by the error below after 1 repository (these stay as synced); not "
                "synced: beta, gamma.",
            ]
            assert refusal_lines(err)[0].startswith("error ORG_DATABASE_UNAVAILABLE: ")
    # what was said synced is in the index; the others are as they were
    status = by_name(org_json(home, postgres_database, "status"), "name")
    assert {name: r["documents"] for name, r in status.items()} == {
        "alpha": 2,
        "beta": 0,
        "gamma": 0,
    }


# ---------------------------------------------------------------------------------------------
# the words of a refused option


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("serve", "--port", "70000"), "--port: must be between 1 and 65535"),
        (("serve", "--port", "0"), "--port: must be between 1 and 65535"),
        (("serve", "--rate", "0"), "--rate: must be 1 or more requests a minute"),
        (("search", "deploy", "--limit", "0"), "--limit: must be between 1 and 100"),
    ],
)
def test_a_number_out_of_range_is_invalid_argument_as_in_every_other_command(
    home: Path, args: tuple[str, ...], message: str
) -> None:
    """`org serve --port 70000` was USAGE where `org search --limit 0`, `memory search --limit
    0`, `org sync --wait -1` and `watch --min-interval` are INVALID_ARGUMENT (both exit 2)."""
    done = teamlore_cli("org", *args)
    assert done.returncode == 2
    assert refusal_lines(done.stderr)[0].startswith(f"error INVALID_ARGUMENT: {message}")


def test_an_over_long_query_is_refused_in_a_persons_words(home: Path) -> None:
    """It was pydantic's `QUERY: String should have at most 1024 characters`."""
    code, output = org(home, None, "search", "x" * 1025, "--format", "json")
    error = json.loads(output)["error"]
    assert (code, error["code"]) == (2, "INVALID_ARGUMENT")
    assert error["message"] == "QUERY: too long to search: 1,025 characters (at most 1,024)"
