"""The selection tool's URLs, mounted at /selection/."""

from django.urls import path

from webui.views import selection

app_name = "selection"
urlpatterns = [
    path("", selection.collections, name="collections"),
    path("records/", selection.records, name="records"),
    path("records/bulk/", selection.bulk, name="bulk"),
    path("records/<int:pk>/", selection.record, name="record"),
    path("searches/", selection.save_search, name="save_search"),
    path("searches/<int:pk>/delete/", selection.delete_search, name="delete_search"),
    path("add/", selection.add, name="add"),
    path("add/details/", selection.add_details, name="add_details"),
    path("transfer/", selection.transfer_view, name="transfer"),
]
