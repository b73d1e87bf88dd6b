"""What the sandbox's string cleaning gives (session 22 made the printable case skip its per-character loop)."""

from gradcheck.sandbox import _clean, _clean_strings


def test_clean_replaces_unprintable_characters_truncates_and_escapes_markdown():
    assert _clean("a\x00b\nc\td") == "a\\x00b c d"
    assert _clean("é\u200bz") == "é\\u200bz"  # a format character (zero width space): escaped
    assert _clean("plain text, printable") == "plain text, printable"
    assert _clean("x" * 10, 5) == "xxxxx..."
    assert _clean("a\x1b" * 3, 3) == "a\\x1ba..."  # cut at the limit, then escaped (tester23g L6)
    assert _clean("ctl \x0b\x1b[31mred\x85 \x9b31m end") == "ctl  \\x1b[31mred  \\x9b31m end"  # nothing lost
    assert _clean("y" * 5, 5) == "yyyyy"
    assert _clean("*b*|`c`", markdown=True) == "\\*b\\*\\|\\`c\\`"
    assert _clean(12.5) == "12.5" and _clean(None) == "None"
    assert _clean_strings({"k\x00": ["v\n", 3, {"w": "\x07x"}]}, False) == {"k\\x00": ["v ", 3, {"w": "\\x07x"}]}
