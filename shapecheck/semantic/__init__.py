"""The semantic model: what the linter knows about every name and expression of a file.

This layer reads libcst trees and uses the shape algebra and the torch table; it never imports
a rule, the engine or a front end.
"""
