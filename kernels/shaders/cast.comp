// cast.comp — converts n elements to another dtype (NumPy astype: float → int
// truncates toward zero, anything → bool is "!= 0", NaN → bool is true). The source
// type is chosen at build time (float32 default, -DKN_F64, -DKN_I32, -DKN_I64,
// -DKN_BOOL), the destination by specialization constant 1 (kn_dtype numbering:
// 0 bool, 1 int32, 2 int64, 4 float32, 5 float64). The output is addressed as 32-bit
// words; each invocation converts 4 elements, so a bool result is one whole word.
// Every variant uses double and int64 arithmetic (the launcher needs both).
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if defined(KN_I64)
#define T int64_t
#elif defined(KN_I32)
#define T int
#elif defined(KN_F64)
#define T double
#elif defined(KN_BOOL)
#define T uint
#else
#define T float
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DST = 4;
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) writeonly buffer C { uint c[]; };
layout(push_constant) uniform P { uint n; } pc;

#ifdef KN_BOOL
T load(uint i) { return (a[i >> 2] >> ((i & 3u) * 8u)) & 255u; }
#else
T load(uint i) { return a[i]; }
#endif

void main() {
  uint words = (pc.n + 3u) / 4u;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
    uint packed = 0u;
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
      } else if (DST == 4u) {
        c[i] = floatBitsToUint(float(x));
      } else {
        uvec2 bits = unpackDouble2x32(double(x));
        c[2u * i] = bits.x;
        c[2u * i + 1u] = bits.y;
      }
    }
    if (DST == 0u) c[w] = packed;
  }
}
