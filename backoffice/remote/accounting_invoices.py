"""Accounting service, invoices (document 3, sections 2.6, 3.1 and 4.2): the two paged lists, one invoice in
full, save, update, delete, post to accounting and reverse the posting.

Every path is a default of the endpoint table (`accounting_invoice.*`), to be confirmed with the provider.
A save is a POST: after a 5xx or a timeout it is looked up with find() before it is sent again (we give the
invoice its ettn ourselves, so the lookup is exact). An update sends the same ettn again, which updates the
same invoice. Delete, post and reverse answer an object with field Error when refused, in a 4xx or in a 2xx
alike; both raise RemoteError with that text.
"""

from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation

from .accounting import condition, filtered_or_all, raise_refusal, unless_gone
from .common import FILTER_QUERY, MAX_PAGE_SIZE, Client, envelope, field, list_params, to_int, walk_pages

LISTS = {True: "accounting_invoice.list_outgoing", False: "accounting_invoice.list_incoming"}


def _utc(value):
    """A moment of the platform's lists (ISO; UTC when it names no zone), or None."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _cents(value):
    try:
        return round(Decimal(str(value)) * 100)
    except (InvalidOperation, TypeError, ValueError):
        return None


def target(ettn: str, is_send: bool) -> dict:
    """One item of a post / reverse body (and what record actions pass for an invoice)."""
    return {"ettn": str(ettn), "isSend": bool(is_send)}


class AccountingInvoiceClient(Client):
    def invoices(self, is_send: bool, page_index: int = 1, page_size: int = MAX_PAGE_SIZE, *, conditions=None,
                 sorted_column: str | None = None, is_desc: bool | None = None) -> dict:
        """One page of outgoing (is_send) or incoming invoices: the list items of document 3, 2.6."""
        params = list_params(page_index, page_size, conditions=conditions, sorted_column=sorted_column,
                             is_desc=is_desc, filter_name=FILTER_QUERY)
        return envelope(self._call(LISTS[bool(is_send)], params=params))

    def invoice_pages(self, is_send: bool, *, page_size: int = MAX_PAGE_SIZE, conditions=None, sorted_column=None,
                      is_desc=None, start: int = 1):
        return walk_pages(lambda index: self.invoices(is_send, index, page_size, conditions=conditions,
                                                      sorted_column=sorted_column, is_desc=is_desc), start)

    def changed_since(self, is_send: bool, since, *, page_size: int = MAX_PAGE_SIZE):
        """Pages of the invoices changed at or after `since` (an ISO moment), newest change first: an invoice
        changed during the walk moves to the front, which is behind us, so the others only move back (read twice,
        never skipped); its new change is after the newest we saw and comes with the next walk. A platform that
        refuses the filter gives every invoice (the caller stores what it gets)."""
        def pages(conditions=None):
            return self.invoice_pages(is_send, page_size=page_size, conditions=conditions,
                                      sorted_column="updateDateUtc", is_desc=True)
        return filtered_or_all(pages, [condition("updateDateUtc", "büyük ve eşittir", since)])

    def all_pages(self, is_send: bool, *, page_size: int = MAX_PAGE_SIZE):
        """Every invoice, newest created first (a change does not move an invoice in this order)."""
        return self.invoice_pages(is_send, page_size=page_size, sorted_column="createDateUtc", is_desc=True)

    def invoice(self, ettn: str, is_send: bool) -> dict | None:
        """The invoice in full (lines, taxes, totals, notes, payment means, archive info); None when the
        platform does not have it."""
        answer = unless_gone(self._call, "accounting_invoice.get", path_params={"guid": ettn},
                             params={"isSend": "true" if is_send else "false"})
        raise_refusal(answer, "accounting_invoice.get")
        return answer if isinstance(answer, dict) else None

    def save(self, body: dict) -> dict:
        answer = self._call("accounting_invoice.save", json=body)
        raise_refusal(answer, "accounting_invoice.save")
        return answer or {}

    def update(self, body: dict) -> dict:
        answer = self._call("accounting_invoice.update", json=body)
        raise_refusal(answer, "accounting_invoice.update")
        return answer or {}

    def find(self, *, ettn: str, is_send: bool, identifier: str, issue_date, payable, description: str,
             created_after: datetime, exclude=()) -> dict | None:
        """The invoice a save whose answer was lost created, or None. By the ettn we gave it; a platform that
        gave it an ettn of its own is searched among the ettns we do not know, created since our first attempt,
        for the same customer, issue date, payable amount (to the cent) and description: another invoice is
        never taken for ours."""
        found = self.invoice(ettn, is_send)
        if found is not None:
            return found
        conditions = [condition("targetVknTckn", "eşittir", identifier), condition("issueDate", "eşittir",
                                                                                   str(issue_date)),
                      condition("createDateUtc", "büyük ve eşittir", created_after.astimezone(timezone.utc)
                                .isoformat())]
        for page in filtered_or_all(lambda conditions=None: self.invoice_pages(is_send, conditions=conditions),
                                     conditions):
            for item in page["items"]:
                other = str(field(item, "ettn") or "")
                if (not other or other in exclude or str(field(item, "targetVknTckn") or "") != identifier
                        or str(field(item, "issueDate") or "")[:10] != str(issue_date)
                        or (_utc(field(item, "createDateUtc")) or created_after) < created_after
                        or _cents(field(item, "payableAmount")) != _cents(payable)):
                    continue
                full = self.invoice(other, is_send)
                if full is not None and str(field(full, "description") or "") == description:
                    return full
        return None

    def delete(self, ettn: str, is_send: bool) -> None:
        """Delete one invoice; a 404 means it is already gone (a DELETE sent again after it applied)."""
        operation = "accounting_invoice.delete"
        raise_refusal(unless_gone(self._call, operation, path_params={"ettn": ettn},
                                  params={"isSend": "true" if is_send else "false"}), operation)

    def post(self, targets: list[dict]) -> None:
        """Post invoices to accounting (targets: [{ettn, isSend}])."""
        raise_refusal(self._call("accounting_invoice.post", json=list(targets)), "accounting_invoice.post")

    def reverse(self, targets: list[dict]) -> None:
        """Reverse the posting of invoices."""
        raise_refusal(self._call("accounting_invoice.reverse", json=list(targets)), "accounting_invoice.reverse")

    def statuses(self, targets: list[dict]) -> list[dict]:
        """[{id: ettn, status: recordStatus}] of each invoice the platform has: how the post and reverse actions
        learn whether an earlier attempt took effect (core.actions). One get per invoice."""
        answers = []
        for item in targets:
            full = self.invoice(item["ettn"], item["isSend"])
            if full is not None:
                answers.append({"id": item["ettn"], "status": to_int(field(full, "recordStatus"))})
        return answers
