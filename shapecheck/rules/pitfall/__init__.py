"""Everyday-pitfall rules (SC6xx): Python protocols on tensors, `.item()`, `list(t)`, inverses. One
module per rule; the family's shared helpers live beside them."""
