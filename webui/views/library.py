"""Crawl templates, schedules, channels and global crawler-trap lists: lists and edit forms.

Templates, channels and trap lists are the crawl engineer's; schedules the curator's (they decide when
their harvests run). Everyone reads.
"""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from orchestrator.harvest.models import CrawlTemplate, GlobalCrawlerTrapList, HarvestChannel, Schedule
from orchestrator.harvest.scheduling import schedules as schedules_math
from webui.access import CURATE, ENGINEER, READ, require
from webui.forms.library import ChannelForm, ScheduleForm, TemplateForm, TrapListForm


def _edit(request: HttpRequest, form_class: type[ModelForm], pk: int | None, what: str, list_url: str) -> HttpResponse:
    """The one create/edit flow: the row ``pk`` of the form's model (404 if there is none; no ``pk``: a new
    one), validate everything, save only a valid form, say what happened."""
    instance = get_object_or_404(form_class._meta.model, pk=pk) if pk else None
    form = form_class(request.POST or None, request.FILES or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        messages.success(request, f"{what.capitalize()} {saved} saved.")
        return redirect(list_url)
    title = f"{what.capitalize()} {instance}" if instance else f"New {what}"
    return render(request, "webui/form.html", {"form": form, "title": title, "submit": "Save", "back": (list_url,)})


@require(READ)
def template_list(request: HttpRequest) -> HttpResponse:
    templates = CrawlTemplate.objects.all()
    return render(request, "webui/library/templates.html", {"templates": templates})


@require(ENGINEER)
def template_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return _edit(request, TemplateForm, pk, "crawl template", "webui:templates")


@require(READ)
def schedule_list(request: HttpRequest) -> HttpResponse:
    schedules = list(Schedule.objects.annotate(n_definitions=Count("definitions")))
    now = timezone.now()
    # What the schedule means, shown rather than described: its next events for a harvest activated now.
    preview = {s.pk: schedules_math.upcoming_runs(s, 3, None, 0, now=now) for s in schedules}
    return render(request, "webui/library/schedules.html", {"schedules": schedules, "preview": preview})


@require(CURATE)
def schedule_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return _edit(request, ScheduleForm, pk, "schedule", "webui:schedules")


@require(READ)
def channel_list(request: HttpRequest) -> HttpResponse:
    channels = HarvestChannel.objects.annotate(n_definitions=Count("definitions"))
    return render(request, "webui/library/channels.html", {"channels": channels})


@require(ENGINEER)
def channel_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return _edit(request, ChannelForm, pk, "channel", "webui:channels")


@require(READ)
def trap_list(request: HttpRequest) -> HttpResponse:
    return render(request, "webui/library/traps.html", {"lists": GlobalCrawlerTrapList.objects.all()})


@require(ENGINEER)
def trap_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return _edit(request, TrapListForm, pk, "crawler-trap list", "webui:traps")


@require(ENGINEER)
@require_POST
def trap_toggle(request: HttpRequest, pk: int) -> HttpResponse:
    """Activate or deactivate a list: ``active=1`` or ``0``, a conditional UPDATE so a double click is harmless."""
    trap_list = get_object_or_404(GlobalCrawlerTrapList, pk=pk)
    active = request.POST.get("active") == "1"
    changed = GlobalCrawlerTrapList.objects.filter(pk=pk, active=not active).update(active=active)
    state = "active" if active else "inactive"
    messages.success(
        request,
        f"{trap_list.name} is now {state}: it applies to jobs generated from now on."
        if changed
        else f"{trap_list.name} was already {state}.",
    )
    return redirect("webui:traps")
