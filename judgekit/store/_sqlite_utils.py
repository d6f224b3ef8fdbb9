"""sqlite-utils without pandas and numpy: ``Database`` and ``Migrations`` for the store.

sqlite-utils imports pandas and numpy when they are installed, only to map
their scalar types to column types when it creates tables from Python values,
which the store never does (its tables come from SQL migrations). Importing
them costs over a second and 90 MB on every store command, so they are hidden
while sqlite-utils loads. Importing them later works as usual.
"""

from __future__ import annotations

import sys

#: Hidden only when not imported yet (a notebook's pandas is left alone).
_HIDDEN = [name for name in ("pandas", "numpy") if name not in sys.modules]
for _name in _HIDDEN:
    sys.modules[_name] = None  # type: ignore[assignment]  # import -> ImportError
try:
    from sqlite_utils import Database, Migrations
finally:
    for _name in _HIDDEN:
        del sys.modules[_name]

__all__ = ["Database", "Migrations"]
