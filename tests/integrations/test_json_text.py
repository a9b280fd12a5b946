"""Format-preserving JSON edits (integrations/json_text.py): what teamlore does not change stays
byte-identical, a new member looks like its siblings, and what cannot be preserved is refused
with CLIENT_CONFIG_INVALID naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from teamlore.core import errors
from teamlore.integrations.json_text import JsonText

HERE = Path("settings.json")
SERVER = {"type": "stdio", "command": "teamlore", "args": ["mcp"], "env": {}}


def added_then_removed(text: str) -> tuple[str, str]:
    doc = JsonText(text, HERE)
    doc.set(("mcpServers", "teamlore"), SERVER)
    doc.append(("hooks", "SessionStart"), {"hooks": [{"command": "teamlore hook"}]})
    added = doc.text
    doc.remove_items(("hooks", "SessionStart"), [len(doc.items(("hooks", "SessionStart"))) - 1])
    if not doc.items(("hooks", "SessionStart")):
        doc.delete(("hooks", "SessionStart"))
    doc.delete(("mcpServers", "teamlore"))
    return added, doc.text


@pytest.mark.parametrize(
    "original",
    [
        '{\n  "big": 1e400,\n  "tiny": 1E-400,\n  "n": -0.0\n}\n',
        '{\n  "a": 1,\n  "a": 2\n}\n',
        '{\n  "s": "\\u00e9\\/\\t\\ud83d\\ude00",\n  "k": "é"\n}',
        '{\n    "z": 1,\n    "a": {"x": [1,2 , 3]}\n}\n',
        '{\r\n\t"tabs": true\r\n}\r\n',
        '{"minified":true,"x":[null]}',
        '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  },\n  "hooks": {\n'
        '    "SessionStart": [{"hooks": []}]\n  }\n}\n',
    ],
)
def test_an_edit_and_its_inverse_leave_every_other_byte_as_it_was(original: str) -> None:
    added, removed = added_then_removed(original)
    assert removed == original
    assert json.loads(added)["mcpServers"]["teamlore"] == SERVER
    assert json.loads(added)["hooks"]["SessionStart"][-1]["hooks"][0]["command"] == "teamlore hook"


def test_a_new_member_copies_the_indentation_and_line_endings_of_its_siblings() -> None:
    doc = JsonText('{\r\n\t"a": 1\r\n}\r\n', HERE)
    doc.set(("mcpServers", "teamlore"), {"args": ["x"]})
    assert doc.text == (
        '{\r\n\t"a": 1,\r\n\t"mcpServers": {\r\n\t\t"teamlore": {\r\n\t\t\t"args": [\r\n'
        '\t\t\t\t"x"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}\r\n'
    )


def test_an_empty_or_absent_file_gets_two_space_indentation() -> None:
    doc = JsonText("", HERE)
    doc.set(("mcpServers", "teamlore"), {"command": "teamlore"})
    assert (
        doc.text
        == '{\n  "mcpServers": {\n    "teamlore": {\n      "command": "teamlore"\n    }\n  }\n}\n'
    )


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        ('{\n  "name": "\\ud800"\n}', 2, "lone surrogate"),
        ('{\n  "a": 1,\n}', 3, "expected a quoted key"),
        ('{\n  "a": NaN\n}', 2, "expected a value"),
        ("[1]", 1, "not a JSON object"),
        ('{"a": "tab\there"}', 1, "control character"),
        ('{"a": ' + "[" * 2000, 1, "nested deeper"),
        ('{"a": 1} x', 1, "after the top-level value"),
    ],
)
def test_what_is_not_strict_json_is_refused_naming_the_line(text: str, line: int, why: str) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        JsonText(text, HERE)
    assert caught.value.code == "CLIENT_CONFIG_INVALID"
    assert f"line {line}:" in caught.value.message and why in caught.value.message


def test_a_key_given_twice_on_the_edited_path_is_refused_and_elsewhere_kept() -> None:
    kept = JsonText('{"x": 1, "x": 2}', HERE)
    kept.set(("mcpServers", "teamlore"), 1)
    assert kept.text.startswith('{"x": 1, "x": 2, ')
    doubled = JsonText('{\n  "mcpServers": {},\n  "mcpServers": {"a": 1}\n}', HERE)
    with pytest.raises(errors.TeamloreError) as caught:
        doubled.set(("mcpServers", "teamlore"), 1)
    assert caught.value.code == "CLIENT_CONFIG_INVALID" and "line 3:" in caught.value.message


def test_a_parent_of_another_type_is_refused() -> None:
    doc = JsonText('{\n  "hooks": []\n}', HERE)
    with pytest.raises(errors.TeamloreError) as caught:
        doc.append(("hooks", "SessionStart"), {})
    assert caught.value.code == "CLIENT_CONFIG_INVALID" and "`hooks` is not an object" in (
        caught.value.message
    )
