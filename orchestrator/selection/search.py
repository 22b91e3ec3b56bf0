"""Searching records: the fields a curator filters on, one function for the page, saved searches and CSV."""

from __future__ import annotations

import io
from collections.abc import Mapping

from django.db.models import Q, QuerySet

from orchestrator.harvest import csvsafe
from orchestrator.selection.models import Record

FIELDS = ("q", "collection", "theme", "responsible", "budget", "frequency", "depth", "active")


def clean_query(params: Mapping[str, str]) -> dict[str, str]:
    """Only the known, non-empty search fields (what a saved search keeps)."""
    return {key: str(params[key]).strip() for key in FIELDS if str(params.get(key, "")).strip()}


def search(params: Mapping[str, str], user_id: int | None = None) -> QuerySet[Record]:
    """Records matching every given field. ``q`` looks in URL, seeds, theme, keywords and notes;
    ``responsible=me`` means the searching user; ``active`` is yes or no."""
    query = clean_query(params)
    records = Record.objects.select_related("collection", "responsible", "created_by", "modified_by")
    if "q" in query:
        text = query["q"]
        records = records.filter(
            Q(url__icontains=text)
            | Q(seeds__icontains=text)
            | Q(theme__icontains=text)
            | Q(keywords__icontains=text)
            | Q(content_notes__icontains=text)
            | Q(technical_notes__icontains=text)
        )
    if query.get("collection", "").isdigit():
        records = records.filter(collection_id=int(query["collection"]))
    if "theme" in query:
        records = records.filter(theme__iexact=query["theme"])
    if query.get("responsible") == "me" and user_id:
        records = records.filter(responsible_id=user_id)
    elif query.get("responsible", "").isdigit():
        records = records.filter(responsible_id=int(query["responsible"]))
    for key in ("budget", "frequency", "depth"):
        if key in query:
            records = records.filter(**{key: query[key]})
    if query.get("active") in ("yes", "no"):
        records = records.filter(active=query["active"] == "yes")
    return records.order_by("collection__name", "url")


CSV_COLUMNS = [
    "id",
    "collection",
    "url",
    "seeds",
    "supplementary_urls",
    "budget",
    "frequency",
    "depth",
    "theme",
    "keywords",
    "active",
    "responsible",
    "created_by",
    "created_at",
    "modified_by",
    "modified_at",
    "content_notes",
    "technical_notes",
]


def to_csv(records: QuerySet[Record]) -> str:
    """The records as CSV (UTF-8, one line per record; multi-line fields quoted), times in UTC."""
    out = io.StringIO()
    writer = csvsafe.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in records.iterator(chunk_size=2000):
        writer.writerow(
            [
                r.pk,
                r.collection.name,
                r.url,
                r.seeds,
                r.supplementary_urls,
                r.budget,
                r.frequency,
                r.depth,
                r.theme,
                r.keywords,
                "yes" if r.active else "no",
                r.responsible.username if r.responsible else "",
                r.created_by.username if r.created_by else "",
                r.created_at.isoformat(),
                r.modified_by.username if r.modified_by else "",
                r.modified_at.isoformat(),
                r.content_notes,
                r.technical_notes,
            ]
        )
    return out.getvalue()
