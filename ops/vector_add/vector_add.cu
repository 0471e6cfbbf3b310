// vector_add: c[i] = a[i] + b[i] for 0 <= i < n, fp32 or fp16 (compile with -DFP16=1).
//
// Bytes: read a and b, write c → 3·n·sizeof(elem_t). Flops: n. No reuse: memory bound.
// Buffers hold exactly n elements and start 256-byte aligned (CuPy allocations), so 16-byte
// vector accesses are aligned; nothing touches an element past n. Indices are 64-bit.
//
// Entries (launch geometry: 1-D grid of 256-thread blocks, computed by ops/vector_add/kernels.py):
//   vector_add_naive        thread i → element i.                   threads = n
//   vector_add_vec4         thread v → 16-byte vector v (4 x 32-bit lanes: 4 fp32 or 4 half2 = 8
//                           fp16 elements); the first n % VEC threads also add one tail element.
//                                                                   threads = max(n / VEC, n % VEC)
//   vector_add_vec4_unroll  as vec4, UNROLL vectors per thread (strided by the block size, so each
//                           load instruction stays coalesced), all loads issued before any add:
//                           UNROLL·32 bytes in flight per thread.   threads = max(ceil(n / VEC /
//                           UNROLL / 256) · 256, n % VEC)
//
// fp16 needs no header: elements are IEEE binary16 bit patterns (unsigned short) added with the
// PTX instructions add.rn.f16 / add.rn.f16x2 (round to nearest even, as __hadd / __hadd2 do).

#ifndef FP16
#define FP16 0
#endif
#ifndef UNROLL
#define UNROLL 4
#endif

#if FP16
typedef unsigned short elem_t;  // binary16 bits
typedef uint4 vec_t;            // 4 words, each a half2

__device__ __forceinline__ elem_t add1(elem_t a, elem_t b) {
    elem_t c;
    asm("add.rn.f16 %0, %1, %2;" : "=h"(c) : "h"(a), "h"(b));
    return c;
}
__device__ __forceinline__ unsigned add_half2(unsigned a, unsigned b) {
    unsigned c;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(c) : "r"(a), "r"(b));
    return c;
}
__device__ __forceinline__ vec_t add_vec(vec_t a, vec_t b) {
    return make_uint4(add_half2(a.x, b.x), add_half2(a.y, b.y), add_half2(a.z, b.z), add_half2(a.w, b.w));
}
#else
typedef float elem_t;
typedef float4 vec_t;

__device__ __forceinline__ elem_t add1(elem_t a, elem_t b) { return a + b; }
__device__ __forceinline__ vec_t add_vec(vec_t a, vec_t b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
#endif

#define VEC ((long long)(sizeof(vec_t) / sizeof(elem_t)))  // elements per 16-byte vector

extern "C" __global__ void vector_add_naive(const elem_t* __restrict__ a, const elem_t* __restrict__ b,
                                            elem_t* __restrict__ c, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = add1(a[i], b[i]);
}

extern "C" __global__ void vector_add_vec4(const elem_t* __restrict__ a, const elem_t* __restrict__ b,
                                           elem_t* __restrict__ c, long long n) {
    const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // vector index
    const long long nvec = n / VEC;
    if (v < nvec) {
        const vec_t x = reinterpret_cast<const vec_t*>(a)[v];
        const vec_t y = reinterpret_cast<const vec_t*>(b)[v];
        reinterpret_cast<vec_t*>(c)[v] = add_vec(x, y);
    }
    // scalar tail: elements nvec·VEC .. n-1, one per thread of the first n % VEC threads
    const long long t = nvec * VEC + v;
    if (v < n % VEC) c[t] = add1(a[t], b[t]);
}

extern "C" __global__ void vector_add_vec4_unroll(const elem_t* __restrict__ a, const elem_t* __restrict__ b,
                                                  elem_t* __restrict__ c, long long n) {
    // block k covers vectors [k·UNROLL·blockDim, (k+1)·UNROLL·blockDim); thread j of it takes
    // vectors base + j + u·blockDim, u < UNROLL (a warp's u-th load is 512 contiguous bytes)
    const long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    const long long nvec = n / VEC;
    const vec_t* av = reinterpret_cast<const vec_t*>(a);
    const vec_t* bv = reinterpret_cast<const vec_t*>(b);
    vec_t x[UNROLL], y[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long v = base + (long long)u * blockDim.x;
        if (v < nvec) {
            x[u] = av[v];
            y[u] = bv[v];
        }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long v = base + (long long)u * blockDim.x;
        if (v < nvec) reinterpret_cast<vec_t*>(c)[v] = add_vec(x[u], y[u]);
    }
    // scalar tail, as in vector_add_vec4 (thread index = global thread id)
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long t = nvec * VEC + g;
    if (g < n % VEC) c[t] = add1(a[t], b[t]);
}
