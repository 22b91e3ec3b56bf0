"""One URI's visits in a continuous job (issue 12), read back from the job's crawl.log.

The adaptive-revisit frontier annotates every visit's crawl.log line as Heritrix's AR frontier does
(shared/seeds/002…, 5: "it adds the current wait time for the URI, how often the document has been
visited, how many versions have been encountered of it and finally how overdue the URI was", written
``wt:45s0ms,3vis,1ver,ov:3ms``), and the change evaluator adds ``unchanged`` when the content did not
change. So the log alone tells a URI's story: when each visit was, what came back, the wait the policy
chose after it, and how many versions it has seen. Nothing here writes; the log is streamed (a
continuous job's log grows for weeks), lines are tested with a substring first and parsed only when
they name the URI.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from harvester.crawllog import LINE_RE
from harvester.reports import parse_duration
from orchestrator.harvest.jobs import jobfiles
from orchestrator.harvest.models import Job

#: A URI's visits shown at most (the latest ones): a URI revisited hourly for a year has 8,760.
MAX_VISITS = 2000


def duration_s(text: str) -> float | None:
    """Seconds of a Heritrix duration (``45s0ms``), None if ``text`` is not one."""
    ms = parse_duration(text)
    return None if ms is None else ms / 1000


@dataclass(frozen=True)
class Visit:
    """One crawl.log line of the URI."""

    at: datetime
    status: int
    size: int | None
    mime: str
    digest: str
    wait_s: float | None
    visits: int | None
    versions: int | None
    overdue_s: float | None
    unchanged: bool
    annotations: str


def parse_annotations(annotations: str) -> dict[str, object]:
    """The AR notes of a crawl.log annotation field: ``wait_s``, ``visits``, ``versions``, ``overdue_s``,
    ``unchanged`` (absent notes are None / False)."""
    out: dict[str, object] = {"wait_s": None, "visits": None, "versions": None, "overdue_s": None, "unchanged": False}
    for note in annotations.split(","):
        if note.startswith("wt:"):
            out["wait_s"] = duration_s(note[3:])
        elif note.startswith("ov:"):
            out["overdue_s"] = duration_s(note[3:])
        elif note.endswith("vis") and note[:-3].isdigit():
            out["visits"] = int(note[:-3])
        elif note.endswith("ver") and note[:-3].isdigit():
            out["versions"] = int(note[:-3])
        elif note == "unchanged":
            out["unchanged"] = True
    return out


def visits(job: Job, uri: str, limit: int = MAX_VISITS) -> tuple[str, list[Visit], int]:
    """``(source, the URI's latest visits oldest first, how many lines named it)`` from the job's crawl.log;
    raises :class:`jobfiles.NotAvailable` when the job has no crawl.log anywhere."""
    found: list[Visit] = []
    total = 0
    needle = f" {uri} "
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (source, stream):
        for line in jobfiles.iter_lines(stream):
            if needle not in line:
                continue
            match = LINE_RE.match(line)
            if match is None or match["uri"] != uri:
                continue
            total += 1
            notes = parse_annotations(match["annotations"])
            size = match["size"].strip()
            found.append(
                Visit(
                    at=datetime.strptime(match["logged"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC),
                    status=int(match["status"]),
                    size=int(size) if size.isdigit() else None,
                    mime=match["mime"],
                    digest=match["digest"],
                    annotations=match["annotations"],
                    **notes,
                )
            )  # type: ignore[arg-type]
            if len(found) > 2 * limit:
                del found[:-limit]
    return str(source), found[-limit:], total
