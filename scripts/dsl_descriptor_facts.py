"""Make tests/fixtures/dsl/descriptor_words.jsonl: descriptor words the CuTe DSL computed.

The fixture holds *facts measured with an independent oracle*, not ptxgen output: every
word in it was produced by the NVIDIA CuTe DSL 4.8.1 (``nvidia-cutlass-dsl`` with
``-libs-core``, ``-libs-base`` and ``-libs-cu13``, run on a CPU without a GPU):

* ``dsl-classes`` lines: ``Tcgen05InstrDesc.build``, ``Tcgen05MxInstrDesc.build``,
  ``Tcgen05MxOmmaInstrDesc.build`` (pure Python on ints) and ``Tcgen05SmemDesc.build``
  (inside a host-side ``@cute.jit`` function, the word printed with ``cute.printf``) of
  ``cutlass.experimental.primitives.descriptors``, over a grid of arguments;
* ``dsl-compiler`` lines: the instruction descriptor immediates and shared memory
  descriptor address masks in the PTX that ``cute.compile`` writes for the DSL's public
  tcgen05 MMA atoms with ``CUTE_DSL_ARCH=sm_100a`` / ``sm_107a`` and ``CUTE_DSL_KEEP=ptx``.

The DSL is proprietary: nothing of it is in this repository, and this script does not
import it. It reads the JSON lines such a run printed (one object per word:
``{"class", "args", "word"}`` for the classes, ``{"case", "arch", "opcode", "idesc",
"smem_desc_and_masks"}`` for the compiler) and keeps every shared-memory line, every
compiler line and a deterministic sample (one line in ``--every``) of the instruction
descriptor grid, so that the fixture stays small:

    python scripts/dsl_descriptor_facts.py GRID.jsonl COMPILER.jsonl \\
        > tests/fixtures/dsl/descriptor_words.jsonl

tests/test_descriptor_variants.py compares ptxgen's encoders with these words; with
``PTXGEN_CUTE_DSL_PYTHON`` set to a Python that has the DSL it also runs the DSL's
instruction descriptor classes itself.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("grid")
    ap.add_argument("compiler")
    ap.add_argument("--every", type=int, default=13)
    args = ap.parse_args()
    n = 0
    with open(args.grid, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            keep = rec["class"] == "Tcgen05SmemDesc" or n % args.every == 0
            n += rec["class"] != "Tcgen05SmemDesc"
            if keep:
                print(json.dumps({"source": "dsl-classes", **rec}, sort_keys=True))
    with open(args.compiler, encoding="utf-8") as fh:
        for line in fh:
            print(json.dumps({"source": "dsl-compiler", **json.loads(line)}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
