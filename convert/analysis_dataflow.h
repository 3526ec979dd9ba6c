// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_dataflow.h — private helpers of the dataflow solvers (liveness, reaching
 * definitions): bit macros and per-CFG activity as universe indices.
 */
#ifndef STAGD_CONVERT_ANALYSIS_DATAFLOW_H
#define STAGD_CONVERT_ANALYSIS_DATAFLOW_H

#include "analysis_priv.h"

#define BIT_SET(b, i) ((b)[(i) >> 6] |= 1ULL << ((i)&63))
#define BIT_CLR(b, i) ((b)[(i) >> 6] &= ~(1ULL << ((i)&63)))
#define BIT_HAS(b, i) (((b)[(i) >> 6] >> ((i)&63)) & 1)

struct an_dataflow {
  int *desc_start, *desc; /* proper descendants of each universe symbol (CSR) */
  int **read, **mod, **del; /* per node: universe indices, -1 terminated */
  int **must_mod;           /* mod without the writes that may not happen */
};

/* Clears the proper descendants of every index in idx (-1 terminated). */
void an_kill_desc(const an_dataflow *d, const int *idx, uint64_t *bits);

#endif
