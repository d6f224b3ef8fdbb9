"""The report's "Alignment" section: the rubric's split and its latest held-out result.

Added to a rendered report by one call (:func:`add_alignment`) so the report's own
renderers need not know about ``align``: text and Markdown get a section at the end,
HTML one before ``</body>``, JSON an ``alignment`` key (null when the rubric was never
aligned). A rubric written by ``align`` shows its parent's alignment (the labels and the
split are the parent's).
"""

from __future__ import annotations

import html
import json
from typing import Any

from judgekit.align.render import DEV_CAVEAT
from judgekit.store import Store
from judgekit.store.splits import PARTS
from judgekit.types import Rubric


def alignment_summary(store: Store, rubric: Rubric, dataset: str | None = None
                      ) -> dict[str, Any] | None:
    """The split, how often test was used, the latest test result and its dev ranking."""
    record = None
    for sha in (rubric.sha256, rubric.parent):
        if sha:
            record = store.get_split(sha, dataset or "") or store.get_split(sha, "")
        if record is not None:
            break
    if record is None:
        return None
    counts = dict.fromkeys(PARTS, 0)
    for row in store.split_items(record.id):
        counts[row.part] += 1
    uses = store.split_uses(record.id)
    tests = [u for u in uses if u.part == "test"]
    latest = tests[-1] if tests else None
    return {
        "rubric_sha256": record.rubric_hash,
        "split": {"seed": record.seed, "fractions": dict(record.fractions), "counts": counts},
        "test_uses": len(tests),
        "latest": None if latest is None else {
            "who": latest.who, "created_at": latest.created_at,
            "candidates": latest.candidates, "test": latest.result.get("test"),
            "dev": [{"name": d.get("name"), "primary": d.get("primary")}
                    for d in latest.result.get("dev", [])],
        },
    }


def _lines(summary: dict[str, Any]) -> list[str]:
    split = summary["split"]
    lines = ["split (seed {}): {}".format(
        split["seed"], ", ".join(f"{split['counts'][p]} {p}" for p in PARTS))]
    latest = summary["latest"]
    if latest is None:
        return [*lines, "test split not used yet"]
    test = latest["test"] or {}
    lines.append(f"held-out result ({latest['created_at'][:19]}, by {latest['who']}): "
                 f"{test.get('sentence', 'none')}")
    lines.append(f"dev ranking ({DEV_CAVEAT}):")
    for entry in latest["dev"]:
        lines.append(f"  {entry['name']}: {_figure(entry.get('primary') or {})}")
    lines.append(f"test split used {summary['test_uses']} time(s)"
                 + (": label fresh items for a clean held-out figure"
                    if summary["test_uses"] > 1 else ""))
    return lines


def _figure(stat: dict[str, Any]) -> str:
    value, low, high = stat.get("statistic"), stat.get("ci_low"), stat.get("ci_high")
    if value is None:
        return f"undefined ({stat.get('reason', 'no items')})"
    return f"{value:.2f}" + ("" if low is None or high is None else f" [{low:.2f}, {high:.2f}]")


def add_alignment(text: str, fmt: str, summary: dict[str, Any] | None) -> str:
    """``text`` (a rendered report in ``fmt``) with the Alignment section added."""
    if fmt == "json":
        data = json.loads(text)
        data["alignment"] = summary
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    if summary is None:
        return text
    lines = _lines(summary)
    if fmt == "md":
        return text.rstrip("\n") + "\n\n## Alignment\n\n" + "\n".join(
            f"- {line}" if not line.startswith("  ") else f"  - {line.strip()}"
            for line in lines) + "\n"
    if fmt == "html":
        block = ("<section id=\"alignment\"><h2>Alignment</h2><pre>"
                 + html.escape("\n".join(lines)) + "</pre></section>")
        at = text.rfind("</body>")
        return text + block if at < 0 else text[:at] + block + text[at:]
    return text.rstrip("\n") + "\n\nAlignment\n" + "\n".join(f"  {line}" for line in lines) + "\n"
