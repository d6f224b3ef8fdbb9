"""The annotate app's keys: the non-scale commands, their help lines and the footer bindings.

Kept apart from the screens so the key map (which must never collide with a
scale key, on any rubric) can be read and tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType

from judgekit.errors import JudgekitError
from judgekit.types import Scale


@dataclass(frozen=True)
class Command:
    """A non-scale action, its keys (the first is shown) and its descriptions."""

    action: str
    keys: tuple[str, ...]
    description: str
    help: str
    show: bool = True


#: Commands in footer order. No command key is a scale key on any scale (scale
#: keys are p/f, a/b/t and digits), so a key means the same on every rubric:
#: the flag is ``!`` everywhere, never the ``f`` that is *fail* on a binary scale.
COMMANDS: tuple[Command, ...] = (
    Command("skip", ("s",), "skip", "skip this item (it comes back at the end)"),
    Command("back", ("u", "backspace"), "back", "go back to the previous item to change its label"),
    Command("flag", ("exclamation_mark",), "flag", "flag / unflag the item for review"),
    Command("note", ("n",), "note",
            "add or edit a note on the item (while a search is on: the next match)"),
    Command("search", ("slash",), "search",
            "search the item: matches highlighted; n / N next / previous, escape clears"),
    Command("match(-1)", ("N",), "previous match", "the previous search match", show=False),
    Command("clear_search", ("escape",), "clear search", "clear the search", show=False),
    Command("mark", ("m",), "mark", "mark this place in the item (' comes back to it)",
            show=False),
    Command("to_mark", ("apostrophe",), "back to mark",
            "back to the mark, or to where the last jump ([ ], search, Home/End) left from; "
            "again: back where you were", show=False),
    Command("jump(1)", ("right_square_bracket",), "sections",
            "jump to the next section (Input, Response, Reference)"),
    Command("jump(-1)", ("left_square_bracket",), "section", "jump to the previous section",
            show=False),
    Command("page(1)", ("pagedown", "space"), "scroll",
            "scroll down a page (up/down arrows: a row)", show=False),
    Command("page(-1)", ("pageup",), "page up", "scroll up a page", show=False),
    Command("edge(-1)", ("home",), "top", "go to the top of the item", show=False),
    Command("edge(1)", ("end",), "end", "go to the end of the item", show=False),
    Command("descriptions", ("d",), "descriptions",
            "show / hide the scale's descriptions (their rows go to the text)", show=False),
    Command("split", ("v",), "split",
            "split view on a wide terminal: input left, response right, each scrolling "
            "(tab: the other side)", show=False),
    Command("help", ("question_mark",), "help", "show the guidelines and every key"),
    Command("quit", ("q",), "quit", "save and quit (everything given is already saved)"),
)

_KEY_DISPLAY = {
    "question_mark": "?", "exclamation_mark": "!", "backspace": "⌫", "slash": "/",
    "apostrophe": "'", "escape": "Esc",
    "right_square_bracket": "]", "left_square_bracket": "[", "pagedown": "PgDn",
    "pageup": "PgUp", "space": "space", "home": "Home", "end": "End",
}


def display_key(key: str) -> str:
    return _KEY_DISPLAY.get(key, key)


def command_keys(scale: Scale) -> dict[str, tuple[str, ...]]:
    """Command action -> its keys; an error if a scale key would collide with one."""
    taken = {level.key for level in scale.levels}
    result: dict[str, tuple[str, ...]] = {}
    for command in COMMANDS:
        clash = sorted(taken.intersection(command.keys))
        if clash:
            raise JudgekitError(
                f"the scale key {clash[0]!r} is also the key of {command.action!r}"
            )
        result[command.action] = command.keys
    return result


def scale_bindings(scale: Scale) -> list[BindingType]:
    """Footer bindings: one entry for the whole scale ("p/f label"), then each command."""
    keys = [level.key for level in scale.levels]
    if all(k.isdigit() for k in keys) and len(keys) > 2:
        shown = f"{keys[0]}-{keys[-1]}"
    else:
        shown = "/".join(keys)
    bindings: list[BindingType] = [
        Binding(level.key, f"label({level.label!r})", "label", show=index == 0,
                key_display=shown if index == 0 else None)
        for index, level in enumerate(scale.levels)
    ]
    keys_of = command_keys(scale)
    for command in COMMANDS:
        free = keys_of[command.action]
        shown_key = display_key(free[0])
        if command.action == "jump(1)":
            shown_key = "[ ]"
        bindings.append(Binding(",".join(free), command.action, command.description,
                                key_display=shown_key, show=command.show))
    return bindings


#: The multi-criteria screen's own commands; a command of the same action in
#: :data:`COMMANDS` (skip, back) is replaced by its entry here. The arrows move the
#: focus between criteria there (the item still scrolls a row with shift+arrows).
CRITERIA_COMMANDS: tuple[Command, ...] = (
    Command("criterion(1)", ("down",), "criterion",
            "focus the next criterion (its level keys then label it)", show=True),
    Command("criterion(-1)", ("up",), "previous criterion", "focus the previous criterion",
            show=False),
    Command("skip", ("s",), "skip",
            "skip the focused criterion (it comes back when the item does)"),
    Command("skip_item", ("S",), "skip item",
            "skip the item: every criterion still to do (the item comes back at the end)",
            show=False),
    Command("back", ("u", "backspace"), "back",
            "back to the previous criterion; from the first one, to the previous item"),
    Command("page(1)", ("pagedown", "space"), "scroll",
            "scroll the item down a page (shift+up / shift+down: a row)", show=False),
    Command("descriptions", ("d",), "descriptions",
            "show / hide the focused criterion's level descriptions", show=False),
    Command("scroll(-1)", ("shift+up",), "up", "scroll the item up a row", show=False),
    Command("scroll(1)", ("shift+down",), "down", "scroll the item down a row", show=False),
)


def criteria_commands() -> tuple[Command, ...]:
    """Every command of the multi-criteria screen, its own first (the footer's order)."""
    own = {command.action for command in CRITERIA_COMMANDS}
    return (*CRITERIA_COMMANDS, *(c for c in COMMANDS if c.action not in own))


def criteria_bindings(scales: list[Scale]) -> list[BindingType]:
    """Footer bindings of the multi-criteria screen: every criterion's level keys (a key
    labels the focused criterion, when its scale has it), then the commands."""
    keys: list[str] = []
    for scale in scales:
        command_keys(scale)  # a scale key that is a command key is an error here too
        keys += [level.key for level in scale.levels if level.key not in keys]
    taken = {key for command in CRITERIA_COMMANDS for key in command.keys}
    clash = sorted(taken.intersection(keys))
    if clash:
        raise JudgekitError(f"the scale key {clash[0]!r} is also a criteria screen key")
    if all(k.isdigit() for k in keys) and len(keys) > 2:
        digits = sorted(keys, key=int)
        shown = f"{digits[0]}-{digits[-1]}"
    else:
        shown = "/".join(keys)
    bindings: list[BindingType] = [
        Binding(key, f"level({key!r})", "level", show=index == 0,
                key_display=shown if index == 0 else None)
        for index, key in enumerate(keys)
    ]
    for command in criteria_commands():
        shown_key = "↑↓" if command.action == "criterion(1)" else display_key(command.keys[0])
        if command.action == "jump(1)":
            shown_key = "[ ]"
        bindings.append(Binding(",".join(command.keys), command.action, command.description,
                                key_display=shown_key,
                                show=command.show and command.action != "jump(1)"))
    return bindings
