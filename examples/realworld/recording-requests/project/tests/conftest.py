import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from server import serve  # noqa: E402


@pytest.fixture(scope="session")
def base_url():
    server, url = serve()
    yield url
    server.shutdown()


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    # What the environment says about proxies and CA bundles reaches requests' calls:
    # the pins fix it at the edge.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
