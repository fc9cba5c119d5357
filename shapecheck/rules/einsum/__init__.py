"""Einsum rules (SC5xx): literal specs checked by the shared parser (``einsum_parser``). One module per
rule; the family's shared helpers live beside them."""
