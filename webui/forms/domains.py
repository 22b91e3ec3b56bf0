"""Forms for domains, their seed lists and configurations."""

from __future__ import annotations

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from orchestrator.harvest.curation import validators
from orchestrator.harvest.models import CrawlTemplate, Domain, DomainConfiguration, ExtendedField, SeedList

MONO = {"rows": 8, "spellcheck": "false"}


def add_extended_fields(form: forms.Form, owner: str, values: dict) -> list[ExtendedField]:
    """One form field per extended field of ``owner``, named ``ext_<name>``; returns the definitions."""
    fields = list(ExtendedField.objects.filter(owner=owner))
    for ext in fields:
        name = f"ext_{ext.name}"
        if ext.kind == "choice":
            choices = [("", "-")] + [(c, c) for c in validators.regex_lines(ext.choices)]
            form.fields[name] = forms.ChoiceField(label=ext.label, choices=choices, required=False)
        elif ext.kind == "boolean":
            form.fields[name] = forms.ChoiceField(
                label=ext.label, choices=[("", "-"), ("yes", "yes"), ("no", "no")], required=False
            )
        else:
            hint = {"date": "YYYY-MM-DD", "number": "a number"}.get(ext.kind, "")
            form.fields[name] = forms.CharField(label=ext.label, required=False, help_text=hint)
        value = values.get(ext.name, ext.default)
        form.initial[name] = {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value
    return fields


def clean_extended(form: forms.Form, fields: list[ExtendedField]) -> dict:
    """The typed values, each error put on its own field."""
    values = {}
    for ext in fields:
        name = f"ext_{ext.name}"
        try:
            value = ext.parse(form.cleaned_data.get(name))
        except ValidationError as exc:
            form.add_error(name, exc)
            continue
        if value is not None:
            values[ext.name] = value
    return values


class ExtendedFieldsMixin:
    """For ModelForms with ``ext_<name>`` fields: the model's own check of ``extended`` repeats what
    clean_extended already said field by field, so its message is dropped when a field already has one
    and otherwise shown on top of the form (there is no ``extended`` form field to put it on)."""

    def _update_errors(self, errors: ValidationError) -> None:
        error_dict = getattr(errors, "error_dict", None)
        if error_dict and "extended" in error_dict:
            extended = error_dict.pop("extended")
            if not any(name.startswith("ext_") for name in self.errors):
                error_dict.setdefault(NON_FIELD_ERRORS, []).extend(extended)
            if not error_dict:
                return
        super()._update_errors(errors)


class DomainNamesForm(forms.Form):
    names = forms.CharField(
        widget=forms.Textarea(attrs=MONO),
        label="Domain names",
        help_text="One registrable domain per line (example.fr, not www.example.fr). Each gets "
        "a default seed list and configuration. Existing names are left as they are.",
    )

    def clean_names(self) -> list[str]:
        names, errors = [], []
        for number, line in validators.iter_lines(self.cleaned_data["names"]):
            try:
                names.append(validators.normalize_domain_name(line))
            except ValidationError as exc:
                errors.append(f"line {number}: {'; '.join(exc.messages)}")
        if errors:
            raise ValidationError(errors)
        if not names:
            raise ValidationError("give at least one domain name")
        return names


class DomainForm(ExtendedFieldsMixin, forms.ModelForm):
    alias_of = forms.CharField(
        required=False,
        label="Alias of",
        help_text="The name of the domain this one is an alias of; empty = not an alias.",
    )

    class Meta:
        model = Domain
        fields = ["alias_of", "alias_expires", "comments", "crawler_traps"]
        widgets = {"crawler_traps": forms.Textarea(attrs=MONO), "comments": forms.Textarea(attrs={"rows": 3})}
        labels = {"alias_expires": "Alias expires (UTC)"}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.alias_of_id:
            self.initial["alias_of"] = self.instance.alias_of.name
        self.extended_fields = add_extended_fields(self, "domain", self.instance.extended or {})

    def clean_alias_of(self) -> Domain | None:
        name = self.cleaned_data["alias_of"].strip().lower()
        if not name:
            return None
        try:
            return Domain.objects.get(name=name)
        except Domain.DoesNotExist:
            raise ValidationError(f"there is no domain {name!r}") from None

    def clean(self) -> dict:
        data = super().clean()
        self.instance.extended = clean_extended(self, self.extended_fields)
        return data


class _DomainsOwn(forms.ModelForm):
    """A form for a row of one domain (a seed list, a configuration) whose name is unique within the domain:
    the form says so before the database's unique constraint would."""

    #: What the row is called in the message ("seed list", "configuration").
    what = ""

    def __init__(self, *args: object, domain: Domain, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.instance.domain = domain

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        rows = type(self.instance).objects.filter(domain=self.instance.domain, name=name)
        if rows.exclude(pk=self.instance.pk).exists():
            raise ValidationError(f"{self.instance.domain.name} already has a {self.what} called {name!r}")
        return name


class SeedListForm(_DomainsOwn):
    what = "seed list"

    class Meta:
        model = SeedList
        fields = ["name", "seeds", "comments"]
        widgets = {"seeds": forms.Textarea(attrs=MONO), "comments": forms.Textarea(attrs={"rows": 2})}


class ConfigurationForm(_DomainsOwn):
    what = "configuration"

    class Meta:
        model = DomainConfiguration
        fields = ["name", "template", "seedlists", "max_objects", "max_bytes", "is_default", "comments"]
        widgets = {"seedlists": forms.CheckboxSelectMultiple, "comments": forms.Textarea(attrs={"rows": 2})}
        labels = {"max_objects": "Max objects", "max_bytes": "Max bytes", "is_default": "Default configuration"}

    def __init__(self, *args: object, domain: Domain, **kwargs: object) -> None:
        super().__init__(*args, domain=domain, **kwargs)
        current = self.instance.template_id if self.instance.pk else None
        self.fields["template"].queryset = CrawlTemplate.objects.filter(active=True) | CrawlTemplate.objects.filter(
            pk=current
        )
        self.fields["template"].help_text = "Only active templates can be chosen."
        self.fields["seedlists"].queryset = SeedList.objects.filter(domain=domain)
        self.fields["seedlists"].help_text = "The seed lists this configuration crawls from."
        self.fields["seedlists"].required = False  # clean_seedlists says why one is needed
        if self.instance.pk and self.instance.is_default:
            self.fields["is_default"].disabled = True
            self.fields[
                "is_default"
            ].help_text = "This is the default; make another configuration the default to change that."

    def clean_seedlists(self) -> object:
        seedlists = self.cleaned_data["seedlists"]
        if not seedlists:
            raise ValidationError("a configuration needs at least one seed list to crawl from")
        return seedlists

    def save(self, commit: bool = True) -> DomainConfiguration:
        """Becoming the default takes the flag from the old default in the same transaction (one default
        per domain is a database constraint)."""
        if self.cleaned_data.get("is_default") and not (self.instance.pk and self.initial.get("is_default")):
            DomainConfiguration.objects.filter(domain=self.instance.domain, is_default=True).exclude(
                pk=self.instance.pk
            ).update(is_default=False)
        return super().save(commit)
