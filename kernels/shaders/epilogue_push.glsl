// SPDX-License-Identifier: Apache-2.0
// epilogue_push.glsl — the push-constant fields of a matmul kernel's elementwise
// epilogue (epilogue.glsl; launcher: kernels/vulkan/kernels_matmul.c, whose
// matmul_epi_push must match), appended to the kernel's own with EPILOGUE_PUSH; empty
// without -DKN_EPILOGUE.
#ifdef KN_EPILOGUE
#define EPILOGUE_PUSH      \
  uint zero_a, zero_b;     \
  uint emod[3], ediv[3];   \
  float es[4];
#else
#define EPILOGUE_PUSH
#endif
