"""Command-line interface: a thin layer over the pipeline and the generated classes.

Exit codes: 0 success; 1 ``check`` found differences, ``diff`` a breaking change,
``support`` a valid form not supported there; 2 an error: invalid input (a spec that
does not validate, a field value the tables do not allow, bad usage), an output
folder that may not be replaced, a file that cannot be read or written - nothing
was written; 130 interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM, SIGHUP).
Errors go to stderr, one line each (a spec's problems one line per problem);
results go to stdout. With ``--json`` (``diff``: ``--format json``) an error is also
printed on stdout as ``{"ok": false, "exit_code": N, "error": {"message": ...,
"diagnostics": [...]}}``.

Names and values are matched exactly as the spec spells them (lower case; PTX
spellings such as ``.scale_vec::2X`` as the PTX ISA writes them); anything else is
refused with the closest spelling ("did you mean").

Commands that read the spec find the project the way git finds a repository: the
nearest folder, from the current one upwards, that has a ``spec/`` folder; the
defaults ``--spec`` and ``--out`` are that project's ``spec/`` and ``generated/``
(``generated/`` next to the spec folder when ``--spec`` is given).

The encode/decode/zero-column-mask paths import only the generated classes
(``ptxgen.isa``): no YAML, Jinja or JSON Schema on the hot path. Only with
``--ptx-isa X.Y`` do they read the spec (its versions and the descriptors'
``since``; :func:`ptxgen.model.versions.check_descriptor_at`), through argparse.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import argparse

EXIT_OK, EXIT_DIFF, EXIT_INVALID = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


class _Terminated(BaseException):
    """Raised by the SIGTERM/SIGHUP handler so that clean-ups run (exit 143)."""


def _build_parser() -> argparse.ArgumentParser:
    import argparse
    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message)

    p = _Parser(prog="ptxgen", description="Spec-driven generator for PTX tensor-core "
                                            "descriptors and instruction wrappers.")
    from ptxgen import __version__

    p.add_argument("--version", action="version", version=f"ptxgen {__version__}")

    class _PrintDir(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
            import ptxgen

            print(getattr(ptxgen, self.dest)())
            parser.exit()

    p.add_argument("--include-dir", action=_PrintDir, nargs=0, dest="get_include",
                   help="print the folder of the generated C++ headers (for -I) and exit")
    p.add_argument("--cmake-dir", action=_PrintDir, nargs=0, dest="get_cmake_dir",
                   help="print the folder of ptxgenConfig.cmake (ptxgen_DIR, for "
                        "find_package(ptxgen CONFIG)) and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def spec_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--spec", default=None, metavar="DIR",
                        help="spec folder (default: the project's spec/)")

    def out_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--out", default=None, metavar="DIR",
                        help="output folder (default: generated/ next to the spec folder; "
                             "with --ptx-isa X.Y: generated-X.Y/)")

    def view_arg(sp: argparse.ArgumentParser, what: str) -> None:
        sp.add_argument("--ptx-isa", dest="ptx_isa", metavar="X.Y",
                        help=f"{what} as of this PTX ISA version (a version the spec lists)")

    def select_arg(sp: argparse.ArgumentParser, what: str) -> None:
        sp.add_argument("--select", metavar="PATTERN",
                        help=f"{what} C++ wrappers that compile only the forms whose PTX "
                             "opcode this regular expression matches (re.search), e.g. "
                             "'m64n(128|256)k16\\.f32\\.bf16'; the other forms are "
                             "a static_assert naming the selection")

    def json_arg(sp: argparse.ArgumentParser, what: str) -> None:
        sp.add_argument("--json", action="store_true", help=f"print {what} as JSON")

    g = sub.add_parser("generate", help="validate the spec and (re)write the output folder")
    spec_arg(g)
    out_arg(g)
    view_arg(g, "generate the spec")
    select_arg(g, "generate")
    json_arg(g, "the written files")
    c = sub.add_parser("check", help="exit 1 if the output folder differs from what "
                                     "generate would write")
    spec_arg(c)
    out_arg(c)
    view_arg(c, "compare with the spec")
    select_arg(c, "compare with")
    c.add_argument("--full", action="store_true",
                   help="always render and compare (ignore the manifest's input digest)")
    json_arg(c, "the differences")
    v = sub.add_parser("validate", help="validate the spec (exit 2 with file:line:col errors)")
    spec_arg(v)
    view_arg(v, "also build the spec")
    json_arg(v, "the diagnostics")

    e = sub.add_parser("encode", help="encode a descriptor from FIELD=VALUE pairs")
    e.add_argument("descriptor", metavar="DESCRIPTOR")
    e.add_argument("--kind", metavar="KIND", help="MMA kind (instr_desc only)")
    e.add_argument("--target", metavar="TARGET", help="the layout for this SM target (such "
                   "as sm_107a) as of --ptx-isa (default: the newest); without it the "
                   "baseline tables")
    e.add_argument("fields", nargs="*", metavar="FIELD=VALUE")
    json_arg(e, "the word and its fields")
    view_arg(e, "refuse a descriptor or kind that does not exist")
    spec_arg(e)
    d = sub.add_parser("decode", help="decode a descriptor word")
    d.add_argument("descriptor", metavar="DESCRIPTOR")
    d.add_argument("--kind", metavar="KIND", help="MMA kind (instr_desc only)")
    d.add_argument("--target", metavar="TARGET", help="the layout for this SM target (such "
                   "as sm_107a) as of --ptx-isa (default: the newest); without it the "
                   "baseline tables")
    d.add_argument("word", metavar="HEX")
    json_arg(d, "the fields")
    view_arg(d, "refuse a descriptor or kind that does not exist")
    spec_arg(d)
    z = sub.add_parser("zero-column-mask", help="expand a zero-column mask descriptor (Table 45)")
    z.add_argument("word", metavar="HEX")
    z.add_argument("--m", type=int, required=True, choices=(128, 64, 32), metavar="{128,64,32}")
    z.add_argument("--n", type=int, required=True, metavar="N")
    json_arg(z, "the masks")
    view_arg(z, "refuse the descriptor if it does not exist")
    spec_arg(z)

    df = sub.add_parser("diff", help="semantic changes between two revisions of the spec, "
                                     "classified breaking / compatible / note (exit 1 if any "
                                     "breaks)")
    df.add_argument("old", metavar="OLD", help="spec folder or git revision (REV or "
                                               "REV:PATH); with --ptx-isa a PTX ISA version")
    df.add_argument("new", metavar="NEW", help="spec folder or git revision (REV or "
                                               "REV:PATH); with --ptx-isa a PTX ISA version")
    df.add_argument("--spec", default=None, metavar="DIR",
                    help="the spec folder whose path a git revision is read from, or whose "
                         "versions --ptx-isa compares (default: the project's spec/)")
    df.add_argument("--ptx-isa", dest="ptx_isa", action="store_true",
                    help="OLD and NEW are PTX ISA versions: compare two views of one spec")
    df.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                    help="output format (default: text)")
    df.add_argument("--generated", action="store_true",
                    help="also list the generated files and symbols that change")

    su = sub.add_parser("support", help="is an instruction form valid, and where is it "
                                        "supported? (exit 0 yes, 1 not there, 2 invalid)")
    su.add_argument("opcode", metavar="OPCODE",
                    help="the instruction with its qualifiers, no operands; '-': one opcode "
                         "per line on stdin (--json: one JSON object per line, in order)")
    su.add_argument("--target", metavar="TARGET", help="an SM target such as sm_100a")
    su.add_argument("--ptx-isa", dest="ptx_isa", metavar="X.Y",
                    help="PTX ISA version (default: the newest in the spec)")
    su.add_argument("--toolkit", metavar="CUDA",
                    help="answer for this CUDA toolkit's ptxas (e.g. 13.0: the spec's "
                         "deviations recorded for it apply); default: the ISA's rule")
    json_arg(su, "the answer")

    sc = sub.add_parser("scan", help="the inline asm of CUDA/C++ sources against the spec: "
                                     "each statement's form and the blocks the wrappers "
                                     "replace (exit 0 all known, 1 some not)")
    sc.add_argument("paths", nargs="+", metavar="PATH", help="source files or folders")
    json_arg(sc, "the report")

    pr = sub.add_parser("probe", help="assemble the spec's forms, near misses and candidate "
                                      "qualifier values with a ptxas and propose spec edits "
                                      "(exit 0 agrees, 1 proposes changes, 2 error)")
    pr.add_argument("--ptxas", required=True, metavar="PATH", help="the ptxas binary")
    spec_arg(pr)
    json_arg(pr, "the proposals (schema ptxgen-probe/1)")
    pr.add_argument("--jobs", type=int, default=None, metavar="N",
                    help="parallel ptxas runs (default: the number of CPUs)")
    pr.add_argument("--doc", action="append", default=[], metavar="DOC",
                    help="PTX ISA document text (a folder or files of Markdown sections): "
                         "the opcodes its syntax blocks and examples write are candidates "
                         "too (repeatable)")
    pr.add_argument("--every-value", action="store_true",
                    help="also try every value the spec knows in every qualifier slot and "
                         "the tokens the assembler's strings pair with known values (finds "
                         "ptxas leniencies too)")
    pr.add_argument("--cover", action="store_true",
                    help="CI's check: each instruction's value forms (every qualifier "
                         "value, every distinct support) on every target and version, the "
                         "rest of its covering array (every pair of values) at the newest "
                         "version, instead of every form everywhere, and one candidate form "
                         "per new value (a fraction of the whole probe's time)")
    dc = sub.add_parser("doc", help="read the PTX ISA document: check the spec against it, "
                                    "import what it defines")
    dsub = dc.add_subparsers(dest="doc_command", required=True, metavar="ACTION")
    dk = dsub.add_parser("check", help="every disagreement of the spec with the document as a "
                                       "proposed edit (exit 0 agrees, 1 proposals, 2 error)")
    dk.add_argument("doc", nargs="+", metavar="DOC", help="document folders or Markdown files")
    spec_arg(dk)
    dk.add_argument("--ptxas", action="append", default=[], metavar="PATH",
                    help="assemble each form a proposal adds with this ptxas (repeatable)")
    json_arg(dk, "the proposals (schema ptxgen-doc-check/1)")
    di = dsub.add_parser("import", help="write a spec folder of what the document defines")
    di.add_argument("doc", nargs="+", metavar="DOC", help="document folders or Markdown files")
    di.add_argument("--out", required=True, metavar="DIR", help="the spec folder to write")
    di.add_argument("--section", action="append", default=[], metavar="S",
                    help="only these sections (a number such as 9.7.10.6, or a title word)")
    spec_arg(di)
    json_arg(di, "what was written")
    li = sub.add_parser("lint", help="check PTX files against the spec: forms, support on "
                                     "their target and version, descriptor values (exit 0 "
                                     "clean, 1 findings, 2 error)")
    li.add_argument("paths", nargs="+", metavar="PATH", help="PTX files and CUDA / C++ "
                    "sources, or folders of them")
    li.add_argument("--target", metavar="T", help="check for this target instead of each "
                    "module's .target")
    li.add_argument("--ptx-isa", dest="ptx_isa", metavar="X.Y",
                    help="check at this PTX ISA version instead of each module's .version")
    li.add_argument("--toolkit", metavar="CUDA", help="as this CUDA toolkit's ptxas (the "
                    "spec's recorded deviations apply)")
    li.add_argument("--suggest", action="store_true", help="also print, for every valid "
                    "statement, the ptxgen C++ wrapper call and Python builder call that "
                    "replace it")
    json_arg(li, "the findings and counts")
    return p


# -- descriptors ---------------------------------------------------------------

def _mean(word: str, choices: Any) -> str:
    from ptxgen.names import did_you_mean  # only on the error path

    return did_you_mean(word, [str(c) for c in choices])


def _descriptor_class(name: str, kind: str | None) -> Any:
    from ptxgen.isa import DESCRIPTORS

    if name not in DESCRIPTORS:
        raise UsageError(f"DESCRIPTOR: unknown descriptor {name!r}{_mean(name, DESCRIPTORS)}; "
                         "allowed: " + ", ".join(DESCRIPTORS))
    kinds = DESCRIPTORS[name]
    if None in kinds:
        if kind is not None:
            raise UsageError(f"--kind: {name} has no MMA kinds; leave --kind out")
        return kinds[None]
    if kind is None:
        raise UsageError(f"--kind: {name} needs --kind; allowed: "
                         + ", ".join(str(k) for k in kinds))
    if kind not in kinds:
        from ptxgen.isa import VARIANTS

        later = next((f" (.kind::{kind} exists only on {', '.join(targets)} from PTX ISA "
                      f"{since}: add --target {targets[0]})"
                      for _, since, targets, classes in VARIANTS.get(name, ())
                      if kind in classes), None)
        raise UsageError(f"--kind: unknown kind {kind!r} for {name}"
                         f"{later or _mean(kind, kinds)}; allowed: "
                         + ", ".join(str(k) for k in kinds))
    return kinds[kind]


def _class_for(args: Any) -> Any:
    """The class ``encode`` / ``decode`` use: the baseline one, or with --target the
    layout of that target as of --ptx-isa."""
    target = getattr(args, "target", None)
    if target is None:
        cls = _descriptor_class(args.descriptor, args.kind)
        _available(args, cls.DESCRIPTOR, cls.KIND)
        return cls
    from ptxgen.isa import DESCRIPTORS, UnavailableError, descriptor_class

    if args.descriptor not in DESCRIPTORS:
        _descriptor_class(args.descriptor, args.kind)  # raises the usual message
    if None in DESCRIPTORS[args.descriptor] and args.kind is not None:
        raise UsageError(f"--kind: {args.descriptor} has no MMA kinds; leave --kind out")
    from ptxgen.model.versions import ViewError, check_descriptor_at

    try:
        check_descriptor_at(_spec_dir(args), getattr(args, "ptx_isa", None), args.descriptor,
                            args.kind, target)
    except ViewError as exc:
        raise UsageError(str(exc)) from None
    if args.kind is None and None not in DESCRIPTORS[args.descriptor]:
        raise UsageError(f"--kind: {args.descriptor} needs --kind")
    try:
        return descriptor_class(args.descriptor, args.kind, target, getattr(args, "ptx_isa", None))
    except UnavailableError as exc:
        raise UsageError(f"--kind: {exc.value!r} does not exist for {exc.owner}; allowed: "
                         f"{exc.allowed}") from None
    except KeyError:
        _descriptor_class(args.descriptor, args.kind)  # raises the usual message
        raise


def _where(cls: Any) -> str:
    where = f"{cls.DESCRIPTOR} --kind {cls.KIND}" if cls.KIND else str(cls.DESCRIPTOR)
    return where + (f" ({cls.VARIANT} layout)" if getattr(cls, "VARIANT", None) else "")


def _parse_int(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        if text.isdecimal():  # Python's limit on decimal digits (4,300)
            raise ValueError(f"{len(text):,} decimal digits is too long") from None
        raise ValueError(f"{text!r} is not an integer") from None
    return value


def _parse_word(text: str, bits: int) -> int:
    t = text.lower()
    digits = t[2:] if t.startswith("0x") else t
    shown = text if len(text) <= 40 else text[:37] + "..."
    try:
        if not digits or digits.strip("0123456789abcdef"):
            raise ValueError
        too_long = len(digits.lstrip("0")) > bits // 4  # refused before it is parsed
        word = 1 << bits if too_long else int(digits, 16)
    except ValueError:
        raise UsageError(f"HEX: {shown!r} is not a hexadecimal number; allowed: "
                         f"0x followed by up to {bits // 4} hex digits") from None
    if word >= 1 << bits:
        raise UsageError(f"HEX: {shown} does not fit; allowed: an unsigned {bits}-bit word "
                         f"(up to {bits // 4} hex digits)")
    return word


def _available(args: Any, descriptor: str, kind: str | None) -> None:
    """With --ptx-isa: the descriptor (kind) must exist at that version (read from the
    spec; the default path reads no spec at all)."""
    version = getattr(args, "ptx_isa", None)
    if version is None:
        return
    from ptxgen.model.versions import ViewError, check_descriptor_at

    try:
        check_descriptor_at(_spec_dir(args), version, descriptor, kind)
    except ViewError as exc:
        raise UsageError(str(exc)) from None


def _use_spec_classes(args: Any) -> None:
    """``--spec DIR`` given: encode / decode / zero-column-mask use the descriptor classes of
    that spec folder (rendered to a temporary folder and loaded as ``ptxgen.isa``), not
    the installed ones. With ``--ptx-isa`` the spec folder only says which versions have
    the descriptor (as before)."""
    if getattr(args, "spec", None) is None or getattr(args, "ptx_isa", None) is not None:
        return
    import atexit
    import importlib.util
    import shutil
    import tempfile
    from pathlib import Path

    from ptxgen import pipeline
    from ptxgen.errors import SpecError

    spec = _spec_dir(args)
    if not spec.is_dir():
        raise UsageError(f"--spec: {spec} is not a folder")
    try:
        files = pipeline.descriptor_package(spec)
    except SpecError as exc:
        raise UsageError(f"--spec: {spec}: {exc.diagnostics[0]}") from None
    root = Path(tempfile.mkdtemp(prefix="ptxgen-isa-"))
    atexit.register(shutil.rmtree, root, True)
    for rel, data in files.items():
        path = root / rel.removeprefix("python/")
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    for name in [m for m in sys.modules if m == "ptxgen.isa" or m.startswith("ptxgen.isa.")]:
        del sys.modules[name]
    found = importlib.util.spec_from_file_location(
        "ptxgen.isa", root / "__init__.py", submodule_search_locations=[str(root)])
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    sys.modules["ptxgen.isa"] = module
    found.loader.exec_module(module)


def _encode(args: Any) -> int:
    _use_spec_classes(args)
    cls = _class_for(args)
    specs = {f.name: f for f in cls.FIELDS}
    values: dict[str, int] = {}
    for item in args.fields:
        name, sep, text = item.partition("=")
        if not sep:
            raise UsageError(f"{item!r}: expected FIELD=VALUE")
        if name not in specs:
            later = _later_field(cls, name)
            if later:
                raise UsageError(f"{_where(cls)}: {name}: {later}")
            raise UsageError(f"{_where(cls)}: unknown field {name!r}{_mean(name, specs)}; "
                             "fields: " + ", ".join(specs))
        if name in values:
            raise UsageError(f"{_where(cls)}: {name}: given twice")
        spec = specs[name]
        if spec.names and text in spec.names:
            values[name] = spec.names[text]
            continue
        try:
            values[name] = _parse_int(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise UsageError(f"{_where(cls)}: {name}: {shown!r} is not allowed"
                             f"{_mean(text, spec.names or ())}; allowed: {spec.domain}"
                             ) from None
    given = set(values)
    for name in specs:
        values.setdefault(name, 0)
    desc = _construct(cls, values, given)
    if getattr(args, "target", None) is not None:
        desc = _target_rules(args, cls, desc, values, given)
    if getattr(args, "json", False):
        import json

        from ptxgen.isa._runtime import spelled_fields

        print(json.dumps({"descriptor": cls.DESCRIPTOR, "kind": cls.KIND, "hex": desc.hex(),
                          "word": desc.encode(), "fields": spelled_fields(desc)}))
    else:
        print(desc.hex())
    return EXIT_OK


def _word_rules_iset(args: Any) -> Any:
    """The instruction model whose descriptor rules ``encode`` / ``decode`` apply with
    --target: the generated one (the project's spec), or that of --spec."""
    if getattr(args, "spec", None) is None:
        from ptxgen.isa import ptx

        return ptx.instruction_set()
    from ptxgen.pipeline import load_model

    return load_model(_spec_dir(args)).instructions


def _target_rules(args: Any, cls: Any, desc: Any, values: dict[str, int] | None = None,
                  given: set[str] | None = None) -> Any:
    """The word checked against the descriptor rules that hold on --target for every word
    of its kind (ptxgen.model.instructions.word_rules). ``encode`` (``values`` given)
    fills in a field the user left out that a broken rule fixes to one value (sparsity
    version v1 of a sparse .kind::mxf4nvf4 word on sm_107a); anything else is an error
    naming the field and the target."""
    from ptxgen.isa._runtime import spelled_fields
    from ptxgen.model.instructions import word_problems

    iset = _word_rules_iset(args)
    if iset is None:
        return desc
    specs = {f.name: f for f in cls.FIELDS}
    target = args.target
    for _ in range(len(specs) + 1):
        fields = spelled_fields(desc)
        found = word_problems(iset, cls.DESCRIPTOR, cls.KIND, fields, target)
        if not found:
            return desc
        rule, _problem = found[0]
        bad = [(n, vals) for n, vals in rule.require if str(fields.get(n)) not in vals]
        fill = [(n, vals[0]) for n, vals in bad
                if values is not None and given is not None and n not in given
                and len(vals) == 1]
        if not fill or len(fill) < len(bad):
            name, allowed = bad[0] if bad else (rule.shape_fields[0], ())
            left_out = "" if given is None or name in given else " (left out, so 0)"
            raise UsageError(f"{_where(cls)}: {name}: {fields.get(name)}{left_out} is not "
                             f"allowed on {target}: {rule.message} (allowed: "
                             f"{', '.join(allowed) or 'see the rule'}) [{rule.id}]")
        assert values is not None and given is not None
        for name, value in fill:
            spec = specs[name]
            values[name] = spec.names[value] if spec.names and value in spec.names \
                else int(value)
            given.add(name)
        desc = _construct(cls, values, given)
    return desc


def _later_field(cls: Any, name: str) -> str | None:
    """Where a field the class lacks exists (a newer layout of the descriptor), or None."""
    from ptxgen.isa import VARIANTS

    for variant, since, targets, classes in VARIANTS.get(cls.DESCRIPTOR, ()):
        other: Any = classes.get(cls.KIND)
        if other is not None and other is not cls and \
                any(f.name == name for f in other.FIELDS):
            return (f"exists only on {', '.join(targets)} from PTX ISA {since} (the {variant} "
                    f"layout): add --target {targets[0]}")
    return None


def _construct(cls: Any, values: dict[str, int], given: set[str]) -> Any:
    from ptxgen.isa import DescriptorError

    try:
        return cls(**values)
    except DescriptorError as exc:
        left_out = "" if exc.field in given else " (left out, so 0)"
        shown = exc.shown
        raise UsageError(f"{_where(cls)}: {exc.field}: {shown}{left_out} is not allowed; "
                         f"allowed: {exc.allowed}") from None


def _decode_word(cls: Any, word: int) -> Any:
    from ptxgen.isa import DescriptorError

    try:
        return cls.decode(word)
    except DescriptorError as exc:
        hint = ""
        if getattr(cls, "VARIANT", None) is None:
            from ptxgen.isa import VARIANTS

            for variant, since, targets, classes in VARIANTS.get(cls.DESCRIPTOR, ()):
                other: Any = classes.get(cls.KIND)
                try:
                    other.decode(word) if other is not None else None
                except DescriptorError:
                    continue
                if other is not None:
                    hint = (f" (the word is valid in the {variant} layout of "
                            f"{', '.join(targets)} from PTX ISA {since}: add --target "
                            f"{targets[0]})")
                    break
        raise UsageError(f"{_where(cls)}: {exc.field}: {exc.value} is not allowed; "
                         f"allowed: {exc.allowed}{hint}") from None


def _decode(args: Any) -> int:
    _use_spec_classes(args)
    cls = _class_for(args)
    desc = _decode_word(cls, _parse_word(args.word, cls.WORD_BITS))
    if getattr(args, "target", None) is not None:
        _target_rules(args, cls, desc)
    from ptxgen.isa._runtime import spelled_fields

    values = spelled_fields(desc)
    if args.json:
        import json

        print(json.dumps(values))
    else:
        for name, value in values.items():
            print(f"{name}={value}")
    return EXIT_OK


def _zero_column_mask(args: Any) -> int:
    _use_spec_classes(args)
    from ptxgen.isa import DESCRIPTORS, DescriptorError

    cls: Any = DESCRIPTORS["zero_column_mask_desc"][None]
    _available(args, cls.DESCRIPTOR, None)
    desc = _decode_word(cls, _parse_word(args.word, cls.WORD_BITS))
    try:
        masks = desc.masks(args.m, args.n)
    except DescriptorError as exc:
        raise UsageError(f"zero-column-mask: {exc.field}: {exc.shown} is not allowed; "
                         f"allowed: {exc.allowed}") from None
    if args.json:
        import json

        print(json.dumps({"masks": list(masks)}))
    else:
        size = args.n // len(masks)
        for i, mask in enumerate(masks):
            print(f"mask{i} columns {i * size}-{(i + 1) * size - 1}: 0b{mask:0{size}b}")
    return EXIT_OK


# -- the project, --spec and --out ----------------------------------------------------

def find_project(start: Any) -> Any:
    """The nearest folder, from ``start`` upwards, that has a ``spec/`` folder (as git
    finds ``.git``), or None."""
    for folder in (start, *start.parents):
        if (folder / "spec").is_dir():
            return folder
    return None


def _path_arg(option: str, text: str) -> Any:
    from pathlib import Path

    if not text.strip():
        raise UsageError(f"{option} is empty (an unset variable?); name a folder")
    return Path(text)


def _spec_dir(args: Any) -> Any:
    """--spec as given, or the project's spec/ (UsageError when there is no project)."""
    from pathlib import Path

    if getattr(args, "spec", None) is not None:
        return _path_arg("--spec", args.spec)
    cwd = Path.cwd()
    root = find_project(cwd)
    if root is None:
        from ptxgen import spec_dir

        installed = Path(spec_dir())
        # never into the installed package: generate and check need --out there
        writes = args.command in ("generate", "check") and getattr(args, "out", None) is None
        if writes or not installed.is_dir():
            raise UsageError(f"no ptxgen project here: neither {cwd} nor a folder above it "
                             "has a spec/ folder; run ptxgen inside a project or give "
                             "--spec DIR" + (" (or --out DIR, with the installed spec)"
                                             if installed.is_dir() else ""))
        print(f"ptxgen: no project here (no spec/ folder in {cwd} or above); using the "
              f"installed spec {installed}", file=sys.stderr)
        return installed
    import os

    return Path(os.path.relpath(root / "spec", cwd))


def _out_dir(args: Any, spec: Any) -> Any:
    """--out as given, or generated/ (generated-X.Y/) next to the spec folder."""
    if getattr(args, "out", None) is not None:
        return _path_arg("--out", args.out)
    import os
    from pathlib import Path

    name = "generated" if args.ptx_isa is None else f"generated-{args.ptx_isa}"
    return Path(os.path.relpath(os.path.join(os.path.abspath(spec), os.pardir, name)))


# -- pipeline commands --------------------------------------------------------------

def _error_json(message: str, code: int, diagnostics: Any = ()) -> str:
    import json

    return json.dumps({"ok": False, "exit_code": code,
                       "error": {"message": message,
                                 "diagnostics": [d.as_dict() for d in diagnostics]}}, indent=2)


def _spec_failure(exc: Any, as_json: bool, writes: bool = True) -> int:
    """A spec's problems, one line each, and a summary that says nothing was written,
    unless ``writes`` is off (diff and probe never write: the phrase would mislead)."""
    summary = f"{len(exc.diagnostics)} error(s)" + ("; nothing written" if writes else "")
    if as_json:
        print(_error_json(summary, EXIT_INVALID, exc.diagnostics))
    for d in exc.diagnostics:
        print(d, file=sys.stderr)
    print(f"ptxgen: {summary}", file=sys.stderr)
    return EXIT_INVALID


def _pipeline(args: Any) -> int:
    import json
    import shlex

    from ptxgen import pipeline
    from ptxgen.errors import SpecError, printable
    from ptxgen.model.selection import SelectionError
    from ptxgen.model.versions import ViewError
    from ptxgen.write import OutputRefused

    view = args.ptx_isa
    spec = _spec_dir(args)
    shown = f" (PTX ISA {view} view)" if view else ""
    try:
        if args.command == "validate":
            docs = pipeline.load_documents(spec)
            names = sorted(d.rel for d in docs)
            # the model only for a view (validation has built and checked the whole spec's)
            model = pipeline.model_of(docs, view) if view else None
            if args.json:
                print(json.dumps({"ok": True, "files": names}
                                 | ({"ptx_isa": view, "view_files": list(model.spec_files)}
                                    if model else {}), indent=2))
            else:
                print(f"{printable(spec.as_posix())}: {len(names)} spec files valid" +
                      (f"; the PTX ISA {view} view has {_summary(model)}" if model else ""))
            return EXIT_OK
        if args.select is not None and args.out is None:
            raise UsageError(f"--select: give --out DIR too: a selection's headers are for "
                             f"one kernel's build, and the project's "
                             f"{printable(_out_dir(args, spec).as_posix())}/ holds the whole spec; "
                             + ("nothing written" if args.command == "generate" else
                                "name the folder generated with it"))
        out = _out_dir(args, spec)
        if args.command == "check" and args.select is None:
            from ptxgen.manifest import recorded_selection

            args.select = recorded_selection(out)  # the selection the folder was made with
        if args.command == "generate":
            try:
                files = pipeline.generate(spec, out, view, args.select)
            except OutputRefused as exc:
                raise UsageError(f"--out {exc}; nothing written") from None
            except OSError as exc:
                if isinstance(exc, LookupError):  # jinja2.TemplateNotFound: not --out's
                    from ptxgen.emit.templates import TEMPLATES_DIR

                    raise UsageError(f"template {exc} is not in {TEMPLATES_DIR}: this "
                                     "installation of ptxgen is incomplete; nothing "
                                     "written") from None
                raise UsageError(f"--out {printable(out.as_posix())}: cannot write: "
                                 f"{exc.strerror or exc}"
                                 f"{f' ({exc.filename})' if exc.filename else ''}; nothing "
                                 "written") from None
            if args.json:
                print(json.dumps({"ok": True, "out": out.as_posix(), "files": list(files)}
                                 | ({"ptx_isa": view} if view else {}), indent=2))
            else:
                print(f"wrote {len(files)} files to {printable(out.as_posix())}{shown}")
            return EXIT_OK
        diffs = pipeline.check(spec, out, full=args.full, ptx_isa=view, select=args.select)
    except SpecError as exc:
        return _spec_failure(exc, args.json)
    except (ViewError, SelectionError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({"ok": not diffs, "differences": [
            {"status": s, "path": (out / p).as_posix()} for s, p in diffs]}, indent=2))
    else:
        for status, path in diffs:
            print(f"{printable((out / path).as_posix())}: {status}")
        if diffs:
            again = f" --ptx-isa {view}" if view else ""
            if args.select is not None:
                again += f" --select {shlex.quote(args.select)}"
            if again or args.out is not None:
                again += f" --out {printable(shlex.quote(out.as_posix()))}"
            print(f"ptxgen: {printable(out.as_posix())} is out of date{shown} "
                  f"({len(diffs)} file(s)); run "
                  f"'ptxgen generate{again}'", file=sys.stderr)
    return EXIT_DIFF if diffs else EXIT_OK


def _summary(spec: Any) -> str:
    iset = spec.instructions
    forms = sum(len(i.forms) for i in iset.instructions) if iset else 0
    return (f"{len(spec.descriptors)} descriptors, {len(spec.layouts)} descriptor classes, "
            f"{len(iset.instructions) if iset else 0} instructions with {forms} forms, "
            f"{len(iset.targets.targets) if iset else 0} targets")


def _diff(args: Any) -> int:
    from ptxgen.diff import DiffError, diff, render
    from ptxgen.errors import SpecError

    try:
        spec = _spec_dir(args)
    except UsageError:  # no project: OLD and NEW may still be folders
        from pathlib import Path

        spec = Path("spec")
    try:
        report = diff(args.old, args.new, spec=spec, generated=args.generated,
                      ptx_isa=args.ptx_isa)
    except DiffError as exc:
        raise UsageError(str(exc)) from None
    except SpecError as exc:
        return _spec_failure(exc, args.format == "json", writes=False)
    sys.stdout.write(render.render(report, args.format))
    return report.exit_code


def _support(args: Any) -> int:
    from ptxgen.support import SupportError, run, run_batch

    try:
        if args.opcode == "-":
            code, text = run_batch(sys.stdin, args.target, args.ptx_isa, args.json,
                                   getattr(args, "toolkit", None))
            if text:
                print(text)
            return code
        code, text = run(args.opcode, args.target, args.ptx_isa, args.json,
                         getattr(args, "toolkit", None))
    except SupportError as exc:
        raise UsageError(str(exc)) from None
    print(text)
    return code


def _lint(args: Any) -> int:
    from ptxgen.lint import LintError, lint, render

    try:
        report = lint(args.paths, args.target, args.ptx_isa, args.toolkit, args.suggest)
    except LintError as exc:
        raise UsageError(str(exc)) from None
    print(render(report, args.json))
    return report.exit_code


def _scan(args: Any) -> int:
    import json
    import os

    from ptxgen.scan.report import report, summary_text
    from ptxgen.source import read_paths

    for p in args.paths:
        if not os.path.exists(p):
            raise UsageError(f"{p}: no such file or folder")
    try:
        from ptxgen.isa import ptx
    except ImportError as exc:  # pragma: no cover - only before the first generate
        raise UsageError(f"the generated module ptxgen.isa.ptx is missing ({exc})") from None
    result = report(ptx.instruction_set(), read_paths(args.paths))
    s = result["summary"]
    print(json.dumps(result, indent=1) if args.json else summary_text(result))
    return 0 if s["statements_known"] == s["statements"] else 1


def _probe(args: Any) -> int:
    import json
    import os

    from ptxgen.errors import SpecError
    from ptxgen.probe import Assembler, AssemblerError, probe

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs: {args.jobs}: allowed: 1 or more")
    if not os.path.isfile(args.ptxas) or not os.access(args.ptxas, os.X_OK):
        raise UsageError(f"--ptxas: {args.ptxas} is not an executable file")
    spec = _spec_dir(args)
    if not spec.is_dir():
        raise UsageError(f"--spec: {spec} is not a folder")
    from pathlib import Path

    docs = [Path(d) for d in args.doc]
    for d in docs:
        if not d.exists():
            raise UsageError(f"--doc: {d} does not exist")
    try:
        asm = Assembler.open(args.ptxas)
        result = probe(spec, asm, jobs=args.jobs, doc=docs, every_value=args.every_value,
                       cover=args.cover)
    except AssemblerError as exc:
        raise UsageError(str(exc)) from None
    except SpecError as exc:
        return _spec_failure(exc, args.json, writes=False)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        sys.stdout.write(result.text())
    return result.exit_code


def _doc(args: Any) -> int:
    import os
    from pathlib import Path

    from ptxgen.doc.command import DocError, run_check, run_import
    from ptxgen.errors import SpecError

    spec = _spec_dir(args)
    if not spec.is_dir():
        raise UsageError(f"--spec: {spec} is not a folder")
    try:
        if args.doc_command == "import":
            return run_import(args.doc, spec, Path(args.out), args.section, args.json)
        assemblers = []
        make_kernel = None
        if args.ptxas:
            from ptxgen.probe import Assembler, AssemblerError
            from ptxgen.probe.assembler import Kernel

            for path in args.ptxas:
                if not os.path.isfile(path) or not os.access(path, os.X_OK):
                    raise UsageError(f"--ptxas: {path} is not an executable file")
                try:
                    assemblers.append(Assembler.open(path))
                except AssemblerError as exc:
                    raise UsageError(str(exc)) from None
            make_kernel = Kernel
        return run_check(args.doc, spec, args.json, assemblers, make_kernel)
    except DocError as exc:
        raise UsageError(str(exc)) from None
    except SpecError as exc:
        return _spec_failure(exc, args.json)


_COMMANDS = {"encode": _encode, "decode": _decode, "zero-column-mask": _zero_column_mask,
             "generate": _pipeline, "check": _pipeline, "validate": _pipeline, "diff": _diff,
             "support": _support, "probe": _probe, "doc": _doc, "lint": _lint,
             "scan": _scan}


class _Args:
    """The parsed command line of the fast path (same attributes as argparse's)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def _fast_parse(argv: Sequence[str]) -> Any | None:
    """Parse encode / decode / zero-column-mask without importing argparse.

    These commands are run from scripts in loops, so their start-up time
    matters. Anything this parser does not fully understand (help, a
    malformed option, ...) returns None and goes through argparse, which
    then produces the error message.
    """
    if not argv or argv[0] not in ("encode", "decode", "zero-column-mask"):
        return None
    command, rest = argv[0], list(argv[1:])
    opts: dict[str, str] = {}
    flags: set[str] = set()
    positional: list[str] = []
    takes_value = {"encode": {"--kind", "--target"}, "decode": {"--kind", "--target"},
                   "zero-column-mask": {"--m", "--n"}}[command]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--json" and "--json" not in flags:
            flags.add(arg)
        elif arg in takes_value and arg not in opts and i + 1 < len(rest):
            opts[arg] = rest[i + 1]
            i += 1
        elif arg.startswith("-") and not (arg[1:2].isdigit()):
            return None
        else:
            positional.append(arg)
        i += 1
    json_out = "--json" in flags
    if command == "encode":
        if not positional:
            return None
        return _Args(command=command, descriptor=positional[0], kind=opts.get("--kind"),
                     target=opts.get("--target"), fields=positional[1:], json=json_out)
    if command == "decode":
        if len(positional) != 2:
            return None
        return _Args(command=command, descriptor=positional[0], kind=opts.get("--kind"),
                     target=opts.get("--target"), word=positional[1], json=json_out)
    if len(positional) != 1 or set(opts) != {"--m", "--n"}:
        return None
    try:
        m, n = int(opts["--m"]), int(opts["--n"])
    except ValueError:
        return None
    if m not in (128, 64, 32):
        return None
    return _Args(command=command, word=positional[0], m=m, n=n, json=json_out)


def _check_options(parser: Any, argv: Sequence[str]) -> None:
    """Refuse, naming it, an option the command does not have (with the closest one) or
    one given twice (argparse would take the last silently, or blame a missing argument);
    options are spelled in full."""
    subparsers: dict[str, Any] = parser._subparsers._group_actions[0].choices
    if not argv or argv[0] not in subparsers:
        return
    sub = subparsers[argv[0]]
    start = 1
    nested = sub._subparsers._group_actions[0].choices if sub._subparsers else None
    if nested and len(argv) > 1 and argv[1] in nested:  # a command's action: doc check
        sub, start = nested[argv[1]], 2
    actions: dict[str, Any] = sub._option_string_actions
    seen: set[str] = set()
    rest = iter(argv[start:])
    for arg in rest:
        if arg == "--":
            return
        if not arg.startswith("-") or arg == "-" or arg[1:2].isdigit():
            continue
        name, eq, _ = arg.partition("=")
        action = actions.get(name)
        if action is None:
            from ptxgen.errors import printable

            options = sorted(o for o in actions if o.startswith("--"))
            raise UsageError(f"{argv[0]}: unknown option {printable(name, 40)!r}"
                             f"{_mean(name[:40], options)}; options: {', '.join(options)}")
        repeatable = type(action).__name__ == "_AppendAction"  # --ptxas A --ptxas B
        if action.dest in seen and action.dest not in ("help",) and not repeatable:
            raise UsageError(f"{argv[0]}: {name} given twice; give it once")
        seen.add(action.dest)
        if action.nargs is None and not eq:  # its value is the next argument
            next(rest, None)


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON (--json, or diff's --format json)."""
    for i, arg in enumerate(argv):
        if arg == "--json" or arg == "--format=json" or (
                arg == "--format" and i + 1 < len(argv) and argv[i + 1] == "json"):
            return True
    return False


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated(signum)


def _fail(message: str, code: int, as_json: bool) -> int:
    line = " ".join(message.split())
    if as_json:
        print(_error_json(line, code))
    print(f"ptxgen: {'error: ' if code == EXIT_INVALID else ''}{line}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """The command line. Run as a program (``argv`` None), a Ctrl-C that comes once the
    command is done - while the interpreter shuts down, when Python has put back the
    default action, which would kill the process - is ignored: the exit status stays the
    command's."""
    if argv is None:
        _fewer_collections()
    try:
        code = _main(argv)
    finally:
        if argv is None:
            import signal

            signal.signal(signal.SIGINT, signal.SIG_IGN)
    if argv is None:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the command-line process with ``code`` at once, its output flushed, without
    the interpreter's teardown: freeing the model, the loaded spec and the rendered files
    one object at a time (~10^6 of them) took ~15% of a ``generate``. Everything the
    command writes is on disk when it returns (the output folder is swapped into place,
    caches are renamed into place), and ptxgen registers no exit handlers. Where another
    thread still runs, a profiler or tracer is on (``python -m cProfile``, coverage: they
    report at exit), or flushing stdout/stderr fails (a closed pipe), the normal exit
    runs instead, with its usual report."""
    import os
    import threading

    if (threading.active_count() != 1 or sys.getprofile() is not None
            or sys.gettrace() is not None):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _fewer_collections() -> None:
    """Run the cyclic garbage collector less often in the command-line process: the
    loaded spec and the model are ~10^6 long-lived objects that every collection of the
    older generations walks again, and the model makes ~10^5 short-lived containers
    (forms, operand uses, views) that trigger them; with Python's default (a collection
    per 700 new containers) ``generate`` spent ~10% of its time and ``diff --ptx-isa``
    ~15% collecting, finding almost nothing (the model has few reference cycles).
    Collections still run, every 50,000 new containers."""
    import gc

    gc.set_threshold(50_000, 20, 20)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    try:
        fast = _fast_parse(argv)
        if fast is not None:
            return _COMMANDS[fast.command](fast)
        import signal

        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _terminate)
        parser = _build_parser()
        _check_options(parser, argv)
        args, extra = parser.parse_known_args(argv)
        if args.command == "encode":
            # FIELD=VALUE pairs may follow --kind; argparse hands them back as extras.
            args.fields += [x for x in extra if not x.startswith("-")]
            extra = [x for x in extra if x.startswith("-")]
        if extra:
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
        return _COMMANDS[args.command](args)
    except UsageError as exc:
        return _fail(str(exc), EXIT_INVALID, as_json)
    except KeyboardInterrupt:
        return _fail("interrupted; nothing was left half-written", EXIT_INTERRUPTED, as_json)
    except _Terminated:
        return _fail("terminated; nothing was left half-written", EXIT_TERMINATED, as_json)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        return _fail(f"{exc.strerror or exc}{where}", EXIT_INVALID, as_json)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
