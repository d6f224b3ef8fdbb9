"""judgekit: calibrate an LLM judge against humans before you trust it."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
