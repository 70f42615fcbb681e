"""What other domains may use of tickets (a passenger list names the passenger tickets of one voyage and the
vehicle operator's details): the ticket and operator models, their statuses, the operator's fields as the form
and the payload name them (and the operator's part of a body), and the ticket table. Nothing else of this app is
imported from outside it."""

from .choices import TicketStatus
from .models import OPERATOR_FIELDS, PassengerTicket, VehicleOperator
from .tables import PassengerTicketTable
from .vehicle import OPERATOR_DETAIL_FIELDS, OPERATOR_PAYLOAD, OPERATOR_RULE_FIELDS, VehicleChecks, operator_body

__all__ = ["OPERATOR_DETAIL_FIELDS", "OPERATOR_FIELDS", "OPERATOR_PAYLOAD", "OPERATOR_RULE_FIELDS",
           "PassengerTicket", "PassengerTicketTable", "TicketStatus", "VehicleChecks", "VehicleOperator",
           "operator_body"]
