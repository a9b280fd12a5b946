"""teamlore: local-first memory for coding agents."""

__version__ = "0.2.0.dev0"
