"""Python emitters (``templates/python``): the descriptor classes (:mod:`.descriptors`), the
instruction builders (:mod:`.builders`) and the pytest tests of both (:mod:`.tests`)."""
