"""Rubric loading, validation, hashing and rendering."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from judgekit.errors import InputError, RubricError
from judgekit.rubrics import (
    ORDER_INSTRUCTION,
    REPO_RUBRICS_DIR,
    load_rubric,
    render_messages,
    resolve_rubric_path,
    rubric_from_text,
    verdict_json_schema,
)
from judgekit.types import Item

BINARY = textwrap.dedent(
    """\
    # a comment
    name = "exact"
    version = "1"
    description = "Exact match"

    [scale]
    kind = "binary"

    [prompt]
    system = "You grade answers."
    user = "Q: {input}\\nReference: {reference}\\nAnswer: {response}\\n{scale}"
    """
)

ORDINAL = textwrap.dedent(
    """\
    name = "quality"
    version = "2"

    [scale]
    kind = "ordinal"
    min = 1
    max = 3

    [scale.levels]
    "1" = "bad"
    "2" = "ok"
    "3" = "good"

    [prompt]
    user = "Rate {response} for {input}.\\nLevels:\\n{scale}"
    """
)

PAIRWISE = textwrap.dedent(
    """\
    name = "pref"
    version = "1"

    [scale]
    kind = "pairwise"
    allow_tie = true

    [prompt]
    system = "Compare."
    user = "{input}\\nA: {response_a}\\nB: {response_b}"
    """
)


def write(tmp_path: Path, text: str, name: str = "r.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def item(**fields: object) -> Item:
    base: dict[str, object] = {"id": "i1", "input": "What is 2+2?", "response": "4"}
    base.update(fields)
    return Item(**base)  # type: ignore[arg-type]


# -- scales ----------------------------------------------------------------------


def test_binary_scale_labels_keys_and_default_descriptions() -> None:
    rubric = rubric_from_text(BINARY)
    assert rubric.scale.kind == "binary"
    assert rubric.scale.labels == ("pass", "fail")
    assert [level.key for level in rubric.scale.levels] == ["p", "f"]
    assert all(level.description for level in rubric.scale.levels)
    assert rubric.name == "exact" and rubric.version == "1"


def test_ordinal_scale_values_and_keys() -> None:
    rubric = rubric_from_text(ORDINAL)
    assert rubric.scale.labels == ("1", "2", "3")
    assert [level.key for level in rubric.scale.levels] == ["1", "2", "3"]
    assert [level.value for level in rubric.scale.levels] == [1.0, 2.0, 3.0]
    assert rubric.scale.level("3") is not None
    assert rubric.scale.level("3").description == "good"  # type: ignore[union-attr]


def test_pairwise_tie_only_when_allowed() -> None:
    with_tie = rubric_from_text(PAIRWISE)
    assert with_tie.scale.labels == ("A", "B", "tie")
    assert [level.key for level in with_tie.scale.levels] == ["a", "b", "t"]
    without = rubric_from_text(PAIRWISE.replace("allow_tie = true\n", ""))
    assert without.scale.labels == ("A", "B")


def test_categorical_labels_in_file_order() -> None:
    text = BINARY.replace(
        'kind = "binary"',
        'kind = "categorical"\nlabels = [{name = "safe", description = "fine"}, '
        '{name = "unsafe"}, {name = "refused", description = "declined"}]',
    )
    rubric = rubric_from_text(text)
    assert rubric.scale.labels == ("safe", "unsafe", "refused")
    assert [level.key for level in rubric.scale.levels] == ["1", "2", "3"]
    assert rubric.scale.levels[0].description == "fine"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("max = 3", "max = 1", "scale.max: must be greater than scale.min"),
        ("min = 1\n", "", "scale.min: required for an ordinal scale"),
        ('"3" = "good"\n', "", 'scale.levels."3": missing description of level 3'),
        ('"3" = "good"', '"3" = "good"\n"7" = "x"', "scale.levels.7: not a level of this scale"),
        ("max = 3", "max = 12", "scale.max: at most 10 levels"),
        ("max = 3", 'max = "3"', "scale.max: Input should be a valid integer"),
        ('kind = "ordinal"', 'kind = "likert"', "scale.kind: Input should be"),
        ('name = "quality"', 'name = "bad name!"', "name: use letters"),
        ('name = "quality"\n', "", "name: Field required"),
        ('version = "2"', "version = []", "version: must be a string"),
        ("[prompt]", "[prompt]\ntemperature = 0", "prompt.temperature: unknown field"),
        ("[scale]", 'colour = "red"\n[scale]', "colour: unknown field"),
        ("min = 1", "min = 1\nallow_tie = true", "scale.allow_tie: only valid for pairwise"),
    ],
)
def test_scale_and_field_errors_name_the_field(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in ORDINAL
    path = write(tmp_path, ORDINAL.replace(old, new, 1))
    with pytest.raises(RubricError) as info:
        load_rubric(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_categorical_errors_name_the_label(tmp_path: Path) -> None:
    text = BINARY.replace(
        'kind = "binary"',
        'kind = "categorical"\nlabels = [{name = "safe"}, {name = "Safe"}]',
    )
    with pytest.raises(RubricError, match=r"scale\.labels\.1\.name: 'Safe' repeats label 0"):
        rubric_from_text(text)
    single = BINARY.replace('kind = "binary"', 'kind = "categorical"\nlabels = [{name = "x"}]')
    with pytest.raises(RubricError, match=r"scale\.labels: .* at least 2"):
        rubric_from_text(single)


def test_binary_levels_must_be_pass_or_fail() -> None:
    text = BINARY.replace('kind = "binary"', 'kind = "binary"\nlevels = {yes = "y"}')
    with pytest.raises(RubricError, match=r"scale\.levels\.yes: not a level"):
        rubric_from_text(text)


def test_tie_description_without_allow_tie_is_an_error() -> None:
    text = PAIRWISE.replace("allow_tie = true", 'levels = {tie = "same"}')
    with pytest.raises(RubricError, match=r"scale\.levels\.tie: set scale\.allow_tie"):
        rubric_from_text(text)


def test_invalid_toml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\nversion = \n')
    with pytest.raises(RubricError, match=rf"^{path}:2: invalid TOML"):
        load_rubric(path)


def test_non_utf8_rubric(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    path.write_bytes(b'name = "\xff"\n')
    with pytest.raises(RubricError, match="not valid UTF-8"):
        load_rubric(path)


# -- placeholders ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "old", "new", "expected"),
    [
        (BINARY, "Answer: {response}", "Answer: {response} {answer}",
         "prompt.user: unknown placeholder {answer}"),
        (BINARY, "Answer: {response}", "Answer: {response} {response_a}",
         "prompt.user: unknown placeholder {response_a} (a binary rubric has no {response_a}"),
        (PAIRWISE, "{input}", "{input} {response}",
         "prompt.user: unknown placeholder {response} (a pairwise rubric has no {response}"),
        (BINARY, "You grade answers.", "You grade {nope}.", "prompt.system: unknown placeholder"),
        (BINARY, "Answer: {response}", 'Answer: {response} {\\"verdict\\": \\"x\\"}',
         "prompt.user: unknown placeholder"),
        (BINARY, "Answer: {response}", "Answer: {response} }", "prompt.user: unbalanced '}'"),
        (BINARY, "Answer: {response}", "Answer: {response} {", "prompt.user: unbalanced '{'"),
        (BINARY, "Answer: {response}", "Answer:", "prompt.user: must contain {response}"),
        (PAIRWISE, "B: {response_b}", "B:", "prompt.user: must contain {response_b}"),
        (BINARY, "Answer: {response}", "Answer: {meta.}", "prompt.user: unknown placeholder"),
    ],
)
def test_placeholder_errors_name_the_field(text: str, old: str, new: str, expected: str) -> None:
    assert old in text
    with pytest.raises(RubricError) as info:
        rubric_from_text(text.replace(old, new, 1), path="x.toml")
    assert str(info.value).startswith("x.toml: ")
    assert expected in str(info.value)


def test_escaped_braces_are_literal() -> None:
    text = BINARY.replace(
        "Answer: {response}", 'Answer: {response} {{\\"verdict\\": \\"x\\"}} {{input}}'
    )
    rubric = rubric_from_text(text)
    user = render_messages(rubric, item(reference="4"))[-1]["content"]
    assert '{"verdict": "x"} {input}' in user


# -- identity --------------------------------------------------------------------


def test_hash_ignores_comments_and_whitespace_but_not_fields() -> None:
    base = rubric_from_text(BINARY)
    reformatted = rubric_from_text(
        "# another comment\n" + BINARY.replace('version = "1"', 'version   =   "1"   # same')
    )
    assert reformatted.sha256 == base.sha256
    assert reformatted.source_text != base.source_text
    for old, new in [
        ('version = "1"', 'version = "2"'),
        ("You grade answers.", "You grade answers!"),
        ('description = "Exact match"', 'description = "Exact"'),
        ('kind = "binary"', 'kind = "binary"\nlevels = {pass = "right"}'),
    ]:
        assert rubric_from_text(BINARY.replace(old, new)).sha256 != base.sha256, new


def test_source_text_and_path_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path, BINARY)
    rubric = load_rubric(path)
    assert rubric.source_text == BINARY
    assert rubric.path == str(path)
    assert len(rubric.sha256) == 64


# -- resolution ------------------------------------------------------------------


def test_bare_name_prefers_local_rubrics_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_rubric_path("correctness") == REPO_RUBRICS_DIR / "correctness.toml"
    (tmp_path / "rubrics").mkdir()
    write(tmp_path / "rubrics", BINARY, "correctness.toml")
    assert resolve_rubric_path("correctness") == Path("rubrics/correctness.toml")
    assert load_rubric("correctness").name == "exact"


def test_unknown_name_lists_available(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RubricError, match=r"rubric 'nonexistent' not found.*correctness"):
        load_rubric("nonexistent")
    with pytest.raises(RubricError, match=r"missing\.toml: no such rubric file"):
        load_rubric("missing.toml")


# -- rendering -------------------------------------------------------------------


def test_render_fills_every_placeholder_and_asks_reasoning_first() -> None:
    rubric = rubric_from_text(BINARY)
    messages = render_messages(rubric, item(reference="four"))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == f"You grade answers. {ORDER_INSTRUCTION}"
    user = messages[1]["content"]
    assert user.startswith("Q: What is 2+2?\nReference: four\nAnswer: 4\n- pass: ")
    assert "{" not in user.split("Write your answer")[0]
    last_line = user.splitlines()[-1]
    assert last_line == (
        'Write your answer as JSON: {"reasoning": "your reason", "verdict": "pass" or "fail"}'
    )
    assert last_line.index('"reasoning"') < last_line.index('"verdict"')


def test_item_text_is_never_substituted_again() -> None:
    rubric = rubric_from_text(BINARY)
    sneaky = item(
        input="Ignore this {response} and {reference} {meta.gold} {{input}} {0.__class__}",
        response="{input}",
        reference="{scale}",
    )
    user = render_messages(rubric, sneaky)[-1]["content"]
    assert "Q: Ignore this {response} and {reference} {meta.gold} {{input}} {0.__class__}\n" in user
    assert "Reference: {scale}\nAnswer: {input}\n" in user


def test_meta_placeholder_and_missing_meta_names_item() -> None:
    text = BINARY.replace("Answer: {response}", "Answer: {response} ({meta.lang}, {meta.n})")
    rubric = rubric_from_text(text)
    user = render_messages(rubric, item(reference="4", meta={"lang": "en", "n": [1, 2]}))[-1]
    assert "Answer: 4 (en, [1,2])" in user["content"]
    with pytest.raises(InputError, match=r"item 'i1': no meta field 'lang'"):
        render_messages(rubric, item(reference="4"))


def test_missing_reference_names_the_item() -> None:
    rubric = rubric_from_text(BINARY)
    with pytest.raises(InputError, match=r"item 'i1' has no reference.*\{reference\}"):
        render_messages(rubric, item())


def test_pointwise_rubric_rejects_pairwise_item_and_vice_versa() -> None:
    pair = Item(id="p1", input="q", response_a="x", response_b="y")
    with pytest.raises(InputError, match=r"item 'p1' has response_a/response_b.*binary"):
        render_messages(rubric_from_text(BINARY), pair)
    with pytest.raises(InputError, match=r"item 'i1' has a single response.*pairwise"):
        render_messages(rubric_from_text(PAIRWISE), item())


def test_pairwise_render() -> None:
    rubric = rubric_from_text(PAIRWISE)
    user = render_messages(rubric, Item(id="p", input="q?", response_a="x", response_b="y"))[-1]
    assert user["content"].startswith("q?\nA: x\nB: y\n\n")
    assert '"verdict": "A" or "B" or "tie"' in user["content"]


def test_reverse_levels_reverses_scale_and_choices() -> None:
    rubric = rubric_from_text(ORDINAL)
    forward = render_messages(rubric, item())[-1]["content"]
    backward = render_messages(rubric, item(), reverse_levels=True)[-1]["content"]
    assert "- 1: bad\n- 2: ok\n- 3: good" in forward
    assert "- 3: good\n- 2: ok\n- 1: bad" in backward
    assert '"verdict": "1" or "2" or "3"' in forward
    assert '"verdict": "3" or "2" or "1"' in backward


def test_no_system_prompt_still_sends_the_order_instruction() -> None:
    messages = render_messages(rubric_from_text(ORDINAL), item())
    assert messages[0] == {"role": "system", "content": ORDER_INSTRUCTION}


def test_verdict_json_schema() -> None:
    schema = verdict_json_schema(rubric_from_text(ORDINAL))
    assert list(schema["properties"]) == ["reasoning", "verdict"]
    assert schema["properties"]["verdict"]["enum"] == ["1", "2", "3"]
    assert schema["required"] == ["reasoning", "verdict"]
    assert schema["additionalProperties"] is False
    json.dumps(schema)


# -- shipped rubrics -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "labels"),
    [
        ("correctness", "binary", ("pass", "fail")),
        ("helpfulness", "ordinal", ("1", "2", "3", "4", "5")),
        ("preference", "pairwise", ("A", "B", "tie")),
        ("safety", "categorical", ("safe", "unsafe", "refused")),
    ],
)
def test_shipped_rubrics_load(name: str, kind: str, labels: tuple[str, ...]) -> None:
    rubric = load_rubric(REPO_RUBRICS_DIR / f"{name}.toml")
    assert rubric.name == name
    assert rubric.scale.kind == kind
    assert rubric.scale.labels == labels
    assert all(level.description for level in rubric.scale.levels)


def test_correctness_uses_the_reference() -> None:
    rubric = load_rubric(REPO_RUBRICS_DIR / "correctness.toml")
    assert "{reference}" in rubric.user_prompt


def test_shipped_rubrics_resolve_by_name_outside_the_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wheel install has no repo ``rubrics/`` folder: the packaged copies must be found."""
    import judgekit.rubrics as rubrics_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(rubrics_module, "REPO_RUBRICS_DIR", tmp_path / "no-such-folder")
    for name in ("correctness", "helpfulness", "preference", "safety"):
        rubric = rubrics_module.load_rubric(name)
        assert rubric.name == name
        assert rubric.path is not None and "bundled_rubrics" in rubric.path


def test_a_misspelt_section_is_named_with_a_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "typo.toml"
    path.write_text(
        'name = "x"\nversion = "1"\ndescription = "d"\n[scale]\nkind = "binary"\n'
        '[promt]\nsystem = "s"\nuser = "{input} {response}"\n',
        encoding="utf-8",
    )
    with pytest.raises(RubricError) as info:
        load_rubric(path)
    message = str(info.value)
    assert message.index("promt: unknown field (did you mean 'prompt'?)") < message.index(
        "prompt: Field required"
    )
