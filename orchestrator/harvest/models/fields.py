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
