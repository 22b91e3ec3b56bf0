"""Forms for harvest definitions (selective, snapshot and continuous) and for pasting seeds into a selective or
continuous one. The continuous revisit settings are laid out by webui/forms/continuous.py."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from orchestrator.harvest.models import HarvestChannel, HarvestDefinition, Schedule
from webui.forms.continuous import WaitField, add_revisit_fields, clean_revisit
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
        fields = [*COMMON, "schedule", "max_objects", "max_bytes", "max_job_running_time_s",
                  "previous", "fetch_budget_per_s", "warc_rotate_s"]
        widgets = {"comments": forms.Textarea(attrs={"rows": 2}),
                   "crawler_traps": forms.Textarea(attrs={"rows": 4, "spellcheck": "false"})}
        labels = {"max_objects": "Max objects per domain",
                  "max_bytes": "Max bytes per domain", "max_job_running_time_s": "Max job running time (seconds)",
                  "previous": "Continue snapshot", "crawler_traps": "Crawler traps",
                  "fetch_budget_per_s": "Fetch budget (fetches per second, for the whole job)"}

    KIND_FIELDS = {
        HarvestDefinition.SELECTIVE: {"schedule", "next_date"},
        HarvestDefinition.SNAPSHOT: {"max_objects", "max_bytes", "max_job_running_time_s", "previous"},
        HarvestDefinition.CONTINUOUS: {"fetch_budget_per_s", "warc_rotate_s"},
    }

    def __init__(self, *args: object, kind: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if kind not in self.KIND_FIELDS:
            raise ValueError(f"the web UI edits selective, snapshot and continuous harvests, not {kind!r}")
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
        if kind == HarvestDefinition.CONTINUOUS:
            self.fields["fetch_budget_per_s"].help_text = (
                "The crawl never fetches faster than this, on top of each host's politeness; the revisit policy "
                "plans its visits within it. Empty: politeness alone limits it.")
            self.fields["warc_rotate_s"] = WaitField(
                label="Close WARC files every", help_text="A continuous job never ends, so it closes its WARC file "
                "this often (or when full) and hands it to the indexer chain: captures are replayable within "
                "minutes. e.g. 15m")
            self.initial.setdefault("warc_rotate_s", self.instance.warc_rotate_s)
            add_revisit_fields(self, self.instance.revisit_settings)
        self.extended_fields = add_extended_fields(self, "harvest", self.instance.extended or {})

    def clean(self) -> dict:
        data = super().clean()
        self.instance.extended = clean_extended(self, self.extended_fields)
        if self.instance.kind == HarvestDefinition.CONTINUOUS:
            settings = clean_revisit(self, self.instance.revisit_settings)
            if settings is not None:
                self.instance.revisit_settings = settings
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
