"""How the crawl reached a URI: the ``meta["nh"]`` every request of ours carries, typed.

Heritrix keeps this on each CrawlURI (``pathFromSeed``, ``via``, the source tag); it is what crawl.log's
discovery path and via columns print, what scope judges a link by (its hops, its domain), what budgets
charge (the domain) and what the archive side logs and counts. Built in one place (:meth:`seed`,
:meth:`found`, :meth:`link`) and read as attributes, not as a dict built six times with ``.get``
defaults at every reader.

Persisted with each queued URI in the frontier's journal (``uris.nh``, :mod:`harvester.frontier`,
:mod:`harvester.arfrontier`) as the JSON object it always was (:meth:`to_json`, the same keys in the same
order), so a checkpoint written before this type existed loads (:meth:`from_json` takes any subset of
the keys) and one written now is read by an older harvester. Scrapy never serialises our requests'
meta (the frontier, not a Scrapy disk queue, is what survives a crash), so the object itself rides in
``request.meta``; it pickles all the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harvester.scope import link_hops


@dataclass(slots=True)
class UriMeta:
    """Treat as immutable: a link's meta is derived from its parent's, never changed in place."""

    #: Heritrix discovery path from the seed: ``L`` link, ``E`` embed, ``P`` prerequisite… ("" a seed).
    path: str = ""
    #: The URI it was found on (None for a seed).
    via: str | None = None
    #: Link hops from the seed (the ``L`` in ``path``).
    hops: int = 0
    #: The configured domain it counts for (budgets, reports); "" when none.
    domain: str = ""
    #: A seed of the job (reports' seed list, "seed" in the seeds report).
    seed: bool = False
    #: The seed it descends from, when the template tags seeds (Heritrix's ``sourceTagSeeds``).
    source: str | None = None

    @classmethod
    def for_seed(cls, domain: str, source: str | None = None) -> UriMeta:
        return cls("", None, 0, domain, True, source or None)

    @classmethod
    def found(cls, path: str, via: str, domain: str, source: str | None = None) -> UriMeta:
        """A URI found along ``path`` (a link, an embed, a prerequisite) on ``via``."""
        return cls(path, via, link_hops(path), domain, False, source or None)

    @property
    def prerequisite(self) -> bool:
        """A dns: lookup or robots.txt the URI that led to it waits for."""
        return self.path.endswith("P")

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "path": self.path,
            "via": self.via,
            "hops": self.hops,
            "domain": self.domain,
            "seed": self.seed,
        }
        if self.source:
            data["source"] = self.source
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> UriMeta:
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UriMeta:
        """Any subset of the keys (a frontier journalled by an older harvester), unknown keys ignored."""
        path = str(data.get("path") or "")
        hops = data.get("hops")
        return cls(
            path=path,
            via=data.get("via"),
            hops=int(hops) if hops is not None else link_hops(path),
            domain=str(data.get("domain") or ""),
            seed=bool(data.get("seed", False)),
            source=data.get("source") or None,
        )
