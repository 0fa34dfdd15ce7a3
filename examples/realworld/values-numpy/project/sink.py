"""The collaborator the legacy code talks to (a message bus in production)."""


def push(array):
    return len(array)


def push_masked(array):
    return int(array.count())
