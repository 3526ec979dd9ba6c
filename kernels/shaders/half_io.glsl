// SPDX-License-Identifier: Apache-2.0
// half_io.glsl — the float16 element access of the reduction kernels (reduce, argmax,
// softmax with -DKN_F16): the input is halves in 32-bit words read through HALF_LOAD
// (half.glsl: exact float32 values), and a result element is rounded to nearest even
// (f32_to_f16) and written into its own 16 bits of the output word with
// atomicAnd/atomicOr, so invocations and workgroups writing the two halves of one word
// never lose each other's element. Between the two the kernels compute in float32
// exactly as their float32 variants do (same operations, same order), so a float16 run
// equals, bit for bit, casting to float32, running the float32 kernel and casting back.
// (the including shader enables GL_GOOGLE_include_directive)
#include "half.glsl"

// the element type of the input and output buffers: words of two halves
#define HALF_WORD uint
// element i of the output, v rounded to a half
#define HALF_STORE(buf, i, v)                                       \
  {                                                                 \
    uint w_ = (i) >> 1, sh_ = ((i) & 1u) * 16u;                     \
    atomicAnd(buf[w_], ~(0xffffu << sh_));                          \
    atomicOr(buf[w_], f32_to_f16(v) << sh_);                        \
  }
