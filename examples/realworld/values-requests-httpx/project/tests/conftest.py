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
