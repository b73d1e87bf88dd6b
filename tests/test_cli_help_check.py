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


def test_a_function_pair_with_weights_among_its_inputs_is_not_sent_to_reference():
    # newuser22: ::conv's PASS said "pass --reference manualprop.NAME (e.g. manualprop.Linear)", and
    # --reference manualprop.Conv2D is a usage error there (conv has no parameters: w, b are inputs)
    import contextlib
    import io
    import os
    from pathlib import Path

    from gradcheck.cli import main

    root, outs = Path(__file__).resolve().parents[1], {}
    old = os.getcwd()
    try:
        os.chdir(root)
        for target, argv in (("conv", ["--input-shape", "2,3,5,5;4,3,3,3;4", "--init",
                                       '{"conv_param": {"stride": 1, "pad": 1}}']),
                             ("relu", ["--input-shape", "4,5"])):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                assert main(["check", f"examples/cs231n_layers.py::{target}", *argv]) == 0
            outs[target] = " ".join(out.getvalue().split())
    finally:
        os.chdir(old)
    assert "conv: forward values not checked (central differences test backward against your own forward): " \
           "--reference cannot compare them here: a function pair's weights are among its inputs" in outs["conv"]
    assert "--reference manualprop.NAME" not in outs["conv"]
    assert "relu: forward values not checked (central differences test backward against your own forward): pass " \
           "--reference manualprop.ReLU to compare them." in outs["relu"]  # one input: the reference works
