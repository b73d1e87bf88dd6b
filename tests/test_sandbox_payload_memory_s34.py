"""A request whose arrays do not fit in the sandbox's memory (session 34: a submission hoarding memory made the
child die with "MemoryError while receiving a request", exit 70, which the grader read as the submission calling
sys.exit): the frame is read past, its header kept, so the child replies the failure and lives on, and the grader can
measure what the submission holds ("your code holds about N MiB", tests/test_grading_memory_budget.py)."""

import io

import pytest

from gradcheck._sandbox_child import PayloadNotRead, frame, read_frame


def _reader(data: bytes, refuse_over: int):
    """``read(n)`` of ``data`` that raises MemoryError, reading nothing, for ``n`` over ``refuse_over`` bytes."""
    buf = io.BytesIO(data)

    def read(n):
        if n > refuse_over:
            raise MemoryError
        return buf.read(n)
    return read


def test_a_payload_that_does_not_fit_is_read_past_and_the_next_frame_is_whole():
    big, small = frame({"op": "forward", "rid": "r1"}, b"x" * 200_000), frame({"op": "free", "rid": "r2"}, b"yz")
    read = _reader(big + small, refuse_over=100_000)
    with pytest.raises(PayloadNotRead) as info:
        read_frame(read)
    assert info.value.header == {"op": "forward", "rid": "r1"} and isinstance(info.value.error, MemoryError)
    assert read_frame(read) == ({"op": "free", "rid": "r2"}, b"yz")
    with pytest.raises(EOFError):
        read_frame(read)


def test_a_payload_that_fits_is_read_as_before():
    read = _reader(frame({"op": "load"}, b"abc"), refuse_over=1 << 30)
    assert read_frame(read) == ({"op": "load"}, b"abc")


def test_input_ending_inside_a_payload_that_does_not_fit_is_the_end_of_input():
    """Read past without allocating: the end inside the frame is EOFError (the child's end of input), not a bytes
    object of the missing size made where memory has just run out."""
    read = _reader(frame({"op": "forward", "rid": "r1"}, b"x" * 200_000)[:-50_000], refuse_over=100_000)
    with pytest.raises(EOFError):
        read_frame(read)
