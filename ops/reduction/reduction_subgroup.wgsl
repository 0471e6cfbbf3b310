// reduction_subgroup.wgsl — out = Σ x with WGSL subgroup operations (adapter feature "subgroup").
// Reads n·sizeof(in) bytes, writes one accumulator. Placeholders and bindings as reduction.wgsl.
//
//   reduce_subgroup  a fixed grid of workgroups; each invocation adds 16-byte vectors grid-stride
//                    (coalesced) into a 4-wide accumulator; subgroupAdd gives each subgroup's
//                    sum, lane 0 stores it at slot lid / subgroup_size (subgroups are taken to be
//                    consecutive runs of local_invocation_index, as on every implementation
//                    known), then every subgroup folds the slots with a second subgroupAdd and
//                    invocation 0 writes out[g]. One workgroup finishes (second dispatch).
//                    Deterministic for a given adapter and subgroup size.

// (no `enable subgroups;`: wgpu's naga rejects the directive and enables subgroup builtins with
// the device feature; add it back when naga implements it.)

#include "reduction_common.wgsl"

@compute @workgroup_size({{BLOCK}})
fn reduce_subgroup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32,
                   @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sg_size: u32) {
    let v = thread_sum(wid.x * {{BLOCK}}u + lid, nwg.x * {{BLOCK}}u);
    let sg_sum = subgroupAdd(v);
    if (lane == 0u) { s[lid / sg_size] = sg_sum; }
    workgroupBarrier();
    let nsg = ({{BLOCK}}u + sg_size - 1u) / sg_size;
    var b = {{ACC}}(0);
    for (var i = lane; i < nsg; i = i + sg_size) { b = b + s[i]; }
    let sum = subgroupAdd(b);  // every subgroup computes the same total, in the same order
    if (lid == 0u) { atomicStore(&out[wid.x], bitcast<u32>(sum)); }
}
