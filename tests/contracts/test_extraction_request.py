"""MemoryExtractionRequest normalization and window rules."""

from __future__ import annotations

import contract_examples as ex
import pytest
from pydantic import ValidationError

from teamlore.contracts import MemoryExtractionRequest

FORMAT = "threadshare-memory-extraction-request@v1"


def request(after: str, before: str) -> MemoryExtractionRequest:
    return MemoryExtractionRequest.from_wire(
        {"format": FORMAT, "window": {"after": after, "before": before}}
    )


def test_normal_form_has_every_filter_sorted_unique_and_a_query() -> None:
    parsed = MemoryExtractionRequest.from_wire(
        {
            **ex.extraction_request(),
            "filters": {
                "providers": ["codex", "claude"],
                "resultEvidence": ["unknown", "abandoned", "unknown"],
                "toolCapabilityKeys": ["b" * 64, "a" * 64],
                "capabilityTerminalStates": ["failed", "completed", "failed"],
            },
        }
    )
    normal = parsed.normalize().to_wire()
    assert normal["filters"] == {
        "providers": ["claude", "codex"],
        "sessionKeys": [],
        "toolCapabilityKeys": ["a" * 64, "b" * 64],
        "skillCapabilityKeys": [],
        "resultEvidence": ["abandoned", "unknown"],
        "capabilityTerminalStates": ["completed", "failed"],
    }
    assert parsed.normalize().normalize() == parsed.normalize()
    assert parsed.normalize().is_normalized() and not parsed.is_normalized()


def test_a_bare_request_normalizes_with_empty_query_and_filters() -> None:
    normal = request("2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z").normalize()
    assert normal.query == ""
    assert normal.filters is not None and normal.filters.providers == ()
    assert "query" in normal.to_wire() and "filters" in normal.to_wire()


def test_window_of_exactly_366_days_is_allowed_one_millisecond_more_is_not() -> None:
    request("2024-01-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z")  # 2024 is a leap year
    with pytest.raises(ValidationError, match="366 days"):
        request("2024-01-01T00:00:00.000Z", "2025-01-01T00:00:00.001Z")


def test_window_must_not_be_empty_or_reversed() -> None:
    for before in ("2025-01-01T00:00:00.000Z", "2024-12-31T23:59:59.999Z"):
        with pytest.raises(ValidationError, match="earlier"):
            request("2025-01-01T00:00:00.000Z", before)


@pytest.mark.parametrize(
    "stamp",
    [
        "2025-01-01T00:00:00Z",
        "2025-01-01 00:00:00.000Z",
        "2025-01-01T00:00:00.000+00:00",
        "2025-13-01T00:00:00.000Z",
        "2025-02-29T00:00:00.000Z",
        "2025-01-01T24:00:00.000Z",
        "２０２５-01-01T00:00:00.000Z",
    ],
)
def test_timestamps_must_be_canonical_real_instants(stamp: str) -> None:
    with pytest.raises(ValidationError, match="after"):
        request(stamp, "2025-06-01T00:00:00.000Z")
