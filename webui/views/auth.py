"""The web UI's own login and logout pages (Django's views, our template)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views


class LoginView(auth_views.LoginView):
    template_name = "webui/login.html"
    redirect_authenticated_user = True


class LogoutView(auth_views.LogoutView):
    """POST only (Django's rule): a link or an image cannot log anyone out."""

    next_page = "webui:login"
