"""A submission uploaded as a ``.zip`` archive at the top of a batch folder, unpacked safely.

Gradescope treats an uploaded zip as the submission's files; so does a batch here
(:func:`gradcheck.grading.runner.submission_folders`): ``carol.zip`` beside ``alice/`` is the
row ``carol.zip``, graded from its unpacked files. An archive the grader will not unpack (a member
outside the folder, a link, too many or too large members, encrypted, not a zip) gets its row too:
0 points and why (:class:`ArchiveRefused`), never a lost student.
"""

from __future__ import annotations

import errno
import lzma
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

__all__ = ["MAX_MEMBERS", "MAX_BYTES", "MAX_DEPTH", "ArchiveRefused", "is_archive", "unpack"]

#: The most members (files and folders) an archive may hold.
MAX_MEMBERS = 2000
#: The most bytes its members may hold once unpacked (checked while unpacking, so a size the
#: archive declares falsely, a zip bomb, stops there too); also the largest archive read.
MAX_BYTES = 64 << 20
#: The most folders deep a member of a zip (or a file of a submission folder) may lie: deeper is refused, saying so
#: (tester17g F4: a 1500-deep member was "not a zip archive the grader can read (RecursionError ...)"; F3: 900 nested
#: folders cost seconds of grading at each load)
MAX_DEPTH = 32
_CHUNK = 1 << 16


class ArchiveRefused(Exception):
    """Why an archive is not unpacked (the message completes "... is not unpacked: "); ``advice``
    says what to upload instead, for that reason (tester16g L1: "without links" was said for a zip
    refused for its size or its duplicate names)."""

    def __init__(self, message: str, advice: str = "Upload the files themselves, or a plain zip of them.") -> None:
        super().__init__(message)
        self.advice = advice


def is_archive(path: str | os.PathLike) -> bool:
    """True for a regular file (never a link) whose name ends in ``.zip`` (any case)."""
    p = os.fspath(path)
    try:
        return p.lower().endswith(".zip") and stat.S_ISREG(os.lstat(p).st_mode)
    except OSError:
        return False


def _member_path(name: str) -> list[str] | None:
    """The member's path as parts (backslashes read as separators), ``[]`` for one left out
    (``__MACOSX/``: resource forks), or None when it would leave the folder (absolute, a Windows drive ``C:``,
    ``..``, a NUL). A colon elsewhere is a file name's (``notes 10:30.txt``, tester22g M1: refused as leaving the
    folder)."""
    parts = name.replace("\\", "/").split("/")
    drive = len(parts[0]) >= 2 and parts[0][1] == ":" and parts[0][0].isascii() and parts[0][0].isalpha()
    if name.startswith(("/", "\\")) or "\0" in name or drive or ".." in parts:
        return None
    parts = [p for p in parts if p not in ("", ".")]
    return [] if parts and parts[0] == "__MACOSX" else parts


def _check_member(info: zipfile.ZipInfo) -> list[str]:
    """The member's path parts, after refusing what must not be unpacked."""
    parts = _member_path(info.filename)
    if parts is None:
        raise ArchiveRefused(f"its member {info.filename[:200]!r} would be written outside the "
                             f"submission's folder (an absolute path, a drive or '..')")
    mode = info.external_attr >> 16 if info.create_system == 3 else 0  # 3: made on Unix
    if stat.S_ISLNK(mode):
        raise ArchiveRefused(f"its member {info.filename[:200]!r} is a symbolic link (links are "
                             f"never unpacked: zip the files themselves)",
                             "Upload the files themselves, or a zip of them without links.")
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):  # 0: no type recorded, a file
        raise ArchiveRefused(f"its member {info.filename[:200]!r} is not a file or a folder")
    if len(parts) > MAX_DEPTH + 1:
        raise ArchiveRefused(f"its member {info.filename[:200]!r} lies {len(parts) - 1} folders deep, more than the "
                             f"{MAX_DEPTH} the grader unpacks", f"Upload the files in at most {MAX_DEPTH} nested folders "
                             f"(the tests read them at the top level).")
    if info.flag_bits & 0x1:
        raise ArchiveRefused(f"its member {info.filename[:200]!r} is encrypted")
    return parts


#: What reading a member's bytes raises when the archive is corrupt or uses a method Python cannot read (bz2's
#: corrupt stream is an OSError): the archive's fault, refused with the member's name (tester19g F5).
_UNREADABLE = (zipfile.BadZipFile, lzma.LZMAError, zlib.error, EOFError, NotImplementedError, OSError, ValueError,
               RuntimeError)


def _unreadable(info: zipfile.ZipInfo, exc: BaseException) -> ArchiveRefused:
    """The refusal of a member whose bytes cannot be read back (corrupt, or a compression Python lacks)."""
    method = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
              zipfile.ZIP_LZMA: "LZMA"}.get(info.compress_type, f"method {info.compress_type}")
    if isinstance(exc, zipfile.BadZipFile) and "File name in directory" in str(exc):  # tester22g: not "damaged"
        return ArchiveRefused(f"its member {info.filename[:200]!r} has another name in its own header than in the "
                              f"archive's index ({str(exc)[:300]}): the archive was edited after it was made, or a "
                              f"member was renamed in it", "Zip the files again with your system's own zip, or upload "
                              "them themselves.")
    why = ("is compressed with a method the grader cannot read" if isinstance(exc, NotImplementedError) else
           "is damaged (its compressed bytes do not decompress)")
    return ArchiveRefused(f"its member {info.filename[:200]!r} {why} ({method}: {type(exc).__name__})",
                          "Zip the files again with your system's own zip (deflate), or upload them themselves.")


def _os_refusal(info: zipfile.ZipInfo, parts: list[str], root: Path, exc: OSError) -> ArchiveRefused | None:
    """The student-facing refusal of a member the file system will not create (no host path in it), or None
    (the grader's own failure: a full disk)."""
    name = info.filename[:200]
    if exc.errno == errno.ENAMETOOLONG:
        long = max(parts, key=lambda p: len(os.fsencode(p)), default="")
        if len(os.fsencode(long)) > _limit(root, "PC_NAME_MAX", 255):
            return ArchiveRefused(f"its member {name!r} has a file or folder name of {len(os.fsencode(long)):,} "
                                  f"bytes ({long[:40]!r}...), longer than a file system allows (255 bytes per name)",
                                  "Give the file and its folders shorter names.")
        size = len(os.fsencode("/".join(parts)))  # tester22g: 31 names of 250 bytes each was "a name too long"
        return ArchiveRefused(f"its member {name!r} has a path of {size:,} bytes through {len(parts) - 1} folders, "
                              f"longer than a file system allows for a whole path ({_limit(root, 'PC_PATH_MAX', 4096):,} "
                              f"bytes, the grader's own folder's included), though each name in it is short enough",
                              "Put the file in fewer folders, or give the folders shorter names.")
    if isinstance(exc, (FileExistsError, NotADirectoryError, IsADirectoryError)):
        clash = next(("/".join(parts[:i]) for i in range(1, len(parts) + 1)
                      if root.joinpath(*parts[:i]).is_file() or i == len(parts) and root.joinpath(*parts).is_dir()),
                     "/".join(parts))
        return ArchiveRefused(f"two of its members clash: a file and a folder have the same name {clash!r} "
                              f"(at {name!r})", "Zip the folder again so that no file and folder share a name.")
    return None


def _limit(root: Path, name: str, default: int) -> int:
    """The file system's limit ``name`` (``PC_NAME_MAX``, ``PC_PATH_MAX``: :func:`os.pathconf`) at ``root``."""
    try:
        return int(os.pathconf(root, name))
    except (OSError, ValueError):
        return default


def _write_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, budget: int) -> int:
    """Write one file member at ``dest`` (a new file, never through a link); the bytes left."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        if dest.is_dir():
            raise
        raise ArchiveRefused(f"its member {info.filename[:200]!r} appears twice",
                             "Zip each file once (a fresh zip of the folder).") from None
    try:
        src = zf.open(info)
    except _UNREADABLE as exc:
        os.close(fd)
        raise _unreadable(info, exc) from None
    with src, open(fd, "wb") as out:
        while True:
            try:
                chunk = src.read(_CHUNK)
            except _UNREADABLE as exc:
                raise _unreadable(info, exc) from None
            if not chunk:
                break
            budget -= len(chunk)
            if budget < 0:
                raise ArchiveRefused(f"its members hold more than {MAX_BYTES >> 20} MiB unpacked",
                                     f"Upload only the files the assignment asks for (under {MAX_BYTES >> 20} MiB).")
            out.write(chunk)
    return budget


#: The largest central directory (the list of members) read: MAX_MEMBERS entries of 1 KiB (46 bytes and a name).
MAX_DIRECTORY = MAX_MEMBERS << 10
_EOCD, _EOCD64, _LOCATOR64 = struct.Struct("<4s4H2LH"), struct.Struct("<4sQ2H2L4Q"), struct.Struct("<4sLQL")


def _declared(fh: Any) -> tuple[int, int] | None:
    """``(members, directory bytes)`` as the end-of-central-directory record of the open zip ``fh`` declares them
    (the zip64 record's when the classic one says 0xFFFF), read from the file's last 64 KiB before anything else
    (tester20g M4: a zip of 600,001 members took 21 s and 370 MB to be refused by its count); None when there is
    no such record (zipfile then says why)."""
    size = fh.seek(0, os.SEEK_END)
    start = max(0, size - (_EOCD.size + 0xFFFF))
    fh.seek(start)
    tail = fh.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        return None
    _, _, _, _, count, directory, _, _ = _EOCD.unpack_from(tail, at)
    if (count == 0xFFFF or directory == 0xFFFFFFFF) and at >= _LOCATOR64.size:
        sig, _, where, _ = _LOCATOR64.unpack_from(tail, at - _LOCATOR64.size)
        if sig == b"PK\x06\x07":
            before = start + at - _LOCATOR64.size - _EOCD64.size  # where a zip64 record lies, unless the file
            for offset in (before, where):  # was prepended to (self-extracting): then where it says
                fh.seek(max(0, offset))
                record = fh.read(_EOCD64.size)
                if len(record) == _EOCD64.size and record[:4] == b"PK\x06\x06":
                    count, directory = _EOCD64.unpack(record)[7:9]
                    break
    fh.seek(0)
    return count, directory


def unpack(archive: str | os.PathLike, folder: str | os.PathLike) -> None:
    """Unpack the zip ``archive`` into the empty ``folder``.

    Members are checked before any is written (:func:`_check_member`): none may lie outside
    ``folder`` (an absolute name, a drive, ``..``), be a link, a device or encrypted; at most
    :data:`MAX_MEMBERS`; ``__MACOSX/`` is left out. Bytes are counted as they are unpacked (at most
    :data:`MAX_BYTES`), so a false declared size stops there. Only regular files and folders are
    created, with ``O_EXCL | O_NOFOLLOW``.

    Raises
    ------
    ArchiveRefused
        Why the archive is not unpacked (then ``folder`` may hold part of it: the caller drops it).
    """
    # the one check of a destination made from a submitted name (redteam29 F5)
    from ..sandbox import inside

    try:
        fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise ArchiveRefused("it is not a regular file")
            if os.fstat(fh.fileno()).st_size > MAX_BYTES:
                raise ArchiveRefused(f"it is larger than {MAX_BYTES >> 20} MiB",
                                     f"Upload only the files the assignment asks for (under {MAX_BYTES >> 20} MiB).")
            count, directory = _declared(fh) or (0, 0)
            if count > MAX_MEMBERS or directory > MAX_DIRECTORY:
                raise ArchiveRefused(f"it holds {count} members, more than {MAX_MEMBERS}" if count > MAX_MEMBERS
                                     else f"its list of members takes {directory} bytes, more than the "
                                          f"{MAX_DIRECTORY} of {MAX_MEMBERS} members",
                                     "Upload only the files the assignment asks for.")
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                if len(infos) > MAX_MEMBERS:
                    raise ArchiveRefused(f"it holds {len(infos)} members, more than {MAX_MEMBERS}",
                                         "Upload only the files the assignment asks for.")
                members = [(info, _check_member(info)) for info in infos]
                budget, root = MAX_BYTES, Path(folder)
                for info, parts in members:
                    if parts and not inside(str(root), str(root.joinpath(*parts))):  # after all normalisation
                        raise ArchiveRefused(f"its member {info.filename[:200]!r} would be written outside the "
                                             f"submission's folder")
                    try:
                        if parts and info.is_dir():
                            root.joinpath(*parts).mkdir(parents=True, exist_ok=True)
                        elif parts:
                            budget = _write_member(zf, info, root.joinpath(*parts), budget)
                    except OSError as exc:
                        if (refused := _os_refusal(info, parts, root, exc)) is None:
                            raise
                        raise refused from None
    except ArchiveRefused:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, RuntimeError,
            zlib.error, lzma.LZMAError, OSError, ValueError) as exc:
        text = str(exc).replace(str(folder), "<folder>")[:200]  # never a host path in the student's message
        raise ArchiveRefused(f"it is not a zip archive the grader can read ({type(exc).__name__}: {text})") from None
