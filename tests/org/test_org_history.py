"""A clone changes under the org index (docs/org.md "Sync"): a remote is added or changed after
`org add`, a commit that was indexed is rewritten by an amend, a rebase or a force-push. Through
the real `teamlore org` commands on real git clones, once per backend."""

from __future__ import annotations

from pathlib import Path

from test_org_index import BILLING, found, org, org_json, org_sync

from org_support import commit_memory, make_clone
from support import git


def indexed_at(home: Path, database: str | None) -> tuple[str | None, str | None]:
    """(commit indexed, where it stands in HEAD's history) of the one repository."""
    (repository,) = org_json(home, database, "status")["repositories"]
    return repository["commit"], repository["commitState"]


def test_a_remote_added_or_changed_after_add_is_picked_up_by_the_next_sync(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """The name is the repository's identity in the index (its documents, `--repository`);
    the public remote is asked again at each sync: the documents stay, once, under the name."""
    clone = make_clone(tmp_path, "billing", dict(BILLING))
    git(clone, "remote", "remove", "origin")  # cloned from a local folder, or `git init`
    assert org_json(home, database, "add", str(clone))["remote"] is None
    org_sync(home, database, "--lexical")
    generation = org_json(home, database, "status")["generation"]

    git(clone, "remote", "add", "origin", "https://github.com/acme/billing.git")
    (synced,) = org_sync(home, database, "--lexical")["repositories"]
    (shown,) = org_json(home, database, "status")["repositories"]
    assert (shown["remote"], shown["documents"]) == ("github.com/acme/billing", 2)
    assert (synced["outcome"], synced["remote"]) == ("unchanged", "github.com/acme/billing")
    assert (synced["remoteChanged"], synced["previousRemote"]) == (True, None)

    git(clone, "remote", "set-url", "origin", "git@github.com:acme/payments.git")  # moved
    code, text = org(home, database, "sync", "--lexical")
    assert code == 0
    assert "    remote now github.com/acme/payments (was github.com/acme/billing)" in text
    status = org_json(home, database, "status")
    assert [(r["name"], r["remote"], r["documents"]) for r in status["repositories"]] == [
        ("billing", "github.com/acme/payments", 2)
    ]
    assert status["generation"] == generation  # nothing was indexed again
    assert found(org_json(home, database, "search", "payroll", "--lexical")) == [
        ("billing", "deploy-billing")
    ]
    (again,) = org_sync(home, database, "--lexical")["repositories"]
    assert (again["remoteChanged"], again["remote"]) == (False, "github.com/acme/payments")


def test_status_says_when_the_indexed_commit_left_heads_history_and_sync_moves_on(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    clone = make_clone(tmp_path, "billing", dict(BILLING))
    org_json(home, database, "add", str(clone))
    org_sync(home, database, "--lexical")
    first = git(clone, "rev-parse", "HEAD")
    assert indexed_at(home, database) == (first, "head")

    # a commit that leaves the memory alone: HEAD moved on; the next sync records HEAD
    (clone / "README.md").write_text("billing\n")
    git(clone, "add", "README.md")
    git(clone, "commit", "-qm", "readme")
    assert indexed_at(home, database) == (first, "behind")
    (synced,) = org_sync(home, database, "--lexical")["repositories"]
    head = git(clone, "rev-parse", "HEAD")
    assert indexed_at(home, database) == (head, "head")
    assert (synced["outcome"], synced["commit"], synced["replacedCommit"]) == (
        "unchanged",
        head,
        None,
    )

    # the indexed commit amended (then pruned, as a force-pushed clone's gc would)
    git(clone, "commit", "-q", "--amend", "-m", "readme, reworded")
    git(clone, "reflog", "expire", "--expire=now", "--all")
    git(clone, "gc", "-q", "--prune=now")
    assert indexed_at(home, database) == (head, "not-in-history")
    code, text = org(home, database, "status")
    assert code == 0 and f"at {head[:12]} (not in HEAD's history)" in text
    assert "rewritten (force-push, rebase or amend?): `teamlore org sync` indexes HEAD" in text
    (synced,) = org_sync(home, database, "--lexical")["repositories"]
    amended = git(clone, "rev-parse", "HEAD")
    assert indexed_at(home, database) == (amended, "head")
    assert (synced["outcome"], synced["commit"], synced["replacedCommit"]) == (
        "unchanged",
        amended,
        head,
    )

    # a rewrite that changes the memory (reset to an older commit, then a new one, pushed
    # with --force): the documents follow HEAD, and the replaced commit is named
    git(clone, "reset", "-q", "--hard", "HEAD~1")
    commit_memory(clone, {"deploy-billing": "Deploy billing on Tuesdays."}, "rewritten")
    code, text = org(home, database, "sync", "--lexical")
    rewritten = git(clone, "rev-parse", "HEAD")
    assert code == 0
    assert f"    {amended[:12]} is no longer in HEAD's history; now at {rewritten[:12]}" in text
    assert found(org_json(home, database, "search", "Tuesdays", "--lexical")) == [
        ("billing", "deploy-billing")
    ]
    assert found(org_json(home, database, "search", "payroll", "--lexical")) == []
    assert indexed_at(home, database) == (rewritten, "head")


def test_a_clone_that_is_not_on_this_machine_leaves_the_commits_state_unknown(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """A server that serves the index without the clones cannot tell: null, not a guess."""
    clone = make_clone(tmp_path, "billing", dict(BILLING))
    org_json(home, database, "add", str(clone))
    org_sync(home, database, "--lexical")
    head = git(clone, "rev-parse", "HEAD")
    clone.rename(clone.with_name("elsewhere"))
    assert indexed_at(home, database) == (head, None)


def test_a_shallow_clone_moved_forward_is_not_called_rewritten(tmp_path: Path) -> None:
    """A shallow clone's history ends where it was cut: after a fetch of the next commit the
    old one is outside it, as after a rewrite. That cannot be told there: unknown, not a
    rewrite. A full clone's rewrite is still named."""
    from teamlore.org.reader import commit_state

    origin = make_clone(tmp_path, "origin", dict(BILLING))
    commit_memory(origin, {"second": "second"}, "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(shallow))
    old = git(shallow, "rev-parse", "HEAD")
    commit_memory(origin, {"third": "third"}, "third")
    git(shallow, "fetch", "-q", "--depth", "1", "origin")
    git(shallow, "reset", "-q", "--hard", "FETCH_HEAD")
    assert commit_state(shallow, old) is None

    assert commit_state(origin, old) == "behind"  # the full history holds it
    third = git(origin, "rev-parse", "HEAD")
    git(origin, "commit", "-q", "--amend", "-m", "third, amended")
    assert commit_state(origin, third) == "not-in-history"
