// SPDX-License-Identifier: Apache-2.0
// cast.comp — converts n elements to another dtype (NumPy astype: float → int
// truncates toward zero, anything → bool is "!= 0", NaN → bool is true). Float → int
// is defined everywhere as on the CPU (kernels/tensor.c f2i), where SPIR-V leaves
// out-of-range conversions undefined: NaN → 0, beyond int64 saturated, then int32 keeps
// the low 32 bits of the int64. The source
// type is chosen at build time (float32 default, -DKN_F64, -DKN_I32, -DKN_I64,
// -DKN_BOOL, -DKN_F16), the destination by specialization constant 1 (kn_dtype
// numbering: 0 bool, 1 int32, 2 int64, 3 float16, 4 float32, 5 float64). Bools (bytes)
// and halves are addressed inside 32-bit words, so no 8/16-bit storage is needed; each
// invocation converts 4 elements, so a bool result is one whole word and a float16
// result two. Halves convert bit by bit like the CPU (half.glsl), other
// destinations go through float32 for float16 as on the CPU. Every variant uses double
// and int64 arithmetic (the launcher needs both).
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "half.glsl"
#if defined(KN_I64)
#define T int64_t
#define S int64_t
#elif defined(KN_I32)
#define T int
#define S int
#elif defined(KN_F64)
#define T double
#define S double
#elif defined(KN_BOOL)
#define T uint
#define S uint
#elif defined(KN_F16)
#define T float
#define S uint
#else
#define T float
#define S float
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DST = 4;
layout(std430, binding = 0) readonly buffer A { S a[]; };
layout(std430, binding = 1) writeonly buffer C { uint c[]; };
layout(push_constant) uniform P { uint n; } pc;

#if defined(KN_BOOL)
T load(uint i) { return (a[i >> 2] >> ((i & 3u) * 8u)) & 255u; }
#elif defined(KN_F16)
T load(uint i) { return HALF_LOAD(a, i); }
#else
T load(uint i) { return a[i]; }
#endif

// the float16 bits of x (through float32 like the CPU's kn_set_f64)
uint to_f16(T x) {
#if defined(KN_F64)
  return f32_to_f16(float(x));
#elif defined(KN_F16) || !(defined(KN_I64) || defined(KN_I32) || defined(KN_BOOL))
  return f32_to_f16(x);
#else
  return f32_to_f16(float(double(x)));
#endif
}

// x as int64_t like the CPU's f2i (integer sources convert exactly)
int64_t to_i64(T x) {
#if defined(KN_I64) || defined(KN_I32) || defined(KN_BOOL)
  return int64_t(x);
#else
  double d = double(x);
  if (d != d) return 0l;
  if (d >= 9.2233720368547758e18) return 0x7fffffffffffffffl;
  if (d <= -9.2233720368547758e18) return -0x7fffffffffffffffl - 1l;
  return int64_t(d);
#endif
}

// the float64 bits of x; a float32 NaN keeps its sign and payload and is quieted, as
// the CPU's float → double conversion does (some drivers return one positive NaN)
uvec2 to_f64_bits(T x) {
#if defined(KN_F16) || !(defined(KN_I64) || defined(KN_I32) || defined(KN_BOOL) || defined(KN_F64))
  if (isnan(x)) {
    uint b = floatBitsToUint(x), mant = b & 0x7fffffu;
    return uvec2((mant & 7u) << 29, (b & 0x80000000u) | 0x7ff80000u | (mant >> 3));
  }
#endif
  return unpackDouble2x32(double(x));
}

void main() {
  uint words = (pc.n + 3u) / 4u;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
    uint packed = 0u, halves[2] = uint[2](0u, 0u);
    for (uint j = 0u; j < 4u; j++) {
      uint i = w * 4u + j;
      if (i >= pc.n) break;
      T x = load(i);
      if (DST == 0u) {
        if (x != T(0) || x != x) packed |= 1u << (j * 8u);
      } else if (DST == 1u) {
        c[i] = uint(to_i64(x) & 0xffffffffl);
      } else if (DST == 2u) {
        int64_t v = to_i64(x);
        c[2u * i] = uint(v & 0xffffffffl);
        c[2u * i + 1u] = uint(v >> 32);
      } else if (DST == 3u) {
        halves[j >> 1] |= to_f16(x) << ((j & 1u) * 16u);
      } else if (DST == 4u) {
        c[i] = floatBitsToUint(float(x));
      } else {
        uvec2 bits = to_f64_bits(x);
        c[2u * i] = bits.x;
        c[2u * i + 1u] = bits.y;
      }
    }
    if (DST == 0u) c[w] = packed;
    if (DST == 3u) {
      c[2u * w] = halves[0];
      if (w * 4u + 2u < pc.n) c[2u * w + 1u] = halves[1];
    }
  }
}
