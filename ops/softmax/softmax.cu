// softmax.cu — y = exp(x − max) / Σ exp(x − max) along each row of a row-major [M, N] matrix.
// Bytes: M·N·sizeof(T) read + the same written (multi-read variants read x two or three times).
// Flops: ~5·M·N. fp32 math; bf16 rows are raw 16-bit words (no cuda_bf16.h needed), widened by
// a shift and rounded back to nearest even.
//
// Thread → data: a block of TPB = TPR·RPB threads holds RPB rows (TPR threads per row: lane =
// tid % TPR, row = block·RPB + tid / TPR; TPR ≤ 32 is a warp segment, so narrow rows are one
// warp each), or, with G > 1 (split_row), one part of one row. A row is cut into "units": a
// 16-byte vector (4 fp32 / 8 bf16) when VECLOAD (N is a multiple of the vector), else one
// element. Thread `lane` takes units lane, lane+TPR, ... of its row (part): a warp reads
// consecutive 16-byte vectors (512 contiguous bytes per load instruction).
//
// Defines: BF16 (0/1), TPR, RPB, VECLOAD, ITEMS (units per thread in the register tile), FITS
// (1: the row/part is held in registers, read once; 0: streamed, then re-read), G (parts per
// row, > 1 only in softmax_rows for split_row). Reductions: __shfl_xor_sync butterflies inside
// a warp (segments of TPR < 32 lanes stay inside their row), then one shared-memory slot per
// warp. exp is exp2f((x − m)·log2 e) (accurate exp2f, no fast math): x − m is exact near the
// maximum, so the argument's rounding scales with x − m, not |m| (rows shifted by ±1e4 stay
// exact). "No value yet" is −FLT_MAX, never −inf, so no −inf − (−inf) = NaN arises.
//
//   softmax_three_pass  TPR threads per row: a max loop, a Σ exp loop, a write loop (3 reads)
//   softmax_rows        FITS: the row (part) is loaded into registers once (ITEMS 16-byte loads
//                       in flight per thread), max and Σ exp reduced over the row's threads, y
//                       written from registers (one read). !FITS: one streaming loop keeps a
//                       running max and a rescaled running sum per thread (online), then a
//                       re-read writes y (two reads). fused_row: FITS where the row fits;
//                       online: !FITS always.
//                       G > 1 (split_row): blocks take tickets in start order (atomicAdd),
//                       ticket t → row t / G, part t % G; each publishes its part's (max, Σ) as
//                       two 64-bit words (epoch << 32 | float bits, atomicExch: value and tag
//                       travel together, no fence needed), waits for the siblings' words of
//                       this launch's epoch (volatile loads), combines the G parts in part
//                       order (bitwise the same in every part) and writes its part. Needs G
//                       blocks resident at once (the factory keeps G ≤ SM count): a block only
//                       waits for siblings whose tickets follow within its row, and tickets
//                       are taken in start order, so every earlier complete row finishes.

#ifndef BF16
#define BF16 0
#endif
#ifndef G
#define G 1
#endif
#define TPB (TPR * RPB)
#define NWARP_ROW (TPR > 32 ? TPR / 32 : 1)

#if BF16
typedef unsigned short T;
#define VEC 8
#else
typedef float T;
#define VEC 4
#endif
#if VECLOAD
#define UNIT VEC
#else
#define UNIT 1
#endif

#define LOG2E 1.4426950408889634f
#define NEG (-3.402823466e38f)
#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ float bf16_to_f(unsigned int w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ unsigned int f_to_bf16(float f) {  // nearest, ties to even (finite)
    const unsigned int u = __float_as_uint(f);
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// unit u of a row (units [0, uend) exist): UNIT values, −inf past the end
__device__ __forceinline__ void load_unit(const T* __restrict__ row, long long u, long long uend, float* v) {
    if (u >= uend) {
#pragma unroll
        for (int j = 0; j < UNIT; ++j) v[j] = NEG_INF;
        return;
    }
#if VECLOAD && BF16
    const uint4 w = __ldg(reinterpret_cast<const uint4*>(row) + u);
    v[0] = bf16_to_f(w.x & 0xFFFFu); v[1] = __uint_as_float(w.x & 0xFFFF0000u);
    v[2] = bf16_to_f(w.y & 0xFFFFu); v[3] = __uint_as_float(w.y & 0xFFFF0000u);
    v[4] = bf16_to_f(w.z & 0xFFFFu); v[5] = __uint_as_float(w.z & 0xFFFF0000u);
    v[6] = bf16_to_f(w.w & 0xFFFFu); v[7] = __uint_as_float(w.w & 0xFFFF0000u);
#elif VECLOAD
    const float4 f = __ldg(reinterpret_cast<const float4*>(row) + u);
    v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
#elif BF16
    v[0] = bf16_to_f(row[u]);
#else
    v[0] = row[u];
#endif
}

// y for unit u from its x values: exp2((x − m)·log2 e) · inv
__device__ __forceinline__ void store_unit(T* __restrict__ row, long long u, const float* v, float m, float inv) {
    float e[UNIT];
#pragma unroll
    for (int j = 0; j < UNIT; ++j) e[j] = exp2f((v[j] - m) * LOG2E) * inv;
#if VECLOAD && BF16
    reinterpret_cast<uint4*>(row)[u] = make_uint4(f_to_bf16(e[0]) | (f_to_bf16(e[1]) << 16),
                                                  f_to_bf16(e[2]) | (f_to_bf16(e[3]) << 16),
                                                  f_to_bf16(e[4]) | (f_to_bf16(e[5]) << 16),
                                                  f_to_bf16(e[6]) | (f_to_bf16(e[7]) << 16));
#elif VECLOAD
    reinterpret_cast<float4*>(row)[u] = make_float4(e[0], e[1], e[2], e[3]);
#elif BF16
    row[u] = (unsigned short)f_to_bf16(e[0]);
#else
    row[u] = e[0];
#endif
}

// ---- reductions over the TPR threads of a row (every thread gets the result) ---------------

struct OpMax { __device__ static float f(float a, float b) { return fmaxf(a, b); } };
struct OpSum { __device__ static float f(float a, float b) { return a + b; } };

// scr: TPB / 32 floats (one per warp); call from every thread of the block
template <class Op>
__device__ __forceinline__ float row_reduce(float v, float* scr) {
#pragma unroll
    for (int off = (TPR < 32 ? TPR : 32) / 2; off > 0; off >>= 1) v = Op::f(v, __shfl_xor_sync(0xffffffffu, v, off));
    if (TPR <= 32) return v;
    const int tid = threadIdx.x, lane = tid % TPR;
    if ((tid & 31) == 0) scr[tid >> 5] = v;
    __syncthreads();
    const int w0 = (tid - lane) >> 5;
    float r = scr[w0];
#pragma unroll
    for (int k = 1; k < NWARP_ROW; ++k) r = Op::f(r, scr[w0 + k]);
    __syncthreads();  // scr is reused by the next reduction
    return r;
}

// running (max, Σ) with one more value: one exp2 per value (the rescale only on a new max)
__device__ __forceinline__ void online_add(float xv, float& m, float& s) {
    if (xv > m) {
        s = s * exp2f((m - xv) * LOG2E) + 1.0f;
        m = xv;
    } else {
        s += exp2f((xv - m) * LOG2E);
    }
}

// ---- kernels -----------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(TPB) softmax_three_pass(const T* __restrict__ x, T* __restrict__ y,
                                                                     int M, int N) {
    __shared__ float scr[TPB / 32 + 1];
    const int lane = threadIdx.x % TPR;
    const long long row = (long long)blockIdx.x * RPB + threadIdx.x / TPR;
    const long long uend = row < M ? N / UNIT : 0;
    const T* xr = x + row * N;
    float v[UNIT];
    float m = NEG;
    for (long long u = lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, v);
#pragma unroll
        for (int j = 0; j < UNIT; ++j) m = fmaxf(m, v[j]);
    }
    m = row_reduce<OpMax>(m, scr);
    float s = 0.0f;
    for (long long u = lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, v);
#pragma unroll
        for (int j = 0; j < UNIT; ++j) s += exp2f((v[j] - m) * LOG2E);
    }
    s = row_reduce<OpSum>(s, scr);
    const float inv = 1.0f / s;
    for (long long u = lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, v);
        store_unit(y + row * N, u, v, m, inv);
    }
}

// chunk: units per part (the whole row when G == 1); epoch: 1, 2, ... per launch (split_row)
extern "C" __global__ void __launch_bounds__(TPB) softmax_rows(const T* __restrict__ x, T* __restrict__ y,
                                                               int M, int N, int chunk,
                                                               unsigned long long* slots, unsigned int* ticket,
                                                               unsigned int epoch) {
    __shared__ float scr[(TPB / 32 > 2 * G ? TPB / 32 : 2 * G) + 1];
    const int tid = threadIdx.x, lane = tid % TPR;
#if G > 1
    __shared__ unsigned int tk;
    if (tid == 0) tk = atomicAdd(ticket, 1u) - (epoch - 1u) * (unsigned int)(M * G);  // launch e: [(e-1)MG, eMG)
    __syncthreads();
    const long long row = tk / G;
    const int part = tk % G;
#else
    const long long row = (long long)blockIdx.x * RPB + tid / TPR;
    const int part = 0;
#endif
    const long long nu = row < M ? N / UNIT : 0;
    const long long u0 = (long long)part * chunk;
    const long long uend = nu < u0 + chunk ? nu : u0 + chunk;
    const T* xr = x + row * N;
    T* yr = y + row * N;
    float m = NEG, s = 0.0f;
#if FITS
    float v[ITEMS][UNIT];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) load_unit(xr, u0 + k * TPR + lane, uend, v[k]);  // all loads in flight
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
#pragma unroll
        for (int j = 0; j < UNIT; ++j) m = fmaxf(m, v[k][j]);
    m = row_reduce<OpMax>(m, scr);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
#pragma unroll
        for (int j = 0; j < UNIT; ++j) s += exp2f((v[k][j] - m) * LOG2E);
    s = row_reduce<OpSum>(s, scr);
#else
    {
        float w[UNIT];
        for (long long u = u0 + lane; u < uend; u += TPR) {
            load_unit(xr, u, uend, w);
#pragma unroll
            for (int j = 0; j < UNIT; ++j) online_add(w[j], m, s);
        }
        const float mr = row_reduce<OpMax>(m, scr);
        s = row_reduce<OpSum>(s * exp2f((m - mr) * LOG2E), scr);  // m = NEG (nothing seen): s = 0
        m = mr;
    }
#endif
#if G > 1
    {
        unsigned long long* mine = slots + 2 * (row * G + part);
        if (tid == 0) {
            atomicExch(mine, ((unsigned long long)epoch << 32) | __float_as_uint(m));
            atomicExch(mine + 1, ((unsigned long long)epoch << 32) | __float_as_uint(s));
        }
        if (tid < G) {  // thread k waits for part k's two words of this epoch
            const volatile unsigned long long* w = slots + 2 * (row * G + tid);
            unsigned long long a, b;
            do {
                a = w[0];
                b = w[1];
            } while ((unsigned int)(a >> 32) != epoch || (unsigned int)(b >> 32) != epoch);
            scr[2 * tid] = __uint_as_float((unsigned int)a);
            scr[2 * tid + 1] = __uint_as_float((unsigned int)b);
        }
        __syncthreads();
        float mt = scr[0];
#pragma unroll
        for (int k = 1; k < G; ++k) mt = fmaxf(mt, scr[2 * k]);
        float st = 0.0f;
#pragma unroll
        for (int k = 0; k < G; ++k) st += scr[2 * k + 1] * exp2f((scr[2 * k] - mt) * LOG2E);
        m = mt;
        s = st;
    }
#endif
    const float inv = 1.0f / s;
#if FITS
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const long long u = u0 + k * TPR + lane;
        if (u < uend) store_unit(yr, u, v[k], m, inv);
    }
#else
    {
        float w[UNIT];
        for (long long u = u0 + lane; u < uend; u += TPR) {
            load_unit(xr, u, uend, w);
            store_unit(yr, u, w, m, inv);
        }
    }
#endif
}
