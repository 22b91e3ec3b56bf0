"""Forms for harvest definitions (selective, snapshot and continuous) and for pasting seeds into a selective or
continuous one. The continuous revisit settings are laid out by webui/forms/continuous.py."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from orchestrator.harvest.curation.domains import default_template
from orchestrator.harvest.models import CrawlTemplate, HarvestChannel, HarvestDefinition, Schedule
from webui.forms.continuous import WaitField, add_revisit_fields, clean_revisit
from webui.forms.domains import ExtendedFieldsMixin, add_extended_fields, clean_extended

COMMON = ["name", "channel", "audience", "comments", "crawler_traps"]


class DefinitionForm(ExtendedFieldsMixin, forms.ModelForm):
    """The fields of one kind; ``kind`` is fixed by the caller and never changes after creation.

    The next date is not a model field here: a new one goes through the scheduler's ``set_next``.
    """

    next_date = forms.DateTimeField(
        required=False,
        label="Next run (UTC)",
        widget=forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM (UTC)"}),
    )

    class Meta:
        model = HarvestDefinition
        fields = [
            *COMMON,
            "schedule",
            "page_qa",
            "max_objects",
            "max_bytes",
            "max_job_running_time_s",
            "previous",
            "fetch_budget_per_s",
            "warc_rotate_s",
            "max_uris_per_host",
            "robots_validity_s",
            "dns_ttl_s",
        ]
        widgets = {
            "comments": forms.Textarea(attrs={"rows": 2}),
            "crawler_traps": forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        }
        labels = {
            "max_objects": "Max objects per domain",
            "max_bytes": "Max bytes per domain",
            "max_job_running_time_s": "Max job running time (seconds)",
            "previous": "Continue snapshot",
            "crawler_traps": "Crawler traps",
            "fetch_budget_per_s": "Fetch budget (fetches per second, for the whole job)",
            "max_uris_per_host": "Most URIs followed per host",
            "page_qa": "Page QA after each job",
        }

    KIND_FIELDS = {
        HarvestDefinition.SELECTIVE: {"schedule", "next_date", "page_qa"},
        HarvestDefinition.SNAPSHOT: {"max_objects", "max_bytes", "max_job_running_time_s", "previous"},
        HarvestDefinition.CONTINUOUS: {
            "fetch_budget_per_s",
            "warc_rotate_s",
            "max_uris_per_host",
            "robots_validity_s",
            "dns_ttl_s",
        },
    }

    #: A continuous definition's periods, in seconds, edited as durations: (label, help text).
    DURATIONS = {
        "warc_rotate_s": (
            "Close WARC files every",
            "A continuous job never ends, so it closes its WARC file this often (or when full) and hands it to the "
            "indexer chain: captures are replayable within minutes. e.g. 15m",
        ),
        "robots_validity_s": (
            "Obey robots.txt for",
            "Then the host's robots.txt is fetched again before its next page (Heritrix: 1 day). Scale it with the "
            "waits to crawl a test web in accelerated time. e.g. 1d",
        ),
        "dns_ttl_s": (
            "Keep DNS answers for",
            "A host's address, or its failed lookup, holds this long; a host that could not be resolved is tried "
            "again after it. e.g. 6h",
        ),
    }

    def __init__(self, *args: object, kind: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if kind not in self.KIND_FIELDS:
            raise ValueError(f"the web UI edits selective, snapshot and continuous harvests, not {kind!r}")
        self.instance.kind = kind
        for name in set().union(*self.KIND_FIELDS.values()) - self.KIND_FIELDS[kind]:
            del self.fields[name]
        # The continuous channel and the others stay apart (HarvestDefinition.clean says why).
        channels = HarvestChannel.objects.all()
        self.fields["channel"].queryset = (
            channels.filter(default_for=kind)
            if kind == HarvestDefinition.CONTINUOUS
            else channels.exclude(default_for=HarvestDefinition.CONTINUOUS)
        )
        if not self.instance.pk and self.initial.get("channel") is None:  # a new one (an unsaved instance too)
            default = HarvestChannel.objects.filter(default_for=kind).first()
            if default:
                self.initial["channel"] = default.pk
        if "schedule" in self.fields:
            self.fields["schedule"].queryset = Schedule.objects.all()
            self.fields["schedule"].help_text = "Needed before the harvest can be activated."
            self.fields["next_date"].help_text = (
                "Empty: the schedule decides when it is activated. Set it to "
                "move the next run; the schedule carries on from there."
            )
            self.initial["next_date"] = self.instance.next_date
        if "previous" in self.fields:
            self.fields["previous"].queryset = HarvestDefinition.objects.filter(
                kind=HarvestDefinition.SNAPSHOT
            ).exclude(pk=self.instance.pk)
            self.fields["previous"].help_text = (
                "Harvest only the domains that snapshot did not finish (stopped by "
                "its budget), where it stopped. Empty: all domains."
            )
        if kind == HarvestDefinition.CONTINUOUS:
            self.fields["fetch_budget_per_s"].help_text = (
                "The crawl never fetches faster than this, on top of each host's politeness; the revisit policy "
                "plans its visits within it. Empty: politeness alone limits it."
            )
            self.fields["max_uris_per_host"].help_text = (
                "Every URI of a continuous job is revisited for ever: links of a host beyond this many are not "
                "followed (a site making up links on every visit, a calendar, stops here), and the job page says so."
            )
            for name, (label, help_text) in self.DURATIONS.items():  # typed as people say them: 15m, 1d
                self.fields[name] = WaitField(label=label, help_text=help_text)
                self.initial.setdefault(name, getattr(self.instance, name))
            add_revisit_fields(self, self.instance.revisit_settings)
        self.extended_fields = add_extended_fields(self, "harvest", self.instance.extended or {})

    def not_here(self, name: str) -> str | None:
        """Why ``name`` is refused, when it is a setting of other kinds of harvest (the API and the CLI say so)."""
        kinds = [kind for kind, names in self.KIND_FIELDS.items() if name in names]
        if not kinds:
            return None
        return f"a {self.instance.kind} harvest has no such setting (only {' and '.join(kinds)} ones)"

    def clean(self) -> dict:
        data = super().clean()
        self.instance.extended = clean_extended(self, self.extended_fields)
        if self.instance.kind == HarvestDefinition.CONTINUOUS:
            settings = clean_revisit(self, self.instance.revisit_settings)
            if settings is not None:
                self.instance.revisit_settings = settings
        return data


MB = 1024 * 1024  # 1 MB = 1024² B, as Heritrix and the glossary count


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s" if ms >= 1000 else f"{ms} ms"


def pace(template: CrawlTemplate) -> str:
    """What a template's politeness means for a curator: the pause between two fetches from one host and
    what it makes of a 100-page site. A curator who pasted seeds got the ``default`` template's 3–30 s
    pauses without being told, and waited 3.5 minutes for a site the demo crawls in 10 s."""
    if template.delay_factor == 0 or template.max_delay_ms == 0:
        pause = "no pause between fetches from a host"
        low = 0.0
    else:
        pause = (
            f"{_seconds(template.min_delay_ms)}–{_seconds(template.max_delay_ms)} between fetches from a host "
            f"({template.delay_factor:g}× the last fetch's duration)"
        )
        low = 100 * template.min_delay_ms / 1000 / max(template.host_valence, 1)
    if low >= 60:
        hundred = f"≥ {low / 60:.0f} min per 100 pages of a site"
    elif low > 0:
        hundred = f"≥ {low:.0f} s per 100 pages of a site"
    else:
        hundred = "as fast as the site answers"
    return f"{pause}, {template.max_hops} hops: {hundred}"


class TemplateChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: CrawlTemplate) -> str:
        default = " (the default)" if obj.name == settings.NETHARVEST_DEFAULT_TEMPLATE else ""
        return f"{obj.name}{default} — {pace(obj)}"


def _budget_field(label: str, help_text: str) -> forms.IntegerField:
    """An optional per-domain budget typed by a curator: a positive number, or empty for unlimited (the
    placeholder says so, since an empty box reads as "nothing" otherwise)."""
    return forms.IntegerField(
        required=False,
        min_value=1,
        label=label,
        widget=forms.NumberInput(attrs={"placeholder": "unlimited"}),
        help_text=help_text,
    )


class SeedsForm(forms.Form):
    """Seeds, and how their domains are harvested: the crawl template and a budget per domain are chosen
    here, with the default named and explained, rather than given silently."""

    seeds = forms.CharField(
        widget=forms.Textarea(
            attrs={"rows": 8, "spellcheck": "false", "placeholder": "https://www.example.fr/news/\nexample.org"}
        ),
        label="Seed URLs",
        help_text="One URL per line; a bare host name means http://host/. Each URL's domain "
        "is created if needed and gets a seed list and configuration named after "
        "this harvest. If any line is wrong, nothing is added.",
    )
    template = TemplateChoice(
        queryset=CrawlTemplate.objects.none(),
        label="Crawl template",
        required=False,
        empty_label=None,
        help_text="How the domains of these seeds are crawled: scope, hops, and above all the pause between "
        "fetches (politeness). The default is Heritrix's: polite to any site, slow on a small one. "
        "A domain already in this harvest keeps its template and budget.",
    )
    max_objects = _budget_field(
        "Max objects per domain",
        "The crawl of a domain stops after this many URLs (stop reason CONFIG_OBJECT_LIMIT). Empty: "
        "unlimited, which a site with an endless calendar never finishes.",
    )
    max_megabytes = _budget_field(
        "Max megabytes per domain",
        "Stops the domain's crawl after this much downloaded (1 MB = 1024 KB; CONFIG_SIZE_LIMIT). Empty: unlimited.",
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["template"].queryset = CrawlTemplate.objects.filter(active=True).order_by("name")
        default = CrawlTemplate.objects.filter(name=settings.NETHARVEST_DEFAULT_TEMPLATE).first()
        if default is not None:
            self.fields["template"].initial = default.pk

    def chosen_template(self) -> CrawlTemplate:
        """The chosen template; a POST without one (a script) gets the default, as the form shows it."""
        return self.cleaned_data.get("template") or default_template()

    def budget(self) -> tuple[int, int]:
        """(max objects, max bytes) of the new configurations, -1 for unlimited."""
        objects = self.cleaned_data.get("max_objects")
        megabytes = self.cleaned_data.get("max_megabytes")
        return (objects or -1, megabytes * MB if megabytes else -1)


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
