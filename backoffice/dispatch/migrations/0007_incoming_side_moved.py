"""The receiving side's models (incoming notes, our replies, their documents and exports, InboxSync) went to the
dispatch_inbox app: taken out of this app's state only, after dispatch_inbox's 0001 took them in; their tables stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('dispatch', '0006_title_without_account_code'),
        ('dispatch_inbox', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveField(
                model_name='dispatchreply',
                name='company',
            ),
            migrations.RemoveField(
                model_name='dispatchreply',
                name='created_by',
            ),
            migrations.RemoveField(
                model_name='dispatchreply',
                name='note',
            ),
            migrations.RemoveField(
                model_name='incomingdocument',
                name='reply',
            ),
            migrations.RemoveField(
                model_name='inboxsync',
                name='company',
            ),
            migrations.RemoveField(
                model_name='incomingdocument',
                name='note',
            ),
            migrations.RemoveField(
                model_name='incomingexport',
                name='company',
            ),
            migrations.RemoveField(
                model_name='incomingexport',
                name='requested_by',
            ),
            migrations.RemoveField(
                model_name='incomingline',
                name='note',
            ),
            migrations.RemoveField(
                model_name='incomingnote',
                name='company',
            ),
            migrations.DeleteModel(
                name='ReplyLine',
            ),
            migrations.DeleteModel(
                name='DispatchReply',
            ),
            migrations.DeleteModel(
                name='InboxSync',
            ),
            migrations.DeleteModel(
                name='IncomingDocument',
            ),
            migrations.DeleteModel(
                name='IncomingExport',
            ),
            migrations.DeleteModel(
                name='IncomingLine',
            ),
            migrations.DeleteModel(
                name='IncomingNote',
            ),
        ]),
    ]
