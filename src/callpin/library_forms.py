"""The forms of well-known libraries' objects, where their state pins too little or too much.

Each is chosen where an object's attributes pin too little (a frame's block manager),
too much (a client's shared caches) or what differs from run to run.

Each is looked for only when its library is imported already (`sys.modules`): nothing
here imports a library, and a class of a library not imported cannot be seen. A form
registered with `callpin.register` comes before these. docs/FORMAT.md ("Objects") lists
each form with what it leaves out and why.
"""

from __future__ import annotations

import inspect
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from .object_state import by_identity, by_repr, by_state, instance_state
from .values import Custom, ObjectState, Opaque, qualified_name

# Bookkeeping objects of well-known libraries, recorded by identity unless registered
# otherwise: what they hold differs from run to run and says nothing about the call.
# - sqlalchemy.orm.state.InstanceState: an ORM object's `_sa_instance_state` (its
#   session's id, a process-wide load counter, the mapper and its whole registry).
IDENTITY_TYPES = frozenset({"sqlalchemy.orm.state.InstanceState"})


def form_of_library_type(cls: type) -> Callable[[Any], Any] | None:
    """The form of values of `cls` when it is one of a well-known library's types, else None.

    Asked of the type itself (a proxy claiming to be a DataFrame is not one). What it
    returns never refers to `cls`: the caller keeps it by a weak reference to the class.
    """
    if qualified_name(cls) in IDENTITY_TYPES:
        return by_identity
    pandas = sys.modules.get("pandas")
    if pandas is not None and cls is type(getattr(pandas, "NaT", None)):
        return by_repr  # a datetime whose every field is NaN: `NaT`
    numpy = sys.modules.get("numpy")
    ndarray = getattr(numpy, "ndarray", None)
    if isinstance(ndarray, type) and issubclass(cls, ndarray):
        return _array_of(ndarray)
    for module, name, form in _LIBRARY_TYPES:
        library_type = getattr(sys.modules.get(module), name, None)
        if isinstance(library_type, type) and issubclass(cls, library_type):
            return form
    return None


def _array_of(ndarray: type) -> Callable[[Any], ObjectState]:
    """How a numpy array is written: by its state, whose attributes are its `dtype` (its
    str), its `shape` and its `values` (`tolist()`: every element, as Python values),
    read with `ndarray`'s own members, then the attributes a subclass set (a masked
    array's mask). Numbered and held to the budget as any object. Its repr summarizes
    past 1,000 elements, rounds to 8 digits and follows the process's print options."""
    dtype, shape, tolist = vars(ndarray)["dtype"], vars(ndarray)["shape"], vars(ndarray)["tolist"]

    def array(obj: Any) -> ObjectState:
        held = (("dtype", str(dtype.__get__(obj, ndarray))), ("shape", tuple(shape.__get__(obj, ndarray))))
        return ObjectState(qualified_name(type(obj)), 0, (*held, ("values", tolist(obj)), *(instance_state(obj) or ())))

    return array


def _or_by_state(form: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`form`, or the object's state when the library's own code refuses to give its values."""

    def read(obj: Any) -> Any:
        try:
            return form(obj)
        except Exception as exc:
            exc.__traceback__ = None  # dropped with its frames
            return by_state(obj)

    return read


def _frame(obj: Any) -> ObjectState:
    """A pandas DataFrame by its values: its columns' dtypes, its index, and each column's
    values (`tolist()`: Python values), by label, in column order (a list of `[label,
    values]` pairs when two columns share a label), then `attrs` when it holds any. Its
    state is a block manager whose repr gives the shapes alone, and a cache of the
    columns read so far. Read column by column by position, which fills no cache."""
    columns = obj.columns.tolist()
    dtypes = [str(dtype) for dtype in obj.dtypes.tolist()]
    values = [obj.iloc[:, position].tolist() for position in range(len(columns))]
    unique = obj.columns.is_unique

    def by_label(per_column: list[Any]) -> Any:
        pairs = zip(columns, per_column, strict=True)
        return dict(pairs) if unique else [list(pair) for pair in pairs]

    fields = (("dtypes", by_label(dtypes)), ("index", obj.index), ("data", by_label(values)))
    return ObjectState(qualified_name(type(obj)), 0, fields + _pandas_attrs(obj))


def _series(obj: Any) -> ObjectState:
    """A pandas Series by its name, dtype, index and values (`tolist()`), then `attrs`."""
    fields = (("name", obj.name), ("dtype", str(obj.dtype)), ("index", obj.index), ("values", obj.tolist()))
    return ObjectState(qualified_name(type(obj)), 0, fields + _pandas_attrs(obj))


def _index(obj: Any) -> ObjectState:
    """A pandas Index by its name (`names` for a MultiIndex), dtype and values; a
    RangeIndex by its start, stop and step, which a default index of a million rows
    keeps short."""
    name = ("names", list(obj.names)) if obj.nlevels > 1 else ("name", obj.name)
    bounds = tuple((part, getattr(obj, part, None)) for part in ("start", "stop", "step"))
    if all(type(value) is int for _, value in bounds):
        return ObjectState(qualified_name(type(obj)), 0, (name, *bounds))
    return ObjectState(qualified_name(type(obj)), 0, (name, ("dtype", str(obj.dtype)), ("values", obj.tolist())))


def _service_client(obj: Any) -> ObjectState:
    """A botocore (boto3) client by what says which service it talks to and how: its
    service name, region, endpoint URL, and the options of its config that differ from
    botocore's defaults (`user_agent` left out: it names the machine's OS and Python).
    Its state holds the caches its session shares between clients (service models,
    endpoint rules, exception classes), which read otherwise after a test that made a
    client of another service, and no credentials are read."""
    meta = obj.meta
    config = meta.config
    defaults = getattr(type(config), "OPTION_DEFAULTS", {})
    missing = object()
    options = {
        name: value
        for name, value in sorted(vars(config).items())
        if not name.startswith("_") and name != "user_agent" and defaults.get(name, missing) != value
    }
    fields = (
        ("service", meta.service_model.service_name),
        ("region", meta.region_name),
        ("endpoint_url", meta.endpoint_url),
        ("config", options),
    )
    return ObjectState(qualified_name(type(obj)), 0, fields)


def _pandas_attrs(obj: Any) -> tuple[tuple[str, Any], ...]:
    attrs = obj.attrs
    return (("attrs", dict(attrs)),) if attrs else ()


def _prepared_request(obj: Any) -> ObjectState:
    """A requests `PreparedRequest` by what it sends: its method, URL, headers (a plain
    dict, in their order) and body, then its hooks when one is set. Left out: the cookie
    jar it built its `Cookie` header from (the header is there) and `_body_position`
    (where to rewind a file body on a redirect). Read from its attributes, no property."""
    held = vars(obj)
    fields = [(name, held.get(name)) for name in ("method", "url")]
    fields.append(("headers", _plain_headers(held.get("headers"))))
    fields.append(("body", held.get("body")))
    hooks = held.get("hooks")
    if isinstance(hooks, dict) and any(hooks.values()):
        fields.append(("hooks", {event: list(called) for event, called in hooks.items() if called}))
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


def _requests_response(obj: Any) -> ObjectState:
    """A requests `Response` by what it says: status code, reason, final URL, headers,
    body (`content`: False when not read) and encoding, and the responses it was
    redirected through (`history`). Left out: `elapsed` (a time, other on every run),
    `raw` and `connection` (the urllib3 response and pool, the server's port), the
    cookie jar (its `Set-Cookie` header is there) and the request it answers (written
    where it was sent, in the adapter's call)."""
    held = vars(obj)
    fields = [(name, held.get(name)) for name in ("status_code", "reason", "url")]
    fields.append(("headers", _plain_headers(held.get("headers"))))
    fields.extend((name, held.get(source)) for name, source in (("content", "_content"), ("encoding", "encoding")))
    fields.append(("history", held.get("history")))
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


def _httpx_url(obj: Any) -> Custom:
    """An httpx `URL` as its text (`URL('https://<secret:1>@prices.example/quote')`, the
    credentials redacted as in any text): its state is a parsed reference of seven parts,
    three objects deep, and a changed path read `url._uri_reference.path`."""
    return Custom(qualified_name(type(obj)), str(obj))


def _httpx_request(obj: Any) -> ObjectState:
    """An httpx `Request` by what it sends: method, URL, headers (a plain dict), body and
    extensions (the timeouts). The body is `content` once read (a body held in memory
    is), else the `stream` it will be read from, by its type alone (`<ByteStream, not
    read>`): it is never read here. Its state held the body twice (`_content`, and a `ByteStream` of the same bytes)."""
    held = vars(obj)
    fields = [(name, held.get(name)) for name in ("method", "url")]
    fields += [("headers", _plain_headers(held.get("headers"))), _httpx_body(held)]
    fields.append(("extensions", held.get("extensions")))
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


def _httpx_response(obj: Any) -> ObjectState:
    """An httpx `Response` by what it says: status code, headers, body (as a request's)
    and the responses it was redirected through. Left out: the request it answers
    (written where it was sent), `elapsed`, and its `extensions` (the connection's stream)."""
    held = vars(obj)
    fields = [("status_code", held.get("status_code")), ("headers", _plain_headers(held.get("headers")))]
    fields += [_httpx_body(held), ("history", held.get("history"))]
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


def _httpx_body(held: dict[str, Any]) -> tuple[str, Any]:
    """The body once read; else the stream it is read from, by its type alone (a client's
    stream holds the time it started, and the connection)."""
    if "_content" in held:
        return ("content", held["_content"])
    stream = held.get("stream")
    return (
        "stream",
        None if stream is None else Opaque(qualified_name(type(stream)), f"<{type(stream).__name__}, not read>"),
    )


def _plain_headers(headers: Any) -> Any:
    """A library's headers mapping as a plain dict of its items, in their order (a
    repeated httpx header joined with `, `, as httpx's `items()` gives it); anything
    else as it is."""
    items = getattr(headers, "items", None)
    return dict(items()) if items is not None and not isinstance(headers, dict) else headers


def _stripe_object(obj: Any) -> ObjectState:
    """A Stripe API object (`PaymentIntent`, `Customer`, a nested `StripeObject`) by its
    fields, in the order the API gave them, as its attributes: `PaymentIntent#1(id='pi_1',
    amount=2500, metadata=StripeObject#1(order_id='8'), ...)`; then the names of the
    fields set and not saved yet, and the parameters it was retrieved with, when there
    are any. Left out: the HTTP response it came from and the copy of its fields as
    last refreshed (the same payload twice more), and its requestor (the API key and
    the HTTP client)."""
    held = vars(obj)
    data = held.get("_data")
    if data is None and isinstance(obj, dict):
        data = dict(dict.items(obj))  # stripe before 15: a dict of its fields
    if type(data) is not dict or not all(type(name) is str for name in data):
        raise TypeError("a Stripe object's fields are a dict keyed by name")
    fields = list(data.items())
    unsaved = held.get("_unsaved_values")
    if unsaved:
        fields.append(("_unsaved_values", sorted(unsaved)))
    params = held.get("_retrieve_params")
    if params:
        fields.append(("_retrieve_params", dict(params)))
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


def _stripe_client(obj: Any) -> ObjectState:
    """A `StripeClient` by how it calls the API: its requestor's options (the API key,
    redacted by its name; the Stripe version and account; the base addresses; the
    retries), its client options (client id, proxy, certificate checks), by name, and the
    type of its HTTP client. Its state held every API service it offers, each with the
    same requestor, and the HTTP client's thread-local store (an address)."""
    held = vars(obj)
    requestor = vars(held["_requestor"])
    options = {**vars(requestor["_options"]), **vars(held["_options"])}
    fields = sorted(options.items())
    fields.append(("http_client", qualified_name(type(requestor["_client"]))))
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


def _redis_client(obj: Any) -> ObjectState:
    """A redis-py client (`redis.Redis`, `redis.asyncio.Redis`, a subclass) by where and
    how it connects: its pool's connection class, then the connection options its pool
    holds that differ from that class's defaults, by name, when their values are plain
    (host, port, db, username, the password, redacted by its name, timeouts, encoding,
    protocol...), and its `retry` policy when it differs from the client class's.
    Left out: redis' own copies of options it may relax (`orig_*`) and the option
    objects that hold the library's version or addresses (`driver_info`, notification
    handlers). Its state held the pool, with the process id and a random token of its
    own, and the connections made so far."""
    pool = vars(obj)["connection_pool"]
    connection_class = pool.connection_class
    defaults = {**_defaults(connection_class), **_defaults(type(obj))}  # the client's own first
    fields: list[tuple[str, Any]] = [("connection_class", qualified_name(connection_class))]
    for name, value in sorted(pool.connection_kwargs.items()):
        if name.startswith("orig_") or not (name == "retry" or _is_plain(value)):
            continue
        default = defaults.get(name, _NO_DEFAULT)
        if type(default) is not type(value) or default != value:
            fields.append((name, value))
    return ObjectState(qualified_name(type(obj)), 0, tuple(fields))


_NO_DEFAULT = object()
_PLAIN = (type(None), bool, int, float, str, bytes)
# The defaults of each class's `__init__` and its bases', the nearest first.
_DEFAULTS: weakref.WeakKeyDictionary[type, dict[str, Any]] = weakref.WeakKeyDictionary()


def _defaults(cls: type) -> dict[str, Any]:
    known = _DEFAULTS.get(cls)
    if known is None:
        known = {}
        for klass in reversed(cls.__mro__):
            init = vars(klass).get("__init__")
            if isinstance(init, types.FunctionType):
                parameters = inspect.signature(init).parameters.values()
                known.update((p.name, p.default) for p in parameters if p.default is not p.empty)
        _DEFAULTS[cls] = known
    return known


def _is_plain(value: Any) -> bool:
    if type(value) in (list, tuple):
        return all(type(one) in _PLAIN for one in value)
    return type(value) in _PLAIN


# The library types with a form of their own: (module, name, form). Each form reads the
# object with the library's own code, and falls back to its state when that code raises.
_LIBRARY_TYPES: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("pandas", "DataFrame", _or_by_state(_frame)),
    ("pandas", "Series", _or_by_state(_series)),
    ("pandas", "Index", _or_by_state(_index)),
    ("botocore.client", "BaseClient", _or_by_state(_service_client)),
    ("requests.models", "PreparedRequest", _or_by_state(_prepared_request)),
    ("requests.models", "Response", _or_by_state(_requests_response)),
    ("httpx", "URL", _or_by_state(_httpx_url)),
    ("httpx", "Request", _or_by_state(_httpx_request)),
    ("httpx", "Response", _or_by_state(_httpx_response)),
    # stripe's own modules: its package's names are lazy, and reading one imports it.
    ("stripe._stripe_object", "StripeObject", _or_by_state(_stripe_object)),
    ("stripe._stripe_client", "StripeClient", _or_by_state(_stripe_client)),
    ("redis.client", "Redis", _or_by_state(_redis_client)),
    ("redis.asyncio.client", "Redis", _or_by_state(_redis_client)),
)
