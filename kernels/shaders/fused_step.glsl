// SPDX-License-Identifier: Apache-2.0
// fused_step.glsl — one step of a chain of float32 elementwise ops, shared by fused.comp
// (a whole chain in one kernel) and the float32 matmul kernels' epilogues
// (epilogue.glsl). A step's code is
//   op (bits 0-3: kn_vk_unop, or kn_vk_binop with bit 4 set) | a << 5 | b << 10,
// an operand being 0 (the previous step's value), 1..7 (an input buffer at the element's
// index) or 8 + k (push-constant scalar k): the includer defines fused_load(src, i, prev)
// that reads them, and a push block `pc` with zero_a and zero_b (0 at run time), after
// unary_ops.glsl and binary_ops.glsl with T float and KN_F32.
// A step computes with the unary and binary kernels' own element functions on operands
// read through opaque(): an XOR with a push constant that is 0 at run time but unknown
// to the compiler — one for first operands, another for second ones. So no optimisation
// reaches across steps (a product fused into the next step's sum, log(1 / x) rewritten
// as -log(x)), and the two operands of a step are never known to be equal (t - t folded
// to 0, wrong for NaN and infinity): each step compiles as in its own kernel, whose
// operands come from memory, and every element gets the bits the ops give one by one.
float fused_load(uint src, uint i, float prev);

float opaque(float v, uint mask) { return uintBitsToFloat(floatBitsToUint(v) ^ mask); }

float fused_step(uint code, uint i, float prev) {
  float a = opaque(fused_load((code >> 5) & 31u, i, prev), pc.zero_a);
  if ((code & 16u) == 0u) return unary_apply(code & 15u, a);
  return binary_apply(code & 15u, a, opaque(fused_load((code >> 10) & 31u, i, prev), pc.zero_b));
}
