"""Who may use the service (API tokens, stored hashed, one role each) and how far they got.

A token is shown once, when it is created; the store keeps only its sha256 (a
token carries 256 random bits, so a fast hash is as safe as a slow one and keeps
every request cheap) and a short prefix so a lead can tell tokens apart in
``tokens list``. Revoking keeps the row, so the audit trail survives.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
from dataclasses import dataclass

from judgekit.errors import InputError
from judgekit.store import rows as R
from judgekit.store._base import StoreBase

#: ``store_meta`` key (followed by the queue's name) of who opened a queue.
OPENED_PREFIX = "queue_opened:"

#: Roles, from least to most trusted. ``annotate`` is apart from the others: it
#: labels its own queue and sees nothing else; ``adjudicate`` settles disagreements
#: (its labels become the items' reference) and sees nothing else either.
ROLES: tuple[str, ...] = ("annotate", "adjudicate", "read", "write", "admin")
#: What each role may do beyond its own name (``admin`` may do everything).
ROLE_GRANTS: dict[str, frozenset[str]] = {
    "annotate": frozenset({"annotate"}),
    "adjudicate": frozenset({"adjudicate"}),
    "read": frozenset({"read"}),
    "write": frozenset({"read", "write"}),
    "admin": frozenset({"read", "write", "admin", "annotate", "adjudicate"}),
}
#: Every token starts with this, so a leaked one is easy to recognise and scan for.
TOKEN_PREFIX = "jk_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    """A token as the store knows it: never the token itself."""

    id: int
    name: str
    role: str
    prefix: str
    created_at: str
    revoked_at: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def may(self, permission: str) -> bool:
        """Whether this token's role grants ``permission`` (read, write, admin, annotate)."""
        return self.active and permission in ROLE_GRANTS.get(self.role, frozenset())


def _record(row: sqlite3.Row) -> TokenRecord:
    return TokenRecord(
        id=row["id"], name=row["name"], role=row["role"], prefix=row["prefix"],
        created_at=row["created_at"], revoked_at=row["revoked_at"],
    )


class AccessMixin(StoreBase):
    """API tokens (mixed into :class:`~judgekit.store.Store`)."""

    def create_token(self, name: str, role: str) -> tuple[str, TokenRecord]:
        """A new token for ``name`` with ``role``: (the token, shown once; its record)."""
        name = name.strip()
        if not name:
            raise InputError("--name must not be empty")
        if role not in ROLES:
            raise InputError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO tokens (name, role, token_hash, prefix, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [name, role, hash_token(token), token[: len(TOKEN_PREFIX) + 6], R.utc_now()],
            )
            token_id = cursor.lastrowid
        found = self._one("SELECT * FROM tokens WHERE id = ?", [token_id])
        assert found is not None
        return token, _record(found)

    def list_tokens(self, *, include_revoked: bool = True) -> list[TokenRecord]:
        sql = "SELECT * FROM tokens"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        return [_record(row) for row in self._rows(sql + " ORDER BY id")]

    def revoke_tokens(self, name: str) -> int:
        """Revoke every active token of ``name``; returns how many were revoked."""
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                [R.utc_now(), name],
            )
            return cursor.rowcount

    def token_for(self, token: str) -> TokenRecord | None:
        """The active token record a presented token stands for, or None."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        row = self._one(
            "SELECT * FROM tokens WHERE token_hash = ? AND revoked_at IS NULL", [hash_token(token)]
        )
        return None if row is None else _record(row)


class QueueProgressMixin(StoreBase):
    """Who opened which labeling queue (mixed into the Store; the counts are in
    :mod:`judgekit.store.queues`)."""

    def note_queue_opened(self, queue: str, annotator: str) -> None:
        """Record that ``annotator`` opened ``queue`` (``annotate``, a browser session).

        Labels do not say which queue they were given in, and queues share items;
        without this record ``judgekit queues`` would list under a shared queue
        everyone who labeled one of its items in some other queue.
        """
        key = OPENED_PREFIX + queue
        with self._write() as conn:  # read and write under one lock: no lost opener
            row = conn.execute("SELECT value FROM store_meta WHERE key = ?", [key]).fetchone()
            names = set(_names(row[0])) if row is not None else set()
            if annotator in names:
                return
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, json.dumps(sorted(names | {annotator}))],
            )

    def queue_openers(self, queue: str) -> list[str] | None:
        """Who opened ``queue``, sorted; None when no opening was ever recorded
        (a queue of a store written before openings were recorded)."""
        text = self.get_meta(OPENED_PREFIX + queue)
        return None if text is None else sorted(_names(text))


def _names(text: str) -> list[str]:
    """The annotators of a ``queue_opened:`` record (a damaged record: nobody)."""
    try:
        found = json.loads(text)
    except ValueError:
        return []
    return [str(n) for n in found] if isinstance(found, list) else []
