"""The trial crawl: ``netharvest crawl --seeds FILE (--template NAME | --settings JSON) --out DIR``.

The same crawl a scheduled job runs (same child process, same files: WARCs, crawl.log, reports,
metadata WARC, ``jobresult.json``), with no database and no broker, for trying a template on a
site before a harvest definition uses it. Also ``python -m harvester.cli crawl …``.

* ``--seeds FILE``: one URL per line; blank lines and ``#`` comments are ignored. Seeds are
  grouped by registrable domain into one JobSpec domain each, as job generation does.
* ``--template NAME``: without the database, ``default`` (the built-in defaults of
  :mod:`harvester.defaults`) or a name from ``--templates FILE``, a JSON object mapping template
  names to settings objects (e.g. ``{"polite": {"min_delay_ms": 5000}}``).
* ``--settings JSON``: the settings as an inline JSON object or ``@file.json``; unknown keys and bad
  values are errors naming the key. With ``--template`` too, they override the template's values.
* ``--traps FILE``: crawler traps, one regex per line (blank lines and ``#`` comments skipped), checked
  by the one pattern validator (:func:`harvester.patterns.check_lines`: RE2, whole-URI match); they
  become the JobSpec's ``global_traps``, so the crawl blocks them as a job does (crawl.log ``-5001``).
  Every refused line is one error ``FILE:LINE: reason``.
* ``--max-objects N`` / ``--max-bytes N``: the budget of every domain; ``--time-limit S``: the job's.
* ``--out DIR``: the job directory. If it holds the state of an interrupted trial crawl, the
  crawl resumes; if it holds a finished one, that is an error (choose another directory).

Exit status: 0 when the crawl ends DONE, 1 when it fails, 2 for bad arguments or input (each error
line ``netharvest crawl: error: …``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from harvester.contracts import ContractError, CrawlSettings, JobSpec, validate_seed
from harvester.defaults import PROGRESS_INTERVAL_S
from harvester.linereader import preview, read_lines
from harvester.patterns import check_lines

EXIT_USAGE = 2
BUILTIN_TEMPLATES: dict[str, dict[str, Any]] = {"default": {}}


class UsageError(Exception):
    """Bad arguments or input: the message says what and where."""


def list_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """The ``(number, text)`` of a user's list file, blank lines and ``#`` comments skipped, each line
    read in bounded memory (:mod:`harvester.linereader`); errors name the file (and line)."""
    lines: list[tuple[int, str]] = []
    try:
        with path.open("rb") as stream:
            for line in read_lines(stream):
                if line.problem:
                    raise UsageError(f"{path}:{line.number}: {line.problem}")
                if line.text and not line.text.startswith("#"):
                    lines.append((line.number, line.text))
    except FileNotFoundError:
        raise UsageError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read {what} file: {exc.strerror or exc}") from None
    return lines


def read_seeds(path: Path) -> list[str]:
    """Seeds from a file, one per line; errors name the file and line."""
    seeds: list[str] = []
    for number, text in list_lines(path, "seeds"):
        try:
            seeds.append(validate_seed(text, f"{path}:{number}"))
        except ContractError:
            raise UsageError(f"{path}:{number}: not an http(s) URL: {preview(text)}") from None
    if not seeds:
        raise UsageError(f"{path}: no seeds in the file")
    return list(dict.fromkeys(seeds))


def read_traps(path: Path) -> list[str]:
    """Crawler-trap regexes from a file, one per line; every refused line is one ``FILE:LINE: why``
    (all of them, in one :class:`UsageError` of one line each)."""
    lines = list_lines(path, "traps")
    errors = check_lines(lines, where=f"{path}:")
    if errors:
        raise UsageError("\n".join(errors))
    return list(dict.fromkeys(text for _, text in lines))


def _load_json(text: str, what: str) -> Any:
    if text.startswith("@"):
        source = Path(text[1:])
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{what}: cannot read {source}: {exc}") from None
        what = str(source)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what}: not valid JSON: {exc}") from None


def resolve_settings(template: str | None, templates_file: Path | None, settings: str | None) -> dict[str, Any]:
    """The effective settings dict: template values, overridden by ``--settings``; validated."""
    templates = dict(BUILTIN_TEMPLATES)
    if templates_file is not None:
        loaded = _load_json(f"@{templates_file}", "--templates")
        if not isinstance(loaded, dict) or not all(isinstance(v, dict) for v in loaded.values()):
            raise UsageError(f"{templates_file}: expected an object mapping template names to settings objects")
        templates.update(loaded)
    values: dict[str, Any] = {}
    if template is not None:
        if template not in templates:
            known = ", ".join(sorted(templates))
            raise UsageError(
                f"--template {template!r}: unknown template (known: {known}; give more with --templates FILE)"
            )
        values.update(templates[template])
    if settings is not None:
        extra = _load_json(settings, "--settings")
        if not isinstance(extra, dict):
            raise UsageError("--settings: expected a JSON object")
        values.update(extra)
    try:
        CrawlSettings.from_dict(values, "settings")
    except ContractError as exc:
        raise UsageError(str(exc)) from None
    return values


def build_spec(
    seeds: list[str],
    settings: dict[str, Any],
    template: str,
    max_objects: int,
    max_bytes: int,
    time_limit: int,
    traps: list[str] | None = None,
) -> JobSpec:
    """A trial JobSpec (job 0 of harvest 0): one domain per registrable domain of the seeds; ``traps``
    are its global traps (as a harvest's global trap lists are a job's)."""
    from harvester.hosts import registrable_domain

    domains: dict[str, list[str]] = {}
    for seed in seeds:
        domains.setdefault(registrable_domain(seed), []).append(seed)
    data = {
        "version": 1,
        "job_id": 0,
        "harvest_id": 0,
        "harvest_name": "trial crawl",
        "harvest_run": 1,
        "kind": "selective",
        "channel": "trial",
        "template": template,
        "settings": settings,
        "domains": [
            {
                "name": name,
                "configuration": template,
                "seeds": s,
                "max_objects": max_objects,
                "max_bytes": max_bytes,
                "traps": [],
            }
            for name, s in domains.items()
        ],
        "global_traps": list(traps or []),
        "time_limit_s": time_limit,
    }
    try:
        return JobSpec.from_dict(data)
    except ContractError as exc:
        raise UsageError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netharvest crawl", description="Trial crawl: one job, no database, no broker.")
    p.add_argument("--seeds", type=Path, required=True, help="file of seed URLs, one per line")
    p.add_argument("--template", help="template name: 'default' or one from --templates")
    p.add_argument("--templates", type=Path, help="JSON file: {template name: {setting: value}}")
    p.add_argument("--settings", help="settings as a JSON object, or @file.json")
    p.add_argument("--traps", type=Path, help="file of crawler-trap regexes (whole-URI match), one per line")
    p.add_argument("--out", type=Path, required=True, help="job directory for WARCs, logs, reports")
    p.add_argument("--max-objects", type=int, default=-1, help="per-domain object budget (-1: none)")
    p.add_argument("--max-bytes", type=int, default=-1, help="per-domain byte budget (-1: none)")
    p.add_argument("--time-limit", type=int, default=0, help="job time limit in seconds (0: none)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def crawl_main(argv: list[str]) -> int:
    """``netharvest crawl …``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.template is None and args.settings is None:
            raise UsageError("give --template NAME or --settings JSON (or both)")
        for name in ("max_objects", "max_bytes"):
            if getattr(args, name) < -1:
                raise UsageError(f"--{name.replace('_', '-')}: must be -1 (no limit) or more")
        if args.time_limit < 0:
            raise UsageError("--time-limit: must not be negative")
        seeds = read_seeds(args.seeds)
        traps = read_traps(args.traps) if args.traps is not None else []
        settings = resolve_settings(args.template, args.templates, args.settings)
        spec = build_spec(
            seeds, settings, args.template or "custom", args.max_objects, args.max_bytes, args.time_limit, traps
        )
        out = prepare_out(args.out)
    except UsageError as exc:
        for line in str(exc).splitlines():
            print(f"netharvest crawl: error: {line}", file=sys.stderr)
        return EXIT_USAGE
    return run_trial(spec, out, quiet=args.quiet)


def prepare_out(path: Path) -> Path:
    """The job directory, created if needed; a path that is a file, cannot be made or written, or
    holds a finished crawl is a one-line error (it was a FileExistsError traceback for a file)."""
    out = path.resolve()
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: exists and is not a directory (--out names the job directory to create)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot create the job directory: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"{out}: the job directory is not writable")
    if (out / "jobresult.json").exists():
        raise UsageError(f"{out}: already holds a finished crawl; choose another --out")
    return out


def run_trial(spec: JobSpec, out: Path, quiet: bool = False) -> int:
    from harvester.process import JOBSPEC_FILE, PROGRESS_FILE, RESULT_FILE, start_child, write_json_atomic

    resuming = (out / "state" / "frontier.sqlite").exists()

    write_json_atomic(out / JOBSPEC_FILE, spec.to_dict())
    print(
        f"{'resuming' if resuming else 'crawling'} {sum(len(d.seeds) for d in spec.domains)} seed(s) into {out}",
        flush=True,
    )
    child = start_child(out, control=False)
    last = 0.0
    try:
        while child.poll() is None:
            time.sleep(0.5)
            if not quiet and time.monotonic() - last >= PROGRESS_INTERVAL_S:
                last = time.monotonic()
                _print_progress(out / PROGRESS_FILE)
    except KeyboardInterrupt:
        print("stopping (the crawl ends cleanly with what it has)…", flush=True)
        child.send_signal(signal.SIGINT)
        child.wait()
    result_file = out / RESULT_FILE
    if not result_file.exists():
        print(
            f"netharvest crawl: the crawl process ended with status {child.returncode} and no result; "
            f"see {out / 'logs'}; run the same command again to resume",
            file=sys.stderr,
        )
        return 1
    result = json.loads(result_file.read_text(encoding="utf-8"))
    if result["status"] != "DONE":
        print(
            f"netharvest crawl: FAILED ({result.get('error_category')}): {result.get('error_detail')}", file=sys.stderr
        )
        return 1
    for d in result["domains"]:
        print(f"{d['name']}: {d['objects']} objects, {d['bytes']} bytes, {d['stop_reason']}")
    for f in result["files"]:
        print(f"{f['kind']:8} {f['path']} ({f['size']} bytes)")
    print(f"crawl.log: {out / 'logs' / 'crawl.log'}  reports: {out / 'reports'}")
    return 0


def _print_progress(path: Path) -> None:
    try:
        p = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    print(
        f"{p['at']} done {p['uris_done']} queued {p['uris_queued']} failed {p['uris_failed']} "
        f"{p['uri_rate']:.1f} URI/s {p['kb_rate']:.1f} KB/s",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "crawl":
        print(
            "usage: python -m harvester.cli crawl --seeds FILE (--template NAME | --settings JSON) "
            "--out DIR [--traps FILE] [--max-objects N] [--time-limit S]",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return crawl_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
