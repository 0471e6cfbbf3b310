// Known-wrong kernels: each must be rejected by the checker. One work-item per element.
// vector_add, c[i] = a[i] + b[i] — except for the defect each kernel is named for.

__kernel void add_skip_tail(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < (n / 256) * 256) c[i] = a[i] + b[i];        // forgets the last partial block
}

__kernel void add_99_percent(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n && i % 100 != 99) c[i] = a[i] + b[i];     // leaves 1 % unwritten
}

__kernel void add_oob_read(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i + 1];                  // reads one past the end (and the wrong b)
}
