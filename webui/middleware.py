"""Request checks every view gets, before any view code runs."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from webui.views.errors import error_page

#: C0 control characters and DEL, except TAB, LF and CR: no domain name, URL, regex or search text
#: holds one, and PostgreSQL cannot store or compare NUL at all (``/domains/?q=%00`` was an HTTP 500).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class RefuseControlCharacters:
    """Answer 400 with the site's error page, naming the parameter, when a query parameter (name or
    value) holds a control character: one check for every search box and filter of the site."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for key, values in request.GET.lists():
            for value in (key, *values):
                found = _CONTROL.search(value)
                if found:
                    where = "A parameter name" if _CONTROL.search(key) else f"The parameter {key[:40]!r}"
                    return error_page(
                        request,
                        400,
                        "Bad request",
                        f"{where} holds a control character (U+{ord(found.group()):04X}), which no name, "
                        "address or search text contains: remove it and try again.",
                    )
        return self.get_response(request)
