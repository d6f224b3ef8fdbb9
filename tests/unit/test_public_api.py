"""The curated top-level API: sorted, importable, and light to import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import judgekit


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert judgekit.__all__ == sorted(judgekit.__all__)
    for name in judgekit.__all__:
        assert getattr(judgekit, name) is not None, name


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = judgekit.no_such_thing  # type: ignore[attr-defined]


def test_exports_are_the_real_objects() -> None:
    from judgekit.rubrics import load_rubric
    from judgekit.store import open_store

    assert judgekit.load_rubric is load_rubric
    assert judgekit.open_store is open_store


def test_importing_the_package_does_not_import_heavy_dependencies() -> None:
    code = (
        "import sys, judgekit, judgekit.cli.main; "
        "heavy = [m for m in ('numpy', 'scipy', 'openai', 'textual') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
