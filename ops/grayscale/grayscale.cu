// grayscale: out[p] = 0.299 R + 0.587 G + 0.114 B of interleaved RGB pixels img[3p .. 3p+2],
// 0 <= p < npix = H·W (the image is contiguous, so rows need no separate index).
// pix_t is uint8 (default; Y rounded to nearest, ties to even) or float (-DGRAY_FP32=1).
//
// Bytes: read 3·npix, write npix (times sizeof(pix_t)). Flops: 5 per pixel (3 mul, 2 add,
// contracted to 1 mul + 2 fma). Memory bound. Buffers start 256-byte aligned (CuPy), indices are
// 64-bit, nothing touches a pixel past npix.
//
// Entries (1-D grid of 256-thread blocks, computed by ops/grayscale/kernels.py):
//   grayscale_naive  thread p → pixel p: three scalar loads, one scalar store.   threads = npix
//   grayscale_vec16  thread t → PIX = 16 / sizeof(pix_t) pixels (16 u8 or 4 fp32): three 16-byte
//                    loads of its 48 input bytes at 48·t, one 16-byte store at 16·t. The thread
//                    whose pixels run past npix does them one by one.    threads = ceil(npix / PIX)

#ifndef GRAY_FP32
#define GRAY_FP32 0
#endif

#if GRAY_FP32
typedef float pix_t;
__device__ __forceinline__ pix_t to_pix(float y) { return y; }
#else
typedef unsigned char pix_t;
// y <= 255·(sum of the fp32 weights) < 255.5, so the rounded value fits a byte
__device__ __forceinline__ pix_t to_pix(float y) { return (pix_t)__float2uint_rn(y); }
#endif

__device__ __forceinline__ float luma(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }

#define PIX (16 / (int)sizeof(pix_t))  // pixels per thread in grayscale_vec16

extern "C" __global__ void grayscale_naive(const pix_t* __restrict__ img, pix_t* __restrict__ out,
                                           long long npix) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < npix) out[p] = to_pix(luma(img[3 * p], img[3 * p + 1], img[3 * p + 2]));
}

extern "C" __global__ void grayscale_vec16(const pix_t* __restrict__ img, pix_t* __restrict__ out,
                                           long long npix) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long p0 = t * PIX;  // first pixel of this thread
    if (p0 + PIX <= npix) {
        // 3·PIX channel values = 48 bytes = three 16-byte vectors, 16-byte aligned (48·t)
        union { uint4 v[3]; pix_t c[3 * PIX]; } in;
        const uint4* src = reinterpret_cast<const uint4*>(img) + 3 * t;
        in.v[0] = src[0];
        in.v[1] = src[1];
        in.v[2] = src[2];
        union { uint4 v; pix_t c[PIX]; } o;
#pragma unroll
        for (int k = 0; k < PIX; ++k) o.c[k] = to_pix(luma(in.c[3 * k], in.c[3 * k + 1], in.c[3 * k + 2]));
        reinterpret_cast<uint4*>(out)[t] = o.v;
    } else {
        // tail: fewer than PIX pixels left (runs only in the last thread that has any)
#pragma unroll 1
        for (long long p = p0; p < npix; ++p) out[p] = to_pix(luma(img[3 * p], img[3 * p + 1], img[3 * p + 2]));
    }
}
