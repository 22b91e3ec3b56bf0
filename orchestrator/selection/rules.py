"""The technical settings of a record and which of them combine (shared/seeds/001…, 2.1.2).

One place, read by the model's validation, the form (which shows the table) and the transfer.
"""

from __future__ import annotations

BUDGETS = [
    ("small", "small (< 10,000 URLs)"),
    ("medium", "medium (10,000–100,000 URLs)"),
    ("large", "large (> 100,000 URLs)"),
]
FREQUENCIES = [
    ("daily", "daily"),
    ("weekly", "weekly"),
    ("monthly", "monthly"),
    ("twice-yearly", "twice-yearly"),
    ("annual", "annual"),
]
DEPTHS = [
    ("page", "the page only"),
    ("one-click", "one click from the seed"),
    ("two-clicks", "two clicks"),
    ("path", "the seed's directory"),
    ("host", "the whole host"),
    ("domain", "the whole domain"),
]

#: (budget, frequency) pairs that cannot be harvested in practice: a large site cannot be collected in
#: its entirety every day, nor a medium one.
INCOMPATIBLE: frozenset[tuple[str, str]] = frozenset(
    {
        ("large", "daily"),
        ("large", "weekly"),
        ("medium", "daily"),
    }
)


def combines(budget: str, frequency: str) -> bool:
    return (budget, frequency) not in INCOMPATIBLE


def compatibility_table() -> list[tuple[str, list[tuple[str, bool]]]]:
    """Rows of budgets × columns of frequencies, True where they combine: what the form shows."""
    return [
        (budget, [(frequency, combines(budget, frequency)) for frequency, _ in FREQUENCIES]) for budget, _ in BUDGETS
    ]
