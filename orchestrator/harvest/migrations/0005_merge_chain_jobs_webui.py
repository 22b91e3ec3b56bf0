"""Joins the migrations the indexer chain, the jobs pages and the web UI added side by side."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("harvest", "0003_chain"), ("harvest", "0004_merge_jobs_webui")]
    operations = []
