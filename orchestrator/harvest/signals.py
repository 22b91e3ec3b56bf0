"""Signals other apps listen to, so the harvest app never imports them."""

from django.dispatch import Signal

#: Sent with ``definition=`` just before a run's jobs are generated (scheduled or run now), inside the
#: run's transaction: the selection tool transfers its records into the definition here (BCWeb's
#: "transferred just before the crawl is launched", shared/seeds/001…, 2.1.4).
before_run = Signal()
