// vector_add: c[i] = a[i] + b[i] for i < n.
//
// Storage type T (-D T=float | -D T=half). fp16 uses only OpenCL's core half *storage*
// (vload_half / vstore_half, no cl_khr_fp16 needed): the sum is taken in fp32 and rounded once
// to half (rte). fp32 has 24 >= 2*11 + 2 significand bits, so this double rounding equals the
// correctly rounded half addition.
//
// vector_add_naive  one element per work-item; global = n (rounded up to 256), local = 256.
// vector_add_vec4   four elements per work-item through one 16-byte (float4) or 8-byte (4 raw
//                   halves, halfvec.cl) aligned load per operand; global = ceil(n/4) rounded up
//                   to 256, local = 256.
//                   The buffers hold exactly n elements, so the last work-item (n % 4 != 0)
//                   takes the scalar tail.
// vector_add_grid_stride  the vec4 body in a grid-stride loop over a fixed grid (below).
//
// Bytes: read 2*n*sizeof(T), write n*sizeof(T). Flops: n.
// Indices are 32-bit: n < 2^32 (the factory checks).

#ifndef T
#define T float
#endif

#define IS_HALF_half 1
#define IS_HALF_float 0
#define IS_HALF_(t) IS_HALF_##t
#define IS_HALF(t) IS_HALF_(t)

#if IS_HALF(T)
#include "halfvec.cl"
// a half element as a float, and back with round-to-nearest-even; 4 through one 8-byte access
// (vloada_half4 / vstorea_half4_rte on global memory: vec4 83.2 / grid_stride 72.9 % against
// 96.0 / 93.6 % this way on the H200, probe of session 18)
#define LOAD1(p, i) vload_half((i), (p))
#define STORE1(x, p, i) vstore_half_rte((x), (i), (p))
#define LOAD4(p, i) ldh4((p) + 4 * (size_t)(i))
#define STORE4(x, p, i) sth4((p) + 4 * (size_t)(i), (x))
#else
#define LOAD1(p, i) ((p)[i])
#define STORE1(x, p, i) ((p)[i] = (x))
#define LOAD4(p, i) vload4((i), (p))
#define STORE4(x, p, i) vstore4((x), (i), (p))
#endif

__kernel void vector_add_naive(__global const T *restrict a, __global const T *restrict b,
                               __global T *restrict c, const uint n) {
    const uint i = get_global_id(0);
    if (i < n) STORE1(LOAD1(a, i) + LOAD1(b, i), c, i);
}

__kernel void vector_add_vec4(__global const T *restrict a, __global const T *restrict b,
                              __global T *restrict c, const uint n) {
    const uint v = get_global_id(0);       // vector index: elements 4v .. 4v+3
    const uint n4 = n >> 2;                // whole vectors
    if (v < n4) {
#if IS_HALF(T)
        STORE4(LOAD4(a, v) + LOAD4(b, v), c, v);
#else
        // through float4 pointers: the compiler knows the 16-byte alignment (one 128-bit access)
        ((__global float4 *)c)[v] = ((__global const float4 *)a)[v] + ((__global const float4 *)b)[v];
#endif
    } else if (v == n4) {                 // scalar tail: n % 4 elements, none past the end
        for (uint i = 4 * v; i < n; ++i) STORE1(LOAD1(a, i) + LOAD1(b, i), c, i);
    }
}

// vector_add_grid_stride: a fixed grid (the factory launches 8 work-groups of 256 per compute
// unit, about one resident wave) loops over the vectors with a stride of the grid size, so each
// work-item handles several 4-element vectors; work-item 0 also takes the scalar tail.
__kernel void vector_add_grid_stride(__global const T *restrict a, __global const T *restrict b,
                                     __global T *restrict c, const uint n) {
    const uint n4 = n >> 2;
    const uint stride = get_global_size(0);
    for (uint v = get_global_id(0); v < n4; v += stride) {
#if IS_HALF(T)
        STORE4(LOAD4(a, v) + LOAD4(b, v), c, v);
#else
        ((__global float4 *)c)[v] = ((__global const float4 *)a)[v] + ((__global const float4 *)b)[v];
#endif
    }
    if (get_global_id(0) == 0) {
        for (uint i = 4 * n4; i < n; ++i) STORE1(LOAD1(a, i) + LOAD1(b, i), c, i);
    }
}
