"""Issue 26: st.async, red.async, st.bulk (spec/instructions/st_red_async.yaml), createpolicy,
applypriority, discard (cache_policy.yaml), movmatrix (movmatrix.yaml) and getctarank
(getctarank.yaml).

* The builders write what the spec holds and refuse what its rules refuse.
* ptxas 13.0 and 13.5 on every place where they part from the document or from each other
  (the notes red-async-wider, red-async-completion, st-async-vec, st-async-weak-global,
  async-mmio, st-bulk-size, createpolicy-fabric); the whole matrix of these forms is
  generated/tests/test_ptxas_conformance.py's (benchmarks/dev_matrix.py FILE.yaml).
* ``ptxgen scan`` knows the statements CCCL's cuda::ptx writes for them (a fixture written
  here) and names the wrapper call.
* nvcc 13.0 and 13.5, for sm_90a and sm_100a: a kernel calling the wrappers compiles to the
  same PTX instructions as one holding the hand-written asm (one translation unit each).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import toolkits
from ptxas import same_ptx, wrappers

from conftest import run_main
from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError

DECLS = (".reg .b8 c<2>;\n.reg .b16 h<2>;\n.reg .b32 r<4>;\n.reg .b64 rd<4>;\n"
         ".reg .f32 f<2>;\n")


def test_builders_follow_the_rules() -> None:
    assert ptx.st_async(space="shared::cluster", completion=True, vec="v4", type="f32",
                        a="%r1", v=["%f1", "%f2", "%f3", "%f4"], mbar="%r2") == \
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%r1], " \
        "{%f1, %f2, %f3, %f4}, [%r2];"
    assert ptx.st_async(sem="release", scope="sys", space="global", type="s8", a="%rd1",
                        b="%rc1") == "st.async.release.sys.global.s8 [%rd1], %rc1;"
    assert ptx.red_async(sem="relaxed", scope="cluster", completion=True, op="dec",
                         type="u32", a="%rd1", b="%r1", mbar="%rd2") == \
        "red.async.relaxed.cluster.mbarrier::complete_tx::bytes.dec.u32 [%rd1], %r1, [%rd2];"
    assert ptx.st_bulk(space="shared::cta", a="%r1", size="%rd1", initval=0) == \
        "st.bulk.shared::cta [%r1], %rd1, 0;"
    assert ptx.createpolicy_range(primary="L2::evict_last", secondary="L2::evict_first",
                                  type="b64", cache_policy="%rd0", a="%rd1",
                                  primary_size="%r0", total_size="%r1") == \
        "createpolicy.range.L2::evict_last.L2::evict_first.b64 %rd0, [%rd1], %r0, %r1;"
    assert ptx.getctarank(type="u64", d="%r1", a="%rd1") == "getctarank.u64 %r1, %rd1;"
    assert ptx.red_async(mmio=True, sem="release", scope="sys", op="add", type="u32",
                         a="%rd1", b="%r1") == "red.async.mmio.release.sys.add.u32 [%rd1], %r1;"
    for call, match in [
            (lambda: ptx.st_async(sem="release", scope="gpu", vec="v2", type="u32", a="%rd1",
                                  v=["%r1", "%r2"]), "one value to .global"),
            (lambda: ptx.st_async(completion=True, type="b16", a="%rd1", b="%h1",
                                  mbar="%rd2"), r"\.b32, \.b64, \.b128"),
            (lambda: ptx.red_async(sem="relaxed", scope="cluster", op="and", type="u32",
                                   completion=True, a="%r1", b="%r2", mbar="%r3"),
             r"\.and, \.or and \.xor take \.b32"),
            (lambda: ptx.red_async(sem="relaxed", scope="cluster", op="add", type="u32",
                                   a="%r1", b="%r2"), "with .mbarrier::complete_tx::bytes"),
            (lambda: ptx.st_async(mmio=True, sem="release", scope="gpu", type="u32",
                                  a="%rd1", b="%r1"), r"\.mmio takes the scope \.sys"),
            (lambda: ptx.st_bulk(a="%rd1", size=128, initval=1), "initval")]:
        with pytest.raises(PtxFormError, match=match):
            call()


# (body, target, PTX ISA version, accepted by ptxas 13.0, accepted by ptxas 13.5)
CASES = [
    # the spec's forms, each at its first version
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [r0], r1, [r2];", "sm_90",
     "8.1", True, True),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [r0], r1, [r2];", "sm_90",
     "8.0", False, False),
    ("st.async.release.gpu.global.b8 [rd0], c1;", "sm_100", "8.7", True, True),
    ("st.async.release.gpu.global.b8 [rd0], r1;", "sm_100", "8.7", False, False),  # a .b8 reg
    ("red.async.release.sys.global.add.s64 [rd0], rd1;", "sm_90", "8.7", False, False),
    ("st.bulk.weak.shared::cta [r0], rd1, 0;", "sm_100", "8.6", True, True),
    ("createpolicy.fractional.L2::evict_last.b64 rd0;", "sm_80", "7.4", True, True),
    ("movmatrix.sync.aligned.m8n8.trans.b16 r0, r1;", "sm_75", "7.8", True, True),
    ("getctarank.u32 r0, r1;", "sm_90", "7.8", True, True),
    # red-async-wider: the document's global form is .release .add; both take more
    ("red.async.relaxed.gpu.global.add.u32 [rd0], r1;", "sm_100", "8.7", True, True),
    ("red.async.release.sys.global.inc.u32 [rd0], r1;", "sm_100", "8.7", True, True),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.s64 "
     "[r0], rd1, [r2];", "sm_90", "8.1", True, True),
    # red-async-completion: the document's default mechanism is refused
    ("red.async.relaxed.cluster.shared::cluster.add.u32 [r0], r1;", "sm_90", "8.1",
     False, False),
    # st-async-vec: no vector in the release form
    ("st.async.release.sys.global.v2.u32 [rd0], {r0, r1};", "sm_100", "8.7", False, False),
    # st-async-weak-global: a weak st.async without mbarrier, a scope without .release
    ("st.async.u32 [rd0], r1;", "sm_90", "8.1", True, True),
    ("st.async.gpu.u32 [rd0], r1;", "sm_100", "8.7", True, True),
    # the qualifiers' ptxas_leniency (ptxgen probe): a scope and .shared::cta on the mbarrier
    # form, getctarank.s32
    ("st.async.cluster.mbarrier::complete_tx::bytes.b32 [rd0], r1, [rd1];", "sm_90", "8.1",
     True, True),
    ("st.async.shared::cta.mbarrier::complete_tx::bytes.b32 [r0], r1, [r2];", "sm_90", "8.1",
     True, True),
    ("getctarank.s32 r0, r1;", "sm_90", "7.8", True, True),
    # async-mmio: .mmio with .gpu, 13.0 only (the document: .mmio requires .sys; rule
    # mmio-sys, ptxas_accepts_toolkits [13.0]), and .mmio without .release
    ("st.async.mmio.release.gpu.global.u32 [rd0], r1;", "sm_100", "8.7", True, False),
    ("red.async.mmio.release.gpu.global.add.u32 [rd0], r1;", "sm_100", "8.7", True, False),
    ("red.async.mmio.release.sys.global.add.u32 [rd0], r1;", "sm_100", "8.7", True, True),
    ("red.async.mmio.release.sys.global.add.u32 [rd0], r1;", "sm_100", "8.6", False, False),
    ("st.async.mmio.u32 [rd0], r1;", "sm_100", "8.7", False, False),
    # st-bulk-size: the 32-bit size (PTX ISA 9.0), which ptxas 13.0 cannot assemble
    ("st.bulk.weak.shared::cta [r0], r1, 0;", "sm_100", "9.0", False, True),
]


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_where_the_document_and_the_assemblers_part(release: str,
                                                           tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    for body, target, version, ok13_0, ok13_5 in CASES:
        ok = ok13_0 if release == "13.0" else ok13_5
        rc, out = toolkits.assemble(ptxas, tmp_path, body, target, version, decls=DECLS)
        assert (rc == 0) == ok, f"{release} {body} {target}@{version}: {out}"


def test_ptxas_on_the_fabric_policy(tmp_path: Path) -> None:
    """createpolicy.range.fabric (note createpolicy-fabric): [aLe, aOff] is a 32-bit and a
    64-bit register (ptxas 13.5; 13.0 reads PTX ISA 9.0 at most)."""
    ptxas = toolkits.require("ptxas", "13.5")
    for addr, ok in [("[r1, rd2]", True), ("[rd1, rd2]", False)]:
        body = f"createpolicy.range.fabric.L2::evict_last.b64 rd0, {addr}, r0, r1;"
        rc, out = toolkits.assemble(ptxas, tmp_path, body, "sm_100", "9.4", decls=DECLS)
        assert (rc == 0) == ok, f"{body}: {out}"


SCANNED = '''
__device__ void f(unsigned a, unsigned b, unsigned m, unsigned long long x) {
  asm("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64"
      " [%0], %1, [%2];" :: "r"(a), "l"(x), "r"(m) : "memory");
  asm("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.u32"
      " [%0], %1, [%2];" :: "r"(a), "r"(b), "r"(m) : "memory");
  unsigned r;
  asm("getctarank.shared::cluster.u32 %0, %1;" : "=r"(r) : "r"(a));
  asm("st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];"
      :: "r"(a), "r"(b), "r"(b), "r"(m) : "memory");
  asm("st.bulk.weak.shared::cta [%0], %1, 0;" :: "r"(a), "l"(x) : "memory");
}
'''


def test_scan_knows_the_statements(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(SCANNED)
    res = run_main("scan", str(src), "--json")
    assert res.code == 0, res.err
    stmts = json.loads(res.out)["statements"]
    assert [s["known"] for s in stmts] == [True] * 5
    calls = " ".join(str(s["cpp"]) for s in stmts)
    for name in ("red_async<", "getctarank<", "st_async_v<", "st_bulk<"):
        assert name in calls, calls


_PARAMS = ("std::uint32_t sa, std::uint32_t sb, std::uint32_t v, std::uint64_t w, float x, "
           "void* g, std::uint64_t* out")
_SM90_WRAPPER = """namespace px = ptxgen::ptx;
    px::st_async<px::st_async_type::u32, px::st_async_sem::none,
                 px::st_async_space::shared_cluster>(sa, v, sb);
    const float q[4] = {x, x, x, x};
    px::st_async_v<px::st_async_type::f32, px::st_async_sem::weak,
                   px::st_async_space::shared_cluster, px::st_async_vec::v4>(sa, q, sb);
    px::red_async<px::red_async_op::add, px::red_async_type::u64,
                  px::red_async_space::shared_cluster>(sa, w, sb);
    px::red_async<px::red_async_op::op_xor, px::red_async_type::b32>(g, v, out);
    out[0] = px::getctarank<px::getctarank_type::u32,
                            px::getctarank_space::shared_cluster>(sa);
    out[1] = px::movmatrix(v);
    out[2] = px::createpolicy_fractional<px::createpolicy_fractional_primary::L2_evict_first>(x);
    out[3] = px::createpolicy_cvt(w);
    px::applypriority<px::applypriority_space::space_global>(g, px::imm<128>);
    px::discard(g, px::imm<128>);"""
_SM90_HAND = """asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32"
                 " [%0], %1, [%2];" :: "r"(sa), "r"(v), "r"(sb) : "memory");
    asm volatile("st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v4.f32"
                 " [%0], {%1, %2, %3, %4}, [%5];"
                 :: "r"(sa), "f"(x), "f"(x), "f"(x), "f"(x), "r"(sb) : "memory");
    asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes"
                 ".add.u64 [%0], %1, [%2];" :: "r"(sa), "l"(w), "r"(sb) : "memory");
    asm volatile("red.async.relaxed.cluster.mbarrier::complete_tx::bytes.xor.b32"
                 " [%0], %1, [%2];" :: "l"(g), "r"(v), "l"(out) : "memory");
    std::uint32_t r, t;
    asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(r) : "r"(sa));
    out[0] = r;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(t) : "r"(v));
    out[1] = t;
    std::uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, %1;" : "=l"(p) : "f"(x));
    out[2] = p;
    asm volatile("createpolicy.cvt.L2.b64 %0, %1;" : "=l"(p) : "l"(w));
    out[3] = p;
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(g) : "memory");
    asm volatile("discard.L2 [%0], 128;" :: "l"(g) : "memory");"""
_SM100_WRAPPER = _SM90_WRAPPER + """
    px::st_async_release<px::st_async_type::s16, true, px::st_async_scope::sys,
                         px::st_async_space::space_global>(g, static_cast<std::uint16_t>(v));
    px::red_async_release<px::red_async_scope::gpu, px::red_async_type::s64>(g, w);
    px::st_bulk<true, px::st_bulk_space::shared_cta>(sa, w, px::imm<0>);"""
_SM100_HAND = _SM90_HAND + """
    asm volatile("st.async.mmio.release.sys.global.s16 [%0], %1;"
                 :: "l"(g), "h"(static_cast<std::uint16_t>(v)) : "memory");
    asm volatile("red.async.release.gpu.add.s64 [%0], %1;" :: "l"(g), "l"(w) : "memory");
    asm volatile("st.bulk.weak.shared::cta [%0], %1, 0;" :: "r"(sa), "l"(w) : "memory");"""


@pytest.mark.parametrize("release", toolkits.RELEASES)
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_wrappers_write_the_hand_written_ptx(release: str, arch: str) -> None:
    nvcc = toolkits.require("nvcc", release)
    sm100 = arch == "sm_100a"
    case = same_ptx.Case("st.async", arch, _PARAMS, _SM100_WRAPPER if sm100 else _SM90_WRAPPER,
                         _SM100_HAND if sm100 else _SM90_HAND)
    work = Path(tempfile.mkdtemp(prefix="ptxgen-st-async-"))
    rc, out, kernels = wrappers.compile_tu(same_ptx.source(case), arch, work, "cubin",
                                           include=wrappers.snapshot_include(work), exe=nvcc)
    assert rc == 0, out[-3000:]
    mine = same_ptx.normalized(kernels["wrapper"], "wrapper")
    hand = same_ptx.normalized(kernels["hand"], "hand")
    assert mine == hand
    opcodes = " ".join(mine)
    for op in ("st.async.shared::cluster", "red.async.relaxed.cluster", "getctarank",
               "movmatrix", "createpolicy.cvt", "applypriority", "discard.L2"):
        assert op in opcodes, op
    if sm100:
        assert "st.bulk.weak" in opcodes and "red.async.release.gpu" in opcodes
        assert "st.async.mmio.release.sys" in opcodes


def test_a_leniency_of_one_toolkit_is_its_own() -> None:
    """Rule mmio-sys accepts .mmio with .gpu for ptxas 13.0 only (ptxas_accepts_toolkits): the
    matrix expects 13.0 to assemble that near miss and 13.5 (and a toolkit the spec does not
    list) to refuse it; the probe offers it as no candidate (the spec records it)."""
    from ptxgen.model.instructions import ANY_TOOLKIT
    from ptxgen.probe.matrix import lenient_misses, near_misses

    ins = next(i for i in ptx.instruction_set().instructions if i.id == "st_async")
    rule = next(r for r in ins.rules if r.id == "mmio-sys")
    params = {"mmio": "true", "sem": "release", "scope": "gpu", "space": "global",
              "completion": "false", "vec": "none", "type": "u32"}
    params = {q.name: params.get(q.name, "none") for q in ins.qualifiers}
    assert [rule.lenient_for(params, tk) for tk in ("13.0", "13.5", None, ANY_TOOLKIT)] == \
        [True, False, False, True]

    def gpu_mmio(texts: list[str]) -> bool:
        return any(t.startswith("st.async.mmio.release.gpu") for t in texts)

    refused = {tk: [k.split(" <- ")[0] for k, _, _ in near_misses(ins, toolkit=tk)]
               for tk in ("13.0", "13.5")}
    accepted = [k.lines[-1] for k, _, _ in lenient_misses(ins, "13.0")]
    assert not gpu_mmio(refused["13.0"]) and gpu_mmio(refused["13.5"]) and gpu_mmio(accepted)
