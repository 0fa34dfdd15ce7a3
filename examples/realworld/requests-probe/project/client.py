"""The legacy code under test: a status check that builds its own requests.Session."""

import requests


def fetch_status(base_url):
    session = requests.Session()
    response = session.get(base_url + "/status", timeout=5)
    response.raise_for_status()
    return response.json()
