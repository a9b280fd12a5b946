"""Skills: the team's repeatable procedures (`skills/<name>/SKILL.md`, docs/assemble.md)."""
