// SPDX-License-Identifier: Apache-2.0
/*
 * ast_depth.c — the one limit on how deeply a parsed tree may nest.
 *
 * The parser builds left-nested chains in loops (`1+1+…`, `a.b.c…`, `f()()…`), so a
 * 100 KB file can hold a tree 50,000 nodes deep, and everything after the parser (the
 * dumper, the unparser, the analyses, the converter passes, the LSP features) walks
 * trees recursively. CPython refuses such trees too: ast.parse and compile() raise
 * RecursionError ("maximum recursion depth exceeded during ast construction") once
 * the tree is about 3000 nodes deep. py_parse applies the same limit here, with an
 * explicit stack, so no walker downstream ever sees a deeper tree and none of them
 * needs its own guard (docs/parser.md "Limits").
 */
#include <stdlib.h>

#include "parser.h"

typedef struct depth_item {
  const void *node;
  int depth;
  int line, col; /* the nearest located ancestor's (or the node's own) location */
} depth_item;

typedef struct depth_walk {
  SG_VEC(depth_item) stack;
  depth_item cur;
} depth_walk;

static bool push_child(void *node, py_kind kind, void *ud) {
  (void)kind;
  depth_walk *w = ud;
  depth_item it = {node, w->cur.depth + 1, w->cur.line, w->cur.col};
  py_node_location(node, &it.line, &it.col);
  sg_vec_push(&w->stack, it);
  return true;
}

bool py_ast_too_deep(const void *root, int limit, int *line, int *col) {
  depth_walk w = {0};
  depth_item first = {root, 1, 1, 0};
  py_node_location(root, &first.line, &first.col);
  sg_vec_push(&w.stack, first);
  bool deep = false;
  while (w.stack.len) {
    w.cur = w.stack.data[--w.stack.len];
    if (w.cur.depth > limit) {
      /* report the first such node in source order; nothing below it matters */
      if (!deep || w.cur.line < *line || (w.cur.line == *line && w.cur.col < *col)) {
        *line = w.cur.line;
        *col = w.cur.col;
      }
      deep = true;
      continue;
    }
    py_visit_children((void *)w.cur.node, push_child, &w);
  }
  sg_vec_free(&w.stack);
  return deep;
}
