"""``ptxgen scan``: the inline asm of CUDA/C++ sources against the spec.

* :mod:`ptxgen.scan.reader` reads the statements (no knowledge of PTX instructions):
  ``read_source(text, file)`` and ``read_paths(paths)`` return
  :class:`~ptxgen.scan.reader.Statement` (file, line, col, block, #if conditions, PTX text,
  predicate, label, scope depth);
* :mod:`ptxgen.scan.report` looks them up: ``report(iset, statements)`` (rows, blocks with
  their replacement, summary) and ``summary_text``.
"""
