"""Field kinds shared by the models: the size of what people type.

Why a limit on free text: a 1 MB comment saved (and made the domain page 128,000 px tall), and a
3 MB one failed with Django's bare "Bad Request (400)" page. Comments, descriptions and notes are
for a few paragraphs; :data:`FREE_TEXT_MAX_CHARS` is far beyond that and far below what hurts. The
limit is a model validator (admin, forms, ``full_clean``) and the form's ``maxlength``, and the
field's help text says it, so nobody meets it by surprise. PostgreSQL keeps the column ``text``
(changing the limit needs no table rewrite).
"""

from __future__ import annotations

from typing import Any

import orjson
from backports import zstd
from django.core.validators import MaxLengthValidator
from django.db import models

#: The most characters a comment, description or note may hold.
FREE_TEXT_MAX_CHARS = 10_000


def free_text(help_text: str = "", **options: Any) -> models.TextField:
    """An optional free-text field (comments, descriptions, notes) of at most FREE_TEXT_MAX_CHARS."""
    limit = f"At most {FREE_TEXT_MAX_CHARS:,} characters."
    return models.TextField(
        blank=True,
        max_length=FREE_TEXT_MAX_CHARS,
        validators=[MaxLengthValidator(FREE_TEXT_MAX_CHARS)],
        help_text=f"{help_text} {limit}" if help_text else limit,
        **options,
    )


#: The first bytes of a Zstandard frame (RFC 8878): a stored spec that starts otherwise is plain JSON text
#: (a job stored before migration 0019, whose ``jsonb`` column became the text's UTF-8 bytes).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Zstandard's level for the specs: level 1 compresses a broad-crawl job's 2.5 MB in milliseconds.
ZSTD_LEVEL = 1


def spec_bytes(document: Any) -> bytes:
    """A spec document (a dict, or the JSON bytes of one) as it is stored: its JSON compressed by Zstandard."""
    if not isinstance(document, bytes | bytearray | memoryview):
        document = orjson.dumps(document)
    return zstd.compress(bytes(document), level=ZSTD_LEVEL)


def spec_json(stored: bytes | memoryview | str) -> bytes:
    """The JSON text (UTF-8) of a stored spec, compressed (:func:`spec_bytes`) or not (a row migrated from
    ``jsonb``; on SQLite, text)."""
    if isinstance(stored, str):
        return stored.encode()
    stored = bytes(stored)
    return zstd.decompress(stored) if stored[:4] == ZSTD_MAGIC else stored


def spec_param(document: Any, connection: Any) -> Any:
    """A spec document (or its JSON bytes) as a statement's parameter for a ``spec`` column."""
    return connection.Database.Binary(spec_bytes(document))


class SpecField(models.Field):
    """A job's frozen JobSpec: a dict in Python, its JSON compressed by Zstandard in the database (``bytea``).

    Why not ``jsonb``: storing a broad crawl's specs made PostgreSQL parse 250 MB of JSON (~60 MB/s, the
    largest serial part of job generation) and compress it again, to keep a document no query looks into:
    every reader takes the whole spec (:mod:`orchestrator.harvest.jobs.specs`, the API's spec endpoint). Here
    the writer compresses the bytes orjson made, and PostgreSQL stores them as they are (migration 0019 sets
    the column's storage to EXTERNAL: no second compression). A document that is not a spec's
    (``spec={}`` of a job not written yet) is stored the same way."""

    description = "A JobSpec document, stored as Zstandard-compressed JSON"

    def get_internal_type(self) -> str:
        return "BinaryField"  # bytea on PostgreSQL, BLOB on SQLite

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return None if value is None else orjson.loads(spec_json(value))

    def to_python(self, value: Any) -> Any:
        if isinstance(value, bytes | memoryview):
            return orjson.loads(spec_json(value))
        return value

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if value is None:
            return None
        return spec_param(value, connection)

    def value_to_string(self, obj: Any) -> str:
        return orjson.dumps(self.value_from_object(obj)).decode()
