"""S3-compatible object storage for archive files: storage locations and harvester-side delivery.

Why: a harvester on another machine shares nothing with the indexer chain but the broker and the object store
(issue 15, "Storage and delivery without a shared file system"). Everything here goes through boto3 (the
well-kept client; never a hand-written S3 client), configured the standard way (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``, profiles …), plus ``NETHARVEST_S3_ENDPOINT_URL`` for a
non-AWS store (MinIO, Ceph, moto in the tests); boto3's own ``AWS_ENDPOINT_URL_S3`` works too.

The rules are those of the POSIX locations (indexer.transfer), said for objects:

- *verified copy*: every part is sent with its SHA-256 (``ChecksumSHA256``: a store that checks it refuses a
  damaged part), and a copy is trusted only after its bytes have been read back from the store and hashed
  (:func:`upload_verified`), as the POSIX copy is re-read from the device;
- *never overwrite*: a new object is written with ``If-None-Match: *`` (a conditional put: of two writers
  racing, one wins, the other finds the winner) after a ``HEAD``; an object of that name with different bytes
  is a :class:`~indexer.transfer.NameConflict`;
- *resumable*: a file bigger than one part goes up as a multipart upload whose id is kept in a small state
  file beside it (the harvester's job spool); after a crash or an outage the upload carries on from the parts
  the store has (each checked against the local part's MD5, the part's ETag), and the object appears only on
  ``CompleteMultipartUpload``: whole, once, or not at all.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from indexer.transfer import CHUNK, ChecksumMismatch, NameConflict, StorageError

SCHEME = "s3://"
#: Multipart part size: S3's minimum is 5 MiB for every part but the last; 16 MiB keeps a 1 GiB WARC at 64
#: parts (S3 allows 10,000) and a resumed upload loses at most one part's work.
PART_SIZE = 16 << 20
#: What an object location reports as free space when no capacity is configured (``?capacity=`` absent):
#: a bucket has no free space to ask for; quotas, if any, are the store's business.
UNLIMITED = 1 << 62
Tick = Callable[[], None]


def no_tick() -> None:
    pass


def is_url(text: str | os.PathLike[str]) -> bool:
    return str(text).startswith(SCHEME)


def split(url: str) -> tuple[str, str]:
    """``s3://bucket/key`` → (bucket, key); a clear error for anything else."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"{url!r} is not an s3://bucket/key URL")
    return parts.netloc, parts.path.lstrip("/")


def join(url: str, *names: str) -> str:
    return "/".join([url.rstrip("/"), *(n.strip("/") for n in names)])


def parent(url: str) -> str:
    """The "directory" of an object URL (what a PATH line's ``directory`` is for a file path)."""
    return url.rsplit("/", 1)[0]


@cache
def _client(endpoint: str | None) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3", endpoint_url=endpoint or None, config=Config(retries={"mode": "standard", "max_attempts": 5})
    )


def client() -> Any:
    """The S3 client for the configured endpoint (one per process and endpoint; boto3 clients are thread-safe)."""
    return _client(os.environ.get("NETHARVEST_S3_ENDPOINT_URL") or None)


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


def _not_found(exc: BaseException) -> bool:
    return _code(exc) in ("404", "NoSuchKey", "NotFound", "NoSuchBucket")


def permanent(exc: BaseException) -> bool:
    """True when trying again cannot help: the local file is gone or is not what its checksum says, the name
    holds other bytes, or the store refused the request itself (a 4xx answer other than timeout/throttling:
    no such bucket, access denied, a bad request). An outage, a dropped connection or a 5xx is not."""
    if isinstance(exc, (FileNotFoundError, ChecksumMismatch, NameConflict)):
        return True
    response = getattr(exc, "response", None) or {}
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return isinstance(status, int) and 400 <= status < 500 and status not in (408, 429)


@dataclass(frozen=True)
class ObjectLocation:
    """A storage location in an object store: ``name=s3://bucket/prefix[?capacity=BYTES]``. With no capacity
    it always has room (:data:`UNLIMITED`), so it wins the choose-by-free-space over any disk."""

    name: str
    url: str
    replica: bool = False
    capacity: int | None = None

    @property
    def path(self) -> str:  # what messages and PATH lines show, like Location.path
        return self.url

    def available(self) -> bool:
        """The bucket answers (HEAD bucket): the object-store form of "the directory is mounted"."""
        try:
            client().head_bucket(Bucket=split(self.url)[0])
        except Exception:
            return False
        return True

    def free_bytes(self) -> int:
        return self.capacity if self.capacity is not None else UNLIMITED


def parse_location(name: str, text: str, replica: bool = False) -> ObjectLocation:
    """``s3://bucket/prefix[?capacity=N]`` → an ObjectLocation; ValueError names what is wrong."""
    parts = urlsplit(text)
    split(f"s3://{parts.netloc}{parts.path}")
    capacity = None
    for item in filter(None, parts.query.split("&")):
        key, _, value = item.partition("=")
        if key != "capacity" or not value.isdigit():
            raise ValueError(f"{text}: unknown option {item!r} (only capacity=BYTES)")
        capacity = int(value)
    return ObjectLocation(name, f"s3://{parts.netloc}{parts.path}".rstrip("/"), replica, capacity)


def size(url: str) -> int | None:
    """The object's size, or None when there is none."""
    bucket, key = split(url)
    try:
        return int(client().head_object(Bucket=bucket, Key=key)["ContentLength"])
    except Exception as exc:
        if _not_found(exc):
            return None
        raise


def sha256_object(url: str, tick: Tick = no_tick) -> str:
    """Hex SHA-256 of an object, streamed in 1 MiB chunks (never held in memory)."""
    bucket, key = split(url)
    body = client().get_object(Bucket=bucket, Key=key)["Body"]
    h = hashlib.sha256()
    with body:
        for chunk in body.iter_chunks(CHUNK):
            tick()
            h.update(chunk)
    return h.hexdigest()


def verify_copy(url: str, sha256: str) -> str:
    """``ok``, ``missing`` or ``corrupt``, as indexer.transfer.verify_copy for a file."""
    if size(url) is None:
        return "missing"
    return "ok" if sha256_object(url) == sha256.lower() else "corrupt"


def _existing(url: str, sha256: str, tick: Tick) -> str:
    found = sha256_object(url, tick)
    if found != sha256:
        raise NameConflict(
            f"{url} already exists with SHA-256 {found}, not {sha256}: refusing to replace an "
            "archived file with a different one of the same name"
        )
    return url


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode("ascii")


def put(
    src: str | Path,
    url: str,
    sha256: str,
    state: Path | None = None,
    tick: Tick = no_tick,
    part_size: int | None = None,
) -> str:
    """Store file ``src`` as object ``url`` unless it is there already; returns ``url``.

    Not verified by reading back (see :func:`upload_verified`): the harvester's delivery uses it, and the
    chain's ingest hashes what it downloads. A file up to ``part_size`` goes in one conditional PUT; a bigger
    one as a multipart upload resumed from ``state`` (a JSON file; removed when the object is complete).
    ``tick`` is called before every request that sends a part (the harvester's heartbeat: a job with gigabytes
    to upload must not go silent) and every MiB read back. :class:`NameConflict` if the name holds different
    bytes."""
    part_size = part_size or PART_SIZE
    sha256 = sha256.lower()
    bucket, key = split(url)
    length = os.path.getsize(src)
    if size(url) is not None:
        return _existing(url, sha256, tick)
    meta = {"sha256": sha256}
    try:
        if length <= part_size:
            tick()
            with open(src, "rb") as f:
                data = f.read()
            if hashlib.sha256(data).hexdigest() != sha256:
                raise ChecksumMismatch(f"{src}: SHA-256 is not {sha256}; not uploaded")
            client().put_object(
                Bucket=bucket,
                Key=key,
                Body=data,
                Metadata=meta,
                IfNoneMatch="*",
                ChecksumSHA256=_b64(hashlib.sha256(data).digest()),
            )
        else:
            _multipart(Path(src), bucket, key, sha256, length, meta, state, tick, part_size)
    except Exception as exc:
        if _code(exc) in ("PreconditionFailed", "ConditionalRequestConflict"):  # another writer won the race
            return _existing(url, sha256, tick)
        raise
    return url


def _multipart(
    src: Path,
    bucket: str,
    key: str,
    sha256: str,
    length: int,
    meta: dict[str, str],
    state: Path | None,
    tick: Tick,
    part_size: int,
) -> None:
    s3 = client()
    saved = _load_state(state, bucket, key, sha256, length)
    have: dict[int, str] = {}
    if saved:
        part_size = int(saved["part_size"])
        try:
            listed = s3.get_paginator("list_parts").paginate(Bucket=bucket, Key=key, UploadId=saved["upload_id"])
            have = {p["PartNumber"]: p["ETag"].strip('"') for page in listed for p in page.get("Parts", [])}
            upload_id = saved["upload_id"]
        except Exception as exc:
            if _code(exc) != "NoSuchUpload":
                raise
            saved = None
    if not saved:
        upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, Metadata=meta, ChecksumAlgorithm="SHA256")[
            "UploadId"
        ]
        if state is not None:
            _write_state(
                state,
                {
                    "bucket": bucket,
                    "key": key,
                    "sha256": sha256,
                    "size": length,
                    "part_size": part_size,
                    "upload_id": upload_id,
                },
            )
    whole = hashlib.sha256()
    parts = []
    with open(src, "rb") as f:
        number = 0
        while data := f.read(part_size):
            number += 1
            tick()
            whole.update(data)
            md5 = hashlib.md5(data, usedforsecurity=False).hexdigest()
            digest = _b64(hashlib.sha256(data).digest())
            if have.get(number) != md5:  # missing, or a part the store holds different bytes for
                s3.upload_part(
                    Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data, ChecksumSHA256=digest
                )
            parts.append({"PartNumber": number, "ETag": f'"{md5}"', "ChecksumSHA256": digest})
    if whole.hexdigest() != sha256:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        if state is not None:
            state.unlink(missing_ok=True)
        raise ChecksumMismatch(f"{src}: SHA-256 is {whole.hexdigest()}, expected {sha256}; upload aborted")
    s3.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=upload_id, IfNoneMatch="*", MultipartUpload={"Parts": parts}
    )
    if state is not None:
        state.unlink(missing_ok=True)


def _load_state(state: Path | None, bucket: str, key: str, sha256: str, length: int) -> dict[str, Any] | None:
    """The saved upload of this very file to this very key, or None (no state, unreadable, another file)."""
    if state is None:
        return None
    try:
        saved = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or (
        saved.get("bucket"),
        saved.get("key"),
        saved.get("sha256"),
        saved.get("size"),
    ) != (bucket, key, sha256, length):
        return None
    return saved


def _write_state(state: Path, data: dict[str, Any]) -> None:
    state.parent.mkdir(parents=True, exist_ok=True)
    tmp = state.with_name(state.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, state)


def upload_verified(src: str | Path, url: str, sha256: str, tick: Tick = no_tick, state: Path | None = None) -> str:
    """:func:`put`, then read the object back and hash it: the chain's copy into an object location. A copy
    that reads back wrong is deleted (it is the one this call made: the put was conditional) and raises
    :class:`ChecksumMismatch`."""
    existed = size(url) is not None
    put(src, url, sha256, state=state, tick=tick)
    found = sha256_object(url, tick)
    if found != sha256.lower():
        if not existed:
            delete(url)
        raise ChecksumMismatch(
            f"{url}: the copy read back has SHA-256 {found}, expected {sha256}" + ("" if existed else "; removed")
        )
    return url


def download_verified(url: str, dest: Path, sha256: str, tick: Tick = no_tick) -> Path:
    """Fetch ``url`` into file ``dest`` (written under a temporary name, renamed once its SHA-256 matches).
    A ``dest`` already there with that size is taken as is: the caller hashes what it uses (the chain's
    ingest does)."""
    want = size(url)
    if want is None:
        raise StorageError(f"{url}: no such object")
    if dest.is_file() and dest.stat().st_size == want:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.part")
    bucket, key = split(url)
    h = hashlib.sha256()
    try:
        body = client().get_object(Bucket=bucket, Key=key)["Body"]
        with body, open(tmp, "wb") as out:
            for chunk in body.iter_chunks(CHUNK):
                tick()
                h.update(chunk)
                out.write(chunk)
        if h.hexdigest() != sha256.lower():
            raise ChecksumMismatch(f"{url}: SHA-256 is {h.hexdigest()}, expected {sha256}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def open_at(url: str, offset: int) -> Any:
    """A readable stream of the object from byte ``offset`` (a ranged GET: one record of a WARC, say); close it.
    Any failure is an OSError, as opening a file would raise."""
    bucket, key = split(url)
    try:
        return client().get_object(Bucket=bucket, Key=key, Range=f"bytes={offset}-")["Body"]
    except Exception as exc:
        raise OSError(f"{url}: {exc}") from exc


def get_bytes(url: str, limit: int = 1024) -> bytes | None:
    """The first ``limit`` bytes of a small object (a receipt), or None when there is none."""
    bucket, key = split(url)
    try:
        body = client().get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{limit - 1}")["Body"]
    except Exception as exc:
        if _not_found(exc):
            return None
        if _code(exc) == "InvalidRange":  # an empty object
            return b""
        raise
    with body:
        return bytes(body.read(limit))


def put_bytes(url: str, data: bytes) -> None:
    bucket, key = split(url)
    client().put_object(Bucket=bucket, Key=key, Body=data, ChecksumSHA256=_b64(hashlib.sha256(data).digest()))


def list_keys(url: str) -> list[str]:
    """Every object URL under prefix ``url``."""
    bucket, prefix = split(url)
    pages = client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix.rstrip("/") + "/")
    return [f"s3://{bucket}/{o['Key']}" for page in pages for o in page.get("Contents", [])]


def delete(url: str) -> None:
    bucket, key = split(url)
    client().delete_object(Bucket=bucket, Key=key)
