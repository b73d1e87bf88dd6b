"""The ``gradcheck grade`` subcommand (registered by :func:`gradcheck.cli.build_parser`).

::

    gradcheck grade SUBMISSION --tests TESTS --out DIR        # one submission
    gradcheck grade SUBMISSIONS_DIR --tests TESTS --out DIR   # every sub-folder, in parallel

A folder that holds ``.py`` files is one submission; a folder of folders is a
batch (``--batch``/``--single`` force either reading). Exit codes: 0 when every
submission was graded (whatever the scores), 1 when the grader could not finish
some submission (its results.json says so and gives 0), 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import EXIT_MISMATCH, EXIT_PASS, UsageError

__all__ = ["add_grade_parser", "cmd_grade"]

DESCRIPTION = """\
Grade student submissions with an assignment's grading tests (a pytest file using the
gradcheck.grading plugin). Each submission is graded by a separate pytest process with
plugin autoloading off, whose configuration never comes from the submission; the
student's classes run in a sandbox process (gradcheck.sandbox). Writes, per submission,
a Gradescope results.json and junit.xml; for a batch also gradebook.csv and scores.png.
A zero-score results.json is written before any student code runs."""

EXAMPLES = """\
examples:
  gradcheck grade assignments/linear_relu_ce/solution --tests assignments/linear_relu_ce/tests --out out/one
  gradcheck grade submissions/ --tests assignments/linear_relu_ce/tests --out graded/ --workers 2
  # inside Gradescope's autograder container:
  gradcheck grade /autograder/submission --tests /autograder/source/tests --out /autograder/results
"""


def add_grade_parser(sub: argparse._SubParsersAction, epilog: str = "") -> argparse.ArgumentParser:
    """Add the ``grade`` subcommand to the ``gradcheck`` parser's subparsers.

    Parameters
    ----------
    sub : argparse subparsers action
    epilog : str
        The main parser's exit-code text, shown after the examples.

    Returns
    -------
    argparse.ArgumentParser
    """
    g = sub.add_parser("grade", help="grade one submission or a folder of submissions (Gradescope results.json)",
                       description=DESCRIPTION, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("submission", metavar="SUBMISSION", help="a submission folder, or a folder of submission folders")
    g.add_argument("--tests", required=True, metavar="TESTS", help="grading test file or folder of the assignment")
    g.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: results.json (+ junit.xml); for a batch one sub-folder per submission, "
                        "gradebook.csv and scores.png")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help=f"submissions graded at once (default: the number of cores, {os.cpu_count()})")
    g.add_argument("--force", action="store_true", help="regrade submissions that already have results")
    g.add_argument("--seed", type=int, default=None,
                   help="seed of the hidden tests (default: one submission 0; a batch reuses the seed in "
                        "DIR/grading.json or draws and records a new one)")
    g.add_argument("--timeout", type=float, default=3.0, metavar="SECONDS",
                   help="wall-clock limit of each call into the student's code; also caps tests' own "
                        "timeout markers (default 3)")
    g.add_argument("--submission-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="wall-clock limit of grading one submission (default 300)")
    g.add_argument("--memory-mb", type=int, default=1024, metavar="MIB",
                   help="memory limit of the student's sandbox process (default 1024)")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--batch", action="store_true", help="treat SUBMISSION as a folder of submissions")
    mode.add_argument("--single", action="store_true", help="treat SUBMISSION as one submission")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.set_defaults(func=cmd_grade)
    return g


def cmd_grade(args: argparse.Namespace) -> int:
    """Run ``gradcheck grade``; print a summary; return the exit code."""
    from .runner import grade_batch, grade_submission, is_single_submission

    if not os.path.isdir(args.submission):
        raise UsageError(f"SUBMISSION {args.submission!r} is not a folder.")
    if not os.path.exists(args.tests):
        raise UsageError(f"--tests {args.tests!r} does not exist.")
    if args.timeout <= 0 or args.submission_timeout <= 0:
        raise UsageError("--timeout and --submission-timeout must be positive numbers of seconds.")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1; got {args.workers}.")
    out = os.path.abspath(args.out)
    if os.path.commonpath([out, os.path.abspath(args.submission)]) == os.path.abspath(args.submission):
        raise UsageError("--out must not be inside SUBMISSION (student files and results stay apart).")
    single = args.single or (not args.batch and is_single_submission(args.submission))
    if single:
        r = grade_submission(args.submission, args.tests, out, seed=args.seed or 0, timeout=args.timeout,
                             submission_timeout=args.submission_timeout, memory_mb=args.memory_mb)
        if r.status == "error":
            print(f"{r.name}: the grader could not finish: {r.message}", file=sys.stderr)
            print(f"results: {r.results_path}")
            return EXIT_MISMATCH
        print(f"{r.name}: {r.score:g} / {r.max_score:g} in {r.seconds:.1f} s")
        for name, score in r.tests.items():
            print(f"  {score:>5g}  {name}")
        print(f"results: {r.results_path}")
        return EXIT_PASS
    res = grade_batch(args.submission, args.tests, out, workers=args.workers, force=args.force, seed=args.seed,
                      timeout=args.timeout, submission_timeout=args.submission_timeout, memory_mb=args.memory_mb,
                      progress=not args.no_progress)
    print(res.summary())
    return EXIT_MISMATCH if any(s.status == "error" for s in res.submissions) else EXIT_PASS
