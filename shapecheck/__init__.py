"""shapecheck: find PyTorch tensor bugs before the code runs, explain them when it does."""

__version__ = "0.1.0"
