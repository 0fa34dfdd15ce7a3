"""Legacy session cache: a redis client per region, handed to the store with each session."""

import json

import redis
import store

HOSTS = {"eu": "cache-eu.internal", "us": "cache-us.internal"}
CACHE_PASSWORD = "s3ss10n-cache-pw"


def client_for(region):
    return redis.Redis(host=HOSTS[region], port=6380, db=2, password=CACHE_PASSWORD, socket_timeout=3)


def remember(region, session_id, user):
    client = client_for(region)
    return store.save(client, f"session:{session_id}", json.dumps({"user": user}), ttl=3600)
