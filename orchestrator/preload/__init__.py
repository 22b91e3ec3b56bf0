"""Preparing a broad crawl from several sources, as the BnF's NAS_preload did (shared/seeds/001…, 2.2):
ingest and de-duplicate, DNS check, redirect discovery, load. ``pipeline`` runs the steps over a
resumable work directory; ``netharvest preload`` is its command line."""
