// SPDX-License-Identifier: Apache-2.0
/*
 * dump_names.h — deterministic names for dumps: graphs are numbered in the order they
 * are reached from the entry (then the other top-level defs), nodes by their position
 * in their graph's schedule, so equal IR prints equally whatever the node ids are
 * (the program id hashes the sexpr dump). Private to the dump_*.c files.
 */
#ifndef STAGD_GRAPH_DUMP_NAMES_H
#define STAGD_GRAPH_DUMP_NAMES_H

#include "gr_ir.h"

typedef struct gr_dumpctx {
  gr_module *m;
  gr_graph_vec graphs; /* dump order */
  sg_map gindex;       /* graph → index+1 */
  sg_map nname;        /* node → offset+1 of its name in `names` */
  sg_buf names;        /* every node name, NUL-terminated, one after another */
  sg_map prim_clash;   /* ops whose name a top-level def also has */
  gr_node_vec *scheds; /* per graph, dump order */
} gr_dumpctx;

void gr_dumpctx_init(gr_dumpctx *d, gr_module *m, gr_graph *entry);
void gr_dumpctx_free(gr_dumpctx *d);
const char *gr_dump_node_name(gr_dumpctx *d, const gr_node *n);
int gr_dump_graph_index(gr_dumpctx *d, const gr_graph *g);
const char *gr_dump_graph_name(gr_dumpctx *d, const gr_graph *g, char *buf, size_t cap);
/* Whether a top-level def has op's name (the dump then spells the op with a prefix). */
bool gr_dump_prim_clashes(const gr_dumpctx *d, const gr_op *op);

#endif
