"""What the sandbox's string cleaning gives (session 22 made the printable case skip its per-character loop)."""

from gradcheck.sandbox import _clean, _clean_strings


def test_clean_replaces_unprintable_characters_truncates_and_escapes_markdown():
    assert _clean("a\x00b\nc\td") == "a b c d"
    assert _clean("é\u200bz") == "é z"  # a format character (zero width space) is not printable
    assert _clean("plain text, printable") == "plain text, printable"
    assert _clean("x" * 10, 5) == "xxxxx..."
    assert _clean("a\x1b" * 3, 3) == "a a..."  # cleaned, then cut at the limit
    assert _clean("y" * 5, 5) == "yyyyy"
    assert _clean("*b*|`c`", markdown=True) == "\\*b\\*\\|\\`c\\`"
    assert _clean(12.5) == "12.5" and _clean(None) == "None"
    assert _clean_strings({"k\x00": ["v\n", 3, {"w": "\x07x"}]}, False) == {"k ": ["v ", 3, {"w": " x"}]}
