"""The revisit policy (harvester/revisit/policy.py, adaptive.py): Heritrix's AR arithmetic exactly, the
adaptive policy's properties, recovery of its state, and its settings' errors.

Pure code: every test drives the public interface with explicit times, as the crawler and the
simulator do.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random

import pytest

from harvester.contracts import ContractError
from harvester.revisit.change import stripped_digest
from harvester.revisit.estimate import dated_rate, next_rate
from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit, format_ms, host_of

H, D = 3600, 86400
URI = "http://news.example/front.html"


def page(
    digest: str | None,
    ctype: str | None = "text/html",
    etag: str | None = None,
    last_modified: str | None = None,
    downloaded: bool = True,
    status: int = 200,
    duration: float = 0.0,
) -> Visit:
    return Visit(status, ctype, 1000, duration, etag, last_modified, digest, downloaded)


def heritrix(**overrides) -> RevisitPolicy:
    return RevisitPolicy(RevisitSettings.heritrix(**overrides), None)


# --------------------------------------------------------------------------------------------- Heritrix
@pytest.mark.parametrize(
    ("ctype", "wait_s"),
    [
        ("text/html; charset=utf-8", 12 * H),  # TextWaitEvaluator ^text/.*$ 43200
        ("image/png", 2 * D),  # ImageWaitEvaluator ^image/.*$ 172800
        ("video/mp4", D),  # no audio/video evaluator in Heritrix: the generic one
        ("application/pdf", D),  # generic WaitEvaluator 86400
        (None, D),
    ],
)
def test_heritrix_initial_wait_per_content_type(ctype, wait_s):
    policy = heritrix()
    assert policy.add(URI, 100.0) == 100.0  # a new URI is due at once
    assert policy.visited(URI, page("sha1:A", ctype), 100.0) == 100.0 + wait_s
    assert policy.state_of(URI)["wait_ms"] == wait_s * 1000


def test_netharvest_defaults_add_audio_video():
    policy = RevisitPolicy(RevisitSettings.fixed(10, initial_wait_s={"audio_video": 7 * D}), None)
    assert RevisitSettings().initial_wait("audio_video") == 7 * D
    policy.add(URI, 0)
    assert policy.visited(URI, page("sha1:A", "audio/mpeg"), 0) == 10


def test_heritrix_factor_steps_in_integer_milliseconds():
    policy = heritrix(changed_factor=1.7)
    policy.add(URI, 0)
    t = 0.0
    policy.visited(URI, page("sha1:A"), t)  # first visit: initial wait 43,200,000 ms
    waits = []
    for digest in ("sha1:A", "sha1:B", "sha1:B", "sha1:C"):  # unchanged, changed, unchanged, changed
        t += 10
        policy.visited(URI, page(digest), t)
        waits.append(policy.state_of(URI)["wait_ms"])
    # Java: (long)(w * 1.5) and (long)(w / 1.7), truncated
    w1 = int(43_200_000 * 1.5)
    w2 = int(w1 / 1.7)
    w3 = int(w2 * 1.5)
    w4 = int(w3 / 1.7)
    assert waits == [w1, w2, w3, w4]
    assert w2 == 38_117_647  # the truncation, not rounding
    state = policy.state_of(URI)
    assert (state["visits"], state["versions"]) == (5, 3)
    assert policy.annotation(URI) == f"wt:{format_ms(w4)},5vis,3ver,ov:0ms"


def test_heritrix_clamps_to_min_and_max():
    policy = heritrix()
    policy.add(URI, 0)
    t = 0.0
    for i in range(12):  # changed every time: 12 h / 1.5^n reaches the 1 h minimum
        policy.visited(URI, page(f"sha1:{i}"), t)
        t += 1
    assert policy.state_of(URI)["wait_ms"] == 3_600_000
    for _ in range(30):  # unchanged: grows to the 4-week maximum and stays
        policy.visited(URI, page("sha1:11"), t)
        t += 1
    assert policy.state_of(URI)["wait_ms"] == 28 * D * 1000
    assert policy.visited(URI, page("sha1:11"), t) == t + 28 * D


def test_format_ms_is_heritrix_conventional():
    assert format_ms(45_000) == "45s0ms"
    assert format_ms(3) == "3ms"
    assert format_ms(3_600_000) == "1h0m0s0ms"
    assert format_ms(90_061_001) == "1d1h1m1s1ms"


def test_pinned_uri_keeps_its_interval_under_every_policy():
    for settings in (
        RevisitSettings.heritrix(pinned={URI: 900}),
        RevisitSettings(pinned={URI: 900}),
        RevisitSettings.fixed(D, pinned={URI: 900}),
    ):
        policy = RevisitPolicy(settings, 0.01)
        policy.add(URI, 0)
        assert policy.visited(URI, page("sha1:A"), 50) == 950
        assert policy.visited(URI, page("sha1:B"), 1000) == 1900


def test_mid_fetch_filter_semantics():
    policy = heritrix()
    policy.add(URI, 0)
    assert not policy.unchanged_by_headers(URI, '"e1"', "Mon", 0)  # never visited: nothing to compare
    policy.visited(URI, page("sha1:A", etag='"e1"', last_modified="Mon"), 1)
    assert policy.unchanged_by_headers(URI, '"e1"', "Mon", 2)  # both present, both agree
    assert not policy.unchanged_by_headers(URI, '"e2"', "Mon", 2)  # both present, one says changed
    assert not policy.unchanged_by_headers(URI, '"e1"', "Tue", 2)
    assert policy.unchanged_by_headers(URI, '"e1"', None, 2)  # only one present: it decides
    assert policy.unchanged_by_headers(URI, None, "Mon", 2)
    assert not policy.unchanged_by_headers(URI, None, None, 2)  # none present: predict a change
    # An "older" datestamp is a change too (any disparity), and a missing header keeps the stored value.
    assert not policy.unchanged_by_headers(URI, None, "Sun", 2)
    policy.visited(URI, page("sha1:A", etag=None, last_modified=None), 3)
    assert policy.unchanged_by_headers(URI, '"e1"', "Mon", 4)
    # Stopped after the headers: content state unchanged (x 1.5), no new version.
    policy.visited(URI, page(None, etag='"e1"', last_modified="Mon", downloaded=False), 5)
    state = policy.state_of(URI)
    assert state["wait_ms"] == int(int(43_200_000 * 1.5) * 1.5) and state["versions"] == 1
    assert policy.counters["header_skipped"] == 4
    off = heritrix(mid_fetch_filter=False)
    off.add(URI, 0)
    off.visited(URI, page("sha1:A", etag='"e1"'), 1)
    assert not off.unchanged_by_headers(URI, '"e1"', None, 2)


def test_use_overdue_time_adds_the_lateness_before_the_factor():
    for use, expected in ((False, int(43_200_000 * 1.5)), (True, int((43_200_000 + 600_000) * 1.5))):
        policy = heritrix(use_overdue_time=use)
        policy.add(URI, 0)
        due = policy.visited(URI, page("sha1:A"), 0)
        # issued 10 minutes late, fetch took 2 s
        policy.visited(URI, page("sha1:A", duration=2.0), due + 602)
        assert policy.state_of(URI)["overdue_ms"] == 600_000
        assert policy.state_of(URI)["wait_ms"] == expected
        assert policy.annotation(URI).endswith(",ov:10m0s0ms")


def test_unknown_content_state_and_failures():
    policy = heritrix()
    policy.add(URI, 0)
    # No digest now or before (ChangeEvaluator: "can't do a thing"): the fixed default wait, no visit counted.
    assert policy.visited(URI, page(None), 10) == 10 + 3 * D
    assert policy.state_of(URI)["visits"] == 0
    policy.visited(URI, page("sha1:A"), 20)
    wait = policy.state_of(URI)["wait_ms"]
    # A failed fetch (negative status) is not re-evaluated: the wait stays.
    assert policy.visited(URI, page(None, status=-2), 30) == 30 + wait / 1000
    assert policy.state_of(URI)["wait_ms"] == wait


def test_the_annotation_of_a_failed_visit_shows_the_wait_until_the_next_try():
    policy = heritrix()
    policy.add(URI, 0)
    # The first visit got no answer: tried again after the initial wait, not "wt:0ms" (due at once).
    assert policy.visited(URI, page(None, status=-2), 10) == 10 + 12 * H
    assert policy.annotation(URI) == f"wt:{format_ms(12 * H * 1000)},0vis,0ver,ov:10s0ms"
    policy.visited(URI, page("sha1:A"), 12 * H + 10)  # answered: the wait the evaluator chose
    assert policy.annotation(URI) == f"wt:{format_ms(12 * H * 1000)},1vis,1ver,ov:0ms"
    policy.visited(URI, page(None, status=-6), 24 * H + 10)  # a failed lookup, tried again when it expires
    assert policy.annotation(URI, retry_at=30 * H + 10).startswith(f"wt:{format_ms(6 * H * 1000)},")
    # A fixed interval's first failure waits that interval; a pinned URI shows its interval, answered or not.
    fixed = RevisitPolicy(RevisitSettings.fixed(H, pinned={"http://pinned.example/": 900}), None)
    fixed.add(URI, 0)
    assert fixed.visited(URI, page(None, status=-2), 0) == H
    assert fixed.annotation(URI).startswith("wt:1h0m0s0ms,")
    pinned = "http://pinned.example/"
    fixed.add(pinned, 0)
    for t, status in ((0, 200), (900, -2), (1800, 200)):
        assert fixed.visited(pinned, page("sha1:P", status=status), t) == t + 900
        assert fixed.annotation(pinned).startswith("wt:15m0s0ms,")


# --------------------------------------------------------------------------------------------- adaptive
def visit_series(policy: RevisitPolicy, uri: str, changes_every: float | None, start: float, until: float) -> float:
    """Visit ``uri`` whenever the policy says, its content changing every ``changes_every`` seconds."""
    t = policy.add(uri, start)
    while t < until:
        version = 0 if changes_every is None else int(t // changes_every)
        t = policy.visited(uri, page(f"sha1:{version}"), t)
        if policy.next_replan_at <= t:
            policy.replan(t)
    return t


def test_adaptive_fast_page_waits_less_than_static_page():
    policy = RevisitPolicy(RevisitSettings(), 6 / D)  # 6 visits a day for two pages
    fast, static = "http://a.example/fast", "http://a.example/static"
    policy.add(fast, 0)
    policy.add(static, 0)
    t = 0.0
    while t < 10 * D:  # drive both as the frontier would: the earliest due first
        uri = min((fast, static), key=lambda u: policy.uris[u].next_at)
        t = max(t, policy.uris[uri].next_at)
        version = int(t // (2 * H)) if uri == fast else 0
        policy.visited(uri, page(f"sha1:{version}"), t)
        if policy.next_replan_at <= t:
            policy.replan(t)
    fast_wait = policy.state_of(fast)["wait_ms"]
    static_wait = policy.state_of(static)["wait_ms"]
    assert fast_wait < static_wait / 2
    assert policy.state_of(fast)["versions"] > 20 and policy.state_of(static)["versions"] == 1


def test_adaptive_plan_spends_the_budget():
    budget = 200 / D  # 200 visits a day over 100 pages
    policy = RevisitPolicy(RevisitSettings(), budget)
    for i in range(100):
        # histories: page i changes every (i + 1) hours; every page visited every 6 hours for 4 days
        uri = f"http://h{i % 5}.example/p{i}"
        policy.add(uri, 0)
        for k in range(16):
            t = k * 6 * H + i
            policy.visited(uri, page(f"sha1:{int(t // ((i + 1) * H))}"), t)
    moved = policy.replan(4 * D)
    assert moved  # the plan moved pages off their initial schedule
    # planned at the budget: not over it (the frontier would only be late), not under it (slots idle)
    assert budget * 0.97 <= policy.planned_rate <= budget
    # the plan as the frontier sees it: visits due in the next two days, each page at its planned pace
    due = 0
    for state in policy.uris.values():
        interval = state.wait_ms / 1000
        if state.periodic is not None:  # every m-th period, just after the change
            interval = state.periodic[0] * policy._strategy.periods_between_visits(state.periodic[0])
        due += sum(1 for k in range(1000) if state.next_at + k * interval < 4 * D + 2 * D)
    assert due == pytest.approx(budget * 2 * D, rel=0.1)
    # the fast pages get the visits: page 0 (hourly) is planned more often than page 99 (every 100 h)
    assert policy.state_of("http://h0.example/p0")["wait_ms"] < policy.state_of("http://h4.example/p99")["wait_ms"]
    assert policy.next_replan_at == 4 * D + RevisitSettings().replan_interval_s


def _slots_served(policy: RevisitPolicy, now: float, budget: float) -> list[bool]:
    """A frontier serving one due URI per 1 / budget until the next replan: which slots find one."""
    due = sorted(state.next_at for state in policy.uris.values())
    served, backlog, i = [], 0, 0
    for slot in range(math.ceil((policy.next_replan_at - now) * budget)):
        while i < len(due) and due[i] <= now + slot / budget:
            backlog, i = backlog + 1, i + 1
        served.append(backlog > 0)
        backlog = max(0, backlog - 1)
    return served


def test_adaptive_fills_the_slots_a_bunched_plan_leaves_idle():
    budget = 24 / D  # one fetch an hour
    policy = RevisitPolicy(RevisitSettings(), budget)
    for i in range(40):  # 40 pages visited in one round every 12 h, never changed: all due days ahead, together
        uri = f"http://h{i % 4}.example/p{i}"
        policy.add(uri, 0)
        for k in range(4):
            policy.visited(uri, page("sha1:same"), k * 12 * H + i * 60)
    now = 40 * H
    moved = policy.replan(now)
    assert all(_slots_served(policy, now, budget))  # every slot until the next replan has a visit
    window = [uri for uri in policy.uris if policy.state_of(uri)["next_at"] < policy.next_replan_at]
    assert len(window) == int(RevisitSettings().replan_interval_s * budget)  # no more than the idle slots
    assert set(window) <= set(moved) and all(policy.state_of(uri)["next_at"] >= now for uri in window)
    # the visits pulled are those with the most changes expected: at equal histories, the longest unvisited
    last = {uri: policy.state_of(uri)["last_visit_at"] for uri in policy.uris}
    assert max(last[uri] for uri in window) < min(last[uri] for uri in policy.uris if uri not in window)


def test_a_visit_pulled_forward_keeps_the_minimum_wait():
    policy = RevisitPolicy(RevisitSettings(), 24 / D)
    for i in range(40):  # calm pages, all planned days ahead: every slot of the next six hours is idle
        uri = f"http://h{i % 4}.example/p{i}"
        policy.add(uri, 0)
        for k in range(4):
            policy.visited(uri, page("sha1:same"), k * 12 * H + i * 60)
    now = 40 * H
    policy.add(URI, 0)
    for k in range(20):  # changed at every visit five minutes apart: the most changes expected of all
        t = now - 1800 - (19 - k) * 300
        policy.visited(URI, page(f"sha1:{k}"), t)
    policy.replan(now)
    # the most promising page, but visited half an hour ago: not pulled forward before the minimum wait
    assert policy.state_of(URI)["next_at"] >= now - 1800 + RevisitSettings().min_wait_s


def _calm_pages(policy: RevisitPolicy, hosts: list[str], count: int, last_at: float) -> list[str]:
    """``count`` pages on ``hosts`` visited every 12 h and never changed, the last visit at ``last_at``
    (one minute apart): all planned days ahead."""
    uris = []
    for i in range(count):
        uri = f"http://{hosts[i % len(hosts)]}/p{i}"
        policy.add(uri, 0)
        for k in range(4):
            policy.visited(uri, page("sha1:same"), last_at - (3 - k) * 12 * H + i * 60)
        uris.append(uri)
    return uris


def _pulled(policy: RevisitPolicy, uris: list[str]) -> list[str]:
    return [uri for uri in uris if policy.state_of(uri)["next_at"] < policy.next_replan_at]


def test_adaptive_pulls_nothing_forward_while_the_frontier_has_a_backlog():
    budget = 24 / D
    policy = RevisitPolicy(RevisitSettings(), budget)
    calm = _calm_pages(policy, ["a.example", "b.example"], 20, 36 * H)
    for i in range(10):  # never visited: due now, more than the six slots until the next replan
        policy.add(f"http://new.example/{i}", 0)
    policy.replan(40 * H)
    assert all(_slots_served(policy, 40 * H, budget)) and _pulled(policy, calm) == []


def test_pulled_visits_are_spread_over_hosts_and_skip_hosts_that_do_not_answer():
    budget = 24 / D
    policy = RevisitPolicy(RevisitSettings(), budget)
    first = _calm_pages(policy, ["first.example"], 20, 30 * H)  # the longest unvisited: the most changes expected
    others = _calm_pages(policy, [f"h{i}.example" for i in range(4)], 20, 36 * H)
    down = _calm_pages(policy, ["down.example"], 5, 24 * H)
    for uri in down:  # answered at 24 h, no answer at 38 h
        policy.visited(uri, page(None, status=-2), 38 * H)
    policy.replan(40 * H)
    pulled = _pulled(policy, first + others + down)
    assert len(pulled) == 6 and not set(pulled) & set(down)
    # one page per host in each round: every answering host once, then the first host's next best
    assert {host_of(uri) for uri in pulled} == {"first.example", "h0.example", "h1.example", "h2.example", "h3.example"}


def test_a_page_whose_host_does_not_answer_is_not_brought_back_by_a_replan():
    budget = 24 / D
    policy = RevisitPolicy(RevisitSettings(), budget)
    _calm_pages(policy, ["a.example", "b.example"], 20, 36 * H)
    down = "http://down.example/"
    policy.add(down, 0)
    for k in range(4):
        policy.visited(down, page("sha1:same"), k * 12 * H)
    policy.replan(36 * H + 60)
    due = policy.state_of(down)["next_at"]
    after = policy.visited(down, page(None, status=-2), due)  # no answer at its time
    policy.replan(due + 2 * H)
    state = policy.state_of(down)
    assert state["next_at"] >= min(after, due + state["wait_ms"] / 1000) > due + 2 * H  # not due again at once


def test_adaptive_without_budget_spends_heritrix_initial_pace():
    policy = RevisitPolicy(RevisitSettings(), None)
    for i in range(10):
        policy.add(f"http://a.example/{i}", 0)
        policy.visited(f"http://a.example/{i}", page("sha1:x"), 1)
    policy.replan(2)
    assert policy.planned_rate == pytest.approx(10 / (12 * H), rel=0.03)


def test_lying_host_stops_being_trusted():
    settings = RevisitSettings(trust_after=3, verify_every=4)
    policy = RevisitPolicy(settings, 1.0)
    uri = "http://liar.example/a"
    policy.add(uri, 0)
    headers = {"etag": '"v1"', "last_modified": "Mon, 01 Jan 2024 00:00:00 GMT"}
    t = 1.0
    policy.visited(uri, page("sha1:1", **headers), t)
    # Not trusted yet: the headers say "unchanged", the policy still downloads to check them.
    for _ in range(3):
        t += H
        assert not policy.unchanged_by_headers(uri, headers["etag"], headers["last_modified"], t)
        policy.visited(uri, page("sha1:1", **headers), t)
    host = policy.host_state_of("liar.example")
    assert (host["verified"], host["lies"]) == (3, 0)
    skipped = checked = 0
    for _ in range(8):  # trusted: most checks stop after the headers, one in verify_every is verified
        t += H
        if policy.unchanged_by_headers(uri, headers["etag"], headers["last_modified"], t):
            skipped += 1
            policy.visited(uri, page(None, downloaded=False, **headers), t)
        else:
            checked += 1
            policy.visited(uri, page("sha1:1", **headers), t)
    assert skipped == 6 and checked == 2
    # The content changes, the server keeps its validators: the next verification catches the lie.
    while policy.unchanged_by_headers(uri, headers["etag"], headers["last_modified"], t):
        policy.visited(uri, page(None, downloaded=False, **headers), t)
        t += H
    policy.visited(uri, page("sha1:2", **headers), t)
    assert policy.host_state_of("liar.example")["lies"] == 1
    assert policy.counters["validator_misses"] == 1
    for _ in range(20):  # never trusted again: full downloads only
        t += H
        assert not policy.unchanged_by_headers(uri, headers["etag"], headers["last_modified"], t)
        policy.visited(uri, page("sha1:2", **headers), t)
    # Another URI on the same host is not trusted either.
    other = "http://liar.example/b"
    policy.add(other, t)
    policy.visited(other, page("sha1:b", **headers), t)
    assert not policy.unchanged_by_headers(other, headers["etag"], headers["last_modified"], t + 1)


def test_adaptive_recognises_a_periodic_page_and_visits_after_its_changes():
    policy = RevisitPolicy(RevisitSettings(), 50 / D)
    period, phase = 6 * H, 1000.0
    t = policy.add(URI, 0)
    # visits every 2.5 h for two days (a frontier serving the URI on a tight schedule)
    while t < 2 * D:
        version = int((t - phase) // period)
        policy.visited(URI, page(f"sha1:{version}"), t)
        t += 2.5 * H
    t_last = t - 2.5 * H
    nxt = policy.visited(URI, page(f"sha1:{int((t - phase) // period)}"), t)
    state = policy.state_of(URI)
    assert state["periodic"] is not None and state["periodic"][0] == period
    assert isinstance(state["periodic"][1], str)  # the 120-bit phase mask travels as hex, not a JSON number
    restored = RevisitPolicy(RevisitSettings(), 50 / D)
    restored.load(json.loads(json.dumps(policy.dump())))
    assert restored.state_of(URI) == state
    # the next visit falls just after a change time (phase + k period), within a few percent of the period
    since_change = (nxt - phase) % period
    assert since_change < 0.1 * period, (t_last, nxt, since_change)


def test_state_round_trips_and_the_schedule_continues():
    settings = RevisitSettings()
    policy = RevisitPolicy(settings, 20 / D)
    uris = [f"http://h{i % 3}.example/p{i}" for i in range(12)]
    t = 0.0
    for uri in uris:
        policy.add(uri, t)
    for k in range(40):
        uri = uris[k % len(uris)]
        t += 600
        if policy.unchanged_by_headers(uri, '"e"', None, t):
            policy.visited(uri, page(None, etag='"e"', downloaded=False), t)
        else:
            policy.visited(uri, page(f"sha1:{k // 7}", etag='"e"'), t)
        if policy.next_replan_at <= t:
            policy.replan(t)
    saved = json.loads(json.dumps(policy.dump(), allow_nan=False))  # what a crawler writes to disk
    per_uri = {uri: json.loads(json.dumps(policy.state_of(uri))) for uri in uris}
    hosts = {h: policy.host_state_of(h) for h in ("h0.example", "h1.example", "h2.example")}

    restored = RevisitPolicy(settings, 20 / D)
    restored.load(saved)
    one_by_one = RevisitPolicy(settings, 20 / D)
    for uri, state in per_uri.items():
        one_by_one.restore(uri, state)
    for host, state in hosts.items():
        if state is not None:
            one_by_one.restore_host(host, state)
    for uri in uris:
        assert restored.state_of(uri) == policy.state_of(uri) == one_by_one.state_of(uri)
    # the same next visits give the same next times
    for k, uri in enumerate(uris):
        t += 900
        visit = page(f"sha1:new{k}", etag='"e"')
        expected = policy.visited(uri, visit, t)
        assert restored.visited(uri, visit, t) == expected
        assert restored.unchanged_by_headers(uri, '"e"', None, t + 1) == policy.unchanged_by_headers(
            uri, '"e"', None, t + 1
        )
    assert restored.replan(t + 1) == policy.replan(t + 1)


def test_remove_forgets_a_uri():
    policy = RevisitPolicy(RevisitSettings(), 1 / H)
    policy.add(URI, 0)
    policy.visited(URI, page("sha1:A"), 1)
    policy.remove(URI)
    assert policy.state_of(URI) is None
    assert URI not in policy.replan(2)
    assert policy.add(URI, 5) == 5  # added again: a new URI, due now


def test_freshness_estimate():
    policy = RevisitPolicy(RevisitSettings(), 1 / H)
    assert policy.freshness(0) is None
    policy.add(URI, 0)
    assert policy.freshness(0) == 0.0  # never captured
    policy.visited(URI, page("sha1:A"), 10)
    assert 0.9 < policy.freshness(11) <= 1.0
    assert policy.freshness(30 * D) < policy.freshness(11)


# --------------------------------------------------------------------------------------------- settings
def test_settings_round_trip_and_heritrix_defaults():
    ar = RevisitSettings.heritrix()
    assert (ar.policy, ar.min_wait_s, ar.max_wait_s, ar.default_wait_s) == ("heritrix", 3600, 2_419_200, 259_200)
    assert (ar.unchanged_factor, ar.changed_factor, ar.use_overdue_time) == (1.5, 1.5, False)
    assert dict(ar.initial_wait_s) == {"text": 43200, "image": 172800, "audio_video": 86400, "other": 86400}
    for settings in (ar, RevisitSettings(), RevisitSettings.fixed(600, strip=("<b>[^<]*</b>",))):
        data = json.loads(json.dumps(settings.to_dict()))
        assert RevisitSettings.from_dict(data) == settings
    assert RevisitSettings.from_dict({}) == RevisitSettings()
    assert RevisitSettings.from_dict({"policy": "heritrix"}) == RevisitSettings.heritrix()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"min_wait_s": "1h"}, "revisit.min_wait_s: expected a whole number >= 1, got '1h'"),
        ({"max_wait_s": 0}, "revisit.max_wait_s: expected a whole number >= 1"),
        ({"changed_factor": 0.5}, "revisit.changed_factor: a factor of at least 1"),
        ({"use_overdue_time": "yes"}, "revisit.use_overdue_time: expected true or false"),
        ({"policy": "lru"}, "revisit.policy: one of heritrix, fixed, adaptive"),
        ({"initial_wait_s": {"text": -5}}, "revisit.initial_wait_s.text: expected a whole number of seconds"),
        ({"initial_wait_s": {"html": 5}}, "revisit.initial_wait_s.html: not a content class"),
        ({"strip": ["(?=ad)"]}, "revisit.strip[0]: lookahead (?=…) is not supported"),
        ({"strip": "clock"}, "revisit.strip: expected a list of regular expressions"),
        ({"content_types": {"image": "(image"}}, "revisit.content_types.image: "),
        ({"pinned": {"ftp://x.example/": 60}}, "revisit.pinned.ftp://x.example/: not an http(s) URL"),
        ({"pinned": {URI: 0}}, f"revisit.pinned.{URI}: expected a whole number of seconds >= 1"),
        ({"min_wait_s": 7200, "max_wait_s": 3600}, "revisit.min_wait_s: must not exceed max_wait_s"),
        ({"wait": 1}, "revisit: unknown setting(s): wait"),
        ([1], "revisit: expected an object, got list"),
    ],
)
def test_from_dict_errors_name_the_path(data, message):
    with pytest.raises(ContractError) as caught:
        RevisitSettings.from_dict(data, "revisit")
    assert str(caught.value).startswith(message)
    with pytest.raises(ContractError, match=r"^continuous\.revisit"):
        RevisitSettings.from_dict(data, "continuous.revisit")


def test_budget_must_be_positive():
    with pytest.raises(ContractError, match="budget_per_s"):
        RevisitPolicy(RevisitSettings(), 0.0)
    with pytest.raises(ContractError, match="budget_per_s"):
        RevisitPolicy(RevisitSettings(), math.inf)


# --------------------------------------------------------------------------------------------- change
def test_stripped_digest():
    clock = r'<span class="clock">[^<]*</span>'
    a = b'<p>news</p><span class="clock">10:00:01</span>'
    b = b'<p>news</p><span class="clock">10:00:02</span>'
    assert stripped_digest(a, [clock]) == stripped_digest(b, [clock])
    assert stripped_digest(a, []) != stripped_digest(b, [])
    # without strip regexes: the WARC-Payload-Digest of the body
    assert stripped_digest(a, ()) == "sha1:" + base64.b32encode(hashlib.sha1(a).digest()).decode()
    # matches become one blank (HTTPContentDigest), bytes that are not UTF-8 survive
    assert (
        stripped_digest(b"x\xff<b>1</b>y", ["<b>[^<]*</b>"])
        == "sha1:" + base64.b32encode(hashlib.sha1(b"x\xff y").digest()).decode()
    )
    assert stripped_digest(b"<b>1</b>", ["<b>[^<]*</b>"]) != stripped_digest(b"<b>1</b>", [])


def test_adaptive_learns_the_class_prior_from_the_crawl():
    """Images that never changed teach the policy that images rarely change: a new image is then
    planned at a slower pace than Heritrix's 2-day prior, while text keeps its own prior."""

    def crawl(static_images: int) -> RevisitPolicy:
        policy = RevisitPolicy(RevisitSettings(), 50 / D)
        for i in range(static_images):  # each visited 6 times over 10 days, never changed
            uri = f"http://img.example/{i}.jpg"
            policy.add(uri, 0)
            for k in range(6):
                policy.visited(uri, page("sha1:same", "image/jpeg"), k * 2 * D)
        for i in range(20):  # text pages changing every visit, so the plan has something to spend on
            uri = f"http://news.example/{i}"
            policy.add(uri, 0)
            for k in range(6):
                policy.visited(uri, page(f"sha1:{k}"), k * 2 * D + i)
        policy.replan(10 * D)
        new = "http://img.example/new.jpg"
        policy.add(new, 10 * D)
        policy.visited(new, page("sha1:new", "image/jpeg"), 10 * D)
        return policy

    learned, unlearned = crawl(100), crawl(0)
    prior = learned._strategy.class_prior
    assert prior["image"] < 1 / (20 * D)  # 1 + 0 changes in 2 days + 100 x 10 days
    assert prior["text"] > 1 / (2 * D)  # text changed at every visit
    assert "image" not in unlearned._strategy.class_prior
    wait = learned.state_of("http://img.example/new.jpg")["wait_ms"]
    assert wait > unlearned.state_of("http://img.example/new.jpg")["wait_ms"]
    # the learned prior survives dump/load (a restart plans with it before the next replan)
    restored = RevisitPolicy(RevisitSettings(), 50 / D)
    restored.load(json.loads(json.dumps(learned.dump())))
    assert restored._strategy.class_prior == pytest.approx(prior)


@pytest.mark.parametrize("policy_name", ["heritrix", "fixed"])
def test_validator_misses_are_counted_by_every_policy(policy_name: str) -> None:
    """Review of issue 12: only the adaptive policy counted them. A full download that finds a change while the
    validators still equal the previous visit's is one miss; a change with new validators is not."""
    policy = RevisitPolicy(RevisitSettings.from_dict({"policy": policy_name}))
    uri = "http://liar.example/page"
    same = {"etag": '"v1"', "last_modified": "Mon, 23 Nov 2026 10:00:00 GMT"}
    policy.visited(uri, page("sha1:1", **same), 1.0)
    policy.visited(uri, page("sha1:1", **same), 2.0)  # unchanged, same validators: no miss
    policy.visited(uri, page("sha1:2", **same), 3.0)  # changed, same validators: a miss
    policy.visited(uri, page("sha1:3", etag='"v3"'), 4.0)  # changed, new validators: honest
    assert policy.counters["validator_misses"] == 1 and policy.uris[uri].validator_misses == 1


def _http_date(t: float) -> str:
    from email.utils import formatdate

    return formatdate(t, usegmt=True)


T0 = 1_790_000_000.0  # a real Unix time: HTTP dates are compared with the crawler's clock


def _first_round(policy: RevisitPolicy, ages_s: dict[str, float], now: float) -> dict[str, float]:
    """Visit each URI once, with a Last-Modified ``age`` seconds before ``now``; the next times."""
    out = {}
    for uri, age in ages_s.items():
        policy.add(uri, now)
        if policy.next_replan_at <= now:
            policy.replan(now)
        out[uri] = policy.visited(uri, page(f"sha1:{uri}", last_modified=_http_date(now - age)), now)
    return out


def test_last_modified_dates_tell_a_page_age_on_the_first_visit():
    """A page last modified 200 days ago is planned far later than one modified an hour ago: the date
    is a Poisson observation ("no change for 200 days") the first visit already makes."""
    policy = RevisitPolicy(RevisitSettings(), 20 / D)
    old, fresh = "http://dated.example/old", "http://dated.example/fresh"
    nxt = _first_round(policy, {old: 200 * D, fresh: H}, T0)
    assert nxt[old] - T0 > 5 * (nxt[fresh] - T0)
    state = policy.state_of(old)
    assert state["lm_x"] == 1.0 and state["lm_t"] == pytest.approx(200 * D, rel=1e-6)
    # without dates both pages are alike
    blind = RevisitPolicy(RevisitSettings(), 20 / D)
    for uri in (old, fresh):
        blind.add(uri, T0)
        if blind.next_replan_at <= T0:
            blind.replan(T0)
    waits = [blind.visited(uri, page("sha1:x"), T0) for uri in (old, fresh)]
    assert waits[0] == waits[1]


def test_a_last_modified_many_pages_share_on_their_first_visit_is_not_their_age():
    """A site built, imported or deployed in one go stamps its pages with one date (a simulator, with the
    time it started): that date is not when each page last changed. The first page to show it is taken at
    its word; the others of the host keep the prior, and only their later dates count. Pages whose own
    dates differ are each read as their age; the host's memory of first dates survives a restart."""
    policy = RevisitPolicy(RevisitSettings(), 20 / D)
    deployed = {f"http://deployed.example/p{i}": H for i in range(6)}  # all "modified" at T0 - 1 h
    _first_round(policy, deployed, T0)
    states = [policy.state_of(uri) for uri in deployed]
    assert states[0]["lm_x"] == 1.0 and states[0]["lm_t"] == pytest.approx(H)
    assert all(st["lm_x"] == 0.0 and st["lm_t"] == 0.0 for st in states[1:])
    assert all(st["lm_at"] == T0 - H for st in states)  # the date is kept for the next visit's check
    own = {f"http://own.example/p{i}": (i + 1) * H for i in range(6)}  # each its own date
    _first_round(policy, own, T0)
    assert all(policy.state_of(uri)["lm_t"] == pytest.approx(age) for uri, age in own.items())
    # restored after a restart, the host still knows the shared date
    restarted = RevisitPolicy(RevisitSettings(), 20 / D)
    restarted.restore_host("deployed.example", json.loads(json.dumps(policy.host_state_of("deployed.example"))))
    _first_round(restarted, {"http://deployed.example/new": H}, T0)
    assert restarted.state_of("http://deployed.example/new")["lm_t"] == 0.0


def test_a_dated_page_that_changed_at_every_visit_is_planned_at_its_dated_rate():
    """Visited 16 hours apart and changed each time, a page says nothing of its pace by digests (the
    improved estimator tops out near ln(2n + 1) / 16 h); its dates do: each change was 1-3 hours before the
    visit. Planned with the dated rate, and so visited less often than its dateless twin, which is taken for
    a page four times slower, at the peak of the allocation's value. A dated page with an unchanged visit
    keeps the estimate conditioned on its last visit."""
    rng = random.Random(7)
    policy = RevisitPolicy(RevisitSettings(), 20 / D)
    fast, blind, calm = "http://fast.example/live", "http://blind.example/live", "http://fast.example/calm"
    _first_round(policy, {fast: 30 * 60, calm: 30 * 60}, T0)
    policy.add(blind, T0)
    policy.visited(blind, page("sha1:b0"), T0)
    t = T0
    for k in range(1, 7):
        t += 16 * H
        policy.visited(fast, page(f"sha1:v{k}", last_modified=_http_date(t - rng.uniform(1, 3) * H)), t)
        policy.visited(blind, page(f"sha1:b{k}"), t)
        policy.visited(calm, page("sha1:c1", last_modified=_http_date(T0 + 14 * H)), t)  # changed at k = 1 only
    strategy, state = policy._strategy, policy.uris[fast]
    assert state.periodic is None
    assert strategy.rate(state, fast) == pytest.approx(state.lm_x / state.lm_t)
    assert 1 * H < 1 / strategy.rate(state, fast) < 3 * H
    assert 1 / strategy.rate(policy.uris[blind], blind) > 4 * H
    calm_state = policy.uris[calm]
    assert calm_state.x < calm_state.n
    assert strategy.rate(calm_state, calm) != pytest.approx(calm_state.lm_x / calm_state.lm_t)


def test_the_dated_rate_only_ever_raises_the_estimate_of_a_page_changing_at_every_visit():
    """A Last-Modified that is the time of the request (dynamic pages) passes the host's date checks while every
    page changes at every visit (a nonce in the page): its dates say "changed a second ago" and would make the
    page one changing every second, which the allocation drops to the longest wait. And a page dated a year
    old on its first visit that then changes at every visit keeps that year in its dated evidence for many
    visits. The rule only ever raises the estimate the page has without it, and these keep theirs."""
    stamped, woken = "http://stamp.example/live", "http://woken.example/live"
    rng = random.Random(3)
    policy = RevisitPolicy(RevisitSettings(), 20 / D)
    _first_round(policy, {stamped: 0.0, woken: 365 * D}, T0)
    t = T0
    for k in range(1, 8):
        t += rng.uniform(4, 8) * H
        policy.visited(stamped, page(f"sha1:s{k}", last_modified=_http_date(t - 2)), t)  # the request time
        policy.visited(woken, page(f"sha1:w{k}", last_modified=_http_date(t - rng.uniform(0.5, 3) * H)), t)
    strategy = policy._strategy
    assert strategy.dates_trusted("stamp.example") and strategy.dates_trusted("woken.example")
    for uri in (stamped, woken):
        state = policy.uris[uri]
        assert state.x == state.n and state.periodic is None
        prior = strategy.host_prior.get((host_of(uri), "text"), strategy._class_prior("text"))
        weight = policy.settings.prior_changes
        without_rule = next_rate(state, prior, weight, dated_rate(state, prior, weight))
        assert strategy.rate(state, uri) == pytest.approx(without_rule)
        assert strategy.rate(state, uri) < 1 / H
        assert policy.replan(t).get(uri, policy.uris[uri].next_at) - t < 7 * D


def test_a_host_whose_dates_lie_is_not_trusted_again():
    """A change that keeps its Last-Modified (the liar of seed 002 §5.1) revokes the host's date trust:
    from then on its pages are planned from digests alone, and so are the host's other pages."""
    policy = RevisitPolicy(RevisitSettings(), 20 / D)
    uri, other = "http://liar.example/a", "http://liar.example/b"
    _first_round(policy, {uri: 3 * D, other: 100 * D}, T0)
    assert policy._strategy.dates_trusted("liar.example")
    policy.visited(uri, page("sha1:changed", last_modified=_http_date(T0 - 3 * D)), T0 + D)
    assert not policy._strategy.dates_trusted("liar.example")
    assert policy.host_state_of("liar.example")["dates_bad"] == 1
    # a host stamping every response with the time of the request: same content, a new date
    _first_round(policy, {"http://stamp.example/a": 0.0}, T0)
    policy.visited(
        "http://stamp.example/a", page("sha1:http://stamp.example/a", last_modified=_http_date(T0 + H)), T0 + H
    )
    assert not policy._strategy.dates_trusted("stamp.example")
    # a date in the future (a clock far off) on the first visit
    _first_round(policy, {"http://future.example/a": -30 * D}, T0)
    assert not policy._strategy.dates_trusted("future.example")
    # opaque tokens are not dates: no dated evidence, no verdict on the host
    policy.add("http://token.example/a", T0)
    policy.visited("http://token.example/a", page("sha1:t", last_modified="lm-3"), T0)
    assert policy.state_of("http://token.example/a")["lm_t"] == 0.0
    assert policy.host_state_of("token.example") is None


def test_date_trust_after_waits_for_verified_changes():
    settings = RevisitSettings(date_trust_after=2)
    policy = RevisitPolicy(settings, 20 / D)
    uri = "http://slow.example/a"
    _first_round(policy, {uri: 10 * D}, T0)
    assert not policy._strategy.dates_trusted("slow.example")
    for k in (1, 2):
        t = T0 + k * D
        policy.visited(uri, page(f"sha1:v{k}", last_modified=_http_date(t - H)), t)
    assert policy._strategy.dates_trusted("slow.example")
    assert RevisitSettings.from_dict({"date_trust_after": 0}).date_trust_after == 0
    with pytest.raises(ContractError, match="revisit.date_trust_after"):
        RevisitSettings.from_dict({"date_trust_after": -1})


def test_dated_changes_give_a_periodic_page_its_phase_without_probes():
    """On a host with trusted dates each change is known to the second: a page published every 6 hours
    is recognised from its first changes, even when every visit finds a change (a slow visitor), and is
    then visited just after its changes."""
    policy = RevisitPolicy(RevisitSettings(), 50 / D)
    period, phase = 6 * H, 1000.0

    def last_change(t: float) -> float:
        return T0 + phase + ((t - T0 - phase) // period) * period

    t = policy.add(URI, T0)
    for _ in range(5):  # every 7 h: every visit sees a change, none says when without the dates
        policy.visited(URI, page(f"sha1:{last_change(t)}", last_modified=_http_date(last_change(t))), t)
        t += 7 * H
    nxt = policy.visited(URI, page(f"sha1:{last_change(t)}", last_modified=_http_date(last_change(t))), t)
    state = policy.state_of(URI)
    assert state["periodic"] is not None and state["periodic"][0] == period
    assert (nxt - T0 - phase) % period < 0.1 * period


@pytest.mark.parametrize(
    ("period", "every"),
    [(5 * H, 7 * H), (10 * H + 20 * 60, 7 * H), (36 * H, 17 * H), (2.6 * D, 20 * H)],
    ids=["5h", "10h20m", "36h", "2.6d"],
)
def test_dated_changes_give_a_page_any_period(period: float, every: float):
    """A publisher's clock need not be an editorial one: a page published every 5 hours, or every 2.6
    days, with a jitter of up to 1 % of its period, is recognised from its dated changes with its own
    period (no listed period fits it), and is then visited just after its changes."""
    policy = RevisitPolicy(RevisitSettings(), 50 / D)
    phase = 1000.0
    changes = [T0 + phase + k * period + ((k * 7919) % 200 - 100) / 100 * 0.01 * period for k in range(400)]

    def last_change(t: float) -> float:
        return max(c for c in changes if c <= t)

    t = policy.add(URI, T0 + phase + 1)
    for _ in range(14):
        policy.visited(URI, page(f"sha1:{last_change(t)}", last_modified=_http_date(last_change(t))), t)
        if policy.state_of(URI)["periodic"] is not None:
            break
        t += every
    state = policy.state_of(URI)
    assert state["periodic"] is not None, "not recognised"
    assert abs(state["periodic"][0] - period) < 0.01 * period
    nxt = policy.visited(URI, page(f"sha1:{last_change(t + 1)}", last_modified=_http_date(last_change(t + 1))), t + 1)
    after = nxt - max(c for c in changes if c <= nxt)
    assert 0 < after < 0.1 * period  # just after a change


@pytest.mark.parametrize("seed", range(6))
def test_a_dated_poisson_page_is_not_taken_for_periodic(seed: int):
    """Changes at random times, each dated to the second, fit no period: every divisor of their shortest
    gap leaves some change off its clock, however many visits."""
    rng = random.Random(seed)
    policy = RevisitPolicy(RevisitSettings(), 50 / D)
    rate = 1 / rng.uniform(3 * H, 3 * D)
    changes, c = [], T0
    while c < T0 + 90 * D:
        c += rng.expovariate(rate)
        changes.append(c)
    t = policy.add(URI, T0 + 1)
    fitted = 0
    while t < T0 + 80 * D:
        done = [x for x in changes if x <= t]
        last = done[-1] if done else T0 - D
        t = policy.visited(URI, page(f"sha1:{last}", last_modified=_http_date(last)), t)
        fitted += policy.state_of(URI)["periodic"] is not None
    assert fitted == 0


def test_changes_within_one_cycle_do_not_make_a_page_periodic():
    """Dated changes of a fast page watched for a day all fall in one cycle of a weekly period: they
    are consistent with it, but they are not evidence for it (the fit needs changes in distinct cycles)."""
    from harvester.revisit.periodic import periodic_fit

    history: list[float] = []
    t = T0
    for k in range(5):  # a change about every 70 minutes, irregularly, each dated, a visit ten minutes after it
        change = T0 + k * 4200 + (0, 613, 101, 955, 377)[k]
        history.extend((change - 1, change, 1.0, change, change + 600, 0.0))
        t = change + 600
    assert t - T0 < D
    assert periodic_fit(history, 4, H) is None
    # the same number of changes a week apart, at the same time of the week, is a weekly page
    weekly: list[float] = []
    for k in range(5):
        change = T0 + k * 7 * D
        weekly.extend((change - 1, change, 1.0, change, change + 6 * D, 0.0))
    fit = periodic_fit(weekly, 4, H)
    assert fit is not None and fit[0] == 7 * D


def _crawl_hosts(pages: dict[str, bool], days: int = 5) -> RevisitPolicy:
    """A policy that visited each page every 12 hours for ``days`` days, True: a change at every visit."""
    policy = RevisitPolicy(RevisitSettings(), 40 / D)
    for uri in pages:
        policy.add(uri, 0)
    for k in range(2 * days):
        for i, (uri, fast) in enumerate(pages.items()):
            policy.visited(uri, page(f"sha1:{k if fast else 0}"), k * 12 * H + i)
    policy.replan(days * D)
    return policy


def _new_page_wait(policy: RevisitPolicy, uri: str, now: float) -> int:
    policy.add(uri, now)
    policy.visited(uri, page("sha1:first"), now)
    return policy.state_of(uri)["wait_ms"]


def test_adaptive_learns_a_sites_pace_where_sites_differ():
    """A site whose pages all change at every visit and one whose pages never do: a new page on each is
    planned from its site's pace (empirical Bayes over sites, AdaptiveStrategy.host_priors), not from the
    pace of all text pages; the site priors survive dump/load."""
    pages = {f"http://busy.example/{i}": True for i in range(10)}
    pages |= {f"http://calm.example/{i}": False for i in range(10)}
    policy = _crawl_hosts(pages)
    priors = policy._strategy.host_prior
    assert priors[("busy.example", "text")] > 20 * priors[("calm.example", "text")]
    busy = _new_page_wait(policy, "http://busy.example/new", 5 * D)
    calm = _new_page_wait(policy, "http://calm.example/new", 5 * D)
    assert busy < calm / 2
    restored = RevisitPolicy(RevisitSettings(), 40 / D)
    restored.load(json.loads(json.dumps(policy.dump())))
    assert restored._strategy.host_prior == pytest.approx(priors)


def test_sites_that_do_not_differ_share_one_prior():
    """Sites with 6, 5 and 4 busy pages of 10, the rest calm: the sites' means differ by no more than
    chance, so no site gets a prior of its own (each shrunk all the way to the class's geometric mean) and
    new pages on either are planned alike."""
    busy = {"one": 6, "two": 5, "three": 4}
    pages = {f"http://{host}.example/{i}": i < n for host, n in busy.items() for i in range(10)}
    policy = _crawl_hosts(pages)
    priors = {host: rate for (host, cls), rate in policy._strategy.host_prior.items() if cls == "text"}
    assert len(priors) == 3
    assert max(priors.values()) == pytest.approx(min(priors.values()))
    one = _new_page_wait(policy, "http://one.example/new", 5 * D)
    two = _new_page_wait(policy, "http://two.example/new", 5 * D)
    assert one == pytest.approx(two, rel=0.01)


def test_sites_of_one_page_each_get_no_prior_of_their_own():
    """Review: with one page per site the spread within a site cannot be measured (it read as 0, and every
    site's prior became its one page's own estimate); no site prior then, the class prior stands."""
    pages = {f"http://site{i}.example/": i % 2 == 0 for i in range(12)}
    policy = _crawl_hosts(pages)
    assert policy._strategy.host_prior == {}


def test_a_dateless_page_that_changes_at_every_visit_is_never_taken_for_periodic():
    """Pages without validators that change every hour or so, visited every 14-22 hours: every visit finds a
    change, which any period "explains". Such a page was once fitted as a daily page when its visits'
    intervals happened to pin a phase (one of these 50 pages), then visited a day apart for good with no visit
    able to contradict it; a period now needs the likelihood's evidence, which these histories never give."""
    rng = random.Random(0)
    policy = RevisitPolicy(RevisitSettings(), 17 * 50 / (30 * D))
    uris = [f"http://dynamic.example/p{i}" for i in range(50)]
    for uri in uris:
        policy.add(uri, T0)
    t, version = T0, 0
    for _ in range(30):
        t += rng.uniform(14, 22) * H
        for uri in uris:
            version += 1  # a new version at every visit
            visit = Visit(200, "text/html", 1000, 0.1, None, None, f"sha1:{version}")
            policy.visited(uri, visit, t + rng.uniform(0, 6 * H))
    assert [uri for uri in uris if policy.state_of(uri)["periodic"]] == []
    assert all(policy.state_of(uri)["versions"] == 30 for uri in uris)


def test_initial_waits_given_for_some_classes_keep_the_others_defaults():
    """``{"initial_wait_s": {"text": 60}}`` changes text's first wait only; images keep theirs (2 days, not
    "other"'s day); with the heritrix policy, Heritrix's."""
    ours = RevisitSettings.from_dict({"initial_wait_s": {"text": 60}})
    assert ours.initial_wait_s == {**RevisitSettings().initial_wait_s, "text": 60}
    assert ours.initial_wait("image") == 2 * 86_400
    theirs = RevisitSettings.from_dict({"policy": "heritrix", "initial_wait_s": {"image": 60}})
    assert theirs.initial_wait_s == {**RevisitSettings.heritrix().initial_wait_s, "image": 60}


def test_host_of_splits_each_authority_once_with_urlsplits_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replan asks every URI's host twice: urlsplit each time was a third of its time at 100,000 URIs (in the
    reactor). The host is kept per scheme://authority, with urlsplit's answer for every URI, odd ones too."""
    from urllib.parse import urlsplit

    import harvester.revisit.policy as policy_module

    def reference(uri: str) -> str:
        try:
            return (urlsplit(uri).hostname or "").lower()
        except ValueError:
            return ""

    odd = [
        "http://Example.COM:8080/a?b#c",
        "https://user:pw@Host.example/x",
        "http://host.example?q=/x",
        "http://host.example#frag/x",
        "http://[::1]:80/x",
        "http://[::1/x",
        "HTTP://UPPER.example/",
        "http:/one-slash.example/x",
        "http:///no-host/x",
        "  http://leading-space.example/",
        "http://tab\t.example/x",
        "ht\ttp://tab-in-scheme.example/",
        "mailto:someone@example.com",
        "dns:example.com",
        "//no-scheme.example/x",
        "http://h.example",
        "",
    ]
    monkeypatch.setattr(policy_module, "_HOSTS", {}, raising=False)
    assert [host_of(u) for u in odd] == [reference(u) for u in odd]
    assert [host_of(u) for u in odd] == [reference(u) for u in odd]  # from the cache
    splits: list[str] = []
    real = policy_module.urlsplit
    monkeypatch.setattr(policy_module, "urlsplit", lambda uri: splits.append(uri) or real(uri))
    monkeypatch.setattr(policy_module, "_HOSTS", {}, raising=False)
    policy = RevisitPolicy(RevisitSettings(min_wait_s=1, replan_interval_s=100), budget_per_s=10.0)
    for i in range(200):
        uri = f"http://h{i % 4}.example/p/{i}"
        policy.add(uri, 0.0)
        policy.visited(uri, Visit(200, "text/html", 10, 0.1, None, None, f"d{i}"), 1.0)
    policy.replan(50.0)
    assert len(splits) == 4  # one per host, not two per URI and replan


def _crawled(n: int, seed: int) -> tuple[RevisitPolicy, float]:
    """A policy whose ``n`` pages on 40 hosts were each visited twice (some changed), as a crawl's first rounds."""
    rng = random.Random(seed)
    policy = RevisitPolicy(RevisitSettings(), 17 * n / (30 * D))
    uris = [f"http://h{i % 40}.example/p{i}" for i in range(n)]
    t = T0
    for uri in uris:
        policy.add(uri, t)
    for k in range(2):
        for uri in uris:
            t += 30
            changed = k == 0 or rng.random() < 0.3
            policy.visited(uri, page(f"sha1:{uri}:{k if changed else 0}"), t)
    return policy, t + H


def test_a_replan_in_slices_is_the_replan_and_lets_uris_come_go_and_be_visited_between_slices():
    """A crawler runs the replan in slices between its fetches (``replan_steps``; in one call it held the crawl
    for 10 s at 100,000 URIs). Run to its end it is the replan, to the last bit, in slices of at most
    ``SLICE`` URIs. Between two slices a URI may be removed (it is not moved, nor brought back), visited (it
    keeps the time its visit gave) or added (it keeps its first visit); the next replan time is set when the
    plan is whole."""
    from harvester.revisit.adaptive import SLICE

    n = 3 * SLICE
    whole, now = _crawled(n, 1)
    moved = dict(whole.replan(now))
    sliced, _ = _crawled(n, 1)
    steps = sliced.replan_steps(now)
    slices = 0
    try:
        while True:
            next(steps)
            slices += 1
    except StopIteration as done:
        assert dict(done.value) == moved and len(moved) > n // 2
    assert slices > 10 * n / SLICE  # each pass over the URIs (rates, priors, each try of μ, the moves) in slices
    assert sliced.dump() == whole.dump() and sliced.next_replan_at == whole.next_replan_at

    meanwhile, _ = _crawled(n, 1)
    gone, seen, new = "http://h1.example/p1", "http://h2.example/p2", "http://new.example/"
    before = meanwhile.next_replan_at
    steps = meanwhile.replan_steps(now)
    for _ in range(3):
        next(steps)
    meanwhile.remove(gone)
    seen_at = meanwhile.visited(seen, page("sha1:seen-again"), now + 1)
    assert meanwhile.add(new, now + 2) == now + 2
    while True:
        assert meanwhile.next_replan_at == before  # until the plan is whole
        try:
            next(steps)
        except StopIteration as done:
            changed = dict(done.value)
            break
    assert gone not in changed and gone not in meanwhile.uris  # not moved, nor brought back
    assert seen not in changed and meanwhile.state_of(seen)["next_at"] == seen_at
    assert new not in changed and meanwhile.state_of(new)["next_at"] == now + 2
    assert meanwhile.next_replan_at == whole.next_replan_at
    assert len(changed) >= len(moved) - 2  # the others are planned as before
