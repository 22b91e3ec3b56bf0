"""Import the ``surt`` package without paying for ``tldextract`` until something really uses it.

Why: ``surt.handyurl`` imports ``tldextract`` at module level (which imports ``requests``,
``urllib3``, ``filelock`` and ``idna``), yet ``surt.surt()`` with its default options (the SURT keys
cdxj-indexer and pywb compute) never calls it: only ``handyurl.getPublicSuffix``/``getPublicPrefix``
do. That import was 0.2 s of CPU per indexer process, about a quarter of the CDX time of a 50 MiB
WARC (docs/BENCHMARKS.md, "Indexer", issue 14).

How: while ``surt`` is imported, ``sys.modules["tldextract"]`` holds a stand-in whose first attribute
access imports the real package and delegates to it, so ``surt``'s own use of it still works. The
stand-in is removed right after, so any other code importing ``tldextract`` gets the real module.
(The stdlib's ``importlib.util.LazyLoader`` cannot do this on Python 3.11: the ``import`` statement
reads the module's ``__spec__``, which triggers the load at once.) If ``surt`` or ``tldextract`` is
already imported (the orchestrator validates domains with it), nothing changes.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

_DEFERRED = "tldextract"


class _ImportedOnFirstUse(ModuleType):
    """Stands in for a module; the first attribute it lacks imports the real module."""

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        real = importlib.import_module(self.__name__)
        return getattr(real, attr)


def import_surt() -> ModuleType:
    """The ``surt`` package, with ``tldextract`` imported only when ``surt`` first uses it."""
    if "surt" not in sys.modules and _DEFERRED not in sys.modules:
        sys.modules[_DEFERRED] = _ImportedOnFirstUse(_DEFERRED)
        try:
            import surt
        finally:
            if isinstance(sys.modules.get(_DEFERRED), _ImportedOnFirstUse):
                del sys.modules[_DEFERRED]
    import surt

    return surt
