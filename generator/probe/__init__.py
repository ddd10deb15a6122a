"""Assembling the spec's instruction forms with a ptxas binary.

* :mod:`ptxgen.probe.assembler`: one ptxas (its release, newest PTX ISA, GPU
  names) and batched, cached assembly of one-instruction kernels;
* :mod:`ptxgen.probe.matrix`: the conformance matrix (does this ptxas accept
  exactly what the spec says, deviations of its toolkit included);
* :mod:`ptxgen.probe.propose`: ``ptxgen probe`` - what the ptxas says that the
  spec does not, grouped as proposed edits.
"""

from __future__ import annotations

from ptxgen.probe.assembler import Assembler, AssemblerError, Kernel, kernel_for
from ptxgen.probe.matrix import Report, run_matrix, toolkit_of
from ptxgen.probe.propose import ProbeResult, Proposal, probe

__all__ = ["Assembler", "AssemblerError", "Kernel", "ProbeResult", "Proposal", "Report",
           "kernel_for", "probe", "run_matrix", "toolkit_of"]
