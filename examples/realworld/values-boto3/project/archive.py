"""Legacy code: an invoice is archived to S3 in the region of its customer, with a client
made for that region. A refactor must hand the store a client for the same service,
region and endpoint, with the same options."""

import boto3
import store
from botocore.config import Config

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REGIONS = {"fr": "eu-west-3", "us": "us-east-1"}


def archive(invoice):
    client = boto3.client(
        "s3",
        region_name=REGIONS[invoice["country"]],
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        config=Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=5),
    )
    store.put(client, "invoices", f"{invoice['id']}.json", b'{"total": 42}')
