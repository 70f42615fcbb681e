"""Company-management service (document 1, sections 2 and 4.2): sub-companies, credit offers, products.

Bodies and answers are dicts with the platform's own field names.
"""

from .common import Client


def _with_over_usage(body: dict, show_over_usage) -> dict:
    if show_over_usage is not None:
        body["showOverUsage"] = bool(show_over_usage)
    return body


class CompaniesClient(Client):
    def usage_report(self):
        """The shared pool usage report (2.1) of the caller's company and its sub-companies.

        Limited to 1 call per 15 minutes for every tier (section 8).
        """
        return self.transport.call("crm.usage_report")

    def create_company(self, company: dict):
        """Create a sub-company with the pool product and an offer (2.2: identifier, name, quantity,
        contactPersonFullName, contactPersonEmailName, contactPersonPhoneNumber).

        Processed asynchronously: the new company's customerUniqueId is read later from the report.
        """
        return self.transport.call("crm.create_company", json=company)

    def add_credit(self, customer_unique_id, quantity: int, *, show_over_usage=None):
        return self.transport.call(
            "crm.add_credit",
            path_params={"customerUniqueId": customer_unique_id},
            json=_with_over_usage({"quantity": int(quantity)}, show_over_usage),
        )

    def add_credit_batch(self, customer_unique_ids, quantity: int, *, show_over_usage=None):
        body = {"customerUniqueIds": [str(uid) for uid in customer_unique_ids], "quantity": int(quantity)}
        return self.transport.call("crm.add_credit_batch", json=_with_over_usage(body, show_over_usage))

    def add_products(self, customer_unique_id, product_types):
        """Products (ProductType values of 2.4) for a company that has the pool product and an offer."""
        return self.transport.call(
            "crm.add_products",
            path_params={"customerUniqueId": customer_unique_id},
            json={"productTypes": [int(p) for p in product_types]},
        )

    def add_products_batch(self, customer_unique_ids, product_types):
        return self.transport.call(
            "crm.add_products_batch",
            json={"customerUniqueIds": [str(uid) for uid in customer_unique_ids],
                  "productTypes": [int(p) for p in product_types]},
        )

    def cancel_credit(self, customer_unique_id, application_credit_id: int):
        """Cancel an offer (the id of an entry of credits in the report); the last active one cannot be."""
        return self.transport.call(
            "crm.cancel_credit",
            path_params={"customerUniqueId": customer_unique_id, "applicationCreditId": int(application_credit_id)},
        )
