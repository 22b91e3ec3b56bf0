"""Quality assurance: QA statistics per job, run and year (stats) and automated page QA in headless Chromium
(pageqa, browser, score), with its Celery tasks on the ``qa`` queue (tasks)."""
