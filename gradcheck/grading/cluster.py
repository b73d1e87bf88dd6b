"""Grade a batch on a dask.distributed cluster (``gradcheck grade ... --scheduler ADDRESS``).

:class:`DaskPool` is :func:`~gradcheck.grading.runner.grade_batch`'s cluster pool: each submission
is one task, :func:`grade_on_worker`, graded on the worker as in a local batch. The worker gets
paths (a shared file system) and options, never the signing key; the client checks its reply
(:func:`_check_reply`), writes and signs the results itself: nothing a worker writes into the
output folder is ever read. docs/dask.md.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import tempfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError
from . import runner
from .runner import GRADER_ERROR, SubmissionResult, find_grading_tests

__all__ = ["DaskPool", "grade_on_worker", "probe_worker", "connect"]

#: Seconds to wait for the scheduler to answer, and for a first worker to join it.
CONNECT_TIMEOUT = 20.0
WORKER_TIMEOUT = 60.0
#: Seconds between a running task's looks at the batch's stop event (Ctrl-C on the client).
STOP_POLL = 1.0
#: The largest junit.xml or results.json accepted from a worker (the plugin writes far less).
MAX_REPLY_BYTES = 8 << 20


def connect(scheduler: str):
    """A :class:`distributed.Client` of ``scheduler`` (an address or a scheduler file's path);
    :class:`~gradcheck.errors.UsageError` when dask.distributed is not installed, the address is
    malformed or the scheduler does not answer within :data:`CONNECT_TIMEOUT` seconds."""
    try:
        from distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise UsageError("--scheduler needs dask.distributed, which is not installed here: pip "
                         "install .[distributed]  (or: pip install 'dask[distributed]').") from None
    is_file = os.path.isfile(scheduler)
    try:  # a malformed address is refused here (a Client half-made from it hangs on exit)
        scheme, loc = ("", "") if is_file else parse_address(scheduler)
        if scheme in ("tcp", "tls"):
            parse_host_port(loc)
    except ValueError as exc:
        raise UsageError(f"--scheduler {scheduler!r} is neither a scheduler file nor an address "
                         f"({exc}); give the address the scheduler prints, e.g. tcp://HOST:8786 "
                         f"(docs/dask.md).") from None
    where = {"scheduler_file": scheduler} if is_file else {"address": scheduler}
    try:
        return Client(**where, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler!r} ({type(exc).__name__}: "
                         f"{exc}). Give the address the scheduler prints (tcp://HOST:8786) or its "
                         f"--scheduler-file, and check that it runs and this machine can reach it "
                         f"(docs/dask.md).") from None


def probe_worker(tests: str, submissions: str) -> dict[str, Any]:
    """Can this worker grade (run on each by ``Client.run``; never raises)? ``host``,
    ``isolation``, ``detail`` (:func:`gradcheck.sandbox.support`), ``tests`` (how many grading
    tests it sees, or the error) and ``submissions`` (it sees that folder)."""
    from ..sandbox import support

    level, detail = support()
    try:
        n_tests: int | str = len(find_grading_tests(tests))
    except UsageError as exc:
        n_tests = str(exc)
    return {"host": socket.gethostname(), "isolation": level, "detail": detail, "tests": n_tests,
            "submissions": os.path.isdir(submissions)}


def grade_on_worker(submission: str, tests: str, options: dict[str, Any],
                    stop_event: str) -> dict[str, Any]:
    """The task of one submission: ``grade_submission(..., **options)`` into a private temporary
    folder; when the batch's :class:`distributed.Event` ``stop_event`` is set (Ctrl-C on the
    client) its children are stopped and the result is ``"interrupted"``. Returns ``result``
    (the :class:`SubmissionResult` fields but ``results_path``), ``results`` (results.json),
    ``junit`` (bytes or None) and ``host``."""
    from distributed import Event, get_client

    stopper, done = runner._Stopper(), threading.Event()
    stop = Event(stop_event, client=get_client())  # the worker's client (this task's thread)

    def watch() -> None:
        try:
            while not done.is_set():
                if stop.wait(timeout=STOP_POLL):
                    return stopper.stop()
        except (OSError, RuntimeError):  # the scheduler is gone: nobody to stop for or reply to
            return

    watcher = threading.Thread(target=watch, name="gradcheck-stop-watch", daemon=True)
    watcher.start()
    try:
        with tempfile.TemporaryDirectory(prefix="gradcheck-worker-") as tmp:
            out = Path(tmp) / "out"
            r = runner.grade_submission(submission, tests, out, **options, _stopper=stopper)
            data = json.loads((out / "results.json").read_text(encoding="utf-8"))
            junit = out / "junit.xml"
            junit = junit.read_bytes() if junit.is_file() and not junit.is_symlink() else None
    finally:
        done.set()
        watcher.join()
    fields = {k: getattr(r, k) for k in ("name", "score", "max_score", "status", "seconds", "tests",
                                         "message")}
    return {"result": fields, "results": data, "junit": junit, "host": socket.gethostname()}


def _check_reply(reply: Any, name: str) -> str | None:
    """What is wrong with a worker's reply for submission ``name`` (None: its shape is right)."""
    if not isinstance(reply, dict) or not isinstance(r := reply.get("result"), dict) \
            or not isinstance(data := reply.get("results"), dict) \
            or not isinstance(data.get("extra_data"), dict):
        return "the reply is not a result"
    if r.get("name") != name:
        return f"the reply is for another submission ({str(r.get('name'))[:100]!r})"
    if r.get("status") not in ("graded", GRADER_ERROR, "interrupted") \
            or not isinstance(r.get("message"), str):
        return f"unknown status {r.get('status')!r}"
    if not all(isinstance(r.get(k), (int, float)) for k in ("score", "max_score", "seconds")):
        return "score, max_score or seconds is not a number"
    if not isinstance(tests := r.get("tests"), dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) for k, v in tests.items()):
        return "the per-test scores are not numbers"
    junit = reply.get("junit")
    if junit is not None and (not isinstance(junit, bytes) or len(junit) > MAX_REPLY_BYTES):
        return "junit.xml is not bytes or too large"
    if len(json.dumps(data)) > MAX_REPLY_BYTES:
        return "results.json is too large"
    if r["status"] == "graded" and data.get("score") != r["score"]:
        return "the score in results.json is not the result's"
    return None


class DaskPool:
    """Grade on a dask.distributed cluster, ``runner._LocalPool``'s interface: one task per
    submission, results written here (``out_p``) only. ``src`` (submissions) and ``tests`` are at
    the same paths on the workers; ``key``, ``options``: :meth:`bind`'s.

    Raises
    ------
    UsageError
        :func:`connect`'s; ``unsafe_no_isolation`` (the student's code could reach the scheduler
        and run code on every worker); no worker within :data:`WORKER_TIMEOUT` s; a worker
        without namespaces, or that does not see the tests or the submissions.
    """

    def __init__(self, scheduler: str, src: Path, tests: str | os.PathLike, out_p: Path,
                 key: bytes, options: dict[str, Any]) -> None:
        if options.get("unsafe_no_isolation"):
            raise UsageError("--unsafe-no-isolation is refused with --scheduler: without the "
                             "namespaces sandbox (no network) a submission could connect to the "
                             "scheduler and run code on every worker, forging any student's "
                             "result.")
        self._tests, self._out = str(Path(tests).resolve()), out_p
        self.bind(key, options)
        self.client = connect(scheduler)
        try:
            self.workers = self._check_workers(scheduler, str(src))
        except BaseException:
            self.client.close()
            raise
        from distributed import Event

        self._names: dict[str, str] = {}  # task key -> submission, until its result is taken
        self._kept: list[SubmissionResult] = []
        self._count, self._batch = itertools.count(), uuid.uuid4().hex[:12]
        self._stop = Event(f"gradcheck-stop-{self._batch}", client=self.client)

    def _check_workers(self, scheduler: str, src: str) -> int:
        try:
            self.client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
        except (TimeoutError, OSError):
            raise UsageError(f"the Dask scheduler at {scheduler!r} has no worker "
                             f"({WORKER_TIMEOUT:g} s waited): start workers (dask worker "
                             f"{scheduler}, or cluster.scale(N)).") from None
        want = len(find_grading_tests(self._tests))
        problems = []
        for addr, p in sorted(self.client.run(probe_worker, self._tests, src).items()):
            at = f"{addr} ({p['host']}):"
            if p["isolation"] == "none":
                problems.append(f"{at} no namespaces sandbox: {p['detail']}")
            if p["tests"] != want:
                problems.append(f"{at} the tests {self._tests} are not the same there: "
                                f"{p['tests']}")
            if not p["submissions"]:
                problems.append(f"{at} the submissions folder {src} does not exist there")
        if problems:
            raise UsageError("these Dask workers cannot grade (each needs bubblewrap and the "
                             "project installed, and the tests and submissions at the same paths "
                             "as here; docs/dask.md):\n  " + "\n  ".join(problems))
        return sum(self.client.nthreads().values())

    def bind(self, key: bytes, options: dict[str, Any],
             folders: dict[str, Path] | None = None) -> None:
        """The batch's key, options and folders (``runner.result_folders``), given once the cluster
        is checked (so that a usage error leaves the output folder as it was)."""
        self._key, self._options, self._folders = key, options, folders or {}

    def _folder(self, name: str) -> Path:
        return self._folders.get(name) or runner.result_folder(self._out, name)

    def submit(self, sub: Path):
        """Write the started placeholder (as a local batch does), then submit the task."""
        runner._start_results(self._folder(sub.name), self._options["seed"], self._key,
                              "Grading started on a Dask worker but did not finish; if you see "
                              "this, the batch stopped unexpectedly.")
        fut = self.client.submit(grade_on_worker, str(sub), self._tests, self._options,
                                 self._stop.name, pure=False, retries=0,
                                 key=f"gradcheck-{self._batch}-{next(self._count)}")
        self._names[fut.key] = sub.name
        return fut

    def completed(self, futs: Sequence) -> Iterator[SubmissionResult]:
        from distributed import as_completed

        return (self._store(f) for f in as_completed(futs, loop=self.client.loop))

    def finished(self, futs: Sequence) -> list[SubmissionResult]:
        """After :meth:`stop`: the results that had come but were not taken (written, kept)."""
        return self._kept

    def stop(self, futs: Sequence) -> None:
        """Ctrl-C: running tasks stop their children (the stop event); the rest is cancelled."""
        self._stop.set()
        self._kept = [self._store(f) for f in futs if f.key in self._names
                      and f.status == "finished"]
        self.client.cancel([f for f in futs if f.key in self._names], force=True)

    def close(self) -> None:
        self.client.close()

    def _store(self, fut) -> SubmissionResult:
        """Write ``fut``'s reply as this batch's result (signed), or a grader error if it failed."""
        name = self._names.pop(fut.key)
        path = self._folder(name) / "results.json"
        try:
            reply = fut.result()
            problem = _check_reply(reply, name)
        except Exception as exc:  # the task raised, or its worker died (distributed.KilledWorker)
            reply, problem = None, f"the task failed: {type(exc).__name__}: {str(exc)[:500]}"
        finally:
            fut.release()
        if problem is not None:
            return runner._grader_failure(
                path, f"The autograder could not finish on the Dask cluster ({problem}); score 0. "
                f"Rerunning the batch grades it again.", self._options["seed"],
                {"submission": name}, 0.0, self._key)
        r = reply["result"]
        if r["status"] == "interrupted":
            return SubmissionResult(name, 0.0, 0.0, "interrupted", 0.0, str(path))
        data = reply["results"]
        data["extra_data"]["worker"] = str(reply.get("host", ""))[:200]
        runner._write_json(path, data, self._key)
        if reply["junit"] is not None:
            junit = path.with_name("junit.xml")
            if junit.is_symlink():
                junit.unlink()
            junit.write_bytes(reply["junit"])
        return SubmissionResult(name, float(r["score"]), float(r["max_score"]), r["status"],
                                float(r["seconds"]), str(path), message=r["message"],
                                tests={k: float(v) for k, v in r["tests"].items()})
