"""The batch runner's operations (docs/runner.md): plan, approve by digest, run, stage.

- `memory.extract_preview` (CLI `memory extract --runner R …` without an approval; MCP
  `threadshare_memory_extract_preview`): selects like `memory.recall`, records the tasks and
  writes one pending RunnerExecutionPlan@v1 per task (plus plans for drafts of earlier runs that
  still await adjudication) and an AuthorizationManifest@v1 when there are several. Sends
  nothing; returns digests and a disclosure summary, never transcript text.
- `memory.run_plan` (CLI only: `memory extract|consolidate --approve-plan|--approve-manifest D`):
  re-derives each approved plan from the current inputs and refuses on any byte change
  (RUNNER_PLAN_MISMATCH), checks the runner's conformance record, logs the authorization, runs
  the runner, validates and stages its answer. An extraction plan's drafts get an adjudication
  plan of their own, which needs its own approval (docs/runner.md "Plans and approval":
  extraction and adjudication are separate deliveries); an adjudication plan's answer
  quarantines the kept candidates for the normal review.
- `memory.reverify_runner` (CLI only): the conformance probe.
"""
