// SPDX-License-Identifier: Apache-2.0
/*
 * gr_pyfront.h — graph/pyfront: Python source straight to the graph IR, in the daemon
 * (Myia's front end, issue 27; docs/pyfront.md states the subset and its diagnostics).
 *
 * The source is parsed by convert/ (the CPython 3.12 parser) and analysed there (scopes,
 * CFGs, reaching definitions, liveness); this library walks the AST of the functions the
 * entry reaches and builds graphs with ir/'s constructors — no S-expression text in
 * between — so every node carries the .py file's line and column and the Python name
 * it was bound to. Nothing is executed: module-level code other than defs, imports and
 * constants is not run, and using a name it binds is a located error.
 *
 *   pf_module.c  the entry point, the module's names, functions lowered on demand
 *   pf_names.c   name resolution: locals, closures (and their rules), globals, builtins
 *   pf_stmt.c    statements and blocks: assignment, if (structured or continuation),
 *                return/break/continue, assert, raise, nested defs
 *   pf_loop.c    while and for (range, tuples, tensors, enumerate, zip) as `while`
 *   pf_expr.c    expressions: operators, comparisons, and/or, calls, subscripts
 *   pf_lib.c     builtins and the numpy / stagd / math spellings of the primitives
 *
 * Prefix: gr_pyfront_ (public), pf_ (private).
 */
#ifndef STAGD_GRAPH_PYFRONT_GR_PYFRONT_H
#define STAGD_GRAPH_PYFRONT_GR_PYFRONT_H

#include <stdint.h>

#include "gr_ir.h"

typedef struct gr_pyfront_options {
  const char *entry; /* the function to stage; NULL → the last module-level def */
  /* Parameters of the entry bound to constants instead of staged (the editor's static
   * arguments): names[i] takes element i of the JSON array `static_args_json`. */
  const char *const *static_names;
  int nstatic;
  const char *static_args_json;
  /* Stage the gradient of the entry instead (gr_grad_program): a new top-level graph
   * grad_ENTRY taking the entry's parameters and returning the gradient w.r.t. the
   * parameters wrt[0..nwrt) (nwrt 0 → all), built with the `grad` primitive. */
  bool grad;
  const int32_t *wrt;
  int nwrt;
} gr_pyfront_options;

/* Lowers the functions of the Python module `src` that the entry reaches into m (whose
 * file names the .py file) and sets *entry. Errors are located in the source:
 * SG_INVALID_ARGUMENT for syntax errors, unknown names and constructs outside the
 * subset (the latter with reason SG_REASON_UNSUPPORTED and the construct named),
 * SG_RESOURCE_EXHAUSTED past the node limit. (grad f i ...) applies stay for ad/. */
sg_code gr_pyfront_lower(gr_module *m, const char *src, size_t len, const gr_pyfront_options *opts,
                         gr_graph **entry, sg_error *err);

#endif /* STAGD_GRAPH_PYFRONT_GR_PYFRONT_H */
