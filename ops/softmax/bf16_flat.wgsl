// bf16_flat.wgsl — a flat run of N bf16 values packed two per u32 word (value i: half i % 2 of word
// i / 2), widened to f32 (raw bits) and narrowed back, so that bf16 rows of odd length, which start
// mid-word, can run through the fp32 softmax kernels (see kernels.py, _bf16_odd_rows): WGSL has no
// 16-bit stores, and a word shared by two rows' workgroups would otherwise need atomics.
// Bytes: widen reads 2·N and writes 4·N, narrow the reverse.
//
// Thread → data: invocation i (i = (wid.x + wid.y·nwg.x)·WG + lid, grid_2d) owns word i of the
// bf16 array, i.e. values 2i and 2i + 1 (the second only where 2i + 1 < N; narrow writes 0 into
// the high half of a last, half-used word, which lies in the buffer's padding).
// Placeholders: WG (invocations per workgroup).
//
//   widen   src: bf16 words → dst: f32 bits (exact)
//   narrow  src: f32 bits → dst: bf16 words, round to nearest even (f16.wgsl's f2bf; NaN stays NaN)

struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

const WG: u32 = {{WG}}u;
const DT: u32 = 2u;  // bf16, for f16.wgsl

#include "f16.wgsl"

fn word_index(lid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return (wid.x + wid.y * nwg.x) * WG + lid;
}

@compute @workgroup_size(WG)
fn widen(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = word_index(lid, wid, nwg);
    if (2u * i >= p.n) { return; }
    let w = src[i];
    dst[2u * i] = w << 16u;
    if (2u * i + 1u < p.n) { dst[2u * i + 1u] = w & 0xffff0000u; }
}

@compute @workgroup_size(WG)
fn narrow(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = word_index(lid, wid, nwg);
    if (2u * i >= p.n) { return; }
    var hi = 0u;
    if (2u * i + 1u < p.n) { hi = f2bf(bitcast<f32>(src[2u * i + 1u])); }
    dst[i] = f2bf(bitcast<f32>(src[2u * i])) | (hi << 16u);
}
