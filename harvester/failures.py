"""A download failure, classified by its type into the Heritrix status code crawl.log gives it.

The handler that saw the failure usually says (``meta["nh_failure"]``, :mod:`harvester.fetch`); this is
for the rest: Scrapy's own handlers (``--no-archive``, a middleware raising) and Twisted's errors.
Classes, not class-name strings: a renamed or subclassed exception is still classified, and a typo
fails at import instead of silently becoming -5. Scrapy >= 2.14 names its download errors; with an
older Scrapy the names it lacks are simply not in the tuples (Twisted's own classes still are).
"""

from __future__ import annotations

import sys

import scrapy.exceptions
from twisted.internet import error as txerror

from harvester.fetch import S_CONNECT_FAILED, S_CONNECT_LOST, S_DNS_FAILED, S_TIMEOUT

#: Heritrix's "runtime error" code: a failure of no known kind (crawl.log also says ``err=<class>``).
S_RUNTIME_ERROR = -5


def _scrapy(*names: str) -> tuple[type[BaseException], ...]:
    """Scrapy's download exceptions of these names that the installed Scrapy has."""
    return tuple(c for name in names if isinstance(c := getattr(scrapy.exceptions, name, None), type))


#: (classes, code), tested in this order (a DNS failure is also a kind of connect error in Twisted).
_CODES: tuple[tuple[tuple[type[BaseException], ...], int], ...] = (
    ((txerror.DNSLookupError, *_scrapy("CannotResolveHostError")), S_DNS_FAILED),
    ((txerror.ConnectError, *_scrapy("DownloadConnectionRefusedError")), S_CONNECT_FAILED),
    ((txerror.TimeoutError, *_scrapy("DownloadTimeoutError")), S_TIMEOUT),
    (
        (
            txerror.ConnectionLost,
            txerror.ConnectionDone,
            *_scrapy("DownloadFailedError", "ResponseDataLossError"),
        ),
        S_CONNECT_LOST,
    ),
)


def _response_failed() -> tuple[type[BaseException], ...]:
    """Twisted's ``ResponseFailed`` (connection lost mid-response, from Scrapy's own HTTP handler) when its
    module is loaded. Only that handler imports ``twisted.web._newclient``, our raw handler does not, and
    an exception of a class never imported cannot be raised: looked up, not imported, it adds nothing
    to a crawl's start-up."""
    module = sys.modules.get("twisted.web._newclient")
    failed = getattr(module, "ResponseFailed", None)
    return (failed,) if isinstance(failed, type) else ()


def exception_code(exc: BaseException) -> int:
    """Heritrix code for a download exception (when the handler did not say)."""
    for classes, code in _CODES:
        if isinstance(exc, classes):
            return code
    if isinstance(exc, _response_failed()):
        return S_CONNECT_LOST
    return S_RUNTIME_ERROR
