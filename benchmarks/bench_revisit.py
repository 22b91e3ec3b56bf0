"""Benchmark: revisit policies on a simulated web (issue 12): a fixed-interval loop, Heritrix's adaptive
revisiting (``RevisitSettings.heritrix()``) and netharvest's adaptive policy, at a starved and an
ample fetch budget, in one run.

    .venv/bin/python benchmarks/bench_revisit.py [--urls 2000] [--days 30] [--seeds 1,2,3]
        [--mixes mixed,news,archive,cho] [--starved 17] [--ample 120] [--freshness-weight W]
        [--by-class] [--oracle] [--ceiling] [--webs independent,sites] [--tiny]

The web, the frontier and the scorer are benchmarks/revisit_sim.py (read its docstring for the
scenario). ``--starved``/``--ample`` are visits per URL per 30 days: the budget in fetches per second is
that × URLs / 30 days. The fixed loop revisits every URL every URLs / budget seconds (it spends the whole
budget); Heritrix and the adaptive policy get the same budget from the frontier. All three use the same
strip regex (the pages' clock) and the same politeness. Every (seed, mix) prints a table; the summary
compares the goals of the issue: at the starved budget the adaptive policy captures >= 1.3 x the
versions that Heritrix AR captures with at least its freshness; at the ample budget it captures at
least as many as the fixed loop.

``--by-class`` adds, for each web, where the versions and the visits are at the starved budget, by class
of page (change process, image/pdf, noise, lying validators): Heritrix AR against the adaptive policy.
``--oracle`` adds two rows: ``oracle``, the adaptive policy told each page's true mean change rate
(:func:`benchmarks.revisit_sim.oracle_policy`), and ``oracle-sp``, told only the rates of the static and
Poisson pages (the pages that follow the policy's model): the gain of ``oracle-sp`` over ``adaptive`` is
the estimation error, which no estimator working from the same visits removes entirely; ``oracle-period``
is told every periodic page's period (not its phase) at its first visit: the most that learning the
periods of pages on hosts without Last-Modified dates could gain. ``--ceiling``
adds, per web, the captures of a policy that knows every page's change process, at AR's starved
freshness and with the starved budget (:mod:`benchmarks.revisit_ceiling`): the gap between it and the
adaptive policy is the price of learning the processes from visits; and the *causal* ceiling, the same
with static and Poisson pages at their true rates instead of the changes that happened (no policy can
know those in advance).

``--webs``: ``independent`` (the default) draws every page's change process on its own; ``sites`` gives
each host a change profile that most of its pages follow (``make_web(sites=True)``), the webs on which
pooling evidence over a site's pages can be measured; ``independent,sites`` runs both.

The adaptive starved run also reports the policy's own CPU time (``visited`` per call, ``replan`` per URI
and replan), measured around the calls with ``time.process_time`` (CPU seconds, not wall time, so the
load of the machine does not enter), and how late the frontier issued its revisits (every visit, including
the one planned just after a periodic page's change, comes that much after its time).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.revisit_ceiling import ceiling  # noqa: E402
from benchmarks.revisit_sim import CLOCK, DAY, MIXES, PERIODS, Score, make_web, oracle_policy, simulate  # noqa: E402
from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit  # noqa: E402

POLICIES = ("fixed", "heritrix", "adaptive")
ORACLES = {"oracle": None, "oracle-sp": frozenset({"static", "poisson"}), "oracle-period": frozenset({"period"})}


class TimedPolicy(RevisitPolicy):
    """The policy under test, with the CPU seconds of its ``visited`` and ``replan`` calls added up."""

    def __init__(self, settings: RevisitSettings, budget_per_s: float | None = None) -> None:
        super().__init__(settings, budget_per_s)
        self.cpu = {"visited": 0.0, "visited_calls": 0, "replan": 0.0, "replan_uris": 0}
        self.late: list[float] = []  # how late the frontier issued each revisit (A_FETCH_OVERDUE), seconds

    def visited(self, uri: str, visit: Visit, now: float) -> float:
        started = time.process_time()
        at = super().visited(uri, visit, now)
        self.cpu["visited"] += time.process_time() - started
        self.cpu["visited_calls"] += 1
        if self.uris[uri].visits > 1:
            self.late.append(self.uris[uri].overdue_ms / 1000)
        return at

    def replan(self, now: float) -> dict[str, float]:
        started = time.process_time()
        moved = dict(super().replan(now))
        self.cpu["replan"] += time.process_time() - started
        self.cpu["replan_uris"] += len(self.uris)
        return moved


def settings_for(policy: str, urls: int, budget: float, freshness_weight: float | None = None) -> RevisitSettings:
    if policy == "fixed":
        return RevisitSettings.fixed(max(1, round(urls / budget)), strip=(CLOCK,))
    if policy == "heritrix":
        return RevisitSettings.heritrix(strip=(CLOCK,))
    if freshness_weight is not None:
        return RevisitSettings(strip=(CLOCK,), freshness_weight=freshness_weight)
    return RevisitSettings(strip=(CLOCK,))


def row(label: str, budget_name: str, s: Score, budget: float, days: float, wall: float) -> str:
    used = s.visits / (budget * days * DAY)
    return (
        f"| {label} | {budget_name} | {s.versions:,} | {s.captured:,} | {s.capture_share:.3f} | "
        f"{s.freshness:.3f} | {s.visits:,} | {used:.2f} | {s.wasted:,} | {s.header_only:,} | "
        f"{s.bytes_downloaded / 1e6:,.1f} | {s.bytes_stored / 1e6:,.1f} | {s.politeness_violations} | "
        f"{s.budget_violations} | {s.header_misses} | {wall:.1f} |"
    )


def _timed(into: dict[str, TimedPolicy], settings: RevisitSettings, budget_per_s: float) -> TimedPolicy:
    into["policy"] = TimedPolicy(settings, budget_per_s)
    return into["policy"]


HEADER = (
    "| policy | budget | versions >= 1 h | captured | share | freshness | visits | budget used | wasted | "
    "header-only | MB down | MB stored | polite viol. | budget viol. | header misses | wall s |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def print_by_class(ar: Score, ours: Score) -> None:
    print("\nstarved budget, by class of page: Heritrix AR | adaptive\n")
    print(
        "| class | pages | versions >= 1 h | AR captured | AR visits | AR freshness | adaptive captured | "
        "adaptive visits | adaptive freshness |\n|---|---|---|---|---|---|---|---|---|"
    )
    for name in sorted(ar.by_class):
        pages, versions, cap, visits, fresh, life = ar.by_class[name]
        _, _, cap2, visits2, fresh2, _ = ours.by_class[name]
        print(
            f"| {name} | {pages:,} | {versions:,} | {cap:,} | {visits:,} | {fresh / life:.3f} | {cap2:,} | "
            f"{visits2:,} | {fresh2 / life:.3f} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--days", type=float, default=30.0)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--mixes", default=None, help="mixed,news,archive (the default) and/or cho")
    parser.add_argument("--starved", type=float, default=17.0, help="visits per URL per 30 days")
    parser.add_argument("--ample", type=float, default=120.0, help="visits per URL per 30 days")
    parser.add_argument(
        "--freshness-weight",
        type=float,
        default=None,
        help="the adaptive policy's freshness_weight (default: RevisitSettings' default)",
    )
    parser.add_argument("--by-class", action="store_true", help="per class of page at the starved budget")
    parser.add_argument("--oracle", action="store_true", help="also the adaptive policy with the true rates")
    parser.add_argument(
        "--ceiling", action="store_true", help="captures of a policy knowing every process, at AR's freshness"
    )
    parser.add_argument(
        "--webs",
        default="independent",
        help="independent (every page's process drawn alone), sites (hosts with a change profile), or both",
    )
    parser.add_argument(
        "--periods",
        default="editorial",
        help="periodic pages on editorial periods (3 h ... a week, the default) or any (log-uniform, 2 h to 7 days)",
    )
    parser.add_argument("--tiny", action="store_true", help="200 URLs x 4 days, one seed, mix mixed unless given")
    args = parser.parse_args(argv)
    if args.tiny:
        args.urls, args.days, args.seeds = 200, 4.0, "1"
    args.mixes = args.mixes or ("mixed" if args.tiny else "mixed,news,archive")
    seeds = [int(s) for s in args.seeds.split(",")]
    mixes = args.mixes.split(",")
    if set(mixes) - set(MIXES):
        parser.error(f"--mixes: {', '.join(MIXES)}, not {args.mixes!r}")
    if args.periods not in PERIODS:
        parser.error(f"--periods: {' or '.join(PERIODS)}, not {args.periods!r}")
    webs = args.webs.split(",")
    if set(webs) - {"independent", "sites"}:
        parser.error(f"--webs: independent and/or sites, not {args.webs!r}")
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.urls:,} URLs x {args.days:g} days; starved {args.starved:g}, ample {args.ample:g} "
        f"visits/URL/30 days"
    )
    month = 30 * DAY
    budgets = {"starved": args.starved * args.urls / month, "ample": args.ample * args.urls / month}
    summary = []
    met = True
    for web, mix, seed in ((w, m, s) for w in webs for m in mixes for s in seeds):
        pages = make_web(args.urls, args.days, seed, mix, sites=web == "sites", periods=args.periods)
        label = (f"{mix}+sites" if web == "sites" else mix) + ("" if args.periods == "editorial" else "+any")
        print(f"\n### mix {label}, seed {seed}: {len(pages):,} pages\n")
        print(HEADER)
        results: dict[tuple[str, str], Score] = {}
        policies = (*POLICIES, *ORACLES) if args.oracle else POLICIES
        timed: dict[str, TimedPolicy] = {}
        for budget_name, budget in budgets.items():
            for policy in policies:
                started = time.perf_counter()
                if policy in ORACLES:
                    make = oracle_policy(pages, args.days, ORACLES[policy])
                elif policy == "adaptive" and budget_name == "starved":
                    make = partial(_timed, timed)
                else:
                    make = RevisitPolicy
                settings = settings_for(
                    "adaptive" if policy in ORACLES else policy, args.urls, budget, args.freshness_weight
                )
                s = simulate(pages, settings, budget, args.days, make_policy=make)
                results[policy, budget_name] = s
                print(row(policy, budget_name, s, budget, args.days, time.perf_counter() - started))
        cpu = timed["policy"].cpu
        print(
            "\nadaptive policy CPU at the starved budget: visited() "
            f"{cpu['visited'] / cpu['visited_calls'] * 1e6:.0f} µs per call ({cpu['visited_calls']:,} calls), "
            "replan() "
            f"{cpu['replan'] / max(1, cpu['replan_uris']) * 1e6:.1f} µs per URI and replan"
        )
        late = sorted(timed["policy"].late) or [0.0]
        print(
            "adaptive revisits at the starved budget, issued late by the frontier: "
            f"mean {sum(late) / len(late) / 3600:.2f} h, median {late[len(late) // 2] / 3600:.2f} h, "
            f"90th percentile {late[int(0.9 * len(late))] / 3600:.2f} h"
        )
        if args.by_class:
            print_by_class(results["heritrix", "starved"], results["adaptive", "starved"])
        ar, ours = results["heritrix", "starved"], results["adaptive", "starved"]
        fixed_ample, ours_ample = results["fixed", "ample"], results["adaptive", "ample"]
        ratio = ours.captured / max(1, ar.captured)
        if args.ceiling:
            visits = budgets["starved"] * args.days * DAY
            for name, causal in (("every change process known", False), ("causal: true rates, no hindsight", True)):
                known, fresh = ceiling(pages, args.days, visits, ar.freshness, causal)
                print(
                    f"{chr(10) if not causal else ''}ceiling ({name}), starved budget, freshness >= AR's "
                    f"{ar.freshness:.3f}: {known:,.0f} captured = {known / max(1, ar.captured):.2f} x AR "
                    f"(freshness {fresh:.3f})"
                )
        ample_ratio = ours_ample.captured / max(1, fixed_ample.captured)
        ok = ratio >= 1.3 and ours.freshness >= ar.freshness and ample_ratio >= 1.0
        met &= ok
        summary.append((label, seed, ratio, ours.freshness, ar.freshness, ample_ratio, ok))
    print("\n### summary\n")
    print(
        "| mix | seed | starved: captured adaptive / AR | freshness adaptive | freshness AR | "
        "ample: captured adaptive / fixed | goals met |\n|---|---|---|---|---|---|---|"
    )
    for mix, seed, ratio, fresh, fresh_ar, ample_ratio, ok in summary:
        print(
            f"| {mix} | {seed} | {ratio:.2f} | {fresh:.3f} | {fresh_ar:.3f} | {ample_ratio:.2f} | "
            f"{'yes' if ok else 'NO'} |"
        )
    print(f"\nall goals met: {'yes' if met else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
