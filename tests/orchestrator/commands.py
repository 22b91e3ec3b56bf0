"""Running a management command as a person would, for the command tests: what it printed."""

from __future__ import annotations

import io

from django.core.management import call_command


def command_output(command: str, *args: str, with_errors: bool = False) -> str:
    """What ``netharvest <command> <args>`` writes to stdout (``with_errors``: stderr too, in order, for the
    commands that report problems there); a refusal raises CommandError as it would exit non-zero."""
    out = io.StringIO()
    call_command(command, *args, stdout=out, **({"stderr": out} if with_errors else {}))
    return out.getvalue()
