"""The schema as migrations 0001 to 0017 left it, in one migration (squashed before the first release).

0001-0008 grew on three branches (the indexer chain, jobs, the web UI) joined by two merge migrations, and
0009-0017 added fields, models and indexes one issue at a time, some altering or removing what an earlier one
had made. This is the state 0017 reached, written as Django's autodetector writes an initial migration (from
the old graph's state at 0017, so nothing is retyped by hand), plus the steps that matter on a new database:
the default template and channels (was 0002_defaults), the ``continuous`` channel (was 0011), the PostgreSQL
trigram indexes of the domain search (was 0003_webui; see orchestrator.harvest.curation.domainsearch) and,
on PostgreSQL, LZ4 compression of ``harvest_job.spec`` (was 0017; 0017's other step, dropping JobDomain's
index on job_id alone, is the state itself: ``db_index=False``). 0006's backfill of JobStats.seeds is not
here: on a new database there is no JobStats row to fill.

``replaces`` names the migrations it stands for (the original 0001-0017, not the interim 0001_squashed_0008,
which no database outside a development machine applied): a database that applied all of them takes this one
as applied and goes on with 0018, which stays a migration of its own because the released main's databases
stop at 0017 (a squash that also replaced 0018 would be part-applied there, and unusable without 0018's file).
A database stopped part-way through 0001-0017 must first migrate to 0017 with a checkout that still has
those files. See docs/DESIGN.md, "Where things are".
"""

import django.core.validators
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def create_defaults(apps, schema_editor):
    CrawlTemplate = apps.get_model("harvest", "CrawlTemplate")
    HarvestChannel = apps.get_model("harvest", "HarvestChannel")
    CrawlTemplate.objects.get_or_create(
        name="default", defaults={"description": "Default template: the registrable domain of each seed, "
                                                 "robots.txt obeyed, Heritrix's politeness defaults."})
    HarvestChannel.objects.get_or_create(
        name="focused", defaults={"priority": "high", "default_for": "selective",
                                  "comments": "Selective harvests; served by high-priority harvesters."})
    HarvestChannel.objects.get_or_create(
        name="snapshot", defaults={"priority": "low", "default_for": "snapshot",
                                   "comments": "Broad (snapshot) harvests; served by low-priority harvesters."})


TRIGRAM = [
    "CREATE INDEX IF NOT EXISTS domain_name_trgm ON harvest_domain USING gin (name gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS domain_traps_trgm ON harvest_domain USING gin (crawler_traps gin_trgm_ops) "
    "WHERE crawler_traps <> ''",
    "CREATE INDEX IF NOT EXISTS domain_comments_trgm ON harvest_domain USING gin (comments gin_trgm_ops) "
    "WHERE comments <> ''",
]
BACKWARD = ["DROP INDEX IF EXISTS domain_name_trgm",
            "DROP INDEX IF EXISTS domain_traps_trgm", "DROP INDEX IF EXISTS domain_comments_trgm"]


def trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if not cur.fetchone():
            cur.execute("SAVEPOINT trgm")
            try:
                cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            except Exception as exc:  # noqa: BLE001 - any refusal means: no trigram indexes
                cur.execute("ROLLBACK TO SAVEPOINT trgm")
                print(f"\n  pg_trgm not available ({exc}); infix domain searches will scan")
                return
        for sql in TRIGRAM:
            cur.execute(sql)


def drop_trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        for sql in BACKWARD:
            cur.execute(sql)


def continuous_channel(apps, schema_editor):
    """The channel continuous definitions run on: the one already marked ``default_for="continuous"`` if there
    is one (the constraint ``channel_one_default_per_kind`` allows no second), else ``continuous`` (made if
    missing). Existing continuous definitions move to it: they must not share a channel with selective or
    snapshot harvests (HarvestDefinition.clean)."""
    HarvestChannel = apps.get_model("harvest", "HarvestChannel")
    HarvestDefinition = apps.get_model("harvest", "HarvestDefinition")
    channel = HarvestChannel.objects.filter(default_for="continuous").first()
    if channel is None:
        channel, _ = HarvestChannel.objects.get_or_create(
            name="continuous", defaults={
                "priority": "high", "default_for": "continuous",
                "comments": "Continuous (adaptive-revisit) harvests: one long-lived job per definition; served by "
                            "workers of their own, so they never hold a selective or snapshot harvester."})
        if channel.default_for != "continuous":
            # A channel named "continuous" made by hand for another kind stays that kind's default.
            if channel.default_for:
                channel, _ = HarvestChannel.objects.get_or_create(
                    name="continuous-harvests", defaults={"priority": "high", "default_for": "continuous"})
            else:
                HarvestChannel.objects.filter(pk=channel.pk).update(default_for="continuous")
    HarvestDefinition.objects.filter(kind="continuous").exclude(channel=channel).update(channel=channel)


def spec_lz4(apps, schema_editor) -> None:
    """Was 0017: a broad-crawl job's spec is 2-7 MB of JSON, and compressing it with pglz was half the cost of storing it."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")
        if cur.fetchone():
            cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET COMPRESSION lz4")


def spec_pglz(apps, schema_editor) -> None:
    # SET COMPRESSION exists from PostgreSQL 14 on (where the forward step found nothing to do, neither here).
    if schema_editor.connection.vendor == "postgresql" and schema_editor.connection.pg_version >= 140000:
        with schema_editor.connection.cursor() as cur:
            cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET COMPRESSION DEFAULT")


class Migration(migrations.Migration):

    replaces = [
        ('harvest', '0001_initial'),
        ('harvest', '0002_defaults'),
        ('harvest', '0003_webui'),
        ('harvest', '0003_jobs'),
        ('harvest', '0004_merge_jobs_webui'),
        ('harvest', '0003_chain'),
        ('harvest', '0005_merge_chain_jobs_webui'),
        ('harvest', '0006_jobs_seeds'),
        ('harvest', '0007_reapersight'),
        ('harvest', '0007_free_text_limits'),
        ('harvest', '0008_merge_limits_reapersight'),
        ('harvest', '0009_template_respect_crawl_delay'),
        ('harvest', '0010_canonicalisation_source_tags'),
        ('harvest', '0011_continuous_run'),
        ('harvest', '0012_progress_samples'),
        ('harvest', '0013_job_status_ended'),
        ('harvest', '0014_page_qa'),
        ('harvest', '0015_remove_legacy_revisit_fields'),
        ('harvest', '0017_jobgen_at_scale'),
    ]

    initial = True

    dependencies = [
    ]

    operations = [
        migrations.CreateModel(
            name='CrawlTemplate',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True)),
                ('description', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('active', models.BooleanField(default=True, help_text='Inactive templates cannot be chosen for new configurations.')),
                ('scope', models.CharField(choices=[('surt', 'surt'), ('host', 'host'), ('domain', 'domain'), ('path', 'path')], default='domain', help_text="surt: SURT prefixes implied by the seeds (Heritrix); host: the seeds' hosts; domain: the seeds' registrable domains and subdomains; path: host and directory of each seed.", max_length=10)),
                ('max_hops', models.PositiveIntegerField(default=20, help_text='Maximum link hops from a seed.')),
                ('max_embed_hops', models.PositiveIntegerField(default=2, help_text='Embedded resources (images, CSS, JS, frames) followed this many transitive hops beyond the scope.')),
                ('robots', models.CharField(choices=[('obey', 'obey'), ('ignore', 'ignore')], default='obey', max_length=10)),
                ('politeness_scope', models.CharField(choices=[('host', 'host'), ('domain', 'domain')], default='host', max_length=10)),
                ('delay_factor', models.FloatField(default=5.0, help_text='Delay between fetches = last fetch duration × this factor, clamped to [min delay, max delay].', validators=[django.core.validators.MinValueValidator(0)])),
                ('min_delay_ms', models.PositiveIntegerField(default=3000)),
                ('max_delay_ms', models.PositiveIntegerField(default=30000)),
                ('host_valence', models.PositiveIntegerField(default=1, help_text='Parallel connections per host.', validators=[django.core.validators.MinValueValidator(1)])),
                ('max_retries', models.PositiveIntegerField(default=30)),
                ('retry_delay_s', models.PositiveIntegerField(default=900)),
                ('connect_timeout_s', models.PositiveIntegerField(default=20, validators=[django.core.validators.MinValueValidator(1)])),
                ('read_timeout_s', models.PositiveIntegerField(default=60, validators=[django.core.validators.MinValueValidator(1)])),
                ('max_document_bytes', models.BigIntegerField(default=104857600, help_text='Bytes per document before truncation; -1 = no limit.')),
                ('warc_max_bytes', models.BigIntegerField(default=1073741824, help_text='WARC files rotate at this size (1 GB = 1024³ bytes).', validators=[django.core.validators.MinValueValidator(1)])),
                ('dedup', models.BooleanField(default=True, help_text='Store duplicates as revisit records.')),
                ('extract_javascript', models.BooleanField(default=True, help_text='Speculatively extract URLs from JavaScript strings.')),
                ('user_agent', models.CharField(default='Mozilla/5.0 (compatible; netharvest/0.1; +{operator_contact})', help_text='{operator_contact} is replaced by the operator contact.', max_length=300)),
                ('operator_contact', models.CharField(default='http://localhost/netharvest-crawler', help_text='A URL or e-mail address webmasters can reach you at.', max_length=300)),
                ('respect_crawl_delay_up_to_s', models.PositiveIntegerField(default=300, help_text='A robots.txt Crawl-delay for our user agent is honoured up to this many seconds (the delay after a fetch is at least that); 0 = ignore Crawl-delay.')),
                ('canonicalize_query_order', models.BooleanField(default=False, help_text='Count URLs whose query parameters differ only in order as one URL (Heritrix never does).')),
                ('source_tag_seeds', models.BooleanField(default=False, help_text='Name in crawl.log, and count in source-report.txt, the seed each URL descends from.')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='GlobalCrawlerTrapList',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True)),
                ('description', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('active', models.BooleanField(default=True)),
                ('traps', models.TextField(blank=True, help_text='One regular expression per line.')),
            ],
            options={
                'verbose_name': 'global crawler-trap list',
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='Job',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('harvest_run', models.PositiveIntegerField(help_text='Which run of its definition this job belongs to.')),
                ('status', models.CharField(choices=[('NEW', 'New'), ('SUBMITTED', 'Submitted'), ('STARTED', 'Started'), ('DONE', 'Done'), ('FAILED', 'Failed'), ('RESUBMITTED', 'Resubmitted')], db_index=True, default='NEW', max_length=12)),
                ('spec', models.JSONField(help_text='The frozen JobSpec sent to the harvester.')),
                ('domain_count', models.PositiveIntegerField(default=0)),
                ('expected_objects', models.BigIntegerField(default=0)),
                ('expected_bytes', models.BigIntegerField(default=0)),
                ('created', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('last_heartbeat', models.DateTimeField(blank=True, null=True)),
                ('harvester', models.CharField(blank=True, help_text='Host and worker that ran it.', max_length=200)),
                ('progress', models.JSONField(blank=True, default=dict, help_text='The latest Progress heartbeat.')),
                ('error_category', models.CharField(blank=True, max_length=50)),
                ('error_detail', models.TextField(blank=True)),
                ('rejected_at', models.DateTimeField(blank=True, help_text='Set when a FAILED job was judged not worth resubmitting.', null=True)),
                ('rejected_by', models.CharField(blank=True, max_length=150)),
            ],
            options={
                'ordering': ['-id'],
            },
        ),
        migrations.CreateModel(
            name='ReaperSight',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('last_sweep_at', models.DateTimeField()),
                ('seeing_since', models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name='Schedule',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True)),
                ('comments', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('every', models.PositiveIntegerField(default=1, validators=[django.core.validators.MinValueValidator(1)])),
                ('unit', models.CharField(choices=[('minute', 'minute'), ('hour', 'hour'), ('day', 'day'), ('week', 'week'), ('month', 'month')], default='day', max_length=6)),
                ('anytime', models.BooleanField(default=True, help_text='Run any time in the period; otherwise at the minute/hour/weekday/day of month below (UTC).')),
                ('at_minute', models.PositiveSmallIntegerField(blank=True, null=True, validators=[django.core.validators.MaxValueValidator(59)])),
                ('at_hour', models.PositiveSmallIntegerField(blank=True, null=True, validators=[django.core.validators.MaxValueValidator(23)])),
                ('at_weekday', models.PositiveSmallIntegerField(blank=True, choices=[(1, 'Monday'), (2, 'Tuesday'), (3, 'Wednesday'), (4, 'Thursday'), (5, 'Friday'), (6, 'Saturday'), (7, 'Sunday')], null=True)),
                ('at_day_of_month', models.PositiveSmallIntegerField(blank=True, help_text='Days past the end of a short month run on its last day.', null=True, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(31)])),
                ('start', models.DateTimeField(blank=True, help_text='UTC. Empty = as soon as possible.', null=True)),
                ('end', models.CharField(choices=[('never', 'never'), ('date', 'at a date'), ('runs', 'after a number of runs')], default='never', max_length=5)),
                ('end_date', models.DateTimeField(blank=True, null=True)),
                ('max_runs', models.PositiveIntegerField(blank=True, null=True)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='Domain',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=253, unique=True)),
                ('alias_expires', models.DateTimeField(blank=True, help_text='UTC. Empty = the alias never expires.', null=True)),
                ('comments', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('crawler_traps', models.TextField(blank=True, help_text='One regular expression per line; matching URLs are never fetched.')),
                ('extended', models.JSONField(blank=True, default=dict)),
                ('created', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('alias_of', models.ForeignKey(blank=True, db_index=False, help_text='This domain is an alias of another: it is not harvested on its own until the alias expires.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='aliases', to='harvest.domain')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='DomainConfiguration',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100)),
                ('max_objects', models.BigIntegerField(default=-1, help_text='-1 = unlimited, 0 = excluded from harvests.')),
                ('max_bytes', models.BigIntegerField(default=-1, help_text='-1 = unlimited, 0 = excluded from harvests.')),
                ('is_default', models.BooleanField(default=False, help_text='The configuration snapshot harvests use.')),
                ('comments', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('domain', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='configurations', to='harvest.domain')),
                ('template', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='configurations', to='harvest.crawltemplate')),
            ],
            options={
                'ordering': ['domain', 'name'],
            },
        ),
        migrations.CreateModel(
            name='ConfigurationSeedList',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('configuration', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, to='harvest.domainconfiguration')),
            ],
            options={
                'db_table': 'harvest_domainconfiguration_seedlists',
            },
        ),
        migrations.CreateModel(
            name='ExtendedField',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('owner', models.CharField(choices=[('domain', 'domain'), ('harvest', 'harvest definition')], max_length=10)),
                ('name', models.SlugField(help_text='Key used in exports and the API.')),
                ('label', models.CharField(max_length=100)),
                ('kind', models.CharField(choices=[('text', 'text'), ('number', 'number'), ('boolean', 'boolean'), ('date', 'date'), ('choice', 'choice')], default='text', max_length=10)),
                ('choices', models.TextField(blank=True, help_text="For kind 'choice': one allowed value per line.")),
                ('required', models.BooleanField(default=False)),
                ('default', models.CharField(blank=True, max_length=200)),
                ('position', models.PositiveIntegerField(default=0)),
            ],
            options={
                'ordering': ['owner', 'position', 'name'],
                'constraints': [models.UniqueConstraint(fields=('owner', 'name'), name='extendedfield_unique_name')],
            },
        ),
        migrations.CreateModel(
            name='HarvestChannel',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=50, unique=True, validators=[django.core.validators.RegexValidator('^[a-z0-9][a-z0-9_-]*$', 'lower-case letters, digits, - and _ only (it names a queue)')])),
                ('priority', models.CharField(choices=[('high', 'high'), ('low', 'low')], max_length=4)),
                ('comments', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('default_for', models.CharField(blank=True, choices=[('', '-'), ('selective', 'selective'), ('snapshot', 'snapshot'), ('continuous', 'continuous')], help_text='New definitions of this kind go to this channel unless told otherwise.', max_length=10)),
            ],
            options={
                'ordering': ['-priority', 'name'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('default_for', ''), _negated=True), fields=('default_for',), name='channel_one_default_per_kind')],
            },
        ),
        migrations.CreateModel(
            name='HarvestDefinition',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200, unique=True)),
                ('kind', models.CharField(choices=[('selective', 'selective'), ('snapshot', 'snapshot (broad)'), ('continuous', 'continuous')], max_length=10)),
                ('comments', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('audience', models.CharField(blank=True, max_length=100)),
                ('active', models.BooleanField(default=False)),
                ('runs', models.PositiveIntegerField(default=0, editable=False, help_text='Runs generated so far.')),
                ('extended', models.JSONField(blank=True, default=dict)),
                ('created', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('edited', models.DateTimeField(auto_now=True)),
                ('next_date', models.DateTimeField(blank=True, help_text='UTC. The next run; set from the schedule, may be overridden.', null=True)),
                ('skipped_events', models.PositiveIntegerField(default=0, editable=False, help_text='Schedule events that passed while the system was down and were not run.')),
                ('crawler_traps', models.TextField(blank=True, help_text="This definition's own traps, one regex per line.")),
                ('max_objects', models.BigIntegerField(default=-1, help_text='Per domain. -1 = unlimited, 0 = excluded from harvests.')),
                ('max_bytes', models.BigIntegerField(default=-1, help_text='Per domain. -1 = unlimited, 0 = excluded from harvests.')),
                ('max_job_running_time_s', models.PositiveIntegerField(default=0, help_text='0 = no limit.')),
                ('revisit_settings', models.JSONField(blank=True, default=dict, help_text='RevisitSettings (harvester/revisit/policy.py); empty = defaults.')),
                ('fetch_budget_per_s', models.FloatField(blank=True, help_text='Fetches per second the continuous job never exceeds (empty: politeness alone limits it).', null=True, validators=[django.core.validators.MinValueValidator(0.001)])),
                ('warc_rotate_s', models.PositiveIntegerField(default=900, help_text='A continuous job closes its WARC (and hands it to the indexer chain) at least this often, in seconds.', validators=[django.core.validators.MinValueValidator(1)])),
                ('page_qa', models.BooleanField(default=True, help_text='After each job is indexed, load its pages through replay in a browser and report what is missing (QA).')),
                ('channel', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='definitions', to='harvest.harvestchannel')),
                ('configurations', models.ManyToManyField(blank=True, related_name='harvest_definitions', to='harvest.domainconfiguration')),
                ('previous', models.ForeignKey(blank=True, help_text='Continue this earlier snapshot: only domains it did not finish.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='continued_by', to='harvest.harvestdefinition')),
                ('schedule', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='definitions', to='harvest.schedule')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='JobStats',
            fields=[
                ('job', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='stats', serialize=False, to='harvest.job')),
                ('harvest_run', models.PositiveIntegerField()),
                ('kind', models.CharField(help_text="The definition's kind: selective, snapshot, continuous.", max_length=10)),
                ('year', models.PositiveSmallIntegerField(help_text='UTC year the job ended (or was created).')),
                ('domains', models.PositiveIntegerField(default=0)),
                ('objects_count', models.BigIntegerField(db_column='objects', default=0)),
                ('bytes_count', models.BigIntegerField(db_column='bytes', default=0)),
                ('mime_types', models.JSONField(default=dict, help_text='mime → [urls, bytes], from mimetype-report.txt.')),
                ('status_codes', models.JSONField(default=dict, help_text='code → urls, from responsecode-report.txt.')),
                ('tlds', models.JSONField(default=dict, help_text='tld → [domains, objects, bytes], from HarvestInfo.')),
                ('size_buckets', models.JSONField(default=dict, help_text='bucket → domains (by objects), from HarvestInfo.')),
                ('stop_reasons', models.JSONField(default=dict, help_text='stop reason → domains, from HarvestInfo.')),
                ('top_domains', models.JSONField(default=list, help_text="The job's largest domains by bytes and by objects (at most 100 each): [[domain, objects, bytes], …].")),
                ('reports_source', models.CharField(blank=True, help_text='Where the MIME and status figures were read from.', max_length=1000)),
                ('reports_error', models.TextField(blank=True, help_text='Why the reports could not be read, if so.')),
                ('computed_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('seeds', models.PositiveIntegerField(default=0, help_text="Seeds in the job's frozen JobSpec: the seed-source share of seeds 001, 3.4.3 (selective vs broad).")),
            ],
            options={
                'verbose_name': 'job statistics',
                'verbose_name_plural': 'job statistics',
            },
        ),
        migrations.AddField(
            model_name='job',
            name='channel',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='jobs', to='harvest.harvestchannel'),
        ),
        migrations.AddField(
            model_name='job',
            name='continues',
            field=models.ForeignKey(blank=True, help_text='The failed job this one resubmits.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='continued_by', to='harvest.job'),
        ),
        migrations.AddField(
            model_name='job',
            name='harvest',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='jobs', to='harvest.harvestdefinition'),
        ),
        migrations.AddField(
            model_name='job',
            name='patches',
            field=models.ForeignKey(blank=True, help_text='A patch crawl: the job whose missing resources (found by page QA) this job fetches.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='patched_by', to='harvest.job'),
        ),
        migrations.CreateModel(
            name='HarvestInfo',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('objects_count', models.BigIntegerField(db_column='objects')),
                ('bytes_count', models.BigIntegerField(db_column='bytes')),
                ('stop_reason', models.CharField(choices=[('DOWNLOAD_COMPLETE', 'Download Complete'), ('OBJECT_LIMIT', 'Object Limit'), ('SIZE_LIMIT', 'Size Limit'), ('CONFIG_OBJECT_LIMIT', 'Config Object Limit'), ('CONFIG_SIZE_LIMIT', 'Config Size Limit'), ('TIME_LIMIT', 'Time Limit'), ('DOWNLOAD_UNFINISHED', 'Download Unfinished')], max_length=20)),
                ('date', models.DateTimeField(default=django.utils.timezone.now)),
                ('configuration', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='harvest_infos', to='harvest.domainconfiguration')),
                ('domain', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='harvest_infos', to='harvest.domain')),
                ('harvest', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='harvest_infos', to='harvest.harvestdefinition')),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='harvest_infos', to='harvest.job')),
            ],
            options={
                'verbose_name': 'harvest info',
                'ordering': ['-date'],
            },
        ),
        migrations.CreateModel(
            name='ArchiveFile',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text='Unique across the archive.', max_length=255, unique=True)),
                ('kind', models.CharField(choices=[('warc', 'WARC'), ('metadata', 'metadata WARC')], default='warc', max_length=10)),
                ('size', models.BigIntegerField()),
                ('sha256', models.CharField(help_text='As computed here from the bytes.', max_length=64)),
                ('harvester_sha256', models.CharField(blank=True, help_text='As reported by the harvester.', max_length=64)),
                ('spool_path', models.CharField(blank=True, help_text='Where the harvester left it.', max_length=1000)),
                ('index_state', models.CharField(choices=[('HARVESTED', "harvested (in the harvester's spool)"), ('INGESTED', 'ingested (checksum verified)'), ('INDEXED', 'indexed (CDX written)'), ('TRANSFERRED', 'transferred (in archive storage, PATH line written)'), ('BACKED_UP', 'backed up (replica verified, or no backup location configured)'), ('CLEANED', 'done (spool copy removed)'), ('FAILED', 'failed (see error)')], db_index=True, default='HARVESTED', max_length=12)),
                ('cdx_path', models.CharField(blank=True, max_length=1000)),
                ('records', models.PositiveIntegerField(default=0)),
                ('error', models.TextField(blank=True)),
                ('created', models.DateTimeField(default=django.utils.timezone.now)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('attempts', models.PositiveIntegerField(default=0, help_text='Failed attempts since the last success.')),
                ('claim_token', models.CharField(blank=True, help_text='The worker doing the next step.', max_length=32)),
                ('claimed_until', models.DateTimeField(blank=True, help_text='Its lease; expired = free again.', null=True)),
                ('failed_step', models.CharField(blank=True, choices=[('HARVESTED', "harvested (in the harvester's spool)"), ('INGESTED', 'ingested (checksum verified)'), ('INDEXED', 'indexed (CDX written)'), ('TRANSFERRED', 'transferred (in archive storage, PATH line written)'), ('BACKED_UP', 'backed up (replica verified, or no backup location configured)'), ('CLEANED', 'done (spool copy removed)'), ('FAILED', 'failed (see error)')], help_text='The state a FAILED file goes back to when retried.', max_length=12)),
                ('merged_at', models.DateTimeField(blank=True, help_text='When its CDX and PATH lines went into a daily merge; null = not yet (or reindexed since).', null=True)),
                ('queued_at', models.DateTimeField(blank=True, help_text='Last handed to the indexer queue.', null=True)),
                ('harvest', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='files', to='harvest.harvestdefinition')),
                ('job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='files', to='harvest.job')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='JobControl',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('action', models.CharField(choices=[('stop', 'stop'), ('pause', 'pause'), ('resume', 'resume'), ('add_trap', 'add crawler trap'), ('seeds', 'change seeds')], max_length=10)),
                ('argument', models.TextField(blank=True)),
                ('requested_by', models.CharField(max_length=150)),
                ('requested_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('sent_at', models.DateTimeField(blank=True, null=True)),
                ('acknowledged_at', models.DateTimeField(blank=True, null=True)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='controls', to='harvest.job')),
            ],
            options={
                'ordering': ['requested_at'],
            },
        ),
        migrations.CreateModel(
            name='JobDomain',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('max_objects', models.BigIntegerField()),
                ('max_bytes', models.BigIntegerField()),
                ('configuration', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='harvest.domainconfiguration')),
                ('job', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='domains', to='harvest.job')),
            ],
        ),
        migrations.CreateModel(
            name='ProgressSample',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(help_text='When intake received the heartbeat (UTC).')),
                ('figures', models.JSONField(help_text='The charted figures of that heartbeat (progresslog.FIGURES).')),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='progress_samples', to='harvest.job')),
            ],
            options={
                'ordering': ['job', 'at'],
            },
        ),
        migrations.CreateModel(
            name='QAMark',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('url', models.TextField()),
                ('verdict', models.CharField(choices=[('good', 'good'), ('bad', 'bad')], max_length=4)),
                ('note', models.TextField(blank=True)),
                ('marked_by', models.CharField(max_length=150)),
                ('marked_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('domain', models.ForeignKey(blank=True, help_text="The job's domain the page belongs to.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='qa_marks', to='harvest.domain')),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='qa_marks', to='harvest.job')),
            ],
            options={
                'ordering': ['-marked_at'],
            },
        ),
        migrations.CreateModel(
            name='QARun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('trigger', models.CharField(choices=[('auto', 'after indexing'), ('requested', 'on request'), ('after-patch', 'after a patch crawl')], max_length=12)),
                ('status', models.CharField(choices=[('QUEUED', 'Queued'), ('RUNNING', 'Running'), ('DONE', 'Done'), ('FAILED', 'Failed')], default='QUEUED', max_length=8)),
                ('requested_by', models.CharField(blank=True, max_length=150)),
                ('created', models.DateTimeField(default=django.utils.timezone.now)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('pages_planned', models.PositiveIntegerField(default=0)),
                ('pages_done', models.PositiveIntegerField(default=0)),
                ('missing_urls', models.PositiveIntegerField(default=0)),
                ('live_compared', models.BooleanField(default=False, help_text='Pages were also loaded from the live web.')),
                ('error', models.TextField(blank=True)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='qa_runs', to='harvest.job')),
                ('patch_job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='harvest.job')),
            ],
            options={
                'ordering': ['-id'],
            },
        ),
        migrations.CreateModel(
            name='QAPage',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('url', models.TextField()),
                ('timestamp', models.CharField(help_text='The capture replayed (14 digits, UTC).', max_length=14)),
                ('is_seed', models.BooleanField(default=False)),
                ('title', models.CharField(blank=True, max_length=500)),
                ('replay_status', models.IntegerField(blank=True, null=True)),
                ('replay_error', models.TextField(blank=True, help_text='Navigation errors, timeouts, script errors.')),
                ('timed_out', models.BooleanField(default=False)),
                ('load_ms', models.PositiveIntegerField(default=0)),
                ('requests', models.PositiveIntegerField(default=0, help_text='Archived resources the page asked for.')),
                ('missing_count', models.PositiveIntegerField(default=0)),
                ('text', models.TextField(blank=True, help_text="The replayed page's visible text (cut at 100,000 characters).")),
                ('replay_thumb', models.CharField(blank=True, help_text='Under NETHARVEST_QA_DIR.', max_length=300)),
                ('live_status', models.IntegerField(blank=True, null=True)),
                ('live_error', models.TextField(blank=True)),
                ('live_thumb', models.CharField(blank=True, max_length=300)),
                ('screenshot_similarity', models.FloatField(blank=True, help_text='SSIM, replay vs live, 0..1.', null=True)),
                ('text_similarity', models.FloatField(blank=True, help_text='Word-shingle overlap, 0..1.', null=True)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pages', to='harvest.qarun')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='MissingResource',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('url', models.TextField()),
                ('host', models.CharField(max_length=300)),
                ('resource_type', models.CharField(help_text="The browser's: image, stylesheet, script, font…", max_length=30)),
                ('page', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='missing', to='harvest.qapage')),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='missing', to='harvest.qarun')),
            ],
            options={
                'ordering': ['host', 'url'],
            },
        ),
        migrations.CreateModel(
            name='SeedList',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100)),
                ('seeds', models.TextField(help_text='One http(s) URL per line; a line starting with # is inactive.')),
                ('comments', models.TextField(blank=True, help_text='At most 10,000 characters.', max_length=10000, validators=[django.core.validators.MaxLengthValidator(10000)])),
                ('domain', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='seedlists', to='harvest.domain')),
            ],
            options={
                'ordering': ['domain', 'name'],
            },
        ),
        migrations.AddField(
            model_name='domainconfiguration',
            name='seedlists',
            field=models.ManyToManyField(related_name='configurations', through='harvest.ConfigurationSeedList', to='harvest.seedlist'),
        ),
        migrations.AddField(
            model_name='configurationseedlist',
            name='seedlist',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='harvest.seedlist'),
        ),
        migrations.CreateModel(
            name='ArchiveFileCopy',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('location', models.CharField(help_text="The storage location's name.", max_length=200)),
                ('path', models.CharField(max_length=1000)),
                ('is_replica', models.BooleanField(default=False)),
                ('verified_at', models.DateTimeField(blank=True, null=True)),
                ('verified_ok', models.BooleanField(default=False)),
                ('file', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='copies', to='harvest.archivefile')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('file', 'location'), name='archivefilecopy_unique')],
            },
        ),
        migrations.AddIndex(
            model_name='domain',
            index=models.Index(condition=models.Q(('alias_of__isnull', False)), fields=['alias_of'], name='domain_alias_of'),
        ),
        migrations.AddField(
            model_name='jobstats',
            name='harvest',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='harvest.harvestdefinition'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(fields=['harvest', 'harvest_run'], name='harvest_job_harvest_57f969_idx'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(fields=['status', 'channel'], name='harvest_job_status_6b64da_idx'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(fields=['status', 'ended_at'], name='harvest_job_status_ended'),
        ),
        migrations.AddIndex(
            model_name='harvestinfo',
            index=models.Index(fields=['harvest', 'domain'], name='harvest_har_harvest_6e13ca_idx'),
        ),
        migrations.AddIndex(
            model_name='harvestinfo',
            index=models.Index(fields=['configuration', 'date'], name='harvest_har_configu_4620d2_idx'),
        ),
        migrations.AddConstraint(
            model_name='harvestinfo',
            constraint=models.UniqueConstraint(fields=('job', 'configuration'), name='harvestinfo_unique'),
        ),
        migrations.AddConstraint(
            model_name='jobdomain',
            constraint=models.UniqueConstraint(fields=('job', 'configuration'), name='jobdomain_unique'),
        ),
        migrations.AddIndex(
            model_name='progresssample',
            index=models.Index(fields=['job', 'at'], name='harvest_pro_job_id_433f86_idx'),
        ),
        migrations.AddConstraint(
            model_name='qamark',
            constraint=models.UniqueConstraint(fields=('job', 'url'), name='qamark_one_per_page'),
        ),
        migrations.AddConstraint(
            model_name='qarun',
            constraint=models.UniqueConstraint(condition=models.Q(('trigger', 'auto')), fields=('job',), name='qarun_one_auto_per_job'),
        ),
        migrations.AddConstraint(
            model_name='qarun',
            constraint=models.UniqueConstraint(condition=models.Q(('trigger', 'after-patch')), fields=('job', 'patch_job'), name='qarun_one_per_patch'),
        ),
        migrations.AddIndex(
            model_name='missingresource',
            index=models.Index(fields=['run', 'host'], name='harvest_mis_run_id_3ec0ba_idx'),
        ),
        migrations.AddConstraint(
            model_name='seedlist',
            constraint=models.UniqueConstraint(fields=('domain', 'name'), name='seedlist_unique_name'),
        ),
        migrations.AddConstraint(
            model_name='domainconfiguration',
            constraint=models.UniqueConstraint(fields=('domain', 'name'), name='configuration_unique_name'),
        ),
        migrations.AddConstraint(
            model_name='domainconfiguration',
            constraint=models.UniqueConstraint(condition=models.Q(('is_default', True)), fields=('domain',), name='configuration_one_default'),
        ),
        migrations.AddConstraint(
            model_name='domainconfiguration',
            constraint=models.CheckConstraint(condition=models.Q(('max_objects__gte', -1), ('max_bytes__gte', -1)), name='configuration_budget_range'),
        ),
        migrations.AddConstraint(
            model_name='configurationseedlist',
            constraint=models.UniqueConstraint(fields=('configuration', 'seedlist'), name='configurationseedlist_unique'),
        ),
        migrations.AddIndex(
            model_name='jobstats',
            index=models.Index(fields=['harvest', 'harvest_run'], name='harvest_job_harvest_f25d49_idx'),
        ),
        migrations.AddIndex(
            model_name='jobstats',
            index=models.Index(fields=['year', 'kind'], name='harvest_job_year_28078c_idx'),
        ),
        migrations.RunPython(create_defaults, migrations.RunPython.noop),
        migrations.RunPython(continuous_channel, migrations.RunPython.noop),
        migrations.RunPython(trigram_indexes, drop_trigram_indexes),
        migrations.RunPython(spec_lz4, spec_pglz),
    ]
