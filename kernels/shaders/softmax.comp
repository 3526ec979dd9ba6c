// softmax.comp — softmax along the last axis of a [rows, cols] float32 view: one
// workgroup per row (grid-stride), max-subtracted for stability, shared-memory trees.
#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint rows, cols; } pc;

shared float partial[gl_WorkGroupSize.x];

float tree(bool is_max, float v) {
  uint tid = gl_LocalInvocationID.x;
  partial[tid] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
    if (tid < s)
      partial[tid] = is_max ? max(partial[tid], partial[tid + s]) : partial[tid] + partial[tid + s];
    barrier();
  }
  float r = partial[0];
  barrier();
  return r;
}

void main() {
  uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < pc.rows; row += gl_NumWorkGroups.x) {
    uint base = row * pc.cols;
    float m = uintBitsToFloat(0xff800000u);
    for (uint k = tid; k < pc.cols; k += gl_WorkGroupSize.x) m = max(m, a[base + k]);
    m = tree(true, m);
    float s = 0.0;
    for (uint k = tid; k < pc.cols; k += gl_WorkGroupSize.x) s += exp(a[base + k] - m);
    s = tree(false, s);
    float inv = 1.0 / s;
    for (uint k = tid; k < pc.cols; k += gl_WorkGroupSize.x)
      c[base + k] = exp(a[base + k] - m) * inv;
  }
}
