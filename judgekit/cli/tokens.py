"""``judgekit tokens create|list|revoke``: who may use ``judgekit serve``, and as what.

The token is printed once, on stdout alone (so ``TOKEN=$(judgekit tokens create …)``
works); the store keeps only its hash.
"""

from __future__ import annotations

import click

from judgekit.cli._common import db_option, echo, echo_json, read_store, text_or_json_option
from judgekit.errors import InputError

#: Token roles (``judgekit.store.access.ROLES``, named here for a fast ``--help``).
ROLES = ("annotate", "adjudicate", "read", "write", "admin")


@click.group("tokens")
def command() -> None:
    """API tokens for `judgekit serve`: create, list, revoke.

    Roles: annotate (label one's own queue, nothing else), adjudicate (POST
    adjudications under one's own name, nothing else), read (reports, runs,
    progress), write (read, and POST labels and judgments), admin (everything).
    """


@command.command("create")
@db_option
@click.option("--name", required=True, help="Who the token is for; an annotator's labels carry it.")
@click.option("--role", type=click.Choice(ROLES), required=True, help="What the token may do.")
def create(db: str, name: str, role: str) -> None:
    """Create a token and print it once (only its hash is stored).

    Creates the store if it does not exist yet, like `import`: a service needs one.
    """
    from judgekit.store import open_store

    with open_store(db) as store:
        token, record = store.create_token(name, role)
    echo(token)
    echo(f"token {record.prefix}… for {record.name} ({record.role}); shown once, "
               "store it now", err=True)


@command.command("list")
@db_option
@text_or_json_option
def list_tokens(db: str, fmt: str) -> None:
    """Every token with its name, role, prefix and state (never the token itself)."""
    with read_store(db) as store:
        records = store.list_tokens()
    if fmt == "json":
        echo_json([
            {"id": r.id, "name": r.name, "role": r.role, "prefix": r.prefix,
             "created_at": r.created_at, "revoked_at": r.revoked_at} for r in records
        ], indent=2)
        return
    if not records:
        echo("no tokens (create one with: judgekit tokens create --name NAME --role ROLE)")
        return
    for r in records:
        state = f"revoked {r.revoked_at[:19]}" if r.revoked_at else "active"
        echo(f"{r.id:>4}  {r.name:<16} {r.role:<9} {r.prefix}…  "
                   f"created {r.created_at[:19]}  {state}")


@command.command("revoke")
@db_option
@click.option("--name", required=True, help="Revoke every active token of this name.")
def revoke(db: str, name: str) -> None:
    """Revoke a name's tokens at once; requests with them get 401 from then on."""
    with read_store(db) as store:
        count = store.revoke_tokens(name)
    if count == 0:
        raise InputError(f"no active token named {name!r}")
    echo(f"revoked {count} token(s) of {name}")
