// cast.comp — converts n elements to another dtype (NumPy astype: float → int
// truncates toward zero, anything → bool is "!= 0", NaN → bool is true). The source
// type is chosen at build time (float32 default, -DKN_F64, -DKN_I32, -DKN_I64,
// -DKN_BOOL, -DKN_F16), the destination by specialization constant 1 (kn_dtype
// numbering: 0 bool, 1 int32, 2 int64, 3 float16, 4 float32, 5 float64). Bools (bytes)
// and halves are addressed inside 32-bit words, so no 8/16-bit storage is needed; each
// invocation converts 4 elements, so a bool result is one whole word and a float16
// result two. Halves convert bit by bit like the CPU (kn_f16_to_f32, kn_f32_to_f16:
// round to nearest even, subnormals kept, NaN → the quiet NaN 0x7e00 | sign), other
// destinations go through float32 for float16 as on the CPU. Every variant uses double
// and int64 arithmetic (the launcher needs both).
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
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

// float32 bits → float16 bits, round to nearest even (kn_f32_to_f16)
uint f32_to_f16(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  int e = int((x >> 23) & 0xffu);
  uint mant = x & 0x7fffffu;
  if (e == 0xff) return sign | 0x7c00u | (mant != 0u ? 0x200u : 0u);
  e = e - 127 + 15;
  if (e >= 31) return sign | 0x7c00u;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000u;
    uint shift = uint(14 - e);
    uint half_ = mant >> shift;
    uint rem = mant & ((1u << shift) - 1u);
    uint mid = 1u << (shift - 1u);
    if (rem > mid || (rem == mid && (half_ & 1u) != 0u)) half_++;
    return sign | half_;
  }
  uint half_ = (uint(e) << 10) | (mant >> 13);
  uint rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half_ & 1u) != 0u)) half_++;
  return sign | half_;
}

// float16 bits → float32 (kn_f16_to_f32: exact, subnormals and NaN payloads kept)
float f16_to_f32(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint mant = h & 0x3ffu;
  uint x;
  if (e == 0u) {
    if (mant == 0u) {
      x = sign;
    } else {
      int k = -1;
      do {
        k++;
        mant <<= 1;
      } while ((mant & 0x400u) == 0u);
      x = sign | (uint(127 - 15 - k) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (e == 31u) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((e - 15u + 127u) << 23) | (mant << 13);
  }
  return uintBitsToFloat(x);
}

#if defined(KN_BOOL)
T load(uint i) { return (a[i >> 2] >> ((i & 3u) * 8u)) & 255u; }
#elif defined(KN_F16)
T load(uint i) { return f16_to_f32((a[i >> 1] >> ((i & 1u) * 16u)) & 0xffffu); }
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
        c[i] = uint(int(x));
      } else if (DST == 2u) {
        int64_t v = int64_t(x);
        c[2u * i] = uint(v & 0xffffffffl);
        c[2u * i + 1u] = uint(v >> 32);
      } else if (DST == 3u) {
        halves[j >> 1] |= to_f16(x) << ((j & 1u) * 16u);
      } else if (DST == 4u) {
        c[i] = floatBitsToUint(float(x));
      } else {
        uvec2 bits = unpackDouble2x32(double(x));
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
