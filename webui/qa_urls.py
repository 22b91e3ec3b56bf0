"""/qa/: QA statistics per job, harvest run and year (namespace "qa")."""

from django.urls import path

from webui.views import qa

app_name = "qa"
urlpatterns = [
    path("", qa.index, name="index"),
    path("job/<int:job_id>/", qa.job, name="job"),
    path("harvest/<int:harvest_id>/", qa.harvest_runs, name="harvest"),
    path("harvest/<int:harvest_id>/run/<int:run>/", qa.run, name="run"),
    path("year/<int:year>/", qa.year, name="year"),
]
