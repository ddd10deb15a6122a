#!/usr/bin/env bash
# Issues 8, 17 and 29: run every GPU test and the three GEMM benchmarks (the dense wgmma GEMM
# at 8192^3, 4096^3 and 8192 x 8192 x 2048, each in several kernel configurations, the
# 2:4-sparse one, profiled once with ncu where it can read the counters, and the FP8 one
# against torch._scaled_mm at the same three sizes), and write docs/gpu-results.md. Needs an H100 / H200 (sm_90a), nvcc,
# PyTorch and numpy: run it through the device tool, from the repository root:
#
#     bash scripts/run_gpu.sh "$OUT"
#
# Writes docs/gpu-results.md, and into OUT (default /tmp/ptxgen-gpu-out): gpu-results.md,
# run.log (everything printed) and gpu-artifacts.tar.gz (JUnit XML, pytest and build logs,
# gemm.json, gemm_sp.json, gemm_fp8.json, ncu_gemm_sp.txt). Kernels already built under
# PTXGEN_GPU_BUILD (same sources, headers and flags) are reused; one that does not load
# there is rebuilt. Exit status: 0 when every test passed and the three GEMMs are correct.
# The whole run took about 6 minutes on an H200 (the machine's start not counted).
#
# A run longer than one device call can be split: PTXGEN_GPU_STEPS names the steps to run
# (build, the test modules mma_sync ... elect, cvt, approx, warp, bits, memory, st_async, gemm ... gemm_fp8, bench_gemm, bench_gemm_sp, profile_gemm_sp,
# bench_gemm_fp8, report; all by default) and PTXGEN_GPU_WORK keeps the results between the
# calls, e.g.
#     PTXGEN_GPU_WORK=/tmp/w PTXGEN_GPU_STEPS="build mma_sync wgmma async" bash scripts/run_gpu.sh
#     PTXGEN_GPU_WORK=/tmp/w PTXGEN_GPU_STEPS="wgmma_sp bench_gemm report" bash scripts/run_gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-/tmp/ptxgen-gpu-out}}
mkdir -p "$OUT_DIR"
WORK=${PTXGEN_GPU_WORK:-$(mktemp -d /tmp/ptxgen-gpu-run.XXXXXX)}
mkdir -p "$WORK"
STEPS=" ${PTXGEN_GPU_STEPS:-all} "
want() { [[ "$STEPS" == *" all "* || "$STEPS" == *" $1 "* ]]; }
export PYTHONUNBUFFERED=1
export PTXGEN_GPU_SEED=${PTXGEN_GPU_SEED:-$(( (RANDOM << 15) | RANDOM ))}
export PTXGEN_GPU_BUILD=${PTXGEN_GPU_BUILD:-/tmp/ptxgen-gpu-build}
status=0

run() {  # run NAME TIMEOUT CMD...: log to WORK/NAME.txt and to run.log
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" | tee -a "$OUT_DIR/run.log"
  local t0=$SECONDS
  timeout "$limit" "$@" >"$WORK/$name.txt" 2>&1
  local rc=$?
  tail -n 25 "$WORK/$name.txt" | tee -a "$OUT_DIR/run.log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$OUT_DIR/run.log"
  [ "$rc" -eq 0 ] || status=1
}

[ -n "${PTXGEN_GPU_WORK:-}" ] || : >"$OUT_DIR/run.log"
nvidia-smi | tee -a "$OUT_DIR/run.log"
# Prebuilt libraries that do not load on this machine are dropped (and rebuilt below).
python3 - <<'PY' 2>&1 | tee -a "$OUT_DIR/run.log"
import ctypes, os, pathlib, shutil
base = pathlib.Path(os.environ["PTXGEN_GPU_BUILD"])
for lib in sorted(base.glob("*/lib*.so")) if base.is_dir() else []:
    try:
        ctypes.CDLL(str(lib))
    except OSError as e:
        print(f"dropping {lib.parent.name}: {e}")
        shutil.rmtree(lib.parent)
PY
# Build the test libraries and the three GEMMs in parallel (cached under PTXGEN_GPU_BUILD).
want build && run build 600 bash -c 'python3 tests/gpu/build.py & p1=$!
  python3 examples/wgmma_gemm/bench.py --build-only & p2=$!
  python3 examples/sparse_gemm/bench.py --build-only & p3=$!
  python3 examples/fp8_gemm/bench.py --build-only & p4=$!
  wait $p1 && wait $p2 && wait $p3 && wait $p4'
# One pytest process per module: a GPU fault poisons only its own CUDA context.
# The 1,000-odd sparse wgmma tests spread over 4 processes where pytest-xdist is installed.
xdist=()
python3 -c "import xdist" 2>/dev/null && xdist=(-n 4)
for m in mma_sync mma_sp ldmatrix wgmma wgmma_sp async elect cvt approx warp bits memory st_async gemm gemm_sp gemm_fp8; do
  want "$m" || continue
  limit=600
  [ "$m" = gemm_sp ] && limit=240  # a protocol error of the cluster kernel must not eat the run
  [ "$m" = async ] && limit=300   # its waits trap after 2^24 tries; a hang must not eat the run
  [ "$m" = memory ] && limit=300  # its handoff's waits give up after 2^26 tries
  [ "$m" = st_async ] && limit=120  # its mbarrier waits give up after 2^22 tries
  par=()
  [ "$m" = wgmma_sp ] && par=("${xdist[@]}")
  # one process: the exhaustive sweeps run once, in a module fixture, on all 16 cores' torch
  [[ "$m" = cvt || "$m" = approx ]] && par=(-n 0)
  run "pytest_$m" "$limit" python3 -m pytest -m gpu "tests/gpu/test_$m.py" -q -p no:cacheprovider \
    -o junit_family=xunit1 --junitxml="$WORK/junit_$m.xml" "${par[@]}"
done
want bench_gemm && run gemm 600 python3 examples/wgmma_gemm/bench.py --variants --json "$WORK/gemm.json"
# The SM clock, power and clock-event reasons every 200 ms while the sparse GEMM is timed.
smi_q=clocks.sm,power.draw,power.limit,clocks_event_reasons.active
nvidia-smi --query-gpu=$smi_q --format=csv,noheader,nounits >/dev/null 2>&1 ||
  smi_q=clocks.sm,power.draw,power.limit,clocks_throttle_reasons.active
if want bench_gemm_sp; then
  nvidia-smi --query-gpu=$smi_q --format=csv,noheader,nounits -lms 200 >"$WORK/smi_gemm_sp.csv" 2>&1 &
  smi_pid=$!
  run gemm_sp 240 python3 examples/sparse_gemm/bench.py --variants --json "$WORK/gemm_sp.json"
  kill "$smi_pid" 2>/dev/null
fi
if want bench_gemm_sp && [ ! -s "$WORK/gemm_sp.json" ]; then  # e.g. a GPU fault in one configuration: the other alone
  run gemm_sp_cluster1 240 python3 examples/sparse_gemm/bench.py --variants --configs cluster1 \
    --json "$WORK/gemm_sp.json"
fi
# One launch of the reported sparse configuration under Nsight Compute (the clocks left as
# they are): what limits it, in docs/gpu-results.md. Not a pass / fail step.
if want profile_gemm_sp && command -v ncu >/dev/null && [ -s "$WORK/gemm_sp.json" ]; then
  cfg=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['reported'])" \
    "$WORK/gemm_sp.json")
  echo "== profile_gemm_sp: ncu on $cfg" | tee -a "$OUT_DIR/run.log"
  timeout 180 ncu --clock-control none -k regex:gemm_sp_kernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    python3 examples/sparse_gemm/bench.py --configs "$cfg" --rounds 1 --iters 1 --warmup 1 \
    >"$WORK/ncu_gemm_sp.txt" 2>&1
  echo "== profile_gemm_sp: exit $? (not counted)" | tee -a "$OUT_DIR/run.log"
fi
want bench_gemm_fp8 && run gemm_fp8 300 python3 examples/fp8_gemm/bench.py --json "$WORK/gemm_fp8.json"
if want report; then
  python3 tests/gpu/report.py --out docs/gpu-results.md --gemm "$WORK/gemm.json" \
    --gemm-sp "$WORK/gemm_sp.json" --gemm-fp8 "$WORK/gemm_fp8.json" \
    --profile-sp "$WORK/ncu_gemm_sp.txt" --smi-sp "$WORK/smi_gemm_sp.csv" --seed "$PTXGEN_GPU_SEED" "$WORK"/junit_*.xml \
    | tee -a "$OUT_DIR/run.log"
  cp docs/gpu-results.md "$OUT_DIR/gpu-results.md"
fi
for d in "$PTXGEN_GPU_BUILD"/*/; do cp "$d/build.log" "$WORK/build-$(basename "$d").log" 2>/dev/null; done
tar czf "$OUT_DIR/gpu-artifacts.tar.gz" -C "$WORK" .
echo "== done: status $status" | tee -a "$OUT_DIR/run.log"
exit $status
