"""Changing many records at once: responsibility, active, technical settings, or the collection.

All or nothing: if one record may not be changed (not the user's collection, or an incompatible
budget × frequency would result) nothing is, and the refusal names the records.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from orchestrator.selection import rules
from orchestrator.selection.models import Collection, Record, editable_collections

CHANGEABLE = ("responsible_id", "active", "budget", "frequency", "depth", "collection_id")


class BulkError(ValueError):
    pass


@dataclass
class BulkResult:
    changed: int
    unchanged: int


def bulk_update(user: AbstractBaseUser, ids: list[int], changes: dict[str, object], every: bool = False) -> BulkResult:
    """Apply ``changes`` to the records ``ids``, all or none; only records of collections ``user`` edits
    (``every``: all of them, as for :func:`editable_collections`)."""
    unknown = set(changes) - set(CHANGEABLE)
    if unknown or not changes:
        raise BulkError("nothing to change" if not changes else f"cannot bulk-change {', '.join(sorted(unknown))}")
    allowed = set(editable_collections(user, every).values_list("pk", flat=True))
    if "collection_id" in changes and changes["collection_id"] not in allowed:
        target = Collection.objects.filter(pk=changes["collection_id"]).first()
        raise BulkError(f"you may not add records to {target.name if target else 'that collection'}")
    with transaction.atomic():
        records = list(Record.objects.select_for_update().filter(pk__in=ids).select_related("collection"))
        if len(records) != len(set(ids)):
            raise BulkError("some of the chosen records no longer exist: search again")
        refused = [f"{r.url} ({r.collection.name})" for r in records if r.collection_id not in allowed]
        if refused:
            raise BulkError(f"you may not change records of collections you do not edit: {', '.join(refused[:10])}")
        clashes = [
            r.url
            for r in records
            if not rules.combines(str(changes.get("budget", r.budget)), str(changes.get("frequency", r.frequency)))
        ]
        if clashes:
            raise BulkError("this would give incompatible budget × frequency to: " + ", ".join(clashes[:10]))
        if "collection_id" in changes:
            urls = [r.url for r in records if r.collection_id != changes["collection_id"]]
            taken = list(
                Record.objects.filter(collection_id=changes["collection_id"], url__in=urls).values_list(
                    "url", flat=True
                )[:10]
            )
            if taken:
                raise BulkError("the target collection already has records for: " + ", ".join(taken))
        changed = 0
        for record in records:
            diff = {k: v for k, v in changes.items() if getattr(record, k) != v}
            if diff:
                Record.objects.filter(pk=record.pk).update(**diff, modified_by=user, modified_at=timezone.now())
                changed += 1
    return BulkResult(changed, len(records) - changed)
