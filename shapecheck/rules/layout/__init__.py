"""Layout rules (SC1xx): views, strides and contiguity. One module per rule; the family's shared
helpers live beside them."""
