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
#if BITS == 8
            const float s = h2f(scales[n]);
#else
            const float s = 1.0f;
#endif
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
