"""Make stored text safe to show: on a terminal, in Markdown, inside JSON printed to a terminal.

Item text, slice names, annotator names, the endpoint's model name and a judge's
reasoning come from files and servers judgekit does not control. Written raw to
a terminal, ``ESC ] 2 ; ... BEL`` renames the window, ``ESC [ 2 J`` clears the
screen and a backspace rewrites what was printed; in a Markdown report
``<script>`` or a ``javascript:`` link runs when the page is viewed. Every
renderer passes such text through one of these functions, at the point it is
written, so no caller has to remember which characters are dangerous:

- :func:`terminal_safe` shows C0 and C1 controls (ESC, BEL, backspace, DEL,
  CSI U+009B ...), bidi overrides (U+202E ...), line/paragraph separators and
  lone surrogates as visible escapes such as ``\\x1b`` or ``\\u202e``; newlines
  and tabs are kept unless ``one_line`` is set. Nothing is dropped silently, so
  a reader can still see that the text held something odd.
- :func:`markdown_text` and :func:`markdown_code` additionally escape Markdown
  and HTML, so no tag, link or image can be formed from the text.
- :func:`json_safe` escapes the same characters inside already-dumped JSON,
  which stays valid, equal JSON (``json.loads`` gives back the same value).
- :func:`spreadsheet_cell` keeps a CSV cell from being read as a formula by a
  spreadsheet (``=HYPERLINK(...)`` in a note), as OWASP advises: a cell that
  begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
  leading ``'`` (plain numbers such as ``-1.5`` are left alone).
- :func:`storable` makes text from a server safe to store: a lone surrogate
  (valid in JSON as ``"\\ud800"``, but not Unicode text: SQLite and every
  encoder refuse it) becomes the six visible characters ``\\ud800``.
"""

from __future__ import annotations

import re

__all__ = [
    "json_safe", "markdown_code", "markdown_text", "one_line", "spreadsheet_cell", "storable",
    "storable_or_none", "terminal_safe",
]

#: Bidirectional formatting characters: they reorder what follows (``evil\u202etxt.exe``).
BIDI_CONTROLS = frozenset(
    [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)
#: Line and paragraph separators: invisible line breaks on some terminals and editors.
SEPARATORS = frozenset([0x2028, 0x2029])


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _table(*, keep: str) -> dict[int, str]:
    codes = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS, *SEPARATORS]
    names = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
    return {
        code: names.get(code, _escape(code)) for code in codes if chr(code) not in keep
    }


_MULTI_LINE = _table(keep="\n\t")
_ONE_LINE = _table(keep="")
_SURROGATE = re.compile("[\ud800-\udfff]")


def terminal_safe(text: str | None, *, one_line: bool = False) -> str:
    """``text`` with every control, bidi override and lone surrogate shown as an escape.

    ``\\r\\n`` counts as a newline. With ``one_line`` newlines and tabs are shown
    as ``\\n`` and ``\\t`` too (table cells, status lines, names).
    """
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    safe = text.translate(_ONE_LINE if one_line else _MULTI_LINE)
    if _SURROGATE.search(safe):
        safe = _SURROGATE.sub(lambda m: _escape(ord(m.group())), safe)
    return safe


#: First characters a spreadsheet reads as the start of a formula (OWASP "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula.

    A cell starting with ``= + - @``, a tab or a carriage return is prefixed
    with ``'`` (OWASP's advice for CSV injection); a plain number (``-1``,
    ``+2.5e3``) is a value, not a formula, and stays as it is.
    """
    if not text.startswith(_FORMULA_START) or _PLAIN_NUMBER.fullmatch(text):
        return text
    return "'" + text


def storable(text: str) -> str:
    """``text`` with every lone surrogate written as its visible escape (``\\ud800``).

    A judge's answer arrives as JSON, which may escape a lone surrogate; decoded,
    it is a string SQLite cannot store (``UnicodeEncodeError``), so one such
    answer used to stop a run at the same item every time. Everything else is
    kept as it is (``isascii`` makes the common case one O(1) check).
    """
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: _escape(ord(m.group())), text)


def storable_or_none(text: str | None) -> str | None:
    """:func:`storable` for an optional field."""
    return None if text is None else storable(text)


def one_line(text: str | None) -> str:
    """:func:`terminal_safe` for text that must stay on one line (names, ids, labels)."""
    return terminal_safe(text, one_line=True)


#: Markdown punctuation that can open emphasis, code, a heading or a table cell, or close
#: a link's or image's text. ``[`` needs no escape: without an unescaped ``]`` no
#: link, image or link definition can form, so intervals like ``[0.61, 0.80]``
#: only gain one backslash.
_MARKDOWN_PUNCTUATION = frozenset("\\`*]#|~")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown_text(text: str | None) -> str:
    """One line of literal text for a Markdown document (also safe inside a table cell).

    ``< > &`` become entities, so no HTML tag or autolink can form; the Markdown
    punctuation above is backslash-escaped, so no link, image, emphasis or cell
    boundary can form either (``[x](javascript:...)`` shows as written and links
    nowhere). ``_`` is escaped only where it could start or end emphasis (not
    inside ``parse_error``).
    """
    line = one_line(text)
    out: list[str] = []
    for index, char in enumerate(line):
        if char in _HTML_ENTITIES:
            out.append(_HTML_ENTITIES[char])
        elif char in _MARKDOWN_PUNCTUATION:
            out.append("\\" + char)
        elif char == "_" and not _inside_word(line, index):
            out.append("\\_")
        else:
            out.append(char)
    return "".join(out)


def _inside_word(text: str, index: int) -> bool:
    """Whether ``text[index]`` has a letter or digit on both sides (intraword ``_``)."""
    return 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()


def markdown_code(text: str | None) -> str:
    """``text`` as an inline code span whose fence no backtick in it can close.

    Inside a code span Markdown and HTML are not interpreted; a ``|`` is still
    escaped because GitHub splits table cells on it before reading code spans.
    """
    body = one_line(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


#: Characters JSON may carry raw but a terminal must not see raw (C0 is escaped by json).
_JSON_TABLE = {
    code: f"\\u{code:04x}"
    for code in [0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS, *SEPARATORS]
}


def json_safe(dumped: str) -> str:
    """Dumped JSON with DEL, C1 controls, bidi overrides and lone surrogates as ``\\uXXXX``.

    These characters only occur inside JSON strings, where the escape means the
    same character, so the result parses to exactly the same value.
    """
    safe = dumped.translate(_JSON_TABLE)
    if not safe.isascii() and _SURROGATE.search(safe):  # isascii() is O(1): no search for ASCII
        safe = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", safe)
    return safe
