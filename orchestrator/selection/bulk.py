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
    (``every``: all of them, as for :func:`editable_collections`). Each check raises :class:`BulkError`
    before anything is written; the records are locked from the first read to the last write."""
    _check_fields(changes)
    allowed = set(editable_collections(user, every).values_list("pk", flat=True))
    _check_target(changes, allowed)
    with transaction.atomic():
        records = _lock(ids)
        _check_owned(records, allowed)
        _check_combinations(records, changes)
        _check_target_free(records, changes)
        changed = _apply(records, changes, user)
    return BulkResult(changed, len(records) - changed)


def _check_fields(changes: dict[str, object]) -> None:
    """Something to change, and only fields a bulk change may touch."""
    unknown = set(changes) - set(CHANGEABLE)
    if unknown or not changes:
        raise BulkError("nothing to change" if not changes else f"cannot bulk-change {', '.join(sorted(unknown))}")


def _check_target(changes: dict[str, object], allowed: set[int]) -> None:
    """A move goes only into a collection the user edits."""
    if "collection_id" in changes and changes["collection_id"] not in allowed:
        target = Collection.objects.filter(pk=changes["collection_id"]).first()
        raise BulkError(f"you may not add records to {target.name if target else 'that collection'}")


def _lock(ids: list[int]) -> list[Record]:
    """The chosen records, locked; all of them must still exist."""
    records = list(Record.objects.select_for_update().filter(pk__in=ids).select_related("collection"))
    if len(records) != len(set(ids)):
        raise BulkError("some of the chosen records no longer exist: search again")
    return records


def _check_owned(records: list[Record], allowed: set[int]) -> None:
    """Every record is in a collection the user edits."""
    refused = [f"{r.url} ({r.collection.name})" for r in records if r.collection_id not in allowed]
    if refused:
        raise BulkError(f"you may not change records of collections you do not edit: {', '.join(refused[:10])}")


def _check_combinations(records: list[Record], changes: dict[str, object]) -> None:
    """No record ends with a budget × frequency the rules refuse (each keeps what is not changed)."""
    clashes = [
        r.url
        for r in records
        if not rules.combines(str(changes.get("budget", r.budget)), str(changes.get("frequency", r.frequency)))
    ]
    if clashes:
        raise BulkError("this would give incompatible budget × frequency to: " + ", ".join(clashes[:10]))


def _check_target_free(records: list[Record], changes: dict[str, object]) -> None:
    """A move would not give the target collection a second record for a URL it has."""
    if "collection_id" not in changes:
        return
    urls = [r.url for r in records if r.collection_id != changes["collection_id"]]
    taken = list(
        Record.objects.filter(collection_id=changes["collection_id"], url__in=urls).values_list("url", flat=True)[:10]
    )
    if taken:
        raise BulkError("the target collection already has records for: " + ", ".join(taken))


def _apply(records: list[Record], changes: dict[str, object], user: AbstractBaseUser) -> int:
    """Write the fields that differ, record by record (so ``modified_*`` moves only where something did);
    returns how many records changed."""
    changed = 0
    for record in records:
        diff = {k: v for k, v in changes.items() if getattr(record, k) != v}
        if diff:
            Record.objects.filter(pk=record.pk).update(**diff, modified_by=user, modified_at=timezone.now())
            changed += 1
    return changed
