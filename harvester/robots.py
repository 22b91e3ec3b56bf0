"""robots.txt as a prerequisite: fetched once per host before anything else there, then obeyed or
ignored according to the template.

Heritrix fetches ``/robots.txt`` as a prerequisite (``P``) of a host's first URI whatever the
policy, and archives it; with policy ``obey`` a disallowed URI is logged ``-9998`` and never
fetched. A robots.txt answered 4xx (or missing) allows everything; one that cannot be fetched at
all (5xx, network failure after retries) also allows everything here (documented decision: the
crawl is a legal-deposit crawl, and a broken robots.txt should not hide a site) — Protego parses
the rest. Parsed rules are journalled in the frontier's key/value state so a resumed job does not
fetch robots.txt again.

Validity (Heritrix's ``robotsValidityDurationSeconds``, 1 day, :data:`harvester.defaults.ROBOTS_VALIDITY_S`):
what a host's robots.txt said, or that it could not be fetched, holds that long; then the host's next URI
waits for robots.txt to be fetched again, as it waited for the first (:meth:`RobotsCache.expired`,
:meth:`RobotsCache.ask`). A crawl of weeks obeys the rules a site has now, not those of its first day,
and a host whose robots.txt was down when first asked is not shut out for the rest of a continuous crawl.

``Crawl-delay``: the value in the group that applies to our user agent (Protego picks the group as
it does for ``Disallow``) is kept per host, whatever the robots policy — as Heritrix's
DispositionProcessor reads it for ``respectCrawlDelayUpToSeconds``, a setting of its own; the
template's ``respect_crawl_delay_up_to_s`` caps it, and 0 turns it off
(:func:`harvester.politeness.politeness_delay`).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from harvester.defaults import ROBOTS_VALIDITY_S

PENDING = "pending"


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))


class RobotsCache:
    """Per host: not yet asked, pending, or parsed (a Protego object, or None for allow-all)."""

    def __init__(self, obey: bool, user_agent: str, validity_s: float = ROBOTS_VALIDITY_S) -> None:
        self.obey = obey
        self.user_agent = user_agent
        self.validity_s = validity_s
        self._state: dict[str, Any] = {}
        self.bodies: dict[str, str] = {}
        self._crawl_delays: dict[str, float] = {}
        self._loaded_at: dict[str, float] = {}  # when each known host's robots.txt was read
        self._asked: dict[str, int] = {}  # how often each host's robots.txt was asked for

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
        self._loaded_at.pop(host, None)

    def expired(self, host: str, now: float) -> bool:
        """Whether what ``host``'s robots.txt said is older than the validity: fetch it again first."""
        return self.known(host) and host in self._loaded_at and now >= self.expires(host)

    def expires(self, host: str) -> float:
        """When what ``host``'s robots.txt said expires and its next URI asks for it again (0: not known)."""
        at = self._loaded_at.get(host)
        return 0.0 if at is None else at + self.validity_s

    def ask(self, host: str) -> int:
        """Mark ``host`` pending (its robots.txt is being fetched); how many times it was asked for before: 0 the
        first time, then the ``#n`` of the seen-set key a renewal is queued under."""
        n = self._asked.get(host, 0)
        self._asked[host] = n + 1
        self._state[host] = PENDING
        self._loaded_at.pop(host, None)
        return n

    def pending(self, host: str) -> bool:
        return self._state.get(host) == PENDING

    def load(self, host: str, body: str | None, now: float | None = None) -> None:
        """Record what ``host``'s robots.txt said (None: nothing usable → allow all), read at ``now``."""
        self.bodies[host] = body or ""
        self._state[host] = None
        self._crawl_delays.pop(host, None)
        self._loaded_at[host] = time.time() if now is None else now
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
        return {
            "bodies": dict(self.bodies),
            "pending": sorted(h for h, v in self._state.items() if v == PENDING),
            "loaded_at": dict(self._loaded_at),
            "asked": dict(self._asked),
        }

    def restore(self, data: dict[str, Any]) -> None:
        if not isinstance(data.get("bodies"), dict):
            data = {"bodies": data, "pending": []}  # a spool checkpointed before pending hosts were saved
        loaded_at = data.get("loaded_at", {})  # none in a spool from before validity: valid from now
        for host, body in data["bodies"].items():
            self.load(host, body, loaded_at.get(host))
        for host in data.get("pending", []):
            self.mark_pending(host)
        asked = data.get("asked") or dict.fromkeys([*data["bodies"], *data.get("pending", [])], 1)
        self._asked = {host: int(n) for host, n in asked.items()}
