// reduction_common.wgsl — bindings, element readers and the grid-stride vector sum shared by
// reduction.wgsl and reduction_subgroup.wgsl (`#include "reduction_common.wgsl"`,
// backends.base.read_source); placeholders as in reduction.wgsl.

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
fn sum16_f16(w: vec4<u32>) -> vec4<f32> {  // 8 halves → 4 pair sums
    let a = unpack2x16float(w.x);
    let b = unpack2x16float(w.y);
    let c = unpack2x16float(w.z);
    let d = unpack2x16float(w.w);
    return vec4<f32>(a.x + a.y, b.x + b.y, c.x + c.y, d.x + d.y);
}

// Σ of invocation t's share (of nthreads): 16-byte vectors grid-stride (coalesced, 4 loads in
// flight) into a 4-wide accumulator, then the last n % VEC elements, one per invocation
fn thread_sum(t: u32, nthreads: u32) -> {{ACC}} {
    let nvec = p.n / {{VEC}}u;
    var a = vec4<{{ACC}}>({{ACC}}(0));
    var i = t;
    for (; i + 3u * nthreads < nvec; i = i + 4u * nthreads) {
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
    return v;
}
