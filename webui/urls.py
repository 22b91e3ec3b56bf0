from django.urls import path

from webui.views import dashboard

app_name = "webui"
urlpatterns = [path("", dashboard.home, name="home")]
