// The relaxation problem of examples/cuda_graphs_conditional's WHILE loop and its CPU model, for
// the profiles that check the example's sweeps bit for bit (while_sweep, while_unroll).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Problem {
  std::vector<float> x0, b;
  float w, tol;
  uint32_t max_steps;
};

struct Solution {
  std::vector<float> x;
  uint32_t steps;
  uint32_t residual_bits;
  bool operator==(const Solution& o) const {
    return steps == o.steps && residual_bits == o.residual_bits && x.size() == o.x.size() &&
           memcmp(x.data(), o.x.data(), x.size() * sizeof(float)) == 0;
  }
};

// The example's CPU model (src/relax.rs), in C++ (x86-64 host code: no fused multiply-add).
static Solution solve_cpu(const Problem& p) {
  const size_t n = p.b.size();
  std::vector<float> x = p.x0, old(n + 2, 0.0f);
  for (uint32_t steps = 1;; ++steps) {
    std::copy(x.begin(), x.end(), old.begin() + 1);
    float residual = 0.0f;
    for (size_t i = 0; i < n; ++i) {
      const float next = ((p.b[i] + old[i]) + old[i + 2]) * p.w;
      residual = std::max(residual, std::fabs(next - old[i + 1]));
      x[i] = next;
    }
    if (!(residual > p.tol && steps < p.max_steps)) {
      uint32_t bits;
      memcpy(&bits, &residual, 4);
      return {x, steps, bits};
    }
  }
}

// The timed problem: n seeded values in [-1, 1) (srand(7)), diagonal 2.05, no tolerance (the
// loop runs `steps` sweeps).
static Problem timed_problem(uint32_t n, uint32_t steps) {
  Problem p;
  p.x0.resize(n);
  p.b.resize(n);
  srand(7);
  for (uint32_t i = 0; i < n; ++i) {
    p.x0[i] = rand() / (float)RAND_MAX * 2 - 1;
    p.b[i] = rand() / (float)RAND_MAX * 2 - 1;
  }
  p.w = 1.0f / 2.05f;
  p.tol = -1.0f;
  p.max_steps = steps;
  return p;
}
