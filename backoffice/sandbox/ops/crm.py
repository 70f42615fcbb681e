"""Company-management service (document 1, sections 2 and 4.2)."""

from .. import fakes
from ..api import Call, operation


def usage_report(customer) -> dict:
    """The report of section 2.1 for one customer; sub-companies come with later issues."""
    created = customer.created
    return {
        "customerUniqueId": str(customer.customer_unique_id),
        "applicationId": 100000 + customer.pk,
        "applicationSource": 1,
        "applicationStatus": 1,
        "applicationCreateDate": created.isoformat(),
        "distributors": [],
        "credits": [{
            "id": 500000 + customer.pk,
            "quantity": customer.credits,
            "usedQuantity": fakes.seed(customer, "used") % (customer.credits + 1),
            "isActive": True,
            "createDate": created.isoformat(),
        }],
        "usages": [],
        "overUsages": [],
        "subCustomers": [],
    }


@operation("crm", "GET", "/v1/sharedpoolusage/report")
def sharedpool_usage_report(call: Call):
    return usage_report(call.customer)
