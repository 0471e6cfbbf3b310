// halfvec.cl — fp16 vectors through one raw global access, converted in private memory (core
// OpenCL C: vload_half4/8 and vstore_half4_rte on private memory, no cl_khr_fp16). NVIDIA's OpenCL
// compiles vload(a)_halfN / vstore(a)_halfN on global memory into narrower accesses: with them the
// fp16 GEMV read x at 19.2 % of the ceiling against bf16's 38.7 % (run d35c9f; 39.9 % through this
// form, 33414b) and fp16 vector_add's vec4 ran at 83.2 % against 96.0 % (probe, session 18).
//
//   ldh4(p) / ldh8(p)   4 / 8 halves at p as floats; p 8- / 16-byte aligned
//   sth4(p, v)          v rounded to nearest even into 4 halves at p; p 8-byte aligned

inline float4 ldh4(__global const half* p) {
    const ushort4 u = *(__global const ushort4*)p;
    return vload_half4(0, (const __private half*)&u);
}

inline float8 ldh8(__global const half* p) {
    const ushort8 u = *(__global const ushort8*)p;
    return vload_half8(0, (const __private half*)&u);
}

inline void sth4(__global half* p, float4 v) {
    ushort4 u;
    vstore_half4_rte(v, 0, (__private half*)&u);
    *(__global ushort4*)p = u;
}
