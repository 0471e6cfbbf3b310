// reduction.wgsl — out = Σ x over n elements. Reads n·sizeof(in) bytes, writes one accumulator.
//
// Placeholders: BLOCK (workgroup size, power of two), ACC (f32 | i32), VEC (elements per 16 bytes:
// 4, or 8 for fp16), ELEM / SUM16 (elem_f32|elem_f16|elem_i32, sum16_f32|sum16_f16|sum16_i32:
// how one element / one 16-byte vector of the input is read), ATOMIC_ADD (atomic_add_f32 |
// atomic_add_i32, reduce_naive only). The input is bound as raw 16-byte words
// (array<vec4<u32>>) and reinterpreted: one binding type serves fp32, int32 and fp16 (unpacked
// with unpack2x16float: no shader-f16 needed) and every level of partials. The output is bound
// as array<atomic<u32>> for every entry (reduce_naive adds into it; the others atomicStore).
// Indices are u32 (n < 2^32). Linear workgroup id g = wid.x + wid.y·nwg.x (2-D grids).
//
//   reduce_zero         out[0] = 0 (before reduce_naive's atomics)
//   reduce_naive        grid-stride loop, each invocation sums serially, then one atomic add per
//                       invocation (i32: atomicAdd; f32: an atomicCompareExchangeWeak loop — it
//                       cannot hang: some invocation's exchange succeeds every round)
//   reduce_tree_shared  one element per invocation, a tree in workgroup memory (a barrier per
//                       level) → out[g]; relaunched on the partials until one value is left
//   reduce_coarsened    a fixed grid of workgroups; each invocation adds 16-byte vectors
//                       grid-stride into a 4-wide accumulator, then one tree per workgroup →
//                       out[g]; one workgroup finishes (second dispatch)
// (reduce_subgroup is in reduction_subgroup.wgsl: `enable subgroups;` fails on adapters without.)

#include "reduction_common.wgsl"

fn atomic_add_f32(v: f32) {
    var old = atomicLoad(&out[0]);
    loop {
        let r = atomicCompareExchangeWeak(&out[0], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.exchanged) { break; }
        old = r.old_value;
    }
}
fn atomic_add_i32(v: i32) { atomicAdd(&out[0], bitcast<u32>(v)); }  // two's complement: same bits

fn block_tree(v: {{ACC}}, lid: u32) -> {{ACC}} {
    s[lid] = v;
    workgroupBarrier();
    for (var stride = {{BLOCK}}u / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) { s[lid] = s[lid] + s[lid + stride]; }
        workgroupBarrier();  // level k+1 reads what level k wrote
    }
    return s[0];
}

// stores (x[0].x + p.n)·0 = 0: it names every binding so that the automatic pipeline layout has
// the same bindings as reduce_naive's (the launcher binds x, out and the params to both)
@compute @workgroup_size(1)
fn reduce_zero() { atomicStore(&out[0], (x[0].x + p.n) * 0u); }

@compute @workgroup_size({{BLOCK}})
fn reduce_naive(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    var acc = {{ACC}}(0);
    let stride = nwg.x * {{BLOCK}}u;
    for (var i = wid.x * {{BLOCK}}u + lid; i < p.n; i = i + stride) { acc = acc + {{ELEM}}(i); }
    {{ATOMIC_ADD}}(acc);
}

@compute @workgroup_size({{BLOCK}})
fn reduce_tree_shared(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let i = g * {{BLOCK}}u + lid;
    var v = {{ACC}}(0);
    if (i < p.n) { v = {{ELEM}}(i); }
    let sum = block_tree(v, lid);
    if (lid == 0u && g < p.groups) { atomicStore(&out[g], bitcast<u32>(sum)); }
}

@compute @workgroup_size({{BLOCK}})
fn reduce_coarsened(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let v = thread_sum(wid.x * {{BLOCK}}u + lid, nwg.x * {{BLOCK}}u);
    let sum = block_tree(v, lid);
    if (lid == 0u) { atomicStore(&out[wid.x], bitcast<u32>(sum)); }
}
