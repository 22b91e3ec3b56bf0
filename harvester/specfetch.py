"""Read the JobSpec a job message points at (:class:`harvester.contracts.JobRef`; issue 15, "dispatch by
reference"): ``GET <spec_url>`` on the orchestrator's API with the harvester's API token.

Why by reference: a broad-crawl job names 10,000 domains (2–7 MB of JSON); a million-domain snapshot put
250 MB through the broker and held it there until every harvester had taken its job. The message is now a
few dozen bytes, and the frozen spec stays where it was frozen (the job's row), read once by the harvester
that runs it. The standard library's HTTP client is enough for one GET with a bearer token: no Django here.

The token is ``NETHARVEST_API_TOKEN`` (a token of a user with the ``read`` role: ``netharvest tokens create``).
A spec that cannot be read raises :class:`SpecUnreadable` with one line saying what and where. When the job
is at fault (no such job, a body that is not its spec) the caller answers with a FAILED result
(``jobspec-unreadable``); when this harvester or the API is (401/403, unreachable, 5xx after the retries) it
hands the message back to the queue after a pause, so a misconfigured machine never fails a broad crawl's jobs.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

from harvester.contracts import JobRef, is_job_ref
from harvester.defaults import SPEC_FETCH_TIMEOUT_S, SPEC_FETCH_TRIES


class SpecUnreadable(Exception):
    """The spec a JobRef points at could not be read; ``str()`` says which URL and why. ``this_harvester``:
    the fault is this machine's or the API's (no or a wrong token, unreachable, a server error), not the
    job's: the message goes back to the queue for another try, the job is not failed."""

    def __init__(self, message: str, this_harvester: bool = False) -> None:
        super().__init__(message)
        self.this_harvester = this_harvester


def fetch_spec(ref: JobRef, tries: int = SPEC_FETCH_TRIES, sleep: Any = time.sleep) -> dict[str, Any]:
    """The JobSpec (as JSON) of ``ref``: retried on a connection error or a 5xx, at once refused on a 4xx
    or on a spec that is not this job's."""
    request = urllib.request.Request(ref.spec_url, headers={"Accept": "application/json"})
    token = os.environ.get("NETHARVEST_API_TOKEN", "").strip()
    if token:
        request.add_unredirected_header("Authorization", f"Bearer {token}")  # never to a redirect's host
    reason = "no try made"
    for attempt in range(max(1, tries)):
        if attempt:
            sleep(min(2 ** (attempt - 1), 30))
        try:
            with urllib.request.urlopen(request, timeout=SPEC_FETCH_TIMEOUT_S) as response:
                body = response.read()
            break
        except urllib.error.HTTPError as exc:
            reason = f"HTTP {exc.code} {exc.reason}"
            if exc.code < 500:
                hint = " (set NETHARVEST_API_TOKEN to a token with the read role)" if exc.code in (401, 403) else ""
                raise SpecUnreadable(
                    f"job {ref.job_id}: {ref.spec_url}: {reason}{hint}", this_harvester=exc.code in (401, 403)
                ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = " ".join(str(getattr(exc, "reason", exc)).split())[:200]
    else:
        raise SpecUnreadable(
            f"job {ref.job_id}: {ref.spec_url}: {reason} (after {max(1, tries)} tries)", this_harvester=True
        )
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise SpecUnreadable(f"job {ref.job_id}: {ref.spec_url}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("job_id") != ref.job_id:
        found = data.get("job_id") if isinstance(data, dict) else type(data).__name__
        raise SpecUnreadable(f"job {ref.job_id}: {ref.spec_url}: the spec read is job {found}'s, not this job's")
    return data


def resolve(message: Any) -> Any:
    """The JobSpec JSON a ``run_job`` argument stands for: itself, or what its JobRef points at.

    Raises :class:`ContractError` for a malformed JobRef and :class:`SpecUnreadable` for a spec not read."""
    return fetch_spec(JobRef.from_dict(message)) if is_job_ref(message) else message
