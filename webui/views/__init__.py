"""The web UI's views, one module per area; each view is wrapped in webui.access.require."""
