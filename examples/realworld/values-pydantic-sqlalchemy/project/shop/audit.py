"""The audit trail (a message queue in production)."""


def log(event):
    raise RuntimeError("no audit queue in tests")
