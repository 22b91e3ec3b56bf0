from django.contrib import admin
from django.urls import include, path

from orchestrator.api import metrics
from orchestrator.api.urls import api

admin.site.site_header = "netharvest administration"
admin.site.site_title = "netharvest"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("metrics", metrics.view, name="metrics"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("jobs/", include("webui.jobs_urls")),
    path("qa/", include("webui.qa_urls")),
    path("replay/", include("webui.replay_urls")),
    path("selection/", include("webui.selection_urls")),
    path("", include("webui.urls")),
]

# The site's own error pages, in its layout (webui/views/errors.py).
handler400 = "webui.views.errors.bad_request"
handler403 = "webui.views.errors.permission_denied"
handler404 = "webui.views.errors.page_not_found"
handler500 = "webui.views.errors.server_error"
