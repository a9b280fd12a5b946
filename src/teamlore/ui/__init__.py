"""The local review page (`teamlore ui`): a thin adapter over the operation registry, served on
127.0.0.1 to the person's own browser. See docs/ui.md."""
