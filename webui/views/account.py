"""The user's own API tokens: make one (shown once), see when each was last used, revoke one.

A token acts as its user with the user's roles (orchestrator/api/tokens.py), so every role may make its own:
it reaches no further than the web UI already lets that user go. Administrators also manage everyone's
tokens in the admin, and engineers from the command line (``netharvest tokens``).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from orchestrator.api import tokens
from orchestrator.api.models import ApiToken
from webui.access import READ, require


@require(READ)
def token_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        _, token = tokens.create(request.user, request.POST.get("name", "").strip())
        messages.warning(
            request,
            f"Your new API token is {token} — copy it now: it is stored only as a hash and is never shown again.",
        )
        return redirect("webui:tokens")
    rows = ApiToken.objects.filter(user=request.user).order_by("revoked_at", "-created")
    return render(request, "webui/account/tokens.html", {"tokens": rows})


@require(READ)
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    row = get_object_or_404(ApiToken, pk=pk, user=request.user)  # only one's own
    if tokens.revoke(row):
        messages.success(request, f"Token {row.prefix}… revoked: scripts using it are refused from now on.")
    else:
        messages.info(request, f"Token {row.prefix}… was already revoked.")
    return redirect("webui:tokens")
