from functools import partial

import pytest
from django.core.management import CommandError

from orchestrator.harvest.models import HarvestChannel
from tests.orchestrator.commands import command_output

pytestmark = pytest.mark.django_db


run = partial(command_output, "channels")


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
