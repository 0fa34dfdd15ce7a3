"""The collaborator the legacy code talks to (a data warehouse loader in production)."""


def load(table, frame):
    return len(frame)


def totals(series):
    return float(series.sum())
