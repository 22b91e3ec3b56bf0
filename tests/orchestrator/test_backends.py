from django.db import connection

from tests.conftest import uses_postgres


def test_suite_runs_on_the_backend_it_reports(db):
    assert connection.vendor == ("postgresql" if uses_postgres() else "sqlite")
