"""Attaching seeds and a configuration to a harvest definition: the one service every writer uses.

A definition harvests *configurations*; a configuration (domain, name, template, budget) crawls the
seeds of the *seed lists* linked to it (NetarchiveSuite's model, shared/seeds/001…). Pasted seeds
(:mod:`~orchestrator.harvest.curation.seeding`), the selection transfer (:mod:`orchestrator.selection.transfer`),
the demo (:mod:`~orchestrator.harvest.curation.demo`) and the preload (:mod:`orchestrator.preload.load`) all
write that same triple — seed list, configuration, link — and, before issue 16, each in its own
style. Here it is written once, in two shapes:

* :func:`attach` — one domain at a time through the ORM, saying what it changed (the transfer's
  report, the seeding's "kept" configurations). Seeds are *merged* (a paste adds to what is there)
  or *replace* the list (a transfer or the demo says what is current); an existing configuration
  keeps its template and budget or is *updated* to the given ones; the definition gains it, or has
  it *only* (a selection record belongs to exactly one definition).
* :func:`replace_default_seeds` — set-based, for the preload's hundreds of thousands of domains:
  one statement per batch, whatever its size (docs/DESIGN.md, "Creating domains in bulk").

A domain's *own* defaults (its default seed list and configuration) are made with the domain, by
:func:`orchestrator.harvest.curation.domains.create_domains`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import connection

from orchestrator.harvest.curation.domains import _records
from orchestrator.harvest.models import ConfigurationSeedList, DomainConfiguration, SeedList

MERGE, REPLACE = "merge", "replace"
KEEP, UPDATE = "keep", "update"
ADD, ONLY = "add", "only"


@dataclass
class Attached:
    """What :func:`attach` did: the configuration, whether it is new, and what changed on an existing
    one (``"seeds"``, ``"template"``, ``"max_objects"``, ``"max_bytes"``, ``"seed list"``,
    ``"harvest definition"``), in that order."""

    configuration: DomainConfiguration
    created: bool
    changed: list[str] = field(default_factory=list)


def attach(
    domain_id: int,
    name: str,
    seeds: list[str],
    *,
    definition_id: int | None,
    template_id: int,
    max_objects: int = -1,
    max_bytes: int = -1,
    comments: str = "",
    seedlist_comments: str = "",
    seeds_mode: str = MERGE,
    config_mode: str = KEEP,
    definitions: str = ADD,
) -> Attached:
    """Seed list ``name`` of the domain with ``seeds``, configuration ``name`` using it, and the
    definition harvesting it; see the module docstring for the modes. Call inside a transaction."""
    changed: list[str] = []
    seedlist, made_list = SeedList.objects.select_for_update().get_or_create(
        domain_id=domain_id, name=name, defaults={"seeds": "\n".join(seeds), "comments": seedlist_comments}
    )
    if not made_list:
        text = _merged(seedlist.seeds, seeds) if seeds_mode == MERGE else "\n".join(seeds)
        if text != seedlist.seeds:
            seedlist.seeds = text  # a save, not an update: a running continuous harvest of the list hears of it
            seedlist.save(update_fields=["seeds"])
            changed.append("seeds")
    values = {"template_id": template_id, "max_objects": max_objects, "max_bytes": max_bytes}
    config, created = DomainConfiguration.objects.get_or_create(
        domain_id=domain_id, name=name, defaults={**values, "comments": comments}
    )
    if not created and config_mode == UPDATE:
        differing = {k: v for k, v in values.items() if getattr(config, k) != v}
        if differing:
            DomainConfiguration.objects.filter(pk=config.pk).update(**differing)
            for key, value in differing.items():
                setattr(config, key, value)
            changed += [k.removesuffix("_id") for k in differing]
    _, linked = ConfigurationSeedList.objects.get_or_create(configuration=config, seedlist=seedlist)
    if linked and not created:
        changed.append("seed list")
    if definition_id is not None:
        current = set(config.harvest_definitions.values_list("pk", flat=True))
        if definitions == ONLY and current != {definition_id}:
            config.harvest_definitions.set([definition_id])
            changed.append("harvest definition")
        elif definitions == ADD and definition_id not in current:
            config.harvest_definitions.add(definition_id)
    return Attached(config, created, [] if created else changed)


def set_seeds(domain: str, name: str, seeds: list[str]) -> int:
    """Replace the seeds of an existing seed list (the demo restarted on other ports); returns 1 if
    it exists, else 0 (nothing is created: :func:`attach` makes lists)."""
    found = SeedList.objects.filter(domain__name=domain, name=name).first()
    if found is None:
        return 0
    found.seeds = "\n".join(seeds)
    found.save(update_fields=["seeds"])  # through the save signals, as every edit of a list
    return 1


def _merged(text: str, seeds: list[str]) -> str:
    """The list's every non-blank line (``#`` lines included), then the new seeds not in it yet."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines + [s for s in seeds if s not in lines])


def replace_default_seeds(name: str, seeds: dict[str, list[str]]) -> int:
    """Replace each domain's seed list ``name`` with ``seeds[domain]`` and attach it to the domain's
    default configuration, set-based (one statement per step for the whole batch). Returns the
    number of seed lists written."""
    if not seeds:
        return 0
    rows = json.dumps([{"name": domain, "seeds": "\n".join(urls)} for domain, urls in seeds.items()])
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO harvest_seedlist (domain_id, name, seeds, comments) "
            f"SELECT d.id, %s, j.seeds, '' FROM {_records('%s', {'name': 'text', 'seeds': 'text'})} "
            f"JOIN harvest_domain d ON d.name = j.name WHERE true "
            f"ON CONFLICT (domain_id, name) DO UPDATE SET seeds = excluded.seeds "
            f"RETURNING domain_id, id",
            [name, rows],
        )
        pairs = cur.fetchall()
        if not pairs:
            return 0
        cur.execute(
            f"INSERT INTO harvest_domainconfiguration_seedlists (configuration_id, seedlist_id) "
            f"SELECT c.id, j.s FROM {_records('%s', {'d': 'bigint', 's': 'bigint'})} "
            f"JOIN harvest_domainconfiguration c ON c.domain_id = j.d AND c.is_default WHERE true "
            f"ON CONFLICT (configuration_id, seedlist_id) DO NOTHING",
            [json.dumps([{"d": d, "s": s} for d, s in pairs])],
        )
    return len(pairs)
