"""Step 1 of the preload: read every source, keep each domain once with the sources that named it.

A source line is a domain (``example.fr``), a host (``www.example.fr``: its registrable domain is
taken) or an http(s) URL (its domain is taken, and the URL is kept as a seed of that domain). The
existing database is always source 0, "database", so the statistics say how many domains each
source alone contributed, as the BnF measured the librarians' selection against the registry list
(shared/seeds/001…, 2.2.1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harvester.hosts import registrable_part
from orchestrator.harvest.curation.validators import (
    Line,
    normalize_seed,
    preview,
    read_lines,
    to_ascii_host,
)

DATABASE = "database"
REDIRECT = "redirect"


@dataclass
class SourceStats:
    name: str
    path: str = ""
    lines: int = 0
    invalid: int = 0
    urls: int = 0
    domains: int = 0  # distinct domains this source named
    only_here: int = 0  # named by no other source (the database counts as one)
    new: int = 0  # not in the database before this preload

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass
class Ingested:
    """Every unique domain → bit mask of the sources (by index in ``sources``) that named it."""

    sources: list[SourceStats]
    domains: dict[str, int] = field(default_factory=dict)
    urls: dict[str, set[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def bit(self, name: str) -> int:
        return 1 << [s.name for s in self.sources].index(name)


class InputError(ValueError):
    """Invalid source lines, each as ``FILE:LINE: reason``."""

    def __init__(self, errors: list[str], total: int) -> None:
        self.errors, self.total = errors, total
        super().__init__(f"{total} invalid line(s)")


def parse_line(text: str) -> tuple[str, str | None]:
    """(registrable domain, seed URL or None) of one source line; ValueError saying why it is not usable."""
    if "://" in text:
        url = normalize_seed(text)  # raises ValueError: only http(s), a host, no spaces …
        host = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[0] if "]" not in url else ""
        if not host:
            raise ValueError("IPv6 literal URLs are not preloaded")
    else:
        if "/" in text or " " in text:
            raise ValueError("neither a domain nor an http(s) URL")
        url = None
        host = to_ascii_host(text)  # raises ValueError
    domain = registrable_part(host.strip("[]"))
    if domain is None:
        raise ValueError(f"{host!r} has no registrable part under a known public suffix")
    return domain, url


def numbered_lines(path: Path) -> Iterator[Line]:
    """Non-blank, non-comment lines with their numbers, bounded in length (a line too long or not UTF-8
    carries its problem and becomes a line error, never a whole file's worth of memory)."""
    with path.open("rb") as stream:
        for line in read_lines(stream):
            if line.problem or line.text and not line.text.startswith("#"):
                yield line


def ingest(
    sources: list[tuple[str, Path]], existing: Iterator[str], progress: Callable[[str], None] = lambda _: None
) -> Ingested:
    """Read the database's domains, then each source file; errors are collected, not raised (the caller
    decides whether invalid lines stop the preload)."""
    result = Ingested([SourceStats(DATABASE)] + [SourceStats(name, str(path)) for name, path in sources])
    domains, urls = result.domains, result.urls
    db_bit = 1
    for name in existing:
        domains[name] = db_bit
        result.sources[0].lines += 1
    progress(f"ingest: {len(domains):,} domains in the database")
    for index, (_name, path) in enumerate(sources, start=1):
        stats, bit = result.sources[index], 1 << index
        for line in numbered_lines(path):
            number, text = line.number, line.text
            stats.lines = number
            if text in domains:  # a line that is exactly a domain already seen: nothing to parse
                domains[text] |= bit
                continue
            try:
                if line.problem:
                    raise ValueError(line.problem)
                domain, url = parse_line(text)
            except ValueError as exc:
                stats.invalid += 1
                result.errors.append(f"{path}:{number}: {preview(text)}: {exc}" if text else f"{path}:{number}: {exc}")
                continue
            domains[domain] = domains.get(domain, 0) | bit
            if url is not None:
                stats.urls += 1
                urls.setdefault(domain, set()).add(url)
            if number % 200_000 == 0:
                progress(f"ingest: {path}: line {number:,}, {len(domains):,} unique domains so far")
    count_sources(result)
    return result


def count_sources(result: Ingested) -> None:
    """Per source: distinct domains, those no other source named, and those new to the database."""
    for stats in result.sources:
        stats.domains = stats.only_here = stats.new = 0
    bits = [1 << i for i in range(len(result.sources))]
    for mask, count in Counter(result.domains.values()).items():  # a few distinct masks, millions of domains
        alone = mask & (mask - 1) == 0
        in_db = mask & 1
        for i, bit in enumerate(bits):
            if mask & bit:
                stats = result.sources[i]
                stats.domains += count
                stats.only_here += count if alone else 0
                stats.new += 0 if in_db else count
