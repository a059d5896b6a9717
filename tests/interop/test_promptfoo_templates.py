"""What promptfoo's text means in JavaScript, read in Python: its regexes
(`interop/jsregex.py`) and its `{{var}}` templates (`interop/nunjucks.py`)."""

from __future__ import annotations

import re

import pytest

from caseforge.interop.jsregex import Untranslatable, to_javascript, to_python
from caseforge.interop.nunjucks import Unrenderable, render, text_of, variables


@pytest.mark.parametrize(
    ("javascript", "matches", "misses"),
    [
        ("^\\d{3}$", ["123"], ["123\n", "١٢٣"]),  # $ is the end; \d is ASCII
        ("(?<area>\\d+)-\\k<area>", ["12-12"], ["12-13"]),
        ("a.c", ["abc"], ["a\rc", "a\u2028c"]),  # . matches no line terminator
        ("\\bcafé\\b", [], ["un café noir"]),  # é is no word character to JavaScript's \b
        ("\\bcaf\\b", ["caf\u00e9"], []),  # \b is ASCII in JavaScript: é is not a word char
        ("x\\sy", ["x\ufeffy", "x\u00a0y"], ["x\x1cy"]),  # JavaScript's own white space
        ("[^]+", ["any\nthing"], []),
        ("^[\\s\\S]*$", ["any\nthing"], []),
        ("a[^\\d\\D]b", [], ["a1b", "a b"]),
        ("a[]b", [], ["ab", "a]b"]),
        ("x{,2}", ["x{,2}"], ["xx"]),  # not a quantifier in JavaScript
        ("\\e\\A\\cJ", ["eA\n"], []),
        ("[\\w-]+@[\\d.]+", ["a-b@1.2"], ["é@1"]),
    ],
)
def test_a_javascript_pattern_matches_what_javascript_matches(
    javascript: str, matches: list[str], misses: list[str]
) -> None:
    pattern = re.compile(to_python(javascript))
    for text in matches:
        assert pattern.search(text), (javascript, text)
    for text in misses:
        assert not pattern.search(text), (javascript, text)


@pytest.mark.parametrize(
    ("javascript", "why"),
    [
        ("[\\S]", "\\S inside a character class"),
        ("\\p{L}", "Unicode property"),
        ("\\u{1F600}", "Unicode-mode"),
        ("(?<=a+)b", "refuses"),
        ("(a", "refuses"),
    ],
)
def test_what_python_cannot_say_the_same_way_is_refused(javascript: str, why: str) -> None:
    with pytest.raises(Untranslatable, match=re.escape(why)):
        to_python(javascript)


def test_back_to_javascript() -> None:
    for javascript in ("^\\d{3}$", "(?<area>\\d+)-\\k<area>", "a.c", "\\bcat\\b", "[^]"):
        back = to_javascript(to_python(javascript))
        assert back is not None
        # Read back, the JavaScript text means what the first one meant.
        assert to_python(back[0]) == to_python(javascript)
        assert back[1] == []
    pattern, notes = to_javascript("^ORD-\\d+$") or ("", [])
    assert pattern == "^ORD-\\d+(?=\\n?$)"  # Python's $ also matches before a last newline
    assert notes and "\\d (digits) is Unicode in Python" in notes[0]
    assert to_javascript("(?i)abc") is None
    assert to_javascript("a++") is None


def test_templates_render_as_nunjucks_renders_them() -> None:
    values: dict[str, object] = {"q": "Where?", "n": 2.0, "ok": True, "tags": ["a", 1],
                                 "info": {"city": "Lumenport"}, "none": None}  # fmt: skip
    text, missing = render("{{ q }} {{n}} {{ok}} {{tags}} {{info.city}} {{tags[1]}} {{none}}"
                           "{{ gone }}|{{info}}", values)  # fmt: skip
    assert text == "Where? 2 true a,1 Lumenport 1 |[object Object]"
    assert missing == ["gone"]
    assert variables("{{ a }} {{b.c}} {{ a }}") == ["a", "b"]
    assert text_of(0.5) == "0.5" and text_of(float("nan")) == "NaN"
    with pytest.raises(Unrenderable, match="filter"):
        render("{{ q | upper }}", values)
    with pytest.raises(Unrenderable, match="statement"):
        render("{% for x in tags %}{{x}}{% endfor %}", values)
