import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server import serve  # noqa: E402

AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


@pytest.fixture(scope="module")
def base_url():
    server, url = serve()
    yield url
    server.shutdown()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    # The pinned calls carry what requests merges from the environment (proxies=, verify=).
    for name in AMBIENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
