"""manage.py rotate_secrets: every secret at rest re-encrypted with the newest key, so the old one can go."""

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection

from backoffice.core.management.commands import rotate_secrets
from backoffice.core.models import Company

pytestmark = pytest.mark.django_db

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def stored(company, column):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM core_company WHERE id = %s", [company.pk])
        return cursor.fetchone()[0]


def test_secrets_are_re_encrypted_with_the_newest_key_and_read_without_the_old_one(settings, capsys, monkeypatch):
    monkeypatch.setattr(rotate_secrets, "CHUNK", 1)  # a row a statement: every row read past the chunks' seams
    settings.FIELD_ENCRYPTION_KEYS = [OLD]
    with_key = Company.objects.create(name="Anahtarlı A.Ş.", api_key="key-rotate-0001",
                                      service_username="svc", service_password="pw-rotate-0002")
    without = Company.objects.create(name="Anahtarsız A.Ş.")
    assert Fernet(OLD.encode()).decrypt(stored(with_key, "api_key").encode()) == b"key-rotate-0001"

    settings.FIELD_ENCRYPTION_KEYS = [NEW, OLD]
    call_command("rotate_secrets")
    assert "core.Company: 1 row(s) re-encrypted (api_key, service_password)" in capsys.readouterr().out
    assert Fernet(NEW.encode()).decrypt(stored(with_key, "api_key").encode()) == b"key-rotate-0001"
    assert Fernet(NEW.encode()).decrypt(stored(with_key, "service_password").encode()) == b"pw-rotate-0002"
    assert stored(without, "api_key") == ""

    settings.FIELD_ENCRYPTION_KEYS = [NEW]  # the old key dropped
    again = Company.objects.get(pk=with_key.pk)
    assert (again.api_key, again.service_password) == ("key-rotate-0001", "pw-rotate-0002")


def test_a_secret_no_key_opens_stops_the_command_and_nothing_of_it_is_written(settings):
    settings.FIELD_ENCRYPTION_KEYS = [OLD]
    first = Company.objects.create(name="Birinci A.Ş.", api_key="key-first-0001")
    lost = Company.objects.create(name="Kayıp A.Ş.", api_key="key-lost-0002")
    before = stored(first, "api_key")
    with connection.cursor() as cursor:  # encrypted with a key nobody has any more
        cursor.execute("UPDATE core_company SET api_key = %s WHERE id = %s",
                       [Fernet(Fernet.generate_key()).encrypt(b"x").decode(), lost.pk])
    settings.FIELD_ENCRYPTION_KEYS = [NEW, OLD]
    with pytest.raises(CommandError, match="core.Company: cannot decrypt a stored secret"):
        call_command("rotate_secrets")
    assert stored(first, "api_key") == before  # rolled back with the rest of its model
