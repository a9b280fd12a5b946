"""The Rich console every text renderer prints through (docs/cli-output.md). Imported when
something is first printed as text (`teamlore.cli.output.stdout`), so JSON output never loads
rich."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from teamlore.cli.literal import literal


class LiteralConsole(Console):
    """A Rich console that prints what it is given: no markup, no emoji codes, no
    highlighting, control characters made visible (`literal`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, soft_wrap=True, **options)

    def print(self, *objects: Any, **options: Any) -> None:
        options.pop("markup", None)
        options.pop("highlight", None)
        super().print(
            *(literal(o) if isinstance(o, str) else o for o in objects),
            markup=False,
            highlight=False,
            **options,
        )
