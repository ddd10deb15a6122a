"""ptxgen: spec-driven code generator for NVIDIA PTX tensor-core descriptors and instructions.

The pipeline is visible in the sub-packages, each importing only the stages before
it: :mod:`ptxgen.load` (safe YAML with source positions) -> :mod:`ptxgen.validate`
(JSON Schema, then the checks of the documents as written) -> :mod:`ptxgen.model`
(targets, instructions, descriptors and versions; every derived fact computed once)
-> :mod:`ptxgen.emit` (one package of emitters per output language) ->
:mod:`ptxgen.write` (atomic swap of the output folder); :mod:`ptxgen.pipeline` runs
them, :mod:`ptxgen.support`, :mod:`ptxgen.diff` and :mod:`ptxgen.probe` consume the
model and :mod:`ptxgen.cli` is on top. The generated Python bindings are importable
as :mod:`ptxgen.isa`.
"""

__version__ = "0.1.0"
