// matmul.wgsl — C = A·B (SIMT), row-major A [M, K], B [K, N], C [M, N]; the ladder of matmul.cu.
// Reads (M·K + K·N)·s and writes M·N·s bytes at the fewest (s = element size); 2·M·N·K flops.
//
// Placeholders: DT (0 fp32, 1 fp16, 2 bf16 storage; math is fp32), TILE (tiled_shared),
// BM BN BK TM TN (register_blocked). A and B are bound as raw 16-byte words (array<vec4<u32>>)
// and reinterpreted, so one binding type serves every storage type: fp16 is read with
// unpack2x16float and bf16 as the top half of an f32 word (both exact, core WGSL: no
// shader-f16 needed); outputs are rounded to nearest even in integer arithmetic. C is bound as
// array<atomic<u32>>: an fp32 element is one word (atomicStore); two 16-bit elements share a
// word, so a word whose two halves this invocation owns is one atomicStore, and a half whose
// neighbour belongs to another invocation (odd N, row ends, the last element) is written with
// atomicAnd (clear) + atomicOr (set), which cannot lose the other half. Indices are u32
// (M·K, K·N, M·N < 2^32). Launch: workgroups (⌈N/BN⌉, ⌈M/BM⌉); x walks the columns of C.
//
//   matmul_naive            16×16 invocations, one C element each, K loop over global memory
//   matmul_tiled_shared     TILE×TILE invocations, one C element each; TILE×TILE tiles of A and
//                           B through workgroup memory, two barriers per K tile
//   matmul_register_blocked NT = (BM/TM)·(BN/TN) invocations (256), a BM×BN tile of C per
//                           workgroup: each invocation a TM×TN register tile made of (TM/4)×(TN/4)
//                           4×4 blocks spaced BM/(TM/4) rows, BN/(TN/4) columns apart; BK-deep K
//                           tiles loaded 4-wide (scalar at edges and unaligned rows, zero outside),
//                           the next tile prefetched into registers during this tile's FMAs, A
//                           stored transposed (vec4 of 4 rows per k), vec4 reads and FMAs. Every
//                           loop over the register tile is unrolled (`// @unroll`, expanded by
//                           backends/wgsl_unroll.py): the private arrays are indexed by constants
//                           only, so they can live in registers (a loop counter index kept them
//                           in local memory on the H200: ~2 TFLOP/s at every shape before)

struct Params { m: u32, n: u32, k: u32, pad: u32 }

@group(0) @binding(0) var<storage, read> A: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> C: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;

const DT: u32 = {{DT}}u;

// ---- conversions ----------------------------------------------------------------------------

#include "f16.wgsl"

// ---- loads: element e of A / B (e < its size) and 4 elements from e (e % 4 == 0) -------------

fn ld_a(e: u32) -> f32 {
    if (DT == 0u) { return bitcast<f32>(A[e / 4u][e % 4u]); }
    let w = A[e / 8u][(e / 2u) % 4u];  // 2 halves per word, 8 per vec4
    return h2f((w >> ((e % 2u) * 16u)) & 0xffffu);
}

fn ld_b(e: u32) -> f32 {
    if (DT == 0u) { return bitcast<f32>(B[e / 4u][e % 4u]); }
    let w = B[e / 8u][(e / 2u) % 4u];
    return h2f((w >> ((e % 2u) * 16u)) & 0xffffu);
}

fn unpack4(w: vec2<u32>) -> vec4<f32> {
    return vec4<f32>(h2f(w.x & 0xffffu), h2f(w.x >> 16u), h2f(w.y & 0xffffu), h2f(w.y >> 16u));
}

fn ld4_a(e: u32) -> vec4<f32> {
    if (DT == 0u) { return bitcast<vec4<f32>>(A[e / 4u]); }
    let q = A[e / 8u];
    return unpack4(select(q.xy, q.zw, (e / 4u) % 2u == 1u));
}

fn ld4_b(e: u32) -> vec4<f32> {
    if (DT == 0u) { return bitcast<vec4<f32>>(B[e / 4u]); }
    let q = B[e / 8u];
    return unpack4(select(q.xy, q.zw, (e / 4u) % 2u == 1u));
}

// ---- stores ---------------------------------------------------------------------------------

// element e of C, whose 16-bit word neighbour may belong to another invocation
fn st1(e: u32, v: f32) {
    if (DT == 0u) {
        atomicStore(&C[e], bitcast<u32>(v));
        return;
    }
    let sh = (e % 2u) * 16u;
    atomicAnd(&C[e / 2u], ~(0xffffu << sh));  // clear our half ...
    atomicOr(&C[e / 2u], enc16(v) << sh);     // ... and set it; the other half is untouched
}

// elements e and e + 1 of C, both owned by this invocation (same row, both in bounds)
fn st2(e: u32, v0: f32, v1: f32) {
    if (DT != 0u && e % 2u == 0u) {
        atomicStore(&C[e / 2u], enc16(v0) | (enc16(v1) << 16u));  // the whole word is ours
        return;
    }
    st1(e, v0);
    st1(e + 1u, v1);
}

// ---- naive ----------------------------------------------------------------------------------

@compute @workgroup_size(16, 16)
fn matmul_naive(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= p.m || col >= p.n) { return; }
    var acc = 0.0;
    for (var k = 0u; k < p.k; k++) {
        acc = fma(ld_a(row * p.k + k), ld_b(k * p.n + col), acc);
    }
    st1(row * p.n + col, acc);
}

// ---- tiled_shared ---------------------------------------------------------------------------

const TILE: u32 = {{TILE}}u;
var<workgroup> ts_a: array<array<f32, TILE>, TILE>;  // ts_a[r][k]
var<workgroup> ts_b: array<array<f32, TILE>, TILE>;  // ts_b[k][c]

@compute @workgroup_size(TILE, TILE)
fn matmul_tiled_shared(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let row = wid.y * TILE + ty;
    let col = wid.x * TILE + tx;
    var acc = 0.0;
    for (var k0 = 0u; k0 < p.k; k0 += TILE) {
        // one element of each tile per invocation, zero outside A/B
        var a = 0.0;
        if (row < p.m && k0 + tx < p.k) { a = ld_a(row * p.k + k0 + tx); }
        var b = 0.0;
        if (k0 + ty < p.k && col < p.n) { b = ld_b((k0 + ty) * p.n + col); }
        ts_a[ty][tx] = a;
        ts_b[ty][tx] = b;
        workgroupBarrier();  // tiles complete before they are read
        for (var k = 0u; k < TILE; k++) { acc = fma(ts_a[ty][k], ts_b[k][tx], acc); }
        workgroupBarrier();  // reads done before the next tile overwrites them
    }
    if (row < p.m && col < p.n) { st1(row * p.n + col, acc); }
}

// ---- register_blocked -----------------------------------------------------------------------

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const NT: u32 = (BM / TM) * (BN / TN);  // invocations per workgroup
const TX: u32 = BN / TN;                // invocation columns
const RS: u32 = BM / (TM / 4u);         // row spacing of an invocation's 4×4 blocks
const CS: u32 = BN / (TN / 4u);         // column spacing
const A_LOADS: u32 = BM * BK / 4u / NT; // 4-wide loads of A per invocation per K tile
const B_LOADS: u32 = BK * BN / 4u / NT;

var<workgroup> rb_a: array<vec4<f32>, BK * BM / 4u>;  // A tile transposed: rb_a[k·BM/4 + m/4][m%4]
var<workgroup> rb_b: array<vec4<f32>, BK * BN / 4u>;  // rb_b[k·BN/4 + n/4]

// A[r][k .. k+3], zero outside A: one 16-byte (or 8-byte) load when in bounds and 4-aligned
fn load_a4(r: u32, k: u32) -> vec4<f32> {
    if (r >= p.m) { return vec4<f32>(0.0); }
    let o = r * p.k;
    if (p.k % 4u == 0u && k + 3u < p.k) { return ld4_a(o + k); }
    var v = vec4<f32>(0.0);
    // @unroll
    for (var c = 0u; c < 4u; c++) {
        if (k + c < p.k) { v[c] = ld_a(o + k + c); }
    }
    return v;
}

// B[k][c .. c+3], zero outside B
fn load_b4(k: u32, c: u32) -> vec4<f32> {
    if (k >= p.k) { return vec4<f32>(0.0); }
    let o = k * p.n;
    if (p.n % 4u == 0u && c + 3u < p.n) { return ld4_b(o + c); }
    var v = vec4<f32>(0.0);
    // @unroll
    for (var j = 0u; j < 4u; j++) {
        if (c + j < p.n) { v[j] = ld_b(o + c + j); }
    }
    return v;
}

@compute @workgroup_size(NT)
fn matmul_register_blocked(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    // invocation (ty, tx) of the (BM/TM)×TX grid; each 32 invocations form a 4×8 patch of it
    let warp = tid / 32u;
    let lane = tid % 32u;
    let tx = (warp % (TX / 8u)) * 8u + lane % 8u;
    let ty = (warp / (TX / 8u)) * 4u + lane / 8u;
    let m0 = wid.y * BM;
    let n0 = wid.x * BN;

    var acc: array<vec4<f32>, TM * TN / 4u>;  // acc[i·TN/4 + j4]: row i, columns 4·j4 .. +3
    // @unroll
    for (var q = 0u; q < TM * TN / 4u; q++) { acc[q] = vec4<f32>(0.0); }
    var ra: array<vec4<f32>, A_LOADS>;        // the next K tile, in registers
    var rb: array<vec4<f32>, B_LOADS>;

    // load slot l of A: vector idx = tid + l·NT → row idx / (BK/4), k offset (idx % (BK/4))·4;
    // of B: k row idx / (BN/4), column (idx % (BN/4))·4 (= its index in rb_b)
    // @unroll
    for (var l = 0u; l < A_LOADS; l++) {
        let idx = tid + l * NT;
        ra[l] = load_a4(m0 + idx / (BK / 4u), (idx % (BK / 4u)) * 4u);
    }
    // @unroll
    for (var l = 0u; l < B_LOADS; l++) {
        let idx = tid + l * NT;
        rb[l] = load_b4(idx / (BN / 4u), n0 + (idx % (BN / 4u)) * 4u);
    }

    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        // registers → workgroup memory (A transposed: 4 components in 4 k rows)
        // @unroll
        for (var l = 0u; l < A_LOADS; l++) {
            let idx = tid + l * NT;
            let m = idx / (BK / 4u);
            let k = (idx % (BK / 4u)) * 4u;
            let slot = k * (BM / 4u) + m / 4u;
            rb_a[slot][m % 4u] = ra[l].x;
            rb_a[slot + BM / 4u][m % 4u] = ra[l].y;
            rb_a[slot + 2u * (BM / 4u)][m % 4u] = ra[l].z;
            rb_a[slot + 3u * (BM / 4u)][m % 4u] = ra[l].w;
        }
        // @unroll
        for (var l = 0u; l < B_LOADS; l++) { rb_b[tid + l * NT] = rb[l]; }
        workgroupBarrier();  // the tile is complete

        // the next tile's global loads, in flight during this tile's FMAs
        let k1 = k0 + BK;
        if (k1 < p.k) {
            // @unroll
            for (var l = 0u; l < A_LOADS; l++) {
                let idx = tid + l * NT;
                ra[l] = load_a4(m0 + idx / (BK / 4u), k1 + (idx % (BK / 4u)) * 4u);
            }
            // @unroll
            for (var l = 0u; l < B_LOADS; l++) {
                let idx = tid + l * NT;
                rb[l] = load_b4(k1 + idx / (BN / 4u), n0 + (idx % (BN / 4u)) * 4u);
            }
        }

        // @unroll
        for (var kk = 0u; kk < BK; kk++) {
            var b: array<vec4<f32>, TN / 4u>;
            // @unroll
            for (var j4 = 0u; j4 < TN / 4u; j4++) { b[j4] = rb_b[kk * (BN / 4u) + (j4 * CS) / 4u + tx]; }
            // @unroll
            for (var i4 = 0u; i4 < TM / 4u; i4++) {
                let a = rb_a[kk * (BM / 4u) + (i4 * RS) / 4u + ty];  // rows i4·RS + ty·4 .. +3
                // @unroll
                for (var j4 = 0u; j4 < TN / 4u; j4++) {
                    let q = i4 * TN + j4;  // (4·i4)·(TN/4) + j4
                    acc[q] = fma(vec4<f32>(a.x), b[j4], acc[q]);
                    acc[q + TN / 4u] = fma(vec4<f32>(a.y), b[j4], acc[q + TN / 4u]);
                    acc[q + TN / 2u] = fma(vec4<f32>(a.z), b[j4], acc[q + TN / 2u]);
                    acc[q + 3u * (TN / 4u)] = fma(vec4<f32>(a.w), b[j4], acc[q + 3u * (TN / 4u)]);
                }
            }
        }
        workgroupBarrier();  // this tile's reads done before the next store overwrites it
    }

    // element (i, j) is C[m0 + (i/4)·RS + ty·4 + i%4][n0 + (j/4)·CS + tx·4 + j%4]
    // @unroll
    for (var i = 0u; i < TM; i++) {
        let r = m0 + (i / 4u) * RS + ty * 4u + i % 4u;
        // @unroll
        for (var j4 = 0u; j4 < TN / 4u; j4++) {
            let c = n0 + j4 * CS + tx * 4u;
            let e = r * p.n + c;
            let v = acc[i * (TN / 4u) + j4];
            if (r < p.m && c + 3u < p.n) {
                st2(e, v.x, v.y);
                st2(e + 2u, v.z, v.w);
            } else if (r < p.m) {
                if (c < p.n) { st1(e, v.x); }
                if (c + 1u < p.n) { st1(e + 1u, v.y); }
                if (c + 2u < p.n) { st1(e + 2u, v.z); }
            }
        }
    }
}
