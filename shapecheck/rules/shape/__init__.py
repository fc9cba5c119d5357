"""Shape rules (SC2xx): reductions, broadcasting, matmul, tuple results, squeeze, returns. One module
per rule; the family's shared helpers live beside them."""
