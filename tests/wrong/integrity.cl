// Planted kernels for the measurement-integrity tests (tests/wrong/integrity.py). Each is wrong
// in a way one launch on the first input set does not show, except the timing probes, which are
// correct and only enqueue their work in unusual ways.

// ---- vector_add, c[i] = a[i] + b[i] ------------------------------------------------------------

__kernel void add_naive(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

// one past the end: `<=` where `<` was meant (a[n] and b[n] are read too); the values are right
__kernel void add_le_n(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i <= n) c[i] = a[i] + b[i];
}

// state across launches: a "done" flag set by the first launch and never reset
__kernel void add_unless_done(__global const float* a, __global const float* b, __global float* c, int n,
                              __global const int* done) {
    int i = get_global_id(0);
    if (done[0]) return;
    if (i < n) c[i] = a[i] + b[i];
}

__kernel void set_done(__global int* done) { done[0] = 1; }

// state across launches: work-groups take blocks from a ticket counter that is never reset, so
// a second launch starts at ticket = number of groups and writes nothing
__kernel void add_ticket(__global const float* a, __global const float* b, __global float* c, int n,
                         __global int* ticket) {
    __local int block;
    if (get_local_id(0) == 0) block = atomic_inc(ticket);
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = block * (int)get_local_size(0) + (int)get_local_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

// a coverage hole: drops the last element only above 2^22 elements
__kernel void add_drop_tail_large(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n && !(n > (1 << 22) && i == n - 1)) c[i] = a[i] + b[i];
}

// ---- reduction, out = Σ x: per-group tree, partials summed by one work-item ------------------------

// T: input type, ACC: accumulator type, OUT: output type; DROP: the partial left out (-1: none)
__kernel void reduce_partials(__global const T* x, __global ACC* partial, int n) {
    __local ACC s[256];
    int l = get_local_id(0);
    int i = get_global_id(0);
    s[l] = i < n ? (ACC)x[i] : (ACC)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = 128; w > 0; w >>= 1) {
        if (l < w) s[l] += s[l + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(0)] = s[0];
}

__kernel void reduce_finish(__global const ACC* partial, __global OUT* out, int groups) {
    ACC acc = 0;
    for (int g = 0; g < groups; g++)
        if (g != DROP) acc += partial[g];
    out[0] = (OUT)acc;
}

// ---- scan, y = inclusive cumsum(x): one work-item per 256-element tile, then carries ---------------

__kernel void scan_tiles(__global const T* x, __global T* y, __global T* tile_sum, int n) {
    int t = get_global_id(0);
    int lo = t * 256;
    if (lo >= n) return;
    int hi = min(lo + 256, n);
    T acc = 0;
    for (int i = lo; i < hi; i++) { acc += x[i]; y[i] = acc; }
    tile_sum[t] = acc;
}

// carries: exclusive prefix of the tile sums; DROP's sum is left out of every later carry
__kernel void scan_carry(__global const T* tile_sum, __global T* carry, int tiles) {
    T acc = 0;
    for (int t = 0; t < tiles; t++) {
        carry[t] = acc;
        if (t != DROP) acc += tile_sum[t];
    }
}

__kernel void scan_add(__global T* y, __global const T* carry, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] += carry[i / 256];
}
