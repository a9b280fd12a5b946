"""`config.toml` has one reader: `teamlore.core.config` (whole file, one table, save)."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.config import (
    Config,
    RepositoryConfig,
    load_config,
    load_table,
    save_config,
    save_table,
    unknown_tables,
)
from teamlore.core.shapes.strict import STRICT

SRC = Path(__file__).resolve().parents[2] / "src" / "teamlore"


class Limits(BaseModel):
    model_config = STRICT

    turns: int = Field(default=6, ge=1)
    name: str = "x"


def write(home: Path, text: str) -> Path:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(text)
    os.chmod(path, 0o600)
    return path


def refusal(call: object) -> errors.TeamloreError:
    with pytest.raises(errors.TeamloreError) as caught:
        call()  # type: ignore[operator]
    assert caught.value.code == "CONFIG_INVALID"
    return caught.value


def test_a_missing_file_is_an_empty_config_and_a_table_its_defaults(home: Path) -> None:
    assert load_config(home) == Config()
    assert load_table("limits", Limits, home) == Limits()


def test_a_table_is_validated_by_its_owners_schema(home: Path) -> None:
    write(home, '[limits]\nturns = 3\n\n[models.fast]\nmodel = "m"\n')
    assert load_table("limits", Limits, home).turns == 3
    assert load_config(home).models == {"fast": {"model": "m"}}


def test_a_toml_syntax_error_names_the_file_and_line(home: Path) -> None:
    path = write(home, '[limits]\nturns = 3\nname = "unclosed\n')
    err = refusal(lambda: load_config(home))
    assert err.message.startswith(f"{path} line 3: ")
    assert "(at line" not in err.message


def test_a_refused_value_names_the_file_line_table_and_field(home: Path) -> None:
    path = write(home, '# limits\n\n[limits]\nname = "a"\nturns = 0\n')
    err = refusal(lambda: load_table("limits", Limits, home))
    assert err.message == (
        f"{path} line 5: [limits] turns: Input should be greater than or equal to 1"
    )
    write(home, "[limits]\nsurprise = 1\n")
    assert refusal(lambda: load_table("limits", Limits, home)).message.endswith(
        "line 2: [limits] surprise: not a setting teamlore knows here (it reads turns, name)"
    )


def test_a_byte_order_mark_is_read_past_and_errors_keep_their_line(home: Path) -> None:
    """Windows editors save config.toml with a BOM: it was `line 1: Invalid statement`."""
    path = write(home, "")
    path.write_bytes(b'\xef\xbb\xbf[embeddings]\nbackend = "off"\n')
    assert load_config(home).embeddings.backend == "off"
    path.write_bytes(b'\xef\xbb\xbf[embeddings]\nbackend = "cloud"\n')
    assert "line 2: [embeddings] backend" in refusal(lambda: load_config(home)).message


def test_a_table_no_command_reads_is_named_with_the_one_it_probably_meant(home: Path) -> None:
    write(home, '[embedings]\nbackend = "off"\n\n[model.x]\nmodel = "m"\n\n[tools]\nx = 1\n')
    assert unknown_tables(load_config(home)) == [
        "[embedings] (did you mean [embeddings]?)",
        "[model] (did you mean [models]?)",
        "[tools]",
    ]


def test_a_config_under_the_users_home_is_named_from_the_tilde(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `status` names the state dir: the refusal a person reads says `~/…/config.toml`."""
    monkeypatch.setenv("HOME", str(home.parent))
    write(home, '[limits]\nturns = 0\nname = "unclosed\n')
    shown = f"~/{home.name}/config.toml"
    assert refusal(lambda: load_config(home)).message.startswith(f"{shown} line 3: ")
    write(home, "[limits]\nturns = 0\n")
    assert refusal(lambda: load_table("limits", Limits, home)).message.startswith(
        f"{shown} line 2: [limits] turns: "
    )


def test_a_wrong_shape_for_a_known_table_is_refused_with_its_line(home: Path) -> None:
    path = write(home, "sources = {}\nmodels = 3\n")
    err = refusal(lambda: load_config(home))
    assert err.message.startswith(f"{path} line 2: [models]: ")


def test_saving_a_table_keeps_every_other_part(home: Path) -> None:
    write(home, '[sources]\ncodex = ["/x"]\n\n[future]\nkey = "kept"\n')
    save_table("limits", Limits(turns=9), home)
    config = load_config(home)
    assert config.sources == {"codex": ["/x"]}
    assert config.extra["future"] == {"key": "kept"}
    assert load_table("limits", Limits, home).turns == 9
    assert "[models]" not in (home / "config.toml").read_text()  # empty tables stay unwritten


def test_a_save_edits_the_file_keeping_comments_order_and_the_tables_it_did_not_change(
    home: Path,
) -> None:
    """config.toml is the user's file: a save rewrites the lines of the settings that changed
    and nothing else; a table that stays keeps its comments, one gone takes its own along."""
    original = (
        "# my settings\n"
        "[future]  # a later version's\n"
        'key = "kept"\n'
        "\n"
        "[sources]\n"
        "# where my sessions are\n"
        'codex = ["/x"]  # the laptop\n'
        "\n"
        "[[repositories]]  # the first\n"
        'path = "/a"\n'
        'repository_key = "ra"\n'
        'worktree_key = "wa"\n'
        "\n"
        "[[repositories]]  # the second\n"
        'path = "/b"\n'
        'repository_key = "rb"\n'
        'worktree_key = "wb"\n'
    )
    path = write(home, original)
    config = load_config(home)
    config.sources["claude"] = ["/y"]
    config.repositories.append(RepositoryConfig("/c", "rc", "wc"))
    save_config(config, home)
    added = '\n[[repositories]]\npath = "/c"\nrepository_key = "rc"\nworktree_key = "wc"\n'
    laptop = '  # the laptop\nclaude = ["/y"]\n'
    assert path.read_text() == original.replace("  # the laptop\n", laptop) + added
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    config = load_config(home)
    del config.repositories[0]
    save_config(config, home)
    text = path.read_text()
    assert "# the first" not in text and "[[repositories]]  # the second\n" in text
    assert text.startswith("# my settings\n[future]  # a later version's\n")
    assert [r.path for r in load_config(home).repositories] == ["/b", "/c"]


def test_a_save_that_changes_nothing_writes_nothing(home: Path) -> None:
    """tomlkit dumps an array of tables split by another table in another order: a save with
    nothing to change leaves the file alone (not re-dumped), whatever its layout."""
    original = (
        "[[repositories]]  # A\npath = '/a'\nrepository_key = 'r'\nworktree_key = 'wa'\n\n"
        "[sources]\ncodex = ['/x']\n\n# about B\n"
        "[[repositories]]  # B\npath = '/b'\nrepository_key = 'r'\nworktree_key = 'wb'\n"
    )
    path = write(home, original)
    before = os.stat(path).st_mtime_ns, os.stat(path).st_ino
    save_config(load_config(home), home)
    assert path.read_text() == original
    assert (os.stat(path).st_mtime_ns, os.stat(path).st_ino) == before


def test_lines_a_save_adds_to_a_crlf_file_end_in_crlf(home: Path) -> None:
    path = write(home, "[sources]\r\n# mine\r\ncodex = ['/x']\r\n")
    config = load_config(home)
    config.sources["claude"] = ["/y"]
    save_config(config, home)
    data = path.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b"# mine\r\n" in data
    assert load_config(home).sources == {"codex": ["/x"], "claude": ["/y"]}


def test_a_table_added_inside_an_inline_table_is_inline(home: Path) -> None:
    """TOML allows no `[table]` inside `{ … }`: tomlkit refused with a bare ValueError."""
    path = write(home, "personal = { allowed_scopes = ['global'] }\n")
    config = load_config(home)
    config.personal["batch"] = {"idle_seconds": 30}
    save_config(config, home)
    assert load_config(home).personal == {
        "allowed_scopes": ["global"],
        "batch": {"idle_seconds": 30},
    }
    assert path.read_text().startswith("personal = {")


def test_a_saved_table_writes_only_the_settings_someone_chose(home: Path) -> None:
    """A schema default the file does not hold stays unwritten (it follows the default); a
    value the file holds stays, default or not."""
    path = write(home, "[limits]\n# how many\nturns = 6\n")
    save_table("limits", Limits(turns=6, name="y"), home)
    assert path.read_text() == '[limits]\n# how many\nturns = 6\nname = "y"\n'
    save_table("limits", Limits(turns=6, name="x"), home)  # back to the default: still chosen
    assert path.read_text() == '[limits]\n# how many\nturns = 6\nname = "x"\n'


def test_readonly_reading_creates_and_tightens_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "never"
    assert load_config(missing, readonly=True) == Config()
    assert load_table("limits", Limits, missing, readonly=True) == Limits()
    assert not missing.exists()
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "config.toml").write_text("[limits]\nturns = 2\n")
    os.chmod(loose / "config.toml", 0o644)
    assert load_table("limits", Limits, loose, readonly=True).turns == 2
    assert stat.S_IMODE(os.stat(loose / "config.toml").st_mode) == 0o644


def test_a_symlinked_config_is_refused_even_when_reading_readonly(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.toml").write_text("")
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").symlink_to(tmp_path / "elsewhere.toml")
    refusal(lambda: load_config(state, readonly=True))


def test_save_then_load_round_trips(home: Path) -> None:
    config = Config(sources={"claude": ["/a"]}, models={"default": {"model": "m"}})
    save_config(config, home)
    assert load_config(home) == config


def test_control_characters_in_a_value_are_saved_so_the_file_reads_back(home: Path) -> None:
    """A raw DEL or NUL in a TOML string makes the whole file unreadable: they are escaped."""
    odd = 'x\x7fy \x00\x1b[31m \t\r\n "quoted" back\\slash'
    save_table("limits", Limits(name=odd), home)
    assert load_table("limits", Limits, home).name == odd
    config = Config(sources={odd: [odd]}, extra={"future": {odd: odd}})
    save_config(config, home)
    assert load_config(home) == config


def test_only_core_config_parses_toml() -> None:
    """Every reader of config.toml goes through `teamlore.core.config`."""
    readers = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if "tomllib" in names:
                readers.add(path.relative_to(SRC).as_posix())
    assert readers == {"core/config.py"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[embeddings]\nbackend = "cloud"\n',
            "line 2: [embeddings] backend: Input should be 'bundled', 'endpoint' or 'off'",
        ),
        (
            "[embeddings]\ndimensions = 4\n",
            "line 2: [embeddings] dimensions: Input should be greater than or equal to 8",
        ),
        (
            '[embeddings]\nsurprise = "x"\n',
            "line 2: [embeddings] surprise: not a setting teamlore knows here "
            "(it reads backend, profile, dimensions)",
        ),
        ('[sources]\ncodex = "/x"\n', "line 2: [sources] codex: Input should be a valid list"),
        (
            '[[repositories]]\npath = "/r"\n',
            "line 1: [repositories] 0.repository_key: Field required",
        ),
    ],
)
def test_the_files_own_tables_are_refused_in_the_same_words(
    home: Path, text: str, message: str
) -> None:
    path = write(home, text)
    assert refusal(lambda: load_config(home)).message == f"{path} {message}"


def test_reading_the_file_does_not_import_pydantic(home: Path) -> None:
    write(home, '[sources]\ncodex = ["/x"]\n\n[embeddings]\nbackend = "off"\n')
    code = (
        "import sys; from teamlore.core.config import load_config;"
        f"print(load_config(__import__('pathlib').Path({str(home)!r})).sources,"
        " sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{'codex': ['/x']} []"
