"""The continuous part of a harvest definition's form (issue 12): the revisit policy's settings a curator
chooses, as fields of their own, gathered into the definition's ``revisit_settings`` dict.

The settings are the policy's (:class:`harvester.revisit.policy.RevisitSettings`); this form only lays
out the ones that matter to a curator (seeds 000/002: the initial wait per content type, the minimum and
maximum wait, the changed and unchanged factors, the strip regexes, scheduling directives that pin a URI
to a fixed interval, the mid-fetch filter) and keeps the others as they are stored. Validation is the
policy's own ``RevisitSettings.from_dict``, its error path mapped back to the field that holds the
value; the two multi-line fields are checked line by line first, so an error names its line as in a
pasted file (strip regexes through harvester.patterns, RE2).

Waits are typed as a person says them (``45m``, ``12h``, ``2d``, ``1w``, ``1h30m``; a bare number is
seconds) and stored in seconds.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from harvester import patterns
from harvester.contracts import ContractError
from harvester.revisit.policy import CLASSES, RevisitSettings
from orchestrator.harvest.curation import validators

_WAIT_PART = re.compile(r"(\d+)\s*(w|d|h|m|s)", re.IGNORECASE)
_UNIT_S = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
WAIT_HELP = "e.g. 45m, 12h, 2d, 1w (a bare number is seconds)"
POLICY_CHOICES = [
    (
        "adaptive",
        "adaptive (netharvest): learns each page's change rate and spends the fetch budget where it "
        "captures most versions",
    ),
    ("heritrix", "Heritrix adaptive revisiting: wait × unchanged factor, ÷ changed factor, within min and max"),
    ("fixed", "fixed interval: every page every N, whatever it does"),
]
CLASS_LABELS = {
    "text": "text (HTML, CSS, JavaScript…)",
    "image": "images",
    "audio_video": "audio and video",
    "other": "everything else",
}


def parse_wait(text: str) -> int:
    """Seconds of ``45m``, ``12h``, ``1h30m``, ``2d``, ``1w`` or a bare number of seconds; ValueError saying how
    to write one."""
    value = text.strip().replace(" ", "")
    if value.isdigit():
        return int(value)
    parts = _WAIT_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts).lower() != value.lower():
        raise ValueError(f"{value!r} is not a duration: write {WAIT_HELP}")
    return sum(int(n) * _UNIT_S[u.lower()] for n, u in parts)


def format_wait(seconds: int | float | None) -> str:
    """The shortest text :func:`parse_wait` reads back as ``seconds`` (``12h``, ``1h30m``, ``2d``)."""
    if seconds is None or seconds == "":
        return ""
    left, out = int(seconds), []
    for unit in ("w", "d", "h", "m", "s"):
        if left >= _UNIT_S[unit]:
            count, left = divmod(left, _UNIT_S[unit])
            out.append(f"{count}{unit}")
    return "".join(out) or "0s"


class WaitField(forms.CharField):
    """A duration typed as a person says it, cleaned to whole seconds (at least 1)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", WAIT_HELP)
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 10}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        return format_wait(value) if isinstance(value, int | float) and not isinstance(value, bool) else value

    def to_python(self, value: Any) -> int | None:
        text = super().to_python(value)
        if not text:
            return None
        try:
            seconds = parse_wait(text)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        if seconds < 1:
            raise ValidationError("must be at least 1 second")
        return seconds


def parse_pinned(text: str) -> dict[str, int]:
    """``URL interval`` per line (``https://www.example.fr/ 1h``): each error names its line."""
    pinned: dict[str, int] = {}
    errors = []
    for number, line in validators.iter_lines(text):
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError("write the URL, a space and its interval (e.g. https://www.example.fr/ 1h)")
            pinned[validators.normalize_seed(parts[0])] = parse_wait(parts[1])
        except ValueError as exc:
            errors.append(f"line {number}: {validators.preview(line)}: {exc}")
    if errors:
        raise ValidationError(errors[: validators.MAX_REPORTED_ERRORS])
    return pinned


#: Form field → the RevisitSettings key it edits (the four initial waits are one key, a dict).
SIMPLE = (
    "policy",
    "fixed_interval_s",
    "min_wait_s",
    "max_wait_s",
    "unchanged_factor",
    "changed_factor",
    "mid_fetch_filter",
)


def _lines_field(label: str, help_text: str) -> forms.CharField:
    """An optional list typed one entry a line (regexes, URLs): a small box, without the spell checker's red
    lines under every pattern."""
    return forms.CharField(
        required=False,
        label=label,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text=help_text,
    )


def add_revisit_fields(form: forms.Form, stored: dict[str, Any]) -> None:
    """The curator's revisit fields on ``form``, with the stored settings (the policy's defaults filled in)."""
    try:
        current = RevisitSettings.from_dict(stored or {}).to_dict()
    except ContractError:  # settings stored before a policy change: show the defaults, keep nothing bad
        current = RevisitSettings().to_dict()
    f = form.fields
    f["policy"] = forms.ChoiceField(choices=POLICY_CHOICES, widget=forms.RadioSelect, label="Revisit policy")
    f["fixed_interval_s"] = WaitField(label="Fixed interval (fixed policy)")
    for name in CLASSES:
        f[f"initial_wait_{name}"] = WaitField(
            label=f"Initial wait: {CLASS_LABELS.get(name, name)}",
            help_text="until the second visit of a new URI of this type",
        )
    f["min_wait_s"] = WaitField(label="Minimum wait", help_text=f"never revisit sooner; {WAIT_HELP}")
    f["max_wait_s"] = WaitField(label="Maximum wait", help_text=f"never wait longer; {WAIT_HELP}")
    f["unchanged_factor"] = forms.FloatField(
        min_value=1.0,
        label="Unchanged factor",
        help_text="the wait is multiplied by this after a visit that found no change (at least 1)",
    )
    f["changed_factor"] = forms.FloatField(
        min_value=1.0,
        label="Changed factor",
        help_text="the wait is divided by this after a visit that found a change (at least 1)",
    )
    f["strip"] = _lines_field(
        "Strip regexes",
        "One RE2 regular expression per line; what matches is removed before the content is compared "
        "with the previous visit, so clocks, ad slots or 'most read' boxes are not taken for a change.",
    )
    f["pinned"] = _lines_field(
        "Pinned URIs",
        "One per line: a URL, a space, its interval (https://www.example.fr/ 1h). These are visited "
        "exactly that often, whatever the policy learns.",
    )
    f["mid_fetch_filter"] = forms.BooleanField(
        required=False,
        label="Stop the download when ETag / Last-Modified say unchanged (mid-fetch filter)",
        help_text="Saves bandwidth; a server that keeps its validators across a real change makes the crawl "
        "miss that version (the job page counts these validator misses).",
    )
    for name in SIMPLE:
        form.initial.setdefault(name, current[name])
    for name in CLASSES:
        form.initial.setdefault(f"initial_wait_{name}", current["initial_wait_s"].get(name))
    form.initial.setdefault("strip", "\n".join(current["strip"]))
    form.initial.setdefault("pinned", "\n".join(f"{uri} {format_wait(s)}" for uri, s in current["pinned"].items()))


def revisit_form_data(settings: Any, path: str = "revisit_settings") -> dict[str, Any]:
    """The form's revisit fields for a RevisitSettings dict (the API's ``revisit_settings``; the policy's
    defaults fill what it leaves out). Raises ContractError naming ``path`` and the bad key."""
    current = RevisitSettings.from_dict(settings if isinstance(settings, dict) else settings or {}, path).to_dict()
    data: dict[str, Any] = {name: current[name] for name in SIMPLE}
    for name in ("fixed_interval_s", "min_wait_s", "max_wait_s"):
        data[name] = format_wait(current[name])
    for name in CLASSES:
        data[f"initial_wait_{name}"] = format_wait(current["initial_wait_s"].get(name))
    data["strip"] = "\n".join(current["strip"])
    data["pinned"] = "\n".join(f"{uri} {format_wait(s)}" for uri, s in current["pinned"].items())
    return data


def clean_revisit(form: forms.Form, stored: dict[str, Any]) -> dict[str, Any] | None:
    """The new ``revisit_settings`` (settings the form does not show are kept as stored), or None with the
    errors put on their fields."""
    data = form.cleaned_data
    try:  # stored settings the policy no longer takes are dropped, not kept (the form showed the defaults)
        settings = RevisitSettings.from_dict(stored or {}).to_dict()
    except ContractError:
        settings = {}
    for name in SIMPLE:
        if data.get(name) is not None:
            settings[name] = data[name]
    waits = {name: data.get(f"initial_wait_{name}") for name in CLASSES}
    settings["initial_wait_s"] = {k: v for k, v in waits.items() if v is not None}
    try:
        settings["strip"] = validators.regex_lines(
            validators.validate_regex_lines(data.get("strip") or "", patterns.STRIP)
        )
    except ValidationError as exc:
        form.add_error("strip", exc)
    try:
        settings["pinned"] = parse_pinned(data.get("pinned") or "")
    except ValidationError as exc:
        form.add_error("pinned", exc)
    if form.errors:
        return None
    try:
        return RevisitSettings.from_dict(settings).to_dict()
    except ContractError as exc:
        form.add_error(_field_of(str(exc), form), _in_words(str(exc).split(": ", 1)[-1], form))
        return None


def _in_words(problem: str, form: forms.Form) -> str:
    """The policy's problem as the form says it: its fields by their labels, its seconds as the form writes waits
    ("must not exceed max_wait_s (86400 s)" reads "must not exceed Maximum wait (1d)")."""
    for name, field in form.fields.items():
        if field.label:
            problem = re.sub(rf"\b{re.escape(name)}\b", str(field.label), problem)
    return re.sub(r"\((\d+) s\)", lambda m: f"({format_wait(int(m.group(1)))})", problem)


def _field_of(message: str, form: forms.Form) -> str | None:
    """The form field a ``revisit.<key>…: problem`` error is about (None: the form as a whole)."""
    path = message.split(": ", 1)[0].removeprefix("revisit.")
    key = re.split(r"[.\[]", path, maxsplit=1)[0]
    if key == "initial_wait_s":
        name = f"initial_wait_{path.split('.')[1]}" if "." in path else ""
        return name if name in form.fields else None
    return key if key in form.fields else None
