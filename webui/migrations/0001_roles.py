"""The roles as Django groups, with their permissions (issue 6: viewer, curator, crawl engineer, admin).

Roles are cumulative only where the issue says so: every role reads; curators and crawl engineers
each get their own capability; admins get everything, including users and groups (in the Django admin,
for which the user must also be marked staff).
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations, models

READ_MODELS = ["domain", "seedlist", "domainconfiguration", "crawltemplate", "schedule", "harvestchannel",
               "harvestdefinition", "globalcrawlertraplist", "job", "jobdomain", "jobcontrol", "harvestinfo",
               "archivefile", "archivefilecopy", "extendedfield"]
CURATOR_MODELS = ["domain", "seedlist", "domainconfiguration", "harvestdefinition", "schedule"]
ENGINEER_MODELS = ["crawltemplate", "harvestchannel", "globalcrawlertraplist", "jobcontrol", "archivefile",
                   "archivefilecopy"]


def make_roles(apps, schema_editor):
    # Permissions are normally made after all migrations ran; make them now so the groups can hold them.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")

    def perms(*codenames, app="harvest"):
        return list(Permission.objects.filter(content_type__app_label=app, codename__in=codenames))

    viewer = perms("view_ui", app="webui") + perms(*(f"view_{m}" for m in READ_MODELS))
    curator = viewer + perms("curate", app="webui") + perms(
        *(f"{action}_{m}" for m in CURATOR_MODELS for action in ("add", "change")))
    engineer = viewer + perms("engineer", app="webui") + perms(
        *(f"{action}_{m}" for m in ENGINEER_MODELS for action in ("add", "change")))
    admin = list({p.pk: p for p in curator + engineer}.values()) + list(
        Permission.objects.filter(content_type__app_label="auth"))
    for name, permissions in (("viewer", viewer), ("curator", curator), ("crawl engineer", engineer),
                              ("admin", admin)):
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*permissions)


class Migration(migrations.Migration):
    initial = True
    dependencies = [("auth", "0012_alter_user_first_name_max_length"), ("contenttypes", "0002_remove_content_type_name"),
                    ("harvest", "0001_squashed_0017")]
    operations = [
        migrations.CreateModel(
            name="Access",
            fields=[("id", models.AutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"))],
            options={"managed": False, "default_permissions": (), "permissions": [
                ("view_ui", "Can read every page of the web UI"),
                ("curate", "Can edit domains, harvest definitions, selections and schedules, and run harvests now"),
                ("engineer", "Can edit crawl templates, channels and crawler-trap lists, control jobs and storage"),
            ]},
        ),
        migrations.RunPython(make_roles, migrations.RunPython.noop),
    ]
