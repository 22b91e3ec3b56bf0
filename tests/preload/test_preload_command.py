"""`netharvest preload`: every step against a loopback DNS server and HTTP server, resume, statistics."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import Domain, DomainConfiguration, SeedList
from orchestrator.preload import load as loader
from orchestrator.preload import pipeline

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def run(tmp_path, dns_server, http_server=None, *sources, extra=()):
    out, err = io.StringIO(), io.StringIO()
    args = [f"--source={s}" for s in sources] + [
        "--workdir",
        str(tmp_path / "work"),
        "--nameserver",
        f"127.0.0.1:{dns_server.port}",
        "--dns-timeout",
        "0.5",
        "--dns-retries",
        "1",
    ]
    args += ["--http-port", str(http_server.server_address[1])] if http_server else ["--skip-redirects"]
    call_command("preload", *args, *extra, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def write(path, *lines):
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


@pytest.fixture
def world(tmp_path):
    """Two sources and two domains already in the database (one alive, one gone)."""
    create_domains(["old.fr", "gone.fr"])
    afnic = write(
        tmp_path / "afnic.txt",
        "# registry list",
        "a.fr",
        "b.fr",
        "dead.fr",
        "old.fr",
        "moved.fr",
        "",
        "www.b.fr",
        "wwwonly.fr",
    )
    library = write(tmp_path / "library.txt", "http://a.fr/page", "https://www.c.fr/x", "servfail.fr")
    return [f"afnic={afnic}", f"library={library}"]


def test_full_preload_dedup_dns_redirects_load_and_statistics(tmp_path, world, dns_server, http_server):
    out, err = run(tmp_path, dns_server, http_server, *world)
    stats = json.loads((tmp_path / "work" / "stats.json").read_text())
    by_source = {s["name"]: s for s in stats["sources"]}

    # 1. ingest: per-source counts, domains only that source named, domains new to the database
    assert by_source["afnic"] | {"path": ""} == {
        "name": "afnic",
        "path": "",
        "lines": 9,
        "invalid": 0,
        "urls": 0,
        "domains": 6,
        "only_here": 4,
        "new": 5,
    }
    assert (
        by_source["library"]["domains"],
        by_source["library"]["urls"],
        by_source["library"]["only_here"],
        by_source["library"]["new"],
    ) == (3, 2, 2, 3)
    assert (by_source["database"]["domains"], by_source["database"]["only_here"]) == (2, 1)
    assert by_source["redirect"]["domains"] == 1
    # 2. DNS: wwwonly.fr and c.fr answer only on www. and are live; servfail.fr is an error, kept
    dns = stats["dns"]
    assert (dns["ok"], dns["failed"], dns["error"], dns["failed_new"], dns["failed_existing"]) == (6, 2, 1, 1, 1)
    # 3. redirects: moved.fr → www.target.com is a new domain; same-domain redirects are not
    assert stats["redirects"]["new_domains"] == 1
    assert {"moved.fr", "www.moved.fr", "a.fr", "www.a.fr", "b.fr", "www.wwwonly.fr"} <= set(http_server.hosts)
    assert "wwwonly.fr" not in http_server.hosts  # it has no address of its own: only www. is probed
    # 4. load
    names = set(Domain.objects.values_list("name", flat=True))
    assert names == {"old.fr", "gone.fr", "a.fr", "b.fr", "moved.fr", "wwwonly.fr", "c.fr", "servfail.fr", "target.com"}
    assert stats["load"]["created"] == 7 and stats["load"]["not_created_dns_failed"] == 1
    gone = DomainConfiguration.objects.get(domain__name="gone.fr", is_default=True)
    assert gone.max_objects == 0 and "DNS lookup failed; max_objects was -1" in gone.comments
    assert DomainConfiguration.objects.get(domain__name="old.fr", is_default=True).max_objects == -1
    preload_seeds = {sl.domain.name: sl.seeds for sl in SeedList.objects.filter(name=loader.PRELOAD_SEEDLIST)}
    assert preload_seeds == {
        "a.fr": "http://a.fr/page",
        "c.fr": "https://www.c.fr/x",
        "target.com": "http://www.target.com/welcome",
    }
    target_config = DomainConfiguration.objects.get(domain__name="target.com", is_default=True)
    assert sorted(target_config.seedlists.values_list("name", flat=True)) == ["defaultseeds", "preload"]
    # the statistics are printed and saved as text too
    assert "afnic" in out and "1 existing domains excluded" in out
    assert (tmp_path / "work" / "stats.txt").read_text() == out


def test_a_domain_alive_again_gets_its_budget_back(tmp_path, dns_server):
    create_domains(["n01.dk", "n02.dk"])
    DomainConfiguration.objects.filter(domain__name="n02.dk").update(max_objects=0, comments="excluded by hand")
    DomainConfiguration.objects.filter(domain__name="n01.dk").update(
        max_objects=0, comments="preload 2025 2025-01-01: DNS lookup failed; max_objects was 5000"
    )
    source = write(tmp_path / "s.txt", "n01.dk", "n02.dk")
    out, _ = run(tmp_path, dns_server, None, f"s={source}")
    n01 = DomainConfiguration.objects.get(domain__name="n01.dk")
    assert n01.max_objects == 5000 and n01.comments.endswith("DNS answers again; max_objects restored to 5000")
    assert DomainConfiguration.objects.get(domain__name="n02.dk").max_objects == 0  # an engineer's choice stays
    assert "1 excluded earlier and live again" in out


def test_rerun_after_finish_skips_every_step_and_changes_nothing(tmp_path, world, dns_server):
    run(tmp_path, dns_server, None, *world)
    queries = sum(dns_server.queries.values())
    count = Domain.objects.count()
    _, err = run(tmp_path, dns_server, None, *world)
    for step in pipeline.STEPS:
        assert f"{step}: finished in an earlier run" in err
    assert sum(dns_server.queries.values()) == queries and Domain.objects.count() == count


def test_interrupted_dns_step_resumes_where_it_stopped(tmp_path, dns_server, monkeypatch):
    names = [f"n{i:02d}.dk" for i in range(40)] + [f"x{i:02d}.dk" for i in range(20)]  # 20 with no DNS
    source = write(tmp_path / "s.txt", *names)
    _, err = run(tmp_path, dns_server, None, f"s={source}", extra=["--stop-after", "ingest"])
    assert "stopping after ingest" in err and not Domain.objects.exists()

    ticks = {"n": 0}

    def interrupt(self, done, extra="", force=False):
        ticks["n"] += 1
        if self.step == "dns" and ticks["n"] == 25:
            raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.ProgressLine, "tick", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, dns_server, None, f"s={source}")
    logged = (tmp_path / "work" / "dns.partial").read_text().splitlines()
    assert len(logged) == 25 and not Domain.objects.exists()
    monkeypatch.undo()

    _, err = run(tmp_path, dns_server, None, f"s={source}")
    assert "ingest: finished in an earlier run" in err
    assert "dns: resuming, 25 domains were checked" in err
    # what was logged is not asked again (only lookups in flight at the interruption are)
    assert all(dns_server.queries[line.split()[0]] == 1 for line in logged), dns_server.queries
    assert all(dns_server.queries[name] >= 1 for name in names)
    assert Domain.objects.count() == 40
    stats = json.loads((tmp_path / "work" / "stats.json").read_text())
    assert (stats["dns"]["ok"], stats["dns"]["failed"]) == (40, 20)


def test_interrupted_redirect_step_resumes_and_progress_is_shown(tmp_path, world, dns_server, http_server, monkeypatch):
    ticks = {"n": 0}
    real_tick = pipeline.ProgressLine.tick

    def interrupt(self, done, extra="", force=False):
        if self.step == "redirects":
            ticks["n"] += 1
            if ticks["n"] == 3:
                raise KeyboardInterrupt
        real_tick(self, done, extra, force)

    monkeypatch.setattr(pipeline.ProgressLine, "tick", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, dns_server, http_server, *world)
    probed = {line.split("\t")[0] for line in (tmp_path / "work" / "redirects.partial").read_text().splitlines()}
    assert len(probed) == 3
    monkeypatch.undo()
    hosts_before = len(http_server.hosts)
    _, err = run(tmp_path, dns_server, http_server, *world, extra=["--verbosity", "2"])
    assert "redirects: resuming, 3 domains were probed before the interruption" in err
    assert "dns: finished in an earlier run" in err
    assert re.search(r"redirects: \d/6 \(\d+\.\d %\), [\d,]+/s", err)  # progress lines with -v 2 (1,234/s when fast)
    # the three probed before are not probed again: 6 live domains, 3 left
    again = http_server.hosts[hosts_before:]
    assert not probed & {host.removeprefix("www.") for host in again}
    stats = json.loads((tmp_path / "work" / "stats.json").read_text())
    assert stats["redirects"]["new_domains"] == 1 and Domain.objects.filter(name="target.com").exists()


def test_interrupted_load_resumes_with_committed_batches_kept(tmp_path, dns_server, monkeypatch):
    source = write(tmp_path / "s.txt", *[f"n{i:02d}.dk" for i in range(40)])
    calls = {"n": 0}
    real = loader.write_batch

    def fail_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "write_batch", fail_third)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, dns_server, None, f"s={source}", extra=["--batch-size", "10", "--parallel", "1"])
    assert Domain.objects.count() == 20
    monkeypatch.undo()
    _, err = run(tmp_path, dns_server, None, f"s={source}", extra=["--batch-size", "10"])
    assert "load: resuming, 2 batches were committed" in err
    assert Domain.objects.count() == 40
    assert json.loads((tmp_path / "work" / "load.json").read_text())["created"] == 40


def test_parallel_load_writes_every_batch(tmp_path, dns_server):
    source = write(tmp_path / "s.txt", *[f"n{i:02d}.dk" for i in range(40)], *[f"x{i:02d}.dk" for i in range(5)])
    run(tmp_path, dns_server, None, f"s={source}", extra=["--batch-size", "7", "--parallel", "3"])
    load = json.loads((tmp_path / "work" / "load.json").read_text())
    assert (load["created"], load["not_created_dns_failed"], load["batches"]) == (40, 5, 7)
    assert Domain.objects.count() == 40 and DomainConfiguration.objects.count() == 40


def test_invalid_lines_stop_the_preload_before_anything_is_written(tmp_path, dns_server):
    source = write(tmp_path / "bad.txt", "good.fr", "not a domain", "ftp://files.fr/", "bad_label.fr", "http://x.fr/")
    with pytest.raises(CommandError, match="3 invalid source line"):
        run(tmp_path, dns_server, None, f"bad={source}")
    rejected = (tmp_path / "work" / "rejected.txt").read_text()
    assert f"{source}:2: 'not a domain'" in rejected
    assert f"{source}:3: 'ftp://files.fr/': only http:// and https:// URLs" in rejected
    assert f"{source}:4: " in rejected
    assert not Domain.objects.exists() and not (tmp_path / "work" / "ingest.json").exists()
    out, _ = run(tmp_path, dns_server, None, f"bad={source}", extra=["--skip-invalid", "--stop-after", "ingest"])
    assert json.loads((tmp_path / "work" / "ingest.json").read_text())["unique_domains"] == 2


def test_a_huge_or_undecodable_line_is_a_short_line_error(tmp_path, dns_server):
    """Source lines are read at most 16 KiB at a time: a 20 MB line is one invalid line with a short
    prefix (it was held whole and echoed whole)."""
    source = tmp_path / "huge.txt"
    source.write_bytes(b"good.fr\n" + b"y" * (20 << 20) + b"\ncaf\xe9.fr\nother.fr\n")
    with pytest.raises(CommandError, match="2 invalid source line"):
        run(tmp_path, dns_server, None, f"huge={source}")
    rejected = (tmp_path / "work" / "rejected.txt").read_text().splitlines()
    assert rejected[0].startswith(f"{source}:2: line longer than 16,384 bytes (20,971,520 bytes, starting 'yyy")
    assert rejected[1] == f"{source}:3: not UTF-8 (byte 4 of the line)"
    assert len(rejected) == 2 and len(rejected[0]) < 300


@pytest.mark.parametrize(
    "args, message",
    [
        (["--source", "afnic"], "expected NAME=FILE"),
        (["--source", "afnic=/nonexistent.txt"], "no such file"),
        (["--source", "database=/etc/hostname"], "reserved"),
        (["--source", "a=/etc/hostname", "--source", "a=/etc/hostname"], "given twice"),
        (["--source", "a=/etc/hostname", "--nameserver", "dns.example"], "--nameserver"),
    ],
)
def test_bad_arguments_are_refused_with_the_reason(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("preload", *args, stdout=io.StringIO(), stderr=io.StringIO())


def test_other_sources_in_the_same_workdir_are_refused(tmp_path, dns_server):
    one = write(tmp_path / "one.txt", "n01.dk")
    two = write(tmp_path / "two.txt", "n02.dk")
    run(tmp_path, dns_server, None, f"one={one}", extra=["--stop-after", "ingest"])
    with pytest.raises(CommandError, match="holds a preload of other sources"):
        run(tmp_path, dns_server, None, f"two={two}")
    run(tmp_path, dns_server, None, f"two={two}", extra=["--restart"])
    assert list(Domain.objects.values_list("name", flat=True)) == ["n02.dk"]
