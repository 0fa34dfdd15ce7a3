"""Normalization rules: what they match, first-appearance numbering, after-the-fact equality."""

from __future__ import annotations

import datetime as dt
import uuid
import warnings
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import callpin
from callpin.codec import Encoder, decode, encode
from callpin.errors import UsageError
from callpin.normalize import (
    ADDRESS,
    DEFAULT_RULES,
    NO_RULES,
    REDACT,
    TIMESTAMP,
    UUID,
    Numbering,
    RuleSet,
    may_match,
    normalize_text,
    rule,
    secret_keys,
    secret_name,
)
from callpin.renormalize import renormalized


def norm(text: str, rules: RuleSet = DEFAULT_RULES, *, reprs: bool = False) -> str:
    return normalize_text(text, rules, Numbering(), reprs=reprs)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12345678-1234-5678-1234-567812345678", "<uuid:1>"),
        ("ID 12345678-1234-5678-1234-567812345678.", "ID <uuid:1>."),
        ("x12345678-1234-5678-1234-567812345678", "x12345678-1234-5678-1234-567812345678"),
        ("12345678-1234-5678-1234-567812345678a", "12345678-1234-5678-1234-567812345678a"),
        ("1234567-1234-5678-1234-567812345678", "1234567-1234-5678-1234-567812345678"),
        ("ABCDEF01-1234-5678-1234-567812345678 abcdef01-1234-5678-1234-567812345678", "<uuid:1> <uuid:1>"),
        ("2024-03-01T09:30:00", "<ts:1>"),
        ("2024-03-01 09:30:00Z", "<ts:1>"),
        ("2024-03-01T09:30:00.123456+09:00", "<ts:1>"),
        ("2024-03-01T09:30:00+0900", "<ts:1>"),
        ("2024-03-01T09:30:00+09001", "<ts:1>+09001"),
        ("2024-03-01T09:30:001", "2024-03-01T09:30:001"),
        ("2024-03-01T09:30", "2024-03-01T09:30"),
        ("2024-03-01", "2024-03-01"),
        ("12024-03-01T09:30:00", "12024-03-01T09:30:00"),
        ("at 2024-03-01T09:30:00,5 sharp", "at <ts:1> sharp"),
        # HTTP dates: a Date or Last-Modified header, email.utils.formatdate, a cookie's expires.
        ("Sat, 05 Dec 2026 08:41:44 GMT", "<ts:1>"),
        ("Date: Sat, 05 Dec 2026 08:41:44 GMT\r\n", "Date: <ts:1>\r\n"),
        ("Sat, 05 Dec 2026 08:41:44 -0000", "<ts:1>"),
        ("Sat, 05 Dec 2026 08:41:44 +0900 and Sat, 05 Dec 2026 08:41:44 GMT", "<ts:1> and <ts:2>"),
        ("expires Sat, 05-Dec-2026 08:41:44 UTC;", "expires <ts:1>;"),
        ("XSat, 05 Dec 2026 08:41:44 GMT", "XSat, 05 Dec 2026 08:41:44 GMT"),
        ("Sat, 05 Dec 2026 08:41:44 GMT5", "Sat, 05 Dec 2026 08:41:44 GMT5"),
        ("Sat, 5 Dec 2026 08:41:44 GMT", "Sat, 5 Dec 2026 08:41:44 GMT"),
        ("Sat, 05 Dez 2026 08:41:44 GMT", "Sat, 05 Dez 2026 08:41:44 GMT"),
        ("Sat, 05 Dec 2026 08:41:44 +090", "Sat, 05 Dec 2026 08:41:44 +090"),
    ],
)
def test_builtin_text_rules(text, expected):
    assert norm(text) == expected


def test_addresses_are_normalized_only_in_reprs():
    text = "<Gateway object at 0x7f3a2c1b4d90>"
    assert norm(text) == text
    assert norm(text, reprs=True) == "<Gateway object at <addr:1>>"
    assert norm("flags 0x1f", reprs=True) == "flags 0x1f"


def test_same_value_same_number_across_one_log():
    encoder = Encoder(DEFAULT_RULES)
    key = uuid.uuid4()
    first = decode(encoder.encode(str(key)))
    other = decode(encoder.encode(str(uuid.uuid4())))
    again = decode(encoder.encode(key))
    assert (first, other, repr(again)) == ("<uuid:1>", "<uuid:2>", "<uuid:1>")


def test_datetime_object_and_its_iso_text_share_a_number():
    moment = dt.datetime(2024, 3, 1, 9, 30, 0, 5)
    encoder = Encoder(DEFAULT_RULES)
    assert repr(decode(encoder.encode(moment))) == "<ts:1>"
    assert decode(encoder.encode(f"at {moment}")) == "at <ts:1>"


def test_user_rule_numbers_by_matched_text():
    rules = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    assert norm("T-1 T-2 T-1", rules) == "<ticket:1> <ticket:2> <ticket:1>"


def test_leftmost_match_wins_and_builtins_win_ties():
    rules = DEFAULT_RULES.with_rules([rule(r"[0-9a-f]{8}-[0-9a-f]{4}", "short")])
    assert norm("12345678-1234-5678-1234-567812345678", rules) == "<uuid:1>"
    assert norm("ab 12345678-1234 x", rules) == "ab <short:1> x"


@pytest.mark.parametrize(
    ("regex", "name"),
    [("(", "bad"), ("x", "Bad"), ("x", "uuid"), ("x", "ts"), ("a*", "empty")],
)
def test_invalid_user_rules_are_usage_errors(regex, name):
    with pytest.raises(UsageError):
        rule(regex, name)


def test_rule_sets_round_trip_through_their_description():
    rules = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    assert RuleSet.from_description(rules.describe()) == rules
    with pytest.raises(UsageError):
        RuleSet.from_description([["nope", None]])


def test_a_rule_read_from_a_log_compiles_without_python_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = RuleSet.from_description([["sets", "[[a]"]])
    assert read.rules[0].compiled.search("x[a") is not None


texts = st.lists(
    st.sampled_from(
        [
            "12345678-1234-5678-1234-567812345678",
            "ABCDEF01-1234-5678-1234-567812345678",
            "2024-03-01T09:30:00",
            "2024-03-01 09:30:00.5Z",
            "0x7f3a2c1b4d90",
            "T-12",
            "https://",
            "u:p@",
            " ",
            "-",
            "x",
            "1",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        texts
        | st.uuids()
        | st.datetimes()
        | st.dictionaries(st.sampled_from(["token", "x", "Authorization"]), texts | st.tuples(texts), max_size=3),
        max_size=6,
    )
)
def test_normalizing_afterwards_gives_the_same_bytes_as_while_encoding(values):
    rules = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    while_encoding = encode(values, rules)
    afterwards = Encoder(rules).encode(decode(encode(values, NO_RULES)))
    assert while_encoding == afterwards


def test_a_text_is_scanned_only_when_it_holds_a_needle_of_the_rules_in_the_set():
    assert may_match("ch-1", RuleSet([UUID]), reprs=False)
    assert not may_match("ch-1", RuleSet([REDACT]), reprs=False)
    assert may_match("a=b", RuleSet([REDACT]), reprs=False)
    assert not may_match("a=b", RuleSet([UUID, TIMESTAMP]), reprs=False)
    assert may_match("<Gateway at 0x7f3a2c1b4d90>", RuleSet([ADDRESS]), reprs=True)
    assert not may_match("<Gateway at 0x7f3a2c1b4d90>", RuleSet([UUID]), reprs=True)
    assert not may_match("<Gateway at 0x7f3a2c1b4d90>", RuleSet([ADDRESS]), reprs=False)


def test_normalization_is_idempotent():
    once = decode(encode("id 12345678-1234-5678-1234-567812345678"))
    assert decode(encode(once)) == once


class CountingPattern:
    """A compiled pattern that counts the searches made with it."""

    def __init__(self, pattern: object) -> None:
        self.pattern = pattern
        self.searches = 0

    def search(self, text: str, pos: int = 0) -> object:
        self.searches += 1
        return self.pattern.search(text, pos)  # type: ignore[attr-defined]


def test_a_text_of_many_matches_of_one_rule_is_searched_once_per_match():
    key = "12345678-1234-5678-1234-567812345678"
    rules = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    counting = []
    for one in rules.text_rules:
        object.__setattr__(one, "compiled", CountingPattern(one.compiled))
        counting.append(one.compiled)
    try:
        text = f"{key} " * 1000
        assert normalize_text(text, rules, Numbering()) == "<uuid:1> " * 1000
    finally:
        for one, pattern in zip(rules.text_rules, counting, strict=True):
            object.__setattr__(one, "compiled", pattern.pattern)
    # Before, every rule was searched again after every match: 5 x 1001 searches,
    # each to the end of the text for the rules that never match. timestamp, redact and
    # tmp are not searched at all: the text holds none of their needles (':', '@', '=',
    # the temp folder).
    assert [pattern.searches for pattern in counting] == [1001, 0, 0, 0, 1]


def test_a_rule_is_not_searched_in_a_text_without_its_needles():
    rules = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    counting = []
    for one in rules.text_rules:
        object.__setattr__(one, "compiled", CountingPattern(one.compiled))
        counting.append(one.compiled)
    try:
        assert normalize_text("plain words", rules, Numbering()) == "plain words"
        assert normalize_text("pay?token=abc", rules, Numbering()) == "pay?token=<secret:1>"
    finally:
        for one, pattern in zip(rules.text_rules, counting, strict=True):
            object.__setattr__(one, "compiled", pattern.pattern)
    # uuid, timestamp, redact, tmp, ticket: the user rule has no needles, redact's '=' is there once.
    assert [pattern.searches for pattern in counting] == [0, 0, 2, 0, 2]


# -- redact ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "auth",
        "password",
        "PASSWD",
        "client_secret",
        "access_token",
        "accessToken",
        "X-Auth-Token",
        "api_key",
        "X-Api-Key",
        "apiKey",
        "Cookie",
        "Set-Cookie",
        "cookies",
        "credentials",
        "userinfo",
        "private_key",
        "session_id",
        # An acronym of two capitals or more before a camelCase word ends at that word.
        "AWSAccessKeyId",
        "APIKey",
        "URLToken",
    ],
)
def test_names_that_say_secret_are_secret(name):
    assert secret_name(name)


@pytest.mark.parametrize(
    "name", ["author", "url", "headers", "tokenizer", "csrftokens", "authority", "Accept", "OAuthProvider", "oauth"]
)
def test_names_that_only_contain_a_secret_word_are_not(name):
    assert not secret_name(name)


def test_url_credentials_are_numbered_secrets():
    text = "https://u:p@host/a and ftp://other@host and https://u:p@host/b and a@example.com"
    assert (
        norm(text)
        == "https://<secret:1>@host/a and ftp://<secret:2>@host and https://<secret:1>@host/b and a@example.com"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A parsed URL's network location (`urlsplit(url).netloc`) has no "://" before it.
        ("ops:letmein@api.example.com", "<secret:1>@api.example.com"),
        ("ops:letmein@api.example.com:8443", "<secret:1>@api.example.com:8443"),
        ("u:@host", "<secret:1>@host"),
        (":p@host", "<secret:1>@host"),
    ],
)
def test_the_credentials_of_a_network_location_are_secrets(text, expected):
    assert norm(text) == expected
    assert norm(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        # An address, or a name before the '@' with no password: nothing says it is a secret.
        "ada@example.com",
        "token@host",
        # A URI whose scheme puts an address after the ':'.
        "mailto:ada@example.com",
        "MAILTO:ada@example.com",
        "sip:alice@atlanta.com",
        "xmpp:ada@example.com",
        # Only a whole text is a network location: not one inside a sentence, nor one
        # followed by a path.
        "sent to ops:letmein@host today",
        "git@github.com:org/repo.git",
        "u:p@host/path",
        "u:p@host\n",
    ],
)
def test_texts_that_only_look_like_a_network_location_are_kept(text):
    assert norm(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://api.x/cb?access_token=abc123&user=ada", "https://api.x/cb?access_token=<secret:1>&user=ada"),
        ("password=hunter2&user=ada", "password=<secret:1>&user=ada"),
        ("/q?myToken=zz;tokenId=9#top", "/q?myToken=<secret:1>;tokenId=<secret:2>#top"),
        ("x=1&Authorization=Bearer", "x=1&Authorization=<secret:1>"),
        ("k?AWSAccessKeyId=AKIA1&Expires=9", "k?AWSAccessKeyId=<secret:1>&Expires=9"),
        ("x?OAuthProvider=google", "x?OAuthProvider=google"),
        ("sent token=abc then token=abc", "sent token=<secret:1> then token=<secret:1>"),
        ("https://u:p@h/x?apiKey=k#frag", "https://<secret:1>@h/x?apiKey=<secret:2>#frag"),
        # A parameter name holds no '/', ':' or '@': nothing reaches back into the URL.
        ("https://u:p@h/path_token=zz", "https://<secret:1>@h/path_token=zz"),
        # The quotes and brackets around a URL stay; inside the value they are the value.
        ("Url('https://h/x?api_key=zzz')", "Url('https://h/x?api_key=<secret:1>')"),
        ('{"url": "https://h/?token=abc"}', '{"url": "https://h/?token=<secret:1>"}'),
        ("(see https://h/?token=abc) and token=abc", "(see https://h/?token=<secret:1>) and token=<secret:1>"),
        ("token=ab'cd&x=1", "token=<secret:1>&x=1"),
        ("token=ab')cd'", "token=<secret:1>'"),
        # A value of nothing but quotes and brackets is redacted whole.
        ("password=')&x=1", "password=<secret:1>&x=1"),
    ],
)
def test_secret_query_and_form_parameters_are_numbered_secrets(text, expected):
    assert norm(text) == expected
    # Normalizing again changes nothing: a placeholder is no secret of its own.
    assert norm(expected) == expected


def test_a_secret_parameter_with_a_long_run_of_closing_quotes_is_redacted_in_linear_time():
    # A pattern that backtracked over each closing quote would take minutes here.
    text = "token=" + ")" * 200_000 + "x"
    assert norm(text) == "token=<secret:1>"


def test_a_long_name_of_secret_words_is_read_in_linear_time():
    # Trying each word's place in the name again (quadratic) would take tens of minutes:
    # 48 KB of it took 3.7 s.
    name = "token_" * 200_000
    assert norm(name + " x=1") == name + " x=1"
    assert norm(name + "=v " + name + "=w") == name + "=<secret:1> " + name + "=<secret:2>"


@pytest.mark.parametrize(
    "text",
    ["author=joe&mytoken=1", "?tokenizer=word&authority=x", "a==b", "token=&x=1", "x?id=5&q=token"],
)
def test_parameters_whose_names_only_contain_a_secret_word_are_kept(text):
    assert norm(text) == text


def test_secret_parameters_stay_when_redact_is_off():
    text = "https://x/?token=abc"
    assert norm(text, DEFAULT_RULES.without("redact")) == text


def test_a_user_key_rule_adds_names_and_shares_the_secret_numbers():
    rules = DEFAULT_RULES.with_rules([secret_keys(r"^x-internal-", "internal")])
    assert decode(encode({"X-Internal-Id": "abc", "token": "abc", "x": "abc"}, rules)) == {
        "X-Internal-Id": decode(encode({"token": "abc"}))["token"],
        "token": decode(encode({"token": "abc"}))["token"],
        "x": "abc",
    }
    assert RuleSet.from_description(rules.describe()) == rules


def test_without_redact_secrets_are_recorded_as_they_are():
    assert decode(encode({"token": "abc"}, DEFAULT_RULES.without("redact"))) == {"token": "abc"}
    with pytest.raises(UsageError):
        DEFAULT_RULES.without("nothing")


def test_a_key_rule_that_matches_every_name_is_refused():
    with pytest.raises(UsageError):
        secret_keys(r".*")


class BasicAuth:
    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password


def test_an_authorization_header_and_an_auth_tuple_never_reach_the_file(make_module, tmp_path):
    module = make_module("redacted_http", "def send(url, via=None, headers=None, auth=None):\n    return 200\n")
    path = tmp_path / "calls.cpin"
    with callpin.record(path, spy=["redacted_http.send"]):
        module.send("https://x/a", headers={"Authorization": "Bearer s3cr3t-t0ken"}, auth=("alice", "hunter2"))
        module.send("https://x/b", headers={"Authorization": "Bearer s3cr3t-t0ken"}, auth=BasicAuth("bob", "pa55"))
        module.send("https://carol:letmein@x/c", BasicAuth("dave", "pa55"))
    data = path.read_bytes()
    for secret in (b"s3cr3t-t0ken", b"hunter2", b"alice", b"pa55", b"letmein"):
        assert secret not in data
    first, second, third = callpin.load(path)
    assert first.kwargs["headers"]["Authorization"] == second.kwargs["headers"]["Authorization"]
    # Keyword arguments are written in name order: auth before headers.
    assert first.kwargs["auth"] == callpin.Placeholder("secret", 1)
    assert first.kwargs["headers"]["Authorization"] == callpin.Placeholder("secret", 2)
    assert second.kwargs["auth"] == callpin.Placeholder("secret", 3)
    url, via = third.args
    assert url == "https://<secret:4>@x/c"
    assert dict(via.fields) == {"username": "dave", "password": callpin.Placeholder("secret", 5)}


def test_secret_parameters_of_a_url_and_a_form_body_never_reach_the_file(make_module, tmp_path):
    module = make_module("redacted_query", "def post(url, body=None):\n    return 200\n")
    path = tmp_path / "calls.cpin"
    with callpin.record(path, spy=["redacted_query.post"]):
        module.post("https://x/cb?access_token=t0k3n-1&page=2", b"password=hunter2&user=ada")
        module.post("https://x/cb?access_token=t0k3n-1&page=3", body="client_secret=s3cr3t")
    data = path.read_bytes()
    for secret in (b"t0k3n-1", b"hunter2", b"s3cr3t"):
        assert secret not in data
    first, second = callpin.load(path)
    assert first.args == ("https://x/cb?access_token=<secret:1>&page=2", b"password=<secret:2>&user=ada")
    # The same token in both calls has one number: that it was the same stays pinned.
    assert second.args == ("https://x/cb?access_token=<secret:1>&page=3",)
    assert second.kwargs == {"body": "client_secret=<secret:3>"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A header block of raw HTTP: each secret header's value, to the end of its line.
        (
            "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic c2hvcA==\r\nX-Api-Key: k1 \r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: <secret:1>\r\nX-Api-Key: <secret:2> \r\n\r\n",
        ),
        ("Authorization: Bearer x", "Authorization: <secret:1>"),
        ("Set-Cookie: session=abc; Path=/", "Set-Cookie: <secret:1>"),
        ("AWSAccessKeyId:AKIA1", "AWSAccessKeyId:<secret:1>"),
        # YAML and .env-like texts, indented; a quoted value keeps its quotes.
        ("db:\n  user: ada\n  db_password: 'hunter2'\n", "db:\n  user: ada\n  db_password: '<secret:1>'\n"),
        # Pretty-printed JSON: the quotes and the comma stay.
        ('{\n  "token": "abc",\n  "n": 1\n}', '{\n  "token": "<secret:1>",\n  "n": 1\n}'),
        # The same value on two lines shares its number.
        ("token: abc\napi_key: abc", "token: <secret:1>\napi_key: <secret:1>"),
        # JSON and Python reprs on one line: the quoted value of a quoted secret name.
        (
            '{"id": "pi_1", "client_secret": "pi_1_secret_x", "n": 1}',
            '{"id": "pi_1", "client_secret": "<secret:1>", "n": 1}',
        ),
        ("{'token': 'abc', 'n': 1}", "{'token': '<secret:1>', 'n': 1}"),
        ('{"token": "a\\"b", "x": 1}', '{"token": "<secret:1>", "x": 1}'),
        ('log {"Authorization":"Bearer q"}', 'log {"Authorization":"<secret:1>"}'),
    ],
)
def test_the_values_of_secret_lines_are_numbered_secrets(text, expected):
    assert norm(text) == expected
    assert norm(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "keyboard: qwerty\nauthor: ada",  # a secret word inside another word
        "sent at 10:00 token: abc",  # not the start of a line
        "password:",  # no value
        "password:   \nx",
        "Host: x\r\nAccept: */*",
        '{"tokenizer": "x", "api_key": 5}',  # not a secret name; not a string value
    ],
)
def test_lines_that_only_look_like_secret_lines_are_kept(text):
    assert norm(text) == text
    assert norm(text, DEFAULT_RULES.without("redact")) == text


def test_raw_http_bytes_keep_their_secret_headers_out_of_the_file(make_module, tmp_path):
    module = make_module("redacted_lines", "def send(data):\n    return len(data)\n")
    path = tmp_path / "calls.cpin"
    raw = b"POST /q HTTP/1.1\r\nAuthorization: Basic c2hvcDpodW50ZXIy\r\nCookie: sid=s3cr3t\r\n\r\n{}"
    with callpin.record(path, spy=["redacted_lines.send"]):
        module.send(raw)
        module.send(raw.decode())
    data = path.read_bytes()
    for secret in (b"c2hvcDpodW50ZXIy", b"s3cr3t"):
        assert secret not in data
    first, second = callpin.load(path)
    assert first.args == (b"POST /q HTTP/1.1\r\nAuthorization: <secret:1>\r\nCookie: <secret:2>\r\n\r\n{}",)
    assert second.args == (first.args[0].decode(),)


def test_a_secret_keyword_stays_redacted_after_one_met_inside_a_secret(make_module, tmp_path):
    # `token`'s value is numbered by its raw bytes, where no name is asked whether it is
    # secret: the `password` met there is not a plain name for the keyword that follows.
    module = make_module("redacted_keywords", "def login(**fields):\n    return 200\n")
    path = tmp_path / "calls.cpin"
    with callpin.record(path, spy=["redacted_keywords.login"]):
        module.login(password="pw-first", user="ada")
        module.login(token={"password": "pw-inner", "user": "ada"})
        module.login(password="pw-outer", user="bob")
    for secret in (b"pw-first", b"pw-inner", b"pw-outer"):
        assert secret not in path.read_bytes()
    first, second, third = callpin.load(path)
    assert first.kwargs == {"password": callpin.Placeholder("secret", 1), "user": "ada"}
    assert second.kwargs == {"token": callpin.Placeholder("secret", 2)}
    assert third.kwargs == {"password": callpin.Placeholder("secret", 3), "user": "bob"}


class ParsedURL(NamedTuple):
    scheme: str
    userinfo: str
    host: str


def test_the_credentials_of_a_parsed_url_never_reach_the_file(make_module, tmp_path):
    module = make_module("redacted_url", "def fetch(url):\n    return 200\n")
    path = tmp_path / "calls.cpin"
    with callpin.record(path, spy=["redacted_url.fetch"]):
        module.fetch(ParsedURL("https", "carol:letmein", "x"))
    assert b"letmein" not in path.read_bytes()
    (event,) = callpin.load(path)
    assert dict(event.args[0].fields) == {"scheme": "https", "userinfo": callpin.Placeholder("secret", 1), "host": "x"}


def test_redacting_afterwards_gives_the_bytes_recording_with_it_gives(make_module, tmp_path):
    module = make_module("redacted_http2", "def send(url, headers=None, auth=None):\n    return 200\n")
    logs = {}
    for name, rules in (("plain", DEFAULT_RULES.without("redact")), ("redacted", DEFAULT_RULES)):
        with callpin.record(tmp_path / name, spy=["redacted_http2.send"], normalize=rules):
            module.send("https://u:p@x/a?token=t", headers={"Cookie": "c=1"}, auth=BasicAuth("bob", "pa55"))
        logs[name] = callpin.load(tmp_path / name)
    assert list(renormalized(logs["plain"], DEFAULT_RULES).frames) == list(logs["redacted"].frames)
