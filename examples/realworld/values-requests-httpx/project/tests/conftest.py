import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server import serve


@pytest.fixture(scope="module")
def base_url():
    server, url = serve()
    yield url
    server.shutdown()


# requests reads proxies and CA bundles from the environment: a pinned request must not.
AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


@pytest.fixture
def clean_environment(monkeypatch):
    for name in AMBIENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
