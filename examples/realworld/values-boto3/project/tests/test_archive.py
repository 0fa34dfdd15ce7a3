"""Pins the client `archive` hands the store."""

import archive


def test_an_invoice_is_archived_in_its_region(callpin):
    with callpin.pin(spy=["store.put"]):
        archive.archive({"id": "INV-7", "country": "fr"})
