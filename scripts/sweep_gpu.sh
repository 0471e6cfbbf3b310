#!/usr/bin/env bash
# The issue sweeps on the GPU host, one part per device call (each under 10 minutes):
#
#   source .device/bootstrap.sh && bash scripts/sweep_gpu.sh PART
#
# PART: one of PARTS below. Everything lands under $OUT as one tarball (run files under results/,
# JSON rows, logs) plus the log, because only a few files come back from the host. Each step runs
# under its own `timeout`, shorter than the call's limit (and than the device time left: the
# host's own limit kills everything, the tarball included; run files are rewritten after every
# row, but only the tarball brings them back); the committed peaks files (one per device) are copied in so rows are
# rated against it; part peaks measures a new one (copy it to results/ by hand).
set -u
cd "$(dirname "$0")/.."
PARTS="s49c | s49d | s49a | s48b | s48a | s46d | s46c | s46b | s46a | s45e | s45c | s45b | s45a | s44h | s44f | s44e | s44d | s44c | s44b | s44a | s43o | s43w | s43b | s43r | s43a | s43n | s42d | s42c | s42w | s42o | s41h | s41a | s41w | s40c | s40b | s40a | s39d | s39c | s39b | s39a | s38b | s38a | s37f | s37e | s37d | s37c | s37b | s37a | s36f | s36e | s36d | s36c | s36b | s36a | s35k | s35j | s35i | s35h | s35g | s35f | s35e | s35d | s35c | s35b | s35a | s34d | s34c | s34b | s34a | s33e | s33d | s33c | s33b | s33a | s32c | s32b | s32a | s31b | s30b | s30a | s29c | s29b | s29a | s28c | s28b | s28a | s27a | s26b | s26a | s25b | s25a | s24c | s24b | s24a | s23h | s23g | s23f | s23e | s23d | s23c | s23b | s23a | x1b | x1a | x2a | x2s | x2c | next22a | next22b | next22c | s21g | s21f | s21e | s21d | s21c | s21b | s21a | next21a | s20l | s20k | s20j | s20i | s20h | s20g | s20f | s20e | s20d | s20c | s20b | s20a | s19h | s19g | s19f | s19e | s19d | s19c | s19b | s19a | s18f | s18e | s18d | s18c | s18b | s18a | next18b | session17f | session17e | session17d | session17b | session17c | session17 | gemv17old | session16d | session16c | probe16d | session16b | probe16c | session16 | probe16b | probe16 | probe15h | probe15g | probe15f | probe15e | probe15d | probe15c | probe15b | probe15 | probe14h | session14c | probe14g | probe14f | probe14e | confirm14 | probe14d | probe14c | session14b | probe14 | session14 | subtile13 | final13 | next13 | next13b | next13c | final12 | next12d | next12c | next12 | next12b | session11e | session11d | session11c | session11b | session11 | next11 | session10e | session10d | session10c | session10b | session10 | next10 | session9f | session9e | session9d | session9c | session9b | session9 | next9 | session8f | session8e | session8d | session8c | session8b | session8 | next8 | session7e | session7d | session7c | session7b | session7 | session6g | session6f | session6e | session6d | session6c | session6b | session6 | ncu | next | next_probes | session5b | session5d | flush | session5 | peaks | attention_gemv | integrity | start_rule | softmax | splitk | softmax_rest | probes_matmul | probes_attention | probes_softmax | probes_gemv"
PART=${1:?part: $PARTS}
OUT=${OUT:-$(pwd)/sweep-out}
W="$OUT/$PART"
mkdir -p "$W/results"
export SOLBENCH_RESULTS="$W/results" PYTHONPATH="$(pwd)${PYTHONPATH:+:$PYTHONPATH}"
for p in results/*/peaks.json; do mkdir -p "$W/$(dirname "$p")"; cp "$p" "$W/$p"; done  # every committed device
PY=${PYTHON:-python3}
T0=$(date +%s)
step() { echo "== [$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/log-$PART.txt"; }
cli() {  # cli SECONDS NAME ARGS...: one invocation, its table to the log
    local t=$1 name=$2; shift 2
    step "$name"
    timeout "$t" "$PY" -m suite.cli "$@" --json "$W/$name.json" > "$W/$name.txt" 2>&1
    echo "rc=$?" >> "$W/$name.txt"
    tail -n 40 "$W/$name.txt" >> "$OUT/log-$PART.txt"
}
test_cases() {  # test_cases SECONDS BACKEND [NAME [RUN ARGS...]]: every test case of one backend (or of the
    # --op / --variant the extra arguments name) checked, check only; NAME defaults to test_BACKEND
    local t=$1 be=$2 name=${3:-test_$2}
    shift $(( $# < 3 ? $# : 3 ))
    SOLBENCH_CACHE=/dev/shm/solbench-test cli "$t" "$name" run --size test --check-only --backend "$be" \
        --timeout 60 "$@"
}
subparts() {  # subparts PART...: other parts run in turn inside this one, each one's log appended to this
    # part's (their files land beside this part's under $OUT)
    local q
    for q in "$@"; do
        OUT="$OUT" bash "$0" "$q"; cat "$OUT/log-$q.txt" >> "$OUT/log-$PART.txt"
    done
}
split_ahead_ab() {  # split_ahead_ab: every Triton softmax test case on the GPU, then split_row's registered
    # AHEAD 1 against AHEAD 0 / 0.5 and back-off 0 in 40 interleaved rounds at 4096x131072 fp32
    test_cases 90 triton test_softmax_triton --op softmax
    probe 120 softmax_split_ahead softmax triton --case 4096x131072 --cap 0.5 --ab 40 \
        --only 'split_row$|split_row ahead=0|split_row backoff=0'
}
simt_gemv_rows() {  # simt_gemv_rows SECONDS: OpenCL / WebGPU fused_vec GEMV beside tinygemm (issue 12's shapes)
    cli "$1" gemv run --op gemv_lowbit --backend opencl --backend webgpu --backend torch --variant fused_vec \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16
}
triton_dp4a_rows() {  # triton_dp4a_rows SECONDS: Triton fused_dp4a beside tinygemm and dense bf16 GEMV
    # (issue 12's w4a16 bf16 shapes)
    cli "$1" gemv_triton run --op gemv_lowbit --backend triton --backend torch --variant fused_dp4a \
        --variant tinygemm --variant dense --timeout 60 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16
}
simt_flash_rows() {  # simt_flash_rows SECONDS: WebGPU / OpenCL flash beside SDPA (fp32 b1h16s4096d64, both masks)
    cli "$1" attention_webgpu run --op attention --backend webgpu --backend opencl --backend torch \
        --variant flash --variant sdpa --case b1h16s4096d64,fp32 --case b1h16s4096d64,causal,fp32 --timeout 60
}
cuda_w4_rows() {  # cuda_w4_rows SECONDS VARIANT...: CUDA w4a16 batch-1 GEMV rows beside tinygemm
    local t=$1 v a=()
    shift
    for v in "$@" tinygemm; do a+=(--variant "$v"); done
    cli "$t" gemv_cuda run --op gemv_lowbit --backend cuda --backend torch "${a[@]}" --timeout 60 \
        --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 --case w4a16,n8192,k8192,b1 \
        --case w4a16,n16384,k16384,b1 --case w4a16,n28672,k8192,b1 --case w4a16,n1000,k8192,b1
}
probe() {  # probe SECONDS NAME OP BACKEND ARGS...: one scripts/probe.py run, its table to the log
    local t=$1 name=$2; shift 2
    step "probe $*"
    timeout "$t" "$PY" scripts/probe.py "$@" --out "$W" > "$W/probe_$name.txt" 2>&1
    cat "$W/probe_$name.txt" >> "$OUT/log-$PART.txt"
}

x2_sweep() {  # x2_sweep SECONDS NAME DEVICE-ARGS...: issue 13's sweep, every op at bench size: a
    # flagship variant of every backend at a small-footprint bench case of attention, GEMV, matmul,
    # grayscale and softmax; CUDA's alone at the 2^28-element ops (vector_add, reduction, scan),
    # where each row spends 12–55 s checking on the host, per worker (x2b of session 22: all 110
    # rows of every variant would take ~20 minutes on one GPU, over the device budget)
    local t=$1 name=$2 v a=()
    shift 2
    for v in vec4_unroll cupy vec16 vec4_split fused_row register_blocked grouped matmul flash sdpa \
        fused_vec dense; do a+=(--variant "$v"); done
    # inputs and references made afresh for each sweep (so each pays for them once), in memory: on
    # the device host the first 2^28-element case, writing its files to disk, outlasted 60 s (x1a)
    SOLBENCH_CACHE="/dev/shm/solbench-$name" cli "$t" "$name" run "$@" "${a[@]}" ${X2_BIG---case n=2^28} \
        --case 2160x3840 --case 65536x1024 --case '2048³,bf16' --case b2h16s1000d64,fp16 \
        --case w4a16,n8192,k8192,b1 --time-cap 0.5 --timeout 120 \
        --backend cuda --backend torch --backend triton --backend opencl --backend webgpu
    "$PY" - "$W/$name.json" >> "$OUT/log-$PART.txt" 2>&1 <<'PYEOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
r = d["run"]
print("run", r["id"], r.get("devices_mode"), "wall_s", round(r.get("wall_s", 0), 1), "planned",
      r.get("rows_planned"), dict(collections.Counter(f"{x['device']} {x['status']}" for x in d["results"])))
PYEOF
    rm -rf "/dev/shm/solbench-$name"
}

w4_probes() {  # w4_probes SECONDS FILTER: scripts/probe.py's CUDA GEMV configurations matching
    # FILTER at both w4a16 bf16 batch-1 cases
    local c
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe "$1" "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only "$2" --cap 1
    done
}
w4_ab() {  # w4_ab SECONDS NAME BACKEND ROUNDS FILTER: scripts/probe.py's GEMV configurations of BACKEND
    # matching FILTER in ROUNDS interleaved rounds at both w4a16 bf16 batch-1 cases
    local c
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe "$1" "${2}_$c" gemv_lowbit "$3" --case "$c" --cap 0.5 --ab "$4" --only "$5"
    done
}

cl_ptx() {  # cl_ptx CASE: the PTX NVIDIA's OpenCL compiler makes of every OpenCL GEMV kernel at CASE, into
    # $W/ptx (scripts/cl_ptx.py); fused_packed's is $W/$CL_PK_PTX (the probe row "OpenCL PTX" loads it)
    step "opencl gemv PTX"
    timeout 60 "$PY" scripts/cl_ptx.py gemv_lowbit --case "$1" --out "$W/ptx" >> "$OUT/log-$PART.txt" 2>&1
}
CL_PK_PTX=ptx/cl-gemv_lowbit-fused_packed-gemv_lowbit_pk.ptx

pk_timeline() {  # pk_timeline CASE: scripts/pk_timeline.py (CUDA fused_packed's per-block timeline)
    step "pk_timeline $1"
    timeout 100 "$PY" scripts/pk_timeline.py --case "$1" --out "$W" > "$W/pk_timeline_$1.txt" 2>&1
    cat "$W/pk_timeline_$1.txt" >> "$OUT/log-$PART.txt"
}
pk_ab() {  # pk_ab NAME FILTER: at both w4a16 bf16 batch-1 cases, fused_packed's timeline, then the
    # CUDA GEMV configurations matching FILTER in 100 interleaved rounds
    local c
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        pk_timeline "$c"
        probe 60 "${1}_$c" gemv_lowbit cuda --case "$c" --cap 0.5 --ab 100 --only "$2"
    done
}

case "$PART" in
s29a)  # ~4.5 min: Triton softmax split_row 4096×131072 fp32 (issue 8: 88.5 %, 90 wanted), the registered
    # form beside session 28's softmax_split_tma (parts moved as TMA boxes: 59 registers and 64 KiB of
    # shared memory at 16384 values on 16 warps — two programs per SM, where the pointer form's 81
    # registers fit one) at parts × warps × backoff; each configuration checked first
    probe 200 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|split_row tma'
    # and the same for Triton scan (2^28 fp32: registered streamed look-back 73.2 % in f6dbdd, 75 wanted)
    step "scan_probe triton tma"
    timeout 100 "$PY" scripts/scan_probe.py triton --dtype fp32 \
        --only "l2 tile=16384 sub=4096 warps=8 window=16|lookback tma" --out "$W" > "$W/scan_probe_triton.txt" 2>&1
    cat "$W/scan_probe_triton.txt" >> "$OUT/log-$PART.txt"
    ;;
s46b)  # ~1.5 min, any NVIDIA card (session 46): s46c, then WebGPU fused_dp4a's GPU test cases and
    # harness rows beside tinygemm (s42d)
    subparts s46c s42d
    ;;
s49c)  # ~5 min, for an H200 (session 49): s49d (the cell's harness rows, ~1 min on an H100 in
    # session 50), s49a (~1.5 min), then s48a (split_row under ncu, ~2.5 min); each part its own
    # tarball, so a call cut short keeps the parts it finished
    subparts s49d s49a s48a
    ;;
s49d)  # ~1 min, any sm_90 card (session 49): Triton fused_dp4a's GPU test cases and harness rows (beside
    # tinygemm and the dense GEMV) with the UNIT 1 rings in the autotuned set
    test_cases 120 triton test_gemv_triton --op gemv_lowbit --variant fused_dp4a
    triton_dp4a_rows 150
    ;;
s49a)  # ~1.5 min, any sm_90 card (session 49; ran at 0ff38cd on an H100 with the first ten
    # configurations, the three 32-64-word UNIT 1 rings added since): Triton fused_dp4a with the
    # planes combined per 32-k unit (UNIT 1: 273 sm_90 instructions per tile against 335, 72
    # registers against 93) beside the registered rings, and at wider rings, 40 interleaved rounds
    # at issue 12's shapes
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 150 "gemv_unit_ab_$c" gemv_lowbit triton --case "$c" --cap 0.5 --ab 40 \
            --only 'dp4a shape=(16, 1024, 4, 3)$|dp4a shape=(8, 1024, 2, 4)$|dp4a unit='
    done
    ;;
s48b)  # ~6 min, for an H200 (session 48): the H200 list in one call — s46d (the OpenCL GEMV cell's
    # harness rows), s42d (WebGPU fused_dp4a's GPU test cases and harness rows), s48a (split_row under ncu)
    subparts s46d s42d s48a
    ;;
s48a)  # ~2.5 min, for an H200 (session 48): s43n again with the memory-workload tables and the L2
    # headline, plus Triton split_row without the L2 request of the next wave's part (AHEAD 0, at
    # parity in time on the H200): s43n's L2 readings (92 against 89 % busy, hit rate 57 against 52)
    # include AHEAD's second request per prefetched line, so the request streams compare at AHEAD 0
    step "ncu split_row cuda / triton / triton AHEAD 0"
    timeout 330 "$PY" scripts/ncu_limiter.py --out "$W/ncu" softmax/cuda/split_row/4096x131072 \
        softmax/triton/split_row/4096x131072 "softmax/triton/split_row ahead=0/4096x131072" > "$W/ncu.txt" 2>&1
    tail -n 12 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s46d)  # ~1.5 min, for an H200 (session 46): the OpenCL GEMV cell's harness rows — fused_packed as
    # registered since session 44 (PXR; 1.11-1.15 x fused_mma's speed in session 46's H200 probes) and
    # fused_mma beside tinygemm
    cli 150 gemv_opencl run --op gemv_lowbit --backend opencl --backend torch --variant fused_packed \
        --variant fused_mma --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16
    ;;
s46c)  # ~20 s, any NVIDIA card (session 46; ran at 56a2896 on an H100 in session 47): WebGPU fused_dp4a
    # against SP 1 and 2 (half the workgroup converting x in two passes while the other half's teams
    # loaded their first steps) — they lost, and their code had slowed the registered SP 0 kernel by
    # 11-14 % (d4420f0); SP and its rows removed, the part now times the registered form alone
    w4_ab 80 gemv_webgpu_s46c webgpu 20 'fused_dp4a$'
    ;;
s46a)  # ~1 min, any NVIDIA card (session 46; ran at 5021219 on an H200): WebGPU fused_dp4a as registered
    # against XT 1 and 2 (each lane read 1-2 words of its team's first step of a chunk before x's
    # conversion): 0.97-0.99 x its speed, XT and its rows removed
    w4_ab 80 gemv_webgpu_s46 webgpu 20 'fused_dp4a$|s46 '
    ;;
s45e)  # ~1 min, any NVIDIA card (session 45): WebGPU fused_dp4a as registered since ba47593 (RL 1, x
    # converted by four invocations per unit) against 6-8 rows per team at 16-28 teams, 20 interleaved rounds
    w4_ab 80 gemv_webgpu_s45e webgpu 20 'fused_dp4a$|s45e'
    ;;
s45c)  # ~1.5 min, any NVIDIA card, on an H200 first (session 45): WebGPU fused_dp4a as registered since
    # session 45 (RL 1, the weights repacked per tile): the step prefetch at 2 rows per team and two
    # workgroups per SM in 20 interleaved rounds, then its GPU test cases and its harness rows beside
    # tinygemm (s42d)
    w4_ab 80 gemv_webgpu_s45c webgpu 20 'fused_dp4a$|s45b shape=(2, '
    subparts s42d
    ;;
s45b)  # ~1.5 min, any NVIDIA card (session 45): s45a found x's conversion ~7 % of WebGPU fused_dp4a's
    # time and its weight stream alone at 80 % (plain WGSL reads 86-89 %); RL 1 1.025 / 1.045 x. 20
    # interleaved rounds: RL 2 (the blocks K-major) beside RL 1 and the registered form; at 84a9462 also
    # XP (a chunk's first step loaded before the conversion: lost, removed) and the later s45c shapes
    w4_ab 100 gemv_webgpu_s45b webgpu 20 'fused_dp4a$|s45b'
    ;;
s45a)  # ~1 min, any NVIDIA card (session 45): where WebGPU fused_dp4a's time goes (H100: 68.5 / 71.6 % of
    # the ceiling where a plain WGSL read reaches 88.9 / 86.7). 20 interleaved rounds at both bench cases:
    # the registered form, the weights repacked per tile (RL: each team's tile one contiguous stream),
    # and diagnostic forms without x's conversion (DIAG 1) and without the dot products (DIAG 2, the
    # weight stream alone); then the fixed cost per call: time against N at K = 16384
    w4_ab 100 gemv_webgpu_s45 webgpu 20 'fused_dp4a$|s45'
    for n in 4096 8192 16384; do
        probe 60 "gemv_webgpu_fixed_n$n" gemv_lowbit webgpu --case "w4a16,n$n,k16384" \
            --dims "n=$n,k=16384,b=1,bits=4" --dtype bf16 --cap 0.5 \
            --only 'fused_dp4a$|s45 DIAG|s45 shape=(4, 32, 1, 2, 0, 1, 1, 1)'
    done
    ;;
s44h)  # ~4 min, for an H200 (session 44): OpenCL fused_packed as registered (s44b), its PTX through CUDA
    # (s44c) and the empty-launch windows (s44f)
    subparts s44b s44c s44f
    ;;
s44f)  # ~1 min, any NVIDIA card (session 44): s44e — OpenCL's extra time on fused_packed is nearly fixed
    # (+3.7 us at K=N=8192, +5 us at 16384 over its own PTX launched through CUDA): the fixed cost of
    # an empty launch (one work-item; a full grid of 2 x 288 per SM without and with 34 KiB of local
    # memory, fused_packed's shape) in OpenCL and CUDA
    for b in opencl cuda; do
        step "read_ceiling empty $b"
        timeout 100 "$PY" scripts/read_ceiling.py --backend $b --sizes 1048576 --only empty --out "$W" \
            > "$W/read_ceiling_empty_$b.txt" 2>&1
        grep -v "Warning\|lambda: self" "$W/read_ceiling_empty_$b.txt" >> "$OUT/log-$PART.txt"
    done
    ;;
s44e)  # ~1.5 min, any NVIDIA sm_90 card (session 44): s44d — the second work-group per SM gains OpenCL as much as
    # CUDA (6 %): not residency. Is OpenCL's 8-9 points a fixed time per launch (then it grows at a quarter
    # of the bytes, K=N=8192 fp16) or a rate? And the registered form without its register cap
    cl_ptx w4a16,n8192,k8192,b1
    SOLBENCH_CL_PTX="$W/$CL_PK_PTX" \
        probe 100 gemv_cuda_clptx_w4a16,n8192,k8192,b1 gemv_lowbit cuda --case w4a16,n8192,k8192,b1 \
        --cap 0.5 --ab 20 --only 'fused_packed$|OpenCL PTX fused_packed$'
    probe 100 gemv_opencl_pk_w4a16,n8192,k8192,b1 gemv_lowbit opencl --case w4a16,n8192,k8192,b1 \
        --cap 0.5 --ab 20 --only 'fused_packed$|fused_mma$|no regcap'
    ;;
s44d)  # ~1.5 min, any NVIDIA sm_90 card (session 44): s44c found OpenCL's own PTX of fused_packed as fast
    # through CUDA as CUDA's build (86.7 / 83.2 % on an H100) and 9 points slower through OpenCL: is it
    # residency (two work-groups of 35 KiB per SM)? The PTX through CUDA with one block per SM (grid or
    # carveout), and OpenCL's kernel with one work-group per SM beside its two
    cl_ptx w4a16,n16384,k16384,b1,bf16
    SOLBENCH_CL_PTX="$W/$CL_PK_PTX" \
        w4_ab 80 gemv_cuda_clptx cuda 20 'fused_packed$|OpenCL PTX'
    w4_ab 60 gemv_opencl_pk opencl 20 'fused_packed$|x1/SM PXR=1$'
    ;;
s44c)  # ~1.5 min, any NVIDIA sm_90 card (session 44): OpenCL fused_packed's PTX as NVIDIA's OpenCL compiler
    # makes it (scripts/cl_ptx.py, one process), launched through CUDA (probe row "OpenCL PTX", another)
    # beside CUDA's own build of the same kernel at the same geometry (8, 2, 2, two per SM) and the
    # registered CUDA form: does the gap live in the OpenCL front end's code or in its runtime?
    cl_ptx w4a16,n16384,k16384,b1,bf16
    SOLBENCH_CL_PTX="$W/$CL_PK_PTX" \
        w4_ab 80 gemv_cuda_clptx cuda 20 'fused_packed$|packed2 KW=8 STAGES=2 SPW=2 x2/SM$|OpenCL PTX'
    w4_ab 60 gemv_opencl_pk opencl 20 'fused_packed$|fused_mma$'
    ;;
s44b)  # ~2.5 min, any NVIDIA sm_90 card, an H200 first (session 44): OpenCL fused_packed as registered
    # since s44a (PXR, (8, 2, 2, 2)): its test cases on the GPU, 20 interleaved rounds against fused_mma
    # and the other PXR shapes, then the PTX NVIDIA's OpenCL compiler makes of fused_packed and
    # fused_mma (for a SASS comparison with NVRTC's build of CUDA's kernel on the CPU machine)
    test_cases 60 opencl test_gemv_opencl_pk --op gemv_lowbit --variant fused_packed --variant fused_mma
    w4_ab 90 gemv_opencl_pxr opencl 20 'fused_packed$|fused_mma$|PXR'
    cl_ptx w4a16,n16384,k16384,b1,bf16
    ;;
s44a)  # ~1 min, any NVIDIA sm_90 card (new in session 44): OpenCL fused_packed with each chunk's x slice
    # in its ring stage (PXR: a second bulk copy) instead of loads from global memory — s43o (H100):
    # CUDA's kernel at the port's geometry lost 6-7 % of its speed reading x from global memory —
    # beside the registered form and fused_mma, 20 interleaved rounds
    w4_ab 90 gemv_opencl_pxr opencl 20 'fused_packed$|fused_mma$|PXR'
    ;;
s43o)  # ~2 min, any NVIDIA sm_90 card (new in session 43): why does OpenCL fused_packed (75.7 / 74.6 % on
    # an H100, s43k) trail CUDA's (87.5 / 84.6 %) with the same algorithm? CUDA's kernel at OpenCL's
    # geometry (KW 8, 5 stages of SPW 1, two blocks per SM: what 48 KiB of local memory allows),
    # with x in shared memory or (PXG) read from global memory as the port reads it, against its
    # registered form in 40 interleaved rounds, then OpenCL's fused_packed and fused_mma
    w4_ab 80 gemv_cuda_clgeom cuda 40 'fused_packed$|packed2 KW=8 STAGES=5 SPW=1 x2/SM|packed PXG'
    w4_ab 60 gemv_opencl_pk opencl 20 'fused_packed$|fused_mma$'
    ;;
s43w)  # ~2 min, any NVIDIA card, for an H200 first (session 43): WebGPU fused_dp4a's LP shapes (one
    # dispatch walks K's chunks; run on an H100 only, session 42) in 20 interleaved rounds against the
    # registered (4, 32, 1, 2, 0, 1, 1): 2 / 4 / 6 rows per team, 24 teams, PF, two workgroups per SM
    w4_ab 90 gemv_webgpu_lp webgpu 20 'fused_dp4a$|, 2, 0, 1, 1)$|(4, 32, 1, 2, 1, 1, 1)$'
    ;;
s43b)  # ~8.5 min, for an H200: s42d (the WebGPU GEMV cell's rows), s43a, s43n, then s43r
    subparts s42d s43a s43n s43r
    ;;
s43r)  # ~2 min, any NVIDIA card (new in session 43): one-launch plain reads of the GEMV's byte counts
    # (and ~2 GiB) through NVIDIA's OpenCL and Vulkan (scripts/read_ceiling.cl / .wgsl: 16-byte loads,
    # 1-16 in flight, an empty kernel) beside the same forms and the TMA bulk ring through CUDA, same
    # card, same protocol (H100, session 43: OpenCL 89.8 / 87.3 %, CUDA 92.9 / 90.9 %)
    for b in opencl webgpu; do
        step "read_ceiling $b"
        timeout 100 "$PY" scripts/read_ceiling.py --backend $b --out "$W" > "$W/read_ceiling_$b.txt" 2>&1
        grep -v "Warning\|lambda: self" "$W/read_ceiling_$b.txt" >> "$OUT/log-$PART.txt"
    done
    step "read_ceiling cuda"
    timeout 100 "$PY" scripts/read_ceiling.py --out "$W" \
        --only '^empty$|^ldg u(1|4|8) 2x512$|^ldg u8 8x256$|^chunk u4 2x512$|^bulk 4x32K 1x256$' \
        > "$W/read_ceiling_cuda.txt" 2>&1
    cat "$W/read_ceiling_cuda.txt" >> "$OUT/log-$PART.txt"
    ;;
s43n)  # ~1 min, for an H200: s39a's last step alone — Nsight Compute's reading of one cold launch of
    # CUDA's and Triton's softmax split_row at 4096x131072 (at parity on an H100, session 43: the
    # gap, 93.3 against 88.6 % of the ceiling, shows on the H200 only)
    step "ncu split_row cuda / triton"
    timeout 150 "$PY" scripts/ncu_limiter.py --out "$W/ncu" softmax/cuda/split_row/4096x131072 \
        softmax/triton/split_row/4096x131072 > "$W/ncu.txt" 2>&1
    tail -n 12 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s43a)  # ~3 min, any NVIDIA card (new in session 43): NVIDIA's OpenCL beside CUDA at GEMV w4a16's byte
    # counts, same call. Per backend: a 32-element vector_add (the timed window's fixed cost: session
    # 21 read 7.2 us for OpenCL's own command events, ~3 for CUDA's), the registered reductions of i32
    # arrays of exactly the two cases' bytes (16-byte loads, two launches: not the best read of the
    # bytes, s43r's one-launch forms are), then OpenCL's GEMV kernels themselves at both cases
    for b in opencl cuda; do
        probe 40 "fixed_$b" vector_add "$b" --case n32 --dims n=32
        for n in 34619392 30296064; do  # 138477568 / 121184256 bytes: w4a16 K=N=16384 / N=28672
            probe 60 "read_${b}_$n" reduction "$b" --case "i32_n$n" --dims "n=$n" --dtype i32
        done
    done
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_opencl_$c" gemv_lowbit opencl --case "$c" --only 'fused_mma$|fused_packed$|fused_dp4a$'
    done
    ;;
s42d)  # ~2.5 min, for an H200 with little device time: s42c without s42w
    test_cases 60 webgpu test_gemv_webgpu --op gemv_lowbit --variant fused_dp4a
    cli 150 gemv_webgpu run --op gemv_lowbit --backend webgpu --backend torch --variant fused_dp4a \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16
    ;;
s42c)  # ~4.5 min, for an H200: s42w, then WebGPU fused_dp4a's test cases on the GPU and its harness
    # rows beside tinygemm at the registered shape (s42d; (4, 32, 1, 2, 0, 1, 1) since 597cb0f)
    subparts s42w s42d
    ;;
s42w)  # ~2 min, any NVIDIA card (session 42): WebGPU fused_dp4a as registered (when it ran: (8, 16,
    # 1, 2, 0, 1)) against the old (4, 16, 1, 1, 0), ST with 32 teams, 16 rows or the step prefetch,
    # and LP (every chunk of K in one dispatch)
    w4_ab 90 gemv_webgpu_st webgpu 20 'fused_dp4a$|dp4a sgpf shape=(4, 16, 1, 1, 0)$|, 1, 2, 0, 1)$|, 1, 2, 1, 1)$|, 2, 0, 1, 1)$'
    ;;
s42o)  # ~2 min, any NVIDIA sm_80+ card (new in session 42): OpenCL fused_mma with two chunks in
    # flight per warp (MPF 2: a register ring of three slots) at 128 and 168 registers, and with 8
    # split-K warps, against the registered MPF 1, both w4a16 cases in interleaved rounds (MPF lost
    # 16–34 % on an H100 and was removed in session 42: only fused_mma runs now)
    w4_ab 75 gemv_opencl_mpf opencl 30 "fused_mma\$|{'MPF'"
    ;;
s41h)  # ~7 min (9 at most), for an H200 (session 41): s40a without its harness rows, then s41w
    split_ahead_ab
    subparts s39c s40b s41w
    ;;
s41a)  # ~3 min (4.5 at most), for an H100 (session 41): s40b, then s41w
    subparts s40b s41w
    ;;
s41w)  # ~1.5 min, any NVIDIA card (new in session 41): WebGPU fused_dp4a's SG 2 (a team per subgroup,
    # sums by subgroupAdd, no barrier in the tile loop) against the registered SG 1 shape, both w4a16
    # cases in interleaved rounds; ST (y stored by the last chunk, no gemv_pack dispatch) with it
    w4_ab 75 gemv_webgpu_sg2 webgpu 20 'dp4a sgpf shape=(4, 16, 1, 1, 0)$|dp4a sg2'
    ;;
s40c)  # ~3.5 min, for an H200: s40a cut to the device time left in session 40 (no s39c, no harness rows)
    split_ahead_ab
    subparts s40b
    ;;
s40b)  # ~1.5 min, any Hopper card (new in session 40): Triton fused_dp4a's ring filled by TMA copies
    # (80 registers against 94) at four ring shapes against the two registered rings, both w4a16
    # cases (the TMA form lost on the H200 and was removed in session 42: only the rings run now)
    w4_ab 60 gemv_triton_tma triton 60 'dp4a shape=(16, 1024, 4, 3)$|dp4a shape=(8, 1024, 2, 4)$|dp4a tma'
    ;;
s40a)  # ~6.5 min, for an H200 (session 40; s39c and s39d ran on an H100 in this session): s39b
    # without s39d (register caps: lost on the H100, removed), Triton fused_dp4a's ring filled by TMA
    # (s40b) at both w4a16 cases, then s39a's harness rows (its Nsight Compute step: s39a)
    split_ahead_ab
    subparts s39c s40b
    cli 170 softmax_split run --op softmax --backend triton --backend torch --variant split_row \
        --variant eager --variant compile --case 4096x131072 --timeout 90
    ;;
s39b)  # ~5.5 min, s39a cut to the device time left in session 39 (s39a's harness rows took 250 s on an
    # H100: the float64 reference of 2^29 values in each worker): Triton softmax's test cases, the
    # split_row A/B (AHEAD 1 registered against AHEAD 0 / 0.5 and back-off 0), then s39c and s39d
    split_ahead_ab
    subparts s39c s39d
    ;;
s39d)  # ~2 min, any Hopper card (new in session 39): Triton fused_dp4a's two BK 1024 rings with a
    # register cap of 80 / 64 (6 / 8 programs per SM instead of 5 at 93-94 registers; no spills in
    # Triton 3.6's sm_90 compile) against the same rings uncapped, 100 interleaved rounds at both
    # w4a16 bf16 cases (issue 12: 69.8 / 72.0 % on the H200, 85 wanted). Ran in session 40 on an
    # H100: every cap lost; the regs rows are gone, so this part now times the uncapped rings only
    w4_ab 90 gemv_triton_regs triton 100 'dp4a shape=(16, 1024, 4, 3)$|dp4a shape=(8, 1024, 2, 4)$|dp4a regs='
    ;;
s39c)  # ~1.5 min: s38a's CUDA fused_packed A/B at the missed cell only (K=8192, N=28672; no timelines)
    probe 90 gemv_pnext_ab_n28672 gemv_lowbit cuda --case w4a16,n28672,k8192,b1,bf16 --cap 0.5 --ab 100 \
        --only 'fused_packed$|packed PNEXT=|packed KW=8 STAGES=4 SPW=4|packed PIMMA=1'
    ;;
s39a)  # ~4 min, for an H200: Triton softmax split_row — every Triton softmax test case checked on the
    # GPU (session 38's narrow-part fix: 36 ok on an H100 in session 39), the kernel's registers as
    # this host's Triton compiles it, with and without a 64-register cap (Triton 3.6 on the CPU: 64
    # either way, two 512-thread programs per SM as CUDA's split_row), then the registered form
    # (AHEAD 1, 1000 ns back-off) against AHEAD 0 / 0.5 and back-off 0 / 500 / 2000 ns (with AHEAD:
    # the wait now has DRAM work under it) in 40 interleaved rounds at 4096x131072, and the
    # registered form's harness rows beside torch (eager, compile); last, Nsight Compute's reading of
    # one cold launch of CUDA's split_row (93.3 %) and Triton's (88.6 % at best) — same geometry,
    # so where the 5 points go (stalls, issue, DRAM %)
    test_cases 120 triton test_softmax_triton --op softmax
    step "split_row registers"
    timeout 120 "$PY" - >> "$OUT/log-$PART.txt" 2>&1 <<'PYEOF'
import ops.softmax.kernels as K
from suite.inspection import inspect_kernels
d = K.triton_split_row.__defaults__  # (..., ahead, regs)
for regs in (0, 64):
    K.triton_split_row.__defaults__ = d[:-1] + (regs,)
    for r in inspect_kernels("softmax", "triton", ["split_row"], "4096x131072"):
        print(f"split_row cap={regs}: {r.get('registers')} registers, {r.get('spill_bytes')} B spilled",
              r.get("error") or "")
PYEOF
    probe 200 softmax_split_regs softmax triton --case 4096x131072 --cap 0.5 --ab 40 \
        --only 'split_row$|split_row ahead=0|split_row backoff='
    cli 150 softmax_split run --op softmax --backend triton --backend torch --variant split_row \
        --variant eager --variant compile --case 4096x131072 --timeout 90
    step "ncu split_row cuda / triton"
    timeout 150 "$PY" scripts/ncu_limiter.py --out "$W/ncu" softmax/cuda/split_row/4096x131072 \
        softmax/triton/split_row/4096x131072 > "$W/ncu.txt" 2>&1
    tail -n 12 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s38b)  # ~2.5 min, for an H200: Triton softmax split_row after session 38's narrow-part fix (s37e on
    # the H200: 13x7 failed to compile with AHEAD; 86.5 % at 4096x131072 against 88.0-88.6 % before
    # AHEAD) — every Triton softmax test case checked on the GPU, then AHEAD 1 (registered) against
    # 0 and 0.5 in interleaved rounds, each configuration checked first
    test_cases 120 triton test_softmax_triton --op softmax
    probe 150 softmax_split_ahead softmax triton --case 4096x131072 --cap 0.5 --ab 40 \
        --only 'split_row$|split_row ahead=0'
    ;;
s38a)  # ~3 min, prepared in session 37 (not run; any Hopper card): CUDA fused_packed with each block's
    # producer asking its successor's last 2 / 4 / 8 chunks into L2 after its own last copy (PNEXT:
    # equal ranges end ~2 us apart, s35b), 100 interleaved rounds against the registered form; and
    # a fourth ring stage (session 38: 1.0-1.2 % less time in s37f's H200 timelines), and session 35's
    # integer-mma consumers (PIMMA, restored: at parity on the H100, the H200's consumers busier);
    # each case's timeline (every pk_timeline form) first
    pk_ab gemv_pnext_ab 'fused_packed$|packed PNEXT=|packed KW=8 STAGES=4 SPW=4|packed PIMMA=1'
    ;;
s37f)  # ~7.5 min, for an H200: every pending issue-8/12 row in one call — s37c (the GEMV w4a16 rows of
    # every kernel changed since the last H200 run), then s37e (Triton softmax split_row with AHEAD)
    subparts s37c s37e
    ;;
s37e)  # ~2 min: Triton softmax split_row with AHEAD 1 registered (s37d) — every softmax test case of
    # Triton checked on the GPU, then the 4096×131072 fp32 harness rows beside torch (eager, compile)
    test_cases 120 triton test_softmax_triton --op softmax
    cli 150 softmax_split run --op softmax --backend triton --backend torch --variant split_row \
        --variant eager --variant compile --case 4096x131072 --timeout 90
    ;;
s37d)  # (ran at commit da07115 on an H100: AHEAD 1 registered after it) ~2.5 min: Triton softmax split_row 4096×131072 fp32 (issue 8: 88.0–88.6 % on the H200, 90 wanted)
    # with a later program's part asked into L2 while each program waits for its siblings (AHEAD:
    # one 512-thread program per SM, so its wait leaves the SM's loads idle), 0.5 / 1 / 2 / 4 waves
    # ahead, against the registered form: each configuration checked first, then interleaved rounds
    probe 200 softmax_split_ahead softmax triton --case 4096x131072 --cap 0.5 --ab 40 \
        --only 'split_row$|split_row ahead='
    ;;
s37c)  # ~5 min, for an H200 (issue 12's card): the GEMV w4a16 bf16 harness rows of every kernel changed
    # since the last H200 run — CUDA fused_packed (epoch finish) and fused_dp4a beside tinygemm and dense
    # (s35g), OpenCL fused_packed / fused_mma (s36e), Triton fused_dp4a with PREF 2 (s37b)
    subparts s35g s36e s37b
    ;;
s37b)  # ~2.5 min: Triton fused_dp4a with PREF 2 registered (s37a) — every gemv_lowbit test case of it
    # checked on the GPU, then its harness rows beside tinygemm and dense bf16 GEMV
    test_cases 120 triton test_gemv_triton_dp4a --op gemv_lowbit --variant fused_dp4a
    triton_dp4a_rows 200
    ;;
s37a)  # (ran at commit 2d857d3 on an H100: PREF 2 registered after it) ~2 min: Triton fused_dp4a with the first 1 / 2 / 4 word tiles of each program's rows prefetched
    # into L2 before the dependent launch's wait (PREF: DRAM streams while gemv_x_planes runs; s34c on
    # H100s: that launch is 3.5 us of the 9.3 us fixed cost per call, and PEEL, the same tiles loaded
    # into registers, lost 1.2-16 % in s35a), 100 interleaved rounds at issue 12's shapes
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 90 "gemv_pref_ab_$c" gemv_lowbit triton --case "$c" --cap 0.5 --ab 100 \
            --only 'dp4a shape=(16, 1024, 4, 3)|dp4a shape=(8, 1024, 2, 4)|dp4a pref='
    done
    ;;
s36f)  # ~1.5 min: CUDA fused_packed with each chunk's group counted on against the 64-bit division per
    # chunk it had before (PKDIV), interleaved rounds at both w4a16 bf16 batch-1 cases; its test cases first
    test_cases 120 cuda test_gemv_cuda_packed --op gemv_lowbit --variant fused_packed
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_pkdiv_ab_$c" gemv_lowbit cuda --case "$c" --cap 0.5 --ab 100 --only 'fused_packed$|packed PKDIV'
    done
    ;;
s36d)  # ~6 min: s36e, then s36a
    subparts s36e s36a
    ;;
s36e)  # ~1.5 min: OpenCL fused_packed's harness rows beside fused_mma and tinygemm (both w4a16 bf16
    # batch-1 peer cases)
    SOLBENCH_CACHE=/dev/shm/solbench-s36e cli 150 gemv_opencl_packed run --op gemv_lowbit --backend opencl \
        --backend torch --variant fused_packed --variant fused_mma --variant tinygemm \
        --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 --timeout 90
    ;;
s36c)  # ~5 min: s36b, then s36a
    subparts s36b s36a
    ;;
s36b)  # ~1 min: OpenCL fused_packed (session 36: CUDA's gemv_lowbit_pk in OpenCL C, bulk copies and
    # mbarriers through inline PTX; first run: s36b-1) — every gemv_lowbit test case it takes checked on
    # the GPU, then beside fused_mma at both w4a16 bf16 batch-1 bench cases with its probe shapes
    test_cases 120 opencl test_gemv_opencl_packed --op gemv_lowbit --variant fused_packed
    export PYOPENCL_COMPILER_OUTPUT=1  # NVIDIA's build logs (the verbose shapes: registers, spills)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 150 "gemv_opencl_$c" gemv_lowbit opencl --case "$c" \
            --only 'fused_mma$|fused_packed$|packed ' --cap 1
    done
    ;;
s36a)  # ~4 min, prepared in session 35 for an H200 (any Hopper card runs it; only an H200's rows count
    # towards issue 12): the GEMV w4a16 rows with fused_packed's epoch finish and its timeline (s35g),
    # fused_packed against a plain bulk read of the same bytes (s35j), then half-size chunks (s35k)
    subparts s35g s35j s35k
    ;;
s35k)  # ~1.5 min: CUDA fused_packed with half-size chunks (SPW 2: 16.9 KiB copies) and 4 / 6 / 8 stages
    # (the same bytes in flight or more), against the registered 3 × 33.8 KiB: the timeline (s35b-g)
    # puts ~1.1 us after a block's last chunk arrives (its compute) and ~2 us of uneven ends, both
    # of a chunk's granularity; interleaved rounds
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_spw2_ab_$c" gemv_lowbit cuda --case "$c" --cap 0.5 --ab 100 \
            --only 'fused_packed$|SPW=2$'
    done
    ;;
s35j)  # ~2 min: on the card at hand, how far is CUDA fused_packed (epoch finish) from a plain read of the
    # same bytes? read_ceiling's bulk rings (session 20 on the H200: 91-92 / 89-90 % of the ceiling,
    # against fused_packed's 77.8 / 74.0) and an empty kernel, then fused_packed and its memory path
    step "read_ceiling"
    timeout 150 "$PY" scripts/read_ceiling.py --out "$W" --only 'empty|bulk 4x32K chunk 1x256$|bulk 4x33K chunk 1x288$' \
        > "$W/read_ceiling.txt" 2>&1
    cat "$W/read_ceiling.txt" >> "$OUT/log-$PART.txt"
    w4_probes 60 'fused_packed$|PMEMONLY'
    ;;
s35i)  # ~2 min: s35h's PIMMA with x's planes made four groups at a time (s35h: 5.7 us to make them at
    # K = 16384, one group at a time, so the first chunk waited until 7.5 us; in the steady part it
    # was ~2 % faster than the bf16 mma form): timelines, interleaved rounds
    pk_ab gemv_imma_ab 'fused_packed$|packed PIMMA|PMEMONLY'
    ;;
s35h)  # ~2 min: CUDA fused_packed's consumers through 8-bit integer mma (PIMMA: x as three byte planes
    # per block, u8 nibbles straight into m16n8k32, no unpack to bf16; ~45 % fewer instructions per
    # step) against the registered bf16 mma form: timelines (checked again after), interleaved rounds
    pk_ab gemv_imma_ab 'fused_packed$|packed PIMMA|PMEMONLY'
    probe 60 "gemv_imma_fp16" gemv_lowbit cuda --case w4a16,n16384,k16384,b1 --cap 0.5 --only 'fused_packed$|packed PIMMA=1$'
    ;;
s35g)  # ~2 min: issue 12's GEMV w4a16 bf16 rows with CUDA fused_packed's epoch finish (e734185; s35c/d:
    # 3.2-4.1 % faster than the counter finish on an H100) beside fused_dp4a, tinygemm and dense bf16
    # GEMV, then the fused_packed timeline at both shapes
    cli 200 gemv_w4 run --op gemv_lowbit --backend cuda --backend torch --variant fused_packed \
        --variant fused_dp4a --variant tinygemm --variant dense --timeout 60 \
        --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16
    pk_timeline w4a16,n16384,k16384,b1,bf16
    pk_timeline w4a16,n28672,k8192,b1,bf16
    ;;
s35f)  # ~2 min: s35e's pool lost (1.04-1.12 x POOL=0's time, H100): a pool group's finish held up the
    # warp's later chunks (chains of waits). Finishes deferred to after the block's last chunk
    # (PDEFER=1) against them inline, pool sizes 0 / 1 / 2: timelines, interleaved rounds
    pk_ab gemv_defer_ab 'fused_packed$|packed POOL=0|packed POOL=1|PDEFER'
    ;;
s35e)  # ~4 min: CUDA fused_packed with a pool (the last ~2 chunks per block, whole groups, taken one
    # at a time by whichever block asks first; s35c/s35d: equal ranges ended 2.4 us apart on an H100):
    # timelines (each form checked again after its timed launches), interleaved rounds against pool
    # sizes 0 (static ranges alone) / 1 / 3 / 4, then harness rows beside tinygemm (issue 12)
    pk_ab gemv_pool_ab 'fused_packed$|packed POOL='
    cli 150 gemv_packed run --op gemv_lowbit --backend cuda --backend torch --variant fused_packed \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w4a16,n1000,k8192,b1 --case w4a16,n8192,k8192,b1
    ;;
s35d)  # ~4 min: CUDA fused_packed with the epoch finish (s35c: 3.2 / 4.0 % faster than the counter
    # form, H100) and slot 1's words loaded PPRE = 2 chunks before the end: the timeline, interleaved
    # rounds against PPRE 1 / 4 and the counter form, then harness rows beside tinygemm (issue 12)
    pk_ab gemv_ppre_ab 'fused_packed$|packed PEPOCH=0|packed PPRE'
    cli 150 gemv_packed run --op gemv_lowbit --backend cuda --backend torch --variant fused_packed \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16
    ;;
s35c)  # ~3 min: CUDA fused_packed's group finish with epoch-tagged partials (slot 0 polls, the others
    # post: s35b's timeline showed ~2 us per block from its last chunk to its end under the counter
    # and fences) against the counter form (PEPOCH=0): timelines, then interleaved rounds
    pk_ab gemv_epoch_ab 'fused_packed$|packed PEPOCH=0|PMEMONLY'
    ;;
s35b)  # ~1.5 min: where inside one launch CUDA fused_packed loses time (scripts/pk_timeline.py:
    # per-block clocks of each chunk's arrival and release, the producer's issues, x ready, ends),
    # registered shape, its memory path alone, and the ring depths / warp shapes recorded as slower
    pk_timeline w4a16,n16384,k16384,b1,bf16
    pk_timeline w4a16,n28672,k8192,b1,bf16
    ;;
s35a)  # ~1 min, prepared in session 34 (not run): Triton fused_dp4a's ring configs with their first 1
    # or 2 word tiles loaded before the dependent launch's wait (PEEL), so weights stream while
    # gemv_x_planes runs (s34c on H100s: that launch is 3.5 us of a 9.3 us fixed cost per call, and
    # PDL won none of it back at the ring configs), in interleaved rounds at issue 12's shapes
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_peel_ab_$c" gemv_lowbit triton --case "$c" --cap 0.5 --ab 100 \
            --only 'dp4a shape=(16, 1024, 4, 3)|dp4a shape=(8, 1024, 2, 4)|peel'
    done
    ;;
s34d)  # ~2 min: Triton fused_dp4a with x's planes made inside its one launch (IN_PLANES: no second
    # launch, 3.5 us of its 9.3 us fixed cost in s34c) against the registered form in interleaved
    # rounds at issue 12's shapes, then over N for its fixed cost (lost: 1.08 / 1.11 x the registered
    # form's time on an H100; removed after this run, it lives in commit 530412d)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_inplanes_ab_$c" gemv_lowbit triton --case "$c" --cap 0.5 --ab 60 \
            --only 'dp4a shape=(16, 1024, 4, 3)|dp4a shape=(8, 1024, 2, 4)|inplanes'
    done
    for n in 8192 32768; do
        probe 40 "gemv_inplanes_n$n" gemv_lowbit triton --case "w4a16,n$n,k16384" --dims "n=$n,k=16384,b=1,bits=4" \
            --dtype bf16 --cap 0.5 --only 'dp4a shape=(16, 1024, 4, 3)|inplanes shape=(16, 1024, 4, 3)'
    done
    ;;
s34c)  # ~3 min: the fixed cost per call of GEMV w4a16 (s34a on an H100: time = 11.9 us + bytes at
    # 3243 GB/s over N at K = 16384). Time against N at K = 16384 for Triton fused_dp4a (as registered,
    # launched plainly, and each of its two kernels alone), CUDA fused_dp4a / fused_packed and the
    # latter's memory path alone, tinygemm: the intercept of each is its fixed cost
    for n in 8192 16384 32768; do
        d="n=$n,k=16384,b=1,bits=4"
        probe 100 "gemv_fixed_triton_n$n" gemv_lowbit triton --case "w4a16,n$n,k16384" --dims "$d" --dtype bf16 \
            --cap 0.5 --only 'dp4a shape=(16, 1024, 4, 3)|dp4a plain shape=(16, 1024, 4, 3)|alone'
        probe 60 "gemv_fixed_cuda_n$n" gemv_lowbit cuda --case "w4a16,n$n,k16384" --dims "$d" --dtype bf16 \
            --cap 0.5 --only 'fused_dp4a$|fused_packed$|PMEMONLY'
        probe 60 "gemv_fixed_torch_n$n" gemv_lowbit torch --case "w4a16,n$n,k16384" --dims "$d" --dtype bf16 \
            --cap 0.5 --only 'tinygemm$'
    done
    # the timer's floor: CUDA vector_add on 2^16 values (768 KiB) and on 2^22 (48 MiB)
    for e in 16 22; do
        probe 40 "floor_cuda_2e$e" vector_add cuda --case "n=2^$e" --dims "n=$(( 1 << e ))" --dtype fp32 \
            --cap 0.5 --only 'vec4$'
    done
    ;;
s34b)  # ~4 min: is GEMV w4a16 bound by its instructions or by memory? The registered kernels (and
    # CUDA's memory-path-only forms) at N=16384, K=2048 and N=28672, K=1024 (15-17 MB: resident in
    # the 50 MB L2, so the 'hot' column, no flush, is the kernel fed from L2) beside the bench shape
    for nk in 16384:2048 28672:1024 16384:16384; do
        n=${nk%:*}; k=${nk#*:}
        for be in triton cuda torch; do
            probe 100 "gemv_l2_${be}_n${n}_k${k}" gemv_lowbit "$be" --case "w4a16,n$n,k$k" \
                --dims "n=$n,k=$k,b=1,bits=4" --dtype bf16 --cap 0.5 \
                --only 'fused_dp4a$|fused_packed$|fused_vec$|tinygemm$|dense$|PMEMONLY|DMEMONLY RPT=2 WARPS=16'
        done
    done
    ;;
s34a)  # ~2 min, prepared in session 33 (not run): does Triton fused_dp4a lose to the grid's last
    # partial wave? Its registered shapes at K = 16384 for N from 1.5 to 3 waves (an sm_90 compile
    # holds 9 programs of (8, 1024, 2, 4) and 5 of (16, 1024, 4, 3) per SM: N = 16384 is 1.72 / 1.55
    # waves, 28672 3.02 / 2.72); each row prints the waves its compile makes on this GPU. A sawtooth
    # of % of the ceiling against N, peaks at whole waves, says a stream-K form would pay
    for nn in 14256 16384 19008 21120 28512 28672 31680; do
        probe 60 "gemv_triton_waves_n$nn" gemv_lowbit triton --case "w4a16,n${nn},k16384" \
            --dims "n=$nn,k=16384,b=1,bits=4" --dtype bf16 --only 'dp4a shape=(8, 1024, 2, 4)|dp4a shape=(16, 1024, 4, 3)' --cap 0.5
    done
    ;;
s33e)  # ~5.5 min: s33c, then s32c's GEMV rows (session 33's last device minutes, asked for as an H200)
    subparts s33c
    cli 100 gemv_webgpu run --op gemv_lowbit --backend webgpu --backend torch --variant fused_dp4a \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16
    triton_dp4a_rows 100
    ;;
s33d)  # ~4 min: what s24b's 110 s per backend left unchecked on the GPU (session 33: triton stopped
    # at row 133 of 301, cuda at 493 of 557), and Triton splitk after its shared-memory fitting
    SOLBENCH_CACHE=/dev/shm/solbench-s33d cli 220 test_triton run --size test --check-only --backend triton \
        --op reduction --op scan --op softmax --op vector_add --timeout 60
    SOLBENCH_CACHE=/dev/shm/solbench-s33d cli 60 test_triton_splitk run --size test --check-only \
        --backend triton --op matmul --variant splitk --timeout 60
    SOLBENCH_CACHE=/dev/shm/solbench-s33d cli 100 test_cuda run --size test --check-only --backend cuda \
        --op softmax --op vector_add --timeout 60
    ;;
s33c)  # ~5 min: s33b's probe again with --ab rounds (each round times SDPA, the whole grid and the
    # split tail once each, in turn: under the H100's power cap s33b's rows sampled 1665-1965 MHz),
    # non-causal and causal (no split there: the 1-D grid against SDPA); then s18f's harness rows
    for c in b4h32s8192d128,bf16 b4h32s8192d128,causal,bf16; do
        probe 200 "attention_triton_ab_$c" attention triton --case "$c" \
            --only 'sdpa torch|flash whole cfg=(128, 64, 8, 3, 2)|flash cfg=(128, 64, 8, 3, 2)' --cap 1 --ab 100
    done
    subparts s18f
    ;;
s33b)  # ~5 min: Triton flash D128 non-causal with the split tail (session 33: the last partial wave's
    # rows split over the keys too) against the whole grid in one launch, the autotune's two best
    # configs each way (whole rows first); then flash D128 beside SDPA, both masks (s18f)
    probe 240 attention_triton_tail attention triton --case b4h32s8192d128,bf16 \
        --only 'flash whole|flash cfg=(128, 64, 8, 3, 2)|flash cfg=(128, 64, 8, 3)' --cap 1
    subparts s18f
    ;;
s33a)  # (ran on an H100 in session 33; its units and lazy probe rows were removed after it)
    # ~7 min: s32c on an H200 (session 32 got its first two steps only on an H100), then the
    # registered WebGPU fused_dp4a's persistent grid sized for 128 (assumed: WebGPU reports no unit
    # count), 132 (the H200's SMs), 264 and 66 units; last, Triton flash with a lazy rescale
    subparts s32c
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 90 "gemv_webgpu_$c" gemv_lowbit webgpu --case "$c" --only 'dp4a units=' --cap 0.5
    done
    # Triton flash D128 non-causal (0.896 × SDPA in s32a) with the rescale only on a growth past
    # 2^8 (LAZY; 11 → 21 bar.sync in the sm_90 PTX for the tile-wide test) beside the autotune's winner
    probe 150 attention_triton_lazy attention triton --case b4h32s8192d128,bf16 \
        --only 'cfg=(128, 64, 8, 3, 2)|flash lazy' --cap 1
    ;;
s32c)  # ~4 min: harness rows on an H200 of what session 32 registered from s32a / s32b — WebGPU
    # fused_dp4a with its team sums through subgroup shuffles (s32b, H100: +8-10 %) beside tinygemm,
    # Triton fused_dp4a as a dependent launch beside tinygemm; then Triton flash D128 beside SDPA
    # again (s32a: 0.896 / 0.94 ×)
    cli 150 gemv_webgpu run --op gemv_lowbit --backend webgpu --backend torch --variant fused_dp4a \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16
    triton_dp4a_rows 200
    subparts s18f
    ;;
s32b)  # ~2.5 min: s32a's WebGPU probe again with warm-up waiting for the SM clock (suite.timing's
    # ClockWait): in s32a every process began at 345-510 MHz and each row sampled a higher clock
    # than the one before it, so the order of the rows, not the shape, set the figures; then the
    # harness rows of Triton fused_dp4a as a dependent launch where the GPU has it (s32a's probe:
    # 71.0 / 73.5 % against 69.7 / 71.2 launched plainly)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 120 "gemv_webgpu_$c" gemv_lowbit webgpu --case "$c" --only 'dp4a shape=(4, 16, 1)|dp4a sgpf' \
            --cap 0.5
    done
    triton_dp4a_rows 200
    ;;
s32a)  # ~7 min: WebGPU fused_dp4a (issue 12: 39.6 / 41.4 %, 70 wanted; its packed dots are DP4A on
    # NVIDIA's Vulkan, 3.75 × the polyfill in session 31's dot4 probe) with session 31's options —
    # team sums through subgroup shuffles (SG: 2 barriers per four sums instead of 7 per sum, with
    # one workgroup per SM every team waits at each) and weights loaded a step ahead (PF) — beside
    # the registered shape; then s31b's harness rows (Triton fused_dp4a with the BK 1024 rings beside
    # tinygemm, Triton flash D128 with HALVES 2 beside SDPA), which ran on an H100 in session 31; last
    # the Triton rings as dependent launches
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 120 "gemv_webgpu_$c" gemv_lowbit webgpu --case "$c" --only 'dp4a shape=(4, 16, 1)|dp4a sgpf' \
            --cap 0.5
    done
    triton_dp4a_rows 200
    subparts s18f
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do  # the rings as dependent launches
        probe 60 "gemv_triton_$c" gemv_lowbit triton --case "$c" \
            --only 'dp4a shape=(16, 1024, 4, 3)|dp4a shape=(8, 1024, 2, 4)|dp4a plain shape=(16, 1024, 4, 3)' \
            --cap 0.5  # (the rings' dependent launches are the 'dp4a shape' rows since session 32)
    done
    ;;
s31b)  # ~6 min, for a short budget: the dot4 probe (s30a), harness rows of Triton
    # fused_dp4a beside tinygemm (s26b's first step) and of Triton flash D128 beside SDPA (s18f), then
    # the wider dp4a rings (each part's files are written before the next starts)
    subparts s30a
    triton_dp4a_rows 200
    subparts s18f
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'dp4a wide' --cap 0.5
    done
    ;;
s30b)  # ~7 min: s29a (Triton softmax split_row through TMA, scan through TMA) then s25b (the
    # OpenCL/WebGPU softmax test cases checked on the GPU), one call
    subparts s29a s25b
    ;;
s30a)  # ~0.5 min: does WGSL's dot4I8Packed reach the H200 as DP4A or as naga's polyfill (the WebGPU
    # fused_dp4a GEMV's 39.6 / 41.4 % against 70 wanted)? Both forms checked, then timed. Its first run
    # (session 31: 1.11 ×) measured neither: chains in arrays, 16 workgroups on 132 SMs
    step "dot4_probe webgpu"
    timeout 60 "$PY" scripts/dot4_probe.py --out "$W" > "$W/dot4_probe.txt" 2>&1
    cat "$W/dot4_probe.txt" >> "$OUT/log-$PART.txt"
    ;;
s29c)  # ~7 min: Triton fused_dp4a (issue 12: 61.7 / 63.2 % of the ceiling, 85 wanted) with its word tiles
    # through a cp.async ring (tl.range num_stages: Triton 3.6 stages loads that feed no tl.dot only
    # when the loop asks; 32–120 KiB in flight per SM in the sm_90 compile against ~32 KiB for the
    # registered form's one tile loaded ahead into registers), and as a programmatic dependent launch
    # of the x-planes kernel (launch and first word tile under the small kernel's few µs), beside
    # the registered configs; both w4a16 bf16 cases, one config per row (20), each checked first
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 200 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'dp4a' --cap 0.5
    done
    ;;
s29b)  # ~5.5 min: Triton flash at D128 (issue 12: 0.80–0.82 / 0.87–0.89 × SDPA, 0.90 wanted), session 29's
    # attention_flash_pp — two 128-row query halves per program, steps interleaved; in its sm_90 SASS
    # half b's Q·Kᵀ HGMMAs are issued among half a's MUFU.EX2 and half a's P·V among half b's, where
    # the one-tile kernel's two warpgroups meet at each stage's barrier and wait together (255
    # registers, no spills) — beside the autotune's two D128 winners, one config per row
    for c in b4h32s8192d128,bf16 b4h32s8192d128,causal,bf16; do
        probe 160 "attention_triton_$c" attention triton --case "$c" \
            --only 'cfg=(128, 64, 8, 3)|cfg=(128, 128, 8, 2)|pingpong' --cap 1
    done
    ;;
s28c)  # ~6 min: the streamed Triton scan look-back's window (8, 32) and 4 warps beside the registered
    # 16384 / 4096 / 8 warps / 16, then s25a's OpenCL softmax rows beside torch (without its test-size step)
    step "scan_probe triton windows"
    timeout 70 "$PY" scripts/scan_probe.py triton --dtype fp32 \
        --only "l2 tile=16384 sub=4096 warps=8 window|l2 tile=16384 sub=4096 warps=4" --out "$W" \
        > "$W/scan_probe_triton.txt" 2>&1
    cat "$W/scan_probe_triton.txt" >> "$OUT/log-$PART.txt"
    cli 290 softmax_opencl run --op softmax --backend opencl --backend torch --variant fused_row \
        --variant online --variant split_row --variant eager --variant compile --timeout 120 --time-cap 2
    ;;
s28b)  # ~7 min: Triton scan after session 28 registered the streamed look-back (scan_lookback_l2, 16384-value
    # tiles in 4096-value steps on 8 warps: 75.3 % in s28a): more of its shapes beside the register-held
    # 16384 tile, the two leaders again in a second process; harness rows beside torch (fp32, i32); then
    # Triton persistent matmul beside cuBLAS once more (issue 8's parity cell)
    step "scan_probe triton"
    timeout 170 "$PY" scripts/scan_probe.py triton --dtype fp32 \
        --only "lookback tile=16384 warps=4 window=16|l2" --out "$W" > "$W/scan_probe_triton.txt" 2>&1
    cat "$W/scan_probe_triton.txt" >> "$OUT/log-$PART.txt"
    mkdir -p "$W/again"
    timeout 60 "$PY" scripts/scan_probe.py triton --dtype fp32 \
        --only "lookback tile=16384 warps=4 window=16|l2 tile=16384 sub=4096 warps=8" --out "$W/again" \
        > "$W/scan_probe_triton_again.txt" 2>&1
    cat "$W/scan_probe_triton_again.txt" >> "$OUT/log-$PART.txt"
    SOLBENCH_CACHE=/dev/shm/solbench-s28b cli 170 scan run --op scan --backend triton --backend torch \
        --variant decoupled_lookback --variant reduce_then_scan --variant cumsum --timeout 60
    cli 150 matmul_triton run --op matmul --backend triton --backend torch --variant persistent \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --timeout 60
    ;;
s28a)  # ~5 min, run in session 28 at a7ee76c (results/nvidia-h200/probes-20261205-session28/): Triton
    # softmax split_row 4096×131072 fp32, the registered form (part held in registers,
    # one program per SM) beside session 28's softmax_split_l2 (part streamed in tiles and re-read from
    # L2 after the exchange: ~52 registers, several programs per SM) at parts × tiles, with and without
    # the eviction hints; then Triton scan's 16384-value look-back tile (H100 +3.5 % in s27a) on the H200
    # beside the same streaming form of the scan (scan_lookback_l2). The softmax form lost and was removed
    # (its labels exist only at a7ee76c)
    probe 260 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|split_row l2'
    step "scan_probe triton 16384 tile"
    timeout 150 "$PY" scripts/scan_probe.py triton --dtype fp32 --only "lookback tile=8192 warps=4 window=16|lookback tile=16384 warps=4 window=16|l2" --out "$W" \
        > "$W/scan_probe_triton.txt" 2>&1
    cat "$W/scan_probe_triton.txt" >> "$OUT/log-$PART.txt"
    ;;
s27a)  # ≤ 9 min: Triton scan decoupled_lookback's tile and warps with the relaxed ticket (README: 16384-value
    # tiles reached 73.6 % with the acq_rel ticket in round 6, the registered 8192 64.7 → 68.7 % with
    # the relaxed one), and the new WebGPU single-pass scan's shapes beside the three-pass one (each
    # configuration checked first), fp32; then both look-backs as harness rows beside torch, fp32, i32
    for b in triton webgpu; do
        step "scan_probe $b fp32"
        timeout 150 "$PY" scripts/scan_probe.py $b --dtype fp32 --only "${SCAN_ONLY-}" --out "$W" \
            > "$W/scan_probe_$b.txt" 2>&1
        cat "$W/scan_probe_$b.txt" >> "$OUT/log-$PART.txt"
    done
    SOLBENCH_CACHE=/dev/shm/solbench-s27a cli 240 scan run --op scan --backend triton --backend webgpu \
        --backend torch --variant decoupled_lookback --variant reduce_then_scan --variant cumsum --timeout 60
    ;;
s26b)  # ~3 min: Triton fused_dp4a as registered beside tinygemm and dense bf16 GEMV at issue 12's w4a16
    # bf16 shapes (harness rows), and every GEMV test case of Triton checked on the GPU
    triton_dp4a_rows 200
    SOLBENCH_CACHE=/dev/shm/solbench-s26b cli 90 gemv_triton_test run --size test --op gemv_lowbit \
        --backend triton --variant fused_dp4a --check-only --timeout 60
    ;;
s26a)  # ~5 min, run in session 26 on an H100 at commit 68513de (results/nvidia-h100-80gb-hbm3/
    # probes-20261205-session26/): Triton fused_dp4a's LEAN form (chained dp4a seeds, words summed in
    # int32 by 4 before the int->float, unmasked loads where K is a multiple of BK) beside the
    # registered form at every config, then the w4a16 test cases at one LEAN config. LEAN lost and
    # was removed: its probe labels exist only at 68513de (later, the second loop matches nothing)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 120 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'dp4a' --cap 1
    done
    for c in w4a16,n1000,k1024,b1 w4a16,n64,k384,b4 w4a16,n13,k128,b8; do
        probe 40 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'dp4a lean shape=(32, 512' --cap 0.2
    done
    ;;
s25a)  # ~9.5 min: OpenCL softmax after session 25 (97511d4: split_row's wait bounded, a late sibling
    # computed by its waiter; work-groups within CL_DEVICE_MAX_WORK_GROUP_SIZE) beside torch at the
    # bench shapes (README: opencl split_row 4096×131072 measured with the unbounded wait), then the
    # OpenCL/WebGPU softmax test cases on the GPU (check only)
    # (session 28, s28c on an H100: the torch rows come first and seven of them took 281 s — inputs,
    # references and checks of 1–2 GiB cases — so this step gets most of the call)
    cli 560 softmax_opencl run --op softmax --backend opencl --backend torch --variant fused_row \
        --variant online --variant split_row --variant eager --variant compile --timeout 120 --time-cap 2
    ;;
s25b)  # ~2 min: s25a's second step, the OpenCL/WebGPU softmax test cases on the GPU (check only)
    SOLBENCH_CACHE=/dev/shm/solbench-s25b cli 120 softmax_test run --size test --op softmax --backend opencl \
        --backend webgpu --check-only --timeout 60
    ;;
s24b)  # ≤ 7.5 min: every test case of cuda, opencl and webgpu checked on the GPU (check only); with
    # s24c, every backend's (session 33 ran the first form, 110 s each: cuda stopped at row 493 of 557
    # and triton at 133 of 301 — s33d checked the rest)
    test_cases 200 cuda
    test_cases 110 opencl
    test_cases 110 webgpu
    ;;
s24c)  # ≤ 7 min: s24b's second half, every test case of triton and torch checked on the GPU
    test_cases 300 triton
    test_cases 110 torch
    ;;
s24a)  # ~2 min: host time of a 2^28-element row after session 24's inputs/references on every core and
    # the pieced input comparison: the three OpenCL rows whose phases_s session 22 recorded (run 126950:
    # data 18.9 / 21.3 / 21.8 s, check 2.3 / 10.1 / 12.0 s), cold reference cache, then again warm
    for c in cold warm; do
        [ $c = cold ] && rm -rf /dev/shm/solbench-s24a
        SOLBENCH_CACHE=/dev/shm/solbench-s24a cli 120 phases_$c run --op vector_add --op reduction --op scan \
            --backend opencl --variant vec4 --variant coarsened --variant decoupled_lookback --dtype fp32 \
            --time-cap 0.5 --timeout 60
        "$PY" -c "import json,sys; [print(r['op'], r['variant'], r['case'], r['status'], round(r.get('wall_s', 0), 1), r.get('phases_s')) for r in json.load(open(sys.argv[1]))['results']]" "$W/phases_$c.json" >> "$OUT/log-$PART.txt" 2>&1
    done
    # WebGPU softmax bf16 test cases (odd N through fp32 scratch since session 24) on the GPU
    cli 90 softmax_webgpu_bf16_test run --size test --op softmax --backend webgpu --dtype bf16 --timeout 60
    ;;
s23h)  # ~2 min: CUDA fused_dp4a's loads and x conversion alone (DMEMONLY) beside it and fused_packed,
    # plain reads of the same bytes on the same card, WebGPU fused_dp4a harness rows at its registered shape
    w4_probes 70 'fused_dp4a$|fused_packed$|DMEMONLY'
    step "read_ceiling"
    timeout 90 "$PY" scripts/read_ceiling.py --out "$W" --only 'ldg u4 2x512|bulk 4x32K 1x256$' \
        > "$W/read_ceiling.txt" 2>&1
    tail -n 12 "$W/read_ceiling.txt" >> "$OUT/log-$PART.txt"
    SOLBENCH_CACHE=/dev/shm/solbench-s23h cli 90 gemv_dp4a_webgpu run --op gemv_lowbit --backend webgpu \
        --variant fused_dp4a --variant fused_vec --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --timeout 60
    ;;
s23g)  # ~2.5 min: WebGPU fused_dp4a — the GEMV test cases on the GPU, its shapes beside fused_vec at the
    # w4a16 bf16 peer cases, harness rows
    SOLBENCH_CACHE=/dev/shm/solbench-s23g cli 90 dp4a_webgpu_test run --size test --op gemv_lowbit \
        --backend webgpu --variant fused_dp4a --timeout 60
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 70 "gemv_webgpu_$c" gemv_lowbit webgpu --case "$c" --only 'fused_dp4a$|fused_vec$|dp4a' --cap 1
    done
    SOLBENCH_CACHE=/dev/shm/solbench-s23g cli 100 gemv_dp4a_webgpu run --op gemv_lowbit --backend webgpu \
        --variant fused_dp4a --variant fused_vec --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --timeout 60
    ;;
s23f)  # ~4 min: Triton fused_dp4a — every GEMV test case on the GPU, its configs beside fused_vec at
    # the w4a16 bf16 peer cases, then harness rows beside tinygemm and the CUDA/OpenCL best
    SOLBENCH_CACHE=/dev/shm/solbench-s23f cli 120 dp4a_triton_test run --size test --op gemv_lowbit \
        --backend triton --variant fused_dp4a --timeout 60
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'fused_dp4a$|fused_vec$|dp4a' --cap 1
    done
    SOLBENCH_CACHE=/dev/shm/solbench-s23f cli 150 gemv_dp4a_triton run --op gemv_lowbit --backend triton \
        --backend torch --variant fused_dp4a --variant fused_vec --variant tinygemm \
        --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 --timeout 90
    ;;
s23d|s23e)  # ~2 min (s23e: the ring's first steps issued before x is converted): fused_dp4a's cp.async ring shapes beside its register path and fused_packed (the ring
    # forms are checked first, as every probe row)
    w4_probes 110 'fused_packed$|fused_dp4a$|dp4a ring|dp4a RPT=2 WARPS=32'
    ;;
s23c)  # ~5 min: fused_dp4a's harness rows beside fused_packed / fused_mma / tinygemm / dense (bf16 peer
    # cases), then Nsight Compute's reading of the CUDA kernel
    SOLBENCH_CACHE=/dev/shm/solbench-s23c cli 200 gemv_dp4a run --op gemv_lowbit --backend cuda \
        --backend torch --variant fused_dp4a --variant fused_packed --variant tinygemm --variant dense \
        --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 --timeout 90
    SOLBENCH_CACHE=/dev/shm/solbench-s23c cli 120 gemv_dp4a_cl run --op gemv_lowbit --backend opencl \
        --variant fused_dp4a --variant fused_mma --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --timeout 90
    step "ncu fused_dp4a"
    timeout 240 "$PY" scripts/ncu_limiter.py --out "$W/ncu" gemv_lowbit/cuda/fused_dp4a/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/cuda/fused_dp4a/w4a16,n28672,k8192,b1,bf16 > "$W/ncu.txt" 2>&1
    tail -n 6 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s23a|s23b)  # ~2 min (s23a at commit 8ade558, s23b after the prefetch and 32-warp shapes): fused_dp4a (w4a16 on dp4a, x in byte planes) — every GEMV test case on the GPU
    # (CUDA and OpenCL), then its shapes beside fused_packed / fused_mma at both w4a16 bf16 peer cases
    SOLBENCH_CACHE=/dev/shm/solbench-s23a cli 120 dp4a_test run --size test --op gemv_lowbit --backend cuda \
        --backend opencl --variant fused_dp4a --timeout 60
    w4_probes 110 'fused_packed$|fused_dp4a$|dp4a'
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_opencl_$c" gemv_lowbit opencl --case "$c" --only 'fused_mma$|fused_dp4a$|dp4a' --cap 1
    done
    ;;
x1b)  # ~7 min (the rest of next22a): the four memory-bound ops' OpenCL rows (fp32 cases) under the
    # command-events sample, cache in memory, then cl_window's gap check of several-kernel variants
    SOLBENCH_CACHE=/dev/shm/solbench-x1b cli 330 opencl_mem run --op vector_add --op grayscale --op reduction \
        --op scan --backend opencl --case n=2^28 --case 8192x8192 --timeout 150
    step "cl_window"  # gaps between the kernels of several-kernel variants behind the gate (busy < events)
    OUT="$W" timeout 150 "$PY" scripts/cl_window.py gemv_lowbit/dequant_then_gemv/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/fused_mma/w4a16,n16384,k16384,b1,bf16 scan/kogge_stone/n=2^28 >> "$OUT/log-$PART.txt" 2>&1
    ;;
x1a)  # ~5 min: issue 13's identity on a one-GPU host (every backend on the one card, slug
    # nvidia-h200, gpu0 selects it), then next22a's OpenCL fused_mma check and GEMV rows
    step "identity_check"
    timeout 150 "$PY" scripts/identity_check.py --out "$W" >> "$OUT/log-$PART.txt" 2>&1
    timeout 60 "$PY" -m suite.cli doctor >> "$OUT/log-$PART.txt" 2>&1
    cli 90 gpu0 run --device gpu0 --op vector_add --variant vec4 --variant eager --variant grid_stride \
        --variant large_block --case n=2^28 --time-cap 0.5 --timeout 60
    cli 120 gemv_opencl_test run --op gemv_lowbit --backend opencl --variant fused_mma --size test --check-only --timeout 60
    cli 150 opencl_gemv run --op gemv_lowbit --backend opencl --backend torch --variant fused_mma \
        --variant fused_vec --variant tinygemm --timeout 60
    ;;
x2a)  # issue 13 on nvidia-h200-x2 (≤ 9.5 min): which card each backend's device sits on, the
    # sweep on one GPU (the wall-time reference), then spread over both GPUs (each item once)
    step "identity_check"
    timeout 80 "$PY" scripts/identity_check.py --out "$W" >> "$OUT/log-$PART.txt" 2>&1
    x2_sweep 300 one_gpu --device gpu0
    x2_sweep 170 spread --devices all
    ;;
x2s)  # issue 13 with little device time left (≤ 4.5 min): x2a without the 2^28-element cases
    # (vector_add, reduction, scan: 1–2 minutes of host-side checking on one GPU)
    step "identity_check"
    timeout 60 "$PY" scripts/identity_check.py --out "$W" >> "$OUT/log-$PART.txt" 2>&1
    X2_BIG= x2_sweep 130 one_gpu --device gpu0
    X2_BIG= x2_sweep 80 spread --devices all
    ;;
x2c)  # issue 13 (≤ 9 min): the same sweep on each GPU at once (per-card medians of every kernel)
    x2_sweep 400 replicate --devices all --replicate
    ;;
next22a)  # ~9 min (prepared in session 21, not run): OpenCL fused_mma checked after its step moved
    # into tc_pairs.h (every test case, then the bench rows beside fused_vec and tinygemm), then the
    # four memory-bound ops' OpenCL rows under the command-events sample (OpenCL alone in each call:
    # s21f's torch.compile rows used its whole call)
    cli 120 gemv_opencl_test run --op gemv_lowbit --backend opencl --variant fused_mma --size test --check-only --timeout 60
    cli 150 opencl_gemv run --op gemv_lowbit --backend opencl --backend torch --variant fused_mma \
        --variant fused_vec --variant tinygemm --timeout 60
    cli 240 opencl_mem run --op vector_add --op grayscale --op reduction --op scan --backend opencl --timeout 60
    step "cl_window"  # gaps between the kernels of several-kernel variants behind the gate (busy < events)
    OUT="$W" timeout 150 "$PY" scripts/cl_window.py gemv_lowbit/dequant_then_gemv/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/fused_mma/w4a16,n16384,k16384,b1,bf16 scan/kogge_stone/n=2^28 >> "$OUT/log-$PART.txt" 2>&1
    ;;
next22b)  # ~10 min (prepared, not run): OpenCL softmax rows under the command-events sample (s21g
    # ran 4 of its 24 rows in 118 s)
    cli 580 opencl_softmax run --op softmax --backend opencl --timeout 60
    ;;
next22c)  # ~10 min (prepared, not run): OpenCL matmul and attention rows under the new sample
    cli 300 opencl_matmul run --op matmul --backend opencl --timeout 120
    cli 280 opencl_attention run --op attention --backend opencl --timeout 120
    ;;
s21g)  # (ran at commit 7eb88f3; softmax cut after 4 of 24 rows) ~4 min: OpenCL rows only (s21f spent its time on torch.compile rows and saved no OpenCL
    # row): the GEMV's OpenCL variants beside tinygemm, then OpenCL softmax, under the new sample
    cli 130 opencl_gemv run --op gemv_lowbit --backend opencl --backend torch --variant fused_mma \
        --variant fused_vec --variant tinygemm --timeout 60
    cli 120 opencl_softmax run --op softmax --backend opencl --timeout 60
    ;;
s21f)  # (ran at commit f342acb; both calls timed out on torch rows first: no OpenCL row saved) ~9 min: OpenCL rows under the new sample (the timed commands' own events, start
    # "user-event-gate, command events") beside torch in the same run: GEMV and softmax, then the
    # four memory-bound ops
    cli 280 opencl_gemv_softmax run --op gemv_lowbit --op softmax --backend opencl --backend torch --timeout 60
    cli 260 opencl_mem run --op vector_add --op grayscale --op reduction --op scan --backend opencl --backend torch \
        --timeout 60
    ;;
s21e)  # (ran at commit 2c03b27) ~1 min: the OpenCL window against the timed kernels' own events, ungated events and a host
    # batch (scripts/cl_window.py; s21d: a 32-element vector_add reads 22–26 µs through OpenCL, 3 µs
    # through CUDA, Triton and torch, 5 µs through WebGPU)
    step "cl_window"
    OUT="$W" timeout 240 "$PY" scripts/cl_window.py vector_add/naive/n32:n=32 vector_add/naive/n2^20:n=1048576 \
        vector_add/naive/n2^24:n=16777216 gemv_lowbit/fused_mma/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/fused_vec/w4a16,n16384,k16384,b1,bf16 gemv_lowbit/fused_mma/w4a16,n28672,k8192,b1,bf16 \
        >> "$OUT/log-$PART.txt" 2>&1
    ;;
s21d)  # (ran at commit bbdb28f) ~5 min: the timer's floor per backend (vector_add on 32 elements: the window of a kernel that
    # does nothing measurable; s21a–c: OpenCL windows read 5–8 µs above a host-timed batch of the
    # same GEMV, CUDA's 0–2 µs), then OpenCL fused_mma registered (US 1, 128 registers): every test
    # case checked on the GPU and every bench case beside fused_vec, tinygemm and the dense GEMV
    for b in cuda opencl webgpu triton torch; do
        probe 60 "floor_$b" vector_add "$b" --case n32 --dims n=32 --cap 1
    done
    cli 200 gemv_opencl_test run --op gemv_lowbit --backend opencl --variant fused_mma --size test --check-only --timeout 60
    cli 300 gemv_opencl run --op gemv_lowbit --backend opencl --backend torch --variant fused_mma \
        --variant fused_vec --variant tinygemm --variant dense --timeout 60
    ;;
s21c)  # (ran at commit f47c918) ~1 min: OpenCL fused_mma with its registers capped (-cl-nv-maxrregcount; s21b: 168
    # registers, so 3 blocks of 4 warps per SM and K=N=16384's 512 blocks in 1.3 waves)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_opencl_$c" gemv_lowbit opencl --case "$c" --only 'mma' --cap 1
    done
    ;;
s21b)  # (ran at commit 6e45de6: the ring no faster, 41–47 / 35–41 %) ~1 min: OpenCL fused_mma with a cp.async ring in local memory (STAGES ≥ 2, inline PTX)
    # beside the register prefetch (s21a: 44–50 % of the ceiling, fused_vec 39–41 %)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_opencl_$c" gemv_lowbit opencl --case "$c" --only 'mma' --cap 1
    done
    ;;
s21a)  # (ran at commit d4f2e52) ~6 min: the new OpenCL fused_mma (gemv_lowbit_mma: CUDA fused_vec's mma.sync kernel in
    # OpenCL C through inline PTX) — its shapes at both w4a16 bf16 cases, every GEMV test case
    # checked on the GPU, then every bench case beside fused_vec and tinygemm
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_opencl_$c" gemv_lowbit opencl --case "$c" --only 'mma|fused_vec$' --cap 1
    done
    cli 200 gemv_opencl_test run --op gemv_lowbit --backend opencl --variant fused_mma --size test --check-only --timeout 60
    cli 300 gemv_opencl run --op gemv_lowbit --backend opencl --backend torch --variant fused_mma \
        --variant fused_vec --variant tinygemm --variant dense --timeout 60
    ;;
next21a)  # (ran in session 21: pool lost, 61.6 / 62.7 % at 5 %, reverted after) ~3 min (prepared in session 20, not run yet): gemv_lowbit_pkb — fused_packed with the last
    # 5–20 % of its row groups claimed chunk by chunk, each claim taken one chunk ahead (s20l's
    # per-copy claim lost; s20j: SMs active 89 % of the cycles with static ranges alone) — beside
    # the registered fused_packed (its group finish moved into pk_finish after 94afec: re-measured
    # here), then the w4a16 batch-1 harness rows beside tinygemm
    w4_probes 150 'fused_packed|pool=|PMEMONLY'
    cuda_w4_rows 240 fused_vec fused_packed
    ;;
s20l)  # (ran at commit 19e3e9c, reverted after) gemv_lowbit_pk with the last 10 % of its row groups
    # in a pool the blocks' producers claim chunk by chunk (one atomicAdd before each pool copy):
    # it lost badly (58.5 / 57.0 %; pool 0: 72.5 / 70.0, all groups pooled: 33.6 / 34.8 %) and its
    # N = 1000 row failed its check (static ranges with fewer chunks than blocks leave empty blocks
    # counted among a group's parts, so no block finished the group)
    w4_probes 150 'fused_vec$|fused_packed|pool=|PMEMONLY'
    cuda_w4_rows 240 fused_vec fused_tma fused_packed
    ;;
s20k)  # ~1.5 min: gemv_lowbit_pk with two blocks per SM (two producers and rings of 1–4 stages each)
    # beside the registered one block of 3 stages, and without the launch bound's one-block minimum
    # (PMINB=0: 71 registers instead of 92)
    w4_probes 150 'fused_packed|x2/SM|PMINB'
    ;;
s20j)  # (run as a direct command at 45f8c2e) Nsight Compute's limiter reading of fused_packed
    # (gemv_lowbit_pk, 3 stages) at both w4a16 bf16 cases
    step "ncu limiters"
    timeout 200 "$PY" scripts/ncu_limiter.py --out "$W/ncu" gemv_lowbit/cuda/fused_packed/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/cuda/fused_packed/w4a16,n28672,k8192,b1,bf16 > "$W/ncu.txt" 2>&1
    tail -n 40 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s20i)  # (run as a direct command at 45f8c2e) gemv_lowbit_pk shapes with 2–3 stages beside the
    # registered one (s20h's probe filter matched none of them)
    w4_probes 100 'fused_packed|STAGES=2|STAGES=3'
    ;;
s20h)  # ~3 min: gemv_lowbit_pk with 3 stages registered (s20g: 77.0 / 74.0 % against 4 stages'
    # 76.0 / 71.9 %) beside 2-stage and other shapes, then the w4a16 batch-1 harness rows beside
    # tinygemm at the session's final sources
    w4_probes 150 'fused_vec$|fused_packed|STAGES=[23]|PMEMONLY'
    cuda_w4_rows 240 fused_vec fused_tma fused_packed
    ;;
s20g)  # ~3 min: fused_packed as gemv_lowbit_pk — 128-row groups, each consumer warp its own 16 rows
    # for a block's whole range (no per-tile cross-warp sum, no named barrier), a group spanning
    # blocks finished by the last (s20f: a plain bulk read of this ring shape and split reaches
    # 91.1 / 89.2 %, the tile-flushing kernel's memory path 85 / 81 %) — its shapes and memory path
    # beside fused_vec, then the w4a16 batch-1 harness rows beside tinygemm
    w4_probes 150 'fused_vec$|packed'
    cuda_w4_rows 240 fused_vec fused_tma fused_packed
    ;;
s20f)  # ~1 min: does fused_packed's work split cost its memory path 6 points? read_ceiling's bulk ring
    # of 4 × 32 KiB (91.4 / 88.8 % in s19a, chunks dealt round-robin over the SMs) beside the same
    # ring with one contiguous range of chunks per block (CHUNK), and both with fused_packed's
    # 33 KiB stages and 288 threads
    step "read_ceiling"
    timeout 200 "$PY" scripts/read_ceiling.py --out "$W" --only 'bulk 4x3' > "$W/read_ceiling.txt" 2>&1
    cat "$W/read_ceiling.txt" >> "$OUT/log-$PART.txt"
    ;;
s20e)  # ~1.5 min: the w4a16 batch-1 harness rows at the session's final sources: fused_vec
    # (gemv_lowbit_tc), fused_tma (2-D TMA boxes of the format's W), fused_packed (the repacked
    # stream, one bulk copy per stage) and tinygemm
    cuda_w4_rows 240 fused_vec fused_tma fused_packed
    ;;
s20d)  # (ran at commit 08c0c0a, since reverted) fused_packed with an LOP3 unpack — four LOP3 per
    # word, the shifts as IMAD.HI (or SHF: TSHF), TSX (bf16: no HFMA2, 136·Σx per group): all lost
    # against the PRMT unpack (s20c's "packed TEARLY=0" 74.2 / 68.6 %): IMAD.HI 59.6 / 55.2 %,
    # SHF 66.2 / 60.8 %, TSX 65.5 / 60.3 %
    w4_probes 150 'fused_vec$|packed'
    cuda_w4_rows 240 fused_vec fused_packed
    ;;
s20c)  # (ran at commit 2330753, since reverted) gemv_lowbit_tma with each warp's stage words read
    # into registers and the stage released before the unpack and mma (TEARLY): it lost (packed
    # 71.7 / 64.9 % against 74.2 / 68.6 % without; fused_tma 58.5 / 53.4 against 68 %)
    w4_probes 150 'fused_vec$|packed|tma KW=8 STAGES=4'
    cuda_w4_rows 240 fused_vec fused_tma fused_packed
    ;;
s20b)  # ~5 min: fused_packed with x copied as it is (packed words in x's order: no fragment-order
    # staging loop) — shapes and memory path beside fused_vec, the harness rows beside tinygemm,
    # then Nsight Compute's limiter reading of fused_packed (w4a16 bf16 K=N=16384)
    w4_probes 150 'fused_vec$|packed'
    cuda_w4_rows 240 fused_vec fused_packed
    step "ncu limiters"
    timeout 200 "$PY" scripts/ncu_limiter.py --out "$W/ncu" gemv_lowbit/cuda/fused_packed/w4a16,n16384,k16384,b1,bf16 \
        > "$W/ncu.txt" 2>&1
    tail -n 40 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s20a)  # ~6 min: fused_packed — gemv_lowbit_tma over W and scales repacked once into the order each
    # SM reads them (one contiguous 33 KiB bulk copy per stage instead of two 2-D tensor copies,
    # whose memory path stopped at 82–83 %): its shapes and memory path beside fused_tma and
    # fused_vec, then the w4a16 batch-1 harness rows beside tinygemm
    w4_probes 150 'fused_vec$|tma KW=8 STAGES=4|TMEMONLY|packed'
    cuda_w4_rows 240 fused_vec fused_tma fused_packed
    ;;
s19h)  # ~3 min: Nsight Compute's limiter reading of fused_tma (memory path 82 %, kernel 68 %) beside
    # fused_vec, w4a16 bf16 K=N=16384 (scripts/ncu_limiter.py: stall reasons, issue slots, DRAM)
    step "ncu limiters"
    timeout 200 "$PY" scripts/ncu_limiter.py --out "$W/ncu" gemv_lowbit/cuda/fused_tma/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/cuda/fused_vec/w4a16,n16384,k16384,b1,bf16 > "$W/ncu.txt" 2>&1
    tail -n 40 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
s19g)  # ~1.5 min: the w4a16 batch-1 harness rows at the session's final sources: fused_vec
    # (gemv_lowbit_tc), fused_tma (gemv_lowbit_tma, back to 8 consumer warps) and tinygemm
    cuda_w4_rows 240 fused_vec fused_tma
    ;;
s19f)  # ~4 min: gemv_lowbit_tma with 16 consumer warps and/or four mma chains per step (s19e: with
    # 8 warps 68.3 / 62.2 % against a memory path of 83.2 / 79.5 %), then the w4a16 batch-1
    # harness rows: fused_vec (gemv_lowbit_tc), the new fused_tma variant and tinygemm
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 150 "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|tma|fused_vec RT=2$' --cap 1
    done
    cuda_w4_rows 240 fused_vec fused_tma
    ;;
s19e)  # ~4 min: gemv_lowbit_tma with the group scales in the TMA stages (s19d: consumer-side scale
    # loads stalled each stage on DRAM: 40–52 % against a memory path of 80–83 %), its shapes and
    # memory path beside gemv_lowbit_tc, then the w4a16 batch-1 harness rows beside tinygemm
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 150 "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|tma|fused_vec RT=2$' --cap 1
    done
    cuda_w4_rows 240 fused_vec
    ;;
s19d)  # ~5 min: gemv_lowbit_tma with one 2-D TMA copy per 16-row stage (s19c: 512-byte 1-D copies
    # were the limiter) — its shapes and memory path beside gemv_lowbit_tc at both w4a16 bf16
    # cases, then every w4a16 batch-1 bench case as harness rows beside tinygemm
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 150 "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|tma|fused_vec RT=2$' --cap 1
    done
    cuda_w4_rows 240 fused_vec
    ;;
s19c)  # ~6 min: why gemv_lowbit_tma ran at 19.6 % (s19b, 160 us where its plain TMA read took 35):
    # plain reads of its chunk shape (16 copies of 512 bytes per 8 KiB stage, contiguous or from 16
    # rows, issued by one thread or 16 lanes), then its shapes, its memory path alone (TMEMONLY)
    # and 16-lane issue (TPAR) beside gemv_lowbit_tc
    step "read_ceiling"
    timeout 120 "$PY" scripts/read_ceiling.py --out "$W" --sizes 138477568 \
        --only 'ldg u4 2x512|bulk 4x32K 1x256$|bulk 8x8K|rows' > "$W/read_ceiling.txt" 2>&1
    cat "$W/read_ceiling.txt" >> "$OUT/log-$PART.txt"
    probe 250 gemv_cuda gemv_lowbit cuda --case w4a16,n16384,k16384,b1,bf16 --only 'fused_vec$|tma|fused_vec RT=2$' --cap 1
    ;;
s19b)  # ~5 min: CUDA w4a16 at batch 1 through gemv_lowbit_tma (TMA bulk ring, one block per SM,
    # chunks split evenly) — its shapes beside the cp.async-ring gemv_lowbit_tc (RT=2, registered
    # before), then every w4a16 batch-1 case as harness rows beside tinygemm
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 90 "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|tma|fused_vec RT=2$' --cap 1
    done
    cli 240 gemv_cuda run --op gemv_lowbit --backend cuda --backend torch --variant fused_vec \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w4a16,n8192,k8192,b1 --case w4a16,n16384,k16384,b1 --case w4a16,n28672,k8192,b1 \
        --case w4a16,n1000,k8192,b1 --case w4a16,n1000,k1024,b1
    ;;
s19a)  # ~4 min: what one CUDA kernel's plain read of the GEMV cases' bytes reaches, by read form
    # (scripts/read_ceiling.py: 16-byte loads with 1–16 in flight, no-L1 256-byte-L2 loads, chunks,
    # TMA bulk rings), beside torch's reads of the same bytes (size_ceiling.py) in the same call
    step "read_ceiling"
    timeout 300 "$PY" scripts/read_ceiling.py --out "$W" > "$W/read_ceiling.txt" 2>&1
    cat "$W/read_ceiling.txt" >> "$OUT/log-$PART.txt"
    step "size_ceiling"
    timeout 150 "$PY" scripts/size_ceiling.py --out "$W" > "$W/size_ceiling.txt" 2>&1
    cat "$W/size_ceiling.txt" >> "$OUT/log-$PART.txt"
    ;;
s18f)  # ~3 min: Triton flash beside SDPA at D128, both masks (issue 12's cell; the last harness rows
    # are from session 12, 3ffde4), at the session's final sources
    cli 170 attention_triton_d128 run --op attention --backend triton --backend torch --variant flash \
        --variant sdpa --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 --timeout 100
    ;;
s18e)  # ~3 min: OpenCL register_blocked at 8192³ fp16 (24 TFLOP/s against fp32's 39.4 in 6f2d8f)
    # without NVIDIA's register cap or with a looser one, and fp32 beside it; OpenCL uint8
    # grayscale 8192×8192 again (75.2 % in 463135 against 88.6 % in d6d1c5, kernel unchanged);
    # the regcap configs were removed after this run (commit ea4bb69 has them)
    probe 120 matmul_opencl_fp16 matmul opencl --case '8192³,fp16' --only register_blocked --cap 1
    probe 60 matmul_opencl_fp32 matmul opencl --case '8192³,fp32' --only 'register_blocked$' --cap 1
    probe 60 grayscale_opencl grayscale opencl --case 8192x8192 --cap 1
    ;;
s18d)  # ~6 min: OpenCL and WebGPU vector_add fp16 and grayscale rows beside torch in one run (their
    # newest rows had no torch row of the same run, or predate session 13)
    cli 450 elementwise_simt run --op vector_add --op grayscale --backend opencl --backend webgpu \
        --backend torch --case n=2^28,fp16 --case 8192x8192,fp32 --case 8192x8192 --case 2160x3840 \
        --timeout 60 --time-cap 2
    ;;
s18c)  # ~4.5 min: OpenCL fp16 vector_add as harness rows beside torch (s18b's CLI stopped before
    # vec4: reduction's atomic naive row took its time), then Triton persistent beside cuBLAS
    # again (issue 8's 1.0 × cell, met in session 14's two runs)
    cli 100 vector_add_fp16 run --op vector_add --backend opencl --backend torch --case n=2^28,fp16 \
        --timeout 60 --time-cap 2
    cli 200 matmul_triton run --op matmul --backend triton --backend torch --variant persistent \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --timeout 60
    ;;
s18b)  # ~6 min: OpenCL fp16 through halfvec.cl (commit 44a9b36) as harness rows beside torch
    # (vector_add and reduction at 2^28) and the GEMV test cases checked on the GPU; Triton
    # gemv_lowbit_row with two word tiles loaded ahead (PF=2; removed after this run, commit
    # 30c5cb4 has it)
    cli 150 fp16_opencl run --op vector_add --op reduction --backend opencl --backend torch \
        --case n=2^28,fp16 --timeout 60 --time-cap 2
    cli 100 gemv_opencl_test run --op gemv_lowbit --backend opencl --size test --check-only
    for c in w4a16,n16384,k16384,b1,bf16 w8a16,n28672,k8192,b1,bf16; do
        probe 110 "gemv_triton_pf2_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|row PF=2' --cap 1
    done
    ;;
s18a)  # ~7 min: Triton flash at D128, one config per probe row: two programs per SM (4 warps at 255
    # registers, or 8 warps capped at 128; 96 KiB of shared memory each) beside the autotune's
    # winners; then OpenCL fp16 vector_add with raw 8-byte accesses (RAW16); both probe forms
    # were removed after this run (commit 63191a8 has them)
    for c in b4h32s8192d128,bf16 b4h32s8192d128,causal,bf16; do
        probe 170 "attention_triton_$c" attention triton --case "$c" --only 'cfg=' --cap 1
    done
    probe 150 vector_add_opencl_fp16 vector_add opencl --case n=2^28,fp16 --cap 2
    ;;
next18b)  # ~4 min, prepared in session 17, not yet run: OpenCL's fp16/bf16 matmul and fp16 attention
    # have never run on the H200 (no target: SIMT cells); their fp16 loads are vload_half4 /
    # vload_half on global memory, the form that halved the fp16 GEMV there (session 17)
    cli 240 matmul_opencl_16bit run --op matmul --backend opencl --backend torch --timeout 90 --time-cap 2 \
        --case '8192³,fp16' --case '8192³,bf16' --case '16x8192x8192,bf16' --case '1x8192x8192,bf16'
    cli 200 attention_opencl_fp16 run --op attention --backend opencl --backend torch --variant flash \
        --variant sdpa --timeout 90 --time-cap 2 --case b2h16s1000d64,fp16
    ;;
session17f)  # ~2 min: the new cases session17e did not reach (its CLI stopped at its time limit after
    # 38 of 59 rows): fp16 vector_add and fp32 grayscale on opencl and webgpu
    cli 200 elementwise_rest run --op vector_add --op grayscale --backend opencl --backend webgpu \
        --case n=2^28,fp16 --case 8192x8192,fp32 --timeout 60 --time-cap 2
    ;;
session17e)  # ~3 min: vector_add and grayscale, every bench case (fp16 vector_add and fp32 grayscale
    # were never run on the H200), every backend
    cli 400 elementwise run --op vector_add --op grayscale --timeout 60 --time-cap 2
    ;;
session17d)  # ~2 min: OpenCL GEMV with fp16 x read as raw 16-byte words (vload_half8 from private
    # memory instead of vloada_half8 on global): test cases checked on the GPU, then fp16 and bf16 rows
    cli 100 gemv_opencl_test run --op gemv_lowbit --backend opencl --size test --check-only
    cli 300 gemv_opencl run --op gemv_lowbit --backend opencl --backend torch --timeout 60 --time-cap 1.5 \
        --case w4a16,n16384,k16384,b1 --case w4a16,n28672,k8192,b1 --case w8a16,n16384,k16384,b1 \
        --case w8a16,n28672,k8192,b1 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w4a16,n8192,k8192,b8
    ;;
session17b)  # ~6 min: every gemv_lowbit bench case, cuda and triton (every variant) beside torch
    cli 570 gemv_all_cuda_triton run --op gemv_lowbit --backend cuda --backend triton --backend torch \
        --timeout 60 --time-cap 1.5
    ;;
session17c)  # ~6 min: the same for opencl and webgpu
    cli 570 gemv_all_opencl_webgpu run --op gemv_lowbit --backend opencl --backend webgpu --backend torch \
        --timeout 60 --time-cap 1.5
    ;;
session17)  # ~4 min: OpenCL / WebGPU GEMV with shift-free magic fields (no x pre-scaling in OpenCL, no
    # shift per field in WGSL): every test case checked on the GPU, then harness rows beside tinygemm
    cli 150 gemv_simt_test run --op gemv_lowbit --backend opencl --backend webgpu --size test --check-only
    simt_gemv_rows 300
    for b in opencl webgpu; do  # the shapes again with the new field form (w4a16: the target cell)
        probe 120 "gemv_${b}_w4" gemv_lowbit $b --case w4a16,n16384,k16384,b1,bf16 --cap 1
    done
    ;;
gemv17old)  # the same harness rows at the commit before (run with this script from a newer commit)
    simt_gemv_rows 300
    ;;
session16d)  # ~4 min: Triton fused_vec at batch 1 with a sixth config, (128, 256, 8) capped at 128
    # registers (two programs per SM), and the smallest-BN config below the autotune size (N=1000):
    # probe rows of the capped config, then harness rows beside CUDA, tinygemm and the dense GEMV
    for c in w8a16,n28672,k8192,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|row shape=(128, 256, 8' --cap 1
    done
    cli 240 gemv run --op gemv_lowbit --backend cuda --backend triton --backend torch --variant fused_vec \
        --variant tinygemm --variant dense --timeout 90 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16 \
        --case w4a16,n1000,k8192,b1
    ;;
session16c)  # ~3 min: Triton fused_vec at batch 1 without the reload past the last K tile (registered
    # after probe16d): every test case checked on the GPU, then harness rows beside CUDA, tinygemm, dense
    cli 100 gemv_triton_test run --op gemv_lowbit --backend triton --variant fused_vec --size test --check-only
    cli 240 gemv run --op gemv_lowbit --backend cuda --backend triton --backend torch --variant fused_vec \
        --variant tinygemm --variant dense --timeout 90 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16 \
        --case w8a16,n16384,k16384,b1
    ;;
probe16d)  # ~1.5 min: Triton gemv_lowbit_row without the reload of tile 0 past the last K tile (PFMASK:
    # one uniform predicate; the reload is 1/(K/BK) more bytes) beside the registered fused_vec
    for c in w8a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16 \
             w4a16,n16384,k16384,b1,bf16; do
        probe 60 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|PFMASK' --cap 1
    done
    ;;
session16b)  # ~5 min: CUDA fused_vec w8a16 at batch 1 now gemv_lowbit_simt (4 rows per warp, 4 warps,
    # prefetch): every test case checked on the GPU, then harness rows of cuda/triton fused_vec beside
    # tinygemm and the dense GEMV; Triton gemv_lowbit_row with x read as int64 quads (X64) beside it
    cli 100 gemv_cuda_test run --op gemv_lowbit --backend cuda --variant fused_vec --size test --check-only
    cli 240 gemv run --op gemv_lowbit --backend cuda --backend triton --backend torch --variant fused_vec \
        --variant tinygemm --variant dense --timeout 90 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16 \
        --case w8a16,n16384,k16384,b1 --case w8a16,n8192,k8192,b8
    for c in w8a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16; do
        probe 60 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|X64' --cap 1
    done
    ;;
probe16c)  # ~3 min: w8a16 bf16 at batch 1 — CUDA-core gemv_lowbit_simt (rows per warp, warps per block,
    # prefetch) beside CUDA's tensor-core fused_vec; Triton gemv_lowbit_row at each registered and
    # five more configs beside its autotuned fused_vec
    for c in w8a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16; do
        probe 70 "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|simt' --cap 1
        probe 90 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|row' --cap 1
    done
    ;;
session16)  # ~6 min: Triton fused_vec at batch 1 now gemv_lowbit_row: every test case checked on the
    # GPU, then harness rows of cuda/triton fused_vec beside tinygemm and the dense GEMV at the issue's
    # shapes; the CUDA-core w8a16 probe form (gemv_lowbit MAGIC) beside CUDA's tensor-core fused_vec
    cli 100 gemv_triton_test run --op gemv_lowbit --backend triton --variant fused_vec --size test --check-only
    cli 240 gemv run --op gemv_lowbit --backend cuda --backend triton --backend torch --variant fused_vec \
        --variant tinygemm --variant dense --timeout 90 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16 \
        --case w4a16,n1000,k8192,b1
    for c in w8a16,n16384,k16384,b1,bf16 w8a16,n28672,k8192,b1,bf16; do
        probe 80 "gemv_cuda_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|simt' --cap 1
    done
    ;;
probe16b)  # ~6 min: Triton gemv_lowbit_row (batch 1: 2-D word tiles, x pairs loaded in the words'
    # layout, no shared-memory layout conversion) autotuned and at each of its configs, beside the
    # registered fused_vec (w4a16: gemv_lowbit_dot on tensor cores; w8a16: gemv_lowbit_vec), bf16 bench cases
    for c in w8a16,n16384,k16384,b1,bf16 w8a16,n28672,k8192,b1,bf16 w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|row' --cap 1
    done
    ;;
probe16)  # ~2 min, with commit c713c65 cherry-picked (git cherry-pick -n c713c65; its sweep_gpu.sh hunk
    # is this part): Triton softmax split_row 4096×131072 without the exchange (NOWAIT: each part
    # normalised by its own max and Σ, wrong by design, unchecked), with tickets and in program-id
    # order; and ONEREDUCE (one block-wide reduction of (max, Σ) pairs: 4 instead of 7 barriers, 84
    # instead of 66 MUFU.EX2 per thread in the sm_90 SASS), beside the registered form
    probe 170 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|NOWAIT|ONEREDUCE' --cap 1
    ;;
probe15h)  # ~30 s: CUDA w8a16 bf16 fused_vec with two tiles per warp and one or two warps per block (the
    # layout whose memory path alone was fastest at N = 28672 in probe15g) beside the registered form
    probe 60 gemv_w8 gemv_lowbit cuda --case w8a16,n28672,k8192,b1,bf16 --only 'fused_vec$|RT=2 {' --cap 1
    ;;
probe15g)  # ~1.5 min: CUDA fused_vec's memory path alone (MEMONLY, unchecked) in other ring layouts
    # (KW warps, RT tiles, US steps per chunk, STAGES), w8a16 and w4a16 bf16 at N = 28672, beside the
    # registered kernel: which layout's loads alone come nearest the plain read (88.8 / 76.8 %)
    for c in w8a16,n28672,k8192,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 70 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|MEMONLY' --cap 1
    done
    ;;
probe15f)  # ~2 min: plain reads of each gemv_lowbit bf16 bench case's byte count (cuBLAS dense GEMV and
    # torch.sum of the same bytes; 512 MiB and 2 GiB beside them): the ceiling at the GEMV's size
    step "size_ceiling"
    timeout 200 "$PY" scripts/size_ceiling.py --out "$W" > "$W/size_ceiling.txt" 2>&1
    cat "$W/size_ceiling.txt" >> "$OUT/log-$PART.txt"
    ;;
probe15e)  # ~2 min: CUDA fused_vec's memory path alone (MEMONLY: the ring, x and scale loads, a XOR
    # instead of the unpack and the mma; wrong by design, timed unchecked) beside the registered form,
    # w4a16 and w8a16 bf16 at both shapes; torch's dense fp16 GEMV at K=N=8192 (128 MiB of W, the
    # w4a16 K=N=16384 kernel's bytes) for the time a plain read of that size takes
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16 \
             w8a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|MEMONLY' --cap 1
    done
    probe 60 gemv_torch_dense gemv_lowbit torch --case w4a16,n8192,k8192,b1 --only 'dense$' --cap 1
    ;;
probe15d)  # ~2 min: CUDA w4a16 bf16 fused_vec ring shapes (KW warps, US steps per chunk, STAGES) with
    # the registered two tiles per warp (the shape grid was last probed with one tile, session 6)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|fused_vec KW=' --cap 1
    done
    ;;
probe15c)  # ~2 min: CUDA w4a16 bf16 fused_vec with the pairs left at q + 136 and −136·Σx per scale group
    # precomputed once per block in shared memory (SXPRE: no HFMA2; 121 instead of 147 SASS
    # instructions per tile and step), KW 4 and 2, beside the registered form, both issue shapes
    # (lost, removed after this run: commit 809a295 has it)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 90 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|SXPRE' --cap 1
    done
    ;;
probe15b)  # ~2 min: Triton softmax split_row 4096×131072, two persistent programs per SM, the next ticket
    # after the write or right after the current part's loads (early), three backoffs, beside the registered form
    # (the persistent configs lost and were removed after this run: commit 52a2d8e has them)
    probe 300 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|persist'
    ;;
probe15)  # ~5 min: Triton softmax split_row 4096×131072 as persistent programs (1 or 2 per SM) taking
    # tickets in a loop, the next ticket prefetched before the write or not, beside the registered form
    # (removed after probe15b: commit 52a2d8e has them)
    probe 320 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|persist'
    ;;
probe14h)  # ~1.5 min: CUDA w4a16 bf16 fused_vec with the magic offset removed by one mma per k16
    # shared by the warp's tiles (OFF2) beside the registered form (HFMA2 per pair)
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|OFF2' --cap 1
    done
    ;;
session14c)  # ~3 min: CUDA fused_vec with RT = 2 for w4a16 (registered after probe14g): every test case
    # checked on the GPU, then harness rows beside tinygemm at the issue's shapes
    cli 100 gemv_cuda_test run --op gemv_lowbit --backend cuda --variant fused_vec --size test --check-only
    cli 120 gemv_cuda run --op gemv_lowbit --backend cuda --backend torch --variant fused_vec \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w4a16,n8192,k8192,b8 --case w4a16,n1000,k8192,b1
    ;;
probe14g)  # ~2 min: CUDA fused_vec GEMV with two 16-row tiles per warp sharing each x load (RT=2)
    # beside the registered one tile, w8a16 and w4a16 bf16 at both shapes
    for c in w8a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16 w4a16,n16384,k16384,b1,bf16 \
             w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|RT=2' --cap 1
    done
    ;;
probe14f)  # ~5 min: Triton flash with half of the unmasked blocks' exponentials on the FMA pipe
    # (POLY: a cubic on the odd columns, MUFU.EX2 on the even ones) beside the same config without it
    for c in b4h32s8192d128,bf16 b4h32s8192d128,causal,bf16 b16h16s2048d64,bf16; do
        probe 120 "attention_triton_$c" attention triton --case "$c" --only 'fixed'
    done
    ;;
probe14e)  # ~4 min: Triton softmax split_row 4096×131072 with each part's exp(x − m) kept for the write
    # (REUSE: one exp per value instead of two, nothing but a multiply after the wait) beside the
    # registered form
    probe 280 softmax_triton softmax triton --case 4096x131072 --only split_row
    ;;
confirm14)  # ~4 min: a second run of session 14's two cells met once — WebGPU flash 64×32×4×2 beside
    # OpenCL and SDPA, Triton persistent beside cuBLAS — at the session's final kernel sources
    simt_flash_rows 100
    cli 200 matmul_triton run --op matmul --backend triton --backend torch --variant persistent \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --timeout 60
    ;;
probe14d)  # ~2 min: CUDA fused_vec GEMV with x through the cp.async ring (XRING) beside the registered
    # form (x by __ldg one chunk ahead: Nsight Compute put 42 % of the w8a16 stall cycles on long
    # scoreboard waits), w4a16 and w8a16 bf16 at both shapes
    for c in w8a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16 w4a16,n16384,k16384,b1,bf16 \
             w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|XRING' --cap 1
    done
    ;;
probe14c)  # ~5 min: Triton GEMV gemv_lowbit_dot with BN < 64 (mma.sync, no per-dot barrier) beside
    # the registered fused_vec, w4a16 and w8a16 bf16 at both shapes
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16 \
             w8a16,n28672,k8192,b1,bf16; do
        probe 110 "gemv_triton_$c" gemv_lowbit triton --case "$c" --only 'fused_vec$|dot' --cap 0.5
    done
    ;;
session14b)  # ~5 min: harness rows of WebGPU flash's 64×32×4×2 tile beside OpenCL and SDPA; CUDA
    # fused_vec GEMV beside tinygemm; probes of w8a16 with staggered K starts (ROT); Nsight
    # Compute's reading of w8a16 at both shapes
    simt_flash_rows 100
    cli 120 gemv_cuda run --op gemv_lowbit --backend cuda --backend torch --variant fused_vec \
        --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16
    for c in w8a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16; do
        probe 60 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|ROT' --cap 1
    done
    step "ncu limiters"
    timeout 200 "$PY" scripts/ncu_limiter.py --out "$W/ncu" gemv_lowbit/cuda/fused_vec/w8a16,n28672,k8192,b1,bf16 \
        gemv_lowbit/cuda/fused_vec/w8a16,n16384,k16384,b1,bf16 > "$W/ncu.txt" 2>&1
    tail -n 30 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
probe14)  # ~5 min: WebGPU flash tiles with 4–8 score rows per invocation (the score and P·V loops
    # read workgroup memory less per FMA) beside the registered 32×32×2×2, both masks; CUDA w8a16
    # bf16 fused_vec with the sign-split unpack (W8SPLIT) beside the registered one
    probe 150 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 1
    probe 150 attention_webgpu_causal attention webgpu --case b1h16s4096d64,causal,fp32 --only flash --cap 1
    for c in w8a16,n16384,k16384,b1,bf16 w8a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_$c" gemv_lowbit cuda --case "$c" --only 'fused_vec$|W8SPLIT' --cap 1
    done
    ;;
session14)  # ~4 min: WebGPU flash with Q pre-scaled and the mask test on edge tiles only, beside
    # OpenCL and SDPA; Triton persistent beside cuBLAS again (the 1.0 × cell)
    simt_flash_rows 100
    cli 200 matmul_triton run --op matmul --backend triton --backend torch --variant persistent \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --timeout 60
    ;;
subtile13)  # ~2.5 min: Triton persistent with C stored in two halves (now registered) beside cuBLAS
    cli 200 matmul_triton run --op matmul --backend triton --backend torch --variant persistent \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --timeout 60
    ;;
final13)  # ~5 min: harness rows of session 13's registered changes — Triton fused_vec (w4a16 now
    # gemv_lowbit_dot on tensor cores, w8a16 gemv_lowbit_vec) beside tinygemm and the dense GEMV;
    # WebGPU flash with the partial row maxima beside OpenCL and SDPA; one probe of the dot shapes
    cli 200 gemv_triton run --op gemv_lowbit --backend triton --backend torch --variant fused_vec \
        --variant tinygemm --variant dense --timeout 90 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16 \
        --case w4a16,n8192,k8192,b8
    simt_flash_rows 90
    probe 60 gemv_triton_w4 gemv_lowbit triton --case w4a16,n16384,k16384,b1,bf16 --only 'fused_vec|dot' --cap 0.5
    probe 60 gemv_triton_w8 gemv_lowbit triton --case w8a16,n16384,k16384,b1,bf16 --only 'fused_vec|dot' --cap 0.5
    # SUBTILE again, one configuration per process, it first (next13 ran the registered form first,
    # on the coolest GPU: bf16 hot 1.415 against 1.557 ms, fp16 1.646 against 1.484)
    probe 60 matmul_subtile_bf16 matmul triton --case 8192³,bf16 --only 'subtile$' --cap 2
    probe 60 matmul_persistent_bf16 matmul triton --case 8192³,bf16 --only 'persistent$' --cap 2
    probe 60 matmul_subtile_fp16 matmul triton --case 8192³,fp16 --only 'subtile$' --cap 2
    probe 60 matmul_persistent_fp16 matmul triton --case 8192³,fp16 --only 'persistent$' --cap 2
    ;;
next13)  # for session 13, ~6 min: Triton persistent storing C in two halves (SUBTILE; with 4-stage
    # rings, 229 KiB of shared memory, compiled for sm_90 with Triton 3.6: 154-162 registers, no
    # spills) beside the registered form, probes at 8192³ bf16 and fp16; Triton split_row with warp 0
    # polling alone (POLL1) and part/warp geometries under today's protocol; CUDA w4a16 fused_vec
    # with the magic offset removed by a second mma (OFFMMA) beside the registered form
    probe 80 matmul_triton_bf16 matmul triton --case 8192³,bf16 --only persistent --cap 2
    probe 80 matmul_triton_fp16 matmul triton --case 8192³,fp16 --only persistent --cap 2
    probe 150 softmax_triton softmax triton --case 4096x131072 --only split_row --cap 2
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_cuda_${c//,/_}" gemv_lowbit cuda --case $c --only 'fused_vec$|OFFMMA' --cap 0.5
    done
    ;;
next13b)  # ~5 min: Triton GEMV on tensor cores (gemv_lowbit_dot, w4a16 and w8a16) beside fused_vec
    for c in w4a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16 w8a16,n16384,k16384,b1,bf16 \
        w8a16,n28672,k8192,b1,bf16 w4a16,n8192,k8192,b8; do
        probe 90 "gemv_triton_${c//,/_}" gemv_lowbit triton --case $c --only "fused_vec|dot" --cap 0.5
    done
    ;;
next13c)  # ~4 min: WebGPU flash with the row max through per-invocation partial maxima (PMAX) beside
    # the registered form; Triton split_row beside torch.compile at 4096×131072 with room for
    # torch.compile's compile (timed out at 100 s in next12d)
    probe 60 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 0.5
    cli 200 softmax_131072_triton run --op softmax --backend triton --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 180 --time-cap 2
    ;;
final12)  # ~1.5 min: the registered OpenCL/WebGPU GEMV and flash at session 12's last commit, beside
    # tinygemm and SDPA (harness rows only)
    simt_gemv_rows 100
    simt_flash_rows 80
    ;;
next12d)  # ~5 min: WebGPU flash with P in its own tile (4 barriers per K/V tile instead of 5) as a
    # harness row beside OpenCL and SDPA, probed beside the one-tile form; issue 8's two short cells
    # measured again (Triton persistent beside cuBLAS, Triton split_row beside torch.compile)
    simt_flash_rows 90
    probe 60 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 0.5
    cli 120 matmul_triton run --op matmul --backend triton --backend torch --variant persistent \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --timeout 60
    cli 150 softmax_131072_triton run --op softmax --backend triton --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 100 --time-cap 2
    ;;
next12c)  # ~7 min: OpenCL / WebGPU GEMV shapes (rows per team, words per step, teams per group,
    # PF: the next unit's words prefetched) with x read 16 bytes per load (int8: two words per
    # load), probes then harness rows beside tinygemm; the vec4 WGSL flash (P tile in vec4 rows
    # too) as a harness row beside OpenCL and SDPA, and its tiles; NVIDIA OpenCL's PTX of the GEMV
    for be in opencl webgpu; do
        probe 80 "gemv_${be}_w4" gemv_lowbit $be --case w4a16,n16384,k16384,b1,bf16 --cap 0.5
    done
    simt_gemv_rows 120
    simt_flash_rows 90
    probe 70 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 0.5
    step "opencl gemv PTX"  # what NVIDIA's OpenCL compiler made of fused_vec (w4a16 bf16, batch 1)
    timeout 60 "$PY" -m suite.cli inspect gemv_lowbit --backend opencl --variant fused_vec --stage binary \
        --case w4a16,n16384,k16384,b1,bf16 > "$W/gemv_opencl_w4.ptx.txt" 2>&1
    for be in opencl webgpu; do
        probe 60 "gemv_${be}_w8" gemv_lowbit $be --case w8a16,n16384,k16384,b1,bf16 --cap 0.5
    done
    ;;
next12)  # for session 12, ~8 min (under 9.5 with every step at its limit): Triton softmax split_row
    # loading its part through ld.global.nc.v4 (CUDA's __ldg path, LDG.E.128.CONSTANT in its SASS;
    # the registered form's loads are plain LDG.E.128), with and without a 64-register cap, beside the
    # registered form (issue 8's last miss); Triton persistent matmul with flattened tile/K loops
    # (issue 8: 0.99 / 0.97 x cuBLAS in 9f4d32, 1.0 wanted); Triton flash with causal query blocks
    # longest first (each head's blocks in reverse) beside SDPA at the issue's cells; WebGPU flash
    # with its 64×32×2×2 tile as a harness row beside OpenCL and SDPA, then tiles of one row per
    # invocation and the vec4 form (attention_flash_v4: a quarter of the workgroup loads) in a probe
    probe 120 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|nc' --cap 1
    probe 60 matmul_triton matmul triton --case 8192³,bf16 --only persistent --cap 2
    cli 200 attention_triton run --op attention --backend triton --backend torch --variant flash --variant sdpa \
        --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 --case b16h16s2048d64,bf16 \
        --case b16h16s2048d64,causal,bf16 --timeout 100
    simt_flash_rows 100
    probe 90 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 1
    ;;
next12b)  # ~3 min: OpenCL and WebGPU GEMV with x read one weight word's values per vector load
    # (16 bytes for int4; were 2-byte / 4-byte scalar loads 64 bytes apart across a warp) beside
    # tinygemm at the issue's shapes
    simt_gemv_rows 170
    ;;
session11e)  # ~5 min: Triton flash D128 with 256-row configs in its autotune list beside SDPA; the
    # OpenCL and WebGPU GEMV rows (not run since the read flush) beside tinygemm; WebGPU flash
    # tiles with fewer rows per invocation
    cli 150 attention_d128 run --op attention --backend triton --backend torch --variant flash --variant sdpa \
        --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 --timeout 100
    simt_gemv_rows 130
    probe 60 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 1
    ;;
session11d)  # ~3 min: WebGPU flash with its inner loops unrolled at compile time (the score loop over
    # HD, the row max and P·V loops over BN), probe then harness rows beside OpenCL and SDPA
    probe 60 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 1
    simt_flash_rows 150
    ;;
session11c)  # ~4 min: the new wgmma_tma variant (TMA producer warpgroup, mbarriers) beside wgmma and
    # cuBLAS as harness rows (8192³ bf16/fp16, 4097³ and 500×600×300 padded, 2048³); WebGPU flash
    # with smaller tiles (less workgroup memory per workgroup) beside the registered 64×32
    cli 240 matmul_tma run --op matmul --backend cuda --backend torch --variant wgmma --variant wgmma_tma \
        --variant matmul --case 8192³,bf16 --case 8192³,fp16 --case 4097³,bf16 --case 2048³,bf16 \
        --case 500x600x300,bf16 --timeout 100
    probe 60 attention_webgpu attention webgpu --case b1h16s4096d64,fp32 --only flash --cap 1
    probe 60 attention_webgpu_causal attention webgpu --case b1h16s4096d64,causal,fp32 --only flash --cap 1
    ;;
session11b)  # ~1.5 min: Triton split_row with PTX cache operators on the part's load / store (.cg: L2
    # only; .cs: streaming) beside the registered form (CUDA's 93 % kernel loads through __ldg)
    probe 150 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|cache' --cap 1
    ;;
session11)  # ~5 min: Triton split_row with an L2 prefetch of the part AHEAD × SM-count tickets later
    # (DRAM keeps streaming while a program waits for its siblings) beside the registered form;
    # Triton flash with K/V through TMA descriptors (and Triton's warp specialisation) beside the
    # registered pointer form at the D128 cases; the registered wgmma beside its TMA form again
    probe 120 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|ahead' --cap 1
    probe 150 attention_triton attention triton --case b4h32s8192d128,bf16 --only flash --cap 1
    probe 100 attention_triton_causal attention triton --case b4h32s8192d128,causal,bf16 --only flash --cap 1
    probe 60 matmul_cuda matmul cuda --case 8192³,fp16 --only 'wgmma$|wgmma tma' --cap 2
    probe 40 matmul_cuda_4097 matmul cuda --case 4097³,bf16 --only 'wgmma$|wgmma tma' --cap 2
    ;;
next11)  # for session 11, ~10 min: Triton split_row in program-id order (no ticket; bounded polls,
    # then a missing part's (max, Σ) from x) beside the registered form; then the first runs of the
    # fixed-count soaked protocol (10 samples after the 2 s soak): the tensor-core matmul rows beside
    # cuBLAS, then attention beside SDPA
    probe 120 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|order=pid' --cap 1
    # wgmma with a producer warpgroup and mbarriers (matmul_wgmma_ws; matmul_wgmma_tma with TMA loads)
    # beside the registered form, at 8192³ and at a shape no tile divides (bounds, TMA's zero fill)
    probe 70 matmul_cuda matmul cuda --case 8192³,bf16 --only 'wgmma$|wgmma ws|wgmma tma' --cap 2
    probe 50 matmul_cuda_odd matmul cuda --case 1000x1000x1000 --dims m=1000,n=1000,k=1000 --dtype bf16 \
        --only 'wgmma$|wgmma ws|wgmma tma' --cap 1
    cli 260 matmul_fixed run --op matmul --backend cuda --backend triton --backend torch --variant wgmma \
        --variant mma_sync --variant persistent --variant matmul --case 8192³,bf16 --case 8192³,fp16 \
        --case 4097³,bf16 --timeout 100
    cli 250 attention_fixed run --op attention --backend cuda --backend triton --backend torch --variant flash \
        --variant sdpa --timeout 60 --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 \
        --case b16h16s2048d64,bf16
    ;;
session10e)  # ~1.5 min: the registered wgmma (EVEN) beside cuBLAS again at 8192³, and at 2048³ / 512³
    cli 110 matmul_wgmma_2 run --op matmul --backend cuda --backend torch --variant wgmma --variant matmul \
        --case 8192³,bf16 --case 8192³,fp16 --case 2048³,bf16 --case 512³,bf16 --timeout 60
    ;;
session10d)  # ~2.5 min: wgmma's unbounded copies (EVEN) beside the bounded ones and the other shapes at
    # 8192³ bf16, then the registered form beside mma_sync and cuBLAS (8192³ bf16/fp16, 4097³)
    probe 80 matmul_cuda matmul cuda --case 8192³,bf16 --only wgmma --cap 2
    cli 150 matmul_wgmma run --op matmul --backend cuda --backend torch --variant wgmma --variant mma_sync \
        --variant matmul --case 4097³,bf16 --case 8192³,bf16 --case 8192³,fp16 --timeout 100
    ;;
session10c)  # ~2 min: wgmma with three warpgroups (192×256 tiles: 29 % more flops per byte loaded from L2)
    # beside the registered two at 8192³ and 4097³ bf16
    probe 80 matmul_cuda matmul cuda --case 8192³,bf16 --only wgmma --cap 2
    probe 60 matmul_cuda_4097 matmul cuda --case 4097³,bf16 --only wgmma --cap 2
    ;;
session10b)  # ~4 min: wgmma's refill point (EARLY: three tiles in flight, two barriers per tile) and
    # ring depth, then the registered form beside mma_sync and cuBLAS at 8192³ and 4097³
    probe 100 matmul_cuda matmul cuda --case 8192³,bf16 --only wgmma --cap 2
    cli 200 matmul_wgmma run --op matmul --backend cuda --backend torch --variant wgmma --variant mma_sync \
        --variant matmul --case 4097³,bf16 --case 8192³,bf16 --case 8192³,fp16 --timeout 120
    ;;
session10)  # ~7 min: cuda wgmma (matmul_wgmma.cu, first run on a GPU) beside mma_sync and cuBLAS on the
    # fp16/bf16 cases, every row checked first; then its rings at 8192³ bf16
    cli 300 matmul_wgmma run --op matmul --backend cuda --backend torch --variant wgmma --variant mma_sync \
        --variant matmul --case 128³,bf16 --case 500x600x300,bf16 --case 4097³,bf16 --case 16x8192x8192,bf16 \
        --case 8192³,bf16 --case 8192³,fp16 --timeout 120
    probe 120 matmul_cuda matmul cuda --case 8192³,bf16 --only wgmma --cap 2
    ;;
next10)  # for session 10, ~7 min: Triton split_row's persistent form (softmax_split_pipe: a program
    # loads and publishes its next part while it waits for the current one's siblings) beside the
    # registered form; then session9f's WebGPU row beside torch.compile (22a4b3 ran without it)
    probe 200 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|pipe' --cap 1
    ;&
session9f)  # ~3 min: WebGPU split_row (own slot from registers, RMW polls) beside torch at 4096×131072
    cli 220 softmax_131072_webgpu run --op softmax --backend webgpu --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 100 --time-cap 2
    ;;
session9e)  # ~3 min: WebGPU split_row's poll (15 of the 17 points the exchange costs at 16384²):
    # the own slot from registers, slots read by an atomic RMW instead of atomicLoad, at 16384² and
    # 4096×131072
    probe 110 softmax_webgpu_16384 softmax webgpu --case 16384x16384 --only 'split_row$|own=|fused_row' --cap 1
    probe 130 softmax_webgpu_131072 softmax webgpu --case 4096x131072 --only 'split_row$|own=' --cap 1
    ;;
session9d)  # ~3 min: Triton split_row with warp 0 alone polling (PTX spin, the rest at a barrier)
    # beside the registered polls; WebGPU split_row at 16384² (one part per row) without the poll and
    # without the publish too, beside the registered exchange and fused_row: what each step costs
    probe 150 softmax_triton softmax triton --case 4096x131072 --only 'split_row$|warp0' --cap 1
    probe 120 softmax_webgpu softmax webgpu --case 16384x16384 --only 'split_row$|exch|fused_row' --cap 1
    ;;
session9c)  # ~3 min: WebGPU split_row at 4096×131072 with the count of parts that gave up waiting
    # (the fixup dispatch's work): registered, poll bounds 2^20 and 256, 1024 invocations × 32 values
    probe 200 softmax_webgpu softmax webgpu --case 4096x131072 --only 'split_row$|spin=|tpb=1024 vals=32' --cap 1
    ;;
session9b)  # ~9 min: the GEMM ceilings soaked (bandwidth kept), then mma_sync (128×256 tiles at
    # 8192³) beside cuBLAS in one harness run; WebGPU split_row at 1 GiB (no windows) with 8 and 2
    # parts per row, to tell the exchange's cost from the 2 GiB case's
    step "peaks --gemm-only"
    timeout 200 "$PY" -m suite.cli peaks --gemm-only --repeats 3 --timeout 150 > "$W/peaks.txt" 2>&1
    tail -n 30 "$W/peaks.txt" >> "$OUT/log-$PART.txt"
    cli 200 matmul run --op matmul --backend cuda --backend torch --variant mma_sync --variant matmul \
        --timeout 90 --case '8192³,bf16' --case '8192³,fp16'
    for c in 2048x131072 8192x32768; do
        probe 70 "softmax_webgpu_$c" softmax webgpu --case "$c" --dims "m=${c%x*},n=${c#*x}" \
            --only 'split_row$|fused_row' --cap 1
    done
    ;;
session9)  # ~6 min: WebGPU split_row with streamed parts (softmax_split_stream, L2 re-read) beside the
    # registered register-tile form; Triton split_row per-lane PTX spin, unmasked parts, a register cap
    # (those configurations ran at 52d84fe and were removed after: none beat the registered forms)
    probe 260 softmax_webgpu softmax webgpu --case 4096x131072 --only 'split_row$|stream' --cap 1
    probe 200 softmax_triton softmax triton --case 4096x131072 --only split_row --cap 1
    ;;
next9)  # for session 9, ~8 min, after `peaks` (soaked GEMM ceilings): mma_sync with BN 256 tiles
    # (PIPE) beside the registered form, bf16 and fp16, soaked probes; then the attention rows of
    # issue 12 beside SDPA, now soaked like every compute-heavy row
    for c in "8192³,bf16" "8192³,fp16"; do
        probe 100 "matmul_cuda_$c" matmul cuda --case "$c" --only 'mma_sync$|BN=256 MINB=1$' --cap 1
    done
    cli 250 attention run --op attention --backend cuda --backend triton --backend torch --variant flash \
        --variant sdpa --timeout 60 --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 \
        --case b16h16s2048d64,bf16
    ;;
session8f)  # ~4 min: Triton split_row polling first and sleeping only while not done, beside
    # torch.compile at 4096×131072 (harness rows), then the backoff probe if time is left
    cli 200 softmax_131072_triton run --op softmax --backend triton --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 100 --time-cap 2
    probe 90 softmax_triton softmax triton --case 4096x131072 --only split_row --cap 1
    ;;
session8e)  # ~2 min: mma_sync beside cuBLAS, bf16 + fp16 8192³, every row soaked (2 s of launches
    # before sampling: the power-capped steady state whatever the row order)
    cli 200 matmul run --op matmul --backend cuda --backend torch --variant mma_sync --variant matmul \
        --timeout 90 --case '8192³,bf16' --case '8192³,fp16'
    ;;
session8d)  # ~7 min: harness rows beside the peers: mma_sync (now PIPE, BK 64) and cuBLAS, bf16 + fp16
    # 8192³; Triton split_row (1000 ns backoff) and torch.compile at 4096×131072
    cli 230 matmul run --op matmul --backend cuda --backend torch --variant mma_sync --variant matmul \
        --timeout 90 --case '8192³,bf16' --case '8192³,fp16'
    cli 210 softmax_131072_triton run --op softmax --backend triton --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 100 --time-cap 2
    ;;
session8c)  # ~4 min: mma_sync PIPE beside the registered form (probe); Triton split_row with the
    # 1000 ns backoff beside torch at 4096×131072 (harness rows)
    probe 120 matmul_cuda matmul cuda --case '8192³,bf16' --only 'mma_sync$|PIPE' --cap 1
    cli 150 softmax_131072_triton run --op softmax --backend triton --backend torch --case 4096x131072 \
        --variant split_row --variant compile --variant eager --timeout 100 --time-cap 2
    ;;
session8b)  # ~5 min: Triton split_row nanosleep backoffs, mma_sync PIPE beside the registered
    # form, WebGPU split_row in workgroup-id order (no ticket) beside the registered form
    for spec in "softmax triton 4096x131072 split_row 150" "matmul cuda 8192³,bf16 mma_sync$|PIPE 150" \
                "softmax webgpu 4096x131072 split_row$|ticket 100" "softmax webgpu 16384x16384 split_row$|ticket|fused 100"; do
        set -- $spec
        probe "$5" "$1_$2_$3" "$1" "$2" --case "$3" --only "$4" --cap 1
    done
    ;;
session8)  # ~8 min: Triton split_row polls (one warp polls; nanosleep backoff), mma_sync with
    # fragments double-buffered across tiles (PIPE) beside the other shapes, then next8
    for spec in "softmax triton 4096x131072 split_row 200" "matmul cuda 8192³,bf16 mma_sync 160"; do
        set -- $spec
        probe "$5" "$1_$2" "$1" "$2" --case "$3" --only "$4" --cap 1
    done
    OUT="$OUT" bash "$0" next8
    ;;
next8)  # for session 8, ~4 min: where WebGPU split_row loses — the same one-pass kernel at 16384²
    # (no windows; 1 part per row at 512 invocations, 2 at 256) beside fused_row (94.8 % in
    # 2908c7), and at 4096×131072 again (two windows)
    for c in 16384x16384 4096x131072; do
        probe 110 "softmax_webgpu_$c" softmax webgpu --case "$c" --only _row --cap 1
    done
    ;;
session7e)  # ~3 min: WebGPU split_row whose parts end right after their stores (the fixup empties
    # the slots), beside torch at 4096×131072
    cli 260 softmax_131072_webgpu run --op softmax --backend webgpu --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 120 --time-cap 2
    ;;
session7d)  # ~4 min: WebGPU split_row in one pass (98c15a3's WGSL) beside torch at 4096×131072
    cli 260 softmax_131072_webgpu run --op softmax --backend webgpu --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 120 --time-cap 2
    ;;
session7c)  # ~4 min: WebGPU split_row with two-barrier reductions (geometries), Triton split_row in
    # smaller programs (more of them per SM)
    for spec in "webgpu 150" "triton 150"; do
        set -- $spec
        probe "$2" "softmax_$1" softmax "$1" --case 4096x131072 --only split_row --cap 1
    done
    ;;
session7b)  # ~6 min: WebGPU split_row geometries (one pass) and mma_sync (EVEN) beside cuBLAS, bf16 + fp16
    probe 150 softmax_webgpu softmax webgpu --case 4096x131072 --only split_row --cap 1
    cli 240 matmul run --op matmul --backend cuda --backend torch --variant mma_sync --variant matmul \
        --timeout 90 --case '8192³,bf16' --case '8192³,fp16'
    ;;
session7)  # probes, ~7 min: WebGPU split_row in one pass (bounded waits) beside the two-dispatch
    # form, Triton split_row with a register cap / evict-first, mma_sync with unbounded copies (EVEN)
    for spec in "softmax webgpu 4096x131072 split_row 200" "softmax triton 4096x131072 split_row 170" \
                "matmul cuda 8192³,bf16 mma_sync 100"; do
        set -- $spec
        probe "$5" "$1_$2" "$1" "$2" --case "$3" --only "$4" --cap 1
    done
    ;;
session6g)  # OpenCL/WebGPU flash with causal blocks longest first, beside SDPA, ~2 min
    cli 200 attention_simt run --op attention --backend opencl --backend webgpu --backend torch \
        --variant flash --variant sdpa --timeout 60 --case b1h16s4096d64,fp32 --case b1h16s4096d64,causal,fp32
    ;;
session6f)  # Triton flash with the lazy-rescale configs beside SDPA, the three bf16 cells, ~5 min
    cli 330 attention run --op attention --backend triton --backend torch --variant flash --variant sdpa \
        --timeout 150 --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 --case b16h16s2048d64,bf16
    ;;
session6e)  # gemv bf16 peer shapes after the Triton x-tile rewrite and the cuda STAGES 3 ring, ~2 min
    cli 200 gemv run --op gemv_lowbit --backend cuda --backend triton --backend torch --variant fused_vec \
        --variant dense --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16
    ;;
session6d)  # Triton softmax split_row warps × part probe; gemv_lowbit_tc shapes at w8a16 N=28672, ~3 min
    probe 150 softmax_triton softmax triton --case 4096x131072 --only split_row --cap 1
    probe 60 gemv_w8_28672 gemv_lowbit cuda --case w8a16,n28672,k8192,b1,bf16 --only fused_vec --cap 1
    ;;
session6c)  # headline rows after session 6's changes: gemv bf16 peer shapes, Triton softmax 4096×131072, ~6 min
    cli 200 gemv run --op gemv_lowbit --backend cuda --backend triton --backend torch --variant fused_vec \
        --variant dense --variant tinygemm --timeout 60 --case w4a16,n16384,k16384,b1,bf16 \
        --case w4a16,n28672,k8192,b1,bf16 --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16
    cli 220 softmax_131072 run --op softmax --backend triton --backend torch --case 4096x131072 \
        --variant split_row --variant compile --variant eager --timeout 120 --time-cap 2
    ;;
session6b)  # gemv_lowbit_tc shapes (x through the ring or registers), three cases, and its stall reasons, ~3 min
    for c in w4a16,n16384,k16384,b1,bf16 w8a16,n16384,k16384,b1,bf16 w4a16,n28672,k8192,b1,bf16; do
        probe 100 "gemv_$c" gemv_lowbit cuda --case "$c" --only fused_vec --cap 1
    done
    step "ncu gemv cuda w4a16 K=N=16384 (stall reasons)"
    timeout 100 "$PY" scripts/ncu_limiter.py --out "$W/ncu" gemv_lowbit/cuda/fused_vec/w4a16,n16384,k16384,b1,bf16 \
        > "$W/ncu.txt" 2>&1
    tail -n 3 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
session6)  # relaxed Triton ticket (softmax split_row) vs acq_rel; gemv_lowbit_tc KW × US × STAGES, ~6 min
    probe 120 softmax_triton softmax triton --case 4096x131072 --only split_row
    for c in w4a16,n16384,k16384,b1,bf16 w8a16,n16384,k16384,b1,bf16; do
        probe 140 "gemv_$c" gemv_lowbit cuda --case "$c" --cap 1
    done
    ;;
ncu)  # Nsight Compute's limiter reading of the missed cells (scripts/ncu_limiter.py), ~5 min
    step "ncu limiters"
    timeout 540 "$PY" scripts/ncu_limiter.py --out "$W/ncu" ${NCU_KEYS:-gemv_lowbit/cuda/fused_vec/w4a16,n16384,k16384,b1,bf16 \
        gemv_lowbit/triton/fused_vec/w4a16,n16384,k16384,b1,bf16 softmax/triton/split_row/4096x131072 \
        matmul/cuda/mma_sync/8192³,bf16 attention/triton/flash/b4h32s8192d128,bf16} > "$W/ncu.txt" 2>&1
    tail -n 30 "$W/ncu.txt" >> "$OUT/log-$PART.txt"
    ;;
next)  # what has not run on the GPU yet (session 6), ~6 min: OpenCL softmax 4096×131072 in two row
    # parts beside torch, the Triton scan's relaxed ticket beside torch
    cli 200 softmax_131072_opencl run --op softmax --backend opencl --backend torch --case 4096x131072 \
        --variant split_row --variant fused_row --variant compile --timeout 120 --time-cap 2
    cli 150 scan_triton run --op scan --backend triton --backend torch --variant decoupled_lookback \
        --variant reduce_then_scan --variant cumsum --timeout 60
    ;;
next_probes)  # the session-6 probe forms (compiled only so far), ~4 min: mma_sync with the refill after
    # a k16 step (REFILL_AT) and gemv w8a16 bf16 with U8LOP, each beside its registered form
    probe 120 mma matmul cuda --case '8192³,bf16' --only mma_sync --cap 1
    for c in w8a16,n16384,k16384,b1,bf16 w8a16,n28672,k8192,b1,bf16; do
        probe 60 "gemv_$c" gemv_lowbit cuda --case "$c" --only fused_vec --cap 1
    done
    ;;
session5b)  # after the read flush: M=16 beside cuBLAS, Triton split_row probe, 4096×131072 run file
    cli 90 skinny run --op matmul --backend cuda --backend triton --backend torch --variant splitk \
        --variant persistent --variant matmul --timeout 60 --case 16x8192x8192,bf16 --case 1x8192x8192,bf16
    probe 100 softmax_triton softmax triton --case 4096x131072 --only split_row
    cli 380 softmax_131072 run --op softmax --case 4096x131072 --variant split_row --variant compile \
        --timeout 120 --time-cap 2
    ;;
session5d)  # OpenCL 4096×131072, SIMT attention (the Triton flash Hopper-form probes of 5128432 were here)
    cli 130 softmax_131072_opencl run --op softmax --backend opencl --backend torch --case 4096x131072 \
        --variant split_row --variant compile --timeout 120 --time-cap 2
    cli 120 attention_simt run --op attention --backend opencl --backend webgpu --backend torch \
        --variant flash --variant sdpa --timeout 60 --case b1h16s4096d64,fp32 --case b1h16s4096d64,causal,fp32
    ;;
flush)  # what the cold-L2 flush costs the sample after it (scripts/flush_probe.py)
    step "flush probe"
    timeout 120 "$PY" scripts/flush_probe.py --json "$W/flush_probe.json" > "$W/flush_probe.txt" 2>&1
    cat "$W/flush_probe.txt" >> "$OUT/log-$PART.txt"
    ;;
session5)  # the shapes picked from the 2026-12-01 probes, checked at odd sizes, then timed beside the peers
    cli 150 check_odd run --op matmul --op attention --backend cuda --variant register_blocked --variant mma_sync \
        --variant flash --size test --timeout 60
    cli 200 matmul run --op matmul --backend cuda --backend torch --variant register_blocked --variant mma_sync \
        --variant matmul --timeout 90 --case '8192³,fp32' --case '8192³,bf16'
    cli 200 attention run --op attention --backend cuda --backend torch --variant flash --variant sdpa \
        --timeout 90 --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 --case b16h16s2048d64,bf16
    ;;
peaks)  # 37 candidates (each backend's vector_add and reduction, torch copy/dot, GEMM per dtype)
    step "peaks"
    timeout 560 "$PY" -m suite.cli peaks --repeats 3 --timeout 200 > "$W/peaks.txt" 2>&1
    tail -n 30 "$W/peaks.txt" >> "$OUT/log-$PART.txt"
    ;;
attention_gemv)
    cli 250 attention run --op attention --backend cuda --backend triton --backend torch --variant flash \
        --variant sdpa --timeout 60 --case b4h32s8192d128,bf16 --case b4h32s8192d128,causal,bf16 \
        --case b16h16s2048d64,bf16
    cli 120 attention_simt run --op attention --backend opencl --backend webgpu --backend torch \
        --variant flash --variant sdpa --timeout 60 --case b1h16s4096d64,fp32 --case b1h16s4096d64,causal,fp32
    cli 170 gemv run --op gemv_lowbit --variant fused_vec --variant dense --variant tinygemm --timeout 60 \
        --case w4a16,n16384,k16384,b1,bf16 --case w4a16,n28672,k8192,b1,bf16 \
        --case w8a16,n16384,k16384,b1,bf16 --case w8a16,n28672,k8192,b1,bf16
    ;;
integrity)
    step "integrity steps ${STEPS:=1 3}"
    OUT="$W" STEPS="$STEPS" timeout 540 bash scripts/integrity_gpu.sh > "$W/integrity.txt" 2>&1
    cat "$W/verdicts.md" >> "$OUT/log-$PART.txt" 2>/dev/null
    tail -n 30 "$W/crosscheck.txt" >> "$OUT/log-$PART.txt" 2>/dev/null
    ;;
start_rule)
    step "integrity step 2 (the start rule: x torch with the blocking start, clocks during the window)"
    OUT="$W" STEPS=2 timeout 540 bash scripts/integrity_gpu.sh > "$W/integrity.txt" 2>&1
    tail -n 40 "$W/start_rule.txt" >> "$OUT/log-$PART.txt" 2>/dev/null
    ;;
softmax)
    V=(--variant fused_row --variant split_row --variant eager --variant compile --timeout 120)
    cli 300 softmax_131072 run --op softmax --case 4096x131072 "${V[@]}"
    cli 250 softmax_16384_bf16 run --op softmax --case 16384x16384,bf16 "${V[@]}"
    ;;
splitk)  # matmul cuda splitk (M ≤ 16) beside cuBLAS and Triton, with mma_sync's probe
    cli 200 splitk run --op matmul --backend cuda --backend triton --backend torch --variant splitk \
        --variant persistent --variant matmul --timeout 60 --case 16x8192x8192,bf16 --case 1x8192x8192,bf16
    ;;
softmax_rest)  # 4096×131072, lost twice to limits (bf16 16384² landed: run babebb, 2026-12-01)
    cli 420 softmax_131072 run --op softmax --case 4096x131072 --variant split_row --variant compile \
        --timeout 120 --time-cap 2
    ;;
probes_matmul)  # mma_sync BN 256/128 (2 blocks/SM), register_blocked tiles (~4 minutes)
    probe 200 mma matmul cuda --case '8192³,bf16' --only mma_sync
    probe 200 sgemm matmul cuda --case '8192³,fp32' --only register_blocked
    ;;
probes_attention)  # cuda flash warps × BN, non-causal and causal D128
    for c in b4h32s8192d128,bf16 b4h32s8192d128,causal,bf16; do
        probe 200 "attention_$c" attention cuda --case "$c" --only flash
    done
    ;;
probes_softmax)  # triton split_row part sizes at 4096×131072 (75.5 % with 16384-value parts)
    probe 200 softmax_triton softmax triton --case 4096x131072 --only split_row
    ;;
probes_gemv)  # gemv cuda KW × US × STAGES, w4 and w8
    for c in w4a16,n16384,k16384,b1,bf16 w8a16,n16384,k16384,b1,bf16; do
        probe 220 "gemv_$c" gemv_lowbit cuda --case "$c"
    done
    ;;
*)
    echo "unknown part $PART: $PARTS" >&2
    exit 2
    ;;
esac
step "done"
tar -czf "$OUT/$PART.tar.gz" -C "$OUT" "$PART" && rm -rf "$W"
