"""Connecting agent clients to teamlore: `teamlore install` / `uninstall` / `doctor`.

- `config_files`: read, edit and atomically write a client's JSON or TOML config without losing
  the user's other settings or comments (tomlkit round-trips TOML);
- `manifest`: the private record of what install added and the byte-exact backups uninstall
  restores;
- `entries`: the MCP server and hook entries teamlore writes (user scope pins this interpreter;
  project scope is safe to commit);
- `claude`, `codex`: where each client keeps them;
- `installer`: install and uninstall over those pieces;
- `brief`: the SessionStart hook's bounded brief;
- `doctor`: the health checks.

See docs/agents.md.
"""
