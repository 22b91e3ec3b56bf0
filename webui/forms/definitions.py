"""Forms for harvest definitions (selective and snapshot) and for pasting seeds into a selective one."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from orchestrator.harvest.models import HarvestChannel, HarvestDefinition, Schedule
from webui.forms.domains import ExtendedFieldsMixin, add_extended_fields, clean_extended

COMMON = ["name", "channel", "audience", "comments", "crawler_traps"]


class DefinitionForm(ExtendedFieldsMixin, forms.ModelForm):
    """The fields of one kind; ``kind`` is fixed by the caller and never changes after creation.

    The next date is not a model field here: a new one goes through the scheduler's ``set_next``.
    """

    next_date = forms.DateTimeField(required=False, label="Next run (UTC)",
                                    widget=forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM (UTC)"}))

    class Meta:
        model = HarvestDefinition
        fields = [*COMMON, "schedule", "page_qa", "max_objects", "max_bytes", "max_job_running_time_s",
                  "previous"]
        widgets = {"comments": forms.Textarea(attrs={"rows": 2}),
                   "crawler_traps": forms.Textarea(attrs={"rows": 4, "spellcheck": "false"})}
        labels = {"max_objects": "Max objects per domain",
                  "max_bytes": "Max bytes per domain", "max_job_running_time_s": "Max job running time (seconds)",
                  "previous": "Continue snapshot", "crawler_traps": "Crawler traps",
                  "page_qa": "Page QA after each job"}

    KIND_FIELDS = {
        HarvestDefinition.SELECTIVE: {"schedule", "next_date", "page_qa"},
        HarvestDefinition.SNAPSHOT: {"max_objects", "max_bytes", "max_job_running_time_s", "previous"},
    }

    def __init__(self, *args: object, kind: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if kind not in self.KIND_FIELDS:
            raise ValueError(f"the web UI edits selective and snapshot harvests, not {kind!r}")
        self.instance.kind = kind
        for name in set().union(*self.KIND_FIELDS.values()) - self.KIND_FIELDS[kind]:
            del self.fields[name]
        self.fields["channel"].queryset = HarvestChannel.objects.all()
        if not self.instance.pk:
            default = HarvestChannel.objects.filter(default_for=kind).first()
            if default:
                self.initial.setdefault("channel", default.pk)
        if "schedule" in self.fields:
            self.fields["schedule"].queryset = Schedule.objects.all()
            self.fields["schedule"].help_text = "Needed before the harvest can be activated."
            self.fields["next_date"].help_text = ("Empty: the schedule decides when it is activated. Set it to "
                                                  "move the next run; the schedule carries on from there.")
            self.initial["next_date"] = self.instance.next_date
        if "previous" in self.fields:
            self.fields["previous"].queryset = HarvestDefinition.objects.filter(kind=HarvestDefinition.SNAPSHOT)\
                .exclude(pk=self.instance.pk)
            self.fields["previous"].help_text = ("Harvest only the domains that snapshot did not finish (stopped by "
                                                 "its budget), where it stopped. Empty: all domains.")
        self.extended_fields = add_extended_fields(self, "harvest", self.instance.extended or {})

    def clean(self) -> dict:
        data = super().clean()
        self.instance.extended = clean_extended(self, self.extended_fields)
        return data


class SeedsForm(forms.Form):
    seeds = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false",
                                     "placeholder": "https://www.example.fr/news/\nexample.org"}),
        label="Seed URLs", help_text="One URL per line; a bare host name means http://host/. Each URL's domain "
                                     "is created if needed and gets a seed list and configuration named after "
                                     "this harvest. If any line is wrong, nothing is added.")


class RemoveForm(forms.Form):
    configurations = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple, required=False)

    def __init__(self, *args: object, definition: HarvestDefinition, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["configurations"].queryset = definition.configurations.all()

    def clean_configurations(self) -> object:
        value = self.cleaned_data["configurations"]
        if not value:
            raise ValidationError("tick the domains to remove")
        return value
