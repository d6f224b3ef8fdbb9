"""The files the tutorial ships in docs/examples/tutorial/ load and import cleanly."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.io.items import load_items
from judgekit.rubrics import load_rubric

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tutorial"


def test_tutorial_files_import_and_validate(tmp_path: Path) -> None:
    items = load_items(EXAMPLES / "outputs.jsonl")
    assert len(items) == 40 and {item.slice for item in items} >= {"account", "billing"}
    rubric = load_rubric(EXAMPLES / "rubrics" / "resolves.toml")
    assert rubric.name == "resolves" and rubric.scale.kind == "binary"
    db = str(tmp_path / "t.db")
    runner = CliRunner()
    imported = runner.invoke(cli, ["import", str(EXAMPLES / "outputs.jsonl"), "--name",
                                   "support-bot", "--db", db], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    labels = runner.invoke(cli, ["labels", "import", str(EXAMPLES / "bo-labels.csv"), "-r",
                                 str(EXAMPLES / "rubrics" / "resolves.toml"), "--db", db],
                           catch_exceptions=False)
    assert labels.exit_code == 0, labels.output
    assert "imported 12 label(s)" in labels.output
