"""A scripted judge for the test server: wrong on a fixed share of items until its prompt
holds few-shot examples or a keyword, then right on almost all of them.

Each item's response carries a marker ``[item ID]``; the judge reads the marker of the
item in the *user* message (the item being judged), and answers the human label for it
or the other one. Whether it is right on an item is a fixed function of the item id, so
cached and fresh calls agree. ``helped=False`` makes a judge nothing helps (as often
wrong whatever the prompt); ``per_model=True`` makes each model wrong on other items. Requests for
the optimizer model get ``optimizer_reply`` (garbage, a valid revision, a broken one...).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from tests.support.openai_server import Reply, is_probe

MARKER = re.compile(r"\[item ([A-Za-z0-9_-]+)\]")
KEYWORD = "CAREFUL"
OPTIMIZER_MODEL = "optimizer-model"
FLIP = {"pass": "fail", "fail": "pass"}


def marker(item_id: str) -> str:
    return f"[item {item_id}]"


def _share(item_id: str) -> float:
    return int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) / 16**8


def scripted_judge(
    truth: Mapping[str, str], *, helped: bool = True, weak: float = 0.35, per_model: bool = False,
    optimizer_reply: Callable[[int], str] | None = None,
) -> Callable[[dict[str, Any]], Reply | str]:
    """The responder: wrong on ``weak`` of the items unless helped (then on 3% of them)."""

    def respond(body: dict[str, Any]) -> Reply | str:
        messages = body.get("messages") or []
        if is_probe(body):
            return json.dumps({"reasoning": "ok", "verdict": "pass"})
        if body.get("model") == OPTIMIZER_MODEL:
            seed = int(body.get("seed") or 0)
            text = optimizer_reply(seed) if optimizer_reply else '{"instructions": "x"}'
            return Reply(text)
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        found = MARKER.search(user)
        if found is None:
            return json.dumps({"reasoning": "no item", "verdict": "pass"})
        item_id = found.group(1)
        human = truth[item_id]
        boosted = helped and ("Examples judged by people" in system or KEYWORD in system)
        # a judge nothing helps is wrong on as many items whatever its prompt, but which
        # ones depends on the prompt: its candidates differ from the baseline by noise alone
        which = item_id if helped else item_id + hashlib.sha256(system.encode()).hexdigest()
        if per_model:  # each model wrong on its own items (a jury's members)
            which += str(body.get("model"))
        wrong = _share(which) < (0.03 if boosted else weak)
        verdict = FLIP[human] if wrong else human
        return json.dumps({"reasoning": "scripted", "verdict": verdict})

    return respond
