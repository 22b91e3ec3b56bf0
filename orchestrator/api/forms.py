"""Writes through the web UI's edit forms, so the API validates exactly as the pages do.

Each form wraps the model's ``full_clean`` (the rules live in the models) and adds the few checks that
span rows (a seed-list name already used on the domain, the one default configuration of a domain, an
alias named by its domain name). The API sends a JSON object of the fields it wants to set; the others keep
their current values (a change) or the model's defaults (a new object), as if the page had been submitted
with only those fields edited.
"""

from collections.abc import Mapping
from typing import Any

from django import forms
from django.db import models, transaction

from orchestrator.api.errors import Invalid

EXT = "ext_"


def _current(form: forms.BaseForm) -> dict[str, Any]:
    """What an unchanged submission of ``form`` would send: each field's initial value."""
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        value = form.get_initial_for_field(field, name)
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], models.Model):
            value = [v.pk for v in value]
        elif isinstance(value, models.Model):
            value = value.pk
        if value is not None:
            data[name] = value
    return data


def bound(
    form_class: type[forms.BaseForm], payload: Mapping[str, Any], instance: models.Model | None = None, **kwargs: Any
) -> forms.BaseForm:
    """``form_class`` bound to the current values overlaid with ``payload``; raises :class:`Invalid`
    naming every field that is unknown or refused (``extended`` values at ``extended.<name>``)."""
    if issubclass(form_class, forms.ModelForm):
        kwargs = {**kwargs, "instance": instance}
    elif instance is not None:
        raise TypeError(f"{form_class.__name__} edits no model instance")
    unbound = form_class(**kwargs)
    data = _current(unbound)  # a new object starts from the model's defaults, as the page's empty form does
    unknown = []
    for key, value in payload.items():
        if key == "extended" and isinstance(value, Mapping):
            for name, ext_value in value.items():
                if EXT + name not in unbound.fields:
                    unknown.append((["body", "extended", name], "no such extended field"))
                data[EXT + name] = "" if ext_value is None else ext_value
        elif key in unbound.fields:
            data[key] = value
        else:
            refusal = getattr(unbound, "not_here", None)  # the form may say why (another kind's setting)
            unknown.append((["body", key], (refusal and refusal(key)) or "this field cannot be set here"))
    if unknown:
        raise Invalid(unknown)
    form = form_class(data, **kwargs)
    if not form.is_valid():
        raise Invalid(_path(name, message) for name, errors in form.errors.items() for message in errors)
    return form


def _path(field: str, message: str) -> tuple[list[str | int], str]:
    if field == "__all__":
        return ["body"], message
    if field.startswith(EXT):
        return ["body", "extended", field[len(EXT) :]], message
    return ["body", field], message


def save(
    form_class: type[forms.ModelForm], payload: Mapping[str, Any], instance: models.Model | None = None, **kwargs: Any
) -> Any:
    """Validate as the page does and save in one transaction; returns the saved object."""
    form = bound(form_class, payload, instance, **kwargs)
    with transaction.atomic():
        return form.save()


def reference(
    model: type[models.Model], value: object, what: str, where: str = "body", **filters: object
) -> int | None:
    """The id of the ``model`` row named or numbered ``value`` (None stays None); :class:`Invalid` at
    ``what`` if there is none."""
    if value is None or value == "":
        return None
    rows = model.objects.filter(**filters)
    text = str(value)
    found = rows.filter(name=text).values_list("pk", flat=True).first()
    if found is None and text.isdigit():
        found = rows.filter(pk=int(text)).values_list("pk", flat=True).first()
    if found is None:
        raise Invalid([([where, what], f"no {model._meta.verbose_name} named or numbered {text!r}")])
    return found
