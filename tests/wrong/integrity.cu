// Planted CUDA kernels for the measurement-integrity tests (run on the GPU host by
// scripts/integrity_gpu.sh; compiled only elsewhere). One thread per element.

extern "C" __global__ void add_naive(const float* a, const float* b, float* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// a device-side trap: the context is left with a sticky error (CUDA_ERROR_LAUNCH_FAILED)
extern "C" __global__ void add_trap(const float* a, const float* b, float* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
    if (i == 0) asm volatile("trap;");
}

// a write to an illegal address: sticky CUDA_ERROR_ILLEGAL_ADDRESS
extern "C" __global__ void add_illegal_address(const float* a, const float* b, float* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
    if (i == 0) *(volatile float*)(16) = 1.0f;
}
