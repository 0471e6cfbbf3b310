// vector_add: c[i] = a[i] + b[i] for i < n.
//
// Placeholders: {{T}} = f32 | f16, {{ENABLE}} = "" | "enable f16;" (f16 needs shader-f16; the add
// is done in f16, correctly rounded).
// Bindings: 0 a, 1 b, 2 c (storage), 3 params (uniform: n). 256 invocations per workgroup; the
// grid may be 2-D (at most 65535 groups per dimension): group id = wid.x + wid.y * nwg.x.
//
// vector_add_naive  one element per invocation; ceil(n/256) groups.
// vector_add_vec4   one vec4<T> per invocation (16 bytes for f32, 8 for f16); ceil(n/1024) groups.
//                   The backend pads every buffer to a multiple of 16 bytes, so the last, partial
//                   vector is inside the buffers; its extra lanes read and write padding only.
// vector_add_grid_stride  the vec4 body in a grid-stride loop over a fixed 1-D grid of at most
//                   2048 groups (the factory's choice: several waves on today's largest GPUs).
//
// Bytes: read 2*n*sizeof(T), write n*sizeof(T). Flops: n.
// The two views of bindings 0-2 (scalar and vec4) are used by different entry points only.
{{ENABLE}}

alias T = {{T}};
const WG: u32 = 256u;

struct Params { n: u32 }
@group(0) @binding(3) var<uniform> params: Params;

fn linear_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.x + wid.y * nwg.x) * WG + lid;
}

@group(0) @binding(0) var<storage, read> a: array<T>;
@group(0) @binding(1) var<storage, read> b: array<T>;
@group(0) @binding(2) var<storage, read_write> c: array<T>;

@compute @workgroup_size(WG)
fn vector_add_naive(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wid, nwg, lid);
    if (i < params.n) {
        c[i] = a[i] + b[i];
    }
}

@group(0) @binding(0) var<storage, read> a4: array<vec4<T>>;
@group(0) @binding(1) var<storage, read> b4: array<vec4<T>>;
@group(0) @binding(2) var<storage, read_write> c4: array<vec4<T>>;

@compute @workgroup_size(WG)
fn vector_add_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    let v = linear_id(wid, nwg, lid);  // elements 4v .. 4v+3
    if (v < (params.n + 3u) / 4u) {
        c4[v] = a4[v] + b4[v];
    }
}

@compute @workgroup_size(WG)
fn vector_add_grid_stride(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
    let n4 = (params.n + 3u) / 4u;
    let stride = nwg.x * nwg.y * WG;
    for (var v = linear_id(wid, nwg, lid); v < n4; v += stride) {
        c4[v] = a4[v] + b4[v];
    }
}
