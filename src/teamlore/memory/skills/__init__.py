"""Skills: the team's repeatable procedures (`skills/<name>/SKILL.md`, docs/assemble.md)."""

from teamlore.memory.skills import kind as kind  # registers the candidate kind with promotion
