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
#include "gr_vulkan.h"

/* A boxed value (gr.h gr_value; eager.c): shared by the daemon's handles. */
struct gr_value {
  atomic_int rc;
  gr_val v;
};

#endif /* STAGD_GRAPH_PROGRAM_INT_H */
