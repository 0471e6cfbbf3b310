// gemv_lowbit.cu — y[b, n] = Σ_k w[n, k]·x[b, k], W [N, K] in the low-bit formats of
// references/lowbit.py (w4a16: offset-binary nibbles, k even in the low nibble, one fp16 scale
// per 128 k; w8a16: int8, one fp16 scale per row), x fp16 [B, K], y fp16 [B, N], B ≤ 8; with
// DT=2 scales, x, y (and the dense W) are bf16 instead.
// Bytes: packed W + scales + x + y (dequant_then_gemv adds 2·N·K·2 of dense W written and read);
// flops 2·N·K·B. K is a multiple of 128 (the spec rejects other K).
//
// Arithmetic: q·x is exact in fp32 (|q| ≤ 128, x fp16); products of one load unit (≤ 32 k,
// always inside one scale group) are summed in fp32, multiplied by the group's scale and added
// to an fp32 accumulator per (row, batch); w8a16 applies its row scale once at the end; the
// dense path multiplies 16-bit w·x (exact in fp32). y is rounded once to fp16/bf16 (RNE).
//
// Defines: BITS (4, 8; 16 = dense fp16 W), NB (batch), U (32-bit words per load: 1 or 4 =
// 16 bytes), RPT (rows per warp), WARPS (warps per block).
// Thread → data: warp w of block g owns rows n = (g·WARPS + w)·RPT + r, r < RPT; lane l loads
// units l, l+32, ... of each of those rows (unit = U consecutive words = U·32/BITS k values),
// reads the matching x values (cached: every warp reads the same x), and the RPT·NB partial sums
// are reduced across the warp with __shfl_xor_sync; lane 0 writes them.
// Launch: groups = (⌈N / (WARPS·RPT)⌉), block = (32·WARPS).
//
//   gemv_lowbit      the GEMV above (fused: U=1, RPT=1; fused_vec: U=4, RPT=4; dense: BITS=16)
//   dequant_lowbit   thread per 32-bit word of the dense fp16 W (two k values): grid ⌈N·K/2/256⌉
//                    of 256 threads; W_dense[n, k] = fp16(q·s) (exact: |q| ≤ 128, s fp16 normal)

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef DT
#define DT 1  // 16-bit type of scales, x, y and the dense W: 1 fp16, 2 bf16
#endif
#ifndef BITS
#define BITS 4
#endif
#ifndef NB
#define NB 1
#endif
#ifndef U
#define U 1
#endif
#ifndef RPT
#define RPT 1
#endif
#ifndef WARPS
#define WARPS 4
#endif

#define GROUP 128
#define VPW (32 / BITS)  // values per 32-bit word (2 for dense fp16)

typedef unsigned int u32;

__device__ __forceinline__ float h2f(unsigned short h) {
#if DT == 2
    return __uint_as_float((u32)h << 16);  // bf16: the top half of an fp32
#else
    return __half2float(__ushort_as_half(h));
#endif
}

// fp32 → the 16-bit type, round to nearest even
__device__ __forceinline__ unsigned short f2o(float v) {
#if DT == 2
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
#else
    return __half_as_ushort(__float2half_rn(v));
#endif
}

// value e (0 ≤ e < VPW) of a packed word as a float (exact)
__device__ __forceinline__ float wval(u32 w, int e) {
#if BITS == 4
    return (float)((int)((w >> (4 * e)) & 0xFu) - 8);
#elif BITS == 8
    return (float)(signed char)((w >> (8 * e)) & 0xFFu);
#else
    return h2f((unsigned short)(w >> (16 * e)));
#endif
}

// the per-row scale applied to a finished sum: w8a16's row scale, 1 for w4a16 (its group scales
// are applied inside the sum)
__device__ __forceinline__ float row_scale(const unsigned short* scales, int n) {
#if BITS == 8
    return h2f(scales[n]);
#else
    (void)scales, (void)n;
    return 1.0f;
#endif
}

extern "C" __global__ void gemv_lowbit(const u32* __restrict__ wq, const unsigned short* __restrict__ scales,
                                       const unsigned short* __restrict__ x, unsigned short* __restrict__ y,
                                       int N, int K) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int n0 = (blockIdx.x * WARPS + warp) * RPT;
    if (n0 >= N) return;  // whole warp leaves together
    const int wpr = K / VPW;  // words per row
    const int upr = wpr / U;  // units per row
    float acc[RPT][NB];
#pragma unroll
    for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b) acc[r][b] = 0.0f;

    for (int u = lane; u < upr; u += 32) {
        const int k0 = u * U * VPW;
        u32 wr[RPT][U];
#pragma unroll
        for (int r = 0; r < RPT; ++r) {
            const int n = min(n0 + r, N - 1);  // rows past N recompute row N-1, never stored
            const u32* p = wq + (size_t)n * wpr + (size_t)u * U;
#if U == 4
            const uint4 v = *reinterpret_cast<const uint4*>(p);  // one 16-byte load
            wr[r][0] = v.x; wr[r][1] = v.y; wr[r][2] = v.z; wr[r][3] = v.w;
#else
#pragma unroll
            for (int j = 0; j < U; ++j) wr[r][j] = p[j];
#endif
        }
        float part[RPT][NB];
#pragma unroll
        for (int r = 0; r < RPT; ++r)
#pragma unroll
            for (int b = 0; b < NB; ++b) part[r][b] = 0.0f;
#pragma unroll
        for (int j = 0; j < U; ++j) {
#pragma unroll
            for (int e = 0; e < VPW; ++e) {
                const int k = k0 + j * VPW + e;
                float xv[NB];
#pragma unroll
                for (int b = 0; b < NB; ++b) xv[b] = h2f(x[(size_t)b * K + k]);
#pragma unroll
                for (int r = 0; r < RPT; ++r) {
                    const float w = wval(wr[r][j], e);
#pragma unroll
                    for (int b = 0; b < NB; ++b) part[r][b] = fmaf(w, xv[b], part[r][b]);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < RPT; ++r) {
#if BITS == 4
            const int n = min(n0 + r, N - 1);
            const float s = h2f(scales[(size_t)n * (K / GROUP) + k0 / GROUP]);
#pragma unroll
            for (int b = 0; b < NB; ++b) acc[r][b] = fmaf(part[r][b], s, acc[r][b]);
#else
#pragma unroll
            for (int b = 0; b < NB; ++b) acc[r][b] += part[r][b];
#endif
        }
    }
#pragma unroll
    for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b)
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) acc[r][b] += __shfl_xor_sync(0xffffffffu, acc[r][b], o);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < RPT; ++r) {
            const int n = n0 + r;
            if (n >= N) continue;
            const float s = row_scale(scales, n);
#pragma unroll
            for (int b = 0; b < NB; ++b)
                y[(size_t)b * N + n] = f2o(acc[r][b] * s);
        }
    }
}

extern "C" __global__ void dequant_lowbit(const unsigned char* __restrict__ wq,
                                          const unsigned short* __restrict__ scales,
                                          u32* __restrict__ wd, int N, int K) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;  // word of wd: k = 2·(i mod K/2)
    if (i >= (size_t)N * (K / 2)) return;
    const int n = (int)(i / (K / 2));
    const int k = 2 * (int)(i % (K / 2));
    float q0, q1, s;
#if BITS == 4
    const u32 byte = wq[(size_t)n * (K / 2) + k / 2];
    q0 = (float)((int)(byte & 0xFu) - 8);
    q1 = (float)((int)(byte >> 4) - 8);
    s = h2f(scales[(size_t)n * (K / GROUP) + k / GROUP]);
#else
    q0 = (float)(signed char)wq[(size_t)n * K + k];
    q1 = (float)(signed char)wq[(size_t)n * K + k + 1];
    s = h2f(scales[n]);
#endif
    const u32 lo = f2o(q0 * s);
    const u32 hi = f2o(q1 * s);
    wd[i] = lo | (hi << 16);
}

// ---- gemv_lowbit_tc: fused_vec, tensor-core dot products (mma.sync m16n8k16, fp32 accumulators) ----
//
// Why tensor cores for a memory-bound GEMV: at 4.4 TB/s an H200 SM must consume ~33 int4 weights
// per clock; a CUDA-core kernel spends ≥ 3 instructions per weight (unpack, int→float, FMA), most
// of the SM's 128 issue slots per clock, and stays instruction-bound. Here one mma.sync consumes
// 256 weights × up to 8 batch columns; the unpack is 1.25 instructions per weight (below), a
// whole step ≈ 2 per weight. Batch 4 and 8 cost the same instructions as batch 1 (batch is the
// mma's N dimension).
//
// Thread → data: block = KW warps on RT tiles of 16 rows (row0 = 16·RT·blockIdx.x); lane l = 4g + t
// (g = l/4, t = l%4) loads the weights of rows row0+16r+g and row0+16r+g+8 of each tile r (the A
// fragment's rows) and, once for all tiles, the x values of batch row g (the B fragment's column;
// lanes of columns ≥ NB load nothing and hold zeros: never stored). A step = 64 bytes of each
// row: lane t loads 16 bytes (one uint4, cp.async.cg into the warp's shared-memory ring: L1 left
// to x) at byte 16t of the step: 32 int4 (k = 128·step + 32t + 0..31, one scale group per step)
// or 16 int8 (k = 64·step + 16t + 0..15). Steps go in chunks of US consecutive steps (128
// contiguous bytes per row at US = 2); warp w of the block takes chunks w, w+KW, ... (split-K
// inside the block) through a ring of STAGES chunks: the chunk STAGES − 1 ahead is issued before
// the current one is consumed, (STAGES − 1)·2·RT·US·16 bytes in flight per lane (the remainder steps are loaded directly, ld.global.nc). The steps
// left over (< US) go one per warp; the KW partial accumulators are summed through shared memory
// and warp 0 rounds and stores y. x (16-byte __ldg loads; 32 KiB per batch row at K = 16384,
// shared by every block) and the step's group scales are loaded into registers one chunk ahead
// of their use: with the rings taking most of the SM's L1/shared carve-out, x comes from L2, and
// loading it just in time left 57 % of the warps' stall cycles waiting on those loads (Nsight
// Compute, H200, commit 09cc7c9: w4a16 K=N=16384 bf16 at 51 % of DRAM peak, 36 % issue slots).
//
// k permutation: a dot product may take its k in any order if A and B use the same order. The
// m16n8k16 fragments (PTX ISA): A a0 = (row g, kk 2t, 2t+1), a1 = (row g+8, kk 2t, 2t+1),
// a2 = (row g, kk 2t+8, 2t+9), a3 = (row g+8, kk 2t+8, 2t+9); B b0 = (kk 2t, 2t+1; col g),
// b1 = (kk 2t+8, 2t+9; col g); C/D c0,c1 = (row g; col 2t, 2t+1), c2,c3 = (row g+8; same cols).
// Every kk is held by the lanes of one t only, so lane t may map its kk to any of its own k: for
// a word of 4 consecutive k (int8), or a half word (int4: bytes 0-1 and 2-3 of a word are k = 0..3
// and 4..7), the unpack below yields the pairs (e0, e2) and (e1, e3) (a pair = one f16x2/bf16x2
// register, low half first): {a0..a3} = {(e0,e2)_g, (e0,e2)_g+8, (e1,e3)_g, (e1,e3)_g+8} and
// b = {(x0,x2), (x1,x3)}, each x pair one prmt of the 16-byte x load (x stays fp16/bf16: it is the
// mma's B operand, never converted). Checked lane by lane against a direct dot product by a NumPy
// emulation of these fragments while writing it.
//
// Unpack (exact: a magic exponent byte puts the integer in the mantissa, one f16x2 FMA removes it):
//   int4 fp16:  lo = w & 0x0F0F0F0F (bytes e0, e2, e4, e6), hi = w & 0xF0F0F0F0 (16·e1, ...);
//               prmt(lo, 0x64646464) = f16x2(1024 + n_e0, 1024 + n_e2), − 1032 → q;
//               prmt(hi, 0x64646464) = f16x2(1024 + 16·n_e1, ...), ·1/16 − 72 → q (fp16 has ulp 1
//               on [1024, 2048); every intermediate is an exact small integer): 2 LOP3 + 4 PRMT +
//               4 HFMA2 per 8 weights.
//   int4 bf16:  the same with hi = (w >> 4) & 0x0F0F0F0F, magic 0x43 (bf16 128 + n, ulp 1 on
//               [128, 256)), − 136 (bf16's 7-bit mantissa has no room for 16·n).
//   int8 fp16:  u = w ^ 0x80808080 (q + 128); prmt(u, 0x64646464) = f16x2(1024 + u_e0, 1024 + u_e2)
//               (u ≤ 255 fits the 10-bit mantissa), − 1152 → q.
//   int8 bf16:  2^23 + u as an fp32 (prmt into 0x4B000000), − (2^23 + 128) → q exactly, then
//               cvt.rn.bf16x2.f32 (|q| ≤ 128 has ≤ 8 significant bits: exact in bf16).
// Tried (session 13, probes-20261202-session13/c71b162): int4 pairs left at q + offset (no HFMA2)
// and a second mma per k16 with A = −offset adding −offset·Σx to the same accumulators (8 HMMA
// instead of 32 HFMA2 per step): 61.7 / 62.4 % against 63.5 / 63.7 % (w4a16 bf16, N = 16384 /
// 28672); removed.
// Tried (session 14, probes-20261202-session14/02d5054): int8 bf16 split into exact bf16 halves,
// 128 + (low 7 bits) and −(128 + 128·sign) (magic bytes 0x43 / 0xC3 by PRMT; 2 LOP3 + 4 PRMT per
// 4 weights instead of 10 instructions), summed by two mma per k16 on two accumulator chains:
// 85.7 / 77.0 % against 86.6 / 78.7 % (w8a16 bf16, N = 16384 / 28672): the unpack's instruction
// count is not what holds w8a16 back; removed. Block b starting its K loop at chunk b·ROT (mod
// chunks; probes-20261202-session14/7908344), ROT = 1 / 5 / 13: 75.5 / 74.8 / 74.4 % against 77.2 %
// (N = 28672) and 75.0 / 70.2 / 73.8 % against 82.5 % (N = 16384); removed. x through the cp.async
// ring with the weights (the 4·NB loading lanes' 16-byte pieces, STAGES − 1 chunks ahead, instead
// of __ldg one chunk ahead; probes-20261202-session14/b6da88f): 46.8 / 52.0 % (w8a16) and 33.1 /
// 28.1 % (w4a16) against 77.1 / 82.3 and 63.5 / 64.2 %; removed. With two tiles per warp, w4a16
// bf16 pairs left at q + 136 and −136·Σx added by one mma per k16 shared by both tiles (8 HMMA
// instead of 64 HFMA2 per step; 147 registers; probes-20261202-session14/56ec77f): 55.8 / 63.3 %
// (KW 2: 65.2 / 57.7) against 68.5 / 66.6 %; removed.
// Tried (session 15, probes-20261203-session15/809a295): w4a16 bf16 pairs left at q + 136 and
// −136·Σx per scale group computed once per block into shared memory while the ring's first chunks
// load (no HFMA2; the main loop 484 instead of 587 sm_90 SASS instructions per chunk, same 128
// registers): 64.7 / 62.6 % against 69.1 / 66.7 % (KW 2: 59.1 / 59.4 %) — the block's added start-up
// (its grid is about one wave, so every block's start is on the kernel's critical path) costs
// more than the instructions save; removed.
// Arithmetic: the tensor core forms the exact products q·x and sums them in fp32 accumulators;
// w4a16 sums each step (one scale group) from zero and adds D·scale to fp32 accumulators (fmaf);
// w8a16 accumulates all of K in the mma accumulators and applies the row scale once at the end.
//
// Defines: BITS (4, 8), NB (batch ≤ 8), DT, KW (warps per block), US (steps per chunk), RT (16-row
// tiles per warp: every tile's rows ride the same ring stages and share the x registers).
// Launch: groups = (⌈N / (16·RT)⌉), block = (32·KW). Needs sm_80+ (mma.sync f16/bf16 → f32).

#ifndef KW
#define KW 4
#endif
#ifndef US
#define US 4
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef RT
#define RT 1  // 16-row tiles per warp (sharing each x load and its fragment permutes)
#endif
#ifndef MEMONLY
#define MEMONLY 0  // probe: the memory path alone (loads kept alive by a XOR; wrong output by design)
// (session 15, probes-20261203-session15/68309a8: w4a16 bf16 77.6 / 76.4 % against the full
// kernel's 69.1 / 66.4 %, w8a16 86.2 / 83.3 % against 82.4 / 78.1 %; a plain read of the same bytes,
// torch.sum, reaches 79.4 / 76.8 % and 87.6 / 88.8 % of the ceiling: 4593eb3, size_ceiling.py)
#endif
// h2fma, mma16816, unpack_pairs, tc_step; TC_VPL, TC_STEPK, TC_XU
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // mma.sync m16n8k16, cp.async
#include "tc_pairs.h"

__device__ __forceinline__ uint4 ld_stream(const unsigned char* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ void cp_async16(void* smem, const unsigned char* gmem) {
    const u32 sa = (u32)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int n>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(n)); }

extern "C" __global__ void __launch_bounds__(32 * KW)
gemv_lowbit_tc(const unsigned char* __restrict__ wq, const unsigned short* __restrict__ scales,
               const unsigned short* __restrict__ x, unsigned short* __restrict__ y, int N, int K) {
    // dynamic: KW·STAGES·2·RT·US·32 uint4 (the weight ring), then (KW−1)·4·RT·32 floats (split-K
    // partials)
    extern __shared__ uint4 ring[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int row0 = blockIdx.x * 16 * RT;
    const size_t bpr = (size_t)K * BITS / 8;  // bytes per row
    // tile r: rows row0 + 16r + g (pa) and + 8 (pb); rows past N are clamped, never stored
    const unsigned char* pa[RT];
    const unsigned char* pb[RT];
#if BITS == 4
    const unsigned short* sa[RT];
    const unsigned short* sb[RT];
#endif
#pragma unroll
    for (int r = 0; r < RT; ++r) {
        const int ra = min(row0 + 16 * r + g, N - 1), rb = min(row0 + 16 * r + g + 8, N - 1);
        pa[r] = wq + (size_t)ra * bpr + 16 * t;
        pb[r] = wq + (size_t)rb * bpr + 16 * t;
#if BITS == 4
        sa[r] = scales + (size_t)ra * (K / GROUP);
        sb[r] = scales + (size_t)rb * (K / GROUP);
#endif
    }
    const unsigned short* xp = x + (size_t)min(g, NB - 1) * K + TC_VPL * t;
    // only the lanes of batch columns g < NB load x; the others multiply zeros (columns never
    // stored): at B = 1 the x loads of the 28 other lanes were 7/8 of the kernel's L1 traffic
    // for nothing (Nsight Compute, w4a16 K=N=16384 bf16: L1/TEX throughput 74 %, issue 53 %)
    const bool xload = g < NB;
    float acc[RT][4];
#pragma unroll
    for (int r = 0; r < RT; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.0f;
    const int steps = K / TC_STEPK;
    const int chunks = steps / US;
    uint4* my = ring + (size_t)warp * STAGES * 2 * RT * US * 32 + lane;  // [stage][step][tile][a/b]·32

// x values (and w4a16's group scales of every tile) of step st → registers xr, sr
#if BITS == 4
#define TC_LOADS(st, sr)                                                    \
    _Pragma("unroll") for (int r = 0; r < RT; ++r)(sr)[2 * r] = sa[r][st], \
                                               (sr)[2 * r + 1] = sb[r][st];
#else
#define TC_LOADS(st, sr)
#endif
#define TC_LOADX(st, xr, sr)                                                                    \
    {                                                                                           \
        _Pragma("unroll") for (int h = 0; h < TC_XU; ++h)                                       \
            (xr)[h] = xload ? __ldg(reinterpret_cast<const uint4*>(xp + (size_t)(st) * TC_STEPK) + h) \
                            : make_uint4(0u, 0u, 0u, 0u);                                       \
        TC_LOADS(st, sr)                                                                        \
    }
// one step of tile r's weights in registers (va, vb), x and scales in xr, sr
#if BITS == 4
#define TC_STEP(r, va, vb, xr, sr)                                        \
    {                                                                     \
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};                            \
        tc_step(d, va, vb, xr);                                           \
        const float s0 = h2f((sr)[2 * (r)]), s1 = h2f((sr)[2 * (r) + 1]); \
        acc[r][0] = fmaf(d[0], s0, acc[r][0]);                            \
        acc[r][1] = fmaf(d[1], s0, acc[r][1]);                            \
        acc[r][2] = fmaf(d[2], s1, acc[r][2]);                            \
        acc[r][3] = fmaf(d[3], s1, acc[r][3]);                            \
    }
#else
#define TC_STEP(r, va, vb, xr, sr) tc_step(acc[r], va, vb, xr);
#endif
#define TC_SLOT(s, j, r) ((((s) * US + (j)) * RT + (r)) * 2 * 32)

    // chunk c (US steps of every tile's rows) → stage s of this lane's ring slots, one commit
    // group; each lane reads back only what it copied itself, so cp.async.wait_group alone orders them
#define TC_ISSUE(c, s)                                                                      \
    {                                                                                       \
        _Pragma("unroll") for (int j = 0; j < US; ++j) _Pragma("unroll") for (int r = 0; r < RT; ++r) { \
            cp_async16(my + TC_SLOT(s, j, r), pa[r] + (size_t)((c) * US + j) * 64);         \
            cp_async16(my + TC_SLOT(s, j, r) + 32, pb[r] + (size_t)((c) * US + j) * 64);    \
        }                                                                                   \
    }
    // prologue: this warp's first STAGES−1 chunks in flight (a group per stage, empty or not)
#pragma unroll
    for (int i = 0; i < STAGES - 1; ++i) {
        if (warp + i * KW < chunks) TC_ISSUE(warp + i * KW, i)
        cp_async_commit();
    }
    // x and the scales of a chunk come from L2 (x is shared by every block, but L1 is mostly
    // carved out for the rings): they are loaded a chunk ahead into registers (xc, sc: this
    // chunk; xn, snx: the warp's next one, clamped to the last chunk), so no mma waits on L2;
    // the RT tiles of a warp share each x load
    uint4 xc[US][TC_XU];
    unsigned short sc[US][2 * RT];
    if (warp < chunks) {
#pragma unroll
        for (int j = 0; j < US; ++j) TC_LOADX(warp * US + j, xc[j], sc[j])
    }
    int stage = 0;
    for (int c = warp; c < chunks; c += KW) {
        const int cn = c + (STAGES - 1) * KW;  // into the stage consumed in the previous iteration
        const int sn = stage == 0 ? STAGES - 1 : stage - 1;
        if (cn < chunks) TC_ISSUE(cn, sn)
        cp_async_commit();
        uint4 xn[US][TC_XU];
        unsigned short snx[US][2 * RT];
        const int c1 = min(c + KW, chunks - 1);
#pragma unroll
        for (int j = 0; j < US; ++j) TC_LOADX(c1 * US + j, xn[j], snx[j])
        cp_async_wait<STAGES - 1>();  // chunk c's group has landed
#pragma unroll
        for (int j = 0; j < US; ++j) {
#pragma unroll
            for (int r = 0; r < RT; ++r) {
                const uint4 va = my[TC_SLOT(stage, j, r)], vb = my[TC_SLOT(stage, j, r) + 32];
                TC_STEP(r, va, vb, xc[j], sc[j])
            }
        }
#pragma unroll
        for (int j = 0; j < US; ++j) {
#pragma unroll
            for (int h = 0; h < TC_XU; ++h) xc[j][h] = xn[j][h];
#if BITS == 4
#pragma unroll
            for (int i = 0; i < 2 * RT; ++i) sc[j][i] = snx[j][i];
#endif
        }
        stage = stage == STAGES - 1 ? 0 : stage + 1;
    }
#undef TC_ISSUE
#undef TC_SLOT
    for (int st = chunks * US + warp; st < steps; st += KW) {  // < US steps left: one per warp
        uint4 xr[TC_XU];
        unsigned short sr[2 * RT];
        TC_LOADX(st, xr, sr)
#pragma unroll
        for (int r = 0; r < RT; ++r) {
            const uint4 va = ld_stream(pa[r] + (size_t)st * 64), vb = ld_stream(pb[r] + (size_t)st * 64);
            TC_STEP(r, va, vb, xr, sr)
        }
    }
#undef TC_STEP
#undef TC_LOADX
#undef TC_LOADS

    if (KW > 1) {  // split-K partials: warps 1..KW-1 → shared memory → warp 0
        float* red = reinterpret_cast<float*>(ring + (size_t)KW * STAGES * 2 * RT * US * 32);
        if (warp > 0) {
#pragma unroll
            for (int e = 0; e < 4 * RT; ++e) red[((warp - 1) * 4 * RT + e) * 32 + lane] = acc[e / 4][e % 4];
        }
        __syncthreads();
        if (warp > 0) return;
        for (int w = 0; w < KW - 1; ++w)
#pragma unroll
            for (int e = 0; e < 4 * RT; ++e) acc[e / 4][e % 4] += red[(w * 4 * RT + e) * 32 + lane];
    }
    // lane (g, t) holds rows row0+16r+g (acc[r] 0, 1) and row0+16r+g+8 (acc[r] 2, 3), batch
    // columns 2t, 2t+1
#pragma unroll
    for (int r = 0; r < RT; ++r) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = row0 + 16 * r + g + 8 * h;
            if (n >= N) continue;
            const float s = row_scale(scales, n);
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int b = 2 * t + j;
                if (b < NB) y[(size_t)b * N + n] = f2o(acc[r][2 * h + j] * s);
            }
        }
    }
}

#endif  // sm_80+

// ---- gemv_lowbit_tma: fused_tma, w4a16 at batch 1 on sm_90 (2-D TMA copies, tensor cores) ----
//
// Why: a plain read of the w4a16 cases' bytes reaches 88–93 % of the ceiling in one kernel when
// it keeps 64+ KiB per SM in flight in large copies (scripts/read_ceiling.py; results/nvidia-h200/
// probes-20261204-session19/s19a, s19c: TMA bulk rings of 8–32 KiB copies 89–93 %, 16-byte loads
// with 4 in flight 85–89 %), while gemv_lowbit_tc's memory path alone (per-warp cp.async rings,
// about one wave of blocks) stops at 77.6 / 76.4 % (session 15, MEMONLY). The copies must be
// large: the same ring fed 512-byte 1-D copies (16 rows × 512 bytes per stage) read at 29–36 %
// (s19c), 2-KiB row copies at 87 %; one 2-D tensor copy moves a whole 16-row stage here.
//
// Work: tiles of 16 rows (T = ⌈N/16⌉), each cut into CPT = (K/2)/TCH chunks of TCH bytes of each
// of the 16 rows (one 16 × TCH box of the tensor map over W as [N, K/16] 8-byte words: rows past N
// read as zeros). The T·CPT chunks, tile-major, are split into gridDim.x (≤ T) contiguous ranges,
// so every SM gets the same bytes (± one chunk) and a tile is covered by at most two blocks; a
// block that holds part of a tile leaves its 16 sums in ws (slot 0: the tile's head, 1: its tail)
// and the second of the two to arrive (cnt[tile], reset by it) adds them (head + tail: fp32
// addition commutes, so y is the same whichever block finishes first) and writes y. Block = TKW
// consumer warps + a producer warp whose lane 0 issues the copies: chunk i of the block's range
// goes to stage i mod TSTAGES (dense [16][TCH] bytes); full[s]: the producer's expect_tx + the
// copy's bytes; empty[s]: lane 0 of every consumer warp after its last read of the stage (TKW
// arrivals). Every consumer warp reads every stage, in order (so the parity waits stay within one
// phase): warp w takes steps w, w + TKW, ... (a step: 64 bytes of each row, one scale group;
// lane (g, t) the 16 bytes at 64·step + 16t of rows g and g + 8, the m16n8k16 A fragment rows).
// At a tile change the warps' partial sums are added through shared memory in warp order (named
// barrier 1) by warp 0.
//
// The chunk's group scales (16 rows × TCH/64) come with it, one more 2-D TMA copy per stage (a
// second tensor map, over the scales as [N, K/128] 16-bit words) into the stage's scale area: as
// 16-bit loads from the consumers, one stage ahead, they stalled every stage on DRAM latency
// (s19d: the full kernel 40–52 % against its memory path alone at 80–83 %).
//
// x (batch 1, K·2 bytes) is staged once per block in shared memory in the fragment order of
// gemv_lowbit_tc's k permutation — per 8 k the words (x0,x2), (x1,x3), (x4,x6), (x5,x7), so one
// LDS.128 is both mmas' B operands of a weight word (no PRMT, no L2 round trip per step) — while
// the producer's first copies are in flight. The 16-byte pieces are swizzled (q ^ ((q >> 2) & 2))
// so the four t lanes of a quarter-warp hit four different bank groups. Arithmetic as
// gemv_lowbit_tc (w4a16): exact q·x products summed per group in fp32, times the group scale into
// fp32 accumulators; y rounded once.
//
// Defines: DT, TKW (consumer warps), TSTAGES, TCH (bytes of each row per stage: a multiple of
// 64·TKW, at most 2048, dividing K/2). Launch: groups = (G ≤ ⌈N/16⌉), block = (32·(TKW + 1));
// dynamic shared memory TSTAGES·16·(TCH + TCH/32) + 2·K + 2·TKW·512 bytes; tmaps: two 128-byte
// CUtensorMaps in device memory (backends.cuda.tensor_map_2d, no swizzle): W's (UINT64, boxes
// 16 × TCH/8) at byte 0, the scales' (UINT16, boxes 16 × TCH/64) at byte 128;
// ws: 32·⌈N/16⌉ floats, cnt: ⌈N/16⌉ ints, zero before the first launch (each launch leaves them
// zero). Needs sm_90 (TMA, mbarrier transaction counts); NB 1, BITS 4.
#ifndef TKW
#define TKW 8
#endif
#ifndef TSTAGES
#define TSTAGES 4
#endif
#ifndef TCH
#define TCH 2048
#endif
#ifndef TMEMONLY
#define TMEMONLY 0  // probe: consumers XOR the stage's words instead of the unpack and mma (wrong by design)
#endif
#define T_SPW (TCH / 64 / TKW)  // steps per warp and stage
static_assert(TCH % (64 * TKW) == 0 && TCH <= 2048, "TCH: a multiple of 64·TKW, at most 2048 (256 words)");

#if BITS == 4 && NB == 1 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
#include "mbarrier.cuh"
__device__ __forceinline__ int t_swz(int q) { return q ^ ((q >> 2) & 2); }  // x piece q's slot

extern "C" __global__ void __launch_bounds__(32 * (TKW + 1), 1)
gemv_lowbit_tma(const unsigned char* __restrict__ tmaps, const unsigned short* __restrict__ x,
                unsigned short* __restrict__ y, int N, int K, float* __restrict__ ws, int* __restrict__ cnt) {
    extern __shared__ __align__(128) unsigned char dyn[];
    __shared__ __align__(8) unsigned long long full[TSTAGES], empty[TSTAGES];
    // [TSTAGES][16][TCH] weights, [TSTAGES][16][TCH/64] scales, x (K/8 pieces), [2][TKW][4][32] sums
    constexpr int SCB = 16 * (TCH / 64) * 2;  // bytes of a stage's scales
    const unsigned short* scl = reinterpret_cast<const unsigned short*>(dyn + TSTAGES * 16 * TCH);
    uint4* xs = reinterpret_cast<uint4*>(dyn + TSTAGES * (16 * TCH + SCB));
    float* red = reinterpret_cast<float*>(dyn + TSTAGES * (16 * TCH + SCB) + 2 * K);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int cpt = K / 2 / TCH, tiles = (N + 15) / 16;
    const long long total = (long long)tiles * cpt;
    const long long start = total * blockIdx.x / gridDim.x, end = total * (blockIdx.x + 1) / gridDim.x;
    const int len = (int)(end - start);
    if (threadIdx.x == 0) {
        for (int s = 0; s < TSTAGES; ++s) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), TKW);
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (warp == TKW) {  // producer: lane 0 streams the range's chunks through the ring
        if (lane != 0) return;
        for (int i = 0; i < len; ++i) {
            const long long c = start + i;
            const int tile = (int)(c / cpt), kc = (int)(c - (long long)tile * cpt), s = i % TSTAGES;
            const u32 fb = smem_u32(&full[s]);
            if (i >= TSTAGES) mbar_wait_parity(smem_u32(&empty[s]), ((i / TSTAGES) - 1) & 1);
            mbar_arrive_expect_tx(fb, 16 * TCH + SCB);
            tma_2d(smem_u32(dyn + s * 16 * TCH), tmaps, kc * (TCH / 8), tile * 16, fb);          // weights
            tma_2d(smem_u32(scl + s * (SCB / 2)), tmaps + 128, kc * (TCH / 64), tile * 16, fb);  // scales
        }
        return;
    }

    // consumers: x into shared memory in fragment order (see above), then the chunks
    for (int q = threadIdx.x; q < K / 8; q += 32 * TKW) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(x) + q);
        xs[t_swz(q)] = make_uint4(__byte_perm(v.x, v.y, 0x5410), __byte_perm(v.x, v.y, 0x7632),
                                  __byte_perm(v.z, v.w, 0x5410), __byte_perm(v.z, v.w, 0x7632));
    }
    asm volatile("bar.sync 1, %0;" ::"n"(32 * TKW) : "memory");

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int cur = (int)(start / cpt);  // the tile acc belongs to
    for (int i = 0;; ++i) {
        const long long c = start + i;
        const int tile = i < len ? (int)(c / cpt) : tiles;
        for (; cur < tile && cur < tiles; ++cur) {  // flush tile cur: every consumer warp, once per tile
            if (cur * (long long)cpt >= end) break;  // past the range
            float* rb = red + (cur & 1) * TKW * 128;
#pragma unroll
            for (int e = 0; e < 4; ++e) rb[(warp * 4 + e) * 32 + lane] = acc[e];
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
            asm volatile("bar.sync 1, %0;" ::"n"(32 * TKW) : "memory");
            if (warp != 0) continue;
            float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int w = 0; w < TKW; ++w)
#pragma unroll
                for (int e = 0; e < 4; ++e) v[e] += rb[(w * 4 + e) * 32 + lane];
            // lane (g, 0) holds rows 16·cur + g (v[0]) and + 8 (v[2]) of batch column 0
            const long long t0 = (long long)cur * cpt;
            const bool began_before = t0 < start, ends_after = t0 + cpt > end;
            if (began_before || ends_after) {  // shared with a neighbour: we hold its tail (slot 1) or head (0)
                const int slot = began_before ? 1 : 0;
                if (t == 0) {
                    ws[(cur * 2 + slot) * 16 + g] = v[0];
                    ws[(cur * 2 + slot) * 16 + 8 + g] = v[2];
                }
                __threadfence();
                __syncwarp();
                int old = 0;
                if (lane == 0) old = atomicAdd(cnt + cur, 1);
                old = __shfl_sync(0xffffffffu, old, 0);
                if (old == 0) continue;  // the other block finishes this tile
                __threadfence();
                const float o0 = __ldcg(ws + (cur * 2 + 1 - slot) * 16 + g);
                const float o8 = __ldcg(ws + (cur * 2 + 1 - slot) * 16 + 8 + g);
                v[0] = slot ? o0 + v[0] : v[0] + o0;  // head + tail
                v[2] = slot ? o8 + v[2] : v[2] + o8;
                if (lane == 0) cnt[cur] = 0;
            }
            if (t == 0) {
                if (cur * 16 + g < N) y[cur * 16 + g] = f2o(v[0]);
                if (cur * 16 + g + 8 < N) y[cur * 16 + g + 8] = f2o(v[2]);
            }
        }
        if (i >= len) break;
        const int s = i % TSTAGES;
        mbar_wait_parity(smem_u32(&full[s]), (u32)(i / TSTAGES) & 1);
        const uint4* st = reinterpret_cast<const uint4*>(dyn + s * 16 * TCH);
        const unsigned short* ss = scl + s * (SCB / 2);  // [16][TCH/64]
        const int kc = (int)(c - (long long)tile * cpt);
#pragma unroll
        for (int j = 0; j < T_SPW; ++j) {  // step warp + TKW·j: 16 bytes of rows g, g + 8 at 64·step + 16t
            const int step = warp + TKW * j;
            const uint4 va = st[g * (TCH / 16) + 4 * step + t], vb = st[(g + 8) * (TCH / 16) + 4 * step + t];
            if (TMEMONLY) {
                acc[0] += __uint_as_float((va.x ^ va.y ^ va.z ^ va.w ^ vb.x ^ vb.y ^ vb.z ^ vb.w) & 0x007FFFFFu);
                continue;
            }
            const int q0 = (kc * TCH * 2 + 128 * step + 32 * t) / 8;  // x piece of word 0
            const u32 wa[4] = {va.x, va.y, va.z, va.w}, wb[4] = {vb.x, vb.y, vb.z, vb.w};
            float d[2][4] = {};  // two independent mma chains: each word's k 0..3 and 4..7
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                const uint4 xv = xs[t_swz(q0 + h)];
                u32 pa[4], pb[4];
                unpack_pairs(wa[h], pa);
                unpack_pairs(wb[h], pb);
                mma16816(d[0], pa[0], pb[0], pa[1], pb[1], xv.x, xv.y);
                mma16816(d[1], pa[2], pb[2], pa[3], pb[3], xv.z, xv.w);
            }
            float r0 = d[0][0] + d[1][0], r2 = d[0][2] + d[1][2];
            acc[0] = fmaf(r0, h2f(ss[g * (TCH / 64) + step]), acc[0]);
            acc[2] = fmaf(r2, h2f(ss[(g + 8) * (TCH / 64) + step]), acc[2]);
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(smem_u32(&empty[s]));
    }
}

// ---- gemv_lowbit_pk: fused_packed, w4a16 at batch 1 on sm_90 (repacked weights, 1-D bulk copies) ----
//
// The weights and their group scales are repacked once, outside the timed calls, into the order
// the kernel consumes them (kernels.pack_groups; as tinygemm's and Marlin's weights are packed at
// load time): a plain permutation of the format's bytes. Why: gemv_lowbit_tma's per-tile flush
// (every consumer warp meets at a named barrier every CPT chunks while warp 0 sums their partials)
// and its 2-D boxes cost its memory path 6–8 points against a plain bulk read of the same ring
// (probes-20261204-session20: s20a–s20b, s20f), and the stored layout cannot give a warp rows of
// its own without such a flush.
//
// Work: row groups of 16·PKW rows (warp w of a block owns rows 16w..16w+15 of every group it
// meets), K in chunks of PSPW steps (a step: 128 k, one scale group): chunk (grp, kc) is one run of
// STB = PKW·PSPW·1056 bytes — for each warp w and step j of the chunk, the 512 bytes lanes (g, t)
// read of row 16w + g, then the 512 of row 16w + g + 8 (lane order), then the chunk's scales as
// [w][j][16 rows]. Lane (g, t)'s word h of a step holds the row's k piece 4h + t of the step (8 k),
// nibbles (k0, k2, k1, k3, k4, k6, k5, k7) from the low nibble up, so unpack_pairs yields
// consecutive pairs and x needs no fragment order: the producer copies x as it is (one bulk copy),
// and a piece is one conflict-free LDS.128 whose four words are both mmas' B operands. The G·CPG
// chunks (group-major) are split into gridDim.x contiguous ranges (one block per SM, equal bytes ±
// one chunk); one producer thread streams a block's range through a PSTAGES ring of 1-D bulk
// copies; every consumer warp takes its own part of every stage (PSPW steps of its 16 rows) and
// keeps its rows' sums in registers across the whole range — no cross-warp sum. At a group change
// a warp writes its 16 sums: to y if its block holds the whole group, else to ws slot (block −
// first block of the group), tagged with the launch's epoch; slot 0's block (the one that meets
// the group last: at the end of its range) waits for the other slots' words of this epoch, adds
// them in slot order (y does not depend on which block finishes last) and writes y (pk_finish;
// scripts/pk_timeline.py, s35b: the counter-and-fence finish it replaces cost each block ~2 µs
// after its last chunk). Arithmetic as gemv_lowbit_tc (w4a16): exact q·x products summed per
// group in fp32, times the group scale into fp32 accumulators; y rounded once.
//
// Defines: DT, PKW (consumer warps), PSTAGES, PSPW (steps per warp and chunk), PMEMONLY (probe:
// the consumers XOR the stage's words, wrong by design), PTIMELINE (probe). K a multiple of
// 128·PSPW. Launch: groups = (B ≤ G·CPG: every block holds at least one chunk, which the group
// finish counts on — a block without one would be counted among a group's parts and never post;
// s20l), block = (32·(PKW + 1)); dynamic shared memory PSTAGES·STB + 2·K bytes; src the packed
// stream; ws: G·PKW·slots·16 u64 (slots: the most blocks one group can span), zero before the
// first launch; epoch: 1, 2, ... per launch (never 0 and never repeated while ws lives). Slot 0
// waits for later blocks: the grid is one wave of persistent blocks, and a later block posts a
// group's tail at the start of its range. Needs sm_90 (bulk copies, mbarrier transaction counts).
//
// Where the time goes (scripts/pk_timeline.py, per-block clocks; s35b–s35f on an H100, K=N=16384:
// ~52 µs per call): ~3 µs between the launch's events and the blocks' lifetimes, ~2.7 µs from a
// block's entry to its first chunk (x first, then DRAM latency under the whole grid's first
// requests), the SMs streaming at 1.30–1.47 µs per chunk (so equal ranges end ~2 µs apart), and
// ~1.1 µs from a block's last chunk to its end (warp 0 computes 58–69 % of the time: memory-bound
// there). Tried and removed (s35e/s35f, commit 699ed9d): the last ~1–4 chunks per block as a pool
// taken by ticket after each range, each chunk's partial epoch-tagged, a group added by the block
// that took its last chunk — 1.5–19 % slower than equal ranges alone: a pool chunk's copy takes
// 1.8–6.7 µs (median 3.5) from issue to arrival, coarser than the spread it was to even out. And
// (s35h/s35i, H100) the consumers on 8-bit integer mma (PIMMA below, ~45 % fewer instructions per
// step): 0.996–1.005 × this form's time there — warp 0 busy 0.54 against 0.57, the planes' making
// (2.7 µs at K = 16384) delaying the first chunk. Removed after that (dfde17c) and restored as a probe
// in session 38: on the H200 (s37f's timeline) the consumers are busy 77 % of the span and the SM
// clock by its counters is 1770–1780 MHz against 1965 for the memory path alone.
#ifndef PKW
#define PKW 8
#endif
#ifndef PSTAGES
#define PSTAGES 3  // kernels.PK_STAGES (3 beat 4 and 5 on the H200: s20g)
#endif
#ifndef PSPW
#define PSPW 4
#endif
#ifndef PMEMONLY
#define PMEMONLY 0
#endif

#ifndef PKDIV
#define PKDIV 0  // probe: 1 finds each chunk's group by a 64-bit division (the form before session 36)
#endif
#ifndef PNEXT
#define PNEXT 0  // probe: after its last copy, the producer asks the next block's last PNEXT chunks into L2
#endif
#ifndef PTIMELINE
#define PTIMELINE 0  // probe: per-block event clocks into a last argument tl (scripts/pk_timeline.py)
#endif
#ifndef PXG
#define PXG 0  // probe (session 43): consumers read x from global memory (L1/L2 hits), as the OpenCL port must
#endif
// PTIMELINE's record of block b at tl + b·PK_TL_STRIDE (u64): [0] %globaltimer at entry, [1] at the
// end of consumer warp 0, [2] clock64 at entry, [3] warp 0's x ready, [4] warp 0's end, [5] the
// range's chunks, [8 + w] consumer warp w's end (clock64); then per chunk i < PK_TL_MAX the clock64
// when warp 0's wait for it ended (F), when warp 0 released it (C), when the producer issued it (P)
#define PK_TL_MAX 96
#define PK_TL_STRIDE (32 + 3 * PK_TL_MAX)
#if PTIMELINE
#define PK_TL_ARG , unsigned long long* __restrict__ tl
#define PK_TL(slot, v) (tl[(size_t)blockIdx.x * PK_TL_STRIDE + (slot)] = (unsigned long long)(v))
#else
#define PK_TL_ARG
#define PK_TL(slot, v) ((void)0)
#endif
__device__ __forceinline__ unsigned long long pk_gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

#ifndef PMINB
#define PMINB 1  // probe: 0 drops the launch bound's one-block minimum (ptxas: 71 registers, not 92)
#endif
#if PMINB
#define PK_BOUNDS __launch_bounds__(32 * (PKW + 1), 1)
#else
#define PK_BOUNDS __launch_bounds__(32 * (PKW + 1))
#endif

// this warp's part of a stage: its PSPW steps' words (64 uint4 a step), and their scales (16 a step)
__device__ __forceinline__ const uint4* pk_warp_words(const unsigned char* stage, int warp) {
    return reinterpret_cast<const uint4*>(stage) + warp * PSPW * 64;
}
__device__ __forceinline__ const unsigned short* pk_warp_scales(const unsigned char* stage, int warp) {
    return reinterpret_cast<const unsigned short*>(stage + PKW * PSPW * 1024) + warp * PSPW * 16;
}

// a stage (chunk kc of a group) → this warp's PSPW steps of its 16 rows, into acc (lane (g, 0):
// rows g in acc[0], g + 8 in acc[2])
__device__ __forceinline__ void pk_steps(const unsigned char* stage, const uint4* xs, int kc, int warp,
                                         int lane, float (&acc)[4]) {
    const int g = lane >> 2, t = lane & 3;
    const uint4* st = pk_warp_words(stage, warp);
    const unsigned short* ss = pk_warp_scales(stage, warp);
#pragma unroll
    for (int j = 0; j < PSPW; ++j) {
        const uint4 va = st[64 * j + lane], vb = st[64 * j + 32 + lane];
        if (PMEMONLY) {
            const u32 h = va.x ^ va.y ^ va.z ^ va.w ^ vb.x ^ vb.y ^ vb.z ^ vb.w;
            acc[0] += __uint_as_float(h & 0x007FFFFFu);
            continue;
        }
        const uint4* xp = xs + (kc * PSPW + j) * 16 + t;  // word h: piece 4h + t of the step
        const u32 wa[4] = {va.x, va.y, va.z, va.w}, wb[4] = {vb.x, vb.y, vb.z, vb.w};
        float d[2][4] = {};  // two independent mma chains: each word's k 0..3 and 4..7
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            const uint4 xv = xp[4 * h];
            u32 pa[4], pb[4];
            unpack_pairs(wa[h], pa);
            unpack_pairs(wb[h], pb);
            mma16816(d[0], pa[0], pb[0], pa[1], pb[1], xv.x, xv.y);
            mma16816(d[1], pa[2], pb[2], pa[3], pb[3], xv.z, xv.w);
        }
        acc[0] = fmaf(d[0][0] + d[1][0], h2f(ss[16 * j + g]), acc[0]);
        acc[2] = fmaf(d[0][2] + d[1][2], h2f(ss[16 * j + 8 + g]), acc[2]);
    }
}

// PIMMA 1 (probe): the same stage through 8-bit integer mma (m16n8k32, u8 weights × x as three
// byte planes), no unpack to 16-bit floats. x is converted once per block (pk_x_planes, the consumer
// warps, after its bulk copy): per scale group of 128 k, M = x·2^−e as a 22-bit signed integer
// (e from the group's largest |x|: exact for fp16/bf16 x within 20 binades of it), split as
// M = P0 + 2^8·P1 + 2^16·P2 (P0, P1 unsigned bytes, P2 signed), and (2^e, −8·ΣM) per group. A word's
// low nibbles are the A fragment's bytes at mma-k 4t + i and its high nibbles at 16 + 4t + i; the
// stream's nibble order (k0, k2, k1, k3, k4, k6, k5, k7) makes those the actual k 8t + (0, 1, 4, 5)
// and 8t + (2, 3, 6, 7) of the word's 8 — the planes are laid out to match: per (group, plane,
// lane t, 32-k block kb) a uint2 (b0, b1) of the bytes at those k. Every column of B carries the
// same x (only column 0 is read). Per group: Σ u·M = C0 + 2^8·C1 + 2^16·C2 (exact int32 sums,
// u = q + 8 the stored nibble), and Σ q·x = 2^e·(Σ u·M − 8·ΣM), times the group scale into acc.
#ifndef PIMMA
#define PIMMA 0
#endif
__device__ __forceinline__ void pk_imma(int (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, uint2 b, bool sgn) {
    if (sgn)
        asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b.x), "r"(b.y));
    else
        asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b.x), "r"(b.y));
}

// x (xs, K 16-bit values) → the planes (pl: [group][plane][t][kb] uint2) and gf[group] = (2^e, −8·ΣM),
// by the PKW consumer warps (warp w: groups 4w..4w+3, then 4w + 4·PKW.., four at a time so their
// shuffle chains overlap — one group at a time took 5.7 µs at K = 16384 on an H100, s35h; lane l:
// k 4l..4l+3 of each group); the caller meets the other consumers (named barrier) before reading
__device__ __forceinline__ void pk_x_planes(const unsigned short* xs, unsigned char* pl, float2* gf, int K,
                                            int warp, int lane) {
    constexpr int IL = 4;
    const int ng = K / 128;
    const int kb = lane >> 3, t = (lane & 7) >> 1, hi = lane & 1;
    for (int g0 = warp * IL; g0 < ng; g0 += PKW * IL) {
        float v[IL][4], m[IL];
#pragma unroll
        for (int a = 0; a < IL; ++a) {
            const uint2 raw = g0 + a < ng ? reinterpret_cast<const uint2*>(xs + (g0 + a) * 128)[lane]
                                          : make_uint2(0u, 0u);
            v[a][0] = h2f((unsigned short)(raw.x & 0xFFFFu)), v[a][1] = h2f((unsigned short)(raw.x >> 16));
            v[a][2] = h2f((unsigned short)(raw.y & 0xFFFFu)), v[a][3] = h2f((unsigned short)(raw.y >> 16));
            m[a] = fmaxf(fmaxf(fabsf(v[a][0]), fabsf(v[a][1])), fmaxf(fabsf(v[a][2]), fabsf(v[a][3])));
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int a = 0; a < IL; ++a) m[a] = fmaxf(m[a], __shfl_xor_sync(0xffffffffu, m[a], o));
        int sh[IL], q[IL][4], sum[IL];
#pragma unroll
        for (int a = 0; a < IL; ++a) {
            // ⌊log2 m⌋ from m's exponent bits
            const int e2 = m[a] > 0.0f ? (int)((__float_as_uint(m[a]) >> 23) & 0xFF) - 127 : 0;
            sh[a] = min(20 - e2, 126);  // |x|·2^sh < 2^21 (a group below 2^−106 rounds to zeros)
            const float sc = __uint_as_float((u32)(127 + sh[a]) << 23);
            sum[a] = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i) sum[a] += q[a][i] = __float2int_rn(v[a][i] * sc);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int a = 0; a < IL; ++a) sum[a] += __shfl_xor_sync(0xffffffffu, sum[a], o);
#pragma unroll
        for (int a = 0; a < IL; ++a) {
            const int grp = g0 + a;
            if (grp >= ng) break;
            if (lane == 0)
                gf[grp] = make_float2(__uint_as_float((u32)(127 - sh[a]) << 23), -8.0f * (float)sum[a]);
            // lane l: kb = l / 8, t = (l % 8) / 2, r = 4·(l % 2) + i: b0 takes r ∈ {0, 1, 4, 5} (bytes
            // 0, 1, 2, 3), b1 r ∈ {2, 3, 6, 7}; this lane's two values of each half-word
#pragma unroll
            for (int p = 0; p < 3; ++p) {
                const int s8 = 8 * p;
                unsigned short* at =
                    reinterpret_cast<unsigned short*>(pl + (((grp * 3 + p) * 4 + t) * 4 + kb) * 8);
                u32 b[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) b[i] = (u32)(q[a][i] >> s8) & 0xFFu;
                at[hi] = (unsigned short)(b[0] | (b[1] << 8));
                at[2 + hi] = (unsigned short)(b[2] | (b[3] << 8));
            }
        }
    }
}

// pk_steps through the integer mma (PIMMA): the stage's PSPW steps (one scale group each) of this
// warp's 16 rows into acc (lane (g, 0): rows g in acc[0], g + 8 in acc[2])
__device__ __forceinline__ void pk_steps_imma(const unsigned char* stage, const unsigned char* pl,
                                              const float2* gf, int kc, int warp, int lane, float (&acc)[4]) {
    const int g = lane >> 2, t = lane & 3;
    const uint4* st = pk_warp_words(stage, warp);
    const unsigned short* ss = pk_warp_scales(stage, warp);
#pragma unroll
    for (int j = 0; j < PSPW; ++j) {
        const int grp = kc * PSPW + j;
        const uint4 va = st[64 * j + lane], vb = st[64 * j + 32 + lane];
        const u32 wa[4] = {va.x, va.y, va.z, va.w}, wb[4] = {vb.x, vb.y, vb.z, vb.w};
        const uint2* bp = reinterpret_cast<const uint2*>(pl) + (grp * 3 * 4 + t) * 4;  // plane 0, lane t
        int c[3][4] = {};
#pragma unroll
        for (int kb = 0; kb < 4; ++kb) {
            const u32 a0 = wa[kb] & 0x0F0F0F0Fu, a1 = wb[kb] & 0x0F0F0F0Fu;
            const u32 a2 = (wa[kb] >> 4) & 0x0F0F0F0Fu, a3 = (wb[kb] >> 4) & 0x0F0F0F0Fu;
#pragma unroll
            for (int p = 0; p < 3; ++p) pk_imma(c[p], a0, a1, a2, a3, bp[p * 16 + kb], p == 2);
        }
        const float2 f = gf[grp];
        const float v0 = fmaf((float)c[2][0], 65536.0f, fmaf((float)c[1][0], 256.0f, (float)c[0][0])) + f.y;
        const float v8 = fmaf((float)c[2][2], 65536.0f, fmaf((float)c[1][2], 256.0f, (float)c[0][2])) + f.y;
        acc[0] = fmaf(v0, f.x * h2f(ss[16 * j + g]), acc[0]);
        acc[2] = fmaf(v8, f.x * h2f(ss[16 * j + 8 + g]), acc[2]);
    }
}

// this warp's 16 sums of group grp (acc, as pk_steps leaves them) into y: directly when parts is 1,
// else as slot `slot` of `parts` partials at `part` (16 apart). Each partial is one 64-bit word, the
// value's bits under this launch's epoch (a store of it is single-copy atomic, so a word carrying
// the epoch carries this launch's value): slots ≥ 1 post theirs and go on (no fence, no atomic:
// nothing waits), slot 0 — the block holding the group's first chunk, which meets it at the end of
// its range, long after the next block passed the group's tail at the start of its own — polls
// the others' words until they carry the epoch, adds them in slot order and writes y. `pre`: slot
// 1's words of rows g and g + 8 as loaded two chunks before the block's range ends (kept when they
// already carry the epoch; one or four chunks before: the same time, s35d). Replaced (s35c/s35d,
// H100, 100 interleaved rounds each): every part storing, fencing and counting, the last to
// arrive adding — 3.2–4.1 % slower (each block ~2.7 µs from its last chunk to its end, against
// ~1.1 µs now).
__device__ __forceinline__ unsigned long long pk_ld_relaxed(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ float pk_wait_part(const unsigned long long* p, unsigned long long v, u32 epoch) {
    while ((u32)(v >> 32) != epoch) v = pk_ld_relaxed(p);
    return __uint_as_float((u32)v);
}

__device__ __forceinline__ void pk_finish(unsigned short* y, int N, long long grp, int warp, int lane,
                                          const float (&acc)[4], unsigned long long* part, int parts,
                                          int slot, u32 epoch, const unsigned long long (&pre)[2]) {
    const int g = lane >> 2, t = lane & 3;
    if (t != 0) return;
    const int row = (int)grp * 16 * PKW + 16 * warp + g;
    float v0 = acc[0], v8 = acc[2];
    if (parts > 1) {
        if (slot != 0) {
            part[slot * 16 + g] = ((unsigned long long)epoch << 32) | __float_as_uint(v0);
            part[slot * 16 + 8 + g] = ((unsigned long long)epoch << 32) | __float_as_uint(v8);
            return;
        }
        for (int p = 1; p < parts; ++p) {  // slot order
            v0 += pk_wait_part(part + p * 16 + g, p == 1 ? pre[0] : 0ull, epoch);
            v8 += pk_wait_part(part + p * 16 + 8 + g, p == 1 ? pre[1] : 0ull, epoch);
        }
    }
    if (row < N) y[row] = f2o(v0);
    if (row + 8 < N) y[row + 8] = f2o(v8);
}

// the ring's barriers: full[s] (the producer's copy of stage s), empty[s] (the PKW consumer warps
// done with it), xbar (the copy of x); then the block meets
__device__ __forceinline__ void pk_init_barriers(unsigned long long* full, unsigned long long* empty,
                                                 unsigned long long* xbar) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < PSTAGES; ++s) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), PKW);
        }
        mbar_init(smem_u32(xbar), 1);
        mbar_init_fence();
    }
    __syncthreads();
}

extern "C" __global__ void PK_BOUNDS
gemv_lowbit_pk(const unsigned char* __restrict__ src, const unsigned short* __restrict__ x,
               unsigned short* __restrict__ y, int N, int K, unsigned long long* __restrict__ ws, int slots,
               u32 epoch PK_TL_ARG) {
    extern __shared__ __align__(128) unsigned char dyn[];
    __shared__ __align__(8) unsigned long long full[PSTAGES], empty[PSTAGES], xbar;
    if (PTIMELINE && threadIdx.x == 0) PK_TL(0, pk_gtime()), PK_TL(2, clock64());
    constexpr int WB = PKW * PSPW * 1024;  // bytes of a chunk's weights
    constexpr int STB = WB + PKW * PSPW * 32;
    // x, K/8 pieces: copied into shared memory by the producer, or (PXG) read where it lies
    const uint4* xs = reinterpret_cast<const uint4*>(PXG ? reinterpret_cast<const unsigned char*>(x)
                                                         : dyn + PSTAGES * STB);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int cpg = K / 128 / PSPW, groups = (N + 16 * PKW - 1) / (16 * PKW);
    const long long total = (long long)groups * cpg, nb = gridDim.x;
    const long long start = total * blockIdx.x / nb, end = total * (blockIdx.x + 1) / nb;
    const int len = (int)(end - start);
    pk_init_barriers(full, empty, &xbar);

    if (warp == PKW) {  // producer: lane 0 copies x, then streams the range's chunks through the ring
        if (lane != 0) return;
        if (!PXG) {
            mbar_arrive_expect_tx(smem_u32(&xbar), 2 * K);
            bulk_1d(smem_u32(xs), x, 2 * K, smem_u32(&xbar));
        }
        for (int i = 0; i < len; ++i) {
            const int s = i % PSTAGES;
            const u32 fb = smem_u32(&full[s]);
            if (i >= PSTAGES) mbar_wait_parity(smem_u32(&empty[s]), ((i / PSTAGES) - 1) & 1);
            if (PTIMELINE && i < PK_TL_MAX) PK_TL(32 + 2 * PK_TL_MAX + i, clock64());
            mbar_arrive_expect_tx(fb, STB);
            bulk_1d(smem_u32(dyn + s * STB), src + (start + i) * STB, STB, fb);
        }
        // PNEXT (probe, session 37): equal ranges end ~2 µs apart (s35b: the SMs stream at 1.30-1.47
        // µs per chunk); a block done issuing asks its successor's last chunks into L2, so a slower
        // successor finds them there (its copies then come from L2, not DRAM)
        const long long next_end = total * (blockIdx.x + 2) / nb;
        for (int j = 1; j <= PNEXT && blockIdx.x + 1 < nb && next_end - j >= end; ++j)
            bulk_prefetch_l2(src + (next_end - j) * STB, STB);
        return;
    }

    if (!PXG) mbar_wait_parity(smem_u32(&xbar), 0);
    unsigned char* pl = dyn + PSTAGES * STB + 2 * K;  // PIMMA: x's planes, then (2^e, −8·ΣM) per group
    float2* gf = reinterpret_cast<float2*>(pl + 3 * K);
    if (PIMMA) {
        pk_x_planes(reinterpret_cast<const unsigned short*>(xs), pl, gf, K, warp, lane);
        asm volatile("bar.sync 1, %0;" ::"n"(32 * PKW) : "memory");  // the consumers only
    }
    if (PTIMELINE && threadIdx.x == 0) PK_TL(3, clock64()), PK_TL(5, len);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    long long cur = start / cpg;  // the group acc belongs to
    // this warp's 16 sums of group grp, whose chunks lie in the blocks b0..b1 (the block holding
    // chunk c is ⌈(c + 1)·nb / total⌉ − 1): slot blockIdx.x − b0 of their b1 − b0 + 1 partials
    auto first_block = [&](long long c) { return (int)(((c + 1) * nb + total - 1) / total - 1); };
    auto part_of = [&](long long grp) { return ws + (grp * PKW + warp) * slots * 16; };
    unsigned long long pre[2] = {0ull, 0ull};
    // slot 0 of a split last group loads slot 1's words two chunks before its range ends (the next
    // block posted them at the start of its range), so the finish rarely waits on a load
    const long long last = (end - 1) / cpg;
    const bool fin = first_block(last * cpg) == (int)blockIdx.x &&
                     first_block(last * cpg + cpg - 1) > (int)blockIdx.x;
    auto flush = [&](long long grp) {
        const int b0 = first_block(grp * cpg), b1 = first_block(grp * cpg + cpg - 1);
        pk_finish(y, N, grp, warp, lane, acc, part_of(grp), b1 - b0 + 1, blockIdx.x - b0, epoch, pre);
    };
#if PKDIV  // probe: the group and place of each chunk by a 64-bit division (before session 36)
    for (int i = 0; i < len; ++i) {
        const long long c = start + i, grp = c / cpg;
        const int kc = (int)(c - grp * cpg), s = i % PSTAGES;
#else  // counted on from the range's start (s36f: 0.6-0.9 % faster; the OpenCL port's three cost it 7-9 points)
    long long grp = cur;
    int kc = (int)(start - cur * cpg);
    for (int i = 0; i < len; ++i, kc = kc + 1 == cpg ? 0 : kc + 1, grp += kc == 0) {
        const int s = i % PSTAGES;
#endif
        if (grp != cur) {
            flush(cur);
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
            cur = grp;
        }
        if (i == (len > 2 ? len - 2 : 0) && (lane & 3) == 0 && fin) {
            const unsigned long long* p1 = part_of(last) + 16;  // slot 1's words of the last group
            pre[0] = pk_ld_relaxed(p1 + (lane >> 2)), pre[1] = pk_ld_relaxed(p1 + 8 + (lane >> 2));
        }
        mbar_wait_parity(smem_u32(&full[s]), (u32)(i / PSTAGES) & 1);
        if (PTIMELINE && threadIdx.x == 0 && i < PK_TL_MAX) PK_TL(32 + i, clock64());
        if (PIMMA)
            pk_steps_imma(dyn + s * STB, pl, gf, kc, warp, lane, acc);
        else
            pk_steps(dyn + s * STB, xs, kc, warp, lane, acc);
        __syncwarp();
        if (lane == 0) mbar_arrive(smem_u32(&empty[s]));
        if (PTIMELINE && threadIdx.x == 0 && i < PK_TL_MAX) PK_TL(32 + PK_TL_MAX + i, clock64());
    }
    if (len > 0) flush(cur);
    if (PTIMELINE && lane == 0) {
        PK_TL(8 + warp, clock64());
        if (warp == 0) PK_TL(4, clock64()), PK_TL(1, pk_gtime());
    }
}
#endif

// ---- gemv_lowbit_simt: fused_vec w8a16 at batch 1, on CUDA cores (gemv_lowbit_tc otherwise) ----
//
// Thread → data as gemv_lowbit (U=4): warp w of block g owns RPT rows from (g·WARPS + w)·RPT; lane
// l takes 16-byte units l, l+32, ... (16 int8 weights each) of every one of its rows, with the
// unit's 16 x values (two 16-byte loads, shared by the RPT rows); PF=1 loads the next unit's
// weights before the current one is consumed (loop-carried registers). Unpack: u = w ^ 0x80808080
// holds q + 128 per byte; one PRMT puts byte e under the exponent of 2^23 (0x4B0000bb), so the
// float is 2^23 + q + 128 exactly and one FADD leaves q; one FFMA per weight into the row's fp32
// sum. Warp-shuffle reduction, lane 0 writes y = fp16/bf16(Σ·s_row). Launch: ⌈N / (WARPS·RPT)⌉
// blocks of 32·WARPS; K a multiple of 16 (the spec's 128).
#ifndef PF
#define PF 1
#endif

// the 8 x values of one 16-byte load as floats (exact)
__device__ __forceinline__ void h2f8(const uint4 q, float* out) {
    const u32 xw[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = h2f((unsigned short)(xw[i] & 0xFFFFu));
        out[2 * i + 1] = h2f((unsigned short)(xw[i] >> 16));
    }
}

__device__ __forceinline__ void simt_unit(const uint4 (&w)[RPT], const float (&xv)[16], float (&acc)[RPT]) {
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        const u32 ws[4] = {w[r].x, w[r].y, w[r].z, w[r].w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const u32 ub = ws[j] ^ 0x80808080u;  // q + 128 per byte
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[r] = fmaf(__uint_as_float(__byte_perm(ub, 0x4B000000u, 0x7540 | e)) - 8388736.0f,
                              xv[4 * j + e], acc[r]);
        }
    }
}

extern "C" __global__ void gemv_lowbit_simt(const uint4* __restrict__ wq, const unsigned short* __restrict__ scales,
                                            const unsigned short* __restrict__ x, unsigned short* __restrict__ y,
                                            int N, int K) {
    const int lane = threadIdx.x & 31;
    const int n0 = (blockIdx.x * WARPS + (threadIdx.x >> 5)) * RPT;
    if (n0 >= N) return;  // whole warp leaves together
    const int upr = K / 16;  // 16-byte units per row
    const uint4* rows[RPT];
    float acc[RPT];
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        rows[r] = wq + (size_t)min(n0 + r, N - 1) * upr;  // rows past N recompute row N-1, never stored
        acc[r] = 0.0f;
    }
    uint4 cur[RPT];
    if (PF && lane < upr) {
#pragma unroll
        for (int r = 0; r < RPT; ++r) cur[r] = rows[r][lane];
    }
    for (int u = lane; u < upr; u += 32) {
        uint4 nxt[RPT];
#pragma unroll
        for (int r = 0; r < RPT; ++r) {
            if (!PF) cur[r] = rows[r][u];
            else if (u + 32 < upr) nxt[r] = rows[r][u + 32];
        }
        float xv[16];
        const uint4* xp = reinterpret_cast<const uint4*>(x) + 2 * u;
#pragma unroll
        for (int h = 0; h < 2; ++h) h2f8(xp[h], xv + 8 * h);
        simt_unit(cur, xv, acc);
        if (PF) {
#pragma unroll
            for (int r = 0; r < RPT; ++r) cur[r] = nxt[r];
        }
    }
#pragma unroll
    for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], o);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < RPT; ++r)
            if (n0 + r < N) y[n0 + r] = f2o(acc[r] * row_scale(scales, n0 + r));
    }
}

// ---- gemv_lowbit_dp4a: fused_dp4a, w4a16 on integer dot products (any batch ≤ 8) ----------------
//
// x in fixed point per scale group g of 128 k: M = x·2^(148−eb) with eb the fp32 biased exponent
// of max|x| over the group (at least 22), so |M| < 2^22; M = round(x·2^(148−eb)) is exact for
// every x within 2^-11 (fp16) / 2^-14 (bf16) of the group's largest power of two, and off by at
// most half a unit (≤ 2^-22·max|x|) below that. M is held as three byte planes, M = d0 + 2^8·d1 +
// 2^16·d2 (d0, d1 unsigned, d2 signed: |M >> 16| ≤ 64). The nibbles stay offset-binary
// (q' = q + 8 in 0..15, bytes lo = w & 0x0F0F0F0F: k 0, 2, 4, 6 of the word; hi = (w >> 4) &
// 0x0F0F0F0F: k 1, 3, 5, 7), so per 8 weights: three logic ops and six dp4a (d0, d1 unsigned ×
// unsigned, d2 signed × signed) into exact int32 sums P0, P1, P2 per 32-k unit; then
// Σ q·M = P0 + 2^8·P1 + 2^16·P2 − 8·Σ M (|·| ≤ 2^30, exact in int32), one int→float and one FMA
// with the group scale × 2^(eb−148) into the fp32 row sum. llama.cpp's MMVQ quantises x to 8 bits
// for dp4a; the three planes keep 22 bits.
//
// Each block first converts x (KC values of every batch row per chunk) into shared memory:
// planes as uint4 [NB][3][2][CU] (unit u's 8 lo/hi words of a plane in two uint4), 8·ΣM per unit
// [NB][CU], the group factors 2^(eb−148) [NB][CU/4] (NaN where the group holds a NaN or Inf).
// Rows: tiles of RPT rows dealt warp-major over the grid (tile t → warp t mod W of block
// t mod gridDim: the SMs get equal shares ±1 tile); lane l takes 16-byte units l, l+32, ... of its
// rows, the next unit's weights loaded before the current one is used. With K > KC, chunk c's
// partial sums go through the fp32 workspace ws [NB][N] (the same warp owns a tile in every
// chunk: no race) and the last chunk writes y.
// Defines: NB, DT, RPT, WARPS, CU (units of 32 k per chunk: KC/32), MINB (blocks per SM for the
// launch bounds), DMEMONLY (probe). Launch: grid of persistent blocks (a few per SM) of 32·WARPS
// threads, dynamic shared memory NB·CU·(96 + 4 + 1) bytes.
#ifdef CU
#ifndef MINB
#define MINB 1  // blocks per SM the registers must allow (the factory's blocks per SM)
#endif
#ifndef DMEMONLY
#define DMEMONLY 0  // 1 (probe, wrong by design): the loads and the x conversion without the dot products
#endif
// one 16-byte unit (32 k) of each of a warp's RPT rows against the x planes of every batch row:
// six dp4a per weight word into exact int32 plane sums, then one FMA into the fp32 row sum
__device__ __forceinline__ void dp4a_unit(const uint4 (&w)[RPT], const float (&sv)[RPT], int uc, const uint4* xs,
                                          const int* sm8, const float* fg, float (&acc)[RPT][NB]) {
#if DMEMONLY
#pragma unroll
    for (int r = 0; r < RPT; ++r)  // keep every load alive at one XOR and one FMA per unit and row
        acc[r][0] = fmaf(__int_as_float((w[r].x ^ w[r].y ^ w[r].z ^ w[r].w) & 0x3FFFFFFF), sv[r], acc[r][0]);
    return;
#endif
#pragma unroll
    for (int b = 0; b < NB; ++b) {
        uint4 xv[6];
#pragma unroll
        for (int q = 0; q < 6; ++q) xv[q] = xs[(b * 6 + q) * CU + uc];
        const u32 xl[3][8] = {{xv[0].x, xv[0].y, xv[0].z, xv[0].w, xv[1].x, xv[1].y, xv[1].z, xv[1].w},
                              {xv[2].x, xv[2].y, xv[2].z, xv[2].w, xv[3].x, xv[3].y, xv[3].z, xv[3].w},
                              {xv[4].x, xv[4].y, xv[4].z, xv[4].w, xv[5].x, xv[5].y, xv[5].z, xv[5].w}};
        const float f = fg[b * (CU / 4) + uc / 4];
        const int s8 = sm8[b * CU + uc];
#pragma unroll
        for (int r = 0; r < RPT; ++r) {
            const u32 wv[4] = {w[r].x, w[r].y, w[r].z, w[r].w};
            u32 p0 = 0, p1 = 0;
            int p2 = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const u32 lo = wv[j] & 0x0F0F0F0Fu, hi = (wv[j] >> 4) & 0x0F0F0F0Fu;
                p0 = __dp4a(lo, xl[0][2 * j], p0);
                p0 = __dp4a(hi, xl[0][2 * j + 1], p0);
                p1 = __dp4a(lo, xl[1][2 * j], p1);
                p1 = __dp4a(hi, xl[1][2 * j + 1], p1);
                p2 = __dp4a((int)lo, (int)xl[2][2 * j], p2);
                p2 = __dp4a((int)hi, (int)xl[2][2 * j + 1], p2);
            }
            const int tq = (int)(p0 + (p1 << 8) + ((u32)p2 << 16) - (u32)s8);  // Σ q·M (wraps, exact)
            acc[r][b] = fmaf((float)tq, sv[r] * f, acc[r][b]);
        }
    }
}

// unit u (of the whole row) of each of the tile's rows: its 16 weight bytes and its group scale
__device__ __forceinline__ void dp4a_load(const uint4* __restrict__ wq, const unsigned short* __restrict__ scales,
                                          const int (&rows)[RPT], int upr, int gpr, int u, uint4 (&w)[RPT],
                                          float (&s)[RPT]) {
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        w[r] = wq[(size_t)rows[r] * upr + u];
        s[r] = h2f(scales[(size_t)rows[r] * gpr + u / 4]);
    }
}

// a finished tile: warp sums; lane 0 adds the earlier chunks' partials (ws) and keeps the sum for
// the next chunk or writes y; the sums restart at 0
__device__ __forceinline__ void finish_tile(float (&acc)[RPT][NB], int t, int c, int chunks, int N, int lane,
                                            float* ws, unsigned short* y) {
#pragma unroll
    for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) acc[r][b] += __shfl_xor_sync(0xffffffffu, acc[r][b], o);
            const int n = t * RPT + r;
            if (lane == 0 && n < N) {
                float v = acc[r][b];
                if (c > 0) v += ws[(size_t)b * N + n];
                if (c + 1 < chunks) ws[(size_t)b * N + n] = v;
                else y[(size_t)b * N + n] = f2o(v);
            }
            acc[r][b] = 0.0f;
        }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS, MINB) gemv_lowbit_dp4a(
        const uint4* __restrict__ wq, const unsigned short* __restrict__ scales,
        const unsigned short* __restrict__ x, unsigned short* __restrict__ y, float* __restrict__ ws,
        int N, int K) {
    extern __shared__ uint4 smem[];
    uint4* xs = smem;                                                  // [NB][3][2][CU]
    int* sm8 = reinterpret_cast<int*>(smem + NB * 6 * CU);             // [NB][CU]
    float* fg = reinterpret_cast<float*>(sm8 + NB * CU);               // [NB][CU / 4]
    const int lane = threadIdx.x & 31;
    const int upr = K / 32, gpr = K / GROUP, chunks = upr / CU;
    const int nw = WARPS * gridDim.x, gw = (threadIdx.x >> 5) * gridDim.x + blockIdx.x;
    const int tiles = (N + RPT - 1) / RPT;
    for (int c = 0; c < chunks; ++c) {
        const int u0 = c * CU;
        __syncthreads();  // the previous chunk's planes are no longer read
        for (int base = 0; base < NB * CU; base += 32 * WARPS) {  // convert: thread per (batch row, unit)
            const int i = base + threadIdx.x, b = min(i / CU, NB - 1), uc = i % CU;
            float v[32];
            const uint4* xp = reinterpret_cast<const uint4*>(x + (size_t)b * K) + 4 * (u0 + uc);
#pragma unroll
            for (int h = 0; h < 4; ++h) h2f8(xp[h], v + 8 * h);
            float amax = 0.0f;
            bool bad = false;
#pragma unroll
            for (int e = 0; e < 32; ++e) {
                amax = fmaxf(amax, fabsf(v[e]));
                bad |= (__float_as_uint(v[e]) & 0x7F800000u) == 0x7F800000u;  // NaN or Inf
            }
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));  // the 4 units of a group:
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));  // 4 consecutive lanes
            int nonfinite = bad;
            nonfinite |= __shfl_xor_sync(0xffffffffu, nonfinite, 1);
            nonfinite |= __shfl_xor_sync(0xffffffffu, nonfinite, 2);
            if (i >= NB * CU) continue;
            const int eb = max(22, (int)(__float_as_uint(amax) >> 23));
            const float cs = __uint_as_float((u32)(275 - eb) << 23);  // 2^(148 − eb)
            int m[32], sum = 0;
#pragma unroll
            for (int e = 0; e < 32; ++e) {
                m[e] = (int)__float_as_uint(fmaf(v[e], cs, 12582912.0f)) - 0x4B400000;  // round(v·cs)
                sum += m[e];
            }
#pragma unroll
            for (int p = 0; p < 3; ++p) {
                const u32 sel = (u32)p | ((u32)(4 + p) << 4);
                u32 wd[8];
#pragma unroll
                for (int j = 0; j < 4; ++j)
#pragma unroll
                    for (int o = 0; o < 2; ++o)  // o 0: k 8j + 0, 2, 4, 6 (lo); 1: 8j + 1, 3, 5, 7 (hi)
                        wd[2 * j + o] = __byte_perm(__byte_perm(m[8 * j + o], m[8 * j + o + 2], sel),
                                                    __byte_perm(m[8 * j + o + 4], m[8 * j + o + 6], sel), 0x5410);
                xs[((b * 3 + p) * 2) * CU + uc] = make_uint4(wd[0], wd[1], wd[2], wd[3]);
                xs[((b * 3 + p) * 2 + 1) * CU + uc] = make_uint4(wd[4], wd[5], wd[6], wd[7]);
            }
            sm8[b * CU + uc] = 8 * sum;
            if ((uc & 3) == 0) fg[b * (CU / 4) + uc / 4] = nonfinite ? __int_as_float(0x7FC00000) : __uint_as_float((u32)(eb - 21) << 23);
        }
        __syncthreads();
        for (int t = gw; t < tiles; t += nw) {
            int rows[RPT];
            float acc[RPT][NB] = {};
#pragma unroll
            for (int r = 0; r < RPT; ++r) rows[r] = min(t * RPT + r, N - 1);  // rows past N: never stored
            uint4 w[RPT];
            float s[RPT];
            if (lane < CU) dp4a_load(wq, scales, rows, upr, gpr, u0 + lane, w, s);
            for (int uc = lane; uc < CU; uc += 32) {
                uint4 wn[RPT];
                float sn[RPT];
                if (uc + 32 < CU) dp4a_load(wq, scales, rows, upr, gpr, u0 + uc + 32, wn, sn);
                dp4a_unit(w, s, uc, xs, sm8, fg, acc);
#pragma unroll
                for (int r = 0; r < RPT; ++r) {
                    w[r] = wn[r];
                    s[r] = sn[r];
                }
            }
            finish_tile(acc, t, c, chunks, N, lane, ws, y);
        }
    }
}
#endif
