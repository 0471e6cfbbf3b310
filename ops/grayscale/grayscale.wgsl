// grayscale: interleaved RGB (H, W, 3) -> luma (H, W); n = H*W pixels, pixel p at elements 3p..3p+2.
//
// Placeholder {{DTYPE}} = u8 | fp32 picks the body each entry point calls.
// u8: WGSL has no 8-bit type, so bytes are read and written as little-endian u32 words; 12 bytes
//   (3 words) hold 4 whole pixels. Y = (299 R + 587 G + 114 B + 500) / 1000, exact integer
//   round-to-nearest (ties up, which the rule allows); no int<->float conversions.
// fp32: Y = 0.299 R + 0.587 G + 0.114 B.
// Bindings: 0 img, 1 out (storage), 2 params (uniform: n). 256 invocations per workgroup; the
// grid may be 2-D (at most 65535 groups per dimension): group id = wid.x + wid.y * nwg.x.
//
// grayscale_naive  u8: one invocation per output word = 4 pixels (3 u32 loads, 1 u32 store);
//                  fp32: one invocation per pixel. ceil(n/4) resp. n invocations.
// grayscale_vec16  16-byte accesses: one invocation turns 48 bytes of RGB into 16 bytes of Y:
//                  u8 = 16 pixels (3 vec4<u32> loads, 1 vec4<u32> store), fp32 = 4 pixels
//                  (3 vec4<f32> loads, 1 vec4<f32> store). ceil(n/16) resp. ceil(n/4) invocations.
// Tails: the backend pads buffers to a multiple of 16 bytes, so the last, partial output word or
// vector is inside `out` (its extra lanes are padding); input reads past the padded end are
// clamped to the last element, which only feeds those padding lanes.
//
// Bytes: read 3*n*sizeof(T), write n*sizeof(T). Flops: 5n.
// Each entry point uses one view of bindings 0-1 (u32, vec4<u32>, f32 or vec4<f32>).

const WG: u32 = 256u;

struct Params { n: u32 }
@group(0) @binding(2) var<uniform> params: Params;

fn linear_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.x + wid.y * nwg.x) * WG + lid;
}

// ---- u8 -------------------------------------------------------------------------------------

fn luma_u8(r: u32, g: u32, b: u32) -> u32 {
    return (299u * r + 587u * g + 114u * b + 500u) / 1000u;
}

// 4 pixels from 3 words (w0 = R0 G0 B0 R1, w1 = G1 B1 R2 G2, w2 = B2 R3 G3 B3) -> 4 luma bytes
fn luma4(w0: u32, w1: u32, w2: u32) -> u32 {
    let y0 = luma_u8(w0 & 0xffu, (w0 >> 8u) & 0xffu, (w0 >> 16u) & 0xffu);
    let y1 = luma_u8(w0 >> 24u, w1 & 0xffu, (w1 >> 8u) & 0xffu);
    let y2 = luma_u8((w1 >> 16u) & 0xffu, w1 >> 24u, w2 & 0xffu);
    let y3 = luma_u8((w2 >> 8u) & 0xffu, (w2 >> 16u) & 0xffu, w2 >> 24u);
    return y0 | (y1 << 8u) | (y2 << 16u) | (y3 << 24u);
}

@group(0) @binding(0) var<storage, read> img_u32: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_u32: array<u32>;

fn naive_u8(t: u32) {  // output word t: pixels 4t .. 4t+3, input words 3t .. 3t+2
    if (t < (params.n + 3u) / 4u) {
        let last = arrayLength(&img_u32) - 1u;
        out_u32[t] = luma4(img_u32[min(3u * t, last)], img_u32[min(3u * t + 1u, last)],
                           img_u32[min(3u * t + 2u, last)]);
    }
}

@group(0) @binding(0) var<storage, read> img_u32x4: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out_u32x4: array<vec4<u32>>;

fn vec16_u8(t: u32) {  // output vector t: pixels 16t .. 16t+15, input vectors 3t .. 3t+2
    if (t < (params.n + 15u) / 16u) {
        let last = arrayLength(&img_u32x4) - 1u;
        let a = img_u32x4[min(3u * t, last)];
        let b = img_u32x4[min(3u * t + 1u, last)];
        let c = img_u32x4[min(3u * t + 2u, last)];
        out_u32x4[t] = vec4<u32>(luma4(a.x, a.y, a.z), luma4(a.w, b.x, b.y),
                                 luma4(b.z, b.w, c.x), luma4(c.y, c.z, c.w));
    }
}

// ---- fp32 -----------------------------------------------------------------------------------

fn luma_f32(r: f32, g: f32, b: f32) -> f32 {
    return 0.299 * r + 0.587 * g + 0.114 * b;
}

@group(0) @binding(0) var<storage, read> img_f32: array<f32>;
@group(0) @binding(1) var<storage, read_write> out_f32: array<f32>;

fn naive_fp32(p: u32) {  // pixel p
    if (p < params.n) {
        out_f32[p] = luma_f32(img_f32[3u * p], img_f32[3u * p + 1u], img_f32[3u * p + 2u]);
    }
}

@group(0) @binding(0) var<storage, read> img_f32x4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out_f32x4: array<vec4<f32>>;

fn vec16_fp32(t: u32) {  // output vector t: pixels 4t .. 4t+3, input vectors 3t .. 3t+2
    if (t < (params.n + 3u) / 4u) {
        let last = arrayLength(&img_f32x4) - 1u;
        let a = img_f32x4[min(3u * t, last)];
        let b = img_f32x4[min(3u * t + 1u, last)];
        let c = img_f32x4[min(3u * t + 2u, last)];
        out_f32x4[t] = vec4<f32>(luma_f32(a.x, a.y, a.z), luma_f32(a.w, b.x, b.y),
                                 luma_f32(b.z, b.w, c.x), luma_f32(c.y, c.z, c.w));
    }
}

// ---- entry points ---------------------------------------------------------------------------

@compute @workgroup_size(WG)
fn grayscale_naive(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    naive_{{DTYPE}}(linear_id(wid, nwg, lid));
}

@compute @workgroup_size(WG)
fn grayscale_vec16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    vec16_{{DTYPE}}(linear_id(wid, nwg, lid));
}
