"""Adding pasted seed URLs to a selective (or continuous) harvest: NetarchiveSuite's "add domains by seeds", checked
line by line.

Each URL's registrable domain is created if it does not exist yet (with its default seed list and
configuration, like every new domain); the URLs go into a seed list named after the harvest definition
on that domain, used by a configuration of the same name, which the definition then harvests. A domain
already in the definition keeps its template and budget and gains the new seeds: through its configuration of
that name, or, when the definition has the domain through another one, through a configuration of that name
made with the other's template, budget and seed lists, which takes the other's place in the definition.

All or nothing: if any line is invalid, nothing is saved and every bad line is reported with its
number and the reason, so a curator fixes the paste and sends it again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.db import transaction

from harvester.hosts import registrable_part
from orchestrator.harvest.curation import attach, validators
from orchestrator.harvest.curation.domains import create_domains, default_template
from orchestrator.harvest.jobs import continuous
from orchestrator.harvest.models import (
    ConfigurationSeedList,
    CrawlTemplate,
    Domain,
    DomainConfiguration,
    HarvestDefinition,
    JobControl,
    SeedList,
)

#: A URL scheme (RFC 3986: a letter, then letters, digits, + - .) and its colon, unless a port
#: follows: ``javascript:alert(1)``, ``mailto:a@b.fr``, ``data:…`` are URLs of another scheme (and
#: refused as such), ``example.fr:8080/x`` is a bare host with a port.
_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]*:(?!\d+(?:[/?#]|$))", re.IGNORECASE)


def with_default_scheme(line: str) -> str:
    """``http://`` before a bare host (``example.fr/x``); a line with a scheme is left as it is, so
    ``javascript:alert(1)`` is refused for its scheme, not read as host ``javascript`` with a bad port."""
    return line if _SCHEME_RE.match(line) else f"http://{line}"


@dataclass(frozen=True)
class LineError:
    line: int
    text: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {validators.preview(self.text)}: {self.message}"


@dataclass
class SeedingResult:
    errors: list[LineError] = field(default_factory=list)
    #: Seeds per registrable domain, in the order pasted (already normalised, duplicates dropped).
    seeds: dict[str, list[str]] = field(default_factory=dict)
    created_domains: list[str] = field(default_factory=list)
    configurations: list[DomainConfiguration] = field(default_factory=list)
    #: A continuous definition: the control that sent the seeds to its running job (None: none running),
    #: or why it could not be sent.
    told: JobControl | None = None
    tell_error: str = ""
    #: Configurations that existed already (a domain already in the harvest): they keep their template and budget.
    kept: list[DomainConfiguration] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def parse(text: str) -> SeedingResult:
    """Validate a paste: one URL per line (a bare host gets ``http://``); blank and ``#`` lines skipped."""
    result = SeedingResult()
    for number, line in validators.iter_lines(text):
        if line.startswith("#"):
            continue
        raw = with_default_scheme(line)
        try:
            seed = validators.normalize_seed(raw)
        except ValueError as exc:
            result.errors.append(LineError(number, line, str(exc)))
            continue
        host = urlsplit(seed).hostname or ""
        domain = registrable_part(host)
        if domain is None:
            result.errors.append(
                LineError(
                    number, line, f"{host} is not under a known public suffix, so it has no domain to harvest it under"
                )
            )
            continue
        seeds = result.seeds.setdefault(domain, [])
        if seed not in seeds:
            seeds.append(seed)
    if not result.seeds and not result.errors:
        result.errors.append(LineError(0, "", "no seed URL given"))
    return result


def add_seeds(
    definition: HarvestDefinition,
    text: str,
    template: CrawlTemplate | None = None,
    max_objects: int = -1,
    max_bytes: int = -1,
    requested_by: str = "seeding",
) -> SeedingResult:
    """Add the seeds pasted in ``text`` to the selective or continuous ``definition``; see the module
    docstring. A continuous definition's running job gets them at once (a Control ``seeds`` from
    ``requested_by``): ``told`` is that control (None: no job running), ``tell_error`` why it could not be
    sent (the seeds are stored all the same; the job's next start has them).

    The configurations made here get ``template`` (default: the default template) and the budget
    ``max_objects`` / ``max_bytes`` (-1 = unlimited): the curator chooses them with the paste. An existing
    configuration of this harvest keeps its own (listed in ``kept``), so a later paste never resets them.
    """
    if definition.kind not in (HarvestDefinition.SELECTIVE, HarvestDefinition.CONTINUOUS):
        raise ValueError(
            f"{definition.name} is a {definition.kind} harvest: seeds are added to selective and continuous ones"
        )
    result = parse(text)
    if not result.ok:
        return result
    template = template or default_template()
    name = definition.name[:100]
    with transaction.atomic():
        # A new domain's own defaults (what snapshot harvests use) get the default template, not this
        # harvest's choice: a quick template picked for one site must not make broad crawls impolite.
        result.created_domains = create_domains(result.seeds).created
        domains = {d.name: d for d in Domain.objects.filter(name__in=list(result.seeds))}
        for domain_name, seeds in result.seeds.items():
            domain = domains[domain_name]
            held = list(definition.configurations.filter(domain=domain).order_by("pk"))
            current = next((c for c in held if c.name == name), held[0] if held else None)
            with continuous.telling_itself(definition.pk):  # told below, once, with every pasted seed
                done = attach.attach(
                    domain.pk,
                    name,
                    seeds,
                    definition_id=definition.pk,
                    template_id=current.template_id if current else template.pk,
                    max_objects=current.max_objects if current else max_objects,
                    max_bytes=current.max_bytes if current else max_bytes,
                    comments=f"Made for harvest {definition.name}.",
                    seedlist_comments=f"Seeds added to harvest {definition.name}.",
                )
                for other in held:  # the domain once: through the configuration the seeds went to
                    if other.pk != done.configuration.pk:
                        _replace_in_definition(definition, other, done.configuration)
            if current is not None or not done.created:
                result.kept.append(done.configuration)
            result.configurations.append(done.configuration)
    if definition.kind == HarvestDefinition.CONTINUOUS:
        from orchestrator.harvest.jobs import dispatch

        try:
            result.told = continuous.change_seeds(
                definition, add=[s for seeds in result.seeds.values() for s in seeds], requested_by=requested_by
            )
        except dispatch.BrokerUnavailable as exc:  # recorded: beat's sweep sends it when the broker is back
            result.told, result.tell_error = exc.control, str(exc)
        except Exception as exc:  # the job's state: the seeds are stored and committed anyway
            result.tell_error = " ".join(str(exc).split())[:300] or type(exc).__name__
    return result


@dataclass
class RemovalResult:
    """What :func:`remove_seeds` did: the seed lists it changed, and (a continuous definition) the control that
    told its running job (None: none running) or why it could not."""

    errors: list[str] = field(default_factory=list)
    lists: list[SeedList] = field(default_factory=list)
    told: JobControl | None = None
    tell_error: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors


def remove_seeds(definition: HarvestDefinition, urls: Iterable[str], requested_by: str = "seeding") -> RemovalResult:
    """Take ``urls`` out of the seed lists of the definition's configurations, all or nothing: a URL that is no
    seed of the definition, or that is in a list other harvests or a domain's default configuration use too (a
    broad crawl's seeds must not change with one harvest), is an error and nothing changes. A continuous
    definition's running job drops them at once (one control for the whole removal)."""
    result = RemovalResult()
    wanted: dict[str, str] = {}
    for url in urls:
        try:
            wanted[validators.normalize_seed(with_default_scheme(url.strip()))] = url
        except ValueError as exc:
            result.errors.append(f"{validators.preview(url)}: {exc}")
    if result.errors:
        return result
    with transaction.atomic(), continuous.telling_itself(definition.pk):
        ids = SeedList.objects.filter(configurations__harvest_definitions=definition).values("pk").distinct()
        # locked and read afresh: an edit of a list in the web UI meanwhile is not overwritten
        lists = list(SeedList.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
        holding = {seedlist.pk: {_normalized(s) for s in seedlist.active_seeds} & set(wanted) for seedlist in lists}
        present = set().union(*holding.values()) if holding else set()
        result.errors += [
            f"{url}: not a seed of {definition.name}" for seed, url in wanted.items() if seed not in present
        ]
        for seedlist in lists:
            if holding[seedlist.pk] and (shared := _shared_with(seedlist, definition)):
                seeds = ", ".join(wanted[s] for s in sorted(holding[seedlist.pk]))
                result.errors.append(
                    f"{seeds}: in seed list {seedlist.name!r} of {seedlist.domain.name}, which {shared} uses too: "
                    "edit that list (it changes for both) or remove the domain from this harvest"
                )
        if result.errors:
            return result
        for seedlist in lists:
            if holding[seedlist.pk]:
                kept = [line for line in seedlist.seeds.splitlines() if _normalized(line.strip()) not in wanted]
                seedlist.seeds = "\n".join(kept)
                seedlist.save(update_fields=["seeds"])
                result.lists.append(seedlist)
    if definition.kind == HarvestDefinition.CONTINUOUS:
        from orchestrator.harvest.jobs import dispatch

        try:
            result.told = continuous.change_seeds(definition, remove=list(wanted), requested_by=requested_by)
        except dispatch.BrokerUnavailable as exc:  # recorded: beat's sweep sends it when the broker is back
            result.told, result.tell_error = exc.control, str(exc)
        except Exception as exc:  # the job's state: the lists are saved anyway
            result.tell_error = " ".join(str(exc).split())[:300] or type(exc).__name__
    return result


def _shared_with(seedlist: SeedList, definition: HarvestDefinition) -> str:
    """Who else crawls ``seedlist`` ("" if only ``definition``): another harvest, or a domain's default
    configuration (snapshot harvests)."""
    others = (
        HarvestDefinition.objects.filter(configurations__seedlists=seedlist)
        .exclude(pk=definition.pk)
        .values_list("name", flat=True)
        .distinct()
        .first()
    )
    if others:
        return f"harvest {others!r}"
    if seedlist.configurations.filter(is_default=True).exists():
        return "the domain's default configuration (snapshot harvests)"
    return ""


def _normalized(line: str) -> str:
    """A seed line as :func:`parse` stores it (a hand-edited list may hold ``example.org``), else as it is."""
    try:
        return validators.normalize_seed(with_default_scheme(line)) if line and not line.startswith("#") else line
    except ValueError:
        return line


def _replace_in_definition(
    definition: HarvestDefinition, current: DomainConfiguration, made: DomainConfiguration
) -> None:
    """The harvest had the domain through another configuration (the demo's, a selection's, the domain's
    default): the one made for the paste, with that configuration's template and budget, now crawls its seed
    lists as well as the pasted ones and takes its place in this harvest, so the domain is harvested once
    (NetarchiveSuite's rule: one configuration per domain in a harvest; two gave a job that could not be
    recorded, and a selective run two jobs of one site). The other configuration is left as it is for the
    harvests and the broad crawls that use it."""
    for seedlist in current.seedlists.all():
        ConfigurationSeedList.objects.get_or_create(configuration=made, seedlist=seedlist)
    definition.configurations.remove(current)


def seeds_of(configurations: Iterable[DomainConfiguration]) -> list[str]:
    """The active seeds of ``configurations`` (their seed lists' non-``#`` lines), in order, once each: what a
    crawl of them starts from, e.g. the seeds a running continuous job drops when they leave its definition."""
    seen: dict[str, None] = {}
    for seedlist in SeedList.objects.filter(configurations__in=list(configurations)).order_by("pk").distinct():
        seen.update(dict.fromkeys(seedlist.active_seeds))
    return list(seen)
