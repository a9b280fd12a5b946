"""Where the state dir is (core/locations.py): on Linux the common cases are answered without
importing platformdirs, and the answer is platformdirs' own."""

from __future__ import annotations

import os
import subprocess
import sys

import platformdirs
import pytest

from teamlore.core.locations import state_dir_location, state_dir_path

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the Linux rule")


@linux_only
@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "/home/mei"},
        {"HOME": "/home/mei/"},
        {"HOME": "/"},
        {"HOME": "/home/mei", "XDG_STATE_HOME": ""},
        {"HOME": "/home/mei", "XDG_STATE_HOME": "/var/state"},
        {"HOME": "/home/mei", "XDG_STATE_HOME": "/var/state/"},
        {"HOME": "relative", "XDG_STATE_HOME": "/var/state"},
        # answered by platformdirs itself
        {"HOME": "/home/mei", "XDG_STATE_HOME": "relative/state"},
        {"HOME": "/home/mei", "XDG_STATE_HOME": "  "},
    ],
)
def test_the_state_dir_is_the_one_platformdirs_names(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TEAMLORE_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    expected = os.path.expanduser(platformdirs.user_state_dir("teamlore", appauthor=False))
    assert state_dir_location(os.environ) == expected
    assert state_dir_path() == type(state_dir_path())(expected)


def test_teamlore_home_names_the_state_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/mei")
    assert state_dir_location({"TEAMLORE_HOME": "~/state-here", "HOME": "/x"}) == (
        "/home/mei/state-here"  # `~` is the process's home, as everywhere else
    )
    assert state_dir_location({"TEAMLORE_HOME": "/srv/teamlore"}) == "/srv/teamlore"


@linux_only
def test_a_user_with_a_home_loads_no_platformdirs() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TEAMLORE_HOME", "XDG_STATE_HOME")}
    code = (
        "import sys; from teamlore.core.locations import state_dir_path; p = state_dir_path();"
        " print(p, 'platformdirs' in sys.modules, 'tempfile' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={**env, "HOME": "/home/mei"}, capture_output=True
    )
    assert done.stdout.decode().split() == ["/home/mei/.local/state/teamlore", "False", "False"]
