"""A small package with jaxtyping-annotated functions, for the pytest plugin's tests.

It never imports shapecheck: ``pytest --shapecheck-packages=runtime_pkg`` checks it from outside.
"""
