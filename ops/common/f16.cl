// f16.cl — the storage type T of a kernel's tensors by DT (0: float, 1: half, 2: bf16 as ushort
// words) and element loads/stores through fp32: ld, st (fp16 by vload_half / vstore_half_rte,
// bf16 by bits, rounded to nearest even, NaN kept quiet). `#include "f16.cl"` after DT is
// defined (backends.base.read_source).

#if DT == 0
typedef float T;
#elif DT == 1
typedef half T;  // pointer use only: read/written through vload_half / vstore_half_rte
#else
typedef ushort T;
#endif

#if DT == 2
inline float bf2f(uint w) { return as_float(w << 16); }
inline ushort f2bf(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);  // quiet NaN
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // round to nearest, ties to even
}
#endif

inline float ld(__global const T* p, size_t i) {
#if DT == 0
    return p[i];
#elif DT == 1
    return vload_half(i, p);
#else
    return bf2f(p[i]);
#endif
}

inline void st(__global T* p, size_t i, float v) {
#if DT == 0
    p[i] = v;
#elif DT == 1
    vstore_half_rte(v, i, p);
#else
    p[i] = f2bf(v);
#endif
}
