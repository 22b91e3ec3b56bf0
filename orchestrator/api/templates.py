"""Crawl templates (the crawl engineer's; everyone reads) and harvest channels (read only here)."""

from django.shortcuts import get_object_or_404
from ninja import ModelSchema, Router, Schema, Status

from orchestrator.api import forms
from orchestrator.api.security import role
from orchestrator.harvest.models import CrawlTemplate, HarvestChannel
from webui.access import ENGINEER, READ
from webui.forms.library import TemplateForm

router = Router(tags=["templates"])


class TemplateOut(ModelSchema):
    class Meta:
        model = CrawlTemplate
        fields = "__all__"


class TemplateIn(ModelSchema):
    """Any of the template's fields; on a change, the others keep their values."""

    class Meta:
        model = CrawlTemplate
        exclude = ["id"]
        fields_optional = "__all__"


class ChannelOut(Schema):
    id: int
    name: str
    priority: str
    default_for: str
    queue: str
    comments: str


@router.get("/templates", auth=role(READ), response=list[TemplateOut], summary="Crawl templates")
def list_templates(request):
    return CrawlTemplate.objects.all()


@router.get("/templates/{template_id}", auth=role(READ), response=TemplateOut, summary="One crawl template")
def get_template(request, template_id: int):
    return get_object_or_404(CrawlTemplate, pk=template_id)


@router.post(
    "/templates",
    auth=role(ENGINEER),
    response={201: TemplateOut},
    summary="Create a crawl template (defaults for unset fields)",
)
def add_template(request, payload: TemplateIn):
    return Status(201, forms.save(TemplateForm, payload.dict(exclude_unset=True)))


@router.patch("/templates/{template_id}", auth=role(ENGINEER), response=TemplateOut, summary="Change a crawl template")
def change_template(request, template_id: int, payload: TemplateIn):
    return forms.save(TemplateForm, payload.dict(exclude_unset=True), get_object_or_404(CrawlTemplate, pk=template_id))


@router.get("/channels", auth=role(READ), response=list[ChannelOut], tags=["channels"], summary="Harvest channels")
def list_channels(request):
    return HarvestChannel.objects.all()
