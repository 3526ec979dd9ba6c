// SPDX-License-Identifier: Apache-2.0
// compare.comp — comparisons and logic ops with a bool result: == != < <= > >= (0..5),
// logical and / or (6, 7) and not (8, operand b ignored), NumPy broadcasting as in
// binary.comp. One input element type per build: float32 (default), -DKN_F64, -DKN_I32,
// -DKN_I64, -DKN_BOOL (bytes, read out of 32-bit words) or -DKN_F16 (halves read out of
// 32-bit words as float32: half.glsl). Bool results are bytes too:
// each invocation writes one whole 32-bit word (4 elements), so no 8-bit storage is
// needed. The op and the fast-path flags are specialization constants.
#version 450
#if defined(KN_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define T int64_t
#elif defined(KN_I32)
#define T int
#elif defined(KN_F64)
#define T double
#elif defined(KN_BOOL)
#define T uint
#elif defined(KN_F16)
#define T float
#define S uint
#extension GL_GOOGLE_include_directive : require
#include "half.glsl"
#else
#define T float
#endif
#ifndef S
#define S T
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint FLAGS = 0;
layout(std430, binding = 0) readonly buffer A { S a[]; };
layout(std430, binding = 1) readonly buffer B { S b[]; };
layout(std430, binding = 2) writeonly buffer C { uint c[]; };
layout(push_constant) uniform P {
  uint n, ndim, pad0, pad1;
  uint shape[8];
  uint sa[8];
  uint sb[8];
} pc;

#ifdef KN_BOOL
T load_a(uint i) { return (a[i >> 2] >> ((i & 3u) * 8u)) & 255u; }
T load_b(uint i) { return (b[i >> 2] >> ((i & 3u) * 8u)) & 255u; }
#elif defined(KN_F16)
T load_a(uint i) { return HALF_LOAD(a, i); }
T load_b(uint i) { return HALF_LOAD(b, i); }
#else
T load_a(uint i) { return a[i]; }
T load_b(uint i) { return b[i]; }
#endif

bool apply(T x, T y) {
  switch (OP) {
  case 0u: return x == y;
  case 1u: return x != y;
  case 2u: return x < y;
  case 3u: return x <= y;
  case 4u: return x > y;
  case 5u: return x >= y;
  case 6u: return x != T(0) && y != T(0);
  case 7u: return x != T(0) || y != T(0);
  default: return x == T(0);
  }
}

void main() {
  uint words = (pc.n + 3u) / 4u;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
    uint word = 0u;
    for (uint j = 0u; j < 4u; j++) {
      uint i = w * 4u + j;
      if (i >= pc.n) break;
      uint ia = 0u, ib = 0u;
      if ((FLAGS & 3u) == 1u) ia = i;
      if ((FLAGS & 12u) == 4u) ib = i;
      if ((FLAGS & 3u) == 0u || (FLAGS & 12u) == 0u) {
        uint rest = i, oa = 0u, ob = 0u;
        for (int d = int(pc.ndim) - 1; d >= 0; d--) {
          uint coord = rest % pc.shape[d];
          rest /= pc.shape[d];
          oa += coord * pc.sa[d];
          ob += coord * pc.sb[d];
        }
        if ((FLAGS & 3u) == 0u) ia = oa;
        if ((FLAGS & 12u) == 0u) ib = ob;
      }
      if (apply(load_a(ia), load_b(ib))) word |= 1u << (j * 8u);
    }
    c[w] = word;
  }
}
