"""Archive storage: choosing a location by free space and copying a WARC there, verified.

The BnF chain's ``transfer`` copies each file to one of several configured locations "if
sufficient space is left", and ``backup`` makes an immediate second copy; only then may the
spool copy go. Here a copy is trusted only after its bytes have been read back from the
destination and hashed: the file is written under a temporary name in the destination
directory, fsynced, dropped from the page cache (so the re-read comes from the device, not from
memory), re-hashed, and only then given its real name with ``link`` (which, unlike ``rename``,
never replaces a file another worker put there meanwhile). A failed copy leaves nothing behind;
a repeated one finds the identical file and returns; a *different* file with the same name is
refused, never overwritten: archive files are immutable.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.fsutil import fsync_dir, mkstemp_shared

CHUNK = 1 << 20
#: Called once per chunk by the long loops (hashing, copying): a caller holding a lease on the work renews
#: or checks it there, and may raise to stop the work (orchestrator.harvest.chain.leases).
Tick = Callable[[], None]


def _no_tick() -> None:
    pass


class StorageError(OSError):
    """A storage operation that must not go ahead; the message says which file and location."""


class NoSpaceError(StorageError):
    """No configured location has room for the file."""


class ChecksumMismatch(StorageError):
    """Bytes read back do not have the expected SHA-256."""


class NameConflict(StorageError):
    """A different file with the same name is already stored."""


@dataclass(frozen=True)
class Location:
    """A storage location: a directory (local disk or a mounted share). ``replica`` locations hold
    backup copies only and are never chosen for the primary copy."""

    name: str
    path: Path
    replica: bool = False

    def available(self) -> bool:
        return self.path.is_dir()

    def free_bytes(self) -> int:
        return shutil.disk_usage(self.path).free


def sha256_file(path: str | Path, tick: Tick = _no_tick) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks (a WARC is never held in memory); ``tick`` once per chunk."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            tick()
            h.update(chunk)
    return h.hexdigest()


def choose_location(locations: Iterable[Any], size: int, replica: bool = False, exclude: Iterable[str] = ()) -> Any:
    """The location with the most free space among those that can take ``size`` bytes: non-replica
    locations for the primary copy (``replica=False``), replica locations for a backup. ``exclude``
    names locations already holding a copy. A location whose directory is missing or unreadable (a bucket
    that does not answer) is skipped, and named in the error if nothing fits. Takes :class:`Location` and
    indexer.objectstore.ObjectLocation alike (``available()``, ``free_bytes()``)."""
    excluded = set(exclude)
    best: tuple[int, Location] | None = None
    seen: list[str] = []
    for loc in locations:
        if loc.replica != replica or loc.name in excluded:
            continue
        try:
            free = loc.free_bytes() if loc.available() else None
        except OSError:
            free = None
        if free is None:
            seen.append(f"{loc.name} ({loc.path}): missing or unreadable")
            continue
        seen.append(f"{loc.name} ({loc.path}): {free} bytes free")
        if free > size and (best is None or free > best[0]):
            best = (free, loc)
    if best is None:
        kind = "replica" if replica else "storage"
        detail = "; ".join(seen) if seen else "none configured"
        raise NoSpaceError(f"no {kind} location can take {size} bytes: {detail}")
    return best[1]


def _drop_cache(fd: int) -> None:
    """Ask the kernel to forget the file's cached pages, so the verification re-reads the device."""
    if hasattr(os, "posix_fadvise"):
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:  # pragma: no cover - not supported by every file system
            pass


def copy_verified(src: str | Path, dest: Path, sha256: str, tick: Tick = _no_tick) -> Path:
    """Copy ``src`` to ``dest`` (a file path; an existing directory means ``dest/src.name``) and
    return the final path once the copy's bytes, read back from disk, have SHA-256 ``sha256``.

    The source is hashed while it is copied: a source that does not match ``sha256`` (corrupted
    in the spool) raises :class:`ChecksumMismatch` before anything is named. Idempotent: if
    ``dest`` already holds a file with that checksum, it is returned untouched;
    :class:`NameConflict` if it holds different bytes. ``tick`` is called once per chunk; whatever it
    raises stops the copy, leaving nothing behind."""
    src = Path(src)
    dest = Path(dest)
    if dest.is_dir():
        dest = dest / src.name
    sha256 = sha256.lower()
    if dest.exists():
        return _existing(dest, sha256, tick)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = mkstemp_shared(dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        with open(src, "rb") as fin, os.fdopen(fd, "wb") as fout:
            while chunk := fin.read(CHUNK):
                tick()
                h.update(chunk)
                fout.write(chunk)
            fout.flush()
            os.fsync(fout.fileno())
            _drop_cache(fout.fileno())
            st = os.fstat(fin.fileno())
        if h.hexdigest() != sha256:
            raise ChecksumMismatch(f"{src}: SHA-256 is {h.hexdigest()}, expected {sha256}; not copied")
        copied = sha256_file(tmp, tick)
        if copied != sha256:
            raise ChecksumMismatch(f"{dest}: the copy read back has SHA-256 {copied}, expected {sha256}; removed")
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        try:
            os.link(tmp, dest)
        except FileExistsError:
            # Another worker stored it meanwhile: fine if identical, a conflict otherwise.
            return _existing(dest, sha256, tick)
        fsync_dir(dest.parent)
        return dest
    finally:
        tmp.unlink(missing_ok=True)


def _existing(dest: Path, sha256: str, tick: Tick = _no_tick) -> Path:
    found = sha256_file(dest, tick)
    if found != sha256:
        raise NameConflict(
            f"{dest} already exists with SHA-256 {found}, not {sha256}: refusing to replace "
            "an archived file with a different one of the same name"
        )
    return dest


def verify_copy(path: str | Path, sha256: str) -> str:
    """``ok``, ``missing`` or ``corrupt``: what ``netharvest index verify`` reports per stored copy."""
    path = Path(path)
    if not path.is_file():
        return "missing"
    return "ok" if sha256_file(path) == sha256.lower() else "corrupt"
