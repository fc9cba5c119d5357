"""Rules about shapecheck's own comments (SC9xx), checked by the engine rather than by a walk of
the tree: the engine implements them where it reads the suppression comments."""
