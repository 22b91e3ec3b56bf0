"""The web UI's URLs, by area. Every view is guarded by webui.access.require (tests/webui/test_access.py
walks this list). The Jobs and QA pages live under /jobs/ and /qa/ (their own url modules)."""

from django.urls import path

from webui.views import account, auth, dashboard, definitions, domains, library

app_name = "webui"

urlpatterns = [
    # --- login and dashboard ------------------------------------------------------------------------
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("", dashboard.home, name="home"),
    # --- the user's own API tokens (REST API, /metrics) -------------------------------------------------
    path("account/tokens/", account.token_list, name="tokens"),
    path("account/tokens/<int:pk>/revoke/", account.token_revoke, name="token-revoke"),
    # --- domains, their seed lists and configurations ---------------------------------------------
    path("domains/", domains.domain_list, name="domains"),
    path("domains/new/", domains.domain_create, name="domain-create"),
    path("domains/<str:name>/", domains.domain_detail, name="domain"),
    path("domains/<str:name>/edit/", domains.domain_edit, name="domain-edit"),
    path("domains/<str:name>/seedlists/new/", domains.seedlist_edit, name="seedlist-create"),
    path("domains/<str:name>/seedlists/<int:pk>/", domains.seedlist_edit, name="seedlist-edit"),
    path("domains/<str:name>/configurations/new/", domains.configuration_edit, name="configuration-create"),
    path("domains/<str:name>/configurations/<int:pk>/", domains.configuration_edit, name="configuration-edit"),
    # --- crawl templates, schedules, channels, global crawler-trap lists -------------------------
    path("templates/", library.template_list, name="templates"),
    path("templates/new/", library.template_edit, name="template-create"),
    path("templates/<int:pk>/", library.template_edit, name="template-edit"),
    path("schedules/", library.schedule_list, name="schedules"),
    path("schedules/new/", library.schedule_edit, name="schedule-create"),
    path("schedules/<int:pk>/", library.schedule_edit, name="schedule-edit"),
    path("channels/", library.channel_list, name="channels"),
    path("channels/new/", library.channel_edit, name="channel-create"),
    path("channels/<int:pk>/", library.channel_edit, name="channel-edit"),
    path("traps/", library.trap_list, name="traps"),
    path("traps/new/", library.trap_edit, name="trap-create"),
    path("traps/<int:pk>/", library.trap_edit, name="trap-edit"),
    path("traps/<int:pk>/active/", library.trap_toggle, name="trap-toggle"),
    # --- harvest definitions ----------------------------------------------------------------------
    path("definitions/", definitions.definition_list, name="definitions"),
    path("definitions/new/<str:kind>/", definitions.definition_edit, name="definition-create"),
    path("definitions/<int:pk>/", definitions.definition_detail, name="definition"),
    path("definitions/<int:pk>/edit/", definitions.definition_edit, name="definition-edit"),
    path("definitions/<int:pk>/seeds/", definitions.add_seeds, name="definition-seeds"),
    path("definitions/<int:pk>/remove/", definitions.remove_configurations, name="definition-remove"),
    path("definitions/<int:pk>/activate/", definitions.activate, name="definition-activate"),
    path("definitions/<int:pk>/deactivate/", definitions.deactivate, name="definition-deactivate"),
    path("definitions/<int:pk>/run/", definitions.run_now, name="definition-run"),
]
