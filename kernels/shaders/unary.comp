// unary.comp — float32 elementwise unary ops over n contiguous elements. The op is a
// specialization constant (one straight-line pipeline per op).
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint n; } pc;

float apply(uint op, float x) {
  switch (op) {
  case 0u: return -x;
  case 1u: return exp(x);
  case 2u: return log(x);
  case 3u: {
    // tanh via exp of a negative argument: no overflow for large |x|
    float e = exp(-2.0 * abs(x));
    return sign(x) * (1.0 - e) / (1.0 + e);
  }
  case 4u: return max(x, 0.0);
  case 5u: return sqrt(x);
  case 6u: return abs(x);
  case 7u: return 1.0 / (1.0 + exp(-x));
  case 8u: return x * x;
  default: return 1.0 / x;
  }
}

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
    c[i] = apply(OP, a[i]);
}
