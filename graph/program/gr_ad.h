/*
 * gr_ad.h — the public entry of reverse-mode AD for callers outside graph/ (the Grad
 * RPC): stage the gradient of a staged program's def as a new program.
 */
#ifndef STAGD_GRAPH_GR_AD_H
#define STAGD_GRAPH_GR_AD_H

#include <stddef.h>
#include <stdint.h>

#include "gr.h"

/* Stages a new program whose entry `grad_NAME` takes NAME's parameters and returns
 * the gradient of NAME (a def of p; NULL → p's entry) w.r.t. parameters wrt[0..nwrt)
 * (nwrt 0 → all), a tuple when more than one. Errors: SG_INVALID_ARGUMENT (unknown
 * def, index out of range, non-differentiable primitive), SG_UNIMPLEMENTED (forms AD
 * does not handle yet), located in the program's sexpr dump. */
sg_code gr_grad_program(gr_program *p, const char *entry, const int32_t *wrt, size_t nwrt,
                        bool no_optimize, gr_program **out, sg_error *err);

#endif /* STAGD_GRAPH_GR_AD_H */
