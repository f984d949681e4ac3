"""Client's keepalive arguments: values the host would punish, or gRPC could
not take, are refused naming the argument before any channel is made."""

import unittest

from ditserve import Client


class KeepaliveArgumentsTest(unittest.TestCase):
    def test_defaults_and_none_make_a_client(self):
        Client("127.0.0.1:1").close()
        Client("127.0.0.1:1", keepalive=None).close()

    def test_pings_more_often_than_the_host_allows_are_refused(self):
        with self.assertRaisesRegex(ValueError,
                                    r"^keepalive 5: allowed 10 to 2000000"):
            Client("127.0.0.1:1", keepalive=5)

    def test_a_keepalive_past_grpcs_int_milliseconds_is_refused(self):
        with self.assertRaisesRegex(ValueError,
                                    r"^keepalive 3000000\.0: allowed"):
            Client("127.0.0.1:1", keepalive=3e6)

    def test_a_timeout_of_zero_is_refused(self):
        with self.assertRaisesRegex(ValueError,
                                    r"^keepalive_timeout 0: allowed 0\.001 to"):
            Client("127.0.0.1:1", keepalive_timeout=0)


class TimeoutArgumentTest(unittest.TestCase):
    def test_a_timeout_grpc_would_expire_at_once_is_refused(self):
        for timeout in (0, -1, float("nan"), float("inf")):
            with self.subTest(timeout=timeout):
                with self.assertRaisesRegex(
                        ValueError,
                        r"^timeout .*: allowed above 0 and at most 1000000"):
                    Client("127.0.0.1:1", timeout=timeout)

    def test_a_timeout_in_range_or_none_makes_a_client(self):
        Client("127.0.0.1:1", timeout=0.5).close()
        Client("127.0.0.1:1", timeout=None).close()


if __name__ == "__main__":
    unittest.main()
