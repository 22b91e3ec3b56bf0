"""The selection tool's pages (BCWeb): collections, search and bulk edit, the two-stage add, a record,
the transfer. Who may do what is webui.access's table: every role reads everything; a collection's editors
(and admins, for every collection) change its records; curators create collections."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from orchestrator.selection import checks, rules
from orchestrator.selection.bulk import BulkError, bulk_update
from orchestrator.selection.models import Collection, Record, SavedSearch, editable_collections
from orchestrator.selection.search import clean_query, search, to_csv
from orchestrator.selection.transfer import transfer
from webui import access
from webui.access import CURATE, READ, require
from webui.jinja import plural

_SIGNER_SALT = "selection.checked-url"
CHECK_MAX_AGE_S = 3600


def _editable(user: object) -> QuerySet[Collection]:
    """The collections ``user`` edits, with the web UI's roles (admins edit them all: webui.access)."""
    return editable_collections(user, every=access.edits_every_collection(user))


class RecordForm(forms.ModelForm):
    class Meta:
        model = Record
        fields = [
            "collection",
            "seeds",
            "supplementary_urls",
            "budget",
            "frequency",
            "depth",
            "theme",
            "keywords",
            "content_notes",
            "technical_notes",
            "active",
            "responsible",
        ]
        widgets = {
            "seeds": forms.Textarea(attrs={"rows": 3}),
            "supplementary_urls": forms.Textarea(attrs={"rows": 2}),
            "content_notes": forms.Textarea(attrs={"rows": 3}),
            "technical_notes": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args: object, user: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = _editable(user)
        self.fields["responsible"].queryset = access.holders(CURATE)


def _context(request: HttpRequest, **extra: object) -> dict[str, object]:
    return {
        "messages": messages.get_messages(request),
        "compat": rules.compatibility_table(),
        "may_transfer": access.may_transfer(request.user),
        "frequencies": rules.FREQUENCIES,
        "budgets": rules.BUDGETS,
        "depths": rules.DEPTHS,
        **extra,
    }


class CollectionForm(forms.ModelForm):
    class Meta:
        model = Collection
        fields = ["name", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {
            "name": "A department's or a project's collection, e.g. “Elections 2027”.",
            "description": "What it gathers and for whom (optional).",
        }


@require(READ)
def collections(request: HttpRequest) -> HttpResponse:
    """The collections, and (for curators and admins) a form to create one: the way in on a fresh system,
    where the tool would otherwise be empty with nothing to click."""
    may_create = access.may_create_collection(request.user)
    form = CollectionForm(request.POST or None) if may_create else None
    if request.method == "POST":
        if form is None:
            raise PermissionDenied("creating a collection needs the curator role (ask an administrator)")
        if form.is_valid():
            collection = form.save()
            collection.editors.add(request.user)
            messages.success(
                request, f"Collection {collection.name} created; you are its editor. Add its first record."
            )
            return redirect("selection:add")
    rows = Collection.objects.annotate(records_n=Count("records")).order_by("name")
    editable = set(_editable(request.user).values_list("pk", flat=True))
    return render(
        request,
        "selection/collections.html",
        _context(
            request, collections=rows, editable=editable, form=form, every=access.edits_every_collection(request.user)
        ),
    )


@require(READ)
def records(request: HttpRequest) -> HttpResponse:
    query = clean_query(request.GET)
    found = search(query, request.user.pk)
    if request.GET.get("format") == "csv":
        response = HttpResponse(to_csv(found), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="selection-{timezone.now():%Y%m%d-%H%M%S}.csv"'
        return response
    total = found.count()
    return render(
        request,
        "selection/records.html",
        _context(
            request,
            query=query,
            records=found[:500],
            total=total,
            all_collections=Collection.objects.order_by("name"),
            editable=set(_editable(request.user).values_list("pk", flat=True)),
            saved=SavedSearch.objects.filter(user=request.user),
            curators=access.holders(CURATE).order_by("username"),
        ),
    )


@require(READ)
@require_POST
def save_search(request: HttpRequest) -> HttpResponse:
    name = request.POST.get("name", "").strip()[:100]
    query = clean_query(request.POST)
    if not name:
        messages.error(request, "give the search a name to save it")
    else:
        SavedSearch.objects.update_or_create(user=request.user, name=name, defaults={"query": query})
        messages.success(request, f"search {name!r} saved")
    return redirect(_records_url(query))


@require(READ)
@require_POST
def delete_search(request: HttpRequest, pk: int) -> HttpResponse:
    SavedSearch.objects.filter(user=request.user, pk=pk).delete()
    return redirect("selection:records")


def _records_url(query: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return reverse("selection:records") + ("?" + urlencode(query) if query else "")


@require(READ)
@require_POST
def bulk(request: HttpRequest) -> HttpResponse:
    ids = [int(i) for i in request.POST.getlist("record") if i.isdigit()]
    changes: dict[str, object] = {}
    fields = {"responsible": "responsible_id", "collection": "collection_id"}
    for field in ("responsible", "collection", "budget", "frequency", "depth", "active"):
        value = request.POST.get(f"set_{field}", "").strip()
        if not value:
            continue
        if field in fields:
            if not value.isdigit():
                messages.error(request, f"{field}: choose from the list")
                return redirect(_records_url(clean_query(request.POST)))
            changes[fields[field]] = int(value)
        elif field == "active":
            changes["active"] = value == "yes"
        else:
            changes[field] = value
    if not ids:
        messages.error(request, "tick the records to change first")
    else:
        try:
            result = bulk_update(request.user, ids, changes, every=access.edits_every_collection(request.user))
        except BulkError as exc:
            messages.error(request, f"nothing was changed: {exc}")
        else:
            messages.success(request, f"{plural(result.changed, 'record')} changed, {result.unchanged} already so")
    return redirect(_records_url(clean_query(request.POST)))


@require(READ)
def add(request: HttpRequest) -> HttpResponse:
    """Stage 1: check the URL online and against the selection; stage 2 is ``add_details``."""
    if not _editable(request.user).exists():
        if access.may_create_collection(request.user):
            messages.info(request, "Create a collection first: a record belongs to one.")
            return redirect("selection:collections")
        raise PermissionDenied(
            "you edit no collection: ask an administrator (or a curator) to make you an editor of one"
        )
    result = None
    url = (request.POST.get("url") or request.GET.get("url") or "").strip()
    if request.method == "POST" and url:
        result = checks.check(url)
    # A redirect target is not vouched for here: choosing it runs stage 1 again on the target.
    token = signing.dumps(result.url, salt=_SIGNER_SALT) if result and result.valid else ""
    return render(request, "selection/add.html", _context(request, entered=url, result=result, token=token))


@require(READ)
def add_details(request: HttpRequest) -> HttpResponse:
    """Stage 2: the form, for a URL stage 1 found valid (a signed token proves it, for an hour)."""
    token = request.POST.get("token") or request.GET.get("token") or ""
    try:
        url = signing.loads(token, salt=_SIGNER_SALT, max_age=CHECK_MAX_AGE_S)
    except signing.BadSignature:
        messages.error(request, "check the URL first (or again: the check is valid for an hour)")
        return redirect("selection:add")
    if request.method == "POST":
        form = RecordForm(request.POST, user=request.user)
        if form.is_valid() and form.instance.url != url:
            form.add_error(
                "seeds",
                f"the first seed must be the URL checked in stage 1 ({url}); to select another URL, check it first",
            )
        if form.is_valid():
            record = form.save(commit=False)
            record.created_by = record.modified_by = request.user
            record.created_at = record.modified_at = timezone.now()
            record.save()
            messages.success(request, f"record {record.url} added to {record.collection.name}")
            return redirect("selection:record", pk=record.pk)
    else:
        first = _editable(request.user).first()
        form = RecordForm(
            initial={"seeds": url, "collection": first, "responsible": request.user.pk}, user=request.user
        )
    return render(
        request,
        "selection/record.html",
        _context(request, form=form, token=token, record=None, can_edit=True, duplicates=checks.find_duplicates(url)),
    )


@require(READ)
def record(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(Record.objects.select_related("collection"), pk=pk)
    can_edit = item.collection.can_edit(request.user, every=access.edits_every_collection(request.user))
    if request.method == "POST":
        if not can_edit:
            raise PermissionDenied(f"you do not edit the collection {item.collection.name}")
        form = RecordForm(request.POST, instance=item, user=request.user)
        if form.is_valid():
            changed = form.save(commit=False)
            changed.modified_by, changed.modified_at = request.user, timezone.now()
            changed.save()
            messages.success(request, "record saved")
            return redirect("selection:record", pk=item.pk)
    else:
        form = RecordForm(instance=item, user=request.user)
    return render(
        request,
        "selection/record.html",
        _context(
            request,
            form=form,
            record=item,
            can_edit=can_edit,
            token="",
            duplicates=checks.find_duplicates(item.url, exclude=item.pk),
        ),
    )


@require(READ)
def transfer_view(request: HttpRequest) -> HttpResponse:
    report = None
    if request.method == "POST":
        if not access.may_transfer(request.user):
            raise PermissionDenied("transferring to harvesting is for administrators of the selection")
        report = transfer()
    return render(request, "selection/transfer.html", _context(request, report=report))
