"""Re-encrypt every secret at rest with the newest key of FIELD_ENCRYPTION_KEYS (core.crypto).

Rotation: put the new key first and keep the old ones after it, run this command, then drop the old keys. Every
encrypted field of every model is read (with whichever key opens it) and written back (with the first key), a
few hundred rows a statement; a value no key opens stops the command before anything is written for its model.
Bearer tokens kept in Redis need nothing: they expire within a day and are fetched again under the new key.
"""

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from backoffice.core.crypto import EncryptedTextField

CHUNK = 500


def encrypted_fields():
    """{model: [names of its encrypted fields]} for every installed model that has one."""
    found = {}
    for model in apps.get_models():
        names = [field.name for field in model._meta.concrete_fields if isinstance(field, EncryptedTextField)]
        if names:
            found[model] = names
    return found


def rotate(model, names) -> int:
    """Every row of model with a value in names read and written again, CHUNK rows at a time (by pk: no server-side
    cursor, which a failed read would leave open in a rolled-back transaction); the rows written."""
    written, last = 0, None
    rows = model._base_manager.only("pk", *names).order_by("pk")
    with transaction.atomic():
        while True:
            # Decrypted as read: a value no key opens raises ValueError and rolls the model's writes back.
            chunk = list((rows if last is None else rows.filter(pk__gt=last))[:CHUNK])
            if not chunk:
                return written
            last = chunk[-1].pk
            changed = [row for row in chunk if any(getattr(row, name) for name in names)]
            if changed:
                model._base_manager.bulk_update(changed, names)
                written += len(changed)


class Command(BaseCommand):
    help = "Re-encrypt every secret at rest with the first key of FIELD_ENCRYPTION_KEYS (after adding a new key)."

    def handle(self, *args, **options):
        for model, names in encrypted_fields().items():
            try:
                written = rotate(model, names)
            except ValueError as exc:
                raise CommandError(f"{model._meta.label}: {exc}; nothing of it was re-encrypted") from None
            self.stdout.write(f"{model._meta.label}: {written} row(s) re-encrypted ({', '.join(names)})")
