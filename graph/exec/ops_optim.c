// SPDX-License-Identifier: Apache-2.0
/*
 * ops_optim.c — optimizer-step primitives (the rows of ir/ops.c of family OPTIM,
 * flagged GR_OP_NOGRAD: AD passes no gradient through an update), so a
 * whole training loop is one staged graph (AutoGraph "Model and Loop in Graph"):
 *   (sgd_momentum W V G LR MU)            → (tuple W' V')
 *       V' = MU*V + G,  W' = W - LR*V'
 *   (adam W M V G T LR [B1 [B2 [EPS]]])   → (tuple W' M' V')   (T: 1-based step)
 *       M' = B1*M + (1-B1)*G,  V' = B2*V + (1-B2)*G*G,
 *       W' = W - LR * (M'/(1-B1^T)) / (sqrt(V'/(1-B2^T)) + EPS)
 *       defaults B1 0.9, B2 0.999, EPS 1e-8 (Kingma & Ba)
 * W, V, M, G are numbers or tensors (broadcasting like +); hyperparameters numbers.
 */
#include <math.h>

#include "ops_cpu.h"

/* One elementwise step r = OP(a, b) (owned result) on the request's backend: the chain
 * below serves the CPU and, through gr_prim, the Vulkan executor (exec_vulkan_adjoint.c). */
static sg_code bin(gr_ctx *ctx, const char *name, gr_val a, gr_val b, gr_val *out, sg_error *err) {
  gr_val args[2] = {a, b};
  return gr_prim(ctx, gr_op_lookup(name), args, 2, out, err);
}

static sg_code scalar_arg(const gr_op *op, const gr_val *v, double *out, sg_error *err) {
  if (v->tag == GV_FLOAT) *out = v->u.f;
  else if (v->tag == GV_INT) *out = (double)v->u.i;
  else if (v->tag == GV_TENSOR && v->u.t->size == 1) *out = kn_get_f64(v->u.t, 0);
  else return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: expected a number hyperparameter, got a %s",
                           op->name, gv_type_name(v));
  return SG_OK;
}

/* t_k of a chain of steps; each step's inputs are released when no longer needed */
#define STEP(dst, name, a, b) \
  do { if ((rc = bin(ctx, name, a, b, &(dst), err))) goto out; } while (0)

static sg_code sgd_momentum(gr_ctx *ctx, const gr_op *op, gr_val *args, gr_val *out, sg_error *err) {
  double lr = 0, mu = 0;
  if (scalar_arg(op, &args[3], &lr, err) || scalar_arg(op, &args[4], &mu, err)) return err->code;
  gr_val t1 = gv_none(), v2 = gv_none(), t2 = gv_none(), w2 = gv_none();
  sg_code rc;
  STEP(t1, "*", args[1], gv_float(mu));
  STEP(v2, "+", t1, args[2]);
  STEP(t2, "*", v2, gv_float(lr));
  STEP(w2, "-", args[0], t2);
  *out = gv_tuple_new(2);
  out->u.o->depth = 1;
  out->u.o->items[0] = w2;
  out->u.o->items[1] = v2;
  w2 = v2 = gv_none();
out:
  gv_release(t1);
  gv_release(t2);
  gv_release(v2);
  gv_release(w2);
  return rc;
}

static sg_code adam(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  double t = 0, lr = 0, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  if (scalar_arg(op, &args[4], &t, err) || scalar_arg(op, &args[5], &lr, err) ||
      (n > 6 && scalar_arg(op, &args[6], &b1, err)) || (n > 7 && scalar_arg(op, &args[7], &b2, err)) ||
      (n > 8 && scalar_arg(op, &args[8], &eps, err)))
    return err->code;
  gr_val tmp[10];
  for (int i = 0; i < 10; i++) tmp[i] = gv_none();
  gr_val m2 = gv_none(), v2 = gv_none(), w2 = gv_none();
  sg_code rc;
  gr_val g = args[3];
  STEP(tmp[0], "*", args[1], gv_float(b1));
  STEP(tmp[1], "*", g, gv_float(1 - b1));
  STEP(m2, "+", tmp[0], tmp[1]);
  STEP(tmp[2], "*", g, g);
  STEP(tmp[3], "*", tmp[2], gv_float(1 - b2));
  STEP(tmp[4], "*", args[2], gv_float(b2));
  STEP(v2, "+", tmp[4], tmp[3]);
  STEP(tmp[5], "/", v2, gv_float(1 - pow(b2, t)));
  if ((rc = gr_prim(ctx, gr_op_lookup("sqrt"), &tmp[5], 1, &tmp[6], err))) goto out;
  STEP(tmp[7], "+", tmp[6], gv_float(eps));
  STEP(tmp[8], "*", m2, gv_float(lr / (1 - pow(b1, t))));
  STEP(tmp[9], "/", tmp[8], tmp[7]);
  STEP(w2, "-", args[0], tmp[9]);
  *out = gv_tuple_new(3);
  out->u.o->depth = 1;
  out->u.o->items[0] = w2;
  out->u.o->items[1] = m2;
  out->u.o->items[2] = v2;
  w2 = m2 = v2 = gv_none();
out:
  for (int i = 0; i < 10; i++) gv_release(tmp[i]);
  gv_release(m2);
  gv_release(v2);
  gv_release(w2);
  return rc;
}

sg_code gr_cpu_optim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  return op->code == 0 ? sgd_momentum(ctx, op, args, out, err) : adam(ctx, op, args, n, out, err);
}
