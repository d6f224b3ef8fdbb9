"""Endpoint adapters: the ``openai`` client, capability probing, failure categories, retries.

Names are resolved lazily (PEP 562): naming a judge (``JudgeSpec``) must not
import the ``openai`` client, so that a rerun whose calls are all cached starts
fast. The HTTP side is imported on first use of a name that needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgekit.clients.capabilities import Capabilities, capabilities_for, probe_capabilities
    from judgekit.clients.openai_client import CallResult, JudgeClient
    from judgekit.clients.request import response_format_for
    from judgekit.clients.retry import (
        Failure,
        RetryPolicy,
        classify,
        parse_retry_after,
        with_retries,
    )
    from judgekit.clients.spec import DEFAULT_API_KEY_ENV, JudgeSpec, public_base_url, redact

#: public name -> module under judgekit.clients
_EXPORTS: dict[str, str] = {
    "DEFAULT_API_KEY_ENV": "spec",
    "CallResult": "openai_client",
    "Capabilities": "capabilities",
    "Failure": "retry",
    "JudgeClient": "openai_client",
    "JudgeSpec": "spec",
    "RetryPolicy": "retry",
    "capabilities_for": "capabilities",
    "classify": "retry",
    "parse_retry_after": "retry",
    "probe_capabilities": "capabilities",
    "public_base_url": "spec",
    "redact": "spec",
    "response_format_for": "request",
    "with_retries": "retry",
}

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "CallResult",
    "Capabilities",
    "Failure",
    "JudgeClient",
    "JudgeSpec",
    "RetryPolicy",
    "capabilities_for",
    "classify",
    "parse_retry_after",
    "probe_capabilities",
    "public_base_url",
    "redact",
    "response_format_for",
    "with_retries",
]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'judgekit.clients' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"judgekit.clients.{module}"), name)
    globals()[name] = value  # cache: later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return __all__
