"""When harvests run: schedule arithmetic (schedules), due definitions → runs → jobs, each run made exactly
once (scheduler), and the coming runs with their expected load (forecast)."""
