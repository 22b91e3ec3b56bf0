"""Schedules: when selective harvests run (the curator's; everyone reads)."""

from datetime import UTC, datetime

from django.shortcuts import get_object_or_404
from ninja import Field, ModelSchema, Router, Status

from orchestrator.api import forms
from orchestrator.api.security import role
from orchestrator.harvest.models import Schedule
from orchestrator.harvest.scheduling import schedules
from webui.access import CURATE, READ
from webui.forms.library import ScheduleForm

router = Router(tags=["schedules"])


class ScheduleOut(ModelSchema):
    description: str = Field(description="As a curator would say it, e.g. 'every 2 weeks on Monday at 03:00 UTC'.")
    preview: list[datetime] = Field(description="The first runs of a definition activated now (UTC).")

    class Meta:
        model = Schedule
        fields = "__all__"

    @staticmethod
    def resolve_description(obj: Schedule) -> str:
        return obj.describe()

    @staticmethod
    def resolve_preview(obj: Schedule) -> list[datetime]:
        return schedules.upcoming_runs(obj, 3, None, 0, now=datetime.now(UTC))


class ScheduleIn(ModelSchema):
    """Any of the schedule's fields; on a change, the others keep their values. Times are UTC."""

    class Meta:
        model = Schedule
        exclude = ["id"]
        fields_optional = "__all__"


@router.get("/schedules", auth=role(READ), response=list[ScheduleOut], summary="Schedules")
def list_schedules(request):
    return Schedule.objects.all()


@router.get("/schedules/{schedule_id}", auth=role(READ), response=ScheduleOut, summary="One schedule")
def get_schedule(request, schedule_id: int):
    return get_object_or_404(Schedule, pk=schedule_id)


@router.post("/schedules", auth=role(CURATE), response={201: ScheduleOut}, summary="Create a schedule")
def add_schedule(request, payload: ScheduleIn):
    return Status(201, forms.save(ScheduleForm, payload.dict(exclude_unset=True)))


@router.patch("/schedules/{schedule_id}", auth=role(CURATE), response=ScheduleOut, summary="Change a schedule")
def change_schedule(request, schedule_id: int, payload: ScheduleIn):
    return forms.save(ScheduleForm, payload.dict(exclude_unset=True), get_object_or_404(Schedule, pk=schedule_id))
