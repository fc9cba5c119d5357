"""The engine: files, positions, noqa, fixes, the cache, the worker pool, and the walk that
runs the rules' hooks over the semantic model.
"""
