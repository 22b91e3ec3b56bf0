import io

import pytest
from django.core.management import CommandError, call_command

from orchestrator.harvest.models import HarvestChannel

pytestmark = pytest.mark.django_db


def run(*args):
    out = io.StringIO()
    call_command("channels", *args, stdout=out)
    return out.getvalue()


def test_list_shows_default_channels_and_their_queues():
    text = run("list")
    assert "focused     high      harvest.focused" in text
    assert "snapshot    low       harvest.snapshot" in text
    assert "continuous  high      harvest.continuous  continuous" in text


def test_create_validates_the_name():
    assert "harvest.thematic" in run("create", "thematic", "--priority", "high")
    assert HarvestChannel.objects.get(name="thematic").priority == "high"
    with pytest.raises(CommandError, match="name:"):
        run("create", "Bad Name", "--priority", "low")
    with pytest.raises(CommandError, match="name:"):
        run("create", "thematic", "--priority", "low")
