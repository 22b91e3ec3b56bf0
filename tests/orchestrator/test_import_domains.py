"""`netharvest import-domains`: valid, invalid, duplicate and existing lines; a large file."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from orchestrator.harvest.models import ConfigurationSeedList, Domain, DomainConfiguration, SeedList

# The import writes from worker threads on their own connections, so these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def run(path, *args, refused=0):
    """The command's stdout and stderr; ``refused``: the number of invalid lines it must report by
    failing (exit status 1) after importing the valid ones."""
    out, err = io.StringIO(), io.StringIO()
    if refused:
        with pytest.raises(CommandError, match=f"{refused:,} invalid lines refused") as failed:
            call_command("import_domains", str(path), *args, stdout=out, stderr=err)
        assert failed.value.returncode == 1
    else:
        call_command("import_domains", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_imports_valid_lines_and_reports_invalid_ones_by_line_number(tmp_path):
    source = tmp_path / "domains.txt"
    source.write_bytes(
        "example.fr\n# a comment\n\nwww.example.com\nBücher.de\nexample.fr\nnot a domain\n".encode()
        + b"caf\xe9.fr\n"
        + b"192.0.2.1\n"
    )
    out, err = run(source, refused=3)
    assert sorted(Domain.objects.values_list("name", flat=True)) == ["192.0.2.1", "example.fr", "xn--bcher-kva.de"]
    assert f"{source}:4: 'www.example.com' is a host name, not a registrable domain: the domain is example.com" in err
    assert f"{source}:7: " in err and f"{source}:8: " in err
    assert "3 domains created" in out and "3 invalid lines" in out


def test_existing_domains_are_skipped_and_rerun_changes_nothing(tmp_path):
    source = tmp_path / "d.txt"
    source.write_text("a.dk\nb.dk\n")
    run(source)
    source.write_text("a.dk\nb.dk\nc.dk\n")
    out, _ = run(source)
    assert "1 domains created, 2 already existed" in out
    assert Domain.objects.count() == 3
    assert SeedList.objects.count() == 3 and DomainConfiguration.objects.count() == 3
    assert ConfigurationSeedList.objects.count() == 3


def test_rejected_file_keeps_every_invalid_line(tmp_path):
    source = tmp_path / "d.txt"
    source.write_text("".join(f"bad_{i}.dk\n" for i in range(80)) + "good.dk\n")
    rejected = tmp_path / "rejected.txt"
    out, err = run(source, "--rejected", str(rejected), "--show-errors", "5", refused=80)
    assert len(rejected.read_text().splitlines()) == 80
    assert len([line for line in err.splitlines() if "bad_" in line]) == 5
    assert "75 more invalid lines not shown" in err
    assert Domain.objects.get().name == "good.dk"


def test_dry_run_creates_nothing(tmp_path):
    source = tmp_path / "d.txt"
    source.write_text("a.dk\n")
    out, _ = run(source, "--dry-run")
    assert "would be checked" in out and not Domain.objects.exists()


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run(tmp_path / "nope.txt")


def test_large_file_in_batches(tmp_path):
    source = tmp_path / "big.txt"
    with source.open("w") as f:
        for i in range(30_000):
            f.write(f"site{i:05d}.dk\n")
        f.write("site00001.dk\n")  # a duplicate across batches
    out, _ = run(source, "--batch-size", "7000")
    assert "30,000 domains created, 1 already existed" in out
    assert Domain.objects.count() == 30_000
    assert DomainConfiguration.objects.filter(is_default=True).count() == 30_000
    assert ConfigurationSeedList.objects.count() == 30_000
    sample = Domain.objects.get(name="site12345.dk")
    assert sample.default_configuration.seedlists.get().domain_id == sample.pk
    # Every link points where it should, even where the bulk path skipped the foreign-key triggers.
    with connection.cursor() as cur:
        cur.execute("""
            SELECT count(*) FROM harvest_domainconfiguration_seedlists l
            JOIN harvest_domainconfiguration c ON c.id = l.configuration_id
            JOIN harvest_seedlist s ON s.id = l.seedlist_id
            JOIN harvest_domain d ON d.id = c.domain_id AND d.id = s.domain_id
            JOIN harvest_crawltemplate t ON t.id = c.template_id""")
        assert cur.fetchone()[0] == 30_000


def test_a_huge_line_is_one_short_error_in_bounded_memory(tmp_path):
    """A 50 MB line (once: 2.1 GB of memory for 300 MB, the line echoed whole, exit status 0) is read
    at most 1 KiB at a time: one error naming its line, a short prefix, exit status 1."""
    source = tmp_path / "domains.txt"
    with source.open("wb") as f:
        f.write(b"good.dk\n")
        for _ in range(50):
            f.write(b"x" * (1 << 20))
        f.write(b"\nother.dk\n")
    # In a fresh process: ru_maxrss is a process's all-time peak, which earlier tests may have set.
    code = (
        "import io, resource, sys, django\ndjango.setup()\n"
        "from django.core.management import CommandError, call_command\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "err = io.StringIO()\n"
        "try:\n    call_command('import_domains', sys.argv[1], stdout=io.StringIO(), stderr=err)\n"
        "except CommandError as exc:\n    print('exit', exc.returncode, exc)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
        "print(err.getvalue(), end='')\n"
    )
    s = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    if connection.vendor == "postgresql":
        env["NETHARVEST_DATABASE_URL"] = f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"
    else:
        pytest.skip("the child process needs the test's server database")
    out = subprocess.run(
        [sys.executable, "-c", code, str(source)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.splitlines()
    assert out[0] == f"exit 1 {source}: 1 invalid lines refused (see above); the valid lines were imported"
    assert int(out[1]) < 16 * 1024  # KiB grown: far less than the 50 MiB line
    (error,) = out[2:]
    assert error.startswith(f"{source}:2: line longer than 1,024 bytes (52,428,800 bytes, starting 'xxx")
    assert len(error) < 300
    assert sorted(Domain.objects.values_list("name", flat=True)) == ["good.dk", "other.dk"]
