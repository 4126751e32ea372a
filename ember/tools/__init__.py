"""ember's command-line drivers (``ember-opt``)."""
