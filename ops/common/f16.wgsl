// f16.wgsl — 16-bit float words as u32 (WGSL has no bf16, and f16 needs `shader-f16`): h2f
// decodes the low half, f2half / f2bf round an f32 to nearest even, enc16 picks by DT (1: fp16,
// 2: bf16), a module constant of the including file. `#include "f16.wgsl"`
// (backends.base.read_source).

// a 16-bit value (low half of h) as f32
fn h2f(h: u32) -> f32 {
    if (DT == 1u) { return unpack2x16float(h).x; }
    return bitcast<f32>(h << 16u);  // bf16: the top half of an f32
}

// f32 → fp16 bits, round to nearest even (NaN stays NaN, overflow → ±inf, subnormals rounded)
fn f2half(f: f32) -> u32 {
    let u = bitcast<u32>(f);
    let sign = (u >> 16u) & 0x8000u;
    let a = u & 0x7fffffffu;
    if (a > 0x7f800000u) { return sign | 0x7e00u; }
    if (a >= 0x477ff000u) { return sign | 0x7c00u; }  // ≥ 65520 rounds to inf
    if (a >= 0x38800000u) {                           // normal: rebias exponent by 127 - 15
        let r = a - 0x38000000u;
        return sign | ((r + 0xfffu + ((r >> 13u) & 1u)) >> 13u);
    }
    if (a < 0x33000000u) { return sign; }             // < 2^-25: rounds to ±0
    // subnormal: |f| = m·2^(e-150) = (m >> (126-e)) units of 2^-24, rounded to nearest even
    let e = a >> 23u;
    let m = (a & 0x7fffffu) | 0x800000u;
    let s = 126u - e;                                 // 14..24
    let q = m >> s;
    let rem = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    return sign | (q + select(0u, 1u, rem > half || (rem == half && (q & 1u) == 1u)));
}

// f32 → bf16 bits, round to nearest even (NaN stays NaN)
fn f2bf(f: f32) -> u32 {
    let u = bitcast<u32>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { return ((u >> 16u) | 0x40u) & 0xffffu; }
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}

fn enc16(v: f32) -> u32 {
    if (DT == 1u) { return f2half(v); }
    return f2bf(v);
}
