// SPDX-License-Identifier: Apache-2.0
/*
 * gr_ad.h — graph/ad: Myia-style reverse-mode automatic differentiation on the IR
 * (docs/ad.md). Each (grad f i ...) apply is replaced by a constant gradient graph
 * built by source transformation: forward graphs ▶F that return their value with a
 * backpropagator ◀F, through if, while, recursion and closures; grad of grad works on
 * the result. Sees the IR only; the op table's gradient column (one rule per family)
 * lives in ad_rules.c.
 *   ad.c        the transformation (forward replay, reverse sweep, adjoint accumulation)
 *   ad_rules.c  the gradient rules of the op families
 */
#ifndef STAGD_GRAPH_AD_GR_AD_H
#define STAGD_GRAPH_AD_GR_AD_H

#include "gr_ir.h"

/* Whether gradients flow through op (its family has a gradient rule; effects,
 * optimizer steps and the control forms AD handles itself have none). */
bool gr_ad_differentiable(const gr_op *op);
/* Replaces each (grad f i ...) apply of m by a constant gradient graph. */
sg_code gr_ad_expand(gr_module *m, sg_error *err);

#endif /* STAGD_GRAPH_AD_GR_AD_H */
