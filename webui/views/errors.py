"""The site's own error pages (400, 403, 404, 413, 500): the site's layout and navigation, a sentence
saying what went wrong, and never a server path or a traceback.

Django's defaults were a bare "Bad Request (400)" line for a 3 MB form (with no word of what was too
large) and plain "Not Found" pages outside the site. Wired in orchestrator/urls.py (handler400 …);
they apply when DEBUG is off, as in production. The messages of Http404 and PermissionDenied are
shown: they are written for users (and hold no server paths: orchestrator.harvest.jobs.jobfiles).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import escape

from orchestrator.harvest.models.fields import FREE_TEXT_MAX_CHARS

log = logging.getLogger(__name__)


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def error_page(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    """An error page in the site's layout; falls back to plain HTML if the layout itself fails (a
    500 because the database is down must not become a second error). A request refused before the
    middleware ran (a Host header the site does not serve: DisallowedHost) has no user yet: it is shown the
    page an anonymous visitor sees."""
    if not hasattr(request, "user"):
        request.user = AnonymousUser()
    try:
        return render(
            request, "webui/error.html", {"title": title, "message": message, "status": status}, status=status
        )
    except Exception:  # the page of last resort
        log.exception("the error page could not be rendered in the site's layout")
        return HttpResponse(
            f"<!doctype html><title>{escape(title)}</title><h1>{escape(title)}</h1>"
            f'<p>{escape(message)}</p><p><a href="/">netharvest</a></p>',
            status=status,
        )


def _message(exception: BaseException | None, default: str) -> str:
    text = (
        str(exception.args[0])
        if exception is not None and exception.args and isinstance(exception.args[0], str)
        else ""
    )
    return text or default


def bad_request(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return error_page(
            request,
            413,
            "Too much data sent",
            f"The form sent more than {_mb(limit)} (the most one request may carry), so nothing "
            "was saved. Comments, descriptions and notes hold at most "
            f"{FREE_TEXT_MAX_CHARS:,} characters; a long list of traps goes in a file upload. "
            "Go back, shorten the text and send it again.",
        )
    if isinstance(exception, TooManyFieldsSent):
        return error_page(
            request,
            413,
            "Too many fields sent",
            f"The form sent more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} fields, so nothing "
            "was saved. Send fewer at a time.",
        )
    return error_page(request, 400, "Bad request", _message(exception, "The request could not be understood."))


def permission_denied(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_page(request, 403, "Not allowed", _message(exception, "You do not have the role this page needs."))


def page_not_found(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_page(request, 404, "Not found", _message(exception, "There is no page at this address."))


def server_error(request: HttpRequest) -> HttpResponse:
    return error_page(
        request,
        500,
        "Server error",
        "Something went wrong on the server; it has been logged. Try again in a moment, and "
        "tell an administrator if it keeps happening.",
    )
