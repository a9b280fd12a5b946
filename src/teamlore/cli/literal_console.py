"""The Rich console every text renderer prints through (docs/cli-output.md). Imported when
something is first printed as text (`teamlore.cli.output.stdout`), so JSON output never loads
rich."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from teamlore.cli import reader_went_away
from teamlore.cli.literal import literal

# The narrowest width text is laid out for (docs/cli-output.md, "A width that holds text"): a
# width under UNKNOWN_BELOW (COLUMNS=0, a pseudo-terminal of no size) is no width at all and
# is taken as unknown, 80 columns, as rich takes COLUMNS=abc; one under NARROWEST as NARROWEST,
# where a table's columns still hold a word or two and the terminal wraps the rest.
UNKNOWN_BELOW = 20
NARROWEST = 40


class LiteralConsole(Console):
    """A Rich console that prints what it is given: no markup, no emoji codes, no
    highlighting, control characters made visible (`literal`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, soft_wrap=True, **options)
        if self.width < UNKNOWN_BELOW:
            self.width = 80
        elif self.width < NARROWEST:
            self.width = NARROWEST

    def print(self, *objects: Any, **options: Any) -> None:
        options.pop("markup", None)
        options.pop("highlight", None)
        super().print(
            *(literal(o) if isinstance(o, str) else o for o in objects),
            markup=False,
            highlight=False,
            **options,
        )

    def on_broken_pipe(self) -> None:
        """The reader of the output went away (`| head -1`): the command ends as on every other
        path (`reader_went_away`: 0, quietly), where rich's own exits 1."""
        self.quiet = True
        raise SystemExit(reader_went_away())
