"""tester19g F5/F8: a zip the grader cannot decompress or create on disk is refused with a student-facing reason.

A corrupt LZMA member raised ``lzma.LZMAError``, which the unpacking did not catch: a "grader error" regraded
every run. A file and a folder named alike, and a member name over 255 bytes, were refused with the grader's
temporary path in the message.
"""

import io
import zipfile

import pytest

from gradcheck.grading.archive import ArchiveRefused, unpack

TEXT = b"import numpy as np\n" + b"x = np.arange(10)\n" * 200


def _corrupt(method: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        z.writestr("layers.py", TEXT)
    b = bytearray(buf.getvalue())
    i = b.find(b"layers.py") + len("layers.py")
    for k in range(i + 20, i + 60):  # the member's compressed bytes (tester19g probes/mkzips.py)
        b[k] ^= 0x5A
    return bytes(b)


def _zip(**members: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name.replace("__", "/"), data)
    return buf.getvalue()


@pytest.mark.parametrize("method,label", [(zipfile.ZIP_LZMA, "LZMA"), (zipfile.ZIP_BZIP2, "bzip2")])
def test_a_corrupt_member_is_refused_naming_it(tmp_path, method, label):
    (z := tmp_path / "sub.zip").write_bytes(_corrupt(method))
    (out := tmp_path / "out").mkdir()
    with pytest.raises(ArchiveRefused) as err:
        unpack(z, out)
    assert str(err.value).startswith("its member 'layers.py' is damaged") and label in str(err.value)


@pytest.mark.parametrize("members,expected", [
    ({"a": b"x", "a__layers.py": TEXT}, "two of its members clash: a file and a folder have the same name 'a'"),
    ({"layers.py": TEXT, "x" * 300 + ".py": b""}, "has a file or folder name of 303 bytes"),  # session 23: its own
])
def test_a_member_the_file_system_refuses_is_named_without_host_paths(tmp_path, members, expected):
    (z := tmp_path / "sub.zip").write_bytes(_zip(**members))
    (out := tmp_path / "gradcheck-zip-x").mkdir()
    with pytest.raises(ArchiveRefused) as err:
        unpack(z, out)
    assert expected in str(err.value) and str(tmp_path) not in str(err.value) + err.value.advice
