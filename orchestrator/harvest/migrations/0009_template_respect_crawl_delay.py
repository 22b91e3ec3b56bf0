from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('harvest', '0001_squashed_0008'),
    ]

    operations = [
        migrations.AddField(
            model_name='crawltemplate',
            name='respect_crawl_delay_up_to_s',
            field=models.PositiveIntegerField(default=300, help_text='A robots.txt Crawl-delay for our user agent is honoured up to this many seconds (the delay after a fetch is at least that); 0 = ignore Crawl-delay.'),
        ),
    ]
