"""Validation of what curators and engineers type: domain names, seed URLs, crawler-trap regexes.

Every error names what is wrong and where (the line number for multi-line fields), so a mistake in
line 7,213 of a pasted list is found without guessing. Regexes are checked by the one validator of user
patterns, harvester.patterns (RE2); the harvester checks them again with it when a JobSpec arrives
(harvester.contracts.validate_regex), so nothing invalid reaches a crawl.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import idna
from django.core.exceptions import ValidationError

from harvester import patterns
from harvester.hosts import is_ip, registrable_part

# The bounded reader of users' line files (Django-free, so the trial crawl shares it), re-exported here.
from harvester.linereader import MAX_LINE_BYTES, Line, preview, read_lines  # noqa: F401

#: A pasted list with thousands of bad lines is reported by its first errors, not a 100,000-line page.
MAX_REPORTED_ERRORS = 50

_LABEL_RE = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
#: Already lower-case ASCII LDH with no punycode label: IDNA processing would return it unchanged.
_PLAIN_ASCII_HOST_RE = re.compile(r"^(?:(?!-)(?!xn--)[a-z0-9-]{1,63}(?<!-)\.)*(?!-)(?!xn--)[a-z0-9-]{1,63}(?<!-)$")


def to_ascii_host(host: str) -> str:
    """Lower-case, IDNA (UTS #46) host name; raises ValueError with the reason."""
    host = host.strip().rstrip(".").lower()
    if not host:
        raise ValueError("empty host name")
    if _PLAIN_ASCII_HOST_RE.match(host):
        return host  # the common case, ~5x faster than the IDNA codec
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise ValueError(f"not a valid internationalised host name ({exc})") from None


def normalize_domain_name(raw: str) -> str:
    """Validate a domain name as netharvest stores it: a registrable domain or an IP address.

    Raises ValidationError saying what is wrong, e.g. that ``www.example.com`` is a host and the
    domain is ``example.com``.
    """
    name = raw.strip()
    if not name:
        raise ValidationError("empty domain name")
    if "/" in name or ":" in name and not is_ip(name):
        raise ValidationError(f"{preview(raw)} is not a domain name (a URL? give only the domain, e.g. example.com)")
    if is_ip(name):
        return str(ipaddress.ip_address(name))
    try:
        ascii_name = to_ascii_host(name)
    except ValueError as exc:
        raise ValidationError(f"{preview(raw)}: {exc}") from None
    if len(ascii_name) > 253 or not all(_LABEL_RE.match(label) for label in ascii_name.split(".")):
        raise ValidationError(f"{preview(raw)} is not a valid domain name")
    registrable = registrable_part(ascii_name)
    if registrable is None:
        raise ValidationError(f"{preview(raw)} has no registrable part under a known public suffix")
    if registrable != ascii_name:
        raise ValidationError(f"{preview(raw)} is a host name, not a registrable domain: the domain is {registrable}")
    return ascii_name


def normalize_seed(raw: str) -> str:
    """An http(s) URL with an IDNA host, lower-case scheme and host, and at least ``/`` as path."""
    url = raw.strip()
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"not a URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("only http:// and https:// URLs can be seeds")
    if not parts.hostname:
        raise ValueError("the URL has no host")
    if any(c.isspace() for c in url):
        raise ValueError("a URL cannot contain spaces")
    host = parts.hostname
    if not is_ip(host.strip("[]")):
        host = to_ascii_host(host)
    netloc = host if ":" not in host else f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        raise ValueError("the port is not a number between 0 and 65535") from None
    if port is not None:
        netloc = f"{netloc}:{port}"
    if parts.username or parts.password:
        raise ValueError("seeds must not carry user names or passwords")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers, as curators count them. For text already in memory
    (a form field); a file is read line by line with :func:`read_lines`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line.strip()


def normalize_seed_lines(text: str) -> str:
    """Validate a seed list: one URL per line, ``#`` lines kept as inactive; raise on any bad line."""
    out, errors = [], []
    for number, line in iter_lines(text):
        if line.startswith("#"):
            out.append(line)
            continue
        try:
            out.append(normalize_seed(line))
        except ValueError as exc:
            errors.append(f"line {number}: {preview(line)}: {exc}")
    if errors:
        raise ValidationError(errors)
    return "\n".join(out)


def active_seeds(text: str) -> list[str]:
    """The seed lines not commented out (what :func:`iter_lines` yields, without the numbers: job generation
    calls this for every domain of a broad crawl, and the generator was a quarter of its Python time)."""
    return [s for line in text.splitlines() if (s := line.strip()) and s[0] != "#"]


#: The last list found valid, in its normalised form (a fixed point of validate_regex_lines): a form
#: validates an uploaded list and the model's clean() validates the same text again; with 120,000 lines
#: that second pass was half of the save.
_last_valid: list[str] = [""]


def validate_regex_lines(text: str, used_for: str = patterns.TRAPS) -> str:
    """One crawler-trap regex per line; every line must be one RE2 accepts (:mod:`harvester.patterns`,
    the one validator of user patterns: linear-time matching, refusals name the line and say why;
    ``used_for`` ends a refusal, e.g. :data:`harvester.patterns.STRIP`)."""
    if text == _last_valid[0]:
        return text
    lines = list(iter_lines(text))
    errors = patterns.check_lines(lines, used_for)
    if errors:
        raise ValidationError(
            errors[:MAX_REPORTED_ERRORS]
            + (
                [f"… and {len(errors) - MAX_REPORTED_ERRORS} more lines refused"]
                if len(errors) > MAX_REPORTED_ERRORS
                else []
            )
        )
    valid = "\n".join(line for _, line in lines)
    _last_valid[0] = valid
    return valid


def regex_lines(text: str) -> list[str]:
    return [line for _, line in iter_lines(text)]
