"""robots.txt as a prerequisite: fetched once per host before anything else there, then obeyed or
ignored according to the template.

Heritrix fetches ``/robots.txt`` as a prerequisite (``P``) of a host's first URI whatever the
policy, and archives it; with policy ``obey`` a disallowed URI is logged ``-9998`` and never
fetched. A robots.txt answered 4xx (or missing) allows everything; one that cannot be fetched at
all (5xx, network failure after retries) also allows everything here (documented decision: the
crawl is a legal-deposit crawl, and a broken robots.txt should not hide a site) — Protego parses
the rest. Parsed rules are journalled in the frontier's key/value state so a resumed job does not
fetch robots.txt again.

``Crawl-delay``: the value in the group that applies to our user agent (Protego picks the group as
it does for ``Disallow``) is kept per host, whatever the robots policy — as Heritrix's
DispositionProcessor reads it for ``respectCrawlDelayUpToSeconds``, a setting of its own; the
template's ``respect_crawl_delay_up_to_s`` caps it, and 0 turns it off
(:func:`harvester.politeness.politeness_delay`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

PENDING = "pending"


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))


class RobotsCache:
    """Per host: not yet asked, pending, or parsed (a Protego object, or None for allow-all)."""

    def __init__(self, obey: bool, user_agent: str) -> None:
        self.obey = obey
        self.user_agent = user_agent
        self._state: dict[str, Any] = {}
        self.bodies: dict[str, str] = {}
        self._crawl_delays: dict[str, float] = {}

    def known(self, host: str) -> bool:
        return host in self._state and self._state[host] != PENDING

    def requested(self, host: str) -> bool:
        return host in self._state

    def mark_pending(self, host: str) -> None:
        self._state[host] = PENDING

    def forget(self, host: str) -> None:
        """As if never asked (its robots.txt was dropped unfetched: the host's DNS lookup failed)."""
        self._state.pop(host, None)
        self.bodies.pop(host, None)
        self._crawl_delays.pop(host, None)

    def pending(self, host: str) -> bool:
        return self._state.get(host) == PENDING

    def load(self, host: str, body: str | None) -> None:
        """Record what ``host``'s robots.txt said (None: nothing usable → allow all)."""
        self.bodies[host] = body or ""
        self._state[host] = None
        self._crawl_delays.pop(host, None)
        if not body:
            return
        try:
            from protego import Protego

            rules = Protego.parse(body)
        except Exception:  # an unparsable robots.txt allows everything
            return
        try:
            delay = rules.crawl_delay(self.user_agent)
        except Exception:
            delay = None
        if delay is not None and delay > 0:
            self._crawl_delays[host] = float(delay)
        if self.obey:
            self._state[host] = rules

    def crawl_delay(self, host: str) -> float | None:
        """Seconds ``host``'s robots.txt asks between fetches for our user agent (None: it does not)."""
        return self._crawl_delays.get(host)

    def allowed(self, host: str, url: str) -> bool:
        if not self.obey:
            return True
        rules = self._state.get(host)
        if rules is None or rules == PENDING:
            return True
        try:
            return bool(rules.can_fetch(url, self.user_agent))
        except Exception:
            return True

    def snapshot(self) -> dict[str, Any]:
        """Saved with the frontier in one transaction: the hosts whose robots.txt is still awaited are
        part of it, since a spilled queue tail is not in memory for a resumed job to find them by."""
        return {"bodies": dict(self.bodies), "pending": sorted(h for h, v in self._state.items() if v == PENDING)}

    def restore(self, data: dict[str, Any]) -> None:
        if not isinstance(data.get("bodies"), dict):
            data = {"bodies": data, "pending": []}  # a spool checkpointed before pending hosts were saved
        for host, body in data["bodies"].items():
            self.load(host, body)
        for host in data.get("pending", []):
            self.mark_pending(host)
