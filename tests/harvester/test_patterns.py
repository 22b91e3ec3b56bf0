"""User regexes (harvester/patterns.py): RE2 only, one validator, traps matched as a few compiled programs.

The hostile patterns are the issue's: on a 24-segment path a backtracking engine needs exponential time
for them (an 11-URL job took 157 s at 100 % CPU and ignored stop). The tests carry a pytest timeout as a
guard only: the old code never returned, the new one is linear by construction (no timed assertion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import re2
from crawlhelp import fetched, make_spec, run_crawl

from harvester import patterns
from harvester.contracts import ContractError, Control, JobSpec
from harvester.crawljob import CrawlJob
from harvester.patterns import FullMatchSet, PatternError
from harvester.scope import S_BLOCKED_BY_TRAP, Scope, TrapSet

HOSTILE = (r"(.|.)*Z", r".*(.*/)*calendar/.*")
DEEP_PATH = "hostile/deep/" + "x/" * 22  # /hostile/deep/x/…/: 24 segments
DEEP_URL = "http://127.0.0.1:8001/" + DEEP_PATH + "index.html"


@pytest.mark.timeout(60)
def test_hostile_traps_match_a_deep_path_through_re2() -> None:
    traps = TrapSet(HOSTILE)
    assert all(isinstance(p, re2._Regexp) for _, programs in traps._chunks for p in programs)
    assert not traps.matches(DEEP_URL)
    assert traps.matches(DEEP_URL.replace("index.html", "calendar/2026"))
    assert traps.matches(DEEP_URL + "Z")
    scope = Scope(JobSpec.from_dict(make_spec(["http://127.0.0.1:8001/"], global_traps=list(HOSTILE))))
    assert scope.decide(DEEP_URL, "L", "site-a").accepted
    assert scope.decide(DEEP_URL.replace("index.html", "calendar/"), "L", "site-a").status == S_BLOCKED_BY_TRAP


@pytest.mark.timeout(120)
def test_a_crawl_with_hostile_traps_on_a_deep_path_site_finishes(tmp_path: Path, sites: Any) -> None:
    """The issue's 11-URL job: a 24-segment seed, ten hops deeper, the hostile traps as global and domain
    traps; a trap that does match blocks the 10th hop."""
    a, _ = sites
    job_dir = tmp_path / "job"
    spec = make_spec(
        [a.url + DEEP_PATH],
        job_id=331,
        settings={"max_hops": 10},
        global_traps=list(HOSTILE),
        traps=[HOSTILE[1], r".*/deep/(x/){32}"],
    )
    result = run_crawl(job_dir, spec, timeout=100)
    assert result["status"] == "DONE"
    got = fetched(job_dir)
    deep = sorted((u for u in got if "/hostile/deep/" in u), key=len)
    assert [got[u] for u in deep] == ["200"] * 10 + ["-5001"]
    assert len(deep[-1].split("/deep/")[1].split("/")) == 33  # 32 x/ segments: the trap's


def test_what_re2_cannot_express_is_refused_with_why_and_where() -> None:
    cases = {
        r".*(?=/cal).*": "lookahead (?=…) is not supported",
        r".*(?!x)": "negative lookahead (?!…) is not supported",
        r".*(?<=/a)b": "lookbehind (?<=…) is not supported",
        r".*(?<!a)b": "negative lookbehind (?<!…) is not supported",
        r".*/(\w+)/\1/.*": "backreference \\1 is not supported",
        r".*/(?P<d>\w+)/(?P=d)/.*": "backreference (?P=name) is not supported",
        r"(?>a+)b": "atomic group (?>…) is not supported",
        r"a++": "possessive repeat (a++) is not supported",
        r"(?#why).*": "comment (?#…) is not supported",
        r"(?x) .* / calendar": "verbose mode (?x) is not supported",
        r".*\Z": "\\Z is not supported (write \\z or $ for the end of the text)",
        r"((a{100}){100})": "a counted repeat of more than 1,000 (nested repeats multiply) is not supported",
    }
    for pattern, why in cases.items():
        with pytest.raises(PatternError) as exc:
            patterns.check(pattern, "line 12")
        assert str(exc.value) == f"line 12: {why}: crawler traps use RE2, linear-time regular expressions"
        assert "\n" not in str(exc.value)
    with pytest.raises(PatternError, match=r"^search: .*the crawl-log search uses RE2"):
        patterns.check(r"(a)\1", "search", patterns.SEARCH)
    with pytest.raises(PatternError, match=r"^line 3: '\(x' is not a valid regular expression \(missing \)"):
        patterns.check("(x", "line 3")
    with pytest.raises(PatternError, match="at most 1000 characters"):
        patterns.check("a" * 1001, "regex")
    assert patterns.check_lines([(1, ".*ok.*"), (2, "(?=x)"), (3, "(")]) == [
        "line 2: lookahead (?=…) is not supported: crawler traps use RE2, linear-time regular expressions",
        "line 3: '(' is not a valid regular expression (missing ): ()",
    ]


def test_the_harvester_entry_points_refuse_with_the_path() -> None:
    """JobSpec (global and domain traps), Control add_trap, Scope.add_trap: the same validator."""
    spec = make_spec(["http://a.dk/"], global_traps=[".*ok.*", r".*(?=x)"])
    with pytest.raises(ContractError, match=r"^global_traps\[1\]: lookahead \(\?=…\) is not supported: crawler"):
        JobSpec.from_dict(spec)
    spec = make_spec(["http://a.dk/"], traps=[".*", r"(a)\1"])
    with pytest.raises(ContractError, match=r"^domains\[0\]\.traps\[1\]: backreference \\1 is not supported"):
        JobSpec.from_dict(spec)
    with pytest.raises(ContractError, match=r"^argument: lookbehind"):
        Control.from_dict({"job_id": 1, "action": "add_trap", "argument": "(?<=a)b"})
    scope = Scope(JobSpec.from_dict(make_spec(["http://a.dk/"])))
    with pytest.raises(PatternError, match="lookahead"):
        scope.add_trap(".*(?=x)")
    assert scope.live_traps == [] and len(scope.global_traps) == 0


def test_chunks_keep_each_trap_whole() -> None:
    """Each trap is its own alternative: a top-level | stays inside it, flags stay scoped to it, a trap
    cannot close the group it is wrapped in."""
    traps = FullMatchSet([r"http://a\.dk/x|http://a\.dk/y", r"(?i)http://B\.DK/.*", r"http://c\.dk/"])
    assert traps.matches("http://a.dk/y") and traps.matches("http://b.dk/Q")
    assert not traps.matches("http://a.dk/yz") and not traps.matches("HTTP://C.DK/")
    with pytest.raises(PatternError):
        FullMatchSet([r"a)|(.*"])  # would match everything inside a wrapping (?:…)


def test_adding_a_trap_to_many_compiles_and_compares_only_the_new_one() -> None:
    traps = TrapSet(rf".*/section{i}/trap/.*" for i in range(10_000))
    assert traps.compiled == 10_000 and traps.chunks == 10_000 // patterns.CHUNK_PATTERNS
    assert traps.extend([".*/calendar/.*"]) == [".*/calendar/.*"]
    assert traps.compiled == 10_001  # the new trap alone, not the 10,000
    assert traps.extend([".*/calendar/.*", ".*/section5/trap/.*"]) == []  # known: nothing compiled
    assert traps.compiled == 10_001
    for i in range(64):  # one by one: a binary counter of small chunks, O(log n) recompiles each
        traps.extend([f".*/live{i}/.*"])
    assert traps.chunks <= 10_000 // patterns.CHUNK_PATTERNS + 8
    assert traps.compiled - 10_001 <= 64 * 8
    assert all(traps.matches(f"http://e.org/live{i}/x") for i in range(64))
    assert traps.matches("http://e.org/section9999/trap/x") and not traps.matches("http://e.org/section9999/")


class _Counted(str):
    """A trap string that counts how often it is compared for equality."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        _Counted.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_the_checkpoint_is_o_new_traps(tmp_path: Path) -> None:
    """The checkpoint compared each live trap against the JobSpec's tuple of traps: O(n²) each second.
    Now it journals the live traps only when one came, and never scans the spec's traps."""
    spec = JobSpec.from_dict(
        make_spec(["http://127.0.0.1:9/"], global_traps=[_Counted(rf".*/section{i}/.*") for i in range(3000)])
    )
    job = CrawlJob(spec, tmp_path)
    job.add_trap(".*/calendar/.*")
    _Counted.comparisons = 0
    job.checkpoint()
    job.checkpoint()
    assert _Counted.comparisons < 100
    assert job.frontier.kv["live_traps"] == [".*/calendar/.*"]
    job.frontier.close()
    resumed = CrawlJob(spec, tmp_path)
    assert resumed.scope.live_traps == [".*/calendar/.*"]
    assert resumed.scope.blocked_by_trap("http://127.0.0.1:9/calendar/1", "site-a")


def test_one_typed_trap_is_stripped_and_checked_the_same_everywhere() -> None:
    # web UI, API, `jobs add-trap` and dispatch all call patterns.trap: same input, same stored text.
    assert patterns.trap("  .*/calendar/.*\n", "regex").pattern == ".*/calendar/.*"
    with pytest.raises(PatternError, match=r"^add-trap: backreference \\1 is not supported"):
        patterns.trap(r"(a)\1", "add-trap")
