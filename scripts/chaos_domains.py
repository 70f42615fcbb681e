"""`make chaos` beyond tickets (issue 32): the other sending domains, created through the services the pages use
while scripts/chaos.py kills workers and Redis and the platform answers 500 after applying, then held against the
sandbox through its own list operations.

Per company (one with an API key, one with a service user), at the start of the chaos phase: the chart's 120
main account, its 120.01 group and a pool sub-account 120.01.001, 600 and 600.01 (the journals' accounts), and the
invoices' and dispatch notes' customer (a current account with its first address, mapped to that pool account).
Then, at a steady pace:
- current accounts with their first address (inside the create), a bank record and a contact; every second one
  mapped to the pool account;
- chart accounts: sub-accounts under 120.01;
- invoices: saved as drafts, sent a moment later (invoice_send), posted to accounting once on the platform;
- dispatch notes: half sent at once (20), half as drafts (0) sent later by the status change; a note the platform
  puts in error (the sandbox's error rate) goes back to draft and is sent once more;
- replies to incoming notes: notes arrive on the sandbox (its control action), the inbox is read as the page's
  "read now" does, and each note is answered: a partial acceptance, an acceptance or a rejection, in turn;
- ledger uploads: a month's journal per company, checked by the worker, uploaded once the month before is there.

Counted as documents: every current account, address, bank record, contact, mapping, chart account, invoice,
dispatch note, reply and journal. The run (chaos.py) calls: plan(), prepare() before the faults, create() per
unit, follow_up() all along (the users' next steps: sends, postings, answers, uploads), open_steps(), compare().
"""

import calendar
from collections import Counter, defaultdict
from datetime import date, timedelta
from decimal import Decimal

# The services the faults hit besides the ticket service (chaos.py adds /ticket/*). Token endpoint spared.
SERVICE_GLOBS = ("/accounting/*", "/invoice/*", "/dispatch/*", "/ledger/*")
# Creates whose refusal (400/409/422) means something was sent twice or is invalid: (method, path).
CREATE_PATHS = [("POST", "/accounting/v1/currentaccount"), ("POST", "/accounting/v1/chartofaccount"),
                *[("POST", f"/accounting/v1/currentaccount/{part}") for part in ("address", "bank", "contact",
                                                                                   "mapping")],
                ("POST", "/accounting/v1/invoice"), ("POST", "/dispatch/v1/outboxdespatch/create"),
                ("POST", "/dispatch/v1/outboxreceiptadvice/partialaccept"),
                ("POST", "/dispatch/v1/outboxreceiptadvice/approvereject"), ("POST", "/ledger/v1/period")]
VKN = "1234567890"  # the current accounts' identifier (told apart by their codes)
CUSTOMER_VKN = "4840000006"  # the customer of invoices and dispatch notes: one mailbox in the sandbox's users' list
IBAN = "TR330006100519786457841326"
INCOMING_LINES = [{"name": "Çimento 50 kg", "quantity": 40, "unit_code": "C62"},
                  {"name": "Kum", "quantity": 12, "unit_code": "TNE"}]
SENDER_VKN = "4840000006"
FIRST_MONTH = date(2025, 1, 1)
DOMAINS = ("current accounts", "chart accounts", "invoices", "dispatch notes", "replies", "ledger uploads")


def plan(documents, tickets_minimum=4) -> tuple[dict, int]:
    """How many of each: ({kind: count}, documents left for the tickets). Every kind at least twice (once per
    company) however small the run."""
    base = 16  # per company: 5 chart accounts, the customer, its address and its mapping
    accounts = max(2, round(documents * 0.12 / 4))
    counts = {"account": accounts, "chart": max(2, round(documents * 0.04)), "invoice": max(2, round(documents * 0.08)),
              "note": max(2, round(documents * 0.08)), "incoming": max(2, round(documents * 0.06)),
              "journal": min(22, max(2, round(documents * 0.02)))}  # January to November of one year
    own = base + 4 * accounts + (accounts + 1) // 2 + sum(count for kind, count in counts.items() if kind != "account")
    left = documents - own
    if left < tickets_minimum:
        raise ValueError(f"--documents is too small for every domain: at least {own + tickets_minimum}")
    return counts, left


def figures_of(counts) -> dict:
    accounts = counts["account"]
    return {"current accounts with children": 2 * 3 + 4 * accounts + (accounts + 1) // 2,
            "chart accounts": 10 + counts["chart"], "invoices": counts["invoice"], "dispatch notes": counts["note"],
            "replies to incoming notes": counts["incoming"], "ledger uploads": counts["journal"]}


def spread(kind, count, span, rng, unit_class, start=0.02, end=0.85):
    """count units of a kind, alternately for each company, at random moments of [start, end] x span."""
    return [unit_class(rng.uniform(span * start, span * end), kind, index % 2, expedition=index)
            for index in range(count)]


def month_end(day: date) -> date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def journal_text(start: date, month: int, entries: int = 3) -> str:
    """The journal of a company's month-th month (from 0) in the tax authority's tab-separated text (document 3,
    2.8): its Y line, then balanced entries of two lines each (as tests/ledger/builders.py writes them), their
    entry and line counters going on from the month before."""
    last = calendar.monthrange(start.year, start.month)[1]
    lines = [f"Y\t{date(start.year, 1, 1).isoformat()}\t{date(start.year, 12, 31).isoformat()}\t0\t{VKN}\t"]
    for index in range(entries):
        counter, line = month * entries + index + 1, 1 + 2 * (month * entries + index)
        d = start.replace(day=min(last, 1 + index * last // entries)).isoformat()
        amount = "1250.00"
        lines += [f"H\tMUHASEBE\t{d}\tF{counter:05d}\tSatış faturası {counter}\t{amount}\t{amount}\t{counter}\t",
                  f"1\t{line}\t120\tALICILAR\tÖrnek Ticaret A.Ş.\t120.01\t{amount}\tD\t{d}\tinvoice\t\t"
                  f"ABC2025{counter:09d}\t\t{d}\t\tSatış\t",
                  f"2\t{line + 1}\t600\tYURT İÇİ SATIŞLAR\t\t600.01\t{amount}\tC\t{d}\tinvoice\t\t"
                  f"ABC2025{counter:09d}\t\t{d}\t\tSatış\t"]
    return "\n".join(lines) + "\n"


def record_models() -> list:
    from backoffice.chart_of_accounts.models import Account
    from backoffice.current_accounts.models import Address, Bank, Contact, CurrentAccount, Mapping
    from backoffice.dispatch.models import DispatchNote
    from backoffice.dispatch_inbox.models import DispatchReply, IncomingNote
    from backoffice.invoices.models import Invoice
    from backoffice.ledger.models import Journal, Period

    return [CurrentAccount, Address, Bank, Contact, Mapping, Account, Invoice, DispatchNote, IncomingNote,
            DispatchReply, Journal, Period]


def label_of(record) -> str:
    for name in ("invoice_number", "despatch_number", "receipt_number", "full_code", "code", "name",
                 "address_name", "full_name", "range_label"):
        value = getattr(record, name, "")
        if value:
            return str(value)
    return ""


class Domains:
    def __init__(self, run, describe):
        self.run = run
        self.describe = describe  # chaos.describe: a record, its state and its last job, for the report
        self.tally = Counter()  # the follow-up steps taken (a figure of the report)
        self.base = {}  # company pk -> {"group": Account, "pool": Account, "customer": CurrentAccount}
        self.arrivals = Counter()  # company pk -> incoming notes made on the sandbox
        self.answer_turn = 0
        self.redrafted = set()  # notes sent back to draft once
        self.last_read = {}  # company pk -> monotonic time of the last inbox read asked for
        self.errors = []  # follow-up steps that raised something unexpected (a finding)
        self.refusals = Counter()  # why requests were refused (the driver's log)

    # --- setup -------------------------------------------------------------------------------------------------

    def prepare(self, dispatch_error_rate):
        """Before the faults: the sandbox's pace for these services, the dispatch users' list (the receiver's
        mailbox comes from it, as the daily refresh leaves it)."""
        from backoffice.dispatch import services as dispatch_services
        from backoffice.dispatch import taxpayers

        sandbox = self.run.sandbox
        for company in self.run.companies:
            customer = str(company.customer_unique_id)
            sandbox.control("POST", "dispatch/settings", {"customer": customer, "processing_seconds": 1,
                                                          "approve_seconds": 1, "error_rate": dispatch_error_rate})
            sandbox.control("POST", "ledger/settings", {"customer": customer, "step_seconds": 1})
        taxpayers.taxpayers_store(dispatch_services.dispatch_client(self.run.companies[0]).taxpayer_list())

    def units(self, counts, span, rng, unit_class) -> list:
        units = [unit_class(0.0, "base", company) for company in (0, 1)]
        for kind in ("account", "chart", "invoice", "note", "incoming"):
            units += spread(kind, counts[kind], span, rng, unit_class)
        # Journals: month after month per company, spread evenly (each waits for the month before).
        journals = counts["journal"]
        for index in range(journals):
            units.append(unit_class(span * (0.05 + 0.75 * index / max(1, journals)), "journal", index % 2,
                                    expedition=index // 2))
        return units

    # --- creating ----------------------------------------------------------------------------------------------

    def create(self, unit, now_dt):
        company = self.run.companies[unit.company]
        getattr(self, f"_create_{unit.kind}")(company, unit, now_dt)

    def _create_base(self, company, unit, now_dt):
        from backoffice.chart_of_accounts import services as chart
        from backoffice.chart_of_accounts.models import Account
        from backoffice.current_accounts import services as accounts
        from backoffice.current_accounts.models import CurrentAccount, Mapping

        main = chart.account_save(Account(company=company, type=0, base_code="120", name="Alıcılar"))
        group = chart.account_save(Account(company=company, type=1, parent=main, unit_code="01", name="Yurtiçi"))
        pool = chart.account_save(Account(company=company, type=2, parent=group, unit_code="001",
                                          name="Yurtiçi Alıcılar (havuz)", is_bundle_account=True, currency_code_id=1))
        # The journals' other side (600.01): our check knows every account a journal names from the chart.
        sales = chart.account_save(Account(company=company, type=0, base_code="600", name="Yurt İçi Satışlar"))
        chart.account_save(Account(company=company, type=1, parent=sales, unit_code="01", name="Yurt içi"))
        customer = accounts.current_account_save(
            CurrentAccount(company=company, name="Tek Kutu Lojistik A.Ş.", identifier=CUSTOMER_VKN, code="MUS"),
            address=self._address(postal_zone="34710"))
        accounts.child_save(Mapping(current_account=customer, account=pool, name="Satış"))
        self.base[company.pk] = {"group": group, "pool": pool, "customer": customer}

    @staticmethod
    def _address(**fields):
        from backoffice.current_accounts.models import Address

        return Address(address_name="Merkez", sub_division_name="Kadıköy", city="İstanbul", country="Türkiye",
                       **fields)

    def _create_account(self, company, unit, now_dt):
        from backoffice.current_accounts import services as accounts
        from backoffice.current_accounts.models import Bank, Contact, CurrentAccount, Mapping

        number = unit.expedition + 1
        account = accounts.current_account_save(
            CurrentAccount(company=company, name=f"Chaos Cari {unit.company + 1}-{number:04d}", identifier=VKN,
                           code=f"K{number:04d}"), address=self._address())
        accounts.child_save(Bank(current_account=account, name="Ana", iban_number=IBAN))
        accounts.child_save(Contact(current_account=account, full_name=f"Kişi {number}"))
        if unit.expedition % 2 == 0:
            accounts.child_save(Mapping(current_account=account, account=self.base[company.pk]["pool"],
                                        name=f"Eşleme {number}"))

    def _create_chart(self, company, unit, now_dt):
        from backoffice.chart_of_accounts import services as chart
        from backoffice.chart_of_accounts.models import Account

        chart.account_save(Account(company=company, type=2, parent=self.base[company.pk]["group"],
                                   unit_code=f"{100 + unit.expedition:03d}", name=f"Alt hesap {unit.expedition + 1}",
                                   currency_code_id=1))

    def _create_invoice(self, company, unit, now_dt):
        from django.utils import timezone

        from backoffice.invoices import services as invoices
        from backoffice.invoices.choices import RecordType
        from backoffice.invoices.models import Invoice, InvoiceLine

        customer = self.base[company.pk]["customer"]
        invoice = Invoice(company=company, current_account=customer, target_vkn_tckn=customer.identifier,
                          target_title=customer.name, current_account_code=customer.code,
                          record_type=RecordType.EARCHIVE, prefix="ABC", issue_date=timezone.localdate(),
                          description=f"Chaos {unit.company + 1}-{unit.expedition + 1}", invoice_type="SATIS")
        invoices.invoice_save(invoice, [InvoiceLine(inventory_service_code="HZM-01", quantity=Decimal(2),
                                                    unit_price=Decimal("150.00"), vat_rate=Decimal(20))])

    def _create_note(self, company, unit, now_dt):
        from django.utils import timezone

        from backoffice.dispatch import services as dispatch
        from backoffice.dispatch import taxpayers
        from backoffice.dispatch.choices import DispatchStatus, Numbering
        from backoffice.dispatch.models import DispatchDriver, DispatchLine, DispatchNote

        customer = self.base[company.pk]["customer"]
        now = timezone.localtime()
        status = DispatchStatus.DRAFT if unit.expedition % 2 else DispatchStatus.QUEUED
        note = DispatchNote(
            company=company, current_account=customer, receiver_identifier=customer.identifier,
            receiver_name=customer.name, target_alias=taxpayers.mailboxes(customer.identifier)[0],
            receiver_city="İstanbul", receiver_district="Kadıköy", delivery_city="İstanbul",
            delivery_district="Kadıköy", delivery_zip_code="34710", issue_date=now.date(), issue_time=now.time(),
            shipment_date=now, requested_status=status, plate_number="34ABC123", numbering=Numbering.SERIES,
            prefix="IRS")
        dispatch.note_save(note, [DispatchLine(product_name="Çimento 50 kg", quantity=40, unit_code="C62",
                                               unit_price="125.50", vat_rate=20)],
                           [DispatchDriver(name="Ayşe", surname="Yılmaz", tckn="10000000146")])

    def _create_incoming(self, company, unit, now_dt):
        from django.utils import timezone

        # A little earlier: the incoming list's endDate stays a little behind now (dispatch.services.list_end).
        created = (timezone.now() - timedelta(seconds=10)).isoformat()
        self.run.sandbox.control("POST", "dispatch/incoming", {
            "customer": str(company.customer_unique_id), "count": 1, "lines": INCOMING_LINES,
            "sender_vkn": SENDER_VKN, "sender_title": "Tek Kutu Lojistik A.Ş.", "created": created})
        self.arrivals[company.pk] += 1

    def _create_journal(self, company, unit, now_dt):
        from django.core.files.uploadedfile import SimpleUploadedFile

        from backoffice.ledger import services as ledger

        month = date(FIRST_MONTH.year, unit.expedition + 1, 1)
        ledger.journal_create(company=company, user=None,
                              source=SimpleUploadedFile("yevmiye.txt", journal_text(month, unit.expedition).encode()),
                              start=month, end=month_end(month), split_size=10, time_stamp=False,
                              without_tax_detail=False)

    # --- the users' next steps ---------------------------------------------------------------------------------

    def follow_up(self, now):
        """Sends of drafts, postings, status changes, inbox reads and answers, uploads: each a request as a user
        makes it; a refusal (something on its way) is counted and asked again later."""
        for company in self.run.companies:
            if company.pk not in self.base:
                continue
            for step in (self._send_invoices, self._post_invoices, self._send_notes, self._redraft_notes,
                         self._read_inbox, self._answer_notes, self._upload_journals):
                try:
                    step(company, now)
                except Exception as exc:  # a finding, not the end of the run
                    self.errors.append(f"{step.__name__} of {company.name}: {exc.__class__.__name__}: "
                                       f"{str(exc)[:200]}")

    def _refused(self, exc):
        """A request refused as the page would refuse it (something still on its way): asked again later."""
        self.tally["requests refused"] += 1
        self.refusals[str(exc)[:120]] += 1

    def _send_invoices(self, company, now):
        from backoffice.core.choices import SyncState
        from backoffice.invoices import services as invoices
        from backoffice.invoices.models import Invoice

        drafts = list(Invoice.objects.filter(company=company, is_send=True, sync_state=SyncState.LOCAL,
                                             pending_action="").order_by("pk")[:5])
        if drafts:
            try:
                invoices.invoice_send(drafts)
                self.tally["invoices sent"] += len(drafts)
            except invoices.InvoiceError as exc:
                self._refused(exc)

    def _post_invoices(self, company, now):
        from backoffice.core import actions
        from backoffice.core.choices import SyncState
        from backoffice.current_accounts.models import Mapping
        from backoffice.invoices import services as invoices
        from backoffice.invoices.choices import CANCELLED_STATUSES, PostingStatus
        from backoffice.invoices.models import Invoice

        customer = self.base[company.pk]["customer"]
        if not Mapping.objects.filter(current_account=customer).exclude(remote_id="").exists():
            return  # posting needs the customer's mapping on the platform (document 3, 2.6)
        ready = list(Invoice.objects.filter(company=company, is_send=True, sync_state=SyncState.SYNCED,
                                            pending_action="", record_status=PostingStatus.NOT_POSTED)
                     .exclude(remote_status__in=CANCELLED_STATUSES).exclude(remote_status__isnull=True)
                     .order_by("pk")[:5])
        if ready:
            try:
                invoices.posting_request("post", ready)
                self.tally["invoices posted"] += len(ready)
            except actions.ActionRefused as exc:
                self._refused(exc)

    def _send_notes(self, company, now):
        from backoffice.core import actions
        from backoffice.core.choices import SyncState
        from backoffice.dispatch import push
        from backoffice.dispatch.choices import DispatchStatus
        from backoffice.dispatch.models import DispatchNote

        drafts = list(DispatchNote.objects.filter(company=company, sync_state=SyncState.SYNCED, pending_action="",
                                                  remote_status=DispatchStatus.DRAFT).order_by("pk")[:5])
        if drafts:
            try:
                push.send_request(drafts)
                self.tally["dispatch drafts sent (0 -> 20)"] += len(drafts)
            except actions.ActionRefused as exc:
                self._refused(exc)

    def _redraft_notes(self, company, now):
        from backoffice.core import actions
        from backoffice.core.choices import SyncState
        from backoffice.dispatch.choices import DispatchStatus
        from backoffice.dispatch.models import DispatchNote

        failed = list(DispatchNote.objects.filter(company=company, sync_state=SyncState.SYNCED, pending_action="",
                                                  remote_status=DispatchStatus.ERROR)
                      .exclude(pk__in=self.redrafted).order_by("pk")[:5])
        if failed:
            try:
                actions.action_request(DispatchNote, "draft", failed)
                self.redrafted.update(note.pk for note in failed)
                self.tally["dispatch notes in error back to draft (40 -> 0)"] += len(failed)
            except actions.ActionRefused as exc:
                self._refused(exc)

    def _read_inbox(self, company, now):
        from backoffice.core.jobs import enqueue
        from backoffice.dispatch_inbox import mirror
        from backoffice.dispatch_inbox.models import IncomingNote

        if IncomingNote.objects.filter(company=company).count() >= self.arrivals[company.pk]:
            return
        if now - self.last_read.get(company.pk, -1e9) < 8:
            return
        self.last_read[company.pk] = now
        # As the incoming list's "read now" asks (dispatch_inbox.views' read view).
        enqueue(mirror.inbox_mirror, company=company.pk, args=[company.pk])
        self.tally["inbox reads asked"] += 1

    def _answer_notes(self, company, now):
        from django.utils import timezone

        from backoffice.core import actions
        from backoffice.dispatch_inbox import documents, replies
        from backoffice.dispatch_inbox.answers import answer_refusal, partial_save
        from backoffice.dispatch_inbox.models import IncomingNote

        waiting = [note for note in IncomingNote.objects.filter(company=company, pending_action="",
                                                                 replies__isnull=True).order_by("pk")[:3]
                   if not answer_refusal(note)]
        local_now = timezone.localtime()
        delivered = max(local_now - timedelta(hours=1), local_now.replace(hour=0, minute=0, second=0, microsecond=0))
        for note in waiting:
            way = self.answer_turn % 3
            try:
                if way == 0:
                    lines = documents.lines_load(note)  # the reply page reads the note's lines
                    answers = [{"line_id": line.line_id, "accepted": Decimal(line.quantity) - (1 if i == 0 else 0),
                                "rejected": Decimal(1) if i == 0 else Decimal(0),
                                "reason": "Hasarlı" if i == 0 else ""} for i, line in enumerate(lines)]
                    partial_save(note, answers=answers, delivered_at=delivered, contact="Ayşe Yılmaz", prefix="IRY")
                    self.tally["partial acceptances"] += 1
                else:
                    replies.answer_request([note], approve=way == 1, prefix="IRY",
                                           reason="" if way == 1 else "Sipariş edilmedi", delivered_at=delivered)
                    self.tally["acceptances" if way == 1 else "rejections"] += 1
                self.answer_turn += 1
            except actions.ActionRefused as exc:
                self._refused(exc)
            except Exception as exc:
                # Reading the note's lines is a platform call from this process: a fault may answer it.
                from backoffice.remote.errors import RemoteError

                if not isinstance(exc, RemoteError):
                    raise
                self.tally["line reads failed (asked again)"] += 1

    def _upload_journals(self, company, now):
        from backoffice.core.choices import SyncState
        from backoffice.ledger import services as ledger
        from backoffice.ledger.choices import CheckState
        from backoffice.ledger.models import Journal

        journals = list(Journal.objects.filter(company=company).order_by("start_date"))
        for index, journal in enumerate(journals):
            if journal.sync_state != SyncState.LOCAL:
                continue
            if journal.check_state != CheckState.PASSED:
                return  # checked in order: the next month waits for this one
            if index and journals[index - 1].sync_state != SyncState.SYNCED:
                return  # months go in order: the one before must be on the platform (the mirror has it)
            try:
                ledger.journal_upload_request(journal)
                self.tally["journals uploaded"] += 1
            except ledger.LedgerError as exc:
                self._refused(exc)
            return

    def open_steps(self) -> int:
        """Steps the users have still to take: drafts not sent, invoices not posted, notes not answered, journals
        not uploaded, incoming notes not read yet. The run is settled only when none is left."""
        from backoffice.core.choices import SyncState
        from backoffice.dispatch.choices import DispatchStatus
        from backoffice.dispatch.models import DispatchNote
        from backoffice.dispatch_inbox.answers import answer_refusal
        from backoffice.dispatch_inbox.models import IncomingNote
        from backoffice.invoices.choices import CANCELLED_STATUSES, PostingStatus
        from backoffice.invoices.models import Invoice
        from backoffice.ledger.models import Journal

        companies = self.run.companies
        count = Invoice.objects.filter(company__in=companies, is_send=True, sync_state=SyncState.LOCAL).count()
        count += Invoice.objects.filter(company__in=companies, is_send=True, record_status=PostingStatus.NOT_POSTED) \
            .exclude(remote_status__in=CANCELLED_STATUSES).count()
        count += DispatchNote.objects.filter(company__in=companies, remote_status=DispatchStatus.DRAFT).count()
        count += DispatchNote.objects.filter(company__in=companies, remote_status=DispatchStatus.ERROR) \
            .exclude(pk__in=self.redrafted).count()
        count += Journal.objects.filter(company__in=companies, sync_state=SyncState.LOCAL).count()
        notes = IncomingNote.objects.filter(company__in=companies)
        count += sum(1 for note in notes.filter(replies__isnull=True) if not answer_refusal(note))
        count += max(0, sum(self.arrivals.values()) - notes.count())
        return count

    # --- the comparison ----------------------------------------------------------------------------------------

    def compare(self, result, key_of):
        """Adds every domain's documents to the comparison (chaos.Comparison); key_of(company) is the check-only
        API key of the company's sandbox customer."""
        for company in self.run.companies:
            key = key_of(company)
            with result.domain("current accounts"):
                self._compare_accounts(result, company, key)
            with result.domain("chart accounts"):
                self._compare_chart(result, company, key)
            with result.domain("invoices"):
                self._compare_invoices(result, company, key)
            with result.domain("dispatch notes"):
                self._compare_notes(result, company, key)
            with result.domain("replies"):
                self._compare_replies(result, company, key)
            with result.domain("ledger uploads"):
                self._compare_ledger(result, company, key)

    def _pages(self, path, key, **params):
        return self.run.sandbox.pages(path, key, **params)

    def _get(self, path, key, params=None):
        return self.run.sandbox.get(path, key, params)

    def _match(self, result, kind, local, remote, *, key_local, key_remote, id_remote, status=None, working=()):
        """local records, remote items: each local record's key once on the sandbox with the record's platform id;
        a key twice, or an item no local record has, is a duplicate; status(record, item) -> what differs or ""."""
        from backoffice.core.choices import SyncState

        describe = self.describe
        by_key = defaultdict(list)
        for item in remote:
            by_key[key_remote(item)].append(item)
        mine = {key_local(record) for record in local}
        for item_key, items in by_key.items():
            if len(items) > 1 or item_key not in mine:
                result.duplicates.append((kind, item_key, f"{len(items)} on the sandbox, "
                                          f"{'known' if item_key in mine else 'unknown'} here"))
        for record in local:
            result.saved += 1
            items = by_key.get(key_local(record)) or []
            if not items:
                result.lost.append(describe(record, kind, "not on the sandbox"))
                continue
            result.found += len(items) == 1
            item = items[0]
            if record.remote_id != id_remote(item):
                result.differs.append(describe(record, kind, f"platform id here {record.remote_id or '-'}, on the "
                                                             f"sandbox {id_remote(item)}"))
                continue
            differs = status(record, item) if status else ""
            if record.sync_state != SyncState.SYNCED or differs:
                result.differs.append(describe(record, kind, differs or "not synced"))
            if status and item_status(item) in working:
                result.working += 1

    def _compare_accounts(self, result, company, key):
        from backoffice.current_accounts.models import Address, Bank, Contact, CurrentAccount, Mapping

        remote = self._pages("/accounting/v1/currentaccount", key)
        local = list(CurrentAccount.objects.filter(company=company))
        self._match(result, "current_account", local, remote, key_local=lambda a: a.name,
                    key_remote=lambda item: str(item.get("name") or ""), id_remote=lambda item: str(item.get("id")))
        # Children: each account's lists (mappings paged), matched by platform id; a second record of one name
        # (a create applied twice) is a duplicate.
        for account in local:
            if not account.remote_id:
                continue
            for model, part in ((Address, "address"), (Bank, "bank"), (Contact, "contact"), (Mapping, "mapping")):
                params = {"currentAccountId": account.remote_id}
                if part == "mapping":
                    items = self._pages(f"/accounting/v1/currentaccount/{part}", key, **params)
                else:
                    items = self._get(f"/accounting/v1/currentaccount/{part}", key, params)
                    items = items if isinstance(items, list) else (items or {}).get("items") or \
                        (items or {}).get("Items") or []
                children = list(model.objects.filter(current_account=account))
                label = (lambda item: str(item.get("accountId"))) if part == "mapping" else \
                    (lambda item, name={"address": "addressName", "bank": "name", "contact": "fullName"}[part]:
                     str(item.get(name) or ""))
                label_local = (lambda child: child.account.remote_id) if part == "mapping" else \
                    (lambda child: str(getattr(child, child.label_field)))
                self._match(result, part, children, items, key_local=label_local, key_remote=label,
                            id_remote=lambda item: str(item.get("id")))

    def _compare_chart(self, result, company, key):
        from backoffice.chart_of_accounts import services as chart
        from backoffice.chart_of_accounts.models import Account

        remote = self._pages("/accounting/v1/chartofaccount", key)
        self._match(result, "chart_account", list(Account.objects.filter(company=company)), remote,
                    key_local=lambda account: account.full_code,
                    key_remote=lambda item: chart._item(item)[1]["full_code"],
                    id_remote=lambda item: str(item.get("id")))

    def _compare_invoices(self, result, company, key):
        from backoffice.invoices.choices import WORKING_STATUSES
        from backoffice.invoices.models import Invoice

        remote = self._pages("/accounting/v1/invoice/outgoing/list", key)

        def status(invoice, item):
            theirs = (item.get("invoiceStatus"), item.get("recordStatus"))
            return "" if (invoice.remote_status, invoice.record_status) == theirs else \
                f"sandbox status {theirs[0]}, posting {theirs[1]}"

        self._match(result, "invoice", list(Invoice.objects.filter(company=company, is_send=True)), remote,
                    key_local=lambda invoice: invoice.ettn, key_remote=lambda item: str(item.get("ettn")),
                    id_remote=lambda item: str(item.get("ettn")), status=status, working=WORKING_STATUSES)

    def _compare_notes(self, result, company, key):
        from backoffice.dispatch.choices import WORKING_STATUSES
        from backoffice.dispatch.models import DispatchNote

        remote = self._pages("/dispatch/v1/outboxdespatch/list", key)
        self._match(result, "dispatch_note", list(DispatchNote.objects.filter(company=company)), remote,
                    key_local=lambda note: note.local_reference_id,
                    key_remote=lambda item: str(item.get("localReferenceId")),
                    id_remote=lambda item: str(item.get("id")),
                    status=lambda note, item: "" if note.remote_status == item.get("status") and
                    note.despatch_number == item.get("despatchAdviceNumber") else
                    f"sandbox status {item.get('status')}, number {item.get('despatchAdviceNumber')}",
                    working=WORKING_STATUSES)

    def _compare_replies(self, result, company, key):
        """Incoming notes (their status) and our replies: a reply is the one the sandbox names for its note, its
        status the sandbox's. A second reply to a note is refused by the sandbox (counted as a refused create)."""
        from backoffice.dispatch.choices import WORKING_STATUSES
        from backoffice.dispatch_inbox.models import DispatchReply, IncomingNote

        notes = {str(item.get("id")): item for item in self._pages("/dispatch/v1/inboxdespatch/list", key)}
        for note in IncomingNote.objects.filter(company=company):
            item = notes.get(note.remote_id)
            if item is None:
                result.lost.append(f"incoming note {note.despatch_number} #{note.pk}: not on the sandbox")
            elif item.get("status") != note.remote_status:
                result.differs.append(self.describe(note, "incoming_note", f"sandbox status {item.get('status')}"))
            elif item.get("status") in WORKING_STATUSES:
                result.working += 1
        replies = list(DispatchReply.objects.filter(company=company).select_related("note"))
        remote = []
        for reply in replies:
            item = notes.get(reply.note.remote_id) or {}
            if item.get("receiptAdviceId"):
                status = self._get(f"/dispatch/v2/outboxreceiptadvice/{item['receiptAdviceId']}/status", key)
                remote.append({"id": str(item["receiptAdviceId"]), "note": reply.note.remote_id,
                               "status": (status or {}).get("status"),
                               "number": (status or {}).get("receiptAdviceNumber") or item.get("receiptNumber")})
        self._match(result, "dispatch_reply", replies, remote, key_local=lambda reply: reply.note.remote_id,
                    key_remote=lambda item: item["note"], id_remote=lambda item: item["id"],
                    status=lambda reply, item: "" if reply.remote_status == item["status"] else
                    f"sandbox status {item['status']}", working=WORKING_STATUSES)

    def _compare_ledger(self, result, company, key):
        from backoffice.ledger.models import Journal, Period

        remote = [{"id": str(item.get("Id")), "status": item.get("Status"),
                   "range": (str(item.get("FiscalYearStart"))[:10], str(item.get("FiscalYearEnd"))[:10])}
                  for item in self._pages("/ledger/v1/period/getperiodlist", key)]
        periods = {period.remote_id: period for period in Period.objects.filter(company=company)}

        def status(journal, item):
            period = periods.get(journal.remote_id)
            if period is None:
                return "no period in the mirror"
            return "" if period.remote_status == item["status"] else f"sandbox status {item['status']}, " \
                                                                    f"period here {period.remote_status}"

        # A range is uploaded once: two periods of one range (not in error) would be a second upload.
        self._match(result, "journal", list(Journal.objects.filter(company=company)), remote,
                    key_local=lambda journal: (journal.start_date.isoformat(), journal.end_date.isoformat()),
                    key_remote=lambda item: item["range"], id_remote=lambda item: item["id"], status=status,
                    working=(0, 20, 50))


def item_status(item):
    return item.get("status", item.get("invoiceStatus"))


__all__ = ["CREATE_PATHS", "DOMAINS", "Domains", "SERVICE_GLOBS", "figures_of", "plan", "record_models", "label_of"]
