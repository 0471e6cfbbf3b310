// matmul.cu — C = A·B on CUDA cores (SIMT), row-major A [M, K], B [K, N], C [M, N].
// Reads (M·K + K·N)·s and writes M·N·s bytes at the fewest (s = element size); 2·M·N·K flops.
// Storage DT (define): 0 fp32, 1 fp16, 2 bf16 (raw 16-bit words); every product and sum is an
// fp32 FMA (strict IEEE, no fast math), the result is rounded once to the storage type (RNE).
// Launch: groups = (⌈N/BN⌉, ⌈M/BM⌉) (x walks the columns of C, y its rows); args A, B, C, M, N, K
// (int32; every offset is formed in size_t).
//
//   matmul_naive            block 16×16, one thread per C element (x → column, y → row): a K loop
//                           over global memory (B reads coalesced along the warp, A broadcast)
//   matmul_tiled_shared     block TILE×TILE, one thread per C element; TILE×TILE tiles of A and B
//                           staged through shared memory, one barrier pair per K tile
//   matmul_register_blocked block NT = (BM/TM)·(BN/TN) threads (256 at 128×128, 8×8 per thread),
//                           a BM×BN tile of C per block, BK-deep K tiles: 4-wide vector loads of A
//                           and B (where the row is 4-aligned and in bounds; scalar, zero-filled
//                           otherwise) into double-buffered shared memory with A transposed
//                           (As[k][m]), then an unrolled outer product per k from 4-wide shared
//                           reads into the TM×TN accumulators. One barrier per K tile.
// Each thread's TM×TN tile is (TM/4)×(TN/4) 4×4 blocks spaced BM/(TM/4) rows and BN/(TN/4)
// columns apart, so a warp (4 thread rows × 8 thread columns) reads 4 distinct float4 of As and
// 8 distinct float4 of Bs per k: one shared-memory wavefront each, no bank conflicts.

#ifndef DT
#define DT 0
#endif
#ifndef TILE
#define TILE 32
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif

#if DT == 0
typedef float T;
#else
typedef unsigned short T;  // fp16 or bf16 bits
#endif

// ---- conversions: storage ↔ fp32 ------------------------------------------------------------

__device__ __forceinline__ float to_f(T v) {
#if DT == 0
    return v;
#elif DT == 1
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
#else
    return __uint_as_float((unsigned int)v << 16);  // bf16 is the top half of an fp32 word
#endif
}

__device__ __forceinline__ T from_f(float f) {
#if DT == 0
    return f;
#elif DT == 1
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // round to nearest, ties even
#endif
}

// 16-bit halves of a 32-bit word as fp32 (little-endian: the lower address is the low half)
__device__ __forceinline__ float lo_f(unsigned int w) { return to_f((T)(w & 0xffffu)); }
__device__ __forceinline__ float hi_f(unsigned int w) { return to_f((T)(w >> 16)); }

// p[i..i+3] as fp32; i % 4 == 0 and p aligned to 4 elements (the caller checks)
__device__ __forceinline__ float4 ld4(const T* __restrict__ p, size_t i) {
#if DT == 0
    return __ldg(reinterpret_cast<const float4*>(p + i));
#else
    const uint2 w = __ldg(reinterpret_cast<const uint2*>(p + i));
    return make_float4(lo_f(w.x), hi_f(w.x), lo_f(w.y), hi_f(w.y));
#endif
}

__device__ __forceinline__ void st4(T* __restrict__ p, size_t i, float4 v) {
#if DT == 0
    *reinterpret_cast<float4*>(p + i) = v;
#else
    uint2 w;
    w.x = (unsigned int)from_f(v.x) | ((unsigned int)from_f(v.y) << 16);
    w.y = (unsigned int)from_f(v.z) | ((unsigned int)from_f(v.w) << 16);
    *reinterpret_cast<uint2*>(p + i) = w;
#endif
}

// ---- naive ----------------------------------------------------------------------------------

extern "C" __global__ void matmul_naive(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                        int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const T* a = A + (size_t)row * K;  // row of A
    const T* b = B + col;              // column of B, stride N
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(to_f(a[k]), to_f(b[(size_t)k * N]), acc);
    C[(size_t)row * N + col] = from_f(acc);
}

// ---- tiled_shared ---------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(TILE * TILE)
matmul_tiled_shared(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];  // As[r][k]: row r of the block's A rows, k of the K tile
    __shared__ float Bs[TILE][TILE];  // Bs[k][c]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // each thread stages one element of each tile (zero outside A/B: adds nothing)
        As[ty][tx] = (row < M && k0 + tx < K) ? to_f(A[(size_t)row * K + k0 + tx]) : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? to_f(B[(size_t)(k0 + ty) * N + col]) : 0.0f;
        __syncthreads();  // tiles complete before anyone reads them
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // everyone done reading before the next tile overwrites them
    }
    if (row < M && col < N) C[(size_t)row * N + col] = from_f(acc);
}

// ---- register_blocked -----------------------------------------------------------------------

#define NT ((BM / TM) * (BN / TN))  // threads per block
#define TX (BN / TN)                // thread columns
#define TY (BM / TM)                // thread rows
#define RS (BM / (TM / 4))          // row spacing of a thread's 4×4 blocks
#define CS (BN / (TN / 4))          // column spacing
#define A_LOADS (BM * BK / 4 / NT)  // 4-wide loads of A per thread per K tile
#define B_LOADS (BK * BN / 4 / NT)

static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "4-wide thread tiles and K tiles");
static_assert(TX % 8 == 0 && TY % 4 == 0, "warps are 4 thread rows × 8 thread columns");
static_assert(A_LOADS >= 1 && B_LOADS >= 1 && A_LOADS * NT * 4 == BM * BK && B_LOADS * NT * 4 == BK * BN,
              "every thread loads whole 4-wide vectors of both tiles");

// A[m0 + m][k0 + kq .. +3] (zero outside A): one vector load when in bounds and 4-aligned
__device__ __forceinline__ float4 load_a(const T* __restrict__ A, int M, int K, int r, int k, bool vec) {
    if (r < M && vec && k + 3 < K) return ld4(A, (size_t)r * K + k);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (r < M) {
        const T* a = A + (size_t)r * K;
        if (k < K) v.x = to_f(a[k]);
        if (k + 1 < K) v.y = to_f(a[k + 1]);
        if (k + 2 < K) v.z = to_f(a[k + 2]);
        if (k + 3 < K) v.w = to_f(a[k + 3]);
    }
    return v;
}

// B[k][c .. c+3] (zero outside B)
__device__ __forceinline__ float4 load_b(const T* __restrict__ B, int N, int K, int k, int c, bool vec) {
    if (k < K && vec && c + 3 < N) return ld4(B, (size_t)k * N + c);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (k < K) {
        const T* b = B + (size_t)k * N;
        if (c < N) v.x = to_f(b[c]);
        if (c + 1 < N) v.y = to_f(b[c + 1]);
        if (c + 2 < N) v.z = to_f(b[c + 2]);
        if (c + 3 < N) v.w = to_f(b[c + 3]);
    }
    return v;
}

extern "C" __global__ void __launch_bounds__(NT)
matmul_register_blocked(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[2][BK][BM];  // A tile transposed, two buffers
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    // thread (ty, tx) in the TY×TX thread grid; a warp is a 4×8 patch of it
    const int tx = (warp % (TX / 8)) * 8 + lane % 8;
    const int ty = (warp / (TX / 8)) * 4 + lane / 8;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    // vector loads need 4-aligned rows: K % 4 == 0 for A, N % 4 == 0 for B (and for C's stores)
    const bool vec_a = (K & 3) == 0, vec_b = (N & 3) == 0;

    float4 ra[A_LOADS], rb[B_LOADS];  // the next K tile, in flight in registers
    // load slot l of A: vector idx = tid + l·NT → row idx / (BK/4), k offset (idx % (BK/4))·4
    // load slot l of B: vector idx = tid + l·NT → k row idx / (BN/4), column (idx % (BN/4))·4
#define LOAD_TILE(k0)                                                                               \
    {                                                                                               \
        _Pragma("unroll") for (int l = 0; l < A_LOADS; ++l) {                                      \
            const int idx = tid + l * NT;                                                           \
            ra[l] = load_a(A, M, K, m0 + idx / (BK / 4), (k0) + (idx % (BK / 4)) * 4, vec_a);        \
        }                                                                                           \
        _Pragma("unroll") for (int l = 0; l < B_LOADS; ++l) {                                      \
            const int idx = tid + l * NT;                                                           \
            rb[l] = load_b(B, N, K, (k0) + idx / (BN / 4), n0 + (idx % (BN / 4)) * 4, vec_b);        \
        }                                                                                           \
    }
    // A is stored transposed (As[k][m]: 4 scalar stores), B as one float4
#define STORE_TILE(buf)                                                                             \
    {                                                                                               \
        _Pragma("unroll") for (int l = 0; l < A_LOADS; ++l) {                                      \
            const int idx = tid + l * NT, m = idx / (BK / 4), k = (idx % (BK / 4)) * 4;              \
            As[buf][k][m] = ra[l].x;                                                                \
            As[buf][k + 1][m] = ra[l].y;                                                            \
            As[buf][k + 2][m] = ra[l].z;                                                            \
            As[buf][k + 3][m] = ra[l].w;                                                            \
        }                                                                                           \
        _Pragma("unroll") for (int l = 0; l < B_LOADS; ++l) {                                      \
            const int idx = tid + l * NT;                                                           \
            *reinterpret_cast<float4*>(&Bs[buf][idx / (BN / 4)][(idx % (BN / 4)) * 4]) = rb[l];     \
        }                                                                                           \
    }

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    LOAD_TILE(0)
    STORE_TILE(0)
    __syncthreads();  // tile 0 visible

    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more) LOAD_TILE(k0 + BK)  // global loads of the next tile overlap this tile's FMAs
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM / 4; ++i) {
                const float4 v = *reinterpret_cast<const float4*>(&As[buf][kk][i * RS + ty * 4]);
                a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN / 4; ++j) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][kk][j * CS + tx * 4]);
                b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        // the other buffer was last read in the previous iteration, which the barrier below (of
        // that iteration) closed: safe to overwrite now
        if (more) STORE_TILE(buf ^ 1)
        __syncthreads();  // next tile visible; this tile's reads done before it is overwritten
        buf ^= 1;
    }
#undef LOAD_TILE
#undef STORE_TILE

    // epilogue: thread element (i, j) is C[m0 + (i/4)·RS + ty·4 + i%4][n0 + (j/4)·CS + tx·4 + j%4]
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = m0 + (i / 4) * RS + ty * 4 + i % 4;
        if (r >= M) continue;
        T* c_row = C + (size_t)r * N;
#pragma unroll
        for (int j4 = 0; j4 < TN / 4; ++j4) {
            const int c = n0 + j4 * CS + tx * 4;
            const float4 v = make_float4(acc[i][4 * j4], acc[i][4 * j4 + 1], acc[i][4 * j4 + 2], acc[i][4 * j4 + 3]);
            if (vec_b && c + 3 < N) {
                st4(c_row, c, v);
            } else {
                if (c < N) c_row[c] = from_f(v.x);
                if (c + 1 < N) c_row[c + 1] = from_f(v.y);
                if (c + 2 < N) c_row[c + 2] = from_f(v.z);
                if (c + 3 < N) c_row[c + 3] = from_f(v.w);
            }
        }
    }
}
