// SPDX-License-Identifier: Apache-2.0
/*
 * analysis.h — the static analyses the conversion passes build on (AutoGraph §7.1),
 * over the Python 3.12 AST of py.h:
 *
 *   qualified names   a, a.b.c, a[0], a['k'], a[i] as one symbol each (py_sym)
 *   activity          per scope (module, function, lambda, comprehension, class) and
 *                     per statement: symbols read / modified / deleted, params,
 *                     global / nonlocal declarations, free names of nested scopes
 *   control flow      one statement-level CFG per module / function / class body:
 *                     no merge nodes, synthetic ENTRY and EXIT nodes, AST ↔ CFG links
 *   reaching defs     symbols definitely / possibly defined on entry to a statement,
 *                     and the definitions that reach one Name
 *   liveness          symbols live on entry to / after a statement
 *   control-flow state  what a functional if / while / for must thread (py_an_cf_state)
 *   live values       does a Name resolve to a Python builtin or an imported module?
 *
 * Usage (one analysis of one module; re-run it after a pass rewrites the tree — it is
 * linear in the size of the module):
 *
 *   py_an *an = py_an_new(&ctx);          // ctx: the py_ctx the module was parsed in
 *   py_an_module(an, mod);                // runs every analysis
 *   const py_stmt *loop = ...;            // a While of some function
 *   py_symset mod_in_body = py_an_block_activity(an, loop->v.While.body).modified;
 *   py_symset live_after  = py_an_live_out(an, loop);
 *   py_cf_state st = py_an_cf_state(an, loop);  // loop variables, and which need a
 *   ...                                          // placeholder before the loop
 *   py_an_free(an);
 *
 * Everything a query returns lives in the analysis' arena until py_an_free; the AST
 * must not change while the analysis is in use (nodes are keys of side tables, nothing
 * is written into the AST). Nodes created after py_an_module are unknown to it:
 * queries on them return empty results / NULL (qualified names work on any node).
 *
 * Conservative choices (documented in docs/analyses.md): calls are assumed to modify
 * nothing; every statement of a `try` / `with` body may raise (and a `with` may
 * swallow it); reads in a nested function or lambda count as reads at the point it is
 * defined; a write in a nested function to a `nonlocal` name is not a write of the
 * enclosing statement (see py_scope.nonlocals). Scopes are checked against CPython's
 * symtable and definite assignment against CPython's LOAD_FAST_CHECK (ctest
 * convert.analysis.symtable / convert.analysis.defs).
 *
 * Not thread-safe: one py_an per thread (queries intern new symbols).
 *
 * Prefix: py_an_ (analysis), py_cfg_ (graph), py_symset_ (symbol sets).
 */
#ifndef STAGD_CONVERT_ANALYSIS_H
#define STAGD_CONVERT_ANALYSIS_H

#include "py.h"

typedef struct py_an py_an;

/* ================================================================ symbols */

/* A symbol: a simple name or a qualified name, numbered densely per analysis (the same
 * text is the same symbol in every scope; the scope gives it meaning). */
typedef int32_t py_sym;
#define PY_SYM_NONE ((py_sym)-1)

typedef enum py_qn_kind {
  PY_QN_NAME,      /* x */
  PY_QN_ATTR,      /* parent.attr */
  PY_QN_SUBSCRIPT, /* parent[index]: index an int/str constant or a simple name */
} py_qn_kind;

typedef struct py_sym_info {
  py_qn_kind kind;
  const char *text;     /* "a.b[0]['k'][i]", interned in ctx->names */
  const char *name;     /* NAME: the identifier; ATTR: the attribute (both interned); else NULL */
  py_sym parent;        /* a.b → a, a[0] → a; PY_SYM_NONE for a NAME */
  py_sym root;          /* the NAME symbol at the bottom (itself for a NAME) */
  py_sym index_sym;     /* SUBSCRIPT by a name (a[i]): the symbol i; else PY_SYM_NONE */
  const py_expr *index; /* SUBSCRIPT: the Constant / Name used as index (first seen) */
} py_sym_info;

/* The symbol of the simple name `name` (any string; it is interned). */
py_sym py_an_sym(py_an *an, const char *name);
/* The symbol of a Name, an Attribute chain over a Name, or a Subscript by an int/str
 * constant or a simple name over such (a.b[0].c); PY_SYM_NONE for anything else
 * (f().x, a[i+1]). Works on any expression, also ones built after py_an_module. */
py_sym py_an_qn(py_an *an, const py_expr *e);
const py_sym_info *py_an_sym_info(const py_an *an, py_sym s);
const char *py_an_sym_text(const py_an *an, py_sym s); /* "a.b"; "?" for PY_SYM_NONE */
int py_an_sym_count(const py_an *an);

/* ============================================================ symbol sets */

/* An immutable set of symbols: sorted, no duplicates. An empty set may have a == NULL.
 * Sets returned by queries live in the analysis' arena. */
typedef struct py_symset {
  int n;
  const py_sym *a;
} py_symset;

bool py_symset_has(py_symset s, py_sym x); /* binary search */
py_symset py_symset_union(py_an *an, py_symset x, py_symset y);
py_symset py_symset_inter(py_an *an, py_symset x, py_symset y);
py_symset py_symset_diff(py_an *an, py_symset x, py_symset y); /* x \ y */
/* Only the simple names (drops a.b, a[0]). */
py_symset py_symset_names(py_an *an, py_symset s);
/* Appends "{a, a.b, x}" (symbols in text order) to out. */
void py_symset_format(const py_an *an, py_symset s, sg_buf *out);

/* =============================================================== running */

/* A new, empty analysis. ctx must outlive it (names are interned in ctx->names). */
py_an *py_an_new(py_ctx *ctx);
/* Runs every analysis on mod (a Module). Call at most once per py_an. */
void py_an_module(py_an *an, const py_mod *mod);
void py_an_free(py_an *an);

/* ============================================================== activity */

typedef enum py_scope_kind {
  PY_SCOPE_MODULE,
  PY_SCOPE_FUNCTION,      /* FunctionDef, AsyncFunctionDef */
  PY_SCOPE_LAMBDA,
  PY_SCOPE_COMPREHENSION, /* ListComp, SetComp, DictComp, GeneratorExp */
  PY_SCOPE_CLASS,
} py_scope_kind;

/* A lexical scope. Symbol sets hold simple names and qualified names rooted at them. */
typedef struct py_scope py_scope;
struct py_scope {
  py_scope_kind kind;
  const void *node;        /* the Module / FunctionDef / Lambda / ListComp / ClassDef ... */
  const py_scope *parent;  /* lexical parent (NULL for the module) */
  int depth;               /* 0 for the module */
  py_symset read;          /* read directly in this scope (not in nested scopes) */
  py_symset modified;      /* written directly in this scope (incl. a.b, a[0] writes) */
  py_symset deleted;       /* `del` targets in this scope */
  py_symset params;        /* parameter names (function / lambda) */
  py_symset globals;       /* `global` declarations */
  py_symset nonlocals;     /* `nonlocal` declarations */
  /* Python's local variables of the scope: simple names bound here (params, targets,
   * imports, def/class names, with/except/match/walrus targets, del) that are not
   * global/nonlocal. A walrus inside a comprehension binds in the enclosing function
   * (the comprehension lists the name in `nonlocals`, or `globals` at module level, as
   * CPython does). Checked against CPython's symtable. */
  py_symset locals;
  /* Simple names used (read or written) in this scope or nested ones that resolve
   * outside it (not local, not declared global here), plus qualified names rooted
   * at them that are read. For a class scope these are the names its body and methods
   * take from the enclosing scopes. */
  py_symset free;
  /* Names this scope or a nested one declares `global`. */
  py_symset global_uses;
};

/* The scope a Module / FunctionDef / AsyncFunctionDef / Lambda / comprehension /
 * ClassDef node opens; NULL for other nodes. */
const py_scope *py_an_scope(const py_an *an, const void *node);
/* The scope a statement or Name node appears in (the comprehension scope for a Name in
 * a comprehension's element, the enclosing scope for one in its first iterable). */
const py_scope *py_an_scope_of(const py_an *an, const void *node);

typedef struct py_activity {
  py_symset read;     /* value read (a.b read ⇒ a.b and a read; a.b = 1 reads a) */
  py_symset modified; /* (re)bound or assigned: x = , x += , for x in, with .. as x,
                         import x, def x, class x, except .. as x, case x, (x := ..),
                         a.b = , a[0] = (composites: the composite only) */
  py_symset deleted;  /* del x (also counted in modified) */
} py_activity;

/* Activity of a whole statement, compound statements including their bodies (a nested
 * def / class / lambda / comprehension contributes its definition-time reads —
 * decorators, defaults, annotations, bases, first iterable — the free names its body
 * reads, the name it binds, and a comprehension's walrus targets). Empty for unknown
 * statements. Cached per statement. */
py_activity py_an_activity(py_an *an, const py_stmt *s);
/* Union over a block (a body / orelse / finalbody sequence). */
py_activity py_an_block_activity(py_an *an, const py_seq *stmts);
/* Activity of an expression evaluated in the scope of statement `in` (test of an
 * if/while, iter of a for, ...). */
py_activity py_an_expr_activity(py_an *an, const py_expr *e, const py_stmt *in);

/* ========================================================= control flow */

typedef enum py_cfg_kind {
  PY_CFG_ENTRY,   /* ast = the Module / function / ClassDef; binds the parameters */
  PY_CFG_EXIT,    /* ast = the same; reached by return, fall-off and uncaught raise */
  PY_CFG_STMT,    /* a simple statement, a nested def/class, or a compound statement's
                     head: If/While (the test), For (next item → target; the dataflow
                     binds the target only on the edge into the body), With (the
                     items; the head and its body also lead past the with, as __exit__
                     may suppress exceptions), Try (no-op entry), Match (the
                     subject). `while True` has no exit edge from its head. */
  PY_CFG_HANDLER, /* ast = an ExceptHandler (type test, binds the `as` name) */
  PY_CFG_HANDLER_END, /* ast = an ExceptHandler with a name: Python deletes the name
                         when the handler body completes (`except E as e:`) */
  PY_CFG_CASE,    /* ast = a match_case (pattern + guard, binds the captures); every
                     case is entered from the Match head (a failed pattern binds
                     nothing), the head also falls through when no case is
                     irrefutable */
} py_cfg_kind;

typedef struct py_cfg_node py_cfg_node;
struct py_cfg_node {
  int index; /* 0..nnodes-1; ENTRY is 0, EXIT is 1, then source order */
  py_cfg_kind kind;
  const void *ast;
  py_cfg_node **next;
  int nnext;
  py_cfg_node **prev;
  int nprev;
  py_activity act; /* what this node itself reads / writes (a head: its test/target only) */
};

typedef struct py_cfg {
  const void *owner; /* the Module / FunctionDef / AsyncFunctionDef / ClassDef */
  const py_scope *scope;
  py_cfg_node *entry;
  py_cfg_node *exit;
  py_cfg_node **nodes; /* by index */
  int nnodes;
} py_cfg;

/* The CFG of a Module, FunctionDef, AsyncFunctionDef or ClassDef body; NULL otherwise
 * (lambdas and comprehensions have no statements). */
const py_cfg *py_an_cfg(const py_an *an, const void *owner);
/* The CFG node of a statement (its head for compound ones), ExceptHandler or
 * match_case; NULL if unknown. */
const py_cfg_node *py_an_cfg_node(const py_an *an, const void *ast);
/* The CFG a statement belongs to. */
const py_cfg *py_an_cfg_of(const py_an *an, const void *ast);
/* Nodes control reaches when statement s completes normally (not by return, raise, or
 * a break/continue of an enclosing loop): AutoGraph's "what follows this If / For".
 * For a loop: the orelse exit and its breaks. Empty if s cannot complete. */
int py_an_stmt_next(py_an *an, const py_stmt *s, const py_cfg_node *const **out);
/* Nodes control comes from into s's head (for a loop: from before and the back edges). */
int py_an_stmt_prev(py_an *an, const py_stmt *s, const py_cfg_node *const **out);

/* ======================================================= reaching defs */

/* Symbols definitely defined (on every path) on entry to statement s: parameters,
 * names bound on every path before s, and everything that is not local to the scope
 * (globals, free names, composites rooted at them). A composite (a.b) is listed only
 * if written on every path, or if its root is not local. Checked against CPython's
 * LOAD_FAST / LOAD_FAST_CHECK over the standard library: never "defined" where
 * CPython considers a local possibly unbound. */
py_symset py_an_defined_in(py_an *an, const py_stmt *s);
/* Definitely defined when s completes normally (intersection over its exits). */
py_symset py_an_defined_out(py_an *an, const py_stmt *s);
/* Symbols defined on at least one path on entry to s (may-defined). Local names in
 * py_an_maybe_defined_in \ py_an_defined_in are "possibly undefined" there. */
py_symset py_an_maybe_defined_in(py_an *an, const py_stmt *s);
/* The definitions that reach the Name node `name` (a Load in a statement of a CFG):
 * the CFG nodes that write its symbol, ENTRY standing for "a parameter or defined
 * outside the scope". *maybe_undefined is set when some path from ENTRY reaches the
 * name without a definition of a local name. Returns the count; *out in the arena. */
int py_an_reaching_defs(py_an *an, const py_expr *name, const py_cfg_node *const **out,
                        bool *maybe_undefined);

/* ============================================================ liveness */

/* Symbols live on entry to statement s (its head: for a loop, also what the body reads
 * before writing it, across iterations). At EXIT, globals / nonlocals / free names
 * and every composite symbol (a.b, a[0]: mutations of objects) are live. */
py_symset py_an_live_in(py_an *an, const py_stmt *s);
/* Symbols live after s completes normally (union over py_an_stmt_next). */
py_symset py_an_live_out(py_an *an, const py_stmt *s);
/* Live on entry to / exit from one CFG node. */
py_symset py_an_node_live_in(py_an *an, const py_cfg_node *n);
py_symset py_an_node_live_out(py_an *an, const py_cfg_node *n);

/* ====================================================== control-flow state */

/* What a functional form of an if / while / for must thread through (AutoGraph's
 * branch outputs and loop variables), from activity + liveness + reaching defs:
 *   If     symbols modified in the body or orelse that are live after the if;
 *   While  symbols modified by the test or the body that are live at the head (the
 *          next iteration reads them before writing) or live after the loop;
 *   For    the same with the target (the orelse runs once: it is not loop state).
 * `undefined` is the part of `state` that may be unbound on entry to the statement:
 * local names not definitely defined there, and composites (a.b) whose root is not
 * — they need a placeholder (AutoGraph's Undefined) before the functional form.
 * Globals and nonlocals the statement modifies are included in `state`; the converter
 * decides how to thread them. Empty for other statements. */
typedef struct py_cf_state {
  py_symset state;
  py_symset undefined;
} py_cf_state;
py_cf_state py_an_cf_state(py_an *an, const py_stmt *s);

/* ========================================================== live values */

typedef enum py_lv_kind {
  PY_LV_UNKNOWN, /* cannot be resolved statically (a local, a parameter, a global ...) */
  PY_LV_BUILTIN, /* a Python builtin: `what` = its name ("print") */
  PY_LV_MODULE,  /* an imported module: `what` = its dotted name ("numpy", "os.path") */
  PY_LV_IMPORTED /* `from m import x [as y]`: `what` = "m.x" */
} py_lv_kind;

typedef struct py_live_value {
  py_lv_kind kind;
  const char *what; /* interned; NULL for UNKNOWN */
} py_live_value;

/* The live value of a Name (Load) or of an attribute chain over an imported module
 * (np.linalg.norm → MODULE "numpy" is resolved for `np`; the Attribute chain gives
 * PY_LV_IMPORTED "numpy.linalg.norm"). A name is a builtin when it is in 3.12's
 * builtins and is bound nowhere it could resolve to: not in the scope of the use, not
 * in any enclosing function scope, not at module level (no assignment, import, def,
 * `global` write from any function, or `from m import *`). An imported name resolves
 * when the only binding of it in its scope is that one import. */
py_live_value py_an_live_value(py_an *an, const py_expr *e);
/* Shorthand: the call target (Call node or its func) is the builtin `name`. */
bool py_an_is_builtin_call(py_an *an, const py_expr *call_or_func, const char *name);
/* Is `name` one of Python 3.12's builtins (by name alone)? */
bool py_an_builtin_name(const char *name);

/* ============================================================== dumps */

/* Text dumps used by the tests (format in docs/analyses.md). Each appends to out.
 * The per-statement dumps of defined / live symbols show only symbols rooted at a
 * local of the statement's scope (the full sets come from the query functions). */
void py_an_dump_scopes(py_an *an, sg_buf *out);     /* every scope with its sets */
void py_an_dump_activity(py_an *an, sg_buf *out);   /* line: stmt kind: read / modified */
void py_an_dump_cfg(py_an *an, const py_cfg *g, sg_buf *out); /* nodes and edges */
void py_an_dump_defined(py_an *an, sg_buf *out);    /* line: definitely / maybe defined in */
void py_an_dump_liveness(py_an *an, sg_buf *out);   /* line: live in / live out */
void py_an_dump_live_values(py_an *an, sg_buf *out); /* every resolvable Name load */

#endif
