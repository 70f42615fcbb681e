"""An Excel download answered 200 with an Error (document 1, section 7) fails the export with the platform's
text on its row, instead of being kept as a broken ZIP."""

import pytest
from django.utils import translation

from backoffice.core.exports import ExportState
from backoffice.remote.errors import RemoteError
from backoffice.tickets.choices import TicketKind
from backoffice.tickets.families import TICKET_EXPORTS

from .test_services import fast, run_export  # noqa: F401 (fast is a fixture)

pytestmark = pytest.mark.django_db


def test_an_export_whose_download_is_refused_in_a_200_fails_with_the_platform_text(fast,  # noqa: F811
                                                                                   sandbox_company):
    fast.add_fault(path="/ticket/v1/event-ticket/export/*/download", method="GET", error_rate=1.0, error_status=200)
    export = TICKET_EXPORTS.start(company=sandbox_company, kind=TicketKind.EVENT, filters={})
    with translation.override("en"), pytest.raises(RemoteError):
        run_export(export)
    export.refresh_from_db()
    assert export.state == ExportState.FAILED and not export.file
    assert "The sandbox was told to refuse this request." in export.message
