"""``netharvest tokens create USER|list|revoke``: API tokens for scripts (docs/API.md).

A token is printed once, by ``create``, and stored only as a hash: keep it where the script reads it.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from orchestrator.api import tokens
from orchestrator.api.models import ApiToken
from orchestrator.harvest.tables import render


class Command(BaseCommand):
    help = "Create, list and revoke API tokens (a token acts as its user, with the user's roles)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        create = sub.add_parser("create", help="make a token for USER and print it (once)")
        create.add_argument("user", help="user name")
        create.add_argument("--name", default="", help="what the token is for (a script, a host)")
        lister = sub.add_parser("list", help="tokens (prefix, user, name, last used); never the tokens themselves")
        lister.add_argument("user", nargs="?", help="only this user's")
        lister.add_argument("--all", action="store_true", help="revoked tokens too")
        revoke = sub.add_parser("revoke", help="revoke a token by its id or prefix (netharvest tokens list)")
        revoke.add_argument("token", help="id or prefix")

    def handle(self, *args: object, action: str, **options: object) -> None:
        getattr(self, f"do_{action}")(**options)

    def do_create(self, user: str, name: str, **_: object) -> None:
        account = get_user_model().objects.filter(username=user).first()
        if account is None:
            raise CommandError(f"no user {user!r} (netharvest createsuperuser, or the admin's Users page, makes one)")
        if not account.is_active:
            raise CommandError(f"user {user!r} is deactivated: its tokens would not be accepted")
        row, token = tokens.create(account, name)
        self.stderr.write(f"API token {row.pk} for {user} (prefix {row.prefix}); it is shown only now:")
        self.stdout.write(token)

    def do_list(self, user: str | None, all: bool, **_: object) -> None:
        rows = ApiToken.objects.select_related("user").order_by("-created")
        if user:
            rows = rows.filter(user__username=user)
        if not all:
            rows = rows.filter(revoked_at__isnull=True)
        self.stdout.write(
            render(
                ["id", "prefix", "user", "name", "created (UTC)", "last used (UTC)", "revoked (UTC)"],
                [(t.pk, t.prefix, t.user.get_username(), t.name, t.created, t.last_used, t.revoked_at) for t in rows],
            )
        )

    def do_revoke(self, token: str, **_: object) -> None:
        rows = (
            ApiToken.objects.filter(pk=int(token))
            if token.isdigit()
            else ApiToken.objects.filter(prefix__startswith=token)
        )
        found = list(rows[:2])
        if not found:
            raise CommandError(f"no API token {token!r} (netharvest tokens list shows them)")
        if len(found) > 1:
            raise CommandError(f"{token!r} names several tokens: give more of the prefix, or the id")
        if not tokens.revoke(found[0]):
            raise CommandError(f"token {found[0].pk} was already revoked")
        self.stdout.write(f"token {found[0].pk} ({found[0].prefix}…) of {found[0].user.get_username()} revoked")
