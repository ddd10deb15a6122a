"""Markdown emitter placeholder (filled in below)."""
from ptxgen.emit import Files
from ptxgen.model import Spec


def emit(spec: Spec) -> Files:
    return {}
