"""The front ends: the command line, the report formats, the generated rule pages.
"""
