"""Where the third-party human-judgment datasets live: ``../shared/data`` beside the repo.

Tests that read them skip cleanly when the folder is absent; ``$JUDGEKIT_SHARED_DATA``
points elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("JUDGEKIT_SHARED_DATA", REPO.parent / "shared" / "data"))
