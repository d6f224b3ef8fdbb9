"""Endpoint adapters: the ``openai`` client, capability probing, failure categories, retries."""

from __future__ import annotations

from judgekit.clients.capabilities import Capabilities, capabilities_for, probe_capabilities
from judgekit.clients.openai_client import (
    DEFAULT_API_KEY_ENV,
    CallResult,
    JudgeClient,
    JudgeSpec,
    public_base_url,
    redact,
    response_format_for,
)
from judgekit.clients.retry import Failure, RetryPolicy, classify, parse_retry_after, with_retries

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
