"""The contract additions of issue 12 and the adaptive-revisit frontier on its own (no fetch): JobSpec's
continuous section, the ``seeds`` control, Progress.continuous; the ARFrontier's order by time of next
processing, valence, the global budget, retries, and its journal surviving a reopen as after kill -9."""

from __future__ import annotations

import json
from pathlib import Path

import crawlhelp
import pytest
from crawlhelp import make_spec

from harvester.arfrontier import ARFrontier
from harvester.contracts import ContractError, Control, JobSpec, Progress
from harvester.defaults import CONTINUOUS_MAX_URIS_PER_HOST, DNS_TTL_S, ROBOTS_VALIDITY_S
from harvester.frontier import Politeness
from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit
from harvester.urimeta import UriMeta


def continuous_spec(**section: object) -> dict:
    return crawlhelp.continuous_spec(["http://a.example/"], **section)


def test_jobspec_continuous_section_required_refused_and_validated() -> None:
    spec = JobSpec.from_dict(continuous_spec(budget_per_s=2))
    assert spec.continuous is not None and spec.continuous.warc_rotate_s == 900
    assert (spec.continuous.robots_validity_s, spec.continuous.dns_ttl_s) == (ROBOTS_VALIDITY_S, DNS_TTL_S)
    assert spec.continuous.max_uris_per_host == CONTINUOUS_MAX_URIS_PER_HOST
    given = JobSpec.from_dict(continuous_spec(robots_validity_s=30, dns_ttl_s=5, max_uris_per_host=7)).continuous
    assert given is not None and (given.robots_validity_s, given.dns_ttl_s, given.max_uris_per_host) == (30, 5, 7)
    assert spec.continuous.revisit["policy"] == "heritrix" and spec.continuous.budget_per_s == 2.0
    assert JobSpec.from_dict(spec.to_dict()) == spec  # round trip through JSON
    bad = continuous_spec()
    del bad["continuous"]
    with pytest.raises(ContractError, match="^continuous: a continuous job needs"):
        JobSpec.from_dict(bad)
    selective = make_spec(["http://a.example/"])
    selective["continuous"] = {}
    with pytest.raises(ContractError, match="only a continuous job"):
        JobSpec.from_dict(selective)
    for section, message in (
        ({"budget_per_s": 0}, "continuous.budget_per_s: must be positive"),
        ({"warc_rotate_s": 0}, "continuous.warc_rotate_s: must be at least 1"),
        ({"robots_validity_s": 0}, "continuous.robots_validity_s: must be at least 1"),
        ({"dns_ttl_s": 0}, "continuous.dns_ttl_s: must be at least 1"),
        ({"max_uris_per_host": 0}, "continuous.max_uris_per_host: must be at least 1"),
        ({"pinned": {"ftp://x/": 5}}, "not an http"),
        ({"pinned": {"http://a.example/": -1}}, "positive number of seconds"),
        ({"revisit": {"min_wait_s": "x"}}, "continuous.revisit.min_wait_s"),
        ({"surprise": 1}, "unknown key"),
    ):
        with pytest.raises(ContractError, match=message):
            JobSpec.from_dict(continuous_spec(**section))


def test_seeds_control_and_progress_continuous() -> None:
    ok = Control.from_dict({"job_id": 1, "action": "seeds", "argument": json.dumps({"add": ["http://b.example/"]})})
    assert ok.action == "seeds"
    with pytest.raises(ContractError, match=r"argument.add\[0\]: not an http"):
        Control.from_dict({"job_id": 1, "action": "seeds", "argument": json.dumps({"add": ["b.example"]})})
    with pytest.raises(ContractError, match="argument: not JSON"):
        Control.from_dict({"job_id": 1, "action": "seeds", "argument": "{"})
    p = Progress.from_dict({"job_id": 1, "at": "2026-11-24T00:00:00Z", "continuous": {"visits": 3}})
    assert p.continuous == {"visits": 3} and Progress.from_dict(p.to_dict()) == p
    assert Progress.from_dict({"job_id": 1, "at": "2026-11-24T00:00:00Z"}).continuous is None


def frontier(
    path: Path | None, budget: float | None = None, valence: int = 1, now: float = 0.0, delay_ms: int = 0
) -> ARFrontier:
    policy = RevisitPolicy(
        RevisitSettings.heritrix(initial_wait_s={"text": 10, "other": 10}, min_wait_s=1, max_wait_s=100), budget
    )
    return ARFrontier(
        path,
        Politeness(0, delay_ms, delay_ms, valence),
        lambda url: url.split("/")[2],
        policy=policy,
        budget_per_s=budget,
        clock=lambda: now,
    )


def visit(f: ARFrontier, entry, now: float, digest: str = "sha1:A") -> float:  # type: ignore[no-untyped-def]
    at = f.policy.visited(entry.url, Visit(200, "text/html", 10, 0.0, None, None, digest), now)
    f.planned(entry, at)
    f.finished(entry, now, 0.0)
    return at


def test_uris_come_back_by_time_of_next_processing_never_done(tmp_path: Path) -> None:
    f = frontier(None, now=1000.0)
    for url in ("http://h1/a", "http://h1/b", "http://h2/c"):
        f.add(url, url, UriMeta(path="", domain="d"))
    t = 1000.0
    first = [f.next_ready(t) for _ in range(3)]
    assert [e.url for e in first if e] == ["http://h1/a", "http://h2/c"]  # valence 1: one per host at once
    assert f.ar_queue_states(t) == {"ready": 0, "snoozed": 0, "busy": 2, "empty": 0}
    assert visit(f, first[0], t) == t + 10  # the text initial wait
    assert f.next_ready(t).url == "http://h1/b"  # the host's other URI, due now
    assert f.next_ready(t + 5) is None
    assert f.ar_queue_states(t + 5)["busy"] == 2
    assert f.has_pending() and len(f.entries) == 3


def test_a_uri_that_leaves_the_frontier_leaves_the_policy(tmp_path: Path) -> None:
    """A URI skipped (robots, a trap, a quota) is never visited again: the policy must not plan it either,
    or its replans count visits the frontier will never make."""
    f = frontier(None, now=1000.0)
    for url in ("http://h1/a", "http://h2/b"):
        f.add(url, url, UriMeta(path="", domain="d"))
    e = f.next_ready(1000.0)
    f.skip(e, 1000.0)
    assert set(f.policy.uris) == {"http://h1/a", "http://h2/b"} - {e.url}
    assert set(f.by_url) == set(f.policy.uris)


def test_the_budget_spaces_fetches_and_a_retry_snoozes_its_queue() -> None:
    f = frontier(None, budget=2.0, now=50.0)
    for i in range(6):
        url = f"http://h{i}/"
        f.add(url, url, UriMeta(path="", domain="d"))
    t = 50.0
    waiting = f.next_ready(t)
    assert waiting is not None
    f.schedule(waiting, t + 5)  # put back unfetched (its host's robots.txt is due first): no slot taken
    assert f.next_ready(t) is not None
    f.fetching(t)
    assert f.next_ready(t + 0.4) is None  # 2/s: the next fetch not before t + 0.5
    assert f.next_wake() == pytest.approx(t + 0.5)
    e = f.next_ready(t + 0.5)
    assert e is not None
    f.fetching(t + 0.5)
    f.schedule(e, t + 30)  # a retry: back in its queue, the queue snoozed
    assert f.next_ready(t + 1.0).queue != e.queue
    assert f.entries[e.id] is e and f.next_at[e.id] == t  # its time of next processing is unchanged


def test_state_survives_a_reopen(tmp_path: Path) -> None:
    db = tmp_path / "frontier.sqlite"
    f = frontier(db, now=100.0)
    f.add("http://h/a", "http://h/a", UriMeta(path="", domain="d"))
    e = f.next_ready(100.0)
    at = visit(f, e, 100.0)
    f.capture[e.id] = ["http://h/a", "2026-11-24T00:00:00Z", "<urn:uuid:1>", "sha1:A"]
    f.checkpoint()
    f.db.close()  # as after kill -9: nothing more written
    g = frontier(db, now=200.0)
    assert g.resumed and g.next_at[e.id] == at
    assert g.policy.state_of("http://h/a")["visits"] == 1 and g.capture[e.id][2] == "<urn:uuid:1>"
    assert g.next_ready(at - 1) is None and g.next_ready(at).url == "http://h/a"
    assert g.add("http://h/a", "http://h/a", UriMeta(path="")) is None  # still seen


def test_a_restart_goes_on_with_the_last_plan_unless_the_settings_changed(tmp_path: Path) -> None:
    """The adaptive policy's plan (its multiplier, priors and next replan time) is journalled after each replan:
    a restarted crawl goes on with it instead of replanning every URI before its first fetch (5.9 s at 100,000
    URIs, 40 s at 1,000,000). A plan made for other settings or another budget is not used: the policy replans
    at its first chance, as it did before."""
    db = tmp_path / "frontier.sqlite"
    settings = RevisitSettings(initial_wait_s={"text": 10, "other": 10}, min_wait_s=1, max_wait_s=100)

    def adaptive(budget: float, s: RevisitSettings = settings) -> ARFrontier:
        policy = RevisitPolicy(s, budget)
        return ARFrontier(
            db,
            Politeness(0, 0, 0, 1),
            lambda u: u.split("/")[2],
            policy=policy,
            budget_per_s=budget,
            clock=lambda: 0.0,
        )

    f = adaptive(2.0)
    for i in range(6):
        f.add(f"http://h{i % 2}/{i}", f"http://h{i % 2}/{i}", UriMeta(path="", domain="d"))
    t, visited = 0.0, 0
    while visited < 6 and t < 30:
        t += 0.5
        entry = f.next_ready(t)
        if entry is not None:
            visit(f, entry, t, digest=f"sha1:{visited}")
            visited += 1
    assert visited == 6
    for uri, at in f.policy.replan(40.0).items():
        f.reschedule(uri, at)
    mu, replan_at, rate = f.policy._strategy.mu, f.policy.next_replan_at, f.policy.planned_rate
    assert mu is not None and 40.0 < replan_at < float("inf") and rate
    f.checkpoint()
    f.db.close()  # as after kill -9
    g = adaptive(2.0)
    assert (g.policy._strategy.mu, g.policy.next_replan_at) == (mu, replan_at)  # no replan before fetching
    assert g.policy.planned_rate == rate and "ar_plan" not in g.kv  # read once, not kept in memory
    g.db.close()
    for changed in (adaptive(3.0), adaptive(2.0, settings.__class__(**{**settings.__dict__, "freshness_weight": 1}))):
        assert changed.policy.next_replan_at == float("-inf")  # replans at once, for the new budget or settings
        changed.db.close()


def test_take_over_leaves_the_files_a_job_already_handed_over(tmp_path: Path) -> None:
    """A continuous job's next job (or a resubmission) takes over its URI states, but not the WARCs it
    handed to the orchestrator while running (the archive has them where they are)."""
    from harvester.takeover import take_over

    old, new = tmp_path / "1", tmp_path / "2"
    f = frontier(old / "state" / "frontier.sqlite", now=10.0)
    f.add("http://h/a", "http://h/a", UriMeta(path="", domain="d"))
    f.checkpoint()
    f.db.close()
    (old / "warcs").mkdir()
    for name in ("1-7-a-00000-h.warc.gz", "1-7-b-00001-h.warc.gz", "1-metadata-1.warc.gz"):
        (old / "warcs" / name).write_bytes(b"x")
    (old / "files-closed.jsonl").write_text(json.dumps({"name": "1-7-a-00000-h.warc.gz"}) + "\n")
    spec = JobSpec.from_dict(continuous_spec())
    assert take_over(old, new, spec)
    assert sorted(p.name for p in (new / "warcs").iterdir()) == ["1-7-b-00001-h.warc.gz"]
    assert (old / "warcs" / "1-7-a-00000-h.warc.gz").exists()
    assert frontier(new / "state" / "frontier.sqlite", now=20.0).entry_of("http://h/a") is not None


def test_a_result_written_but_never_delivered_hands_nothing_over(tmp_path: Path) -> None:
    """The harvester wrote DONE in jobresult.json, then was killed before delivering it: the orchestrator
    reaped the job FAILED and its resubmission must take over every WARC and the crawl.log (found by an
    operator's kill -9 run: a spool that says DONE had made the new job drop the old one's captures). Only
    the orchestrator's ``continues_done`` says the old job's files are archived."""
    from harvester.takeover import take_over

    def old_job(root: Path) -> Path:
        old = root / "1"
        f = frontier(old / "state" / "frontier.sqlite", now=10.0)
        f.add("http://h/a", "http://h/a", UriMeta(path="", domain="d"))
        f.checkpoint()
        f.db.close()
        (old / "warcs").mkdir()
        (old / "logs").mkdir()
        (old / "logs" / "crawl.log").write_text("a line\n")
        (old / "warcs" / "1-7-a-00000-h.warc.gz").write_bytes(b"x")
        result = {"status": "DONE", "files": [{"name": "1-7-a-00000-h.warc.gz"}]}
        (old / "jobresult.json").write_text(json.dumps(result))
        return old

    reaped = old_job(tmp_path / "reaped")
    assert take_over(reaped, tmp_path / "reaped" / "2", JobSpec.from_dict({**continuous_spec(), "continues_job": 1}))
    assert [p.name for p in (tmp_path / "reaped" / "2" / "warcs").iterdir()] == ["1-7-a-00000-h.warc.gz"]
    assert (tmp_path / "reaped" / "2" / "logs" / "crawl.log").read_text() == "a line\n"

    done = old_job(tmp_path / "done")
    spec = JobSpec.from_dict({**continuous_spec(), "continues_job": 1, "continues_done": True})
    assert take_over(done, tmp_path / "done" / "2", spec)
    assert not list((tmp_path / "done" / "2" / "warcs").iterdir())  # archived where the old job delivered it
    assert not (tmp_path / "done" / "2" / "logs" / "crawl.log").exists()


def test_a_replans_moves_are_journalled_a_few_at_each_checkpoint_and_then_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replan moves many URIs at once (all of them, here): journalling them in one checkpoint held the crawl
    for 43 s at 1,000,000 URIs. They are written ``MOVED_PER_CHECKPOINT`` at a time, a URI visited meanwhile with
    its visit, and the plan once they all are. A kill -9 before that leaves each row as it was (its time and state
    from before the replan or after it, never half), and the restarted crawl replans."""
    import sqlite3

    import harvester.arfrontier as arfrontier

    monkeypatch.setattr(arfrontier, "MOVED_PER_CHECKPOINT", 4)
    db = tmp_path / "frontier.sqlite"
    settings = RevisitSettings(initial_wait_s=dict.fromkeys(("text", "other"), 40), min_wait_s=1, max_wait_s=400)

    def adaptive() -> ARFrontier:
        policy = RevisitPolicy(settings, 1.0)
        return ARFrontier(db, Politeness(0, 0, 0, 1), lambda u: u.split("/")[2], policy=policy, budget_per_s=1.0)

    def journal() -> dict[str, tuple[float, int]]:
        con = sqlite3.connect(db)
        try:
            rows = con.execute("SELECT u.url, a.next_at, a.policy FROM uris u JOIN ar a ON a.id = u.id")
            return {url: (at, json.loads(state)["wait_ms"]) for url, at, state in rows}
        finally:
            con.close()

    def planned() -> bool:
        con = sqlite3.connect(db)
        try:
            row = con.execute("SELECT v FROM kv WHERE k = 'ar_plan'").fetchone()
            return row is not None and json.loads(row[0]).get("mu") is not None
        finally:
            con.close()

    f = adaptive()
    uris = [f"http://h{i % 3}/{i}" for i in range(10)]
    for uri in uris:
        f.add(uri, uri, UriMeta(path="", domain="d"))
    t = 0.0
    for i, uri in enumerate(uris):  # each visited once, its next visit 40 s on: the plan moves every one
        t = 1.0 + i
        entry = f.entry_of(uri)
        f.out.add(entry.id)
        visit(f, entry, t, digest=f"sha1:{i}")
    f.checkpoint()
    before = journal()
    moved = f.policy.replan(t + 1)
    assert len(moved) == 10
    for uri, at in moved.items():
        f.reschedule(uri, at)
    seen = uris[0]  # visited after the replan, before its move was journalled
    entry = f.entry_of(seen)
    f.out.add(entry.id)
    visit(f, entry, t + 2, digest="sha1:again")
    f.checkpoint()
    after = journal()
    written = {uri for uri in uris if after[uri] != before[uri]}
    assert seen in written and len(written) == 1 + 4 and not planned()
    f.db.close()  # as after kill -9
    g = adaptive()
    assert g.policy.next_replan_at == float("-inf")  # no plan journalled: it replans at once
    assert {entry.url for entry in g.entries.values()} == set(uris)
    g.db.close()
    f = adaptive()
    again = f.policy.replan(t + 3)  # the moves not journalled before the kill, at least
    assert len(again) > 4
    for uri, at in again.items():
        f.reschedule(uri, at)
    checkpoints = 0
    while not planned():
        f.checkpoint()
        checkpoints += 1
    assert checkpoints == -(-len(again) // 4)  # four at a time, the plan with the last of them
    assert all(journal()[uri][0] == f.next_at[f.by_url[uri]] for uri in uris)
    # A checkpoint that fails (a full disk) keeps the moves it did not write for the next one (review).
    for uri, at in f.policy.replan(t + 3 + settings.replan_interval_s).items():
        f.reschedule(uri, at)
    pending = set(f._moved)
    assert pending
    f.db.execute("CREATE TRIGGER full BEFORE INSERT ON ar BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    with pytest.raises(sqlite3.IntegrityError, match="disk is full"):
        f.checkpoint()
    assert f._moved == pending
    f.db.execute("DROP TRIGGER full")
    while f._moved:
        f.checkpoint()
    assert all(journal()[uri][0] == f.next_at[f.by_url[uri]] for uri in uris)
    f.db.close()


def test_seeds_added_and_removed_change_frontier_and_scope_and_survive_a_reopen(tmp_path: Path) -> None:
    """A running continuous job's ``seeds`` control, in-process (no fetch): an added seed on another host
    joins the frontier and the scope (its links are taken); removing it takes out it and the pages only it
    held in scope; a reopened job (as after kill -9) keeps both changes."""
    from harvester.continuous import ContinuousCrawlJob

    spec = JobSpec.from_dict({**continuous_spec(), "settings": {**make_spec([])["settings"], "scope": "host"}})
    job = ContinuousCrawlJob(spec, tmp_path)
    job.change_seeds(["http://b.example/"], [])
    assert job.ar.entry_of("http://b.example/") is not None
    job.discover("http://b.example/page", "L", UriMeta(path="", domain="site-a"), "http://b.example/")
    job.discover("http://a.example/page", "L", UriMeta(path="", domain="site-a"), "http://a.example/")
    assert job.ar.entry_of("http://b.example/page") is not None
    job.change_seeds([], ["http://b.example/"])
    assert job.ar.entry_of("http://b.example/") is None and job.ar.entry_of("http://b.example/page") is None
    assert job.ar.entry_of("http://a.example/page") is not None
    job.checkpoint()
    job.frontier.close()
    again = ContinuousCrawlJob(spec, tmp_path)
    assert again.resumed and again.scope.domain_of("http://b.example/x") is None
    assert again.ar.entry_of("http://b.example/page") is None and again.ar.entry_of("http://a.example/page")
    again.change_seeds(["http://b.example/"], [])  # added back: in again, due now
    assert again.ar.entry_of("http://b.example/") is not None and again.scope.domain_of("http://b.example/x")


def test_a_removed_seed_fetched_at_that_moment_does_not_come_back(tmp_path: Path) -> None:
    """Review of issue 12: a seed removed while its fetch was in flight came back into the policy when the
    fetch was judged (or failed). Its visit is ignored: the URI is gone from frontier and policy."""
    from datetime import UTC, datetime

    from scrapy.http import HtmlResponse, Request

    from harvester.continuous import ContinuousCrawlJob
    from harvester.fetch import RawCapture

    spec = JobSpec.from_dict({**continuous_spec(), "settings": {**make_spec([])["settings"], "scope": "host"}})
    job = ContinuousCrawlJob(spec, tmp_path)
    for url in ("http://b.example/", "http://c.example/"):
        job.change_seeds([url], [])
    b, c = job.ar.entry_of("http://b.example/"), job.ar.entry_of("http://c.example/")
    job.ar.out.update((b.id, c.id))  # both being fetched now
    job.change_seeds([], ["http://b.example/", "http://c.example/"])
    assert job.ar.entry_of(b.url) is b  # in flight: it leaves when its fetch comes back
    request = Request(b.url, meta={"nh_entry": b})
    response = HtmlResponse(b.url, status=200, body=b"<html>b</html>", request=request)
    capture = RawCapture(url=b.url, request_bytes=b"", started=datetime.now(UTC), status=200, body_length=14)
    assert job.judge(request, response, capture) == (None, [])
    job._unjudged(c, -2)  # a failed fetch of the other one
    assert "http://b.example/" not in job.policy.uris and "http://c.example/" not in job.policy.uris
    assert job.counts["visits"] == 0 and job.counts["errors"] == 0


def test_a_seed_removed_and_added_again_while_its_fetch_is_out_stays(tmp_path: Path) -> None:
    f = frontier(None, now=1000.0)
    f.add("http://h1/a", "http://h1/a", UriMeta(path="", domain="d"))
    e = f.next_ready(1000.0)
    assert f.remove(e.url)  # its fetch is out: dropped when it comes back
    f.policy.remove(e.url)
    assert f.readd(e.url, e.nh) is e  # added again before it came back
    assert visit(f, e, 1000.0) == 1010.0  # its visit is recorded, it comes back after the initial wait
    assert f.entry_of(e.url) is e and e.url in f.policy.uris


def test_a_seed_removed_while_no_job_heard_it_leaves_at_the_next_jobs_take_over(tmp_path: Path) -> None:
    """Issue 12's gap: a seed removed from the definition while its job could not be told (the control
    recorded, the job stopped before it was sent) stayed in the next job's frontier, taken over with the URI
    states. After a DONE job the new JobSpec (the definition now) is the truth: the seed and the pages only
    it held leave; the seeds and pages it still has keep their states. A resubmission of a failed job (its
    old JobSpec) keeps the frontier as it was."""
    from harvester.continuous import ContinuousCrawlJob
    from harvester.takeover import take_over

    host_scope = {**make_spec([])["settings"], "scope": "host"}
    spec = {**continuous_spec(), "settings": host_scope}
    spec["domains"][0]["seeds"] = ["http://a.example/", "http://b.example/"]
    old = ContinuousCrawlJob(JobSpec.from_dict(spec), tmp_path / "1")
    old.discover("http://b.example/page", "L", UriMeta(path="", domain="site-a"), "http://b.example/")
    old.discover("http://a.example/page", "L", UriMeta(path="", domain="site-a"), "http://a.example/")
    old.checkpoint()
    old.frontier.close()

    resubmitted = JobSpec.from_dict({**spec, "job_id": 2, "continues_job": 1})
    assert take_over(tmp_path / "1", tmp_path / "2", resubmitted)
    kept = ContinuousCrawlJob(resubmitted, tmp_path / "2")
    assert kept.ar.entry_of("http://b.example/page") is not None
    kept.frontier.close()

    fresh = {**spec, "job_id": 3, "continues_job": 1, "continues_done": True}
    fresh["domains"] = [{**spec["domains"][0], "seeds": ["http://a.example/"]}]
    assert take_over(tmp_path / "1", tmp_path / "3", JobSpec.from_dict(fresh))
    new = ContinuousCrawlJob(JobSpec.from_dict(fresh), tmp_path / "3")
    assert new.resumed
    assert new.ar.entry_of("http://b.example/") is None and new.ar.entry_of("http://b.example/page") is None
    assert new.ar.entry_of("http://a.example/") is not None and new.ar.entry_of("http://a.example/page")
    assert new.scope.domain_of("http://b.example/x") is None
    new.checkpoint()
    new.frontier.close()
    again = ContinuousCrawlJob(JobSpec.from_dict(fresh), tmp_path / "3")  # a restart: nothing more to forget
    assert again.ar.entry_of("http://a.example/page") is not None and not again.frontier.kv.get("seeds_from_spec")


def test_due_next_counts_a_sleeping_hosts_uris_from_when_it_wakes() -> None:
    """A host whose lookup failed sleeps until it may be tried again: its URIs are not "due next" before that."""
    f = frontier(None, now=100.0)
    for url in ("http://down/a", "http://up/b"):
        f.add(url, url, UriMeta(path="", domain="d"))
    f.snooze("down", 5000.0)
    assert [(e.url, at) for e, at in f.due_next()] == [("http://up/b", 100.0), ("http://down/a", 5000.0)]


def test_due_next_is_the_soonest_waiting_uris_without_a_scan_of_every_uri() -> None:
    """The heartbeat's "due next" (every 5 s, in the reactor) walks the queues' heaps instead of every URI: the
    same URIs as a scan (issued, removed, rescheduled and one-shot ones left out, a sleeping host's counted from
    its wake, in its queue's order), at a cost that does not grow with the URIs (a scan cost 0.8 s at 1,000,000)."""
    import random

    rng = random.Random(7)
    f = frontier(None, now=0.0)
    for i in range(3000):
        host = f"h{i % 7}"
        f.add(f"http://{host}/{i}", f"http://{host}/{i}", UriMeta(path="", domain="d"))
    for url, id_ in list(f.by_url.items()):
        f.reschedule(url, rng.uniform(0, 1000))  # a replan: stale heap items left behind
        if id_ % 5 == 0:
            f.reschedule(url, rng.uniform(0, 1000))
    for _ in range(40):
        f.next_ready(2000.0)  # issued: not waiting
    f.remove("http://h3/3")
    f.snooze("h2", 600.0)

    def scan() -> list[tuple[str, float]]:
        rows = []
        for id_, at in f.next_at.items():
            if id_ not in f.out and id_ not in f.one_shot:
                due = max(at, f.arq[f.entries[id_].queue].wake)
                rows.append((due, at, id_))
        return [(f.entries[id_].url, due) for due, _, id_ in sorted(rows)[:20]]

    assert [(e.url, at) for e, at in f.due_next()] == scan()
    # One host of 20,000 URIs: the walk looks at a few dozen of them (a scan asked for every one).
    big = frontier(None, now=0.0)
    for i in range(20_000):
        big.add(f"http://big/{i}", f"http://big/{i}", UriMeta(path="", domain="d"))

    class Counted(dict):
        asked = 0

        def get(self, key, default=None):  # type: ignore[no-untyped-def]
            Counted.asked += 1
            return super().get(key, default)

        def items(self):  # type: ignore[no-untyped-def]
            Counted.asked += len(self)
            return super().items()

    big.next_at = Counted(big.next_at)
    assert len(big.due_next()) == 20
    assert Counted.asked < 200


def test_a_restart_keeps_the_politeness_wait_and_the_budgets_pace(tmp_path: Path) -> None:
    """kill -9 just after a fetch, restart at once: neither the host's politeness wait nor the fetch budget's
    pace starts afresh (the policy's times survive too: test_state_survives_a_reopen)."""
    db = tmp_path / "frontier.sqlite"
    f = frontier(db, budget=0.01, now=100.0, delay_ms=20_000)
    for url in ("http://h1/a", "http://h1/b", "http://h2/c"):
        f.add(url, url, UriMeta(path="", domain="d"))
    e = f.next_ready(100.0)
    f.fetching(100.0)  # 0.01/s: the next fetch not before 200
    f.planned(e, 5000.0)
    f.finished(e, 100.0, 0.1)  # its host waits 20 s
    f.checkpoint()
    f.db.close()  # as after kill -9: nothing more written

    g = frontier(db, budget=0.01, now=101.0, delay_ms=20_000)
    # A fetch may have started after the last checkpoint: the next waits 1 / budget from the restart (201,
    # after the journalled 200), and every host its politeness delay from the restart (121).
    assert g.next_ready(101.0) is None and g.next_wake() == pytest.approx(201.0)
    nxt = g.next_ready(201.0)
    assert nxt is not None and nxt.url == "http://h1/b"
    g.fetching(201.0)
    assert g.next_ready(300.0) is None and g.next_ready(301.0).queue == "h2"


def test_host_states_are_kept_when_queues_are_per_domain(tmp_path: Path) -> None:
    """With politeness per registrable domain the queue is ``example.com`` while the policy's validator and
    date trust is per host (``www.example.com``): the journal keeps the host's state, not the queue's."""
    db = tmp_path / "frontier.sqlite"

    def make() -> ARFrontier:
        return ARFrontier(
            db,
            Politeness(0, 0, 0, 1),
            lambda url: "example.com",
            policy=RevisitPolicy(RevisitSettings(), None),
            clock=lambda: 1_790_000_000.0,
        )

    f = make()
    f.add("http://www.example.com/a", "http://www.example.com/a", UriMeta(path="", domain="example.com"))
    e = f.next_ready(1_790_000_000.0)
    seen = Visit(200, "text/html", 10, 0.0, '"v1"', "Sun, 06 Sep 2026 08:49:37 GMT", "sha1:A")
    f.planned(e, f.policy.visited(e.url, seen, 1_790_000_000.0))
    f.finished(e, 1_790_000_000.0, 0.0)
    host = f.policy.host_state_of("www.example.com")
    assert host is not None and host["first_dates"]
    f.checkpoint()
    f.db.close()
    restored = make().policy.host_state_of("www.example.com")
    assert restored is not None and {k: v for k, v in restored.items() if v} == {k: v for k, v in host.items() if v}


def test_host_states_of_an_older_journal_move_to_their_table(tmp_path: Path) -> None:
    """Host states were one kv value of every host, rewritten whole at each checkpoint; a journal of then
    opens with them in the table, a row per host."""
    import sqlite3

    db = tmp_path / "frontier.sqlite"
    f = frontier(db, now=100.0)
    f.add("http://h/a", "http://h/a", UriMeta(path="", domain="d"))
    f.checkpoint()
    f.db.execute("DROP TABLE ar_hosts")
    old = {"liar.example": {"verified": 3, "lies": 1, "dates_ok": 0, "dates_bad": 1}}
    f.db.execute("INSERT INTO kv (k, v) VALUES ('ar_hosts', ?)", (json.dumps(old),))
    f.db.close()
    g = ARFrontier(
        db,
        Politeness(0, 0, 0, 1),
        lambda url: url.split("/")[2],
        policy=RevisitPolicy(RevisitSettings()),
        clock=lambda: 200.0,
    )
    assert g.policy.host_state_of("liar.example") == old["liar.example"]
    g.db.close()
    rows = sqlite3.connect(db).execute("SELECT host FROM ar_hosts").fetchall()
    assert rows == [("liar.example",)]
    assert sqlite3.connect(db).execute("SELECT v FROM kv WHERE k = 'ar_hosts'").fetchall() == []


def test_a_hosts_crawl_delay_is_kept_however_long_ago_it_was_fetched(tmp_path: Path) -> None:
    """A continuous crawl's host is fetched again days later: the pruning of old wakes keeps the row of a host
    that still has URIs, so a restart three days on still waits its Crawl-delay (90 s), not the minimum (2 s)."""
    db = tmp_path / "frontier.sqlite"
    clock = [100.0]

    def make() -> ARFrontier:
        policy = RevisitPolicy(RevisitSettings.heritrix(min_wait_s=1, max_wait_s=30 * 86_400), None)
        return ARFrontier(
            db,
            Politeness(0, 2000, 2000, 1, crawl_delay_up_to_s=300),
            lambda u: u.split("/")[2],
            policy=policy,
            clock=lambda: clock[0],
        )

    f = make()
    f.add("http://h/a", "http://h/a", UriMeta(path="", domain="d"))
    e = f.next_ready(100.0)
    f.planned(e, 100.0 + 86_400)
    f.finished(e, 100.0, 0.1, crawl_delay_s=90)
    f.checkpoint()
    f.db.close()
    clock[0] = 100.0 + 3 * 86_400
    g = make()
    t = clock[0]
    assert g.next_ready(t + 89) is None and g.next_ready(t + 91).url == "http://h/a"


def test_the_heartbeats_freshness_is_computed_again_only_after_a_hundred_times_its_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The freshness estimate is a sum over every URI, asked by every progress heartbeat (5 s) in the reactor:
    1.1 s at 1,000,000 URIs. It is reused until it is older than a hundred
    times what it cost, so it costs the crawl at most 1 % of its time."""
    import time

    import harvester.continuous
    from harvester.continuous import crawl_job_for

    job = crawl_job_for(JobSpec.from_dict(continuous_spec()), tmp_path)
    calls: list[float] = []

    def freshness(now: float) -> float:
        calls.append(now)
        time.sleep(0.02)
        return 0.5

    monkeypatch.setattr(job.policy, "freshness", freshness)
    assert job.continuous_progress()["freshness"] == 0.5
    assert job.continuous_progress()["freshness"] == 0.5
    assert len(calls) == 1
    later = time.time() + 1000 * harvester.continuous.FRESHNESS_COST_FACTOR  # beyond any cost the sleep had
    monkeypatch.setattr("harvester.continuous.time.time", lambda: later)
    job.continuous_progress()
    assert len(calls) == 2
    job.frontier.close()
