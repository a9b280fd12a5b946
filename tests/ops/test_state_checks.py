"""`doctor`'s check of the state dir's permissions (ops/integrations/state_checks.py): its fix
is a command a person pastes, or shares, as it is printed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from teamlore.ops.integrations.state_checks import _unreadable_sessions, state_dir_check


def test_the_permissions_fix_names_the_home_folder_as_tilde_and_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fix said `chmod -R go-rwx /home/NAME/...`: the user's name in every pasted report,
    where every other line of doctor says `~`. The `~` stays outside the quotes, so a shell
    still expands it: the fix, run as printed, makes the state dir private."""
    monkeypatch.setenv("HOME", str(tmp_path))
    state = tmp_path / ".local" / "state" / "team lore"  # a name the shell needs quoted
    (state / "personal").mkdir(parents=True)
    state.chmod(0o755)

    check = state_dir_check(state)

    assert (check.status, check.fix) == ("fail", "chmod -R go-rwx ~/'.local/state/team lore'")
    subprocess.run(["sh", "-c", check.fix], env={"HOME": str(tmp_path)}, check=True)
    assert state_dir_check(state).status == "ok"


@pytest.mark.parametrize(("count", "said"), [(1, "1 file or folder"), (3, "3 files or folders")])
def test_what_the_last_sync_could_not_read_is_counted_in_the_right_number(
    count: int, said: str
) -> None:
    """doctor said `could not read 1 files or folders`."""
    status = {
        "sources": [],
        "lastSyncUnreadable": {
            "count": count,
            "recent": [{"file": "~/.codex/sessions/2026", "message": "Permission denied"}],
        },
    }
    assert _unreadable_sessions(status) == (
        f"the last sync could not read {said} (first: ~/.codex/sessions/2026: Permission denied)"
    )
