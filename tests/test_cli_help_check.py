"""newuser22: ``gradcheck check --help`` gave zoo's and train's exit codes and examples beside check's own."""

import re

from gradcheck.cli import build_parser


def test_check_help_has_check_s_exit_codes_and_examples_alone():
    parser = build_parser()
    top, check = parser.format_help(), parser._subparsers._group_actions[0].choices["check"].format_help()
    assert "zoo: also a layer" in top and "gradcheck train --epochs 30" in top  # gradcheck --help: every command
    tail = " ".join(check.split("exit codes:")[1].split())
    assert not re.search(r"\b(zoo|train)\b", tail), tail  # --training is check's own
    assert "0 pass: every gradient within tolerance 1 a result is wrong" in tail
    assert "a forward that writes into its input X (the caller's array changes); the output names it 2 usage" in tail
    assert tail.count("gradcheck check ") == 3 and "3 the code could not be checked" in tail
