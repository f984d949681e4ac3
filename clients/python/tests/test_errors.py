"""bad_request_fields: the fields of a refusal, from the google.rpc.BadRequest
detail in a call's grpc-status-details-bin trailer. (DitserveError gets them
from a real server in tests/e2e/python_client.py.)"""

import unittest

from ditserve.errors import _rpc_status_classes, bad_request_fields


BAD_REQUEST_URL = "type.googleapis.com/google.rpc.BadRequest"


def status_details(*fields, type_url=BAD_REQUEST_URL):
    status_class, bad_request_class = _rpc_status_classes()
    bad_request = bad_request_class()
    for field in fields:
        bad_request.field_violations.add(field=field, description="why")
    status = status_class(code=3, message="why")
    detail = status.details.add()
    detail.type_url = type_url
    detail.value = bad_request.SerializeToString()
    return status.SerializeToString()


class BadRequestFieldsTest(unittest.TestCase):
    def test_every_violation_names_its_field_in_order(self):
        trailing = (
            ("content-type", "application/grpc"),
            ("grpc-status-details-bin", status_details("height", "width")))
        self.assertEqual(bad_request_fields(trailing), ["height", "width"])

    def test_no_details_or_other_detail_types_give_no_fields(self):
        self.assertEqual(bad_request_fields(None), [])
        self.assertEqual(bad_request_fields((("x", "y"),)), [])
        other = status_details(
            "height", type_url="type.googleapis.com/google.rpc.DebugInfo")
        self.assertEqual(
            bad_request_fields((("grpc-status-details-bin", other),)), [])


if __name__ == "__main__":
    unittest.main()
