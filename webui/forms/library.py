"""Forms for crawl templates, schedules, channels and global crawler-trap lists."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from harvester.defaults import CRAWL_DEFAULTS
from orchestrator.harvest.curation import validators
from orchestrator.harvest.models import CrawlTemplate, GlobalCrawlerTrapList, HarvestChannel, Schedule

UTC_INPUT = forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM (UTC)"})


class TemplateForm(forms.ModelForm):
    class Meta:
        model = CrawlTemplate
        fields = ["name", "description", "active", *CRAWL_DEFAULTS]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}


class ScheduleForm(forms.ModelForm):
    class Meta:
        model = Schedule
        fields = [
            "name",
            "comments",
            "every",
            "unit",
            "anytime",
            "at_minute",
            "at_hour",
            "at_weekday",
            "at_day_of_month",
            "start",
            "end",
            "end_date",
            "max_runs",
        ]
        widgets = {"comments": forms.Textarea(attrs={"rows": 2}), "start": UTC_INPUT, "end_date": UTC_INPUT}
        labels = {
            "start": "Start (UTC)",
            "end_date": "End date (UTC)",
            "at_minute": "At minute",
            "at_hour": "At hour (UTC)",
            "at_weekday": "On weekday",
            "at_day_of_month": "On day of month",
        }


class ChannelForm(forms.ModelForm):
    class Meta:
        model = HarvestChannel
        fields = ["name", "priority", "default_for", "comments"]
        widgets = {"comments": forms.Textarea(attrs={"rows": 2})}

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if self.instance.pk and name != self.instance.name and self.instance.jobs.exists():
            raise ValidationError("this channel has jobs: renaming it would orphan their queue; make a new channel")
        return name

    def clean_default_for(self) -> str:
        kind = self.cleaned_data["default_for"]
        other = HarvestChannel.objects.filter(default_for=kind).exclude(pk=self.instance.pk).first() if kind else None
        if other:
            raise ValidationError(
                f"{other.name} is already the default channel for {kind} harvests: clear it there first"
            )
        return kind


class TrapListForm(forms.ModelForm):
    """The regexes come from the text box or an uploaded file (one regex per line, UTF-8); a file
    replaces the text. Every line must compile; errors name the line."""

    upload = forms.FileField(
        required=False,
        label="Or upload a file",
        help_text="A text file, one regular expression per line; replaces the list above.",
    )

    class Meta:
        model = GlobalCrawlerTrapList
        fields = ["name", "description", "active", "traps", "upload"]
        widgets = {
            "traps": forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
            "description": forms.Textarea(attrs={"rows": 2}),
        }

    def clean(self) -> dict:
        data = super().clean()
        upload = data.get("upload")
        if upload:
            if upload.size > 10 * 1024 * 1024:
                self.add_error("upload", "the file is larger than 10 MB")
                return data
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                self.add_error("upload", f"the file is not UTF-8 text (byte {exc.start})")
                return data
            try:
                data["traps"] = validators.validate_regex_lines(text)
            except ValidationError as exc:
                self.add_error("upload", [f"{upload.name}, {m}" for m in exc.messages])
                return data
            self.instance.traps = data["traps"]
        return data
