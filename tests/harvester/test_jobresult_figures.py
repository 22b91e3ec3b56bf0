"""The QA figures a JobResult sends as data (issue 16): the same as the text reports, validated on arrival, and
optional, so a JobResult from a harvester of before the change is still taken."""

from __future__ import annotations

import re

import pytest

from harvester.contracts import ContractError, CrawlFigures, JobResult
from harvester.process import job_figures
from harvester.reports import mimetype_report, responsecode_report
from tests.harvester.test_reports import sample

OLD_RESULT = {"version": 1, "job_id": 4, "status": "DONE", "started": None, "ended": "2026-11-27T10:00:00Z"}


def test_figures_say_what_the_text_reports_say():
    stats = sample()
    figures = job_figures(stats)
    lines = mimetype_report(stats).splitlines()[1:]
    assert sorted(lines) == sorted(f"{n} {size} {mime}" for mime, (n, size) in figures.mime_types.items())
    assert figures.mime_types["text/html"] == [2, 2031]
    codes = responsecode_report(stats).splitlines()[1:]
    assert sorted(codes) == sorted(f"{n} {code}" for code, n in figures.status_codes.items())
    assert figures.status_codes == {"301": 1, "200": 2, "304": 1}  # the negative codes are not fetches


def test_a_result_carries_them_both_ways_and_an_old_result_is_still_taken():
    figures = job_figures(sample())
    result = JobResult.from_dict({**OLD_RESULT, "figures": {"mime_types": figures.mime_types, "status_codes": {}}})
    assert result.figures == CrawlFigures(mime_types=figures.mime_types)
    assert JobResult.from_dict(result.to_dict()) == result
    old = JobResult.from_dict(OLD_RESULT)  # a harvester of the previous version: no figures
    assert old.figures is None and old.to_dict()["figures"] is None


@pytest.mark.parametrize(
    ("figures", "where"),
    [
        ({"mime_types": {"text/html": [1]}}, "figures.mime_types['text/html']"),
        ({"mime_types": {"text/html": [1, -5]}}, "figures.mime_types['text/html']"),
        ({"status_codes": {"-2": 1}}, "figures.status_codes['-2']"),
        ({"status_codes": {"200": True}}, "figures.status_codes['200']"),
        ({"status_codes": []}, "figures.status_codes"),
    ],
)
def test_bad_figures_are_refused_with_their_path(figures, where):
    with pytest.raises(ContractError, match="^" + re.escape(where)):
        JobResult.from_dict({**OLD_RESULT, "figures": figures})
