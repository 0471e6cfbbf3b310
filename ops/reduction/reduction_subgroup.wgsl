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

struct Params { n: u32, groups: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> s: array<{{ACC}}, {{BLOCK}}>;

fn elem_f32(i: u32) -> f32 { return bitcast<f32>(x[i / 4u][i % 4u]); }
fn elem_i32(i: u32) -> i32 { return bitcast<i32>(x[i / 4u][i % 4u]); }
fn elem_f16(i: u32) -> f32 { return unpack2x16float(x[i / 8u][(i / 2u) % 4u])[i % 2u]; }

fn sum16_f32(w: vec4<u32>) -> vec4<f32> { return bitcast<vec4<f32>>(w); }
fn sum16_i32(w: vec4<u32>) -> vec4<i32> { return bitcast<vec4<i32>>(w); }
fn sum16_f16(w: vec4<u32>) -> vec4<f32> {
    let a = unpack2x16float(w.x);
    let b = unpack2x16float(w.y);
    let c = unpack2x16float(w.z);
    let d = unpack2x16float(w.w);
    return vec4<f32>(a.x + a.y, b.x + b.y, c.x + c.y, d.x + d.y);
}

@compute @workgroup_size({{BLOCK}})
fn reduce_subgroup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32,
                   @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sg_size: u32) {
    let t = wid.x * {{BLOCK}}u + lid;
    let nthreads = nwg.x * {{BLOCK}}u;
    let nvec = p.n / {{VEC}}u;
    var a = vec4<{{ACC}}>({{ACC}}(0));
    var i = t;
    for (; i + 3u * nthreads < nvec; i = i + 4u * nthreads) {  // coalesced, 4 loads in flight
        let w0 = x[i];
        let w1 = x[i + nthreads];
        let w2 = x[i + 2u * nthreads];
        let w3 = x[i + 3u * nthreads];
        a = a + {{SUM16}}(w0);
        a = a + {{SUM16}}(w1);
        a = a + {{SUM16}}(w2);
        a = a + {{SUM16}}(w3);
    }
    for (; i < nvec; i = i + nthreads) { a = a + {{SUM16}}(x[i]); }
    var v = (a.x + a.y) + (a.z + a.w);
    let tail = nvec * {{VEC}}u + t;
    if (tail < p.n) { v = v + {{ELEM}}(tail); }
    let sg_sum = subgroupAdd(v);
    if (lane == 0u) { s[lid / sg_size] = sg_sum; }
    workgroupBarrier();
    let nsg = ({{BLOCK}}u + sg_size - 1u) / sg_size;
    var b = {{ACC}}(0);
    for (var i = lane; i < nsg; i = i + sg_size) { b = b + s[i]; }
    let sum = subgroupAdd(b);  // every subgroup computes the same total, in the same order
    if (lid == 0u) { atomicStore(&out[wid.x], bitcast<u32>(sum)); }
}
