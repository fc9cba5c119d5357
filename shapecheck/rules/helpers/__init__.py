"""Helpers every rule family may use: reading calls, walking a tree, tensor facts, messages,
operators, where a node sits, and whether a fix's rewrite is safe."""
