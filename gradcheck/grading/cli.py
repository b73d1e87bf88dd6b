"""The ``gradcheck grade`` subcommand (registered by :func:`gradcheck.cli.build_parser`).

A folder that holds ``.py`` files is one submission, a folder of folders a batch (``--batch`` /
``--single`` force either); every option is checked before anything runs
(:func:`gradcheck.grading.runner.check_grading_inputs`). Exit codes: :data:`EXIT_CODES`.
"""

from __future__ import annotations

import argparse
import os
import sys

from .._startup import EXIT_INTERRUPTED, EXIT_TERMINATED  # the start-up's stops too
from ..errors import EXIT_MISMATCH, EXIT_PASS, EXIT_USAGE, UsageError
from ..isolation import PROVIDED_TEXT
from . import runner
from .runner import GRADER_ERROR, MIN_MEMORY_MB, display_name
from .stopping import Terminated, sigterm_stops, stopped_by

__all__ = ["add_grade_parser", "cmd_grade", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "EXIT_CODES"]


EXIT_CODES = f"""\
exit codes:
  {EXIT_PASS}    every submission was graded (whatever the scores)
  {EXIT_MISMATCH}    grader error: the grader could not finish some submission (the sandbox
       could not start, pytest failed); its results.json says so and gives 0 for now;
       rerunning the same command regrades it. A submission whose grading passes
       --submission-timeout is graded (0, "too slow"), not a grader error
  {EXIT_USAGE}    usage error, before anything ran: a bad option (e.g. --seed < 0, --memory-mb below
       {MIN_MEMORY_MB}), --tests without grading tests, an empty submissions folder, an --out that
       is a file or cannot be written, or that another grade run (named by its PID) grades into
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C): finished results and the gradebook are kept, the
       unfinished submissions are 'not graded' (no score) in it and in their results.json; rerun
       the same command to resume
  {EXIT_TERMINATED}  stopped by SIGTERM (a Gradescope or CI time limit): the same as Ctrl-C
"""

DESCRIPTION = """\
Grade student submissions with an assignment's grading tests (a pytest file using the
gradcheck.grading plugin). Each submission is graded by a separate pytest process with
plugin autoloading off, whose configuration never comes from the submission; the
student's classes run in a sandbox process (gradcheck.sandbox). Writes, per submission,
a Gradescope results.json and junit.xml; for a batch also gradebook.csv and scores.png.
A zero-score results.json is written before any student code runs."""

EXAMPLES = """\
examples:
  gradcheck grade assignments/linear_relu_ce/solution --tests assignments/linear_relu_ce/tests \\
      --out out/one
  gradcheck grade submissions/ --tests assignments/linear_relu_ce/tests --out graded/ --workers 2
  # on a Dask cluster (its workers see the same paths; docs/dask.md):
  gradcheck grade submissions/ --tests assignments/linear_relu_ce/tests --out graded/ \\
      --scheduler tcp://HOST:8786
  # inside Gradescope's autograder container:
  gradcheck grade /autograder/submission --tests /autograder/source/tests --out /autograder/results

""" + EXIT_CODES


def add_grade_parser(sub: argparse._SubParsersAction, epilog: str = "") -> argparse.ArgumentParser:
    """Add the ``grade`` subcommand to the ``gradcheck`` parser's subparsers ``sub``; return it.
    (``epilog``, the main parser's exit codes, is not shown: ``grade`` has :data:`EXIT_CODES`.)"""
    g = sub.add_parser("grade", description=DESCRIPTION, epilog=EXAMPLES,
                       help="grade one submission or a folder of submissions (Gradescope "
                            "results.json)", formatter_class=argparse.RawDescriptionHelpFormatter)
    arg = g.add_argument
    arg("submission", metavar="SUBMISSION",
        help="a submission folder, or a folder of submission folders")
    arg("--tests", required=True, metavar="TESTS",
        help="grading test file or folder of the assignment")
    arg("--out", required=True, metavar="DIR",
        help="output folder: results.json (+ junit.xml); for a batch one sub-folder per "
             "submission, gradebook.csv and scores.png")
    arg("--workers", type=int, default=None, metavar="N",
        help=f"submissions graded at once (default: the number of cores, {os.cpu_count()})")
    arg("--scheduler", default=None, metavar="ADDRESS",
        help="grade the batch on a running dask.distributed cluster: the scheduler's address "
             "(tcp://HOST:8786) or its scheduler file; one task per submission, each isolated on "
             "its worker; results are written here (pip install .[distributed]; docs/dask.md)")
    arg("--force", action="store_true", help="regrade submissions that already have results")
    arg("--only", action="append", default=[], metavar="NAME",
        help="in a batch, grade only the submission NAME again (as --force, for it alone; repeat for more): the "
             "others keep their saved results, and one without any is left out, its gradebook row saying so; "
             "refused when the tests, seed or options changed since the batch was graded")
    arg("--seed", type=int, default=None, metavar="N",
        help="seed of the hidden tests, an integer >= 0 (default: one submission 0; a batch "
             "reuses the seed in DIR/grading.json or draws and records a new one)")
    arg("--timeout", type=float, default=3.0, metavar="SECONDS",
        help="limit of each call into the student's code (importing it too), in wall clock, in the tests "
             "without their own timeout(seconds) marker (a marker is its test's limit); a call the machine's other "
             "load kept off the CPU gets the CPU time it did not have, up to 10 x the limit, so load does not "
             "decide a grade (default 3)")
    arg("--submission-timeout", type=float, default=300.0, metavar="SECONDS",
        help="wall-clock limit of grading one submission (default 300)")
    arg("--memory-mb", type=int, default=1024, metavar="MIB",
        help=f"memory limit of the student's sandbox process, at least {MIN_MEMORY_MB} (Python, "
             f"numpy and the checks need about 150) (default 1024)")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--batch", action="store_true",
                      help="treat SUBMISSION as a folder of submissions")
    mode.add_argument("--single", action="store_true", help="treat SUBMISSION as one submission")
    arg("--no-progress", action="store_true", help="no progress bar")
    arg("--unsafe-no-isolation", action="store_true",
        help="grade even where namespaces (bubblewrap) are not available, in the process sandbox "
             "alone, which a hostile submission can escape: for trusted code only (results.json "
             f"records \"isolation\": \"none\"); it offers the same packages ({PROVIDED_TEXT}), so "
             f"scores do not change")
    g.set_defaults(func=cmd_grade)
    return g


def cmd_grade(args: argparse.Namespace) -> int:
    """Run ``gradcheck grade``; print a summary; return the exit code (:data:`EXIT_CODES`). SIGTERM
    stops it as Ctrl-C does (:func:`~gradcheck.grading.stopping.sigterm_stops`)."""
    with sigterm_stops():
        try:
            return _grade(args)
        except KeyboardInterrupt as exc:  # before or after the grading (its own stops are handled there)
            print(f"gradcheck: stopped by {stopped_by(exc)}; finished results are kept; rerun the "
                  f"same command to resume.", file=sys.stderr)
            return _stopped(exc)


def _stopped(exc: KeyboardInterrupt) -> int:
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def _grade(args: argparse.Namespace) -> int:
    """:func:`cmd_grade` with SIGTERM caught."""
    opts = dict(timeout=args.timeout, submission_timeout=args.submission_timeout,
                memory_mb=args.memory_mb, unsafe_no_isolation=args.unsafe_no_isolation)
    try:
        batch = runner.check_grading_inputs(
            args.submission, args.tests, args.out, seed=args.seed, workers=args.workers,
            batch=True if args.batch else False if args.single else None,
            isolation_here=args.scheduler is None, **opts)
        if batch:  # the grading tests collected once (cached for grade_batch): a stop here is a start-up stop
            runner.check_tests_collect(args.tests, fork=args.scheduler is None)
    except KeyboardInterrupt as exc:  # the checks start a sandbox (isolation_level): seconds
        print(f"gradcheck: stopped by {stopped_by(exc)} during the start-up checks, before anything "
              f"was graded; rerun the same command to grade.", file=sys.stderr)
        return _stopped(exc)
    out = os.path.abspath(args.out)
    if batch:
        try:
            res = runner.grade_batch(args.submission, args.tests, out, workers=args.workers,
                                     force=args.force, seed=args.seed, scheduler=args.scheduler,
                                     progress=not args.no_progress, only=args.only, **opts)
        except KeyboardInterrupt as exc:  # a second Ctrl-C while the first was being handled
            print("gradcheck: interrupted; rerun the same command to resume.", file=sys.stderr)
            return _stopped(exc)
        print(res.summary())
        if res.interrupted:
            return EXIT_TERMINATED if res.stopped_by.startswith("SIGTERM") else EXIT_INTERRUPTED
        errors = any(s.status == GRADER_ERROR for s in res.submissions) or "gradebook.csv" in res.unwritten
        return EXIT_MISMATCH if errors else EXIT_PASS
    if args.scheduler is not None or args.only:
        raise UsageError(f"{'--scheduler' if args.scheduler is not None else '--only'} is for a batch (a folder of "
                         f"submission folders); one submission is graded here, without it.")
    try:
        r = runner.grade_submission(args.submission, args.tests, out, seed=args.seed or 0, **opts)
    except KeyboardInterrupt as exc:
        print(f"gradcheck: stopped by {stopped_by(exc)}; {os.path.join(out, 'results.json')} says "
              f"not graded; rerun the same command to grade again.", file=sys.stderr)
        return _stopped(exc)
    if r.status == GRADER_ERROR and "(pytest exit code " in r.message:  # the tests' own: a bad marker, two
        runner.check_tests_collect(args.tests)  # tests of one name: exit 2 as a batch says it (tester20g M2)
    if r.status == GRADER_ERROR:
        print(f"{display_name(r.name)}: grader error (not the submission's fault): "
              f"{display_name(r.message)}", file=sys.stderr)
    else:
        out_of = f" / {r.max_score:g}" if r.max_score else ""  # too slow before its tests were collected
        print(f"{display_name(r.name)}: {r.score:g}{out_of} in {r.seconds:.1f} s")
        if r.message:  # a result without tests: too slow as a whole, a link to nothing
            print(f"  {display_name(r.message)}")
        for name, score in r.tests.items():
            print(f"  {score:>5g}  {name}")
    print(f"results: {r.results_path}")
    return EXIT_MISMATCH if r.status == GRADER_ERROR else EXIT_PASS
