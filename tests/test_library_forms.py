"""The forms of well-known libraries' HTTP objects: what they send and say, not their bookkeeping.

The classes here lay out their attributes as requests 2.32 and httpx 0.28 do, and are
installed as `requests.models` and `httpx` for one test (callpin looks for a library's
types only in `sys.modules`). examples/realworld/values-requests-httpx runs the same
forms on the real libraries.
"""

from __future__ import annotations

import datetime as _dt
import sys
import types
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import pytest

import callpin
from callpin import forms
from callpin.codec import Custom, Instance, ObjectState, Opaque, decode
from callpin.fields import FieldChange
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES, NO_RULES

MOD = __name__


class CaseInsensitiveDict(MutableMapping[str, str]):
    """requests' headers: keys kept as given, looked up in lower case."""

    def __init__(self, items: dict[str, str]) -> None:
        self._store = {key.lower(): (key, value) for key, value in items.items()}

    def __getitem__(self, key: str) -> str:
        return self._store[key.lower()][1]

    def __setitem__(self, key: str, value: str) -> None:
        self._store[key.lower()] = (key, value)

    def __delitem__(self, key: str) -> None:
        del self._store[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._store.values())

    def __len__(self) -> int:
        return len(self._store)


class CookieJar:
    def __init__(self) -> None:
        self._cookies: dict[str, str] = {}


class PreparedRequest:
    def __init__(self, url: str, headers: dict[str, str], body: bytes | None = None) -> None:
        self.method, self.url, self.headers = "GET", url, CaseInsensitiveDict(headers)
        self._cookies, self.body, self.hooks = CookieJar(), body, {"response": []}
        self._body_position = None

    @property
    def path_url(self) -> str:
        raise AssertionError("a property ran")


class Response:
    def __init__(self, status: int, content: bytes | bool, elapsed_ms: int = 4, port: int = 50123) -> None:
        self._content, self._content_consumed, self._next = content, content is not False, None
        self.status_code, self.reason, self.url = status, "OK", "http://shop.example/stock/A-17"
        self.headers = CaseInsensitiveDict({"Content-Type": "application/json", "Set-Cookie": "sid=s3cr3t"})
        self.raw = types.SimpleNamespace(_pool=types.SimpleNamespace(port=port))
        self.encoding, self.history, self.cookies = "utf-8", [], CookieJar()
        self.elapsed = _dt.timedelta(milliseconds=elapsed_ms)
        self.request = PreparedRequest(self.url, {})
        self.connection = object()


class ParseResult:
    def __init__(self, scheme: str, userinfo: str, host: str, path: str) -> None:
        self.scheme, self.userinfo, self.host, self.port, self.path = scheme, userinfo, host, None, path
        self.query = self.fragment = None


class URL:
    """httpx's URL: a parsed reference, its text built on demand."""

    def __init__(self, text: str) -> None:
        scheme, rest = text.split("://", 1)
        userinfo, _, rest = rest.rpartition("@")
        host, _, path = rest.partition("/")
        self._uri_reference = ParseResult(scheme, userinfo, host, "/" + path)

    def __str__(self) -> str:
        ref = self._uri_reference
        userinfo = f"{ref.userinfo}@" if ref.userinfo else ""
        return f"{ref.scheme}://{userinfo}{ref.host}{ref.path}"


class Headers(Mapping[str, str]):
    """httpx's headers, as callpin reads them: lower-cased keys over a list of raw pairs."""

    def __init__(self, items: dict[str, str]) -> None:
        self._list = [(key.encode(), key.lower().encode(), value.encode()) for key, value in items.items()]
        self._encoding = "ascii"

    def __getitem__(self, key: str) -> str:
        for _, lower, value in self._list:
            if lower == key.lower().encode():
                return value.decode()
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (lower.decode() for _, lower, _ in self._list)

    def __len__(self) -> int:
        return len(self._list)


class ByteStream:
    def __init__(self, data: bytes) -> None:
        self._stream = data


class Request:
    def __init__(self, url: str, headers: dict[str, str], content: bytes | None = None) -> None:
        self.method, self.url, self.headers = "POST", URL(url), Headers(headers)
        self.extensions = {"timeout": {"connect": 5.0, "read": 5.0}}
        self.stream = ByteStream(content or b"")
        if content is not None:  # a body in memory is read at once, as httpx does
            self._content = content

    @property
    def content(self) -> bytes:
        raise AssertionError("a property ran")


class HttpxResponse:
    def __init__(self, status: int, content: bytes, elapsed_ms: int = 4) -> None:
        self.status_code, self.headers = status, Headers({"Content-Type": "application/json"})
        self._request = Request("https://prices.example/quote", {})
        self.extensions = {"network_stream": object()}
        self.history: list[Any] = []
        self.stream, self._content = ByteStream(content), content
        self._elapsed = _dt.timedelta(milliseconds=elapsed_ms)


@pytest.fixture(autouse=True)
def forms_seen_afresh() -> Iterator[None]:
    """Each class's form is decided once and kept; these tests install and remove the
    libraries around the same classes, so each starts and ends with none kept."""
    forms._forms.clear()
    yield
    forms._forms.clear()


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("requests.models")
    module.PreparedRequest, module.Response = PreparedRequest, Response  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "requests.models", module)
    return module


@pytest.fixture
def httpx(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("httpx")
    module.URL, module.Request, module.Response = URL, Request, HttpxResponse  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "httpx", module)
    return module


def state(value: Any, encoder_class: Any, rules: Any = NO_RULES) -> Any:
    return decode(encoder_class(rules).encode(value))


def test_a_prepared_request_is_its_method_url_headers_and_body(encoder_class, requests):
    request = PreparedRequest("http://shop.example/stock/A-17", {"Accept": "*/*", "X-Channel": "web"}, b"q=1")
    assert state(request, encoder_class) == ObjectState(
        f"{MOD}.PreparedRequest",
        1,
        (
            ("method", "GET"),
            ("url", "http://shop.example/stock/A-17"),
            ("headers", {"Accept": "*/*", "X-Channel": "web"}),
            ("body", b"q=1"),
        ),
    )
    # A hook set is part of it; the empty hook lists requests always holds are not.
    request.hooks = {"response": [print], "other": []}
    assert dict(state(request, encoder_class).fields)["hooks"] == {"response": [state(print, encoder_class)]}


def test_a_prepared_request_keeps_its_authorization_out_of_the_log(encoder_class, requests):
    request = PreparedRequest("http://shop.example/stock", {"Authorization": "Bearer tok-3f9c"})
    encoded = encoder_class(DEFAULT_RULES).encode(request)
    assert b"tok-3f9c" not in encoded
    assert dict(decode(encoded).fields)["headers"] == {"Authorization": callpin.Placeholder("secret", 1)}


def test_a_library_object_is_read_by_its_state_when_the_library_is_not_imported(encoder_class):
    fields = state(PreparedRequest("http://shop.example/", {}), encoder_class).fields
    assert [name for name, _ in fields] == ["_body_position", "_cookies", "body", "headers", "hooks", "method", "url"]


def test_a_prepared_request_whose_url_changes_is_one_change_at_url(make_module, requests):
    def log_of(url: str) -> Log:
        module = make_module("libhttp", "class Adapter:\n    def send(self, request, **kwargs):\n        return 1\n")
        with callpin.record(None, spy=["libhttp.Adapter.send"]) as rec:
            module.Adapter().send(PreparedRequest(url, {"Authorization": "Bearer t"}), timeout=5)
        return Log.from_frames(list(rec.frames), rules=DEFAULT_RULES)

    (op,) = callpin.diff(log_of("http://shop.example/stock/A"), log_of("http://shop.example/inventory/A")).ops
    assert op.op == "changed"
    assert op.fields == (FieldChange("args[1].url", "http://shop.example/stock/A", "http://shop.example/inventory/A"),)


def test_a_prepared_request_over_the_budget_is_its_identity_and_digest(encoder_class, requests):
    request = PreparedRequest("http://shop.example/stock", {}, b"x" * 9000)
    found = state(request, encoder_class)
    assert isinstance(found, Instance) and found.over_budget and found.digest is not None
    request.body = b"y" * 9000
    assert state(request, encoder_class).digest != found.digest


def test_a_requests_response_is_what_it_says_not_how_long_it_took(encoder_class, requests):
    response = Response(200, b'{"count": 3}')
    assert state(response, encoder_class) == ObjectState(
        f"{MOD}.Response",
        1,
        (
            ("status_code", 200),
            ("reason", "OK"),
            ("url", "http://shop.example/stock/A-17"),
            ("headers", {"Content-Type": "application/json", "Set-Cookie": "sid=s3cr3t"}),
            ("content", b'{"count": 3}'),
            ("encoding", "utf-8"),
            ("history", []),
        ),
    )
    # Its time and its pool's port differ from run to run; its body is what it says.
    again = Response(200, b'{"count": 3}', elapsed_ms=9, port=50999)
    assert encoder_class(NO_RULES).encode(again) == encoder_class(NO_RULES).encode(response)
    assert state(Response(200, b'{"count": 4}'), encoder_class) != state(response, encoder_class)
    assert dict(state(Response(200, False), encoder_class).fields)["content"] is False  # not read
    redacted = decode(encoder_class(DEFAULT_RULES).encode(response))
    assert dict(redacted.fields)["headers"]["Set-Cookie"] == callpin.Placeholder("secret", 1)


def test_an_httpx_url_is_its_text_with_its_credentials_redacted(encoder_class, httpx):
    url = URL("https://ops:letmein@prices.example/quote")
    assert state(url, encoder_class) == Custom(f"{MOD}.URL", "https://ops:letmein@prices.example/quote")
    encoded = encoder_class(DEFAULT_RULES).encode(url)
    assert b"letmein" not in encoded
    assert decode(encoded) == Custom(f"{MOD}.URL", "https://<secret:1>@prices.example/quote")


def test_an_httpx_request_holds_its_body_once(encoder_class, httpx):
    request = Request("https://prices.example/quote", {"Content-Type": "application/json"}, b'{"sku":"A"}')
    assert state(request, encoder_class) == ObjectState(
        f"{MOD}.Request",
        1,
        (
            ("method", "POST"),
            ("url", Custom(f"{MOD}.URL", "https://prices.example/quote")),
            ("headers", {"content-type": "application/json"}),
            ("content", b'{"sku":"A"}'),
            ("extensions", {"timeout": {"connect": 5.0, "read": 5.0}}),
        ),
    )
    # A body not read yet is the stream it will be read from, by its type alone: a
    # client's stream holds the time it started.
    streaming = Request("https://prices.example/quote", {})
    streaming.stream._start = 1234.5  # type: ignore[attr-defined]
    assert dict(state(streaming, encoder_class).fields)["stream"] == Opaque(
        f"{MOD}.ByteStream", "<ByteStream, not read>"
    )


def test_an_httpx_request_whose_path_changes_is_one_change_at_url(make_module, httpx):
    def log_of(path: str) -> Log:
        module = make_module("libhttpx", "class Transport:\n    def handle_request(self, request):\n        return 1\n")
        with callpin.record(None, spy=["libhttpx.Transport.handle_request"]) as rec:
            module.Transport().handle_request(Request(f"https://u:p@prices.example/{path}", {}, b"{}"))
        return Log.from_frames(list(rec.frames), rules=DEFAULT_RULES)

    (op,) = callpin.diff(log_of("quote"), log_of("quotes")).ops
    assert op.op == "changed"
    assert op.fields == (
        FieldChange(
            "args[1].url", "https://<secret:1>@prices.example/quote", "https://<secret:1>@prices.example/quotes"
        ),
    )


def test_an_httpx_response_is_its_status_headers_and_body(encoder_class, httpx):
    response = HttpxResponse(200, b'{"total": 13.5}')
    assert state(response, encoder_class) == ObjectState(
        f"{MOD}.HttpxResponse",
        1,
        (
            ("status_code", 200),
            ("headers", {"content-type": "application/json"}),
            ("content", b'{"total": 13.5}'),
            ("history", []),
        ),
    )
    again = HttpxResponse(200, b'{"total": 13.5}', elapsed_ms=11)
    assert encoder_class(NO_RULES).encode(again) == encoder_class(NO_RULES).encode(response)


def test_an_httpx_url_whose_own_code_raises_is_its_state(encoder_class, httpx):
    class Broken(URL):
        def __str__(self) -> str:
            raise ValueError("no text")

    found = state(Broken("https://prices.example/quote"), encoder_class)
    assert isinstance(found, ObjectState) and [name for name, _ in found.fields] == ["_uri_reference"]


class StripeObject:
    """stripe's API object: its fields in `_data`, the response it came from, its requestor."""

    def __init__(self, data: dict[str, Any], api_key: str = "sk_test_k3y") -> None:
        self._data, self._previous = dict(data), dict(data)
        self._unsaved_values: set[str] = set()
        self._transient_values: set[str] = set()
        self._retrieve_params: dict[str, Any] = {}
        self._last_response = types.SimpleNamespace(body=repr(data), headers={"Request-Id": "req_81x"})
        self._requestor = Requestor(api_key)

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"__getattr__ ran for {name}")


class PaymentIntent(StripeObject):
    pass


class Requestor:
    def __init__(self, api_key: str) -> None:
        self._options = types.SimpleNamespace(
            api_key=api_key, stripe_version="2026-10-28.endive", max_network_retries=None
        )
        self._client = HttpClient()


class HttpClient:
    def __init__(self) -> None:
        self._thread_local = object()


class ClientOptions:
    def __init__(self) -> None:
        self.client_id, self.proxy, self.verify_ssl_certs = None, None, True


class StripeClient:
    def __init__(self, api_key: str, retries: int | None = None) -> None:
        self._requestor, self._options = Requestor(api_key), ClientOptions()
        self._requestor._options.max_network_retries = retries
        self.v1 = types.SimpleNamespace(refunds=types.SimpleNamespace(_requestor=self._requestor))


@pytest.fixture
def stripe(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, attribute, value in (
        ("stripe._stripe_object", "StripeObject", StripeObject),
        ("stripe._stripe_client", "StripeClient", StripeClient),
    ):
        module = types.ModuleType(name)
        setattr(module, attribute, value)
        monkeypatch.setitem(sys.modules, name, module)


def test_a_stripe_object_is_its_api_fields_in_their_order(encoder_class, stripe):
    metadata = StripeObject({"order_id": "8"})
    intent = PaymentIntent({"id": "pi_1", "amount": 2500, "metadata": metadata, "client_secret": "pi_1_secret_x"})
    assert state(intent, encoder_class) == ObjectState(
        f"{MOD}.PaymentIntent",
        1,
        (
            ("id", "pi_1"),
            ("amount", 2500),
            ("metadata", ObjectState(f"{MOD}.StripeObject", 1, (("order_id", "8"),))),
            ("client_secret", "pi_1_secret_x"),
        ),
    )
    encoded = encoder_class(DEFAULT_RULES).encode(intent)
    assert b"sk_test_k3y" not in encoded and b"pi_1_secret_x" not in encoded and b"req_81x" not in encoded
    # Fields set and not saved, and the parameters it was retrieved with, follow when there are any.
    intent._unsaved_values, intent._retrieve_params = {"metadata", "amount"}, {"expand": ["latest_charge"]}
    fields = dict(state(intent, encoder_class).fields)
    assert fields["_unsaved_values"] == ["amount", "metadata"]
    assert fields["_retrieve_params"] == {"expand": ["latest_charge"]}


class DictStripeObject(dict):  # type: ignore[type-arg]
    """stripe before 15: a dict of its fields, its bookkeeping in attributes."""

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self._previous, self._retrieve_params, self._requestor = dict(fields), {}, Requestor("sk_test_k3y")


def test_a_stripe_object_of_stripe_before_15_is_its_fields_too(encoder_class, monkeypatch):
    module = types.ModuleType("stripe._stripe_object")
    module.StripeObject = DictStripeObject  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "stripe._stripe_object", module)
    found = state(DictStripeObject({"id": "cus_1", "email": "ada@example.com"}), encoder_class)
    assert found == ObjectState(f"{MOD}.DictStripeObject", 1, (("id", "cus_1"), ("email", "ada@example.com")))


def test_a_stripe_object_whose_fields_are_not_named_is_its_state(encoder_class, stripe):
    odd = StripeObject({})
    odd._data = [("id", "x")]  # type: ignore[assignment]
    assert "_requestor" in dict(state(odd, encoder_class).fields)


def test_a_stripe_client_is_its_options(encoder_class, stripe):
    client = StripeClient("sk_test_k3y", retries=2)
    assert state(client, encoder_class, DEFAULT_RULES) == ObjectState(
        f"{MOD}.StripeClient",
        1,
        (
            ("api_key", callpin.Placeholder("secret", 1)),
            ("client_id", None),
            ("max_network_retries", 2),
            ("proxy", None),
            ("stripe_version", "2026-10-28.endive"),
            ("verify_ssl_certs", True),
            ("http_client", f"{MOD}.HttpClient"),
        ),
    )
    assert state(StripeClient("sk_test_k3y", retries=3), encoder_class) != state(client, encoder_class)


class Connection:
    def __init__(
        self, host: str = "localhost", port: int = 6379, db: int = 0, password: str | None = None, retry: Any = None
    ) -> None:
        pass


DEFAULT_RETRY = ("exponential", 3)


class ConnectionPool:
    def __init__(self, **options: Any) -> None:
        self.connection_class, self.max_connections = Connection, 100
        self.pid, self._token = 4242, "9f1c03aa"  # the process's, and random: other on every run
        self._connection_kwargs = {"host": "localhost", "port": 6379, "db": 0, "password": None, **options}

    @property
    def connection_kwargs(self) -> dict[str, Any]:
        return self._connection_kwargs


class Redis:
    def __init__(self, retry: Any = DEFAULT_RETRY, **options: Any) -> None:
        self.connection_pool = ConnectionPool(retry=retry, **options)
        self.response_callbacks = {"GET": print}


@pytest.fixture
def redis(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("redis.client")
    module.Redis = Redis  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "redis.client", module)


def test_a_redis_client_is_where_and_how_it_connects(encoder_class, redis):
    client = Redis(host="cache.internal", db=2, password="hunter2", driver_info=object(), orig_host_address="x")
    found = state(client, encoder_class, DEFAULT_RULES)
    assert found == ObjectState(
        f"{MOD}.Redis",
        1,
        (
            ("connection_class", f"{MOD}.Connection"),
            ("db", 2),
            ("host", "cache.internal"),
            ("password", callpin.Placeholder("secret", 1)),
        ),
    )
    # The pool's pid and token are not part of it; a db is, and a retry policy set.
    again = Redis(host="cache.internal", db=2, password="hunter2")
    again.connection_pool.pid, again.connection_pool._token = 99, "00aa11bb"
    assert encoder_class(DEFAULT_RULES).encode(again) == encoder_class(DEFAULT_RULES).encode(client)
    assert state(Redis(host="cache.internal", db=3, password="hunter2"), encoder_class) != state(client, encoder_class)
    # The client's own default retry is left out (its connection class's default is None).
    assert "retry" not in dict(state(Redis(), encoder_class).fields)
    retried = dict(state(Redis(retry=ClientOptions()), encoder_class).fields)
    assert retried["retry"] == ObjectState(
        f"{MOD}.ClientOptions", 1, (("client_id", None), ("proxy", None), ("verify_ssl_certs", True))
    )
