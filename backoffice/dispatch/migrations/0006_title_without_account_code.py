"""Notes written before 0004 carry the account's code in the receiver's legal title ("Title (CODE)"). Those not yet
on the platform get the title alone and the code beside it, so that their first send carries the legal title
(issue 28). A note the platform already has keeps what it was sent as: correcting it is an update its user
sends."""

from django.db import migrations


def title_alone(apps, schema_editor):
    DispatchNote = apps.get_model("dispatch", "DispatchNote")
    changed = []
    notes = DispatchNote.objects.filter(remote_id="", current_account__isnull=False, receiver_code="",
                                        receiver_name__endswith=")").select_related("current_account")
    for note in notes.iterator(chunk_size=2000):
        account = note.current_account
        title = f"{account.name} {account.surname or ''}".strip()
        if account.code and note.receiver_name == f"{title} ({account.code})"[:500]:
            note.receiver_name, note.receiver_code = title[:500], account.code
            changed.append(note)
        if len(changed) >= 2000:
            DispatchNote.objects.bulk_update(changed, ["receiver_name", "receiver_code"])
            changed = []
    DispatchNote.objects.bulk_update(changed, ["receiver_name", "receiver_code"])


class Migration(migrations.Migration):

    dependencies = [
        ("dispatch", "0005_search_text"),
    ]

    operations = [migrations.RunPython(title_alone, migrations.RunPython.noop)]
