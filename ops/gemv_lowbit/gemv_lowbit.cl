// gemv_lowbit.cl — y[b, n] = Σ_k w[n, k]·x[b, k], W [N, K] in the low-bit formats of
// references/lowbit.py (w4a16: offset-binary nibbles, k even in the low nibble, one fp16 scale
// per 128 k; w8a16: int8, one fp16 scale per row), x fp16 [B, K], y fp16 [B, N], B ≤ 8.
// With DT=2 scales, x, y (and the dense W) are bf16 instead. Same algorithm as gemv_lowbit.cu;
// fp16 through vload_half / vstore_half_rte (core OpenCL C, no cl_khr_fp16 needed), bf16 as the
// top half of a float, rounded to nearest even in integer arithmetic. Bytes: packed W + scales + x + y (dequant_then_gemv adds the dense W
// written and read, 2·2·N·K); flops 2·N·K·B. K is a multiple of 128.
//
// Defines: BITS (4, 8; 16 = dense fp16 W), NB (batch), U (32-bit words per row and step: 1, or a
// multiple of 4 = 16-byte uint4 loads), RPT (rows per team), TEAM (work-items per team, a power of two),
// TEAMS (teams per work-group), MAGIC (0/1), SUBGROUPS (0 tree, 2 NVIDIA shuffles).
// Thread → data: team t of work-group g owns rows n = (g·TEAMS + t)·RPT + r, r < RPT; its
// work-item l loads units l, l+TEAM, ... of each row (unit = U words = U·32/BITS k values, inside
// one scale group), sums the unit's exact q·x products in fp32, scales them (w4a16) and adds
// them to an fp32 accumulator per (row, batch). The RPT·NB accumulators are reduced across the
// team by warp butterflies (SUBGROUPS=2: NVIDIA, TEAM = 32 = one warp, inline PTX shfl.sync as in
// softmax.cl) or else a local-memory tree (PoCL and other devices: a team need not be one
// sub-group there); work-item 0 of the team rounds once to fp16 and stores.
// fused_vec (MAGIC=1) unpacks with the 2^23 magic (FIELD below: one AND/OR and one subtraction per
// weight, exact) instead of shift, mask, subtract and int→float. x is read 8 values per 16-byte
// load (ldx), once per unit for the RPT rows.
// Launch: groups = (⌈N / (TEAMS·RPT)⌉), block = (TEAM·TEAMS).
//
//   gemv_lowbit      the GEMV above (fused: U=1, RPT=1, TEAM=64; fused_vec: U=4, RPT=4, TEAM=32)
//   dequant_lowbit   work-item per 32-bit word (two k values) of the dense fp16 W:
//                    W_dense[n, k] = fp16(q·s), rounded to nearest even

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
#ifndef TEAM
#define TEAM 64
#endif
#ifndef TEAMS
#define TEAMS 2
#endif

#ifndef DT
#define DT 1  // 16-bit type of scales, x, y and the dense W: 1 fp16, 2 bf16
#endif

#define GROUP 128
#if BITS == 4
#define VPW 8
#elif BITS == 8
#define VPW 4
#else
#define VPW 2
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#include "halfvec.cl"

// element i of a 16-bit array as float (exact)
inline float ld16(size_t i, __global const ushort* p) {
#if DT == 2
    return as_float((uint)p[i] << 16);
#else
    return vload_half(i, (__global const half*)p);
#endif
}

// x values per vector load: one 16-byte load of 8, or the whole unit where it holds fewer (fused
// int8: 4); XW weight words share one load. Scalar 2-byte loads here (before session 12) made the
// x reads the limiter on NVIDIA: a warp's lanes read units 64 bytes apart, so each scalar load
// touched 32 sectors (w4a16 19.8 % of the ceiling; 40.0 % with one vector load per word).
#if U * VPW >= 8
#define XC 8
#else
#define XC 4
#endif
#define XW (XC / VPW)

// x[i .. i+XC-1] (i a multiple of XC) as floats, exact: one aligned 16- or 8-byte load
inline void ldx(size_t i, __global const ushort* p, float* out) {
#if DT == 2
    const CAT(uint, XC) u = CAT(convert_uint, XC)(*((__global const CAT(ushort, XC)*)(p + i))) << 16;
    CAT(vstore, XC)(CAT(as_float, XC)(u), 0, out);
#else
    CAT(vstore, XC)(CAT(ldh, XC)((__global const half*)(p + i)), 0, out);  // halfvec.cl
#endif
}

// v rounded to nearest even into element i of a 16-bit array
inline void st16(float v, size_t i, __global ushort* p) {
#if DT == 2
    const uint u = as_uint(v);
    p[i] = (ushort)(isnan(v) ? ((u >> 16) | 0x40u) : ((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16));
#else
    vstore_half_rte(v, i, (__global half*)p);
#endif
}

inline float wval(uint w, int e) {
#if BITS == 4
    return (float)((int)((w >> (4 * e)) & 0xFu) - 8);
#elif BITS == 8
    return (float)(char)((w >> (8 * e)) & 0xFFu);
#else
#if DT == 2
    return as_float(((w >> (16 * e)) & 0xFFFFu) << 16);
#else
    return vload_half(e, (const __private half*)&w);  // fp16 bits of the word, no cl_khr_fp16
#endif
#endif
}

#ifndef MAGIC
#define MAGIC 0  // 1 (fused_vec): shift-free 2^23-magic unpack (FIELD)
#endif
#ifndef SUBGROUPS
#define SUBGROUPS 0  // 2: NVIDIA warp shuffles (inline PTX) for the team reduction (TEAM = 32)
#endif

// MAGIC: field e of a packed word w as q exactly, without a shift: (src & (MASK << SH)) under the
// exponent of 2^(23 − SH) reads as 2^(23 − SH) + field (the field's lowest bit is one unit of that
// float's mantissa, and it stays inside the 23-bit mantissa), minus 2^(23 − SH) + HALF; int4:
// nibbles 0..4 from w (SH 4e), 5..7 from w >> 12 (SH 4(e−3)); int8: bytes 0, 1 of
// u = w ^ 0x80808080 (SH 8e), 2, 3 of u >> 16. One AND/OR (LOP3) and one subtraction per weight
// instead of shift, mask, sub, int→float (x needs no scaling: session 17; before, the field was read
// as 2^23 + field·2^SH and x pre-scaled by 2^-SH, one more multiply per x value and field).
#if BITS == 4
#define FSH(e) (4 * ((e) < 5 ? (e) : (e) - 3))
#define FHALF 8.0f
#define FMASK 15u
#define FSRC(w, hiw, e) ((e) < 5 ? (w) : (hiw))
#define FHI(w) ((w) >> 12)
#define FPRE(w) (w)
#else
#define FSH(e) (8 * ((e) & 1))
#define FHALF 128.0f
#define FMASK 255u
#define FSRC(w, hiw, e) ((e) < 2 ? (w) : (hiw))
#define FHI(w) ((w) >> 16)
#define FPRE(w) ((w) ^ 0x80808080u)
#endif
#define FIELD(src, e) \
    (as_float(((src) & (FMASK << FSH(e))) | (0x4B000000u - ((uint)FSH(e) << 23))) - ((float)(1 << (23 - FSH(e))) + FHALF))

#if SUBGROUPS == 2
inline float team_sum(float v) {  // NVIDIA: a team of 32 is one warp
    for (int off = 16; off > 0; off >>= 1) {
        uint r;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(as_uint(v)), "r"(off));
        v += as_float(r);
    }
    return v;
}
#endif

// y[b, n] from the fp32 total of row n (w8a16: times the row's scale; w4a16 applied its group
// scales in the sum)
void store_total(float total, int n, int b, int N, __global const ushort* scales, __global ushort* y) {
#if BITS == 8
    total *= ld16(n, scales);
#endif
    st16(total, (size_t)b * N + n, y);
}

__kernel void gemv_lowbit(__global const uint* wq, __global const ushort* scales, __global const ushort* x,
                          __global ushort* y, int N, int K) {
    __local float red[TEAMS * TEAM];
    const int lid = get_local_id(0);
    const int lane = lid % TEAM;
    const int team = lid / TEAM;
    const int n0 = (get_group_id(0) * TEAMS + team) * RPT;
    const int wpr = K / VPW;
    const int upr = wpr / U;
    float acc[RPT][NB];
    for (int r = 0; r < RPT; ++r)
        for (int b = 0; b < NB; ++b) acc[r][b] = 0.0f;

    if (n0 < N) {
        for (int u = lane; u < upr; u += TEAM) {
            const int k0 = u * U * VPW;
            uint wr[RPT][U];
            for (int r = 0; r < RPT; ++r) {
                const int n = min(n0 + r, N - 1);  // rows past N recompute row N-1, never stored
                const size_t w0 = (size_t)n * wpr + (size_t)u * U;
#if U % 4 == 0
                for (int q = 0; q < U / 4; ++q) {  // 16-byte loads
                    const uint4 v = *((__global const uint4*)(wq + w0) + q);
                    wr[r][4 * q] = v.x; wr[r][4 * q + 1] = v.y; wr[r][4 * q + 2] = v.z; wr[r][4 * q + 3] = v.w;
                }
#else
                for (int j = 0; j < U; ++j) wr[r][j] = wq[w0 + j];
#endif
            }
            float part[RPT][NB];
            for (int r = 0; r < RPT; ++r)
                for (int b = 0; b < NB; ++b) part[r][b] = 0.0f;
            float xw[NB][XC];  // x of XW words, loaded once for the RPT rows
            for (int j = 0; j < U; ++j) {
                if (j % XW == 0)
                    for (int b = 0; b < NB; ++b) ldx((size_t)b * K + k0 + j * VPW, x, xw[b]);
#if MAGIC
                uint src[RPT], hiw[RPT];
                for (int r = 0; r < RPT; ++r) {
                    src[r] = FPRE(wr[r][j]);
                    hiw[r] = FHI(src[r]);
                }
#endif
                for (int e = 0; e < VPW; ++e) {
                    float xv[NB];
                    for (int b = 0; b < NB; ++b) xv[b] = xw[b][(j % XW) * VPW + e];
                    for (int r = 0; r < RPT; ++r) {
#if MAGIC
                        const float w = FIELD(FSRC(src[r], hiw[r], e), e);
#else
                        const float w = wval(wr[r][j], e);
#endif
                        for (int b = 0; b < NB; ++b) part[r][b] = fma(w, xv[b], part[r][b]);
                    }
                }
            }
            for (int r = 0; r < RPT; ++r) {
#if BITS == 4
                const int n = min(n0 + r, N - 1);
                const float s = ld16((size_t)n * (K / GROUP) + k0 / GROUP, scales);
                for (int b = 0; b < NB; ++b) acc[r][b] = fma(part[r][b], s, acc[r][b]);
#else
                for (int b = 0; b < NB; ++b) acc[r][b] += part[r][b];
#endif
            }
        }
    }
#if SUBGROUPS == 2 && TEAM == 32
    // team reductions: warp butterflies, no local memory or barriers
    for (int r = 0; r < RPT; ++r) {
        for (int b = 0; b < NB; ++b) {
            const float total = team_sum(acc[r][b]);
            const int n = n0 + r;
            if (lane == 0 && n < N) store_total(total, n, b, N, scales, y);
        }
    }
    (void)red;
}
#else
    // team reductions (no shuffles): one local-memory tree per (row, batch); every work-item reaches every barrier
    for (int r = 0; r < RPT; ++r) {
        for (int b = 0; b < NB; ++b) {
            red[lid] = acc[r][b];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int o = TEAM / 2; o > 0; o >>= 1) {
                if (lane < o) red[lid] += red[lid + o];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const float total = red[team * TEAM];
            barrier(CLK_LOCAL_MEM_FENCE);
            const int n = n0 + r;
            if (lane == 0 && n < N) store_total(total, n, b, N, scales, y);
        }
    }
}
#endif

__kernel void dequant_lowbit(__global const uchar* wq, __global const ushort* scales, __global ushort* wd,
                             int N, int K) {
    const size_t i = get_global_id(0);  // word of wd: row n, k = 2·(i mod K/2)
    if (i >= (size_t)N * (K / 2)) return;
    const int n = (int)(i / (K / 2));
    const int k = 2 * (int)(i % (K / 2));
    float q0, q1, s;
#if BITS == 4
    const uint byte = wq[(size_t)n * (K / 2) + k / 2];
    q0 = (float)((int)(byte & 0xFu) - 8);
    q1 = (float)((int)(byte >> 4) - 8);
    s = ld16((size_t)n * (K / GROUP) + k / GROUP, scales);
#else
    q0 = (float)(char)wq[(size_t)n * K + k];
    q1 = (float)(char)wq[(size_t)n * K + k + 1];
    s = ld16(n, scales);
#endif
    st16(q0 * s, 2 * i, wd);
    st16(q1 * s, 2 * i + 1, wd);
}

// ---- gemv_lowbit_mma: fused_mma, NVIDIA tensor cores from OpenCL C (inline PTX, sm_80+) ----
//
// The CUDA fused_vec's algorithm (gemv_lowbit.cu: gemv_lowbit_tc — read its comment for the
// fragment layout, the k permutation and the exact magic-exponent unpack) in OpenCL C: the
// products q·x are formed exactly by mma.sync m16n8k16 (f16/bf16 operands, fp32 accumulators)
// through inline PTX, as this file's shuffles are; so it builds on NVIDIA's OpenCL only (MMA=1;
// the factory declares it unsupported elsewhere). Why: a CUDA-core w4a16 loop spends ~3.5
// operations per weight and stays issue-bound near 40 % of the ceiling (fused_vec above); an
// mma consumes 256 weights per instruction after a 1.25-instruction-per-weight unpack.
// Thread → data: work-group = KW warps (work-items 32w .. 32w+31 are warp w on NVIDIA) on RT tiles
// of 16 rows, row0 = 16·RT·group; lane 4g + t loads 16 bytes of rows row0+16r+g and +8 at byte
// 16t of each 64-byte step (32 int4 or 16 int8 k; one w4a16 scale group per step), and x of batch
// row g (lanes g ≥ NB hold zeros). Steps go in chunks of US; warp w takes chunks w, w+KW, ...
// (split-K inside the work-group) with the next chunk's weights, x and scales loaded into
// registers before the current chunk is multiplied (a cp.async ring in local memory instead ran no
// faster on the H200, its depth capped by the 48 KiB a work-group gets there: session 21, s21b–c,
// removed; two chunks ahead in a register ring of three slots, at 128 or 168 registers, took
// 1.16–1.34 × the time on an H100: session 42, s42o, removed; the weights 1–8 chunks past the
// register ring asked into L2 by prefetch.global.L2, 1.12–1.61 ×: session 43, s43p, commit 59dc36c,
// removed; gemv_lowbit_pk's repacked stream loaded the same way, a chunk ahead into registers with
// coalesced 512-byte loads, 1.055–1.37 ×: session 43, s43k, commit 8d1f8ea, removed); steps left
// over (< US) go one per warp; the warps' partial sums meet in local memory and warp 0 stores.
// Defines: BITS (4, 8), NB, DT, KW, US, RT. Launch: groups = (⌈N / (16·RT)⌉), block = (32·KW).
#if defined(MMA) || defined(PKW)
// h2fma, mma16816, unpack_pairs, tc_step (shared with gemv_lowbit.cu); TC_VPL, TC_STEPK, TC_XU
#include "tc_pairs.h"
#endif
#ifdef MMA

__kernel __attribute__((reqd_work_group_size(32 * KW, 1, 1)))
void gemv_lowbit_mma(__global const uchar* restrict wq, __global const ushort* restrict scales,
                     __global const ushort* restrict x, __global ushort* restrict y, int N, int K) {
    __local float red[(KW > 1 ? KW - 1 : 1) * 4 * RT * 32];
    const int lane = get_local_id(0) & 31, warp = get_local_id(0) >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int row0 = get_group_id(0) * 16 * RT;
    const size_t bpr = (size_t)K * BITS / 8;  // bytes per row
    // tile r: rows row0 + 16r + g (a) and + 8 (b); rows past N are clamped, never stored
    __global const uchar* pa[RT];
    __global const uchar* pb[RT];
    size_t sa[RT], sb[RT];  // first scale of rows a, b (w4a16)
    for (int r = 0; r < RT; ++r) {
        const int ra = min(row0 + 16 * r + g, N - 1), rb = min(row0 + 16 * r + g + 8, N - 1);
        pa[r] = wq + (size_t)ra * bpr + 16 * t;
        pb[r] = wq + (size_t)rb * bpr + 16 * t;
        sa[r] = (size_t)ra * (K / GROUP);
        sb[r] = (size_t)rb * (K / GROUP);
    }
    __global const ushort* xp = x + (size_t)min(g, NB - 1) * K + TC_VPL * t;
    const bool xload = g < NB;  // the other lanes' batch columns are zeros, never stored
    float acc[RT][4];
    for (int r = 0; r < RT; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.0f;
    const int steps = K / TC_STEPK, chunks = steps / US;

// step st's weights (W[r][0/1]), x pieces (X) and w4a16 group scales (S[2r], S[2r+1]) → registers
#if BITS == 4
#define MLOADS(st, S) for (int r = 0; r < RT; ++r) (S)[2 * r] = ld16(sa[r] + (st), scales), (S)[2 * r + 1] = ld16(sb[r] + (st), scales);
#else
#define MLOADS(st, S)
#endif
#define MLOAD(st, W, X, S)                                                                         \
    {                                                                                              \
        for (int r = 0; r < RT; ++r) {                                                             \
            (W)[r][0] = *(__global const uint4*)(pa[r] + (size_t)(st) * 64);                       \
            (W)[r][1] = *(__global const uint4*)(pb[r] + (size_t)(st) * 64);                       \
        }                                                                                          \
        for (int h = 0; h < TC_XU; ++h)                                                            \
            (X)[h] = xload ? *((__global const uint4*)(xp + (size_t)(st) * TC_STEPK) + h) : (uint4)(0u); \
        MLOADS(st, S)                                                                              \
    }
#if BITS == 4
#define MSTEP(W, X, S)                                                                             \
    for (int r = 0; r < RT; ++r) {                                                                 \
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};                                                     \
        tc_step(d, (W)[r][0], (W)[r][1], X);                                                       \
        acc[r][0] = fma(d[0], (S)[2 * r], acc[r][0]);                                              \
        acc[r][1] = fma(d[1], (S)[2 * r], acc[r][1]);                                              \
        acc[r][2] = fma(d[2], (S)[2 * r + 1], acc[r][2]);                                          \
        acc[r][3] = fma(d[3], (S)[2 * r + 1], acc[r][3]);                                          \
    }
#else
#define MSTEP(W, X, S) for (int r = 0; r < RT; ++r) tc_step(acc[r], (W)[r][0], (W)[r][1], X);
#endif
    uint4 wc[US][RT][2], xc[US][TC_XU];
    float sc[US][2 * RT];
    if (warp < chunks)
        for (int j = 0; j < US; ++j) MLOAD(warp * US + j, wc[j], xc[j], sc[j])
    for (int c = warp; c < chunks; c += KW) {
        // the warp's next chunk (the last one again past the end: L2 hits, never used)
        const int c1 = min(c + KW, chunks - 1);
        uint4 wn[US][RT][2], xn[US][TC_XU];
        float sn[US][2 * RT];
        for (int j = 0; j < US; ++j) MLOAD(c1 * US + j, wn[j], xn[j], sn[j])
        for (int j = 0; j < US; ++j) MSTEP(wc[j], xc[j], sc[j])
        for (int j = 0; j < US; ++j) {
            for (int r = 0; r < RT; ++r) wc[j][r][0] = wn[j][r][0], wc[j][r][1] = wn[j][r][1];
            for (int h = 0; h < TC_XU; ++h) xc[j][h] = xn[j][h];
            for (int i = 0; i < 2 * RT; ++i) sc[j][i] = sn[j][i];
        }
    }
    for (int st = chunks * US + warp; st < steps; st += KW) {  // < US steps left: one per warp
        uint4 wr[RT][2], xr[TC_XU];
        float sr[2 * RT];
        MLOAD(st, wr, xr, sr)
        MSTEP(wr, xr, sr)
    }
#undef MSTEP
#undef MLOAD
#undef MLOADS
    if (KW > 1) {  // split-K partials: warps 1..KW−1 → local memory → warp 0 (every work-item reaches the barrier)
        if (warp > 0)
            for (int e = 0; e < 4 * RT; ++e) red[((warp - 1) * 4 * RT + e) * 32 + lane] = acc[e / 4][e % 4];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (warp > 0) return;
        for (int w = 0; w < KW - 1; ++w)
            for (int e = 0; e < 4 * RT; ++e) acc[e / 4][e % 4] += red[(w * 4 * RT + e) * 32 + lane];
    }
    // lane (g, t): rows row0+16r+g (acc[r] 0, 1) and +8 (acc[r] 2, 3), batch columns 2t, 2t+1
    for (int r = 0; r < RT; ++r)
        for (int h = 0; h < 2; ++h) {
            const int n = row0 + 16 * r + g + 8 * h;
            for (int j = 0; j < 2; ++j) {
                const int b = 2 * t + j;
                if (n < N && b < NB) store_total(acc[r][2 * h + j], n, b, N, scales, y);
            }
        }
}
#endif

// ---- gemv_lowbit_pk: fused_packed in OpenCL C (NVIDIA sm_90 only: bulk copies through inline PTX) ----
//
// gemv_lowbit.cu's gemv_lowbit_pk (read its comment: the repacked stream of kernels.pack_groups,
// the contiguous range of chunks per work-group, the ring of 1-D bulk copies filled by one
// producer work-item, each consumer warp's own 16 rows per group and the epoch-tagged group
// finish) in OpenCL C, the PTX (cp.async.bulk, mbarrier, mma.sync, prmt, relaxed loads) through
// inline asm as gemv_lowbit_mma's is. A __local pointer's value is its shared-window offset on
// NVIDIA, the address those instructions take. Differences, all from NVIDIA's OpenCL giving a
// work-group at most 48 KiB of local memory: x does not fit beside the ring (CUDA copies all of
// it into shared memory, 2·K bytes), so PXR=1 has the producer copy each chunk's 256·PSPW-byte x
// slice into the chunk's stage and PXR=0 has the consumers load it from global memory a chunk
// ahead; the ring is PSTAGES smaller chunks, and several work-groups share an SM (the factory caps
// the registers so the whole grid can be resident, as CUDA's one block per SM is; one that is not
// waits for a slot — slower, not stuck: a work-group waits only at the end of its range and only on
// later ones, which post at their start). Measured on an H100 only: PXR=0 72–74 % of its ceiling
// against fused_mma's 74–77 % (sessions 36, 44), PXR=1 75–79 % (session 44); three 64-bit
// divisions per chunk (its group and place) had cost 7–9 points at one step per warp and chunk.
// Defines: DT, PKW, PSTAGES, PSPW (as CUDA's), PXR. Launch: groups = (B) as kernels.pk_geometry, block
// = (32·(PKW + 1)); src the packed stream; ws: G·PKW·slots·16 ulong, zero before the first launch;
// epoch 1, 2, ... per launch.
#ifdef PKW
#define PK_WB (PKW * PSPW * 1024)           // bytes of a chunk's weights
#define PK_STB (PK_WB + PKW * PSPW * 32)    // and its scales
#ifndef PXR
#define PXR 0  // 1: the chunk's x slice rides in its ring stage (the producer's second bulk copy)
#endif
#define PK_SS (PK_STB + PXR * PSPW * 256)  // a stage in local memory

inline uint pk_lds(__local const void* p) { return (uint)(size_t)p; }
inline void pk_mbar_init(uint bar, uint count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
inline void pk_mbar_arrive(uint bar) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(bar) : "memory");
}
inline void pk_mbar_expect(uint bar, uint bytes) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" ::"r"(bar),
                 "r"(bytes) : "memory");
}
inline void pk_mbar_wait(uint bar, uint parity) {
    uint done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
inline void pk_bulk(uint dst, __global const uchar* src, uint bytes, uint bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
inline ulong pk_ld_relaxed(__global const ulong* p) {
    ulong v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
inline float pk_wait_part(__global const ulong* p, ulong v, uint epoch) {
    while ((uint)(v >> 32) != epoch) v = pk_ld_relaxed(p);
    return as_float((uint)v);
}
inline float pk_scale(__local const ushort* s, int i) {
#if DT == 2
    return as_float((uint)s[i] << 16);
#else
    return vload_half(i, (__local const half*)s);
#endif
}
// the work-group holding chunk c of `total` split over nb: ⌈(c + 1)·nb / total⌉ − 1
inline int pk_first_block(long c, long nb, long total) {
    return (int)(((c + 1) * nb + total - 1) / total - 1);
}

// the lane's x pieces 4h + t of chunk kc's PSPW steps, from global memory (loaded a chunk ahead:
// an L1 or L2 round trip per step in the consumers' path otherwise)
inline void pk_ldx(__global const uint4* xs, int kc, int t, uint4* xr) {
#pragma unroll
    for (int j = 0; j < PSPW; ++j)
#pragma unroll
        for (int h = 0; h < 4; ++h) xr[4 * j + h] = xs[(kc * PSPW + j) * 16 + 4 * h + t];
}
// the same pieces from the chunk's slice in its stage (PXR)
inline void pk_ldx_stage(__local const uchar* stage, int t, uint4* xr) {
    __local const uint4* xl = (__local const uint4*)(stage + PK_STB);
#pragma unroll
    for (int j = 0; j < PSPW; ++j)
#pragma unroll
        for (int h = 0; h < 4; ++h) xr[4 * j + h] = xl[16 * j + 4 * h + t];
}

// a stage → this warp's PSPW steps of its 16 rows (lane (g, 0): rows g in acc[0], g + 8 in acc[2]),
// with the chunk's x pieces xr (pk_ldx)
inline void pk_steps(__local const uchar* stage, const uint4* xr, int warp, int lane, float* acc) {
    const int g = lane >> 2;
    __local const uint4* st = (__local const uint4*)stage + warp * PSPW * 64;
    __local const ushort* ss = (__local const ushort*)(stage + PK_WB) + warp * PSPW * 16;
#pragma unroll
    for (int j = 0; j < PSPW; ++j) {
        const uint4 va = st[64 * j + lane], vb = st[64 * j + 32 + lane];
        const uint wa[4] = {va.x, va.y, va.z, va.w}, wb[4] = {vb.x, vb.y, vb.z, vb.w};
        float d0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            const uint4 xv = xr[4 * j + h];
            uint pa[4], pb[4];
            unpack_pairs(wa[h], pa);
            unpack_pairs(wb[h], pb);
            mma16816(d0, pa[0], pb[0], pa[1], pb[1], xv.x, xv.y);
            mma16816(d1, pa[2], pb[2], pa[3], pb[3], xv.z, xv.w);
        }
        acc[0] = fma(d0[0] + d1[0], pk_scale(ss, 16 * j + g), acc[0]);
        acc[2] = fma(d0[2] + d1[2], pk_scale(ss, 16 * j + 8 + g), acc[2]);
    }
}

// this warp's 16 sums of group grp into y, or as this work-group's slot of the group's epoch-tagged
// partials in ws — one per work-group b0..b1 holding its chunks (CUDA's pk_finish and flush: slots
// ≥ 1 post, slot 0 adds the others in slot order and stores)
inline void pk_finish(__global ushort* y, int N, long grp, int warp, int lane, const float* acc,
                      __global ulong* ws, int slots, int cpg, long nb, long total, long bid, uint epoch,
                      const ulong* pre) {
    const int g = lane >> 2;
    if ((lane & 3) != 0) return;
    const int b0 = pk_first_block(grp * cpg, nb, total), slot = (int)bid - b0;
    const int parts = pk_first_block(grp * cpg + cpg - 1, nb, total) - b0 + 1;
    __global ulong* part = ws + (grp * PKW + warp) * slots * 16;
    const int row = (int)grp * 16 * PKW + 16 * warp + g;
    float v0 = acc[0], v8 = acc[2];
    if (parts > 1) {
        if (slot != 0) {
            part[slot * 16 + g] = ((ulong)epoch << 32) | as_uint(v0);
            part[slot * 16 + 8 + g] = ((ulong)epoch << 32) | as_uint(v8);
            return;
        }
        for (int p = 1; p < parts; ++p) {
            v0 += pk_wait_part(part + p * 16 + g, p == 1 ? pre[0] : 0ul, epoch);
            v8 += pk_wait_part(part + p * 16 + 8 + g, p == 1 ? pre[1] : 0ul, epoch);
        }
    }
    if (row < N) st16(v0, row, y);
    if (row + 8 < N) st16(v8, row + 8, y);
}

__kernel __attribute__((reqd_work_group_size(32 * (PKW + 1), 1, 1)))
void gemv_lowbit_pk(__global const uchar* restrict src, __global const ushort* restrict x,
                    __global ushort* restrict y, int N, int K, __global ulong* restrict ws, int slots,
                    uint epoch) {
    __local uint4 ring[PSTAGES * PK_SS / 16];
    __local ulong full[PSTAGES], empty[PSTAGES];
    __local const uchar* dyn = (__local const uchar*)ring;
    const int lane = get_local_id(0) & 31, warp = get_local_id(0) >> 5;
    const int cpg = K / 128 / PSPW, groups = (N + 16 * PKW - 1) / (16 * PKW);
    const long total = (long)groups * cpg, nb = get_num_groups(0), bid = get_group_id(0);
    const long start = total * bid / nb, end = total * (bid + 1) / nb;
    const int len = (int)(end - start);
    if (get_local_id(0) == 0) {
        for (int s = 0; s < PSTAGES; ++s) {
            pk_mbar_init(pk_lds(&full[s]), 1);
            pk_mbar_init(pk_lds(&empty[s]), PKW);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;" ::: "memory");
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (warp == PKW) {  // producer: lane 0 streams the range's chunks (and PXR: their x) through the ring
        if (lane != 0) return;
        for (int i = 0, kc = (int)(start % cpg); i < len; ++i, kc = kc + 1 == cpg ? 0 : kc + 1) {
            const int s = i % PSTAGES;
            const uint fb = pk_lds(&full[s]);
            if (i >= PSTAGES) pk_mbar_wait(pk_lds(&empty[s]), ((i / PSTAGES) - 1) & 1);
            pk_mbar_expect(fb, PK_SS);
            pk_bulk(pk_lds(dyn + s * PK_SS), src + (start + i) * PK_STB, PK_STB, fb);
            if (PXR)
                pk_bulk(pk_lds(dyn + s * PK_SS + PK_STB), (__global const uchar*)x + kc * PSPW * 256,
                        PSPW * 256, fb);
        }
        return;
    }

    __global const uint4* xs = (__global const uint4*)x;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    long cur = start / cpg;  // the group acc belongs to
    ulong pre[2] = {0ul, 0ul};
    const long last = (end - 1) / cpg;
    const bool fin = pk_first_block(last * cpg, nb, total) == (int)bid &&
                     pk_first_block(last * cpg + cpg - 1, nb, total) > (int)bid;
    // chunk i's group and place in it, counted on (no 64-bit division per chunk: at one step per
    // warp and chunk, three of them cost more than the step's arithmetic)
    long grp = cur;
    int kc = (int)(start - cur * cpg);
    uint4 xr[4 * PSPW];
    if (len > 0 && !PXR) pk_ldx(xs, kc, lane & 3, xr);
    for (int i = 0; i < len; ++i) {
        const int s = i % PSTAGES, kn = kc + 1 == cpg ? 0 : kc + 1;
        uint4 xn[4 * PSPW];  // the next chunk's x (this one's again at the end: L1 hits, unused)
        if (!PXR) pk_ldx(xs, i + 1 < len ? kn : kc, lane & 3, xn);
        if (grp != cur) {
            pk_finish(y, N, cur, warp, lane, acc, ws, slots, cpg, nb, total, bid, epoch, pre);
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
            cur = grp;
        }
        if (i == (len > 2 ? len - 2 : 0) && (lane & 3) == 0 && fin) {  // slot 1's words of the last group
            __global const ulong* p1 = ws + (last * PKW + warp) * slots * 16 + 16;
            pre[0] = pk_ld_relaxed(p1 + (lane >> 2)), pre[1] = pk_ld_relaxed(p1 + 8 + (lane >> 2));
        }
        pk_mbar_wait(pk_lds(&full[s]), (uint)(i / PSTAGES) & 1);
        if (PXR) pk_ldx_stage(dyn + s * PK_SS, lane & 3, xr);
        pk_steps(dyn + s * PK_SS, xr, warp, lane, acc);
        asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
        if (lane == 0) pk_mbar_arrive(pk_lds(&empty[s]));
        if (!PXR) {
#pragma unroll
            for (int e = 0; e < 4 * PSPW; ++e) xr[e] = xn[e];
        }
        grp += kn == 0;
        kc = kn;
    }
    if (len > 0) pk_finish(y, N, cur, warp, lane, acc, ws, slots, cpg, nb, total, bid, epoch, pre);
}
#endif

// ---- gemv_lowbit_dp4a: fused_dp4a, w4a16 on integer dot products (gemv_lowbit.cu has the scheme) ----
//
// The same kernel as gemv_lowbit.cu's gemv_lowbit_dp4a: x per scale group in fixed point
// (M = x·2^(148−eb), |M| < 2^22) as three byte planes in local memory, six 4-way byte dot products
// per 8 weights into exact int32 sums, one int→float and one FMA per 32-k unit and row. dp4a:
// PTX dp4a on NVIDIA (DP4A=1), else four byte products (the same integers; PoCL). A group's
// max |x| through local memory (no sub-group assumption). Local memory is static: CU units of
// 32 k per chunk (the factory fits NB·CU·101 bytes + the max scratch under the device's limit,
// 48 KiB on NVIDIA); K > 32·CU goes chunk by chunk through the fp32 workspace ws [NB][N].
// Defines: NB, DT, RPT, TEAMS (warps of 32 per work-group), CU, DP4A, SUBGROUPS (2: NVIDIA shuffles;
// else the warps' sums through local memory). Launch: persistent work-groups
// of 32·TEAMS.
#ifdef CU
#ifndef DP4A
#define DP4A 0
#endif
inline uint dp4a_uu(uint a, uint b, uint c) {
#if DP4A
    uint d;
    asm("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
#else
    const uchar4 x = as_uchar4(a), w = as_uchar4(b);
    return c + (uint)x.s0 * w.s0 + (uint)x.s1 * w.s1 + (uint)x.s2 * w.s2 + (uint)x.s3 * w.s3;
#endif
}
inline int dp4a_ss(int a, int b, int c) {
#if DP4A
    int d;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
#else
    const char4 x = as_char4(a), w = as_char4(b);
    return c + (int)x.s0 * w.s0 + (int)x.s1 * w.s1 + (int)x.s2 * w.s2 + (int)x.s3 * w.s3;
#endif
}
// bytes p of a, b, c, d (little-endian: a's the lowest)
inline uint pick4(int a, int b, int c, int d, int p) {
    const int s = 8 * p;
    return ((uint)(a >> s) & 0xFFu) | (((uint)(b >> s) & 0xFFu) << 8) | (((uint)(c >> s) & 0xFFu) << 16) |
           (((uint)(d >> s) & 0xFFu) << 24);
}

// unit u (of the whole row) of each of the tile's rows: its 16 weight bytes and its group scale
inline void dp4a_load(__global const uint4* wq, __global const ushort* scales, const int* rows, int upr, int gpr,
                      int u, uint4* w, float* s) {
    for (int r = 0; r < RPT; ++r) {
        w[r] = wq[(size_t)rows[r] * upr + u];
        s[r] = ld16((size_t)rows[r] * gpr + u / 4, scales);
    }
}

__kernel __attribute__((reqd_work_group_size(32 * TEAMS, 1, 1)))
void gemv_lowbit_dp4a(__global const uint4* restrict wq, __global const ushort* restrict scales,
                      __global const ushort* restrict x, __global ushort* restrict y, __global float* restrict ws,
                      int N, int K) {
    __local uint4 xs[NB * 6 * CU];     // [NB][3][2][CU]
    __local int sm8[NB * CU];          // 8·Σ M per unit
    __local float fg[NB * (CU / 4)];   // 2^(eb − 148) per group (NaN: a NaN or Inf in the group)
    __local float amx[32 * TEAMS];     // a pass's per-unit max |x| (−1: a NaN or Inf seen)
#if SUBGROUPS != 2
    __local float red[32 * TEAMS * RPT * NB];  // the warps' partial sums (no shuffles)
#endif
    const int lid = get_local_id(0), lane = lid & 31;
    const int upr = K / 32, gpr = K / GROUP, chunks = upr / CU;
    const int nw = TEAMS * get_num_groups(0), gw = (lid >> 5) * get_num_groups(0) + get_group_id(0);
    const int tiles = (N + RPT - 1) / RPT;
    for (int c = 0; c < chunks; ++c) {
        const int u0 = c * CU;
        for (int base = 0; base < NB * CU; base += 32 * TEAMS) {  // convert: work-item per (batch row, unit)
            const int i = base + lid, b = min(i / CU, NB - 1), uc = i % CU;
            float v[32];
            for (int h = 0; h < 4; ++h) ldx((size_t)b * K + 32 * (u0 + uc) + 8 * h, x, v + 8 * h);  // XC = 8
            float amax = 0.0f;
            int bad = 0;
            for (int e = 0; e < 32; ++e) {
                amax = fmax(amax, fabs(v[e]));
                bad |= (as_uint(v[e]) & 0x7F800000u) == 0x7F800000u;  // NaN or Inf (bits: no float compare)
            }
            barrier(CLK_LOCAL_MEM_FENCE);  // amx (and, first pass, the previous chunk's planes) free
            amx[lid] = bad ? -1.0f : amax;
            barrier(CLK_LOCAL_MEM_FENCE);
            const int q0 = lid & ~3;  // the 4 units of a group are 4 consecutive work-items
            const float a0 = amx[q0], a1 = amx[q0 + 1], a2 = amx[q0 + 2], a3 = amx[q0 + 3];
            if (i < NB * CU) {
                const int nonfinite = a0 < 0.0f || a1 < 0.0f || a2 < 0.0f || a3 < 0.0f;
                const float gmax = fmax(fmax(a0, a1), fmax(a2, a3));
                const int eb = max(22, (int)(as_uint(gmax) >> 23));
                const float cs = as_float((uint)(275 - eb) << 23);  // 2^(148 − eb)
                int m[32], sum = 0;
                for (int e = 0; e < 32; ++e) {
                    m[e] = (int)as_uint(fma(v[e], cs, 12582912.0f)) - 0x4B400000;  // round(v·cs)
                    sum += m[e];
                }
                for (int p = 0; p < 3; ++p)
                    for (int h = 0; h < 2; ++h) {
                        uint wd[4];
                        for (int jj = 0; jj < 2; ++jj)
                            for (int o = 0; o < 2; ++o) {  // word 2j + o of unit: o 0 k 8j + 0, 2, 4, 6; o 1 k 8j + 1, 3, 5, 7
                                const int j = 2 * h + jj;
                                wd[2 * jj + o] = pick4(m[8 * j + o], m[8 * j + o + 2], m[8 * j + o + 4], m[8 * j + o + 6], p);
                            }
                        xs[((b * 3 + p) * 2 + h) * CU + uc] = (uint4)(wd[0], wd[1], wd[2], wd[3]);
                    }
                sm8[b * CU + uc] = 8 * sum;
                if ((uc & 3) == 0) fg[b * (CU / 4) + uc / 4] = nonfinite ? NAN : as_float((uint)(eb - 21) << 23);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // every warp of a work-group runs the same trip count (warp 0's tile decides: the
        // local-memory sums below have barriers); a warp past the last tile computes clamped
        // rows and stores nothing
        for (int it = 0; it * nw + (int)get_group_id(0) < tiles; ++it) {
            const int t = it * nw + gw;
            int rows[RPT];
            float acc[RPT][NB];
            for (int r = 0; r < RPT; ++r) {
                rows[r] = min(t * RPT + r, N - 1);  // rows past N recompute row N-1, never stored
                for (int b = 0; b < NB; ++b) acc[r][b] = 0.0f;
            }
            uint4 w[RPT];
            float s[RPT];
            if (lane < CU) dp4a_load(wq, scales, rows, upr, gpr, u0 + lane, w, s);
            for (int uc = lane; uc < CU; uc += 32) {
                uint4 wn[RPT];  // the next unit's weights and scales, loaded before this one is used
                float sn[RPT];
                if (uc + 32 < CU) dp4a_load(wq, scales, rows, upr, gpr, u0 + uc + 32, wn, sn);
                for (int b = 0; b < NB; ++b) {
                    uint xl[3][8];
                    for (int p = 0; p < 3; ++p)
                        for (int h = 0; h < 2; ++h) {
                            const uint4 q = xs[((b * 3 + p) * 2 + h) * CU + uc];
                            xl[p][4 * h] = q.x; xl[p][4 * h + 1] = q.y; xl[p][4 * h + 2] = q.z; xl[p][4 * h + 3] = q.w;
                        }
                    const float f = fg[b * (CU / 4) + uc / 4];
                    const int s8 = sm8[b * CU + uc];
                    for (int r = 0; r < RPT; ++r) {
                        const uint wv[4] = {w[r].x, w[r].y, w[r].z, w[r].w};
                        uint p0 = 0, p1 = 0;
                        int p2 = 0;
                        for (int j = 0; j < 4; ++j) {
                            const uint lo = wv[j] & 0x0F0F0F0Fu, hi = (wv[j] >> 4) & 0x0F0F0F0Fu;
                            p0 = dp4a_uu(lo, xl[0][2 * j], p0);
                            p0 = dp4a_uu(hi, xl[0][2 * j + 1], p0);
                            p1 = dp4a_uu(lo, xl[1][2 * j], p1);
                            p1 = dp4a_uu(hi, xl[1][2 * j + 1], p1);
                            p2 = dp4a_ss((int)lo, (int)xl[2][2 * j], p2);
                            p2 = dp4a_ss((int)hi, (int)xl[2][2 * j + 1], p2);
                        }
                        const int tq = (int)(p0 + (p1 << 8) + ((uint)p2 << 16) - (uint)s8);  // Σ q·M (wraps, exact)
                        acc[r][b] = fma((float)tq, s[r] * f, acc[r][b]);
                    }
                }
                for (int r = 0; r < RPT; ++r) {
                    w[r] = wn[r];
                    s[r] = sn[r];
                }
            }
#if SUBGROUPS == 2
            for (int r = 0; r < RPT; ++r)
                for (int b = 0; b < NB; ++b) acc[r][b] = team_sum(acc[r][b]);
#else
            for (int r = 0; r < RPT; ++r)  // the warp's 32 partials, summed in lane order by lane 0
                for (int b = 0; b < NB; ++b) red[lid * RPT * NB + r * NB + b] = acc[r][b];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lane == 0)
                for (int r = 0; r < RPT; ++r)
                    for (int b = 0; b < NB; ++b) {
                        float v = 0.0f;
                        for (int l = 0; l < 32; ++l) v += red[(lid + l) * RPT * NB + r * NB + b];
                        acc[r][b] = v;
                    }
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
            if (lane == 0 && t < tiles)
                for (int r = 0; r < RPT; ++r) {
                    const int n = t * RPT + r;
                    if (n >= N) break;
                    for (int b = 0; b < NB; ++b) {
                        float v = acc[r][b];
                        if (c > 0) v += ws[(size_t)b * N + n];
                        if (c + 1 < chunks) ws[(size_t)b * N + n] = v;
                        else st16(v, (size_t)b * N + n, y);
                    }
                }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}
#endif
