"""JSON-lines files that several processes share: whole-line appends, atomic locked rewrites,
and reads that turn a bad line into one error naming the file and the line.

Writers append each line with one `O_APPEND` write under an exclusive `fcntl.flock`, so two
processes never interleave or lose lines; a rewrite reads, filters and writes a temporary file
under the same lock and moves it into place with `os.replace`, so a crash leaves the old file
or the new one, never half of either. A writer that waited on the lock while the file was
replaced notices (the inode changed) and writes to the new file. Readers parse every line
within `common.limits.JsonLimits` (iteratively: no `RecursionError`), refuse bytes that are not
UTF-8 and strings with lone surrogates, and report the first bad line as `JsonLinesError`.
Without `fcntl` (Windows) the lock is skipped; appends stay single writes.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_scoping.common.limits import JsonLimits, load_json_text
from attention_scoping.errors import AttentionScopingError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FILE_LIMITS",
    "JsonLine",
    "JsonLinesError",
    "append_line",
    "encode_line",
    "parse_json",
    "parse_lines",
    "read_json_lines",
    "rewrite_lines",
]

FILE_LIMITS = JsonLimits(max_depth=64, max_chars=64_000_000, max_digits=1_000)
"""Bounds on one line (or a whole JSON-array file): 64 levels, 64 M characters, integers of at
most 1,000 digits."""


class JsonLinesError(AttentionScopingError, ValueError):
    """A line of a JSON-lines file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class JsonLine:
    """One parsed line: its 1-based number, its bytes (newline excluded) and its value."""

    number: int
    raw: bytes
    value: Any


class _Cut(JsonLinesError):
    """The text ends where more was expected (a line an interrupted write cut short)."""


def parse_json(text: str, limits: JsonLimits = FILE_LIMITS) -> Any:
    """`text` as JSON within `limits`.

    Raises:
        JsonLinesError: what is wrong, as a phrase (`not JSON (...)`, `too large: ...`,
            `not valid text: ...`); a subclass when the text is not JSON at all, as a line cut
            short is not.
    """
    try:
        value, exceeded = load_json_text(text, limits)
    except ValueError as exc:  # JSONDecodeError, and the interpreter's digit limit
        if isinstance(exc, json.JSONDecodeError):
            msg = f"not JSON ({exc})"
            raise _Cut(msg) from None
        if "digits" in str(exc):  # the interpreter's own bound on int("...") (4,300 digits)
            msg = f"too large: an integer has too many digits (limit {limits.max_digits:,})"
        else:
            msg = f"not JSON ({' '.join(str(exc).split())[:200]})"
        raise JsonLinesError(msg) from None
    if exceeded is not None:
        msg = f"too large: {exceeded.message}"
        raise JsonLinesError(msg)
    try:  # `json` decodes a lone "\ud800" escape into a string no file or wire can carry
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        msg = "not valid text: a string holds a lone surrogate (an invalid \\u escape)"
        raise JsonLinesError(msg) from None
    return value


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.end >= len(raw):
            msg = f"not UTF-8 (cut inside a character at byte {exc.start + 1})"
            raise _Cut(msg) from None
        msg = f"not UTF-8 (byte {exc.start + 1}: {exc.reason})"
        raise JsonLinesError(msg) from None


def parse_lines(
    data: bytes, name: str, *, limits: JsonLimits = FILE_LIMITS, cut_tail: bool = False
) -> list[JsonLine]:
    """The non-blank lines of `data`, parsed. With `cut_tail`, a last line that was cut short
    (not JSON, or cut inside a UTF-8 character) is left out: an interrupted write leaves one.

    Raises:
        JsonLinesError: the first bad line, named `{name}: line N is ...`.
    """
    lines = data.split(b"\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    out: list[JsonLine] = []
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            value = parse_json(_decode(raw), limits)
        except _Cut as exc:
            if cut_tail and index == last:
                continue
            msg = f"{name}: line {index + 1} is {exc}"
            raise JsonLinesError(msg) from None
        except ValueError as exc:
            msg = f"{name}: line {index + 1} is {exc}"
            raise JsonLinesError(msg) from None
        out.append(JsonLine(index + 1, raw, value))
    return out


def read_json_lines(
    path: Path, *, limits: JsonLimits = FILE_LIMITS, cut_tail: bool = False
) -> list[JsonLine]:
    """`parse_lines` of the file at `path` ([] when it does not exist)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return parse_lines(data, str(path), limits=limits, cut_tail=cut_tail)


def encode_line(value: Any) -> bytes:
    """One JSON line as UTF-8 bytes (newline included); a lone surrogate becomes `?` so the
    line can always be written."""
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8", "replace")


def _lock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


@contextmanager
def _locked(path: Path) -> Iterator[int]:
    """An fd of the file now at `path` (created if missing), opened for appending and holding
    its exclusive lock; reopened when the file was replaced while we waited for the lock."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _lock(fd)
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # replaced (or removed) while we waited: take the new file's lock
    try:
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def append_line(path: Path, line: bytes) -> None:
    """Append one whole line (ending in a newline) under the lock. A file whose last line lacks
    its newline gets one first, and a failed write (disk full) is undone, so the file only
    ever grows by whole lines."""
    with _locked(path) as fd:
        size = os.fstat(fd).st_size
        if size and _byte_at(fd, size - 1) != b"\n":
            line = b"\n" + line
        try:
            _write_all(fd, line)
        except BaseException:
            os.ftruncate(fd, size)
            raise


def _byte_at(fd: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, 1)


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _replace(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to a temporary file beside `path`, flush it to disk, move it into place."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def rewrite_lines(
    path: Path,
    keep: Callable[[Sequence[JsonLine]], Sequence[JsonLine]],
    *,
    limits: JsonLimits = FILE_LIMITS,
    cut_tail: bool = True,
) -> None:
    """Replace the file with the lines `keep` returns of those it holds now (read under the
    lock, so lines other processes appended meanwhile are seen); kept lines stay byte for
    byte. Unchanged files are not rewritten. Raises `JsonLinesError` (nothing rewritten) on a
    bad line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path) as fd:
        data = _read_fd(fd)
        lines = parse_lines(data, str(path), limits=limits, cut_tail=cut_tail)
        kept = keep(lines)
        text = b"".join(line.raw + b"\n" for line in kept)
        if text != data:
            _replace(path, text, os.fstat(fd).st_mode & 0o777)
