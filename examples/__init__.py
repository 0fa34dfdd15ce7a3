"""Bundled example scenarios for callpin's demo and docs."""
