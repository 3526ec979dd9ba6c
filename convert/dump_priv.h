// SPDX-License-Identifier: Apache-2.0
/*
 * dump_priv.h — helpers the generated dumper (py_ast_gen.c) calls; implemented in
 * dump.c. They write either ast.dump's text form or the JSON form of docs/parser.md.
 */
#ifndef STAGD_CONVERT_DUMP_PRIV_H
#define STAGD_CONVERT_DUMP_PRIV_H

#include "py_ast_base.h"

void py_dump_node_begin(py_dumper *d, const char *name);
void py_dump_node_end(py_dumper *d);
void py_dump_field(py_dumper *d, const char *name);
void py_dump_absent(py_dumper *d, const char *name); /* an optional field that is None */
void py_dump_list_begin(py_dumper *d);
void py_dump_list_sep(py_dumper *d, int i);
void py_dump_list_end(py_dumper *d);
void py_dump_none(py_dumper *d);
void py_dump_simple(py_dumper *d, const char *name); /* Load(), Add(), ... */
void py_dump_str(py_dumper *d, const char *s);
void py_dump_int(py_dumper *d, int v);
void py_dump_constant(py_dumper *d, const py_constant *c);

#endif
