"""The torch-facing runtime behind :mod:`shapecheck.runtime`: checked einsum, plans,
signature checks, explanations, the pytest plugin. Imports torch; the linter never imports it.
"""
