"""Device rules (SC4xx): where tensors and modules live. One module per rule; the family's shared
helpers live beside them."""
