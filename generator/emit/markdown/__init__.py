"""Markdown emitters (``templates/markdown``): the descriptor tables (:mod:`.descriptors`) and
the instruction reference (:mod:`.instructions`)."""
