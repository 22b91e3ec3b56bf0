"""Change detection for continuous harvesting: the content digest with the operator's strip regexes.

Heritrix's ChangeEvaluator compares a document's SHA-1 with the previous visit's; its HTTPContentDigest
processor first "appl[ies] a regular expression to the document and replace[s] any section that
matches the regular expression with a single blank character" so that "a clock feature on a web site
changing every second" is not mistaken for a change (seed 002 §6.3.3, seed 000 §2-3). Here the same:
each strip regex's matches become one blank, then SHA-1, written ``sha1:<base32>`` as WARC payload
digests are (:func:`harvester.warcwriter.sha1_b32`), so a digest with no strip regexes equals the
record's ``WARC-Payload-Digest``.

The regexes are typed by an operator, so they go through :mod:`harvester.patterns` (RE2: linear time,
no catastrophic backtracking on a hostile page). Bodies are matched as Latin-1 text: every byte maps to
one character and back, so a regex never fails on bytes that are not UTF-8 and the stripped bytes are
exactly the document minus the matches.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

from harvester.patterns import STRIP, compile_pattern
from harvester.warcwriter import sha1_b32


@lru_cache(maxsize=256)
def _programs(strip: tuple[str, ...]) -> tuple:
    return tuple(compile_pattern(pattern, f"strip[{i}]", STRIP) for i, pattern in enumerate(strip))


def strip_body(body: bytes, strip: Sequence[str]) -> bytes:
    """``body`` with every match of every strip regex (in order) replaced by one blank (HTTPContentDigest)."""
    if not strip:
        return body
    text = body.decode("latin-1")
    for program in _programs(tuple(strip)):
        text = program.sub(" ", text)
    return text.encode("latin-1")


def stripped_digest(body: bytes, strip: Sequence[str]) -> str:
    """``sha1:<base32>`` of ``body`` after the strip regexes: the digest the revisit policy compares.

    Raises :class:`harvester.patterns.PatternError` naming ``strip[i]`` for a regex RE2 refuses
    (settings are checked earlier, by ``RevisitSettings.from_dict``, so a crawl never gets here with one).
    """
    return sha1_b32(hashlib.sha1(strip_body(body, strip)).digest())
