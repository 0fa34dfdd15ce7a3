"""The legacy code under test: a status client built on requests, as an application writes one."""

import requests
from requests.auth import HTTPDigestAuth


def fetch_status(base_url):
    """The module-level way: requests.get, which calls requests.api.request."""
    response = requests.get(base_url + "/status", timeout=5)
    response.raise_for_status()
    return response.json()


class StatusClient:
    """The session way: one requests.Session per client, digest auth when given a user."""

    def __init__(self, base_url, user=None, password=None):
        self.base_url = base_url
        self.session = requests.Session()
        if user is not None:
            self.session.auth = HTTPDigestAuth(user, password)

    def status(self):
        response = self.session.get(self.base_url + "/status", timeout=5)
        response.raise_for_status()
        return response.json()

    def private(self):
        response = self.session.get(self.base_url + "/private", timeout=5)
        response.raise_for_status()
        return response.json()


def crawl(base_url, level=0):
    """Follow `/next` links with no end: the recursion the code under test runs into."""
    params = requests.utils.to_key_val_list({"level": level, "trail": [base_url, {"depth": [level]}]})
    return crawl(base_url, level + 1) + len(params)
