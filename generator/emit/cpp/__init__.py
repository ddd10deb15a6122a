"""C++ emitters (``templates/cpp``): the descriptor headers (:mod:`.descriptors`), their
conformance tests (:mod:`.tests`), the instruction wrappers (:mod:`.wrappers`) and the
checks of descriptor operands (:mod:`.descriptor_rules`)."""
