"""What one runner run spent, as its client reported it (docs/runner.md "What a run spent").

- `claude -p --output-format json`: `usage` (input tokens, the cached ones included, and output
  tokens) and `total_cost_usd` of its result;
- `codex exec --json`: the `usage` of each `turn.completed` event (tokens only: codex reports no
  cost);
- the `openai` runner: the `usage` of the HTTP response, and its `usage.cost` when the provider
  reports what the request cost (OpenRouter does).

A figure the client did not give stays None ("not reported"); nothing is estimated here. A cost
says whose figure it is (`costSource`): `provider` — what the provider itself reported for the
request, the figure it bills — or `runner-client` — Claude Code's own price list applied to the
tokens, an estimate. No runner gives both for one run; were one to, the provider's would win.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from teamlore.core import errors

CostSource = Literal["provider", "runner-client"]


@dataclass(frozen=True, slots=True)
class RunUsage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    cost_source: CostSource | None = None  # whose figure cost_usd is (None with it)

    def to_json(self) -> dict[str, Any]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "costUsd": self.cost_usd,
            "costSource": None if self.cost_usd is None else self.cost_source,
        }


NOT_REPORTED = RunUsage()


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def claude_usage(stdout: bytes) -> RunUsage:
    """The usage and cost of a `claude -p --output-format json` result (cache reads and writes
    are input tokens too: Anthropic bills them as such)."""
    try:
        result = orjson.loads(stdout)
    except orjson.JSONDecodeError:
        return NOT_REPORTED
    if not isinstance(result, dict):
        return NOT_REPORTED
    usage = result.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    fresh = _count(usage.get("input_tokens"))
    cached = [
        _count(usage.get("cache_creation_input_tokens")),
        _count(usage.get("cache_read_input_tokens")),
    ]
    cost = result.get("total_cost_usd")
    return RunUsage(
        input_tokens=None if fresh is None else fresh + (_sum(cached) or 0),
        output_tokens=_count(usage.get("output_tokens")),
        cost_usd=None if isinstance(cost, bool) or not isinstance(cost, int | float) else cost,
        cost_source="runner-client",  # Claude Code prices the tokens itself
    )


def codex_usage(stdout: bytes) -> RunUsage:
    """The summed `usage` of the `turn.completed` events `codex exec --json` prints, one JSON
    object a line (its input tokens include the cached ones)."""
    inputs: list[int | None] = []
    outputs: list[int | None] = []
    for line in stdout.splitlines():
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(event, dict) or event.get("type") != "turn.completed":
            continue
        usage = event.get("usage")
        if isinstance(usage, dict):
            inputs.append(_count(usage.get("input_tokens")))
            outputs.append(_count(usage.get("output_tokens")))
    return RunUsage(input_tokens=_sum(inputs), output_tokens=_sum(outputs))


def total_usage(runs: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The totals over the runs of one approval (each a `RunUsage.to_json()`), saying for how
    many of them a figure was not reported; None when no runner ran."""
    if not runs:
        return None
    known = [run or {} for run in runs]

    def total(key: str) -> tuple[Any, int]:
        values = [run.get(key) for run in known if run.get(key) is not None]
        return (sum(values) if values else None), len(known) - len(values)

    inputs, inputs_missing = total("inputTokens")
    outputs, outputs_missing = total("outputTokens")
    cost, cost_missing = total("costUsd")
    sources = {run.get("costSource") for run in known if run.get("costUsd") is not None}
    return {
        "runs": len(known),
        "inputTokens": inputs,
        "outputTokens": outputs,
        "costUsd": None if cost is None else round(cost, 6),
        # whose figure the cost is: one source, or `mixed` (the runs' own say which)
        "costSource": (sources.pop() if len(sources) == 1 else "mixed") if sources else None,
        "tokensNotReported": max(inputs_missing, outputs_missing),
        "costNotReported": cost_missing,
    }


def spent_words(usage: dict[str, Any]) -> str:
    """`10 input + 5 output tokens, cost $0.0001` of a run's usage (`RunUsage.to_json()`):
    what a refusal of a run that spent something says of it."""
    tokens = (
        "tokens not reported"
        if usage.get("inputTokens") is None and usage.get("outputTokens") is None
        else f"{usage.get('inputTokens') or 0:,} input + {usage.get('outputTokens') or 0:,} "
        "output tokens"
    )
    cost = usage.get("costUsd")
    if cost is None:
        return f"{tokens}, cost not reported"
    priced = f"cost ${cost:.4f}" if cost == 0 or cost >= 0.0001 else "cost < $0.0001"
    return f"{tokens}, {priced}" + (
        " (the provider's figure)" if usage.get("costSource") == "provider" else ""
    )


def saying_spend(err: errors.TeamloreError) -> errors.TeamloreError:
    """`err` of one run (an approval of one plan, the conformance probe) whose runner said what
    it spent (`details.usage`), with that spend in its message too: the text view of a refusal
    is its message, and a failed run may still have been billed."""
    spent = err.details.get("usage")
    if not isinstance(spent, dict) or all(
        spent.get(key) is None for key in ("inputTokens", "outputTokens", "costUsd")
    ):
        return err
    said = errors.TeamloreError(
        err.error, f"{err.message}; the run spent {spent_words(spent)}", **err.details
    )
    return said.advising(err.remedy)
