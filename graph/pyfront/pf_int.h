// SPDX-License-Identifier: Apache-2.0
/*
 * pf_int.h — private to graph/pyfront: the state of one lowering.
 *
 * A Python function is lowered into its graph with a *cursor*: the graph where nodes go
 * now and the current SSA binding of every local variable (an array indexed by the
 * variable's slot). Control flow moves the cursor:
 *   - an `if` without jumps is *structured*: each branch is a branch graph returning the
 *     tuple of the variables it may change that are live afterwards (the analyses'
 *     control-flow state), and the cursor rebinds them from the `if` (a phi);
 *   - an `if` with a jump in it (return, raise, or break/continue of the loop it is in)
 *     ends the current graph's computation: a branch that jumps ends it itself (with
 *     the frame's value). When the other branch always falls through, what follows the
 *     `if` is lowered inside that branch graph (the cursor moves there). When both may
 *     fall through (*flag form*), each branch returns (tuple JUMPED VALUE state...) and
 *     what follows runs in the else branch of `(if JUMPED VALUE ...)`. Every graph is
 *     thus a function's, a loop's or a zero-parameter `if` branch (inlinable, and what
 *     AD transforms as branches, also in recursive functions);
 *   - a loop is the `while` primitive over a state tuple (the loop's control-flow state,
 *     plus a break flag, a return flag and the returned value when the body has those
 *     jumps); every graph of the body computes the next state.
 * A *frame* is what ends a graph's computation: the function (its return value) or a
 * loop body (the next state).
 */
#ifndef STAGD_GRAPH_PYFRONT_PF_INT_H
#define STAGD_GRAPH_PYFRONT_PF_INT_H

#include <stdbool.h>

#include "analysis.h"
#include "gr_pyfront.h"
#include "py.h"

#define PF_MAX_DEPTH 1000 /* nesting of expressions and functions (an error beyond) */

typedef struct pf_module pf_module;
typedef struct pf_fn pf_fn;

/* A module-level name and what binds it. */
typedef enum pf_gkind {
  PF_G_FUNC,   /* one def */
  PF_G_CONST,  /* one assignment of a constant expression */
  PF_G_IMPORT, /* one import: `what` is the module or "module.name" */
  PF_G_OTHER,  /* bound by a statement the daemon does not run (class, call, ...) */
  PF_G_MULTI,  /* bound more than once */
} pf_gkind;

typedef struct pf_global {
  pf_gkind kind;
  const char *name; /* interned in the parse's names */
  const py_stmt *at; /* the (first) binding statement */
  const char *what;  /* IMPORT */
  const py_expr *value; /* CONST */
  const void *fnode;    /* FUNC: the FunctionDef, or the Lambda of `name = lambda ...` */
  pf_fn *fn;            /* FUNC, once declared */
  bool evaluating;      /* CONST: a cycle guard */
} pf_global;

/* A Python function (def or lambda) being lowered. */
struct pf_fn {
  pf_module *M;
  pf_fn *parent;              /* the enclosing Python function; NULL at module level */
  gr_node **parent_env;       /* the enclosing function's bindings where this one is defined */
  int parent_nenv;
  const py_stmt *parent_stmt; /* the enclosing function's statement holding the definition */
  const py_seq *parent_block; /* the block holding parent_stmt and its index there */
  int parent_index;
  bool have_defconsts;        /* defconsts is computed */
  sg_map defconsts;           /* symbol + 1 → the one FunctionDef that binds it, when
                                 nothing else does (a def-bound name: a fixed graph) */
  const void *node;           /* FunctionDef or Lambda */
  const py_arguments *args;
  const py_scope *scope;
  gr_graph *graph;
  const char *name;     /* interned in m->strings */
  sg_map slots;         /* parse-interned name → slot + 1 */
  const char **slot_names;
  int nslots, cap_slots;
  bool lowered, queued;
  /* the capture rules (pf_names.c): symbols some write may change after the statement
   * parent_stmt, computed on first use (a search over the enclosing function's CFG) */
  bool have_later_writes;
  py_symset later_writes;
  int line, col; /* 1-based */
};

/* What ends a graph's computation (pf_stmt.c: pf_finish). */
typedef enum pf_jump { PF_FALL, PF_RETURN, PF_BREAK, PF_CONTINUE } pf_jump;

typedef struct pf_frame {
  bool loop;
  struct pf_frame *outer;
  const int *state; /* loop: slots of the state tuple, in order */
  int nstate;
  int brk, ret, retval; /* loop: synthetic slots, -1 when the body has no such jump */
} pf_frame;

typedef struct pf_cur {
  pf_fn *F;
  gr_graph *g;
  gr_node **env; /* [nenv] bindings by slot (NULL: unbound); grown with the function */
  int nenv, cap;
  pf_frame *frame;
  const py_stmt *stmt;             /* the statement being lowered */
  const py_seq *blk;               /* the block it is in, and its index */
  int blk_i;
  bool module_scope;               /* a module constant's expression: module names only */
  /* >= 0: the graph is a branch of a flag-form if threading the wrap_vars[0..wrap)
   * slots: ending the frame gives (tuple true VALUE state...) (pf_end_frame) */
  int wrap;
  const int *wrap_vars;
  SG_VEC(gr_node *) effects;       /* nodes that may have effects, in program order */
  bool done;                       /* the graph's output is set: what follows is dead */
} pf_cur;

struct pf_module {
  gr_module *m;
  sg_error *err;
  const gr_pyfront_options *opts;
  py_ctx ctx;
  py_mod *mod;
  py_an *an;
  sg_map globals; /* parse-interned name → pf_global* */
  SG_VEC(pf_fn *) work; /* module-level functions declared, to lower */
  SG_VEC(pf_fn *) fns;  /* every pf_fn, freed at the end */
  sg_map nested;    /* a nested FunctionDef → its pf_fn (declared early for forward calls) */
  sg_map by_graph;  /* gr_graph* → pf_fn* (keyword arguments of known functions) */
  sg_arena tmp;     /* bindings arrays: freed when the lowering ends */
  const py_stmt *star_import; /* a module-level `from M import *` */
  int depth;
};

/* ------------------------------------------------------------- pf_module.c */
/* A located error; `unsupported` adds the reason SG_REASON_UNSUPPORTED. line 1-based,
 * col0 0-based (Python's col_offset). Returns the code. */
sg_code pf_error(pf_module *M, bool unsupported, sg_code code, int line, int col0, const char *fmt, ...)
    SG_PRINTF(6, 7);
#define PF_UNSUPPORTED(M, at, ...) pf_error((M), true, SG_INVALID_ARGUMENT, (at)->lineno, (at)->col_offset, __VA_ARGS__)
#define PF_INVALID(M, at, ...) pf_error((M), false, SG_INVALID_ARGUMENT, (at)->lineno, (at)->col_offset, __VA_ARGS__)
bool pf_failed(const pf_module *M);
const char *pf_intern(pf_module *M, const char *s); /* into m->strings */
/* The pf_fn of a module-level def (declared on first use, lowered from the work list). */
pf_fn *pf_global_fn(pf_module *M, pf_global *gl);
pf_global *pf_global_of(pf_module *M, const char *name);

/* --------------------------------------------------------------- pf_names.c */
pf_fn *pf_fn_new(pf_module *M, pf_fn *parent, const void *node, const char *name, gr_graph *parent_graph);
/* The pf_fn of a nested def of P (made on first use: a closure may call it before its
 * statement is lowered). */
pf_fn *pf_nested_fn(pf_module *M, pf_fn *P, const py_stmt *def);
int pf_slot(pf_fn *F, const char *name); /* the slot of a local, adding it; -1 never */
int pf_slot_find(const pf_fn *F, const char *name); /* -1 when not a local */
int pf_slot_synthetic(pf_fn *F, const char *what); /* a fresh slot no Python name uses */
/* What a Name load refers to. */
typedef enum pf_ref_kind { PF_REF_NODE, PF_REF_GLOBAL, PF_REF_BUILTIN } pf_ref_kind;
typedef struct pf_ref {
  pf_ref_kind kind;
  gr_node *node;     /* NODE: a local's or captured binding (a constant node is copied) */
  pf_global *global; /* GLOBAL */
  const char *name;  /* BUILTIN */
} pf_ref;
/* Resolves `name` (a Name load at `at`) in the cursor's function: a local (definitely
 * assigned here), a variable of an enclosing function (the capture rules), a module
 * name or a builtin. False after a located error. */
bool pf_resolve(pf_cur *c, const py_expr *at, const char *name, pf_ref *out);
void pf_bind(pf_cur *c, int slot, gr_node *n); /* names the node after the variable */

/* ---------------------------------------------------------------- pf_stmt.c */
void pf_cur_init(pf_cur *c, pf_fn *F, gr_graph *g, gr_node **env, int nenv, pf_frame *frame);
void pf_cur_free(pf_cur *c);
gr_node **pf_env_copy(pf_cur *c); /* the bindings, in the module's arena */
void pf_env_sync(pf_cur *c);      /* grows env to the function's slot count */
/* Lowers the body of F (its graph's parameters are made here). */
sg_code pf_lower_function(pf_fn *F);
/* Statements into the cursor, which may move into continuation graphs; stops when the
 * cursor is done. */
sg_code pf_lower_stmts(pf_cur *c, const py_seq *stmts);
/* Ends the cursor's graph: the frame's value for jump j (RETURN: value). */
void pf_finish(pf_cur *c, pf_jump j, gr_node *value, const void *at);
/* Ends the frame with its value (the return value, a loop's next state) in the
 * cursor's graph, wrapped as a flag-form if's branch needs it (pf_stmt.c). */
void pf_end_frame(pf_cur *c, gr_node *value, const void *at);
/* Sets g's output to out, after the cursor's effects (seq). */
void pf_set_output(pf_cur *c, gr_node *out, const void *at);
/* An apply in the cursor's graph located at the AST node at (line/col of a py_expr or
 * py_stmt: both start with kind, lineno, col_offset); NULL after the node-limit error.
 * Applies that may have effects join the cursor's effects. */
gr_node *pf_apply(pf_cur *c, gr_node **in, int n, const void *at);
gr_node *pf_prim(pf_cur *c, const char *op, const void *at);
gr_node *pf_call_prim(pf_cur *c, const char *op, gr_node **args, int n, const void *at);
gr_node *pf_const(pf_cur *c, gr_val v, const void *at);
gr_node *pf_graph_const(pf_cur *c, gr_graph *g, const void *at);
gr_node *pf_none(pf_cur *c, const void *at);
gr_node *pf_located(gr_node *n, const void *at);
/* A branch graph of `if` (zero parameters, nested in the cursor's graph). */
gr_graph *pf_branch_graph(pf_cur *c, const char *what, const void *at);
/* (if COND THEN ELSE) where each branch only computes one value: lowered by `branch`
 * into a branch cursor (pf_expr.c uses it for and/or, conditional expressions). */
typedef gr_node *(*pf_branch_fn)(pf_cur *c, void *arg);
gr_node *pf_if_value(pf_cur *c, gr_node *cond, pf_branch_fn then_fn, void *then_arg, pf_branch_fn else_fn,
                     void *else_arg, const void *at);
/* Binds target (Name, Tuple or List of targets) to value. */
sg_code pf_assign(pf_cur *c, const py_expr *target, gr_node *value);
/* Does the block contain a jump out of it: return/raise anywhere (not in nested
 * functions), break/continue outside nested loops (loop_jumps). */
bool pf_block_jumps(const py_seq *stmts, bool loop_jumps);
bool pf_has_return(const py_seq *stmts);
bool pf_has_break(const py_seq *stmts);
/* The locals of `set` (analysis symbols) as slots of the cursor's function. */
int pf_state_slots(pf_cur *c, py_symset set, int **out);
/* Structured if / continuation if from explicit parts (pf_loop.c: a loop's else). */
sg_code pf_lower_if_parts(pf_cur *c, gr_node *cond, const py_seq *then_b, const py_seq *else_b, py_symset state,
                          const void *at);

/* ---------------------------------------------------------------- pf_loop.c */
sg_code pf_lower_while(pf_cur *c, const py_stmt *s);
sg_code pf_lower_for(pf_cur *c, const py_stmt *s);

/* ---------------------------------------------------------------- pf_expr.c */
gr_node *pf_expr(pf_cur *c, const py_expr *e);
/* A nested function value (def or lambda): its graph, lowered now. */
gr_graph *pf_nested_function(pf_cur *c, const void *node, const char *name, pf_fn **out);
/* The value of calling callee (already lowered) with positional args. */
gr_node *pf_binop(pf_cur *c, py_operator op, gr_node *a, gr_node *b, const void *at);
gr_node *pf_call_value(pf_cur *c, gr_node *callee, gr_node **args, int n, const void *at);
/* Truth value of x as Python's bool(x) (an `if`), for `not`, and/or. */
gr_node *pf_truth(pf_cur *c, gr_node *x, bool negate, const void *at);

/* ----------------------------------------------------------------- pf_lib.c */
/* A call of something that is not a value: a builtin, a module's function or a method
 * of a value (x.sum(...)). *handled false when func is none of those. */
gr_node *pf_lib_call(pf_cur *c, const py_expr *call, bool *handled);
/* A module attribute or builtin used as a value (np.pi, np.float32, stagd.exp);
 * *handled false when it is none. */
gr_node *pf_lib_value(pf_cur *c, const py_expr *e, bool *handled);
/* x.attr of a value (x.shape, x.T, x.ndim, x.size); NULL after an error. */
gr_node *pf_lib_attribute(pf_cur *c, const py_expr *e, gr_node *x);
/* The dotted module path an Attribute chain / Name denotes ("numpy.linalg"), or NULL. */
const char *pf_module_path(pf_cur *c, const py_expr *e, sg_buf *tmp);

#endif /* STAGD_GRAPH_PYFRONT_PF_INT_H */
