"""What the receiving side (dispatch_inbox: incoming notes and our replies to them) may use of dispatch notes: the
platform's statuses of a note and of a reply and the document kinds, the tunables and list times of the dispatch
service, its refusal, the reading and checking of UBL-TR notes and replies, the receipt list's storing (read with
the incoming list), the status changes' declaration, the export form and the prefix rule. What invoices may use: the
notes (read, company-scoped), their lines with the receiver's answer, the statuses a note is invoiced in, and the
watch's record of which invoice bills a note (set_invoiced), and UBL-TR's file layer (ubltr) to read an
invoice. Nothing else of this app is imported from outside it."""

from . import ubltr
from .choices import INVOICEABLE_STATUSES, Answer, DispatchStatus, DocumentKind, ReplyStatus
from .forms import DispatchExportForm, clean_prefix
from .invoicing import INVOICING_DAYS, invoiced_notes, set_invoiced
from .models import QUANTITY, DispatchNote
from .push import status_change
from .receipt import check_receipt, read_despatch, read_receipt, receipt_zip_base64
from .receipts import answered_lines, fits, receipts_mirror
from .services import DispatchError, answer_fields, list_end, platform_time, setting

__all__ = ["INVOICEABLE_STATUSES", "INVOICING_DAYS", "QUANTITY", "Answer", "DispatchError", "DispatchExportForm",
           "DispatchNote", "DispatchStatus", "DocumentKind", "ReplyStatus", "answer_fields", "answered_lines",
           "check_receipt", "clean_prefix", "fits", "invoiced_notes", "list_end", "platform_time", "read_despatch",
           "read_receipt", "receipt_zip_base64", "receipts_mirror", "set_invoiced", "setting", "status_change", "ubltr"]
