"""/jobs/: the jobs list, running jobs, the job page and job actions, a job's pages and a URL's captures across
jobs (namespace "jobs")."""

from django.urls import path

from webui.views import continuous, jobs, pageqa, pages

app_name = "jobs"
urlpatterns = [
    path("", jobs.job_list, name="list"),
    path("running/", jobs.running, name="running"),
    path("running.json", jobs.running_json, name="running-json"),
    path("captures/", pages.captures_view, name="captures"),
    path("<int:job_id>/", jobs.job_detail, name="job"),
    path("<int:job_id>/progress.json", jobs.progress_json, name="progress-json"),
    path("<int:job_id>/control/", jobs.job_control, name="control"),
    path("<int:job_id>/trap/", jobs.job_trap, name="trap"),
    path("<int:job_id>/trap-preview.json", jobs.trap_preview, name="trap-preview"),
    path("<int:job_id>/resubmit/", jobs.job_resubmit, name="resubmit"),
    path("<int:job_id>/reject/", jobs.job_reject, name="reject"),
    path("<int:job_id>/reports/<str:name>", jobs.job_report, name="report"),
    path("<int:job_id>/crawl.log", jobs.crawl_log, name="crawl-log"),
    path("<int:job_id>/continuous/", continuous.live, name="continuous"),
    path("<int:job_id>/uri/", continuous.uri_history, name="uri"),
    # the same inside the layout (with the way back to the job), each linking to its raw download above
    path("<int:job_id>/report/<str:name>/", jobs.report_page, name="report-page"),
    path("<int:job_id>/crawl-log/", jobs.crawl_log_page, name="crawl-log-page"),
    path("<int:job_id>/pages/", pages.job_pages_view, name="pages"),
    path("<int:job_id>/qa/", pageqa.job_qa, name="qa"),
    path("<int:job_id>/qa/run/", pageqa.qa_run, name="qa-run"),
    path("<int:job_id>/qa/patch/", pageqa.qa_patch, name="qa-patch"),
    path("<int:job_id>/qa/mark/", pageqa.qa_mark, name="qa-mark"),
    path("<int:job_id>/qa/thumb/<int:page_id>/<str:which>.png", pageqa.qa_thumb, name="qa-thumb"),
]
