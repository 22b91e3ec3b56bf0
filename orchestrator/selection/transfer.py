"""Transfer of records into harvest definitions (BCWeb → NetarchiveSuite, shared/seeds/001…, 2.1.4).

Each active record becomes, on each registrable domain of its seeds, a domain configuration named
``selection-<record id>``: the template and budget the administrators mapped its budget × depth to,
a seed list of the same name with its seeds and supplementary URLs on that domain, attached to the
harvest definition mapped to its collection × frequency. The transfer compares that wanted state
with what is there and changes only the difference, so running it twice changes nothing the second
time, and it reports every change. An inactive (or deleted, or moved) record's configurations are
taken out of the definitions they were in — kept, since harvest history refers to them.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction

from orchestrator.harvest.curation import attach
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import Domain, HarvestDefinition
from orchestrator.selection.models import HarvestMapping, Record, SettingsMapping, host_and_domain

PREFIX = "selection-"
log = logging.getLogger(__name__)


@dataclass
class TransferReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # active records that cannot go anywhere, with why
    inactive: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.removed)

    def lines(self) -> list[str]:
        out = [f"created: {c}" for c in self.created] + [f"updated: {u}" for u in self.updated]
        out += [f"removed from harvesting: {r}" for r in self.removed] + [f"skipped: {s}" for s in self.skipped]
        out.append(
            f"{len(self.created)} created, {len(self.updated)} updated, {len(self.removed)} removed, "
            f"{self.unchanged} unchanged, {len(self.skipped)} skipped, {self.inactive} inactive records "
            "not transferred"
        )
        return out


@dataclass(frozen=True)
class _Wanted:
    domain: str
    seeds: str
    template_id: int
    max_objects: int
    max_bytes: int
    definition_id: int


def _wanted(
    record: Record, harvest: dict[tuple[int, str], int], settings_map: dict[tuple[str, str], SettingsMapping]
) -> list[_Wanted] | str:
    """What the record should be in the harvest database, or why it cannot be transferred."""
    definition_id = harvest.get((record.collection_id, record.frequency))
    if definition_id is None:
        return (
            f"record {record.pk} ({record.url}): no harvest definition is mapped to collection "
            f"{record.collection.name!r} × {record.frequency}"
        )
    mapping = settings_map.get((record.budget, record.depth))
    if mapping is None:
        return f"record {record.pk} ({record.url}): no template is mapped to {record.budget} × {record.depth}"
    by_domain: dict[str, list[str]] = defaultdict(list)
    for seed in record.all_seeds():
        by_domain[host_and_domain(seed)[1]].append(seed)
    return [
        _Wanted(
            domain,
            "\n".join(dict.fromkeys(seeds)),
            mapping.template_id,
            mapping.max_objects,
            mapping.max_bytes,
            definition_id,
        )
        for domain, seeds in sorted(by_domain.items())
    ]


def transfer(definition: HarvestDefinition | None = None) -> TransferReport:
    """Transfer every record (or only those mapped to ``definition``) in one transaction."""
    report = TransferReport()
    mappings = HarvestMapping.objects.all()
    if definition is not None:
        mappings = mappings.filter(definition=definition)
    harvest = {(m.collection_id, m.frequency): m.definition_id for m in mappings}
    settings_map = {(m.budget, m.depth): m for m in SettingsMapping.objects.all()}
    records = Record.objects.select_related("collection").order_by("pk")
    if definition is not None:
        records = [r for r in records if (r.collection_id, r.frequency) in harvest]
    with transaction.atomic():
        wanted: dict[int, list[_Wanted]] = {}
        for record in records:
            if not record.active:
                report.inactive += 1
                continue
            result = _wanted(record, harvest, settings_map)
            if isinstance(result, str):
                report.skipped.append(result)
            else:
                wanted[record.pk] = result
        create_domains(sorted({w.domain for ws in wanted.values() for w in ws}))
        domains = dict(
            Domain.objects.filter(name__in={w.domain for ws in wanted.values() for w in ws}).values_list("name", "pk")
        )
        seen: set[int] = set()
        for pk, items in wanted.items():
            for item in items:
                seen.add(_apply(f"{PREFIX}{pk}", domains[item.domain], item, report))
        _detach_others(seen, definition, report)
    return report


def _apply(name: str, domain_id: int, item: _Wanted, report: TransferReport) -> int:
    """Make one configuration as wanted; returns its id."""
    label = f"{item.domain}: {name}"
    done = attach.attach(
        domain_id,
        name,
        item.seeds.split("\n"),
        definition_id=item.definition_id,
        template_id=item.template_id,
        max_objects=item.max_objects,
        max_bytes=item.max_bytes,
        comments="made by the selection transfer",
        seedlist_comments="made by the selection transfer",
        seeds_mode=attach.REPLACE,
        config_mode=attach.UPDATE,
        definitions=attach.ONLY,
    )
    if done.created:
        report.created.append(f"{label} → harvest definition {item.definition_id}")
    elif done.changed:
        report.updated.append(f"{label}: {', '.join(done.changed)}")
    else:
        report.unchanged += 1
    return done.configuration.pk


def _detach_others(keep: set[int], definition: HarvestDefinition | None, report: TransferReport) -> None:
    """Selection configurations no longer wanted (inactive, moved, deleted records; seeds now on
    another domain) leave the definitions they are in."""
    through = HarvestDefinition.configurations.through
    stale = through.objects.filter(domainconfiguration__name__startswith=PREFIX).exclude(
        domainconfiguration_id__in=keep
    )
    if definition is not None:
        stale = stale.filter(harvestdefinition=definition)
    for link in stale.select_related("domainconfiguration__domain", "harvestdefinition"):
        config = link.domainconfiguration
        report.removed.append(f"{config.domain.name}: {config.name} from {link.harvestdefinition.name}")
    stale.delete()


def transfer_before_run(sender: object, definition: HarvestDefinition, **kwargs: object) -> None:
    """The scheduler's hook: bring the definition's records up to date just before its run.

    A failing transfer is logged and rolled back to its savepoint, and the run goes on with the
    definition as it was: a selection problem must not stop a scheduled harvest.
    """
    if not HarvestMapping.objects.filter(definition=definition).exists():
        return
    try:
        with transaction.atomic():
            report = transfer(definition)
    except Exception:
        log.exception(
            "selection transfer into %s failed; the run goes on with its current configurations", definition.name
        )
        return
    if report.changed or report.skipped:
        log.info("selection transfer into %s before its run: %s", definition.name, report.lines()[-1])
        for line in report.skipped:
            log.warning("selection transfer into %s: %s", definition.name, line)
