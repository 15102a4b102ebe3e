"""Runnable examples (`python examples/<name>.py`); a package so tests can import them."""
