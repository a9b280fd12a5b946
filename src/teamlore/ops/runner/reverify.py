"""`memory.reverify_runner`: the runner conformance probe (docs/runner.md)."""

from __future__ import annotations

from typing import Any

from teamlore.core import errors
from teamlore.ops.registry import OpContext, operation
from teamlore.ops.runner.plans import REVERIFY_FORMAT, ReverifyRequest, _choice
from teamlore.runner.usage import saying_spend, total_usage

# -- reverify -----------------------------------------------------------------------------------


@operation("memory.reverify_runner", input_model=ReverifyRequest, side_effect="state-write")
def memory_reverify_runner(ctx: OpContext, request: ReverifyRequest) -> dict[str, Any]:
    """Run the runner's conformance probe and record the verdict for this binary and version."""
    from teamlore.memory.store.state_db import open_state_db
    from teamlore.runner.conformance import CONFORMANCE_TEST_VERSION, record_verdict, run_probe
    from teamlore.runner.profiles import resolve_runner

    runner = resolve_runner(_choice(request), home=ctx.home)
    if ctx.progress is not None:  # a real runner takes tens of seconds: say what we wait for
        ctx.progress(0, 1, f"waiting for {request.runner} to answer the probe")
    try:
        verdict = run_probe(runner)
    except errors.TeamloreError as err:  # the run failed; it may still have cost
        raise _probe_advice(saying_spend(err)) from None
    if ctx.progress is not None:
        ctx.progress(1, 1, "recording the verdict")
    state = open_state_db(ctx.home)
    try:
        record_verdict(state, runner, verdict)
    finally:
        state.close()
    result = {
        "action": "reverify-runner",
        "format": REVERIFY_FORMAT,
        "runner": request.runner,
        "binary": runner.binary.to_json(),
        "model": runner.model,
        "endpoint": runner.endpoint,
        "testVersion": CONFORMANCE_TEST_VERSION,
        **verdict.to_json(),
        # what the probe's run spent, in the shape an approval reports (docs/runner.md)
        "usage": total_usage([verdict.usage.to_json()]),
    }
    if not verdict.passed:
        raise saying_spend(
            errors.TeamloreError(
                errors.RUNNER_CONFORMANCE_FAILED,
                f"{request.runner} failed the conformance probe: {', '.join(verdict.failures)}",
                failures=list(verdict.failures),
                usage=verdict.usage.to_json(),
            )
        )
    return result


# a probe has no plan: the plan-approval advice of these codes does not apply
_PROBE_ADVICE = {
    errors.RUNNER_OUTPUT_INVALID.code: (
        "Run `teamlore memory reverify-runner` again; use a stronger model if it repeats."
    ),
    errors.RUNNER_OUTPUT_REJECTED.code: (
        "Run `teamlore memory reverify-runner` again; use a stronger model if it repeats."
    ),
}


def _probe_advice(err: errors.TeamloreError) -> errors.TeamloreError:
    advice = _PROBE_ADVICE.get(err.code)
    return err.advising(advice) if advice is not None else err
