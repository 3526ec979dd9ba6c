// strided_copy.comp — out[i] = in[offset + sum_d coord_d(i) * stride_d]: a gather of a
// strided view into a contiguous tensor (transpose; any permutation of up to 8 dims).
// Elements are copied as bits: 4-byte elements by default, 8-byte ones (float64,
// int64, as uvec2) with -DKN_8BYTE, so no 64-bit shader arithmetic is needed.
#version 450
layout(local_size_x_id = 0) in;
#ifdef KN_8BYTE
#define E uvec2
#else
#define E uint
#endif
layout(std430, binding = 0) readonly buffer A { E a[]; };
layout(std430, binding = 1) writeonly buffer C { E c[]; };
layout(push_constant) uniform P {
  uint n, ndim, offset, pad0;
  uint shape[8];
  uint stride[8];
} pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    uint rest = i, src = pc.offset;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
      src += (rest % pc.shape[d]) * pc.stride[d];
      rest /= pc.shape[d];
    }
    c[i] = a[src];
  }
}
