"""The package version: one definition, read by pyproject (setuptools' dynamic version), by the
top-level face and by the data-dir manifest, from a module that imports nothing so every
floor may read it."""

__version__ = "0.1.0"
