"""The one registry of what apps declare (NetBox's `netbox.registry`): named stores, filled as the modules that
declare are imported (core.domains: each app names them) and by their decorators, read by core. What a domain
declared is one lookup:

    registry["jobs"]["invoice_push"]          # the job body of that name, and its label
    registry["polls"]["dispatch_notes_poll"] # a StatusPoll (core.polling)
    registry["action_sets"][EventTicket]     # an ActionSet (core.actions)

A store is a plain dict, created with the registry; a name that is not a store is an error (a typo would
otherwise start an empty store nobody reads). Stores are filled once at start-up and only read after it.
"""

STORES = (
    "action_sets",  # model -> ActionSet (core.actions)
    "blocks",  # name -> dashboard block (core.dashboard)
    "bulk_actions",  # (app_label, model_name) -> {name: bulk action} added by another app (core.generic.registry)
    "connection_keepers",  # service -> keep(company) (core.platform)
    "families",  # name -> export / report Family (core.families)
    "job_labels",  # job name -> the words people read for it (core.joblabels)
    "jobs",  # job name -> job body (core.jobs.job)
    "model_prefixes",  # (app_label, model_name) -> URL prefix (core.generic.registry)
    "model_routes",  # (app_label, model_name) -> {view name: route} (core.generic.registry)
    "model_views",  # (app_label, model_name) -> {view name: view class} (core.generic.registry)
    "polls",  # name -> StatusPoll (core.polling)
    "pushables",  # model -> push job (core.sync)
    "schedule",  # cron entry name -> entry (core.schedule)
    "sync_sources",  # name -> dashboard sync source (core.dashboard)
)


class Registry(dict):
    """A dict of named stores that refuses a store it was not made with."""

    def __init__(self, stores=STORES):
        super().__init__({name: {} for name in stores})

    def __getitem__(self, name):
        try:
            return super().__getitem__(name)
        except KeyError:
            raise KeyError(f"no store {name!r} in the registry (core.registry.STORES)") from None

    def __setitem__(self, name, value):
        raise TypeError("the registry's stores are fixed; add a name to core.registry.STORES")


registry = Registry()
