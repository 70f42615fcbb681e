"""What the receiving side (dispatch_inbox: incoming notes and our replies to them) may use of dispatch notes: the
platform's statuses of a note and of a reply and the document kinds, the tunables and list times of the dispatch
service, its refusal, the reading and checking of UBL-TR notes and replies, the receipt list's storing (read with
the incoming list), the status changes' declaration, the export form and the prefix rule. Nothing else of this
app is imported from outside it."""

from .choices import Answer, DispatchStatus, DocumentKind, ReplyStatus
from .forms import DispatchExportForm, clean_prefix
from .models import QUANTITY
from .push import status_change
from .receipt import check_receipt, read_despatch, read_receipt, receipt_zip_base64
from .receipts import fits, receipts_mirror
from .services import DispatchError, answer_fields, list_end, platform_time, setting

__all__ = ["QUANTITY", "Answer", "DispatchError", "DispatchExportForm", "DispatchStatus", "DocumentKind",
           "ReplyStatus", "answer_fields", "check_receipt", "clean_prefix", "fits", "list_end", "platform_time",
           "read_despatch", "read_receipt", "receipt_zip_base64", "receipts_mirror", "setting", "status_change"]
