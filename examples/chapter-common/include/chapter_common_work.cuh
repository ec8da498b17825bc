// Synthetic per-element work that several chapter programs' kernels share. The CPU side is
// chapter-common/src/work.rs (lcg_rounds, MulAdd::apply): the same 32-bit unsigned, wrapping
// arithmetic, so every GPU result equals its CPU reference bit for bit. A program's build.rs
// adds this folder with cuda_build::KernelBuild::include.
#pragma once
#include <stdint.h>

// `rounds` rounds of an LCG step and an xorshift, started from `value` and `salt`: work whose
// cost is set by `rounds`. One dependency chain, so the compiler cannot shorten it.
static __device__ __forceinline__ uint32_t cc_lcg_rounds(uint32_t value, uint32_t rounds, uint32_t salt) {
    uint32_t x = (value * 0x9E3779B9u) ^ salt;
    for (uint32_t k = 0; k < rounds; ++k) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 15;
    }
    return x;
}

// One step of a chain of small kernels: x * mul + add, then an xorshift.
static __device__ __forceinline__ uint32_t cc_mul_add(uint32_t x, uint32_t mul, uint32_t add) {
    x = x * mul + add;
    return x ^ (x >> 15);
}
