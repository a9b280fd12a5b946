"""Operations' first calls run at the same time (`Operation.run`): a first call that takes long (a
first `memory recall` over many sessions, a runner waiting for its approval) keeps no other
operation's first call waiting behind it. Every adapter runs calls through the registry: the stdio
server, `org serve`'s HTTP requests, the CLI.

The modules an operation imports on first use load from several threads at once safely because no
teamlore modules import each other while they load (tests/test_architecture.py); a real server
answering parallel first calls of every team tool is tests/mcp/test_client_misbehaviour.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# a fresh interpreter: an operation registered for this test waits, inside its first call, until
# released; meanwhile a real operation's first call (its modules not yet imported) must answer
ONE_FIRST_CALL_WAITS = """
import json, sys, threading
from pathlib import Path
from pydantic import BaseModel
from teamlore.ops.registry import OpContext, operation, run_operation

class Empty(BaseModel):
    pass

entered, released = threading.Event(), threading.Event()

@operation("test.waits", input_model=Empty, side_effect="read")
def waits(ctx, request):
    '''Wait until released.'''
    entered.set()
    released.wait()
    return {}

home = Path(sys.argv[1])
ctx = OpContext(cwd=home, home=home)
waiting = threading.Thread(target=run_operation, args=("test.waits", ctx, {}))
waiting.start()
entered.wait()
answers = []
other = threading.Thread(target=lambda: answers.append(run_operation("repo.list", ctx, {})))
other.start()
other.join(timeout=float(sys.argv[2]))
print(json.dumps({"answers": answers, "firstCallStillWaiting": waiting.is_alive()}))
released.set()
waiting.join()
"""
# how long the other first call may take before it counts as waiting behind the first
PATIENCE_SECONDS = 60


def test_a_first_call_that_waits_keeps_no_other_operations_first_call_waiting(
    home: Path,
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", ONE_FIRST_CALL_WAITS, str(home), str(PATIENCE_SECONDS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=PATIENCE_SECONDS * 3,
    )

    assert json.loads(run.stdout) == {
        "answers": [{"repositories": []}],
        "firstCallStillWaiting": True,
    }
