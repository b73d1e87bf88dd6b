"""Grade a batch on a dask.distributed cluster (``gradcheck grade ... --scheduler ADDRESS``).

:class:`DaskPool` is the cluster side of :func:`gradcheck.grading.runner.grade_batch`'s
dispatch (the local side is ``runner._LocalPool``; both serve the same batch loop). Each
submission is one task, :func:`grade_on_worker`, which runs
:func:`~gradcheck.grading.runner.grade_submission` on the worker exactly as a local
batch does -- a child pytest process, the student's code in the namespaces sandbox of
:mod:`gradcheck.isolation` -- but into a private temporary folder of the worker.

What crosses the wire
---------------------
* To the worker: the submission's and the tests' paths (the workers must see them at
  the same paths: a shared file system) and the staff's options. Never the batch's
  signing key.
* Back to the client: the :class:`~gradcheck.grading.runner.SubmissionResult` fields,
  the ``results.json`` written by the grader's own pytest child (the plugin) and its
  ``junit.xml``. The student's code, jailed in the sandbox without network, reaches
  neither that folder nor the scheduler.
* The client checks the reply's shape, writes ``out/<submission>/results.json`` and
  ``junit.xml`` itself and signs them with the batch key (``out/.gradcheck-key``), so a
  resumed batch knows its own results, wherever they were graded. Nothing a worker
  writes into the shared output folder is ever read.

The client connects with :class:`distributed.Client`, asks every worker once
(:meth:`distributed.Client.run`) whether it can grade (namespaces, the tests and the
submissions visible), submits with :meth:`distributed.Client.submit` and gathers with
:func:`distributed.as_completed`. See docs/dask.md.
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
from .runner import (
    GRADER_ERROR,
    SubmissionResult,
    _Stopper,
    _write_json,
    find_grading_tests,
    grade_submission,
    placeholder_results,
    result_folder,
)

__all__ = ["DaskPool", "grade_on_worker", "probe_worker", "connect"]

#: Seconds to wait for the scheduler to answer, and for a first worker to join it.
CONNECT_TIMEOUT = 20.0
WORKER_TIMEOUT = 60.0
#: Seconds between a running task's looks at the batch's stop event (Ctrl-C on the client).
STOP_POLL = 1.0
#: The largest junit.xml or results.json accepted from a worker (the plugin writes far less).
MAX_REPLY_BYTES = 8 << 20

_INSTALL = "pip install .[distributed]  (or: pip install 'dask[distributed]')"


def connect(scheduler: str):
    """A :class:`distributed.Client` of the scheduler at ``scheduler`` (address or scheduler-file path).

    Raises
    ------
    UsageError
        dask.distributed is not installed, or the scheduler does not answer within
        :data:`CONNECT_TIMEOUT` seconds.
    """
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(f"--scheduler needs dask.distributed, which is not installed here: {_INSTALL}.") from None
    kw: dict[str, Any] = ({"scheduler_file": scheduler} if os.path.isfile(scheduler)
                          else {"address": scheduler})
    if "address" in kw:  # a malformed address: refused here (a Client half-made from it hangs on exit)
        from distributed.comm.addressing import parse_address, parse_host_port

        try:
            scheme, loc = parse_address(scheduler)
            if scheme in ("tcp", "tls"):
                parse_host_port(loc)
        except ValueError as exc:
            raise UsageError(f"--scheduler {scheduler!r} is neither a scheduler file nor an address ({exc}); give "
                             f"the address the scheduler prints, e.g. tcp://HOST:8786 (docs/dask.md).") from None
    try:
        return Client(**kw, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler!r} ({type(exc).__name__}: {exc}). Give the "
                         f"address the scheduler prints (tcp://HOST:8786) or its --scheduler-file, and check that "
                         f"it runs and this machine can reach it (docs/dask.md).") from None


def probe_worker(tests: str, submissions: str) -> dict[str, Any]:
    """Run on every worker before the batch: can it grade? (``Client.run``; never raises).

    Returns
    -------
    dict
        ``host``, ``isolation`` and ``detail`` (:func:`gradcheck.isolation.support`),
        ``tests`` (the number of grading tests it sees, or an error string) and
        ``submissions`` (True when it sees the submissions folder).
    """
    from ..isolation import support

    level, detail = support()
    try:
        n_tests: int | str = len(find_grading_tests(tests))
    except UsageError as exc:
        n_tests = str(exc)
    return {"host": socket.gethostname(), "isolation": level, "detail": detail, "tests": n_tests,
            "submissions": os.path.isdir(submissions)}


def grade_on_worker(submission: str, tests: str, options: dict[str, Any], stop_event: str) -> dict[str, Any]:
    """The task of one submission: grade it on this worker, return what the client writes.

    ``options`` are :func:`~gradcheck.grading.runner.grade_submission`'s keyword options
    (seed, timeout, submission_timeout, memory_mb, unsafe_no_isolation). The results go
    to a private temporary folder (mode 0700) of this worker, removed afterwards. While
    it runs, a thread watches the batch's :class:`distributed.Event` ``stop_event``: when
    the client sets it (Ctrl-C), the grading children are stopped as in a local batch
    and the result is ``"interrupted"``.

    Returns
    -------
    dict
        ``result``: the :class:`SubmissionResult` fields but ``results_path``;
        ``results``: the results.json dict; ``junit``: junit.xml's bytes or None;
        ``host``: this worker's host name.
    """
    from distributed import Event, get_client

    stopper, done = _Stopper(), threading.Event()
    stop = Event(stop_event, client=get_client())  # the worker's client (found from this task's thread)

    def watch() -> None:
        try:
            while not done.is_set():
                if stop.wait(timeout=STOP_POLL):
                    stopper.stop()
                    return
        except (OSError, RuntimeError):  # the scheduler is gone: no client to stop for, nor to reply to
            return

    watcher = threading.Thread(target=watch, name="gradcheck-stop-watch", daemon=True)
    watcher.start()
    try:
        with tempfile.TemporaryDirectory(prefix="gradcheck-worker-") as tmp:
            out = Path(tmp) / "out"
            r = grade_submission(submission, tests, out, **options, _stopper=stopper, _key=None)
            data = json.loads((out / "results.json").read_text(encoding="utf-8"))
            junit_path = out / "junit.xml"
            junit = junit_path.read_bytes() if junit_path.is_file() and not junit_path.is_symlink() else None
    finally:
        done.set()
        watcher.join()
    fields = {k: getattr(r, k) for k in ("name", "score", "max_score", "status", "seconds", "tests", "message")}
    return {"result": fields, "results": data, "junit": junit, "host": socket.gethostname()}


def _check_reply(reply: Any, name: str) -> str | None:
    """What is wrong with a worker's reply for submission ``name`` (None: its shape is right)."""
    if not isinstance(reply, dict) or not isinstance(reply.get("result"), dict) \
            or not isinstance(reply.get("results"), dict) or not isinstance(reply["results"].get("extra_data"), dict):
        return "the reply is not a result"
    r = reply["result"]
    if r.get("name") != name:
        return f"the reply is for another submission ({str(r.get('name'))[:100]!r})"
    if r.get("status") not in ("graded", GRADER_ERROR, "interrupted") or not isinstance(r.get("message"), str):
        return f"unknown status {r.get('status')!r}"
    if not all(isinstance(r.get(k), (int, float)) for k in ("score", "max_score", "seconds")):
        return "score, max_score or seconds is not a number"
    tests = r.get("tests")
    if not isinstance(tests, dict) or not all(isinstance(k, str) and isinstance(v, (int, float))
                                              for k, v in tests.items()):
        return "the per-test scores are not numbers"
    junit = reply.get("junit")
    if junit is not None and (not isinstance(junit, bytes) or len(junit) > MAX_REPLY_BYTES):
        return "junit.xml is not bytes or too large"
    if len(json.dumps(reply["results"])) > MAX_REPLY_BYTES:
        return "results.json is too large"
    if r["status"] == "graded" and reply["results"].get("score") != r["score"]:
        return "the score in results.json is not the result's"
    return None


class DaskPool:
    """Grade on a dask.distributed cluster: one task per submission, results written here.

    The same interface as ``runner._LocalPool`` (``submit``, ``completed``,
    ``finished``, ``stop``, ``close``, ``workers``).

    Parameters
    ----------
    scheduler : str
        The scheduler's address (``tcp://host:8786``) or the path of its scheduler file.
    src : Path
        The batch's submissions folder (checked on every worker).
    tests : path
        The grading tests (the same path on the workers).
    out_p : Path
        The output folder, written by this process only.
    key : bytes
        The batch's signing key (stays here).
    options : dict
        :func:`~gradcheck.grading.runner.grade_submission`'s keyword options.

    Raises
    ------
    UsageError
        See :func:`connect`; ``unsafe_no_isolation`` (the student's code could reach
        the scheduler and run code on every worker); no worker joined within
        :data:`WORKER_TIMEOUT` s; a worker without namespaces, or that does not see
        the tests or the submissions.
    """

    def __init__(self, scheduler: str, src: Path, tests: str | os.PathLike, out_p: Path, key: bytes,
                 options: dict[str, Any]) -> None:
        if options.get("unsafe_no_isolation"):
            raise UsageError("--unsafe-no-isolation is refused with --scheduler: without the namespaces sandbox (no "
                             "network) a submission could connect to the scheduler and run code on every worker, "
                             "forging any student's result.")
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
        self._count = itertools.count()
        self._batch = uuid.uuid4().hex[:12]
        self._stop = Event(f"gradcheck-stop-{self._batch}", client=self.client)

    def _check_workers(self, scheduler: str, src: str) -> int:
        try:
            self.client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
        except (TimeoutError, OSError):
            raise UsageError(f"the Dask scheduler at {scheduler!r} has no worker ({WORKER_TIMEOUT:g} s waited): "
                             f"start workers (dask worker {scheduler}, or cluster.scale(N)).") from None
        want = len(find_grading_tests(self._tests))
        problems = []
        for addr, p in sorted(self.client.run(probe_worker, self._tests, src).items()):
            if p["isolation"] == "none":
                problems.append(f"{addr} ({p['host']}): no namespaces sandbox: {p['detail']}")
            if p["tests"] != want:
                problems.append(f"{addr} ({p['host']}): the tests {self._tests} are not the same there: {p['tests']}")
            if not p["submissions"]:
                problems.append(f"{addr} ({p['host']}): the submissions folder {src} does not exist there")
        if problems:
            raise UsageError("these Dask workers cannot grade (each needs bubblewrap and the project installed, and "
                             "the tests and submissions at the same paths as here; docs/dask.md):\n  "
                             + "\n  ".join(problems))
        return sum(self.client.nthreads().values())

    def submit(self, sub: Path):
        """Write the started placeholder (as a local batch does), then submit the submission's task."""
        stale = self._folder(sub.name) / "junit.xml"  # nothing of an earlier run
        if stale.is_symlink() or stale.is_file():
            stale.unlink()
        start = placeholder_results("Grading started on a Dask worker but did not finish; if you see this, the "
                                    "batch stopped unexpectedly.", self._options["seed"])
        _write_json(self._folder(sub.name) / "results.json", start, self._key)
        fut = self.client.submit(grade_on_worker, str(sub), self._tests, self._options, self._stop.name,
                                 pure=False, retries=0, key=f"gradcheck-{self._batch}-{next(self._count)}")
        self._names[fut.key] = sub.name
        return fut

    def completed(self, futs: Sequence) -> Iterator[SubmissionResult]:
        from distributed import as_completed

        for fut in as_completed(futs, loop=self.client.loop):
            yield self._store(fut)

    def finished(self, futs: Sequence) -> list[SubmissionResult]:
        """After :meth:`stop`: the results that had come but were not taken yet (written, kept)."""
        return self._kept

    def stop(self, futs: Sequence) -> None:
        """Ctrl-C: the running tasks stop their children (the stop event); the rest is cancelled."""
        self._stop.set()
        self._kept = [self._store(f) for f in futs if f.key in self._names and f.status == "finished"]
        self.client.cancel([f for f in futs if f.key in self._names], force=True)

    def bind(self, key: bytes, options: dict[str, Any], folders: dict[str, Path] | None = None) -> None:
        """The batch's signing key, grading options and result folders (``runner.result_folders``), once the
        cluster has been reached and checked (so that a usage error leaves the output folder as it was)."""
        self._key, self._options, self._folders = key, options, folders or {}

    def _folder(self, name: str) -> Path:
        return self._folders.get(name) or result_folder(self._out, name)

    def close(self) -> None:
        self.client.close()

    def _store(self, fut) -> SubmissionResult:
        """Write the reply of ``fut`` as this batch's result (signed), or a grader error when it failed."""
        name = self._names.pop(fut.key)
        path = self._folder(name) / "results.json"
        try:
            reply = fut.result()
            problem = _check_reply(reply, name)
        except Exception as exc:  # the task raised, or its worker died (distributed.KilledWorker)
            reply, problem = None, f"the task failed: {type(exc).__name__}: {str(exc)[:500]}"
        finally:
            fut.release()
        if problem is None and reply["result"]["status"] == "interrupted":
            return SubmissionResult(name, 0.0, 0.0, "interrupted", 0.0, str(path))
        if problem is not None:
            msg = (f"The autograder could not finish on the Dask cluster ({problem}); score 0. Rerunning the batch "
                   f"grades it again.")
            data = placeholder_results(msg, self._options["seed"], complete=True)
            data["extra_data"].update(status=GRADER_ERROR, submission=name)
            _write_json(path, data, self._key)
            return SubmissionResult(name, 0.0, 0.0, GRADER_ERROR, 0.0, str(path), message=msg)
        data = reply["results"]
        data["extra_data"]["worker"] = str(reply.get("host", ""))[:200]
        _write_json(path, data, self._key)
        if reply["junit"] is not None:
            junit = path.with_name("junit.xml")
            if junit.is_symlink():
                junit.unlink()
            junit.write_bytes(reply["junit"])
        r = reply["result"]
        return SubmissionResult(name, float(r["score"]), float(r["max_score"]), r["status"], float(r["seconds"]),
                                str(path), tests={k: float(v) for k, v in r["tests"].items()}, message=r["message"])

