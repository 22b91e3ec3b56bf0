"""A job's lifecycle: generation (jobgen), dispatch onto a channel's queue (dispatch), what harvesters report
(intake, progresslog), the reaper of silent jobs (reaper), continuous jobs (continuous), patch crawls (patch),
a job's files (jobfiles), and the Celery tasks harvesters and beat address by name (tasks)."""
