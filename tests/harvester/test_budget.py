"""Budgets → stop reasons."""

from __future__ import annotations

from harvester.budget import Budgets
from harvester.contracts import DomainSpec


def _budgets(**limits: int) -> Budgets:
    return Budgets([DomainSpec("a", "c", ("http://a.org/",), limits.get("objects", -1), limits.get("bytes", -1))])


def test_object_limit_reserved_at_issue() -> None:
    b = _budgets(objects=2)
    assert b.try_issue("a") == ""
    assert b.try_issue("a") == ""
    assert b.try_issue("a") == "WAIT"  # two in flight may fill the budget
    b.release("a")  # one failed
    assert b.try_issue("a") == ""
    b.charge("a", 10)
    b.charge("a", 10)
    assert b.stop_reason("a", remaining=5, ended_by="finished") == "OBJECT_LIMIT"


def test_prerequisites_are_never_refused() -> None:
    b = _budgets(objects=0)
    assert b.try_issue("a", prerequisite=True) == ""
    assert b.try_issue("a") == "OBJECT_LIMIT"


def test_size_limit() -> None:
    b = _budgets(bytes=100)
    b.try_issue("a")
    b.charge("a", 150)
    assert b.try_issue("a") == "SIZE_LIMIT"
    assert b.stop_reason("a", 3, "finished") == "SIZE_LIMIT"
    assert b.annotation("SIZE_LIMIT") == "Q:groupMaxAllKb"


def test_other_stop_reasons() -> None:
    b = _budgets()
    assert b.stop_reason("a", 0, "finished") == "DOWNLOAD_COMPLETE"
    assert b.stop_reason("a", 0, "time_limit") == "DOWNLOAD_COMPLETE"  # nothing was left
    assert b.stop_reason("a", 7, "time_limit") == "TIME_LIMIT"
    assert b.stop_reason("a", 7, "stopped") == "DOWNLOAD_UNFINISHED"


def test_snapshot_restore() -> None:
    b = _budgets(objects=5)
    b.try_issue("a")
    b.charge("a", 42)
    c = _budgets(objects=5)
    c.restore(b.snapshot())
    assert (c.get("a").objects, c.get("a").bytes) == (1, 42)
    [r] = c.results({}, "finished")
    assert (r.name, r.objects, r.bytes, r.stop_reason) == ("a", 1, 42, "DOWNLOAD_COMPLETE")
