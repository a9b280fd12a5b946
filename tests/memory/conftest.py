"""Team-memory tests, in folders that mirror `teamlore.memory`'s pipeline packages.

Some test modules build on the worlds of another (`test_review.Flow`, `test_staging.World`,
`test_apply.World`), so this conftest puts `tests/memory` and its package folders on `sys.path`.
"""

import sys
from pathlib import Path

_HERE = Path(__file__).parent
for folder in (
    _HERE,
    _HERE / "store",
    _HERE / "extraction",
    _HERE / "promotion",
    _HERE / "skills",
    _HERE / "consolidation",
):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
