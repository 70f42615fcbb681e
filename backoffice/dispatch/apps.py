from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DispatchConfig(AppConfig):
    name = "backoffice.dispatch"
    label = "dispatch"
    verbose_name = _("Dispatch notes")

    def ready(self):
        from backoffice.core import actions, families, schedule, sync

        from . import jobs, services
        from .families import DISPATCH_EXPORTS
        from .models import DispatchNote

        sync.register_pushable(DispatchNote, jobs.note_push)
        actions.register_actions(DispatchNote, services.NOTE_ACTIONS)
        families.register_family(DISPATCH_EXPORTS)
        # Notes the platform still works on: a poll job per company that has some.
        schedule.register(func=jobs.notes_poll_all, interval=60, name="dispatch_poll", job_timeout=300)
        # Notes the platform lists as new (written on its portal, say): read, then marked read (isNew).
        schedule.register(func=jobs.outbox_mirror_all, interval=3600, name="dispatch_outbox_mirror", job_timeout=600)
        # The dispatch-note users' list, once a day.
        schedule.register(func=jobs.taxpayers_refresh, interval=86400, name="dispatch_taxpayers", job_timeout=3600)
