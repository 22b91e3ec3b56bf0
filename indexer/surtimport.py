"""Import the ``surt`` package without paying for ``tldextract`` until something really uses it.

Why: ``surt.handyurl`` imports ``tldextract`` at module level (which imports ``requests``,
``urllib3``, ``filelock`` and ``idna``), yet ``surt.surt()`` with its default options (the SURT keys
cdxj-indexer and pywb compute: the N field of the CDX contract, ARCHITECTURE.md) never calls it;
only ``handyurl.getPublicSuffix``/``getPublicPrefix`` do. That import was 0.2 s of CPU per indexer
process, about a quarter of the CDX time of a 50 MiB WARC (docs/BENCHMARKS.md, "Indexer", issue 14).

How: while ``surt`` is imported, ``sys.modules["tldextract"]`` holds a stand-in whose first attribute
access imports the real package and delegates to it, so ``surt``'s own use of it still works. The
stand-in is removed right after, so any other code importing ``tldextract`` gets the real module.
(The stdlib's ``importlib.util.LazyLoader`` cannot do this on Python 3.11: the ``import`` statement
reads the module's ``__spec__``, which triggers the load at once.) If ``surt`` or ``tldextract`` is
already imported (the orchestrator validates domains with it), nothing changes.

Second, ``surt``'s ``escapeOnce`` (run on the host and the path of every URL) calls
``urllib.parse.quote_from_bytes`` with a ``bytes`` ``safe`` set, which that function re-filters with a
Python list comprehension on every call (3 µs), before its own fast path returns the input unchanged
when every byte is safe, as in nearly all URLs. :func:`escape_once` takes that same fast path first
(same bytes out, tests/indexer/test_cdx.py compares it with the original on random input) and calls the
original otherwise: 7 µs less per CDX line, a tenth of the CDX step's Python time.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType

_DEFERRED = "tldextract"


class _ImportedOnFirstUse(ModuleType):
    """Stands in for a module; the first attribute it lacks imports the real module."""

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        real = importlib.import_module(self.__name__)
        return getattr(real, attr)


#: surt's escapeOnce ``safe`` set, plus the bytes ``quote_from_bytes`` never escapes: input made only of
#: these comes back from it unchanged.
_ESCAPE_SAFE = b"""!"$&'()*+,-./:;<=>?@[\\]^_`{|}~"""
_UNCHANGED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~" + _ESCAPE_SAFE


def fast_escape_once(original: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    """``original`` (surt's ``escapeOnce``) with its all-safe fast path taken before the call."""

    def escape_once(value: bytes) -> bytes:
        if value and not value.rstrip(_UNCHANGED):
            return value
        return original(value)

    escape_once.original = original  # type: ignore[attr-defined]
    return escape_once


def import_surt() -> ModuleType:
    """The ``surt`` package, with ``tldextract`` imported only when ``surt`` first uses it and
    ``escapeOnce`` given its fast path (once per process)."""
    if "surt" not in sys.modules and _DEFERRED not in sys.modules:
        sys.modules[_DEFERRED] = _ImportedOnFirstUse(_DEFERRED)
        try:
            import surt
        finally:
            if isinstance(sys.modules.get(_DEFERRED), _ImportedOnFirstUse):
                del sys.modules[_DEFERRED]
    import surt

    google = sys.modules["surt.GoogleURLCanonicalizer"]
    if not hasattr(google.escapeOnce, "original"):
        google.escapeOnce = fast_escape_once(google.escapeOnce)
    return surt
