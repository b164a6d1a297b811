"""The built-in designs, one folder each: everything lanecheck knows about a design.

A folder's ``__init__`` builds one ``model_checks.design.Design`` named
``DESIGN``; the registry (``model_checks.registry``) loads the folders it lists
in ``BUILT_IN``, then third-party designs declared under the ``lanecheck.designs`` entry
point group. Designs never import each other, and the generic packages never
import a design (import-linter contracts in pyproject.toml).
"""
