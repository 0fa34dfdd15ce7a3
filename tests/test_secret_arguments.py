"""Positional arguments whose parameters have secret names are redacted as keyword arguments are."""

from __future__ import annotations

import callpin
from callpin.codec import Placeholder
from callpin.normalize import DEFAULT_RULES, NO_RULES, Numbering
from callpin.secret_arguments import redacted, secret_positions

CLIENT = """
class Client:
    def auth(self, username, password):
        return True

    @classmethod
    def login(cls, token, user=None):
        return True

    @staticmethod
    def verify(payload, sig_header, secret):
        return True

def construct_event(payload, sig_header, secret, /, tolerance=300):
    return True
"""


def test_the_positions_of_secret_parameters_leave_out_the_receiver(make_module):
    module = make_module("secargs_sig", CLIENT)
    owner = module.Client
    assert secret_positions(vars(owner)["auth"], owner, DEFAULT_RULES) == {1}
    assert secret_positions(vars(owner)["login"], owner, DEFAULT_RULES) == {0}
    assert secret_positions(vars(owner)["verify"], owner, DEFAULT_RULES) == {2}
    assert secret_positions(module.construct_event, module, DEFAULT_RULES) == {2}
    assert secret_positions(module.Client().auth, object(), DEFAULT_RULES) == {1}  # bound: no self
    assert secret_positions(module.construct_event, module, NO_RULES) == frozenset()
    assert secret_positions(len, module, DEFAULT_RULES) == frozenset()


def test_positional_secrets_never_reach_the_file_and_share_numbers_with_keywords(make_module, tmp_path):
    module = make_module("secargs_rec", CLIENT)
    path = tmp_path / "calls.cpin"
    with callpin.record(path, spy=["secargs_rec.construct_event", "secargs_rec.Client"]):
        module.construct_event(b"{}", "t=1,v1=abc", "whsec_X")
        client = module.Client()
        client.auth("ada", "hunter2")
        module.Client.auth(client, "bob", "hunter2")
        module.Client.login("tok-1")
        module.Client.verify(b"", "h", secret="whsec_X")
        module.Client.verify(b"", "h", None)
    data = path.read_bytes()
    for secret in (b"whsec_X", b"hunter2", b"tok-1"):
        assert secret not in data
    event, _, first, second, login, verify, unset = callpin.load(path)
    assert event.args == (b"{}", "t=1,v1=abc", Placeholder("secret", 1))
    assert first.args[1:] == ("ada", Placeholder("secret", 2))
    assert second.args[1:] == ("bob", Placeholder("secret", 2))
    assert login.args == (Placeholder("secret", 3),)
    assert verify.kwargs == {"secret": Placeholder("secret", 1)}
    assert unset.args == (b"", "h", None)


def test_positional_secrets_are_kept_when_redact_is_off(make_module):
    module = make_module("secargs_off", CLIENT)
    with callpin.record(spy=["secargs_off.construct_event"], normalize=DEFAULT_RULES.without("redact")) as rec:
        module.construct_event(b"{}", "sig", "whsec_X")
    assert rec.events[0].args == (b"{}", "sig", "whsec_X")


def test_a_secret_that_is_not_a_str_is_numbered_by_its_encoding():
    numbering = Numbering()
    once = redacted((b"k", b"k", 1), frozenset({0, 1}), numbering)
    assert once == (Placeholder("secret", 1), Placeholder("secret", 1), 1)
