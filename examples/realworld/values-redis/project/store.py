"""The store: writes a session with the client it is given (a real server in production)."""


def save(client, key, value, ttl):
    return client.set(key, value, ex=ttl)
