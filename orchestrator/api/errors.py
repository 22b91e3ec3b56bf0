"""How refusals read: one JSON shape for every error, with the path of a bad value.

Bad input → 422 ``{"detail": [{"loc": ["body", "seeds"], "msg": "line 3: 'htp://x': …"}]}``, the shape
django-ninja gives its own schema errors, so a script handles one form. A request the state does not
allow (a job that is not running, a definition already active: the scheduler's and dispatch's own
messages) → 409 ``{"detail": "…"}``; a missing role → 403; an unknown id → 404; a broker that does not
answer → 503.
"""

from collections.abc import Iterable

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI

from orchestrator.harvest.jobs import jobgen
from orchestrator.harvest.jobs.dispatch import BrokerUnavailable, DispatchError
from orchestrator.harvest.scheduling.scheduler import SchedulerError


class Invalid(Exception):
    """Bad input: ``errors`` are (path, message) pairs, the path as ninja writes it (``["body", field]``)."""

    def __init__(self, errors: Iterable[tuple[list[str | int], str]]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(f"{'.'.join(map(str, loc))}: {msg}" for loc, msg in self.errors))

    @classmethod
    def of(cls, exc: ValidationError, where: str = "body") -> "Invalid":
        """From a Django ValidationError (a model's ``full_clean``, a form): each field's messages at its path."""
        if hasattr(exc, "error_dict"):
            return cls(
                ([where] + ([] if field == "__all__" else [field]), message)
                for field, errors in exc.message_dict.items()
                for message in errors
            )
        return cls(([where], message) for message in exc.messages)


def install(api: NinjaAPI) -> None:
    """Register the handlers on ``api``."""

    def detail(request: HttpRequest, payload: object, status: int) -> HttpResponse:
        return api.create_response(request, {"detail": payload}, status=status)

    @api.exception_handler(Invalid)
    def invalid(request: HttpRequest, exc: Invalid) -> HttpResponse:
        return detail(request, [{"loc": loc, "msg": msg, "type": "value_error"} for loc, msg in exc.errors], 422)

    @api.exception_handler(ValidationError)
    def validation(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        return invalid(request, Invalid.of(exc))

    @api.exception_handler(BrokerUnavailable)
    def broker(request: HttpRequest, exc: BrokerUnavailable) -> HttpResponse:
        return detail(request, str(exc), 503)

    for conflict in (SchedulerError, DispatchError, jobgen.GenerationError):
        api.add_exception_handler(conflict, lambda request, exc: detail(request, str(exc), 409))

    @api.exception_handler(PermissionDenied)
    def forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
        return detail(request, str(exc) or "permission denied", 403)

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return detail(request, str(exc) or "not found", 404)
