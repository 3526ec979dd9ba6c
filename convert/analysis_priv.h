// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_priv.h — private state shared by the analysis files (analysis_*.c): the
 * py_an object, the internal scope and CFG records that wrap the public structs of
 * analysis.h, a scratch "collector" of symbols, and bitsets for the dataflow solvers.
 *
 *   analysis_main.c          py_an_new / py_an_module / py_an_free, symbol sets
 *   analysis_qual_names.c    symbols and qualified names
 *   analysis_activity.c      scopes and read / write sets (the walker)
 *   analysis_cfg.c           control-flow graphs
 *   analysis_reaching_defs.c definitely / possibly defined, reaching definitions
 *   analysis_liveness.c      live variables
 *   analysis_dataflow.c      universes, bitsets and descendants for the solvers
 *   analysis_live_values.c   builtins and imported modules
 *   analysis_state.c         what a functional if / while / for must thread
 *   analysis_dump.c          text dumps for tests and tools
 */
#ifndef STAGD_CONVERT_ANALYSIS_PRIV_H
#define STAGD_CONVERT_ANALYSIS_PRIV_H

#include "analysis.h"

typedef SG_VEC(py_sym) an_symvec;

/* Symbols read / written / deleted while walking some code, unsorted with repeats. */
typedef struct an_collector {
  an_symvec read, write, del;
  an_symvec maybe; /* writes that may not happen (a comprehension's walrus targets) */
} an_collector;

typedef struct an_scope {
  py_scope pub;
  int index;
  an_collector col; /* direct reads / writes of the scope */
  an_symvec params, globals, nonlocals, bound;
  an_symvec leaked; /* comprehension: names its walruses bind in the enclosing scope */
  SG_VEC(struct an_scope *) children;
  bool star_import; /* `from m import *` at this level */
  py_symset leaked_set;
  py_symset free_read; /* the part of pub.free that is read (not only written) */
} an_scope;

typedef struct an_dataflow an_dataflow; /* analysis_dataflow.h */

/* What the liveness / reaching-definitions solvers keep per CFG. */
typedef struct an_cfg {
  py_cfg pub;
  an_scope *scope;
  py_sym *univ; /* sorted symbols this CFG mentions; bit i of a bitset = univ[i] */
  int nuniv;
  int words;    /* 64-bit words per bitset */
  uint64_t *live_in, *live_out;   /* nnodes * words each */
  uint64_t *must_out, *may_out;   /* nnodes * words each */
  uint64_t *must_in, *may_in;     /* nnodes * words each */
  /* For a `for` / `with` head: index of the first node of its body, the only edge on
   * which the target is bound (exhausting the iterator binds nothing; __exit__ may
   * suppress a failure to bind); else -1. */
  int *body_first;
  uint64_t *nonlocal_bits;        /* univ symbols whose root is not a local of the scope */
  uint64_t *composite_bits;       /* univ symbols that are composites */
  an_dataflow *df;
} an_cfg;

/* Per statement: where its nodes are and how it completes. */
typedef struct an_stmt_info {
  an_cfg *cfg;
  int lo, hi;           /* nodes [lo, hi) were created for it; lo is its head */
  py_cfg_node **front;  /* nodes that fall through to what follows it */
  int nfront;
} an_stmt_info;

typedef struct an_binding {
  int count;        /* bindings of the name in the scope */
  py_live_value lv; /* what the single import binds, if it is one */
} an_binding;

struct py_an {
  py_ctx *ctx;
  sg_arena arena;
  const py_mod *mod;
  sg_map sym_by_text; /* interned text → sym + 1 */
  SG_VEC(py_sym_info) syms;
  SG_VEC(an_scope *) scopes;
  SG_VEC(an_cfg *) cfgs;
  sg_map scope_by_node; /* scope-opening node → an_scope */
  sg_map scope_of;      /* statement / Name → an_scope */
  sg_map cfg_by_owner;  /* owner → an_cfg */
  sg_map node_of;       /* stmt / handler / case → py_cfg_node */
  sg_map stmt_info;     /* stmt → an_stmt_info */
  sg_map name_node;     /* Name expr → py_cfg_node whose activity holds it */
  sg_map node_cfg;      /* py_cfg_node → an_cfg */
  sg_map act_cache;     /* stmt → py_activity */
  sg_map bindings;      /* (scope index << 32 | sym) → an_binding */
  sg_map maybe_writes;  /* py_cfg_node → py_symset of writes that may not happen */
  an_collector scratch;
  bool done;
};

/* ---- helpers (analysis_main.c) */
void an_col_clear(an_collector *c);
void an_col_free(an_collector *c);
/* Sorts, dedups and copies v into the arena. */
py_symset an_symset_from(py_an *an, py_sym *v, size_t n);
py_activity an_col_finish(py_an *an, an_collector *c);
static inline void *an_get(const sg_map *m, const void *key) {
  void *v = NULL;
  return sg_map_get(m, (uint64_t)(uintptr_t)key, &v) ? v : NULL;
}
static inline void an_put(sg_map *m, const void *key, void *v) {
  sg_map_put(m, (uint64_t)(uintptr_t)key, v);
}

/* ---- qualified names */
py_sym an_sym_intern(py_an *an, py_qn_kind kind, const char *text, const char *name,
                     py_sym parent, py_sym index_sym, const py_expr *index);

/* ---- activity (analysis_activity.c) */
void an_activity_module(py_an *an, const py_mod *mod); /* builds every scope */
/* Fills c with the activity of CFG node n's own part (head of compound statements);
 * records Name → node. */
void an_node_activity(py_an *an, an_scope *sc, py_cfg_node *n, an_collector *c);
an_scope *an_scope_get(const py_an *an, const void *node);
bool an_is_expr_kind(py_kind k);

/* ---- CFG (analysis_cfg.c) */
void an_cfg_build_all(py_an *an);
an_stmt_info *an_stmt_info_get(const py_an *an, const void *stmt);

/* ---- dataflow */
void an_dataflow_prepare(py_an *an, an_cfg *g); /* universe, bit masks */
int an_univ_index(const an_cfg *g, py_sym s);   /* -1 if absent */
void an_liveness_solve(py_an *an, an_cfg *g);
void an_reaching_solve(py_an *an, an_cfg *g);
py_symset an_bits_to_set(py_an *an, const an_cfg *g, const uint64_t *bits);
uint64_t *an_bits_new(const an_cfg *g); /* zeroed, malloc'd */

/* ---- live values */
void an_binding_note(py_an *an, an_scope *sc, py_sym name, const py_live_value *lv);
const an_binding *an_binding_get(const py_an *an, const an_scope *sc, py_sym name);

#endif
