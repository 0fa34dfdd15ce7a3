"""The legacy code under test: an inventory client on requests and a price client on httpx."""

import httpx
import requests

API_TOKEN = "tok-3f9c2a71d0e84b56"
PRICES = "https://ops:letmein@prices.example"


def stock_response(base_url, sku):
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {API_TOKEN}"
    response = session.get(f"{base_url}/stock/{sku}", params={"warehouse": "north"}, timeout=5)
    response.raise_for_status()
    return response


def fetch_stock(base_url, sku):
    return stock_response(base_url, sku).json()


def upload_counts(base_url, counts):
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {API_TOKEN}"
    response = session.post(f"{base_url}/stock", json=counts, timeout=5)
    response.raise_for_status()
    return response.json()


def quote(transport, sku, quantity):
    with httpx.Client(base_url=PRICES, transport=transport, auth=("shop", "hunter2")) as client:
        response = client.post("/quote", json={"sku": sku, "quantity": quantity}, headers={"X-Channel": "web"})
        response.raise_for_status()
        return response.json()
