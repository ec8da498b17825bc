// One Collatz step for every value not yet at 1: v -> v / 2 (even) or 3v + 1 (odd), counting
// the steps each value took, and raising *active when some value is still not at 1. No
// #include: NVRTC compiles this text as it is (it has no standard headers on its own).

extern "C" __global__ void collatz_step(unsigned long long* values, unsigned int* steps, unsigned int n,
                                        unsigned int* active) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long v = values[i];
    if (v <= 1) return;
    v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
    values[i] = v;
    steps[i] += 1;
    if (v != 1) *active = 1;
}
