"""Autograd rules (SC3xx): in-place changes, `.data`, `backward()`, losses, training loops. One module
per rule; the family's shared helpers live beside them."""
