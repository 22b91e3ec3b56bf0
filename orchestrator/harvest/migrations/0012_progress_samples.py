import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('harvest', '0011_continuous_run'),
    ]

    operations = [
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
                'indexes': [models.Index(fields=['job', 'at'], name='harvest_pro_job_id_433f86_idx')],
            },
        ),
    ]
