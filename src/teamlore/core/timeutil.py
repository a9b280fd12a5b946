"""Instants as canonical UTC strings (`2025-01-31T12:00:00.000Z`), comparable as text."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def format_instant(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_instant(text: str) -> str:
    """Accept an ISO-8601 date or date-time (offset or Z; naive means UTC)."""
    raw = text.strip()
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO-8601 date or date-time") from None
    return format_instant(moment)


def instant_ns(instant: str) -> int:
    """A canonical instant in nanoseconds since the epoch, as a file's `st_mtime_ns` is."""
    moment = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    return round(moment.timestamp() * 1000) * 1_000_000


def now_instant() -> str:
    return format_instant(datetime.now(UTC))


def now_ms() -> int:
    """Milliseconds since the epoch, the unit the state database stores times in."""
    return time.time_ns() // 1_000_000
