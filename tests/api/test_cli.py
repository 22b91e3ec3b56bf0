"""``netharvest harvests create``: a definition and its seeds from a file in one step, errors as FILE:LINE,
nothing created on any bad line; the same path as the API's POST /definitions."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from orchestrator.harvest.models import Domain, DomainConfiguration, HarvestDefinition, Schedule

pytestmark = pytest.mark.django_db


def create(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("harvests", "create", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_from_a_seeds_file(tmp_path: Path):
    Schedule.objects.create(name="nightly", unit="day", anytime=False, at_hour=3, at_minute=0)
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# news sites\nhttps://www.example.fr/news/\n\nexample.org\nhttps://www.example.fr/sport/\n")
    out, _ = create(
        "news",
        "--seeds",
        str(seeds),
        "--template",
        "default",
        "--schedule",
        "nightly",
        "--max-objects",
        "5000",
        "--activate",
    )
    assert "harvest" in out and "news (selective) created with 3 seed(s) on 2 domain(s), 2 of them new" in out
    assert "active, next run" in out
    definition = HarvestDefinition.objects.get(name="news")
    assert definition.active and definition.schedule.name == "nightly"
    configs = DomainConfiguration.objects.filter(harvest_definitions=definition)
    assert {c.max_objects for c in configs} == {5000} and configs.count() == 2
    listed = io.StringIO()
    call_command("harvests", "list", stdout=listed)
    assert "news" in listed.getvalue() and "every day at 03:00 UTC" in listed.getvalue()


def test_a_bad_line_is_reported_as_file_line_and_nothing_is_created(tmp_path: Path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("https://www.example.fr/\nexample.org\n\nftp://example.net/files/\nhttp://exa mple.com/\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"2 seed line\(s\) refused: nothing was created"):
        call_command("harvests", "create", "news", "--seeds", str(seeds), stdout=io.StringIO(), stderr=err)
    lines = err.getvalue().splitlines()
    assert lines[0] == f"{seeds}:4: 'ftp://example.net/files/': only http:// and https:// URLs can be seeds"
    assert lines[1].startswith(f"{seeds}:5: 'http://exa mple.com/': ")
    assert not HarvestDefinition.objects.filter(name="news").exists()
    assert not Domain.objects.filter(name__in=["example.fr", "example.org"]).exists()


def test_other_refusals_name_the_option(tmp_path: Path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("https://example.fr/\n")
    with pytest.raises(CommandError, match="--schedule: no schedule named or numbered 'weekly'"):
        create("news", "--seeds", str(seeds), "--schedule", "weekly")
    with pytest.raises(CommandError, match="--template: no crawl template named or numbered 'deep'"):
        create("news", "--seeds", str(seeds), "--template", "deep")
    with pytest.raises(CommandError, match="--max-objects: must be -1"):
        create("news", "--seeds", str(seeds), "--max-objects", "-5")
    with pytest.raises(CommandError, match="has no schedule"):
        create("news", "--seeds", str(seeds), "--activate")
    with pytest.raises(CommandError, match=f"{tmp_path / 'none.txt'}: No such file"):
        create("news", "--seeds", str(tmp_path / "none.txt"))
    (tmp_path / "latin1.txt").write_bytes(b"https://example.fr/\nhttps://caf\xe9.fr/\n")
    with pytest.raises(CommandError, match=r"latin1.txt:2: not UTF-8"):
        create("news", "--seeds", str(tmp_path / "latin1.txt"))
    assert not HarvestDefinition.objects.exists()
    create("news", "--seeds", str(seeds))
    with pytest.raises(CommandError, match="name: Harvest definition with this Name already exists"):
        create("news", "--seeds", str(seeds))


def test_a_snapshot_harvest_and_the_console_script(tmp_path: Path):
    out, _ = create("broad 2027", "--kind", "snapshot", "--max-objects", "10000", "--max-bytes", "1000000000")
    d = HarvestDefinition.objects.get(name="broad 2027")
    assert d.kind == "snapshot" and d.max_objects == 10000 and d.channel.name == "snapshot" and "inactive" in out
    (tmp_path / "seeds.txt").write_text("https://example.fr/\n")
    with pytest.raises(CommandError, match="--seeds: a snapshot harvest takes every domain's default configuration"):
        create("broad 2028", "--kind", "snapshot", "--seeds", str(tmp_path / "seeds.txt"))
    help_text = subprocess.run(
        [sys.executable, "-m", "orchestrator.cli", "harvests", "create", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--seeds FILE" in help_text and "--template NAME" in help_text


def test_a_continuous_harvest_with_its_settings(tmp_path: Path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("https://www.example.fr/news/\n")
    revisit = tmp_path / "revisit.json"
    revisit.write_text(
        '{"min_wait_s": 600, "strip": ["<span class=\\"clock\\">[^<]*</span>"], "replan_interval_s": 30,'
        ' "history_half_life_visits": 12}'
    )
    args = ["--kind", "continuous", "--seeds", str(seeds), "--fetch-budget", "2.5", "--warc-every", "5m"]
    args += ["--max-uris-per-host", "2000", "--robots-validity", "1h", "--dns-ttl", "10m", "--revisit", str(revisit)]
    out, _ = create("news live", *args)
    assert "news live (continuous) created with 1 seed(s) on 1 domain(s)" in out and "inactive" in out
    d = HarvestDefinition.objects.get(name="news live")
    assert (d.fetch_budget_per_s, d.warc_rotate_s, d.max_uris_per_host) == (2.5, 300, 2000)
    assert (d.robots_validity_s, d.dns_ttl_s) == (3600, 600)
    assert d.revisit_settings["min_wait_s"] == 600 and d.revisit_settings["strip"] == [
        '<span class="clock">[^<]*</span>'
    ]
    # Settings the web form does not show are taken too (they were dropped for the defaults, silently).
    assert (d.revisit_settings["replan_interval_s"], d.revisit_settings["history_half_life_visits"]) == (30, 12)
    shown = io.StringIO()
    call_command("harvests", "show", "news live", stdout=shown)
    assert "fetch budget 2.5/s; WARCs closed every 300 s; at most 2,000 URIs per host" in shown.getvalue()
    assert "robots.txt obeyed 3600 s, DNS answers kept 600 s" in shown.getvalue()
    # The defaults, as in the web UI, with an inline JSON object.
    create("news later", "--kind", "continuous", "--revisit", '{"policy": "heritrix"}')
    d = HarvestDefinition.objects.get(name="news later")
    assert (d.warc_rotate_s, d.robots_validity_s, d.dns_ttl_s, d.fetch_budget_per_s) == (900, 86400, 21600, None)
    assert d.revisit_settings["policy"] == "heritrix"
    # Initial waits for some classes only: the others keep their defaults, as any setting left out does.
    create("news soon", "--kind", "continuous", "--revisit", '{"initial_wait_s": {"text": 60}}')
    waits = HarvestDefinition.objects.get(name="news soon").revisit_settings["initial_wait_s"]
    assert waits == {"text": 60, "image": 2 * 86_400, "audio_video": 7 * 86_400, "other": 86_400}


def test_a_continuous_harvests_bad_settings_name_their_option(tmp_path: Path):
    def refused(*args: str) -> str:
        with pytest.raises(CommandError) as caught:
            create("news live", "--kind", "continuous", *args)
        return str(caught.value)

    assert refused("--dns-ttl", "0s") == "--dns-ttl: must be at least 1 second"
    assert refused("--robots-validity", "soon").startswith("--robots-validity: 'soon' is not a duration")
    assert refused("--fetch-budget", "0").startswith("--fetch-budget: Ensure this value is greater than or equal")
    assert refused("--revisit", '{"min_wait_s": "x"}').startswith("--revisit min_wait_s: ")
    assert refused("--revisit", '{"min_wait_s": 7200, "max_wait_s": 3600}').startswith("--revisit min_wait_s: ")
    assert refused("--revisit", '{"no_such": 1}').startswith("--revisit")
    # a key after the setting is named whole: a pinned URI keeps its dots, a strip regex its index
    pinned = '{"pinned": {"http://news.example.org/a.html": 0}}'
    assert refused("--revisit", pinned).startswith("--revisit pinned http://news.example.org/a.html: expected")
    assert refused("--revisit", '{"strip": ["ok", "(unclosed"]}').startswith("--revisit strip 1: ")
    assert refused("--revisit", "{not json").startswith("--revisit: not JSON")
    (tmp_path / "latin1.json").write_bytes(b'{"strip": ["caf\xe9"]}')
    assert refused("--revisit", str(tmp_path / "latin1.json")) == f"--revisit: {tmp_path / 'latin1.json'}: not UTF-8"
    assert refused("--revisit", str(tmp_path / "none.json")).startswith(
        f"--revisit: {tmp_path / 'none.json'}: No such file"
    )
    with pytest.raises(
        CommandError, match=r"--dns-ttl: a selective harvest has no such setting \(only continuous ones\)"
    ):
        create("news", "--dns-ttl", "1h")  # a selective harvest has no such setting
    assert not HarvestDefinition.objects.exists()


def test_add_seeds_and_reject(tmp_path: Path, broker_queues):
    from orchestrator.harvest.models import Job, JobStatus
    from tests.orchestrator import factories

    create("news")
    seeds = tmp_path / "more.txt"
    seeds.write_text("https://example.fr/a\nhttps://example.dk/\n")
    out = io.StringIO()
    call_command("harvests", "add-seeds", "news", "--seeds", str(seeds), stdout=out)
    assert "2 seed(s) on 2 domain(s) added to news (2 new domain(s))" in out.getvalue()
    seeds.write_text("https://example.se/\nhttps://\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"1 seed line\(s\) refused: nothing was added"):
        call_command("harvests", "add-seeds", "news", "--seeds", str(seeds), stdout=io.StringIO(), stderr=err)
    assert err.getvalue().startswith(f"{seeds}:2: 'https://': ")
    assert not Domain.objects.filter(name="example.se").exists()
    failed = factories.job(status=JobStatus.FAILED)
    out = io.StringIO()
    call_command("jobs", "reject", str(failed.pk), stdout=out)
    assert "rejected" in out.getvalue() and Job.objects.get(pk=failed.pk).rejected_by.startswith("cli:")
    with pytest.raises(CommandError, match="already rejected"):
        call_command("jobs", "reject", str(failed.pk))
