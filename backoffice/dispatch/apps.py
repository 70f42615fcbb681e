from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DispatchConfig(AppConfig):
    name = "backoffice.dispatch"
    label = "dispatch"
    verbose_name = _("Dispatch notes")

    def ready(self):
        from backoffice.core import actions, families, schedule, sync

        from . import copies, jobs, replies, services  # noqa: F401 (copies registers the copy view)
        from .families import DISPATCH_EXPORTS, INCOMING_EXPORTS
        from .models import DispatchNote, DispatchReply, IncomingNote

        sync.register_pushable(DispatchNote, jobs.note_push)
        sync.register_pushable(DispatchReply, jobs.reply_push)
        actions.register_actions(DispatchNote, services.NOTE_ACTIONS)
        actions.register_actions(IncomingNote, replies.NOTE_ANSWERS)
        actions.register_actions(DispatchReply, replies.REPLY_ACTIONS)
        families.register_family(DISPATCH_EXPORTS)
        families.register_family(INCOMING_EXPORTS)
        # Incoming notes and the replies to ours: read every few minutes (the recent past again once a day).
        schedule.register(func=jobs.inbox_mirror_all, interval=int(services.setting("DISPATCH_INBOX_SECONDS")),
                          name="dispatch_inbox", job_timeout=900)
        # Notes the platform still works on: a poll job per company that has some.
        schedule.register(func=jobs.notes_poll_all, interval=60, name="dispatch_poll", job_timeout=300)
        # Notes the platform lists as new (written on its portal, say): read, then marked read (isNew).
        schedule.register(func=jobs.outbox_mirror_all, interval=3600, name="dispatch_outbox_mirror", job_timeout=600)
        # The dispatch-note users' list, once a day.
        schedule.register(func=jobs.taxpayers_refresh, interval=86400, name="dispatch_taxpayers", job_timeout=3600)
