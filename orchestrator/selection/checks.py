"""Stage one of adding a record: is the URL alive, where does it redirect, is it already selected?

The online check asks DNS (the nameservers of ``NETHARVEST_SELECTION_NAMESERVERS``, else the
system's) and then the site itself, each with a timeout, so a dead server never hangs the form:
4xx/5xx or no DNS entry make the URL invalid with the reason; a 3xx shows the target to choose
instead (shared/seeds/001…, 2.1.2).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Q

from harvester.hosts import is_ip
from orchestrator.harvest.curation import validators
from orchestrator.preload.redirects import ProbeConfig, fetch_head
from orchestrator.preload.resolver import OK, Resolver, ResolverConfig, parse_nameserver, system_nameservers
from orchestrator.selection.models import Record, host_and_domain


@dataclass
class UrlCheck:
    url: str
    valid: bool
    status: int = 0
    reason: str = ""
    redirect: str = ""  # the absolute target of a 3xx
    duplicates: list[tuple[str, Record]] = field(default_factory=list)


def nameservers() -> tuple[tuple[str, int], ...]:
    configured = getattr(settings, "NETHARVEST_SELECTION_NAMESERVERS", "")
    if configured:
        return tuple(parse_nameserver(ns) for ns in configured.split(",") if ns.strip())
    return system_nameservers()


def check_online(raw_url: str, timeout: float | None = None) -> UrlCheck:
    """Normalise ``raw_url`` and ask DNS and the server; never raises for a bad URL or a dead site."""
    timeout = timeout or float(getattr(settings, "NETHARVEST_SELECTION_CHECK_TIMEOUT", 10))
    try:
        url = validators.normalize_seed(raw_url)
    except ValueError as exc:
        return UrlCheck(raw_url.strip(), False, reason=str(exc))
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = parts.path + (f"?{parts.query}" if parts.query else "")

    async def ask() -> UrlCheck:
        address = host
        if not is_ip(host):
            config = ResolverConfig(nameservers=nameservers(), timeout=min(timeout, 5.0), retries=1, sockets=1)
            async with Resolver(config) as resolver:
                answer = await resolver.address(host)
            if answer.status != OK:
                what = "no DNS entry" if answer.reason in ("NXDOMAIN", "no address") else "the DNS lookup failed"
                return UrlCheck(url, False, reason=f"{what} for {host} ({answer.reason})")
            address = answer.address
        probe = await fetch_head(host, address, ProbeConfig(port=port, timeout=timeout), parts.scheme, path)
        if probe.status == 0:
            return UrlCheck(url, False, reason=f"no HTTP answer from {host}: {probe.error}")
        if probe.status >= 400:
            return UrlCheck(url, False, probe.status, f"the server answered HTTP {probe.status}")
        if 300 <= probe.status < 400 and probe.location:
            target = probe.target_url
            return UrlCheck(url, True, probe.status, f"HTTP {probe.status}: redirects to {target}", target)
        return UrlCheck(url, True, probe.status, f"HTTP {probe.status}")

    return asyncio.run(ask())


def find_duplicates(url: str, exclude: int | None = None) -> list[tuple[str, Record]]:
    """Records with the same URL, else on the same host, else in the same domain, in every collection."""
    host, domain = host_and_domain(url)
    found = Record.objects.filter(Q(url=url) | Q(host=host) | Q(domain=domain)).select_related("collection")
    if exclude:
        found = found.exclude(pk=exclude)
    kinds = []
    for record in found.order_by("collection__name", "url")[:50]:
        kind = "same URL" if record.url == url else "same host" if record.host == host else "same domain"
        kinds.append((kind, record))
    order = {"same URL": 0, "same host": 1, "same domain": 2}
    return sorted(kinds, key=lambda item: order[item[0]])


def check(raw_url: str, timeout: float | None = None) -> UrlCheck:
    result = check_online(raw_url, timeout)
    if result.url.startswith(("http://", "https://")):
        result.duplicates = find_duplicates(result.url)
    return result
