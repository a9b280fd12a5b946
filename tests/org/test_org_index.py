"""The org index (docs/org.md), on the embedded SQLite store and on a real PostgreSQL server:
every test runs once per backend through the real `teamlore org` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from org_support import Cluster, commit_memory, make_clone
from support import git, shared_fixtures
from teamlore.cli.main import app
from teamlore.models.vector_math import Int8Rows
from teamlore.org.search import DecodedVectors
from teamlore.org.store import SearchFilter

BILLING = {
    "deploy-billing": "Deploy billing with the blue-green script; never during payroll runs.",
    "cache-keys": "Cache keys carry the tenant id so tenants never share an entry.",
}
WEB = {
    "deploy-web": "部署前端时先清空 CDN 缓存，否则旧的脚本会被继续下发。",
    "css-modules": "Use CSS modules for components, never global class names.",
}


def org(home: Path, database: str | None, *args: str) -> tuple[int, str]:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    done = CliRunner().invoke(app, ["org", *args], env=env)
    return done.exit_code, done.output


def org_json(home: Path, database: str | None, *args: str) -> dict[str, Any]:
    code, output = org(home, database, *args, "--format", "json")
    assert code == 0, output
    result: dict[str, Any] = json.loads(output)
    return result


def org_sync(home: Path, database: str | None, *args: str) -> dict[str, Any]:
    """`org sync --format json`: exit 1 exactly when a repository is skipped or missing (a
    cron job notices), the others synced all the same."""
    code, output = org(home, database, "sync", *args, "--format", "json")
    result: dict[str, Any] = json.loads(output)
    left = [r for r in result["repositories"] if r["outcome"] in ("skipped", "missing")]
    assert code == (1 if left else 0), output
    return result


@pytest.fixture()
def clones(tmp_path: Path) -> dict[str, Path]:
    return {
        "billing": make_clone(tmp_path / "clones", "billing", dict(BILLING)),
        "web": make_clone(tmp_path / "clones", "web", dict(WEB)),
    }


def added(home: Path, database: str | None, clones: dict[str, Path]) -> None:
    for clone in clones.values():
        org_json(home, database, "add", str(clone))


def found(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(hit["repository"], hit["id"]) for hit in result["results"]]


def test_the_list_shows_each_clone_from_the_tilde(
    home: Path, database: str | None, clones: dict[str, Path], tmp_path: Path
) -> None:
    added(home, database, clones)
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    done = CliRunner().invoke(app, ["org", "list"], env={**env, "HOME": str(tmp_path)})
    assert done.exit_code == 0, done.output
    assert {"    ~/clones/billing", "    ~/clones/web"} <= set(done.output.splitlines())
    listed = org_json(home, database, "list")["repositories"]  # programs get the real path
    assert sorted(r["path"] for r in listed) == sorted(str(c) for c in clones.values())


def test_two_repositories_are_synced_and_searched_with_attribution(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    synced = org_sync(home, database)
    assert [(r["repository"], r["outcome"], r["added"]) for r in synced["repositories"]] == [
        ("billing", "synced", 2),
        ("web", "synced", 2),
    ]
    result = org_json(home, database, "search", "deploy", "--lexical")
    assert sorted(found(result)) == [("billing", "deploy-billing"), ("web", "deploy-web")]
    result = org_json(home, database, "search", "payroll", "--lexical")
    assert found(result) == [("billing", "deploy-billing")]
    hit = result["results"][0]
    assert hit["path"] == ".threadshare/memory/entries/deploy-billing.md"
    assert hit["kind"] == "entry" and hit["matchedBy"] == ["lexical"] and hit["score"] > 0
    # Chinese on both backends: the analyzer's bigrams, one- and two-character queries; the
    # words are the query's own, not its English glosses (缓存 does not find "cache")
    chinese = found(org_json(home, database, "search", "缓存", "--lexical"))
    assert chinese == [("web", "deploy-web")]
    # a spaceless question is cut into its words, as memory search cuts it
    question = found(org_json(home, database, "search", "为什么要清空缓存", "--lexical"))
    assert question == [("web", "deploy-web")]
    assert ("web", "deploy-web") in found(org_json(home, database, "search", "前", "--lexical"))
    assert ("web", "deploy-web") in found(org_json(home, database, "search", "部署"))
    only_web = org_json(home, database, "search", "deploy", "-r", "web")
    assert found(only_web)[0] == ("web", "deploy-web")
    assert {repository for repository, _ in found(only_web)} == {"web"}
    # meaning finds what no word matches, attributed too
    meaning = org_json(home, database, "search", "stylesheet conventions for components")
    assert meaning["paths"] == ["lexical", "vector"]
    assert found(meaning)[0] == ("web", "css-modules")


def test_status_names_repositories_never_their_clones(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    status = org_json(home, database, "status")
    assert status["backend"] == ("postgresql" if database else "sqlite")
    assert status["documents"] == 4
    assert [
        (r["name"], r["remote"], r["state"], r["documents"]) for r in status["repositories"]
    ] == [
        ("billing", "github.com/acme/billing", "ok", 2),
        ("web", "github.com/acme/web", "ok", 2),
    ]
    text = json.dumps(status)
    assert str(clones["billing"].parent) not in text and str(home) not in text
    if database:
        assert "postgres@" not in text and "127.0.0.1" in status["index"]


def test_the_next_sync_applies_new_changed_and_deleted_entries_only(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    commit_memory(
        clones["billing"],
        {"cache-keys": None, "deploy-billing": "Deploy billing on Tuesdays.", "new-one": "Rotate."},
    )
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    assert (
        synced["billing"]["added"],
        synced["billing"]["changed"],
        synced["billing"]["deleted"],
    ) == (1, 1, 1)
    assert synced["web"]["outcome"] == "unchanged"
    assert found(org_json(home, database, "search", "tenant", "--lexical")) == []
    assert found(org_json(home, database, "search", "Tuesdays", "--lexical")) == [
        ("billing", "deploy-billing")
    ]
    assert found(org_json(home, database, "search", "payroll", "--lexical")) == []


def test_a_sync_that_embeds_fills_in_the_vectors_a_lexical_sync_left_out(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    assert org_json(home, database, "status")["embedded"] == 0
    synced = org_sync(home, database)["repositories"]
    assert [(r["outcome"], r["embedded"]) for r in synced] == [("synced", True)] * 2
    assert org_json(home, database, "status")["embedded"] == 4
    meaning = org_json(home, database, "search", "stylesheet conventions for components")
    assert found(meaning)[0] == ("web", "css-modules")
    again = org_sync(home, database)["repositories"]  # nothing left to embed
    assert [r["outcome"] for r in again] == ["unchanged"] * 2


def test_only_committed_memory_is_indexed(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    from support import entry_file

    memory = clones["web"] / ".threadshare/memory/entries"
    (memory / "draft.md").write_text(entry_file("draft", "An uncommitted draft."))
    (memory / "css-modules.md").write_text(entry_file("css-modules", "An uncommitted edit."))
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    assert found(org_json(home, database, "search", "modules", "--lexical")) == [
        ("web", "css-modules")
    ]
    assert found(org_json(home, database, "search", "uncommitted", "--lexical")) == []


def test_a_vanished_repository_is_reported_and_the_others_are_synced(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    indexed = git(clones["billing"], "rev-parse", "HEAD")
    clones["billing"].rename(clones["billing"].with_name("moved"))
    commit_memory(clones["web"], {"deploy-web": None})
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    assert synced["billing"]["outcome"] == "missing"
    assert synced["billing"]["problem"] == "the clone's directory no longer exists"
    # the commit the index still holds for it; no HEAD was read
    assert (synced["billing"]["commit"], synced["billing"]["headCommit"]) == (indexed, None)
    assert (synced["web"]["outcome"], synced["web"]["deleted"]) == ("synced", 1)
    # what was indexed of the vanished one is still found, and status says it is missing
    assert found(org_json(home, database, "search", "payroll", "--lexical")) == [
        ("billing", "deploy-billing")
    ]
    code, text = org(home, database, "status")
    assert code == 0 and "billing  missing  2 documents" in text
    # a cron job (`pull && org sync`) notices: exit 1, and the text view says which
    code, text = org(home, database, "sync", "--lexical")
    assert code == 1 and "Not synced: billing (see above); exit 1." in text


def test_an_empty_org_index_says_how_to_add_a_repository(home: Path, database: str | None) -> None:
    code, text = org(home, database, "sync", "--lexical")
    assert code == 0 and "add one with `teamlore org add CLONE`" in text


def test_a_consolidation_record_in_the_tree_is_not_indexed_as_a_document(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    record = clones["billing"] / ".threadshare/memory/consolidated.json"
    record.write_text(
        '{\n  "format": "threadshare-memory-consolidated@v1",\n  "entries": {\n'
        '    "cache-keys": [1, "0123456789abcdef"]\n  }\n}\n'
    )
    git(clones["billing"], "add", "-A")
    git(clones["billing"], "commit", "-qm", "consolidate")
    added(home, database, clones)
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    assert synced["billing"]["outcome"] == "synced"
    assert synced["billing"]["documents"] == len(BILLING)  # the two entries, not the record


def test_a_repository_with_a_broken_memory_tree_is_skipped_with_its_lint_findings(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    key = "AKIA" + "Q3EXAMPLE7WXYZ2ABCD"
    commit_memory(clones["billing"], {"cache-keys": f"Use the key {key} for the cache."})
    broken = clones["web"] / ".threadshare/memory/entries/css-modules.md"
    broken.write_text("---\nid: css-modules\n---\nno front matter to speak of\n")
    git(clones["web"], "commit", "-qam", "broken")
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    assert synced["billing"]["outcome"] == synced["web"]["outcome"] == "skipped"
    rules = {f["rule"] for f in synced["billing"]["findings"]}
    assert any("secret" in rule or "aws" in rule for rule in rules), rules
    assert key not in json.dumps(synced)
    assert synced["web"]["findings"][0]["file"] == ".threadshare/memory/entries/css-modules.md"
    # the index keeps what it had of them: never the secret
    assert found(org_json(home, database, "search", "tenant", "--lexical")) == [
        ("billing", "cache-keys")
    ]
    assert found(org_json(home, database, "search", key, "--lexical")) == []
    commit_memory(clones["billing"], {"cache-keys": "Cache keys carry the region."})
    again = org_sync(home, database, "--lexical")["repositories"]
    assert [r["outcome"] for r in again] == ["synced", "skipped"]
    # the text view names each finding's line and severity in words, as `memory lint` does
    finding = again[1]["findings"][0]
    code, text = org(home, database, "sync", "--lexical")
    assert finding["line"] and code == 1
    assert f"    {finding['file']}:{finding['line']} block {finding['rule']} " in text
    code, text = org(home, database, "status")
    assert f"    {finding['file']}:{finding['line']} block {finding['rule']} " in text


def test_a_skipped_repository_reports_the_commit_the_index_keeps_not_the_head_it_refused(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    indexed = git(clones["billing"], "rev-parse", "HEAD")
    key = "AKIA" + "Q3EXAMPLE7WXYZ2ABCD"
    commit_memory(clones["billing"], {"cache-keys": f"Use the key {key} for the cache."})
    refused = git(clones["billing"], "rev-parse", "HEAD")
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    billing, web = synced["billing"], synced["web"]
    assert (billing["outcome"], billing["problem"]) == ("skipped", "lint blocks 1 file")
    assert (billing["commit"], billing["headCommit"]) == (indexed, refused)
    # one that is indexed at its HEAD says so twice
    assert web["commit"] == web["headCommit"] == git(clones["web"], "rev-parse", "HEAD")
    code, text = org(home, database, "sync", "--lexical")
    assert code == 1
    assert f"    HEAD {refused[:12]} is not indexed; the index keeps {indexed[:12]}\n" in text
    # status agrees: the index is at the commit synced before, HEAD has moved on
    assert f"at {indexed[:12]} (HEAD has moved on)" in org(home, database, "status")[1]


def test_a_repository_skipped_at_its_first_sync_holds_no_commit(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    key = "AKIA" + "Q3EXAMPLE7WXYZ2ABCD"
    clone = make_clone(tmp_path / "clones", "payroll", {"payroll-keys": f"Use the key {key}."})
    org_json(home, database, "add", str(clone))
    (payroll,) = org_sync(home, database, "--lexical")["repositories"]
    head = git(clone, "rev-parse", "HEAD")
    assert (payroll["outcome"], payroll["commit"], payroll["headCommit"]) == ("skipped", None, head)
    code, text = org(home, database, "sync", "--lexical")
    assert code == 1
    assert f"    HEAD {head[:12]} is not indexed; nothing of it is indexed yet\n" in text


def test_a_symlink_or_a_name_that_is_not_utf8_skips_the_repository_as_memory_lint_does(
    home: Path, database: str | None, clones: dict[str, Path], tmp_path: Path
) -> None:
    """A symlink anywhere in the memory tree (the root and `.threadshare` included) was
    synced as an empty tree without a word, and a name that is not UTF-8 was shown with U+FFFD
    and blamed on the entry's id: `memory lint` blocks both, and so does `org sync`."""
    bare = tmp_path / "clones/bare"  # no memory tree yet: synced, 0 documents
    bare.mkdir()
    git(bare, "init", "-q")
    git(bare, "commit", "-q", "--allow-empty", "-m", "start")
    clones = {**clones, "bare": bare}
    added(home, database, clones)
    assert org_sync(home, database, "--lexical")["repositories"][0]["documents"] == 0
    entries = clones["billing"] / ".threadshare/memory/entries"
    entries.rename(clones["billing"] / "kept-elsewhere")
    entries.symlink_to("../../kept-elsewhere")
    odd = clones["web"] / ".threadshare/memory/entries"
    (odd / "css-modules.md").rename(os.fsdecode(bytes(odd) + b"/caf\xe9.md"))
    (bare / ".threadshare").mkdir()
    (bare / ".threadshare/memory").symlink_to(tmp_path)
    for clone in clones.values():
        git(clone, "add", "-A")
        git(clone, "commit", "-qm", "odd")
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    blocked = {name: [(f["file"], f["rule"]) for f in r["findings"]] for name, r in synced.items()}
    assert blocked == {
        "bare": [(".threadshare/memory", "tree.symlink")],
        "billing": [(".threadshare/memory/entries", "tree.symlink")],
        "web": [(".threadshare/memory/entries/caf\\xe9.md", "tree.name-not-utf8")],
    }
    assert {r["outcome"] for r in synced.values()} == {"skipped"}
    lint = CliRunner().invoke(
        app,
        ["memory", "lint", "--repository", str(clones["billing"]), "--format", "json"],
        env={"TEAMLORE_HOME": str(home)},
    )
    assert "tree.symlink" in lint.output
    # the index keeps what it had of them
    assert found(org_json(home, database, "search", "tenant", "--lexical")) == [
        ("billing", "cache-keys")
    ]


def test_a_committed_merge_conflict_is_one_finding_at_its_first_marker(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    """Someone committed a file with git's conflict markers still in it (docs/memory.md,
    "Merge conflicts"): the repository is skipped with the finding, once."""
    added(home, database, clones)
    conflicted = clones["web"] / ".threadshare/memory/entries/css-modules.md"
    head, body = conflicted.read_text().split("---\n", 2)[1:]
    conflicted.write_text(
        f"---\n{head}---\n<<<<<<< HEAD\n{body}=======\nThe other side.\n>>>>>>> topic\n"
    )
    git(clones["web"], "commit", "-qam", "merged without resolving")
    web = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    assert web["web"]["outcome"] == "skipped"
    assert [(f["rule"], f["line"]) for f in web["web"]["findings"]] == [
        ("format.merge-conflict", head.count("\n") + 3)
    ]


def test_an_over_long_query_or_limit_is_refused_and_changes_nothing(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    code, output = org(home, database, "search", "x" * 1025, "--format", "json")
    assert code == 2 and json.loads(output)["error"]["code"] == "INVALID_ARGUMENT"
    code, output = org(home, database, "search", "deploy", "--limit", "101", "--format", "json")
    assert code == 2 and json.loads(output)["error"]["code"] == "INVALID_ARGUMENT"
    # empty and blank alike, as memory search and sessions search say it (`""` was INVALID_ARGUMENT)
    for query in ("", " "):
        code, output = org(home, database, "search", query, "--format", "json")
        assert code == 2, output
        error = json.loads(output)["error"]
        assert (error["code"], error["message"]) == ("QUERY_EMPTY", "the query is empty")
    code, output = org(home, database, "search", "x" * 100, "--format", "json")
    assert code == 2 and json.loads(output)["error"]["message"] == (
        f"{'x' * 100!r} is too long to search (over 64 characters)"
    )
    code, output = org(home, database, "remove", "nobody", "--format", "json")
    assert code == 1 and json.loads(output)["error"]["code"] == "ORG_REPOSITORY_UNKNOWN"
    # a misspelt filter read as "no matching memory"
    code, output = org(home, database, "search", "deploy", "-r", "web", "-r", "wbe", "-f", "json")
    assert code == 1 and json.loads(output)["error"] == {
        "code": "ORG_REPOSITORY_UNKNOWN",
        "message": "the org index has no repository named wbe",
        "problem": "the org index has no repository named wbe",
        "next": "See the org's repositories with `teamlore org status`.",
    }
    code, output = org(home, database, "search", "deploy", "--kind", "entries")
    assert code == 2 and "INVALID_ARGUMENT: --kind: 'entries' is not one of" in output  # kind.0
    code, output = org(home, database, "add", str(clones["web"]), "--format", "json")
    assert code == 1 and json.loads(output)["error"]["code"] == "ORG_REPOSITORY_EXISTS"
    code, output = org(home, database, "add", str(clones["web"]), "--name", "w2", "-f", "json")
    assert code == 1 and json.loads(output)["error"]["message"].endswith("for this clone (web)")
    code, output = org(home, database, "add", str(clones["web"].parent), "--format", "json")
    assert code == 1 and json.loads(output)["error"]["code"] == "NOT_A_GIT_REPOSITORY"
    assert "--repository" not in json.loads(output)["error"]["next"]  # not an `org add` option
    # a folder that was never there: not "the clone's directory no longer exists"
    code, output = org(home, database, "add", "doesnotexist", "--format", "json")
    assert code == 1 and json.loads(output)["error"]["message"] == (
        "doesnotexist: no such folder; give a clone's folder"
    )
    assert [r["state"] for r in org_json(home, database, "status")["repositories"]] == [
        "new",
        "new",
    ]


def test_a_folder_inside_a_clone_stands_for_the_clone(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    org_json(home, database, "add", str(clones["billing"]))
    inside = str(clones["billing"] / ".threadshare/memory")
    code, output = org(home, database, "add", inside, "--format", "json")
    error = json.loads(output)["error"]
    assert code == 1 and error["code"] == "ORG_REPOSITORY_EXISTS"
    assert error["message"].endswith("for this clone (billing)")
    # another `--name` cannot add a clone that is in: the advice says what can
    assert error["next"] == (
        "It is in as billing (`teamlore org list`); to rename it, "
        "`teamlore org remove billing`, then add it again with `--name`."
    )
    web = org_json(home, database, "add", str(clones["web"] / ".threadshare/memory/entries"))
    assert web["repository"] == "web"
    listed = org_json(home, database, "list")["repositories"]
    assert [(r["name"], r["path"]) for r in listed] == [
        ("billing", str(clones["billing"])),
        ("web", str(clones["web"])),
    ]
    synced = org_sync(home, database, "--lexical")["repositories"]
    assert [(r["repository"], r["documents"]) for r in synced] == [("billing", 2), ("web", 2)]


def test_a_name_a_repository_cannot_have_is_refused_in_words(home: Path, tmp_path: Path) -> None:
    """What a repository's name may be is said in words, never as the regular expression."""
    clone = make_clone(tmp_path / "clones", "my billing", dict(BILLING))
    rule = (
        "a name of 1–100 ASCII letters, digits, '.', '-' or '_' that starts with a letter or digit"
    )
    for args, said in (
        (["add", str(clone), "--name", "-billing"], f"--name: '-billing' is not {rule}"),
        (["add", str(clone)], f"the folder's name 'my billing' is not {rule}; give --name"),
        (["remove", "bill ing"], f"NAME: 'bill ing' is not {rule}"),
    ):
        code, output = org(home, None, *args, "--format", "json")
        error = json.loads(output)["error"]
        assert (code, error["code"], error["message"]) == (2, "INVALID_ARGUMENT", said)


def test_remove_drops_a_repository_and_its_documents(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    assert org_json(home, database, "remove", "billing")["documentsRemoved"] == 2
    assert found(org_json(home, database, "search", "deploy", "--lexical")) == [
        ("web", "deploy-web")
    ]
    assert [r["name"] for r in org_json(home, database, "list")["repositories"]] == ["web"]


def sync_process(home: Path, database: str | None) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "TEAMLORE_HOME": str(home),
        "TEAMLORE_ORG_DATABASE": database or "",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.main", "org", "sync", "--lexical", "--format", "json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_concurrent_syncs_leave_one_consistent_index(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    clones = {
        f"repo{i}": make_clone(
            tmp_path / "many", f"repo{i}", {f"e{j}": f"note {i} {j}" for j in range(30)}
        )
        for i in range(4)
    }
    added(home, database, clones)
    first, second = sync_process(home, database), sync_process(home, database)
    outputs = [process.communicate(timeout=240) for process in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outputs
    runs = [json.loads(out) for out, _ in outputs]
    # one of them indexed everything; the other waited and found nothing left to do
    outcomes = sorted(tuple(r["outcome"] for r in run["repositories"]) for run in runs)
    assert outcomes == [("synced",) * 4, ("unchanged",) * 4]
    status = org_json(home, database, "status")
    assert status["documents"] == 120
    assert all(r["documents"] == 30 for r in status["repositories"])


def test_a_second_sync_that_will_not_wait_says_who_holds_the_lock(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    from teamlore.core.paths import resolve_home
    from teamlore.org.backends import open_store

    store = open_store(database, resolve_home(home))
    try:
        with store.sync_lock(0, "build-7 pid 42"):
            code, output = org(home, database, "sync", "--wait", "0", "--format", "json")
    finally:
        store.close()
    error = json.loads(output)["error"]
    assert code == 1 and error["code"] == "LOCK_BUSY"
    assert "build-7 pid 42" in error["message"]
    assert error["next"] == (
        "Run `teamlore org sync` again when that one has ended (`--wait SECONDS` waits longer)."
    )  # not the generic advice to stop a watch


def test_an_unavailable_database_names_host_and_port_never_the_password(
    home: Path, postgres_cluster: Cluster
) -> None:
    closed = f"postgresql://reader:hunter2secret@127.0.0.1:{postgres_cluster.port + 1}/org"
    code, output = org(home, closed, "status", "--format", "json")
    error = json.loads(output)["error"]
    assert code == 1 and error["code"] == "ORG_DATABASE_UNAVAILABLE"
    assert f"127.0.0.1:{postgres_cluster.port + 1}" in error["message"]
    assert "hunter2secret" not in output and "reader" not in output


def test_a_clone_git_cannot_read_is_skipped_and_the_others_are_synced(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    added(home, database, clones)
    entries_tree = git(clones["web"], "rev-parse", "HEAD:.threadshare/memory/entries")
    (clones["web"] / ".git/objects" / entries_tree[:2] / entries_tree[2:]).unlink()
    synced = {r["repository"]: r for r in org_sync(home, database, "--lexical")["repositories"]}
    assert synced["billing"]["outcome"] == "synced"
    assert synced["web"]["outcome"] == "skipped" and "git" in synced["web"]["problem"]


def test_two_indexes_in_one_process_never_share_decoded_vectors(tmp_path: Path) -> None:
    # the serving process decodes vectors once per index state; two embedded indexes at the
    # same generation (one sync each) must not be mistaken for one another
    first, second = tmp_path / "first", tmp_path / "second"
    three = make_clone(
        tmp_path / "a", "three", {f"e{i}": f"Note {i} on deploys." for i in range(3)}
    )
    one = make_clone(tmp_path / "b", "one", {"only": "Stylesheets use CSS modules."})
    for state, clone in ((first, three), (second, one)):
        org_json(state, None, "add", str(clone))
        org_json(state, None, "sync")
        result = org_json(state, None, "search", "qqq unrelated words")
        assert result["vector"]["ran"] and result["generation"] == 1
    assert result["vector"]["documents"] == 1
    assert {hit["repository"] for hit in result["results"]} <= {"one"}


def test_the_text_view_names_each_hits_repository_and_path_within_80_columns(
    home: Path, clones: dict[str, Path]
) -> None:
    added(home, None, clones)
    org_json(home, None, "sync", "--lexical")
    code, text = org(home, None, "search", "payroll", "--lexical")
    lines = text.splitlines()
    assert code == 0 and lines[1:3] == [
        "billing: deploy-billing  entry, score 1.99, by words",
        "  .threadshare/memory/entries/deploy-billing.md",
    ]
    assert all(len(line) <= 80 for line in lines)


def test_quotes_percent_signs_and_backslashes_in_a_query_are_only_text(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    commit_memory(clones["billing"], {"odd": "It's 100% o'reilly: C:\\\\temp and %s are text."})
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    for query in ("o'reilly", "100%", "%s", "C:\\\\temp", "'; DROP TABLE org_documents; --"):
        result = org_json(home, database, "search", query, "--lexical")
        assert all(hit["repository"] in ("billing", "web") for hit in result["results"])
    assert found(org_json(home, database, "search", "o'reilly", "--lexical")) == [
        ("billing", "odd")
    ]
    assert org_json(home, database, "status")["documents"] == 5


def test_a_query_in_the_other_script_finds_the_same_words(
    home: Path, database: str | None, clones: dict[str, Path]
) -> None:
    # the web entry is written in Simplified (清空 CDN 缓存); typed in Traditional (緩存)
    added(home, database, clones)
    org_sync(home, database, "--lexical")
    for query in ("缓存", "緩存", "部署時清空緩存"):
        result = org_json(home, database, "search", query, "--lexical")
        assert found(result) == [("web", "deploy-web")], query


def test_org_search_ranks_by_meaning_as_memory_search_does(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    # the reference tree's entries in one repository; a query none of them shares a word with,
    # so both rankings are memory's meaning ranking alone (memory/store/meaning.py)
    entries: dict[str, str | None] = {
        path.stem: path.read_text(encoding="utf-8").split("---\n", 2)[2].strip()
        for path in sorted((shared_fixtures("threadshare-memory") / "entries").glob("*.md"))
    }
    clone = make_clone(tmp_path / "clones", "reference", entries)
    org_json(home, database, "add", str(clone))
    org_sync(home, database)
    query = "guard a helper against heeding commands buried in saved dialogues"
    env = {"TEAMLORE_HOME": str(home)}
    memory = ["memory", "search", query, "-r", str(clone), "--format", "json"]
    words = CliRunner().invoke(app, [*memory, "--lexical"], env=env)
    assert json.loads(words.output)["results"] == []
    by_memory = json.loads(CliRunner().invoke(app, memory, env=env).output)
    by_org = org_json(home, database, "search", query, "-r", "reference")
    assert len(by_memory["results"]) > 3
    assert [hit["id"] for hit in by_org["results"]] == [hit["id"] for hit in by_memory["results"]]
    # and with the words' rules: a spaceless Chinese question (cut into its words, its literal
    # matches kept in the first places, no English glosses among the words)
    for query in ("根因修复应该怎么做", "去重判断是由哪个阶段完成的？"):
        memory = ["memory", "search", query, "-r", str(clone), "--format", "json"]
        by_memory = json.loads(CliRunner().invoke(app, memory, env=env).output)
        by_org = org_json(home, database, "search", query, "-r", "reference")
        memory_ids = [hit["id"] for hit in by_memory["results"]]
        assert [hit["id"] for hit in by_org["results"]] == memory_ids, query


def test_the_vector_ranking_keeps_the_rows_a_filter_lets_through() -> None:
    rows = Int8Rows(bytes(8), array("d", [1.0] * 4), 2)
    decoded = DecodedVectors(
        array("q", [10, 11, 12, 13]),
        rows,
        rows,
        ["a", "b", "a", "b"],
        ["entry", "scene", "scene", "entry"],
        [True, True, False, True],
        [0, 1, 3],
    )
    assert decoded.keep(SearchFilter(include_deprecated=True)) is None  # every row, no copy
    assert decoded.keep(SearchFilter()) == [0, 1, 3]
    assert decoded.keep(SearchFilter(repositories=("a",))) == [0]
    assert decoded.keep(SearchFilter(repositories=("a",), include_deprecated=True)) == [0, 2]
    assert decoded.keep(SearchFilter(kinds=("entry",))) == [0, 3]
    every_approved = DecodedVectors(
        array("q", [10, 11]), rows, rows, ["a", "b"], ["entry", "scene"], [True, True], [0, 1]
    )
    assert every_approved.keep(SearchFilter()) is None
