"""The test suite (a package, so test modules import shared support as `tests.<module>`)."""
