// SPDX-License-Identifier: Apache-2.0
// half.glsl — float16 bits ↔ float32, bit for bit like the CPU (kn_f16_to_f32,
// kn_f32_to_f16: round to nearest even, subnormals kept, NaN → the quiet NaN
// 0x7e00 | sign), and halves addressed inside 32-bit words, so kernels read and write
// float16 tensors with neither 16-bit storage nor float16 arithmetic: the cast kernel
// and the float16 variants of binary/unary/compare (-DKN_F16), which compute in float32
// between the two conversions as NumPy does for float16 ufuncs. The conversions are
// software rather than OpFConvert: rounding and subnormal handling of the native
// conversion are implementation-defined without the float-controls features.

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

// float16 bits → float32 (kn_f16_to_f32: exact, subnormals and NaN payloads kept),
// without branches or loops: a subnormal's value is mant * 2^-24, exact in float32
float f16_to_f32(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint mant = h & 0x3ffu;
  uint normal = e == 31u ? 0x7f800000u | (mant << 13) : ((e + 112u) << 23) | (mant << 13);
  uint sub = floatBitsToUint(float(mant) * 5.9604644775390625e-8);
  return uintBitsToFloat(sign | (e == 0u ? sub : normal));
}

// element i of a float16 tensor held in 32-bit words, as float32
#define HALF_LOAD(buf, i) f16_to_f32(((buf)[(i) >> 1] >> (((i) & 1u) * 16u)) & 0xffffu)
// two float32 results rounded to halves and packed into one word (lo: the even element)
uint half_pack(float lo, float hi) { return f32_to_f16(lo) | (f32_to_f16(hi) << 16); }
