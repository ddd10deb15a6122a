"""``ptxgen scan``: the inline asm of CUDA/C++ sources against the spec.

* :mod:`ptxgen.source`, the reader of sources shared with ``ptxgen lint``, reads the
  statements (no knowledge of PTX instructions): ``read_source(text, file)`` and
  ``read_paths(paths)`` return :class:`~ptxgen.source.Statement` (file, line, col, block,
  #if conditions, PTX text, predicate, label, scope depth);
* :mod:`ptxgen.scan.report` looks them up: ``report(iset, statements)`` (rows, blocks with
  their replacement, summary) and ``summary_text``.
"""
