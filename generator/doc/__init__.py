"""``ptxgen doc``: the PTX ISA document as evidence against the spec.

markdown.py reads the document's Markdown forms (sections, code, tables, prose, each
with its file:line); syntax.py its syntax blocks; tables.py its descriptor tables;
notes.py its PTX ISA and Target ISA notes; check.py holds them against the spec
(``doc check``); importer.py writes a spec folder of what the document defines
(``doc import``). The package reads the model and the loader only; the command line
lends it an assembler (ptxgen.probe) for ``--ptxas``.
"""
