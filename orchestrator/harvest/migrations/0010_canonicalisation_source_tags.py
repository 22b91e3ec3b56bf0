from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('harvest', '0009_template_respect_crawl_delay'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawltemplate',
            name='canonicalize_query_order',
            field=models.BooleanField(default=False, help_text='Count URLs whose query parameters differ only in order as one URL (Heritrix never does).'),
        ),
        migrations.AddField(
            model_name='crawltemplate',
            name='source_tag_seeds',
            field=models.BooleanField(default=False, help_text='Name in crawl.log, and count in source-report.txt, the seed each URL descends from.'),
        ),
    ]
