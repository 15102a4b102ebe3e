"""How to install an optional extra: one hint for every error message that needs one.

The package installs from a clone of its repository (it is not on a package index), so every
hint says `pip install -e ".[extra]"` run from the clone.
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that installs `extra`, e.g. `pip install -e ".[gate]"` (from a clone)."""
    return f'pip install -e ".[{extra}]" (from a clone of the repository)'


GATE_EXTRA_HINT = install_hint("gate")
"""How to install the gate's optional dependencies (numpy, onnxruntime, the MiniLM model)."""
