"""A hand-checked request (`teamlore.ops.plain_request`) refuses what a pydantic request refuses,
in the same words, without importing pydantic: the session operations' requests."""

from __future__ import annotations

import subprocess
import sys

import pytest

from teamlore.core import errors
from teamlore.ops.memory.search import SearchRequest as MemorySearchRequest
from teamlore.ops.registry import parse_request
from teamlore.ops.sessions.index import (
    SessionsListRequest,
    SessionsSearchRequest,
    SessionsShowRequest,
    StatusRequest,
    SyncRequest,
)


def refusal(model: type, payload: dict[str, object]) -> str:
    with pytest.raises(errors.TeamloreError) as caught:
        parse_request(model, payload)
    assert caught.value.code == errors.INVALID_ARGUMENT.code
    return caught.value.message


@pytest.mark.parametrize(
    ("model", "payload", "message"),
    [
        (SessionsSearchRequest, {}, "query: Field required"),
        (
            SessionsShowRequest,
            {"session_key": ""},
            # a CLI-only command's bounds in the words of the commands that check their own
            # options (`org serve --port`), not pydantic's (`cli_words`)
            "session_key: must not be empty",
        ),
        (
            SessionsSearchRequest,
            {"query": "x" * 4097},
            # teamlore's words here, not pydantic's: how long it is, and how to shorten it
            "query: too long to search: 4,097 characters (at most 4,096); keep the words that"
            " tell it apart, such as the error line of a stack trace",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "limit": 0},
            "limit: must be between 1 and 500",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "limit": 501},
            "limit: must be between 1 and 500",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "limit": True},
            "limit: Input should be a valid integer",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "lexical": "yes"},
            "lexical: Input should be a valid boolean",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "surprise": 1},
            "surprise: Extra inputs are not permitted",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "provider": "nope"},
            "provider: unknown provider 'nope' (one of: claude, codex, pi)",
        ),
        (
            SessionsSearchRequest,
            {"query": "x", "since": "garbage"},
            "since: 'garbage' is not an ISO-8601 date or date-time",
        ),
        (
            SessionsListRequest,
            {"unmapped": True, "repository": "r"},
            "repository: unmapped sessions belong to no repository: give --unmapped or"
            " --repository, not both",
        ),
        (
            SessionsShowRequest,
            {"session_key": "k", "tool": 2},
            "tool: a tool call is numbered within its turn: give the turn too (--turn N --tool M)",
        ),
        (
            SessionsShowRequest,
            {"session_key": "k", "turn": 2**63},
            "turn: must be between 1 and 9223372036854775807",
        ),
        (SyncRequest, {"sources": "a"}, "sources: Input should be a valid list"),
        (SyncRequest, {"sources": ["a", 3]}, "sources.1: Input should be a valid string"),
        (
            SyncRequest,
            {"wait_seconds": -1},
            "wait_seconds: must be between 0 and 3600",
        ),
    ],
)
def test_a_refusal_names_the_field_in_pydantics_words(
    model: type, payload: dict[str, object], message: str
) -> None:
    assert refusal(model, payload) == message


@pytest.mark.parametrize("model", [SessionsSearchRequest, MemorySearchRequest])
def test_an_empty_query_is_query_empty_not_invalid_argument(model: type) -> None:
    """An empty query is refused as a blank one is, QUERY_EMPTY (docs/search.md), not
    INVALID_ARGUMENT from the request: the schema has no lower bound for it to break. Session
    search's request refuses it itself, before the search-time refresh writes the index; memory
    search's operation does, before it syncs the projection."""
    assert "minLength" not in model.model_json_schema()["properties"]["query"]
    if model is MemorySearchRequest:
        assert parse_request(model, {"query": ""}).query == ""
        return
    for query in ("", " ", "?!"):
        with pytest.raises(errors.TeamloreError) as caught:
            parse_request(model, {"query": query})
        assert caught.value.code == "QUERY_EMPTY" and caught.value.exit_code == 2


def test_a_reversed_or_empty_window_is_refused_as_a_window() -> None:
    """`--since` after `--until` matched nothing and said so as "no matching turns": a usage
    error naming both ends, with recall's code for a bad window."""
    for model, payload in ((SessionsSearchRequest, {"query": "q"}), (SessionsListRequest, {})):
        for since, until in (("2026-02-01", "2026-01-01"), ("2026-01-01", "2026-01-01")):
            with pytest.raises(errors.TeamloreError) as caught:
                parse_request(model, {**payload, "since": since, "until": until})
            assert caught.value.code == "WINDOW_INVALID" and caught.value.exit_code == 2
            assert caught.value.message == (
                f"since {since}T00:00:00.000Z is not before until {until}T00:00:00.000Z:"
                " the window is empty or reversed"
            )
    window = {"since": "2026-01-01", "until": "2026-01-02"}
    assert parse_request(SessionsListRequest, window).until == "2026-01-02T00:00:00.000Z"


def test_a_request_takes_its_defaults_aliases_and_own_parses() -> None:
    search = parse_request(SessionsSearchRequest, {"query": "q", "since": "2026-01-02"})
    assert (search.limit, search.lexical, search.sync_first) == (20, False, True)
    assert search.since == "2026-01-02T00:00:00.000Z"
    sync = parse_request(SyncRequest, {"discardHistory": True, "wait_seconds": 5})
    assert sync.discard_history is True and sync.wait_seconds == 5.0
    assert parse_request(SyncRequest, {"discard_history": True}).discard_history is True
    assert parse_request(StatusRequest, {"check": True}).integrity is True


def test_the_schema_describes_what_is_accepted() -> None:
    schema = SessionsSearchRequest.model_json_schema()
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    assert schema["properties"]["limit"] == {"type": "integer", "minimum": 1, "maximum": 500}
    assert SyncRequest.model_json_schema()["properties"]["discardHistory"]["type"] == "boolean"


@pytest.mark.parametrize(
    ("module", "request_class", "payload"),
    [
        ("teamlore.ops.sessions.index", "SessionsSearchRequest", "{'query': 'q'}"),
        # an MCP tool's contract too (below): the CLI's typed values never need its twin
        ("teamlore.ops.memory.search", "SearchRequest", "{'query': 'q', 'limit': 3}"),
    ],
)
def test_a_plain_request_loads_and_validates_without_pydantic(
    module: str, request_class: str, payload: str
) -> None:
    code = (
        f"import sys, {module} as m; m.{request_class}.model_validate({payload});"
        "print(sorted(n for n in sys.modules if n.split('.')[0] == 'pydantic'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- a request that is an MCP tool's contract (`contract = True`): declared once as a plain
# request; its schema and what the hand check refuses go to the pydantic model derived from it,
# so the tool behaves as when its request was a pydantic model (tests/mcp/tool_contracts.json
# pins the schema)


def test_a_contract_request_keeps_pydantics_lax_coercions() -> None:
    request = parse_request(MemorySearchRequest, {"query": "q", "limit": "5", "lexical": "yes"})
    assert (request.query, request.limit, request.lexical) == ("q", 5, True)
    assert parse_request(MemorySearchRequest, {"query": "q", "limit": 7.0}).limit == 7


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({}, "query: Field required"),
        ({"query": "q", "limit": 101}, "limit: must be between 1 and 100"),  # teamlore's words
        (
            {"query": "q" * 1025},
            # the one refusal in teamlore's words (`said_first`), as `sessions search` says it:
            # pydantic's `String should have at most 1024 characters` said neither how long
            # the query was nor what to keep
            "query: too long to search: 1,025 characters (at most 1,024); keep the words that"
            " tell it apart, such as the error line of a stack trace",
        ),
        (
            {"query": "q", "limit": "many"},
            "limit: Input should be a valid integer, unable to parse string as an integer",
        ),
        ({"query": "q", "deep": True}, "deep: Extra inputs are not permitted"),
    ],
)
def test_a_contract_request_refuses_in_pydantics_words_but_a_long_query(
    payload: dict[str, object], message: str
) -> None:
    assert refusal(MemorySearchRequest, payload) == message


def test_a_contract_requests_schema_is_its_pydantic_twins() -> None:
    schema = MemorySearchRequest.model_json_schema()
    assert schema["properties"]["limit"] == {
        "default": 10,
        "maximum": 100,
        "minimum": 1,
        "title": "Limit",
        "type": "integer",
    }
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False


def test_a_memory_search_takes_the_queries_the_search_takes() -> None:
    """The request's bound is the search's own (memory/store/search.py): a query the schema
    lets through is never refused by the search for its length."""
    from teamlore.memory.store.search import MAX_QUERY_CHARS

    schema = MemorySearchRequest.model_json_schema()["properties"]["query"]
    assert schema["maxLength"] == MAX_QUERY_CHARS
    parse_request(MemorySearchRequest, {"query": "q" * MAX_QUERY_CHARS})
