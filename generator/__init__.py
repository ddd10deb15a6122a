"""ptxgen: spec-driven code generator for NVIDIA PTX tensor-core descriptors.

The pipeline is visible in the sub-modules: :mod:`ptxgen.load` (safe YAML with
source positions) -> :mod:`ptxgen.validate` (JSON Schema, then semantic checks)
-> :mod:`ptxgen.model` (typed model, every derived fact computed once) ->
:mod:`ptxgen.emit` (one emitter per output language) -> :mod:`ptxgen.write`
(atomic swap of the output folder). The generated Python bindings are
importable as :mod:`ptxgen.isa`.
"""

__version__ = "0.1.0"
