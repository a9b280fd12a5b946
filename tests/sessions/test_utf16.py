"""Windows tool output read as bytes: UTF-16LE runs are decoded back into the text meant."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from teamlore.sessions.utf16 import decode_utf16_runs


def as_agent_recorded(text: str, *, bom: bool = False) -> str:
    """What an agent records for UTF-16LE output it decoded as UTF-8 (invalid bytes -> U+FFFD)."""
    data = (b"\xff\xfe" if bom else b"") + text.encode("utf-16-le")
    return data.decode("utf-8", "replace")


def test_powershell_output_with_nuls_between_letters_is_decoded() -> None:
    recorded = "Exit code: 1\nOutput:\n" + as_agent_recorded("Test-Path : access denied\r\n")
    assert "\x00" in recorded
    assert decode_utf16_runs(recorded) == "Exit code: 1\nOutput:\nTest-Path : access denied\r\n"


def test_cyrillic_is_decoded_and_the_byte_order_mark_dropped() -> None:
    recorded = as_agent_recorded("Отказано в доступе: C:\\repo\r\n", bom=True)
    assert decode_utf16_runs(recorded) == "Отказано в доступе: C:\\repo\r\n"


def test_bytes_the_agent_could_not_decode_stay_replaced() -> None:
    assert decode_utf16_runs(as_agent_recorded("café ok")) == "caf\ufffd ok"


# code points whose high byte is a tab, newline or carriage return look like ordinary text
LOW_CODE_POINTS = st.characters(max_codepoint=0x1FFF).filter(
    lambda c: ord(c) >> 8 not in (9, 10, 13)
)


@given(st.text(alphabet=LOW_CODE_POINTS))
def test_text_of_low_code_points_survives_the_round_trip(text: str) -> None:
    recorded = as_agent_recorded(text + " done")
    decoded = decode_utf16_runs(recorded)
    # characters whose low byte is not valid UTF-8 alone come back as U+FFFD, the rest exactly
    assert len(decoded) == len(text) + 5
    for original, got in zip(text, decoded, strict=False):
        assert got in (original, "\ufffd")


def test_ordinary_text_and_binary_zeros_are_left_alone() -> None:
    for text in ("plain output\n", "a\x00b", "x\x00\x00\x00\x00\x00\x00\x00\x00y", "\x1b[0m\x00"):
        assert decode_utf16_runs(text) == text
