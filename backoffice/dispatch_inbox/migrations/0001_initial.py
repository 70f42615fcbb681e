"""The receiving side's models, moved here from dispatch in state only: their tables stay as dispatch made them
(Meta.db_table), so nothing of the database changes; dispatch's 0007 takes them out of its state after this."""

import backoffice.core.search
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('core', '0005_contract_tier'),
        ('dispatch', '0006_title_without_account_code'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='DispatchReply',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('remote_id', models.CharField(blank=True, db_index=True, max_length=64, verbose_name='platform id')),
                    ('sync_state', models.CharField(choices=[('local', 'Saved locally'), ('queued', 'Waiting to be sent'), ('sending', 'Sending'), ('synced', 'Synced'), ('failed', 'Failed')], default='local', max_length=10, verbose_name='sync state')),
                    ('last_error', models.TextField(blank=True, verbose_name='last error')),
                    ('last_error_source', models.CharField(blank=True, choices=[('platform', "the platform's refusal"), ('credentials', "the company's credentials refused"), ('permission', 'a permission missing'), ('network', 'no answer from the platform'), ('local', 'stopped here, not by the platform')], max_length=12, verbose_name='source of the last error')),
                    ('attempts', models.PositiveIntegerField(default=0, verbose_name='attempts')),
                    ('pending_action', models.CharField(blank=True, max_length=20, verbose_name='pending action')),
                    ('synced_at', models.DateTimeField(blank=True, null=True, verbose_name='synced at')),
                    ('status_read_at', models.DateTimeField(blank=True, null=True, verbose_name='status read at')),
                    ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                    ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated')),
                    ('remote_status', models.IntegerField(blank=True, choices=[(0, 'Draft'), (20, 'Queued'), (40, 'Error'), (50, 'Delivered to the tax authority'), (60, 'Delivered')], null=True, verbose_name='status')),
                    ('way', models.CharField(choices=[('approve_reject', 'Approve or reject'), ('partial', 'Partial acceptance'), ('ubl', 'ReceiptAdvice UBL file'), ('platform', 'Read from the platform')], max_length=20, verbose_name='sent as')),
                    ('answer', models.CharField(choices=[('accept', 'Accepted in full'), ('reject', 'Rejected'), ('partial', 'Partially accepted')], max_length=10, verbose_name='answer')),
                    ('requested_status', models.IntegerField(choices=[(0, 'Draft'), (20, 'Queued'), (40, 'Error'), (50, 'Delivered to the tax authority'), (60, 'Delivered')], default=20, verbose_name='requested status')),
                    ('uuid', models.CharField(blank=True, max_length=36, verbose_name='UUID')),
                    ('receipt_number', models.CharField(blank=True, max_length=16, verbose_name='reply number')),
                    ('manual_number', models.BooleanField(default=False, verbose_name='number in the file')),
                    ('prefix', models.CharField(blank=True, max_length=3, verbose_name='prefix')),
                    ('reason', models.TextField(blank=True, verbose_name='reason for rejection')),
                    ('delivered_at', models.DateTimeField(blank=True, null=True, verbose_name='actual delivery time')),
                    ('delivery_contact', models.CharField(blank=True, max_length=250, verbose_name='received by')),
                    ('batch', models.CharField(blank=True, db_index=True, max_length=32)),
                    ('status_message', models.TextField(blank=True, verbose_name='platform message')),
                    ('envelope_id', models.CharField(blank=True, max_length=64, verbose_name='envelope')),
                    ('envelope_status', models.CharField(blank=True, max_length=20, verbose_name='envelope status')),
                    ('envelope_message', models.TextField(blank=True, verbose_name='envelope message')),
                    ('ubl_file', models.FileField(blank=True, upload_to='dispatch/replies/%Y/%m/', verbose_name='UBL file')),
                    ('ubl_name', models.CharField(blank=True, max_length=255, verbose_name='file name')),
                    ('company', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='core.company', verbose_name='company')),
                    ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='created by')),
                ],
                options={
                    'verbose_name': 'dispatch note reply',
                    'verbose_name_plural': 'dispatch note replies',
                    'db_table': 'dispatch_dispatchreply',
                    'ordering': ['-created_at', '-id'],
                    'abstract': False,
                },
            ),
            migrations.CreateModel(
                name='InboxSync',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('inbox_until', models.DateTimeField(blank=True, null=True)),
                    ('inbox_walked_at', models.DateTimeField(blank=True, null=True)),
                    ('receipts_until', models.DateTimeField(blank=True, null=True)),
                    ('company', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.company')),
                ],
                options={
                    'db_table': 'dispatch_inboxsync',
                },
            ),
            migrations.CreateModel(
                name='IncomingNote',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('sync_state', models.CharField(choices=[('local', 'Saved locally'), ('queued', 'Waiting to be sent'), ('sending', 'Sending'), ('synced', 'Synced'), ('failed', 'Failed')], default='local', max_length=10, verbose_name='sync state')),
                    ('last_error', models.TextField(blank=True, verbose_name='last error')),
                    ('last_error_source', models.CharField(blank=True, choices=[('platform', "the platform's refusal"), ('credentials', "the company's credentials refused"), ('permission', 'a permission missing'), ('network', 'no answer from the platform'), ('local', 'stopped here, not by the platform')], max_length=12, verbose_name='source of the last error')),
                    ('attempts', models.PositiveIntegerField(default=0, verbose_name='attempts')),
                    ('pending_action', models.CharField(blank=True, max_length=20, verbose_name='pending action')),
                    ('synced_at', models.DateTimeField(blank=True, null=True, verbose_name='synced at')),
                    ('status_read_at', models.DateTimeField(blank=True, null=True, verbose_name='status read at')),
                    ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                    ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated')),
                    ('remote_id', models.CharField(max_length=64, verbose_name='platform id')),
                    ('remote_status', models.IntegerField(blank=True, choices=[(0, 'Draft'), (20, 'Queued'), (40, 'Error'), (50, 'Delivered to the tax authority'), (60, 'Approved'), (61, 'Being approved'), (62, 'Approval error'), (65, 'Approved automatically'), (70, 'Awaiting approval'), (80, 'Rejected'), (81, 'Being rejected'), (82, 'Rejection error'), (90, 'Partially accepted'), (91, 'Being partially accepted'), (92, 'Partial-acceptance error')], null=True, verbose_name='status')),
                    ('despatch_number', models.CharField(blank=True, max_length=16, verbose_name='dispatch note number')),
                    ('sender_identifier', models.CharField(blank=True, max_length=11, verbose_name="sender's tax or national id")),
                    ('sender_title', models.CharField(blank=True, max_length=500, verbose_name='sender')),
                    ('profile', models.CharField(blank=True, max_length=20, verbose_name='profile')),
                    ('issue_date', models.DateField(blank=True, null=True, verbose_name='dispatch note date')),
                    ('issue_time', models.TimeField(blank=True, null=True, verbose_name='dispatch note time')),
                    ('received_at', models.DateTimeField(blank=True, null=True, verbose_name='received')),
                    ('line_count', models.PositiveIntegerField(blank=True, null=True, verbose_name='lines')),
                    ('payable_amount', models.DecimalField(blank=True, decimal_places=2, max_digits=18, null=True, verbose_name='total')),
                    ('currency_code', models.CharField(blank=True, max_length=3, verbose_name='currency')),
                    ('receipt_id', models.CharField(blank=True, max_length=64, verbose_name='reply id')),
                    ('receipt_number', models.CharField(blank=True, max_length=16, verbose_name='reply number')),
                    ('lines_read_at', models.DateTimeField(blank=True, null=True, verbose_name='lines read')),
                    ('search_text', backoffice.core.search.FoldedSearchField(sources=('despatch_number', 'sender_title', 'sender_identifier', 'receipt_number'), verbose_name='search text')),
                    ('company', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='core.company', verbose_name='company')),
                ],
                options={
                    'verbose_name': 'incoming dispatch note',
                    'verbose_name_plural': 'incoming dispatch notes',
                    'db_table': 'dispatch_incomingnote',
                    'ordering': ['-received_at', '-id'],
                    'abstract': False,
                },
            ),
            migrations.CreateModel(
                name='IncomingLine',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('position', models.PositiveIntegerField(default=0, verbose_name='line')),
                    ('line_id', models.CharField(max_length=50, verbose_name='line id')),
                    ('product_name', models.CharField(blank=True, max_length=500, verbose_name='product')),
                    ('product_code', models.CharField(blank=True, max_length=100, verbose_name='product code')),
                    ('quantity', models.DecimalField(decimal_places=6, max_digits=18, verbose_name='delivered quantity')),
                    ('unit_code', models.CharField(blank=True, max_length=10, verbose_name='unit')),
                    ('note', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lines', to='dispatch_inbox.incomingnote')),
                ],
                options={
                    'verbose_name': 'incoming dispatch note line',
                    'verbose_name_plural': 'incoming dispatch note lines',
                    'db_table': 'dispatch_incomingline',
                    'ordering': ['position', 'id'],
                },
            ),
            migrations.CreateModel(
                name='IncomingDocument',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('kind', models.CharField(choices=[('pdf', 'PDF'), ('html', 'HTML'), ('ubl', 'UBL'), ('zip', 'ZIP')], max_length=4, verbose_name='kind')),
                    ('standard', models.BooleanField(default=True, verbose_name='standard layout')),
                    ('status', models.IntegerField(blank=True, null=True)),
                    ('file', models.FileField(upload_to='dispatch/incoming/%Y/%m/', verbose_name='file')),
                    ('content_type', models.CharField(max_length=100)),
                    ('fetched_at', models.DateTimeField(auto_now=True, verbose_name='fetched')),
                    ('reply', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='documents', to='dispatch_inbox.dispatchreply')),
                    ('note', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='documents', to='dispatch_inbox.incomingnote')),
                ],
                options={
                    'db_table': 'dispatch_incomingdocument',
                },
            ),
            migrations.AddField(
                model_name='dispatchreply',
                name='note',
                field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='replies', to='dispatch_inbox.incomingnote', verbose_name='incoming dispatch note'),
            ),
            migrations.CreateModel(
                name='ReplyLine',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('line_id', models.CharField(max_length=50, verbose_name='line id')),
                    ('product_name', models.CharField(blank=True, max_length=500, verbose_name='product')),
                    ('unit_code', models.CharField(blank=True, max_length=10, verbose_name='unit')),
                    ('delivered', models.DecimalField(blank=True, decimal_places=6, max_digits=18, null=True, verbose_name='delivered')),
                    ('accepted', models.DecimalField(decimal_places=6, max_digits=18, verbose_name='accepted')),
                    ('rejected', models.DecimalField(decimal_places=6, default=0, max_digits=18, verbose_name='rejected')),
                    ('reason', models.CharField(blank=True, max_length=500, verbose_name='reason')),
                    ('reply', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lines', to='dispatch_inbox.dispatchreply')),
                ],
                options={
                    'verbose_name': 'reply line',
                    'verbose_name_plural': 'reply lines',
                    'db_table': 'dispatch_replyline',
                    'ordering': ['id'],
                },
            ),
            migrations.CreateModel(
                name='IncomingExport',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('state', models.CharField(choices=[('requested', 'Requested'), ('preparing', 'Being prepared'), ('available', 'On the platform'), ('downloading', 'Downloading'), ('ready', 'Ready'), ('expired', 'Expired'), ('failed', 'Failed')], default='requested', max_length=20, verbose_name='state')),
                    ('filters', models.JSONField(blank=True, default=dict, verbose_name='filters')),
                    ('export_id', models.CharField(blank=True, max_length=100, verbose_name='export id')),
                    ('file_name', models.CharField(blank=True, max_length=255, verbose_name='file name')),
                    ('platform_created', models.DateTimeField(blank=True, null=True, verbose_name='prepared on the platform')),
                    ('size', models.PositiveBigIntegerField(blank=True, null=True, verbose_name='size (bytes)')),
                    ('message', models.TextField(blank=True, verbose_name='message')),
                    ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='requested')),
                    ('fetched_at', models.DateTimeField(blank=True, null=True, verbose_name='downloaded')),
                    ('file', models.FileField(blank=True, upload_to='dispatch-incoming-exports/%Y/%m/', verbose_name='file')),
                    ('company', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.company', verbose_name='company')),
                    ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='requested by')),
                ],
                options={
                    'verbose_name': 'incoming dispatch note export',
                    'verbose_name_plural': 'incoming dispatch note exports',
                    'db_table': 'dispatch_incomingexport',
                    'ordering': ['-created_at', '-id'],
                    'abstract': False,
                    'indexes': [models.Index(fields=['company', '-created_at'], name='dispatch_inexport_co_new')],
                    'constraints': [models.UniqueConstraint(condition=models.Q(('export_id', ''), _negated=True), fields=('company', 'export_id'), name='dispatch_inexport_unique_id')],
                },
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['company', '-created_at'], name='dispatch_incoming_co_new'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['sync_state', 'updated_at'], name='dispatch_incoming_sync'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['company', 'status_read_at'], name='dispatch_incoming_read'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['company', '-received_at', '-id'], name='dispatch_incoming_co_received'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['company', 'remote_status', 'received_at'], name='dispatch_incoming_co_status'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['company', 'sender_identifier'], name='dispatch_incoming_co_sender'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(fields=['company', 'despatch_number'], name='dispatch_incoming_co_number'),
            ),
            migrations.AddIndex(
                model_name='incomingnote',
                index=models.Index(condition=models.Q(('pending_action', ''), _negated=True), fields=['company'], name='dispatch_incoming_pending'),
            ),
            migrations.AddConstraint(
                model_name='incomingnote',
                constraint=models.UniqueConstraint(fields=('company', 'remote_id'), name='dispatch_incoming_unique_id'),
            ),
            migrations.AddConstraint(
                model_name='incomingdocument',
                constraint=models.UniqueConstraint(condition=models.Q(('note__isnull', False)), fields=('note', 'kind', 'standard'), name='dispatch_indocument_unique'),
            ),
            migrations.AddConstraint(
                model_name='incomingdocument',
                constraint=models.UniqueConstraint(condition=models.Q(('reply__isnull', False)), fields=('reply', 'kind', 'standard'), name='dispatch_replydocument_unique'),
            ),
            migrations.AddIndex(
                model_name='dispatchreply',
                index=models.Index(fields=['company', '-created_at'], name='dispatch_reply_co_new'),
            ),
            migrations.AddIndex(
                model_name='dispatchreply',
                index=models.Index(fields=['sync_state', 'updated_at'], name='dispatch_reply_sync'),
            ),
            migrations.AddIndex(
                model_name='dispatchreply',
                index=models.Index(fields=['company', 'status_read_at'], name='dispatch_reply_read'),
            ),
            migrations.AddIndex(
                model_name='dispatchreply',
                index=models.Index(fields=['company', 'remote_status'], name='dispatch_reply_co_status'),
            ),
            migrations.AddIndex(
                model_name='dispatchreply',
                index=models.Index(condition=models.Q(('pending_action', ''), _negated=True), fields=['company'], name='dispatch_reply_pending'),
            ),
            migrations.AddConstraint(
                model_name='dispatchreply',
                constraint=models.UniqueConstraint(condition=models.Q(('remote_id', ''), _negated=True), fields=('company', 'remote_id'), name='dispatch_reply_unique_id'),
            ),
        ]),
    ]
