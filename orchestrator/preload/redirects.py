"""Step 3 of the preload: find domains that live sites redirect to (shared/seeds/001…, 2.2.3).

For each live domain D, ``GET http://D/`` and ``GET http://www.D/``; a 301/302/303/307/308 whose
Location is on another registrable domain names a domain to add (source "redirect") — how the BnF
found French sites on .com, .net, .eu and .de. Only the status line and headers are read, then the
connection is closed: a probe costs one small request whatever the page's size.

The probe connects to the address the DNS step found (so it asks the same resolver, and tests can map
names to 127.0.0.1) on a configurable port, sending the name in ``Host``.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from harvester.hosts import is_ip, registrable_part
from orchestrator.harvest.curation.validators import to_ascii_host
from orchestrator.preload.concurrency import unordered_map
from orchestrator.preload.resolver import OK, Resolver

REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
MAX_HEADER_BYTES = 32 * 1024


@dataclass(frozen=True)
class ProbeConfig:
    port: int = 80
    timeout: float = 10.0
    concurrency: int = 200
    user_agent: str = "netharvest-preload (redirect check)"


@dataclass(frozen=True)
class Probe:
    """What one ``http://host/`` answered: a status (0 = no HTTP answer) and the redirect target if any."""

    url: str
    status: int
    location: str = ""
    error: str = ""

    @property
    def target_domain(self) -> str | None:
        """The registrable domain the redirect points to, when it is another one than the probed URL's."""
        if self.status not in REDIRECT_CODES or not self.location:
            return None
        target = urljoin(self.url, self.location)
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        try:
            host = to_ascii_host(parts.hostname)
        except ValueError:
            return None
        domain = registrable_part(host)
        source = registrable_part(urlsplit(self.url).hostname or "")
        return domain if domain and domain != source else None

    @property
    def target_url(self) -> str:
        return urljoin(self.url, self.location)


async def fetch_head(host: str, address: str, config: ProbeConfig, scheme: str = "http", path: str = "/") -> Probe:
    """GET scheme://host/path from ``address`` on ``config.port``: the status and Location, no body.

    HTTPS certificates are not verified: the question is whether the site answers and where it sends
    the visitor, and archives harvest sites with broken certificates too.
    """
    default_port = 443 if scheme == "https" else 80
    netloc = host if config.port == default_port else f"{host}:{config.port}"
    url = f"{scheme}://{netloc}{path}"
    writer = None
    try:
        tls = None
        if scheme == "https":
            tls = ssl.create_default_context()
            tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
        connect = asyncio.open_connection(address, config.port, ssl=tls, server_hostname=host if tls else None)
        reader, writer = await asyncio.wait_for(connect, config.timeout)
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {netloc}\r\nUser-Agent: {config.user_agent}\r\n"
            f"Accept: */*\r\nConnection: close\r\n\r\n"
        )
        writer.write(request.encode("ascii", "replace"))
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), config.timeout)
    except asyncio.LimitOverrunError:
        return Probe(url, 0, error="headers too long")
    except asyncio.IncompleteReadError as exc:
        head = exc.partial  # LF-only servers or a close after the headers: parse what came
        if not head:
            return Probe(url, 0, error="connection closed without a response")
    except (OSError, TimeoutError, ssl.SSLError) as exc:
        return Probe(url, 0, error=f"{type(exc).__name__}: {exc}"[:200] if str(exc) else type(exc).__name__)
    finally:
        if writer is not None:
            writer.close()
    lines = head[:MAX_HEADER_BYTES].decode("latin-1").replace("\r\n", "\n").split("\n")
    status_parts = lines[0].split(None, 2)
    if len(status_parts) < 2 or not status_parts[0].startswith("HTTP/") or not status_parts[1].isdigit():
        return Probe(url, 0, error=f"not an HTTP response: {lines[0][:80]!r}")
    location = ""
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "location":
            location = value.strip()
            break
    return Probe(url, int(status_parts[1]), location)


async def probe_domain(domain: str, address: str, resolver: Resolver, config: ProbeConfig) -> list[Probe]:
    """http://D/ at the address the DNS step found and http://www.D/ at its own address, if it has one."""
    probes = []
    if address:
        probes.append(await fetch_head(domain, address, config))
    if is_ip(domain):
        return probes
    www = f"www.{domain}"
    answer = await resolver.address(www)
    if answer.status == OK and answer.address:
        probes.append(await fetch_head(www, answer.address, config))
    return probes


async def probe_all(
    items: Iterable[tuple[str, str]], resolver: Resolver, config: ProbeConfig
) -> AsyncIterator[tuple[str, list[Probe]]]:
    """(domain, probes) as they complete for (domain, address) pairs, ``config.concurrency`` at once."""

    async def probe(item: tuple[str, str]) -> list[Probe]:
        return await probe_domain(item[0], item[1], resolver, config)

    async for (domain, _), probes in unordered_map(probe, items, config.concurrency):
        yield domain, probes
