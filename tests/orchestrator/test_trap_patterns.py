"""Every place the orchestrator takes a crawler trap refuses what RE2 cannot match in linear time, with one
line that names where (the line of a list, the command) and why: domain traps, definition traps (and
revisit strip regexes), global trap lists typed or uploaded, ``jobs add-trap``, and job generation over a
list that reached the database some other way. The one validator is harvester/patterns.py."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from harvester.contracts import ContractError
from orchestrator.harvest.curation.validators import validate_regex_lines
from orchestrator.harvest.jobs import jobgen
from orchestrator.harvest.models import GlobalCrawlerTrapList, JobControl, JobStatus
from tests.orchestrator import factories
from webui.forms.library import TrapListForm

pytestmark = pytest.mark.django_db

WHY = "crawler traps use RE2, linear-time regular expressions"
LOOKAHEAD = f"lookahead (?=…) is not supported: {WHY}"
BACKREF = f"backreference \\1 is not supported: {WHY}"


def _errors(exc: pytest.ExceptionInfo[ValidationError], field: str) -> list[str]:
    return exc.value.message_dict[field]


def test_the_line_validator() -> None:
    with pytest.raises(ValidationError) as exc:
        validate_regex_lines(".*/ok/.*\n\n.*(?=/cal).*\n.*/(\\w+)/\\1/.*")
    assert exc.value.messages == [f"line 3: {LOOKAHEAD}", f"line 4: {BACKREF}"]
    with pytest.raises(ValidationError) as exc:
        validate_regex_lines("\n".join(["(?=x)"] * 60))
    assert len(exc.value.messages) == 51 and exc.value.messages[-1] == "… and 10 more lines refused"
    # What a backtracking engine needs exponential time for is fine: RE2 is linear on every pattern.
    assert validate_regex_lines("(.|.)*Z\n.*(.*/)*calendar/.*") == "(.|.)*Z\n.*(.*/)*calendar/.*"


def test_domain_and_definition_traps() -> None:
    domain = factories.domain("traps.dk")
    domain.crawler_traps = ".*/ok/.*\n.*(?=/cal).*"
    with pytest.raises(ValidationError) as exc:
        domain.full_clean()
    assert _errors(exc, "crawler_traps") == [f"line 2: {LOOKAHEAD}"]
    definition = factories.selective_definition()
    definition.crawler_traps = ".*/(\\w+)/\\1/.*"
    definition.revisit_settings = {"strip": ["<span>[0-9]+</span>", "(?<=x)y"]}  # the strip list's own check
    with pytest.raises(ValidationError) as exc:
        definition.full_clean()
    assert _errors(exc, "crawler_traps") == [f"line 1: {BACKREF}"]
    assert _errors(exc, "revisit_settings") == [
        "revisit.strip[1]: lookbehind (?<=…) is not supported: revisit strip regexes use RE2, linear-time regular "
        "expressions"
    ]


def test_global_trap_lists_typed_and_uploaded() -> None:
    form = TrapListForm(data={"name": "common", "traps": ".*/ok/.*\n.*(?=/cal).*", "active": "on"})
    assert not form.is_valid() and form.errors["traps"] == [f"line 2: {LOOKAHEAD}"]
    upload = SimpleUploadedFile("traps.txt", b".*/ok/.*\n.*/(\\w+)/\\1/.*\n")
    form = TrapListForm(data={"name": "common", "traps": "", "active": "on"}, files={"upload": upload})
    assert not form.is_valid() and form.errors["upload"] == [f"traps.txt, line 2: {BACKREF}"]
    assert not GlobalCrawlerTrapList.objects.exists()


def test_jobs_add_trap_command() -> None:
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    with pytest.raises(CommandError) as exc:
        call_command("jobs", "add-trap", str(job.pk), ".*(?=/cal).*", stdout=io.StringIO())
    assert str(exc.value) == f"add-trap: {LOOKAHEAD}"
    assert not JobControl.objects.exists()


def test_job_generation_refuses_a_list_that_bypassed_validation() -> None:
    """A list written without clean() (a bulk UPDATE, a restore from an older version): the job is not
    made, and the error names the trap's place in the JobSpec."""
    GlobalCrawlerTrapList.objects.create(name="common", traps=".*/ok/.*")
    GlobalCrawlerTrapList.objects.update(traps=".*/ok/.*\n.*(?=/cal).*")
    definition = factories.selective_definition()
    definition.configurations.set([factories.domain("gen.dk").default_configuration])
    with pytest.raises(ContractError) as exc:
        jobgen.generate_jobs(definition, run=1)
    assert str(exc.value) == f"global_traps[1]: {LOOKAHEAD}"


def test_send_control_is_the_gate_for_every_caller() -> None:
    """dispatch.send_control (behind the web UI, the CLI and any script) refuses before a row is written;
    the Control dataclass itself does not validate, so a bad trap used to be recorded and sent."""
    from orchestrator.harvest.jobs.dispatch import DispatchError, send_control

    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    with pytest.raises(DispatchError) as exc:
        send_control(job, "add_trap", ".*(?<=/cal).*")
    assert str(exc.value) == f"add_trap: lookbehind (?<=…) is not supported: {WHY}"
    assert not JobControl.objects.exists()


def test_job_generation_names_the_domain_of_a_stored_trap_re2_refuses() -> None:
    """A domain trap stored before RE2 (Python's re took backreferences): the error names the domain."""
    from orchestrator.harvest.models import Domain

    config = factories.domain("old.dk").default_configuration
    Domain.objects.filter(name="old.dk").update(crawler_traps=".*/ok/.*\n.*/(\\w+)/\\1/.*")
    definition = factories.selective_definition()
    definition.configurations.set([config])
    with pytest.raises(ContractError) as exc:
        jobgen.generate_jobs(definition, run=1)
    assert str(exc.value) == f"domains[0].traps[1] (domain old.dk): {BACKREF}"
