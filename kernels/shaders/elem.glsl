// SPDX-License-Identifier: Apache-2.0
// elem.glsl — element access of the copy kernels (strided_copy, gather, where), which
// move elements as bits: E-typed words for 4-byte (uint) and 8-byte (uvec2, -DKN_8BYTE)
// elements, and 1-byte (-DKN_1BYTE: bool) or 2-byte (-DKN_2BYTE: float16) elements
// packed in 32-bit words, read by shifting and written with atomicAnd/atomicOr on their
// own bits only, so invocations (and concat's dispatches) writing neighbours in one word
// never lose each other's elements. WO qualifies an output buffer: writeonly unless
// the elements are narrow (atomics read the word).
#if defined(KN_1BYTE) || defined(KN_2BYTE)
#define E uint
#define WO
#ifdef KN_1BYTE
#define EBITS 8u
#else
#define EBITS 16u
#endif
#define PER_WORD (32u / EBITS)
#define EMASK ((1u << EBITS) - 1u)
#define ELOAD(buf, i) ((buf[(i) / PER_WORD] >> (((i) % PER_WORD) * EBITS)) & EMASK)
#define ESTORE(buf, i, v)                                          \
  {                                                                \
    uint w_ = (i) / PER_WORD, sh_ = ((i) % PER_WORD) * EBITS;      \
    atomicAnd(buf[w_], ~(EMASK << sh_));                           \
    atomicOr(buf[w_], ((v) & EMASK) << sh_);                       \
  }
#else
#ifdef KN_8BYTE
#define E uvec2
#else
#define E uint
#endif
#define WO writeonly
#define ELOAD(buf, i) buf[i]
#define ESTORE(buf, i, v) buf[i] = (v)
#endif
