"""Run one Writer flush in its own process (for crash and two-Writer tests).

Usage: python writer_process.py HOME CALLS_LOG MODE [GATE]
MODE `retain`: the scripted model retains one profile section citing the whole batch.
MODE `gate`: the scripted model writes GATE+".started", waits for GATE to exist, then ignores.
The scripted model stands in for a paid model (see personal_world.py); each call is logged.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from personal_world import ScriptedModel, ignore_all, retain_all

from teamlore.personal.api import flush
from teamlore.personal.config import load_personal_settings
from teamlore.personal.model_port import WriterRequest


def main() -> int:
    home, calls_log, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    gate = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    inner = retain_all("profile", "Background", "Ecology student.")

    def respond(request: WriterRequest) -> str:
        with calls_log.open("a") as log:
            log.write(request.request_id + "\n")
        if mode == "gate" and gate is not None:
            Path(str(gate) + ".started").write_text("1")
            while not gate.exists():
                time.sleep(0.02)
            return ignore_all()(request)
        return inner(request)

    model = ScriptedModel(*([respond] * 8))
    result = flush(home, model, settings=load_personal_settings(home))
    print(json.dumps(result.to_json()))
    return 0 if result.complete else 1


if __name__ == "__main__":
    sys.exit(main())
