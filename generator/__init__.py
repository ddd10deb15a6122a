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

Installed from a wheel, the package also holds the product's data: the templates
(``ptxgen/templates``), the spec with its schemas (``ptxgen/spec``), the generated C++
headers (``ptxgen/include``, :func:`get_include`) and a CMake package file
(``ptxgen/cmake``, :func:`get_cmake_dir`); in a source checkout (an editable install)
the same functions name the checkout's ``templates/``, ``spec/``, ``generated/include``
and ``cmake/pip``.
"""

import os

__version__ = "0.1.0"

_HERE = os.path.dirname(os.path.abspath(__file__))


def _data_dir(installed: str, *checkout: str) -> str:
    """``installed`` inside the package (a wheel), else ``checkout`` in the source tree
    that holds generator/ (a checkout or an editable install)."""
    inside = os.path.join(_HERE, installed)
    if os.path.isdir(inside):
        return inside
    return os.path.join(os.path.dirname(_HERE), *checkout)


def get_include() -> str:
    """The folder to put on the include path for the generated C++ headers
    (``#include "ptxgen/ptxgen.hpp"``): ``-I$(ptxgen --include-dir)``."""
    return _data_dir("include", "generated", "include")


def get_cmake_dir() -> str:
    """The folder of ``ptxgenConfig.cmake``, for ``find_package(ptxgen CONFIG)``
    (``-Dptxgen_DIR=$(ptxgen --cmake-dir)``): the target ``ptxgen::ptxgen`` puts
    :func:`get_include` on the include path."""
    return _data_dir("cmake", "cmake", "pip")


def spec_dir() -> str:
    """The spec folder this ptxgen was installed with (the YAML files and schema/)."""
    return _data_dir("spec", "spec")


def templates_dir() -> str:
    """The Jinja templates of the emitters."""
    return _data_dir("templates", "templates")
