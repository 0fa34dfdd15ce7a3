"""A small order service on pydantic and SQLAlchemy: the legacy code under test."""
