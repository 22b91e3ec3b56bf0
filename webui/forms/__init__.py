"""The web UI's forms. Validation is the models' own (``Model.clean`` and orchestrator.harvest.curation.validators),
so the UI, the admin and the CLI refuse the same things with the same words."""
