"""Probe variants: swapped pairs are really swapped, reversed levels really reversed, padding is
neutral and lands on its target length."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.errors import InputError
from judgekit.judging.probes import (
    DEFAULT_FILLER,
    added_chars,
    check_levels,
    length_units,
    load_filler,
    pad_item,
    pad_text,
    padded_side,
    padding_variant,
    position_units,
)
from judgekit.rubrics import load_rubric, render_messages
from judgekit.types import Item

PAIR = Item(
    id="p1",
    input="Which planet is largest?",
    response_a="Jupiter is the largest planet.",
    response_b="Saturn, probably.",
)
POINT = Item(id="r1", input="What is 2 + 2?", response="2 + 2 equals 4, as addition shows.")


@pytest.fixture(scope="module")
def preference():
    return load_rubric("rubrics/preference.toml")


@pytest.fixture(scope="module")
def helpfulness():
    return load_rubric("rubrics/helpfulness.toml")


def _user(messages: list[dict[str, str]]) -> str:
    return messages[-1]["content"]


def test_swapped_prompt_shows_b_first_and_maps_labels_back(preference) -> None:
    units = position_units([PAIR], preference)
    assert [u.variant for u in units] == ["", "swapped"]
    plain, swapped = units
    text = _user(render_messages(preference, plain.item))
    swapped_text = _user(render_messages(preference, swapped.item))
    assert text != swapped_text
    # as written: A shows Jupiter; swapped: A shows Saturn and B shows Jupiter
    assert text.index("Jupiter") < text.index("Saturn")
    assert swapped_text.index("Saturn") < swapped_text.index("Jupiter")
    after_a = swapped_text.split("Response A:")[1].split("Response B:")[0]
    after_b = swapped_text.split("Response B:")[1]
    assert PAIR.response_b in after_a and PAIR.response_a not in after_a
    assert PAIR.response_a in after_b
    assert swapped.swap_labels and not plain.swap_labels
    assert swapped.item.id == PAIR.id and swapped.source_hash == PAIR.content_hash
    assert swapped.item.content_hash != PAIR.content_hash  # a different call, a different key


def test_pointwise_position_probe_reverses_the_listed_levels(helpfulness) -> None:
    plain, reversed_ = position_units([POINT], helpfulness)
    assert reversed_.variant == "reversed_levels" and reversed_.reverse_levels
    text = _user(render_messages(helpfulness, plain.item))
    rev = _user(render_messages(helpfulness, reversed_.item, reverse_levels=True))
    assert text.index("- 1:") < text.index("- 5:")
    assert rev.index("- 5:") < rev.index("- 1:")


@pytest.mark.parametrize("level", [25, 50, 100])
def test_padding_reaches_the_target_within_one_word(level: int) -> None:
    text = "x" * 200
    padded = pad_text(text, level, DEFAULT_FILLER, input_text="the question")
    target = 200 * level // 100
    added = len(padded) - len(text)
    assert padded.startswith(text + "\n\n")
    assert target <= added <= target + max(len(w) for s in DEFAULT_FILLER for w in s.split()) + 12
    assert not padded.endswith(" ")


def test_padding_is_content_free_and_substitutes_the_input_literally() -> None:
    filler = ["Restated: {input}", "Thanks."]
    padded = pad_text("y" * 40, 100, filler, input_text="{meta.secret} 2+2?")
    assert "Restated: {meta.secret} 2+2?" in padded
    assert pad_text("", 100, filler) == ""  # a share of nothing is nothing


def test_pad_item_pointwise_and_pairwise_pads_one_side() -> None:
    padded = pad_item(POINT, 50)
    assert padded.response.startswith(POINT.response) and len(padded.response) > len(POINT.response)
    assert padded.id == POINT.id and padded.input == POINT.input
    pair = pad_item(PAIR, 100)
    side = padded_side(PAIR)
    grown = pair.response_a if side == "a" else pair.response_b
    kept = pair.response_b if side == "a" else pair.response_a
    assert kept == (PAIR.response_b if side == "a" else PAIR.response_a)
    assert len(grown) >= 2 * len(PAIR.response_a if side == "a" else PAIR.response_b)
    assert added_chars(PAIR, 100) == len(grown) - len(
        PAIR.response_a if side == "a" else PAIR.response_b)


def test_padded_side_is_deterministic_and_balanced() -> None:
    items = [Item(id=f"i{i}", input="q", response_a="a", response_b="b") for i in range(400)]
    sides = [padded_side(i) for i in items]
    assert sides == [padded_side(i) for i in items]
    assert 150 < sides.count("a") < 250


def test_length_units_keep_the_original_identity() -> None:
    units = length_units([POINT], (25, 100), DEFAULT_FILLER)
    assert [u.variant for u in units] == ["", "pad25", "pad100"]
    assert all(u.item.id == POINT.id for u in units)
    assert units[1].source_hash == POINT.content_hash
    assert units[1].item.content_hash != POINT.content_hash
    assert padding_variant(50) == "pad50"


def test_filler_file_format(tmp_path: Path) -> None:
    path = tmp_path / "filler.txt"
    path.write_text("# neutral sentences\n\nAll good.\n  Nothing to add.  \n", encoding="utf-8")
    assert load_filler(path) == ("All good.", "Nothing to add.")
    path.write_text("# only a comment\n", encoding="utf-8")
    with pytest.raises(InputError, match="no filler templates"):
        load_filler(path)
    with pytest.raises(InputError, match="cannot read"):
        load_filler(tmp_path / "missing.txt")


@pytest.mark.parametrize("levels", [(), (0,), (25, 25), (-5,), (True,)])
def test_bad_padding_levels_are_rejected(levels) -> None:
    with pytest.raises(InputError, match="padding levels"):
        check_levels(levels)
