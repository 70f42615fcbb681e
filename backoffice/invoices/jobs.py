"""Job entry points of invoices (thin: the work is in services)."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.jobs import job

from . import documents, mirror, services, taxpayers


@job(_("Send invoice"))
def invoice_push(pk):
    return services.invoice_push(pk)


@job(_("Read invoices from the platform"))
def invoices_mirror(company_id, full=False):
    return mirror.invoices_mirror(company_id, full=full)


@job(_("Read invoices from the platform (every company)"))
def invoices_mirror_all():
    return mirror.invoices_mirror_all()


@job(_("Read invoice statuses"))
def invoices_poll(company_id, follow=False):
    return mirror.invoices_poll(company_id, follow=follow)


@job(_("Read invoice statuses (every company)"))
def invoices_poll_all():
    return mirror.invoices_poll_all()


@job(_("Download invoice PDFs as one ZIP"))
def pdf_bundle(pk):
    return documents.pdf_bundle_run(pk)


@job(_("Refresh the list of registered e-invoice users"))
def taxpayers_refresh():
    return taxpayers.taxpayers_refresh()
