// grayscale: interleaved RGB (H, W, 3) -> luma (H, W); n = H*W pixels, pixel p at bytes 3p..3p+2.
//
// u8 (-D U8=1): Y = round(0.299 R + 0.587 G + 0.114 B) in exact integer arithmetic,
//   (299 R + 587 G + 114 B + 500) / 1000 (ties round up, which the rule allows); compilers turn
//   the division by a constant into a multiply-high and a shift (an explicit mul_hi is 3x slower
//   on PoCL). No int<->float conversions (those run at quarter rate or less).
// fp32 (-D U8=0): Y = 0.299 R + 0.587 G + 0.114 B in fp32.
//
// grayscale_naive  one pixel per work-item: 3 scalar loads, 1 scalar store.
//                  global = n (rounded up to 256), local = 256.
// grayscale_vec16  16-byte accesses: one work-item converts a 48-byte chunk of RGB to one
//                  16-byte chunk of Y: u8 = 16 pixels (3 uint4 loads, 1 uint4 store), fp32 = 4
//                  pixels (3 float4 loads, 1 float4 store). global = ceil(n/PIX) rounded up to 256,
//                  local = 256. Buffers hold exactly 3n and n elements: the last work-item takes
//                  the n % PIX pixel tail one pixel at a time.
//
// Bytes: read 3*n*sizeof(T), write n*sizeof(T). Flops: 5n. Indices are 32-bit: 3n < 2^32.

#ifndef U8
#define U8 1
#endif

#if U8
typedef uchar T;

inline uint luma(uint r, uint g, uint b) { return (299u * r + 587u * g + 114u * b + 500u) / 1000u; }

// 4 pixels from 12 bytes in 3 little-endian words (w0 = R0 G0 B0 R1, w1 = G1 B1 R2 G2,
// w2 = B2 R3 G3 B3) -> one word of 4 luma bytes
inline uint luma4(uint w0, uint w1, uint w2) {
    const uint y0 = luma(w0 & 0xffu, (w0 >> 8) & 0xffu, (w0 >> 16) & 0xffu);
    const uint y1 = luma(w0 >> 24, w1 & 0xffu, (w1 >> 8) & 0xffu);
    const uint y2 = luma((w1 >> 16) & 0xffu, w1 >> 24, w2 & 0xffu);
    const uint y3 = luma((w2 >> 8) & 0xffu, (w2 >> 16) & 0xffu, w2 >> 24);
    return y0 | (y1 << 8) | (y2 << 16) | (y3 << 24);
}
#define PIX 16
#else
typedef float T;

inline float luma(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }
#define PIX 4
#endif

inline void pixel(__global const T *restrict img, __global T *restrict out, uint p) {
    out[p] = (T)luma(img[3 * p], img[3 * p + 1], img[3 * p + 2]);
}

__kernel void grayscale_naive(__global const T *restrict img, __global T *restrict out, const uint n) {
    const uint p = get_global_id(0);
    if (p < n) pixel(img, out, p);
}

__kernel void grayscale_vec16(__global const T *restrict img, __global T *restrict out, const uint n) {
    const uint t = get_global_id(0);  // chunk t: pixels PIX*t .. PIX*t + PIX-1
    const uint full = n / PIX;
    if (t < full) {
#if U8
        __global const uint4 *in4 = (__global const uint4 *)img;  // 16-byte aligned: 48t bytes
        const uint4 a = in4[3 * t], b = in4[3 * t + 1], c = in4[3 * t + 2];
        ((__global uint4 *)out)[t] = (uint4)(luma4(a.x, a.y, a.z), luma4(a.w, b.x, b.y),
                                             luma4(b.z, b.w, c.x), luma4(c.y, c.z, c.w));
#else
        __global const float4 *in4 = (__global const float4 *)img;
        const float4 a = in4[3 * t], b = in4[3 * t + 1], c = in4[3 * t + 2];
        ((__global float4 *)out)[t] = (float4)(luma(a.x, a.y, a.z), luma(a.w, b.x, b.y),
                                               luma(b.z, b.w, c.x), luma(c.y, c.z, c.w));
#endif
    } else if (t == full) {  // tail: n % PIX pixels, scalar, none past the end
        for (uint p = PIX * t; p < n; ++p) pixel(img, out, p);
    }
}
