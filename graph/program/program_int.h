// SPDX-License-Identifier: Apache-2.0
/*
 * program_int.h — private to graph/program: the subsystems it assembles into the
 * public API (gr.h), and the boxed value behind gr_value.
 */
#ifndef STAGD_GRAPH_PROGRAM_INT_H
#define STAGD_GRAPH_PROGRAM_INT_H

#include "gr.h"
#include "gr_ad.h"
#include "gr_exec.h"
#include "gr_infer.h"
#include "gr_ir.h"
#include "gr_opt.h"
#include "gr_pyfront.h"
#include "gr_vulkan.h"

/* A boxed value (gr.h gr_value; eager.c): shared by the daemon's handles. */
struct gr_value {
  atomic_int rc;
  gr_val v;
};

/* gr_stage_python, staging the gradient of the entry w.r.t. wrt[0..nwrt) (nwrt 0: all)
 * instead when wrt is not NULL (pyfront's grad wrapper). */
sg_code gr_stage_python_grad(const char *src, size_t len, const char *filename, const gr_stage_options *opts,
                             const int32_t *wrt, size_t nwrt, gr_program **out, sg_error *err);
/* The Python source p was staged from (not for its gradient or static-argument
 * programs); false for S-expression programs. */
bool gr_program_python_source(const gr_program *p, const char **src, size_t *len, const char **entry,
                              const char **file);

#endif /* STAGD_GRAPH_PROGRAM_INT_H */
