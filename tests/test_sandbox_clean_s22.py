"""What the sandbox's string cleaning gives (session 22 made the printable case skip its per-character loop)."""

import pytest

from gradcheck.sandbox import MalformedReply, _clean, _clean_strings


def test_clean_replaces_unprintable_characters_and_truncates():
    assert _clean("a\x00b\nc\td") == "a\\x00b c d"
    assert _clean("é\u200bz") == "é\\u200bz"  # a format character (zero width space): escaped
    assert _clean("plain text, printable") == "plain text, printable"
    assert _clean("x" * 10, 5) == "xxxxx..."
    assert _clean("a\x1b" * 3, 3) == "a..."  # escaped, then cut at the limit (tester23g L6; review24)
    assert _clean("ctl \x0b\x1b[31mred\x85 \x9b31m end") == "ctl  \\x1b[31mred  \\x9b31m end"  # nothing lost
    assert _clean("y" * 5, 5) == "yyyyy"
    assert _clean("biases[0] *b*|`c` avg_pool <#>") == "biases[0] *b*|`c` avg_pool <#>"  # data: no Markdown (s35)
    assert _clean(12.5) == "12.5" and _clean(None) == "None"
    assert _clean_strings({"k": ["v\n", 3, {"w": "\x07x"}]}) == {"k": ["v ", 3, {"w": "\\x07x"}]}
    with pytest.raises(MalformedReply, match="'k\\\\x00', holds characters"):  # a name is kept as sent, or refused
        _clean_strings({"k\x00": 1})  # (session 36: escaped, it named no array: redteam36 F1z)


def test_clean_bound_holds_after_escaping():
    """review24: the cut came before the escaping, so ``_clean("\\x1b" * 300)`` was 1,203 characters for a limit of
    300. Now the escaped text is cut: at most ``limit`` characters and ``...``, never an escape cut in half."""
    for text in ("\x1b" * 1000, "a\x1b" * 500, "\U0001f600\u200b" * 400, "*" * 1000, "x\\" * 700):
        for limit in (1, 3, 7, 300):
            out = _clean(text, limit)
            assert len(out) <= limit + 3 and out.endswith("..."), (text[:4], limit, len(out))
    assert _clean("a\x1b" * 3, 8) == "a\\x1ba..."  # the next escape does not fit: not cut in half
    assert _clean("a\x1b" * 3, 10) == "a\\x1ba\\x1b..."
    assert _clean("a\x1b", 5) == "a\\x1b"  # fits whole: no ellipsis
    assert _clean("\x1b" * 300) == "\\x1b" * 75 + "..."
