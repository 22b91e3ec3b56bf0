"""/replay/…: the replay service (pywb) behind the web UI's login (namespace "replay"; webui/views/replay.py)."""

from django.urls import re_path

from webui.views import replay

app_name = "replay"
urlpatterns = [
    re_path(r"^(?P<rest>.*)$", replay.proxy, name="proxy"),
]
