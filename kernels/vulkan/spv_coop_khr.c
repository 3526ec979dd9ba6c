// SPDX-License-Identifier: Apache-2.0
/*
 * spv_coop_khr.c — the NV -> KHR cooperative-matrix rewrite of spv_coop_khr.h.
 * Two passes over the module. analyse(): records every id's definition and type, marks
 * the NV matrix types and the pointers to them, and joins into one class (union-find)
 * the values a use flows between (OpLoad/OpStore through Function variables, OpPhi,
 * OpCopyObject, OpSelect, element-wise arithmetic and conversions); MulAdd operands fix
 * their class's use. emit(): writes the KHR module, one KHR type (and pointer type)
 * per (NV type, use) pair, the integer constants KHR takes as ids (use, memory layout)
 * placed before the first matrix type, loads/stores with the layout operand before the
 * stride, and the header's bound raised past the new ids.
 */
#include "spv_coop_khr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_NONE, K_NVTYPE, K_NVPTR };
static const char *const USE_NAME[] = {"MatrixA", "MatrixB", "MatrixAccumulator"};

typedef struct {
  spv_module *m;
  uint32_t bound;
  uint32_t *type_of; /* result type of each id (0: none) */
  int64_t *def;      /* index of the instruction defining each id (-1: none) */
  uint32_t *parent;  /* union-find over ids */
  int8_t *role;      /* per class root: spv_coop_use, or -1 */
  uint32_t *why;     /* per class root: the MulAdd result that fixed the role */
  uint8_t *kind;     /* K_* of each type id */
  uint32_t *pointee; /* K_NVPTR: the NV matrix type */
  const char **name; /* OpName of each id, for messages */
  uint8_t *mask;     /* per NV type / pointer type: the uses its values have */
  uint32_t *khr;     /* [id * 3 + use]: the id standing for (NV type or pointer, use) */
  uint32_t konst[3]; /* 32-bit integer constants 0, 1, 2 (use / layout operands) */
  size_t first_nv;   /* index of the first OpTypeCooperativeMatrixNV */
  uint32_t int_type; /* the 32-bit integer type of the first NV type's rows operand */
  uint8_t need_const;
  char *err;
  size_t errlen;
} rw;

static bool fail(rw *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, r->errlen, fmt, ap);
  va_end(ap);
  return false;
}

/* "%12" or "%12 (ma0)" */
static const char *id_str(const rw *r, uint32_t id, char *buf, size_t n) {
  if (id < r->bound && r->name[id])
    snprintf(buf, n, "%%%u (%s)", id, r->name[id]);
  else
    snprintf(buf, n, "%%%u", id);
  return buf;
}

static uint32_t find(rw *r, uint32_t id) {
  while (r->parent[id] != id)
    id = r->parent[id] = r->parent[r->parent[id]];
  return id;
}

static bool is_coop_value(const rw *r, uint32_t id) {
  return id < r->bound && r->type_of[id] && r->kind[r->type_of[id]] != K_NONE;
}

static void join(rw *r, uint32_t a, uint32_t b) {
  if (!is_coop_value(r, a) || !is_coop_value(r, b))
    return;
  a = find(r, a);
  b = find(r, b);
  if (a != b)
    r->parent[a] = b;
}

static bool fix_role(rw *r, uint32_t id, spv_coop_use use, uint32_t by) {
  char b1[96], b2[96], b3[96];
  if (!is_coop_value(r, id))
    return fail(r, "%s, operand of OpCooperativeMatrixMulAddNV %s, is not a cooperative "
                   "matrix", id_str(r, id, b1, sizeof b1), id_str(r, by, b2, sizeof b2));
  uint32_t root = find(r, id);
  if (r->role[root] < 0) {
    r->role[root] = (int8_t)use;
    r->why[root] = by;
  } else if (r->role[root] != (int8_t)use) {
    return fail(r, "%s flows into cooperative-matrix operands of two uses: %s (MulAdd %s) "
                   "and %s (MulAdd %s); a KHR matrix type has one use",
                id_str(r, id, b1, sizeof b1), USE_NAME[r->role[root]],
                id_str(r, r->why[root], b2, sizeof b2), USE_NAME[use],
                id_str(r, by, b3, sizeof b3));
  }
  return true;
}

static bool any_nv_operand(const rw *r, const spv_inst *in, uint32_t from) {
  for (uint32_t k = from; k < in->nwords; k++)
    if (in->w[k] < r->bound && r->kind[in->w[k]] != K_NONE)
      return true;
  return false;
}

/* Records definitions, names and matrix types (pass 1). */
static bool scan_defs(rw *r) {
  bool cap = false;
  char b[96];
  for (size_t i = 0; i < r->m->n; i++) {
    const spv_inst *in = &r->m->inst[i];
    uint32_t op = spv_op(in);
    bool has_type, has_result;
    if (!spv_result_info(op, &has_type, &has_result))
      return fail(r, "instruction %zu: opcode %u is not in the rewriter's table", i, op);
    if (has_result) {
      uint32_t need = has_type ? 3 : 2;
      uint32_t id = in->nwords >= need ? in->w[need - 1] : 0;
      if (id == 0 || id >= r->bound || r->def[id] >= 0)
        return fail(r, "instruction %zu (opcode %u): result id %u is out of range or defined "
                       "twice", i, op, id);
      r->def[id] = (int64_t)i;
      r->type_of[id] = has_type ? in->w[1] : 0;
    }
    if (op == SPV_OP_CAPABILITY && in->nwords == 2 && in->w[1] == SPV_CAP_COOP_NV)
      cap = true;
    if (op == 5 && in->nwords > 2 && in->w[1] < r->bound) /* OpName */
      r->name[in->w[1]] = (const char *)&in->w[2];
    if (op == SPV_OP_TYPE_COOP_NV) {
      if (in->nwords != 6)
        return fail(r, "OpTypeCooperativeMatrixNV %%%u has %u words, not 6", in->w[1],
                    in->nwords);
      uint32_t comp = in->w[2], rows = in->w[4];
      if (comp >= r->bound || r->def[comp] < 0 || spv_op(&r->m->inst[r->def[comp]]) != 22)
        return fail(r, "OpTypeCooperativeMatrixNV %s: only float components are supported "
                       "(integer ones need KHR's signedness operands)",
                    id_str(r, in->w[1], b, sizeof b));
      uint32_t it = rows < r->bound ? r->type_of[rows] : 0;
      const spv_inst *td = it && r->def[it] >= 0 ? &r->m->inst[r->def[it]] : NULL;
      if (!td || spv_op(td) != 21 || td->w[2] != 32)
        return fail(r, "OpTypeCooperativeMatrixNV %s: rows operand is not a 32-bit integer "
                       "constant", id_str(r, in->w[1], b, sizeof b));
      if (!r->int_type) {
        r->int_type = it;
        r->first_nv = i;
      }
      r->kind[in->w[1]] = K_NVTYPE;
    } else if (op == 32 && in->nwords == 4 && in->w[3] < r->bound &&
               r->kind[in->w[3]] == K_NVTYPE) { /* OpTypePointer to a matrix */
      r->kind[in->w[1]] = K_NVPTR;
      r->pointee[in->w[1]] = in->w[3];
    } else if ((op >= 28 && op <= 30) || op == 33 || (op == 32 && any_nv_operand(r, in, 2))) {
      if (any_nv_operand(r, in, 2))
        return fail(r, "%s: a cooperative matrix inside an array, struct, pointer or "
                       "function type; use named fragments so each value's use can be "
                       "traced", id_str(r, in->w[1], b, sizeof b));
    }
  }
  if (!cap)
    return fail(r, "no CooperativeMatrixNV capability: not an NV cooperative-matrix module");
  return true;
}

static bool layout_const(rw *r, uint32_t colmajor, uint32_t *value) {
  char b[96];
  const spv_inst *d = colmajor < r->bound && r->def[colmajor] >= 0
                          ? &r->m->inst[r->def[colmajor]] : NULL;
  if (!d || (spv_op(d) != 41 && spv_op(d) != 42))
    return fail(r, "column-major operand %s is not OpConstantTrue/False: KHR needs a "
                   "constant layout", id_str(r, colmajor, b, sizeof b));
  *value = spv_op(d) == 41 ? 1u : 0u; /* ColumnMajorKHR = 1, RowMajorKHR = 0 */
  r->need_const |= (uint8_t)(1u << *value);
  return true;
}

/* Joins values a use flows between and fixes MulAdd operands (pass 2). */
static bool trace_uses(rw *r) {
  char b[96];
  for (size_t i = 0; i < r->m->n; i++) {
    const spv_inst *in = &r->m->inst[i];
    const uint32_t *w = in->w;
    uint32_t op = spv_op(in), n = in->nwords, v;
    bool coop_result = n > 2 && is_coop_value(r, w[2]) && r->def[w[2]] == (int64_t)i;
    switch (op) {
    case 61: /* OpLoad */
      join(r, w[2], w[3]);
      break;
    case 62: /* OpStore */
      join(r, w[1], w[2]);
      break;
    case 245: /* OpPhi: value, parent pairs */
      for (uint32_t k = 3; k < n; k += 2)
        join(r, w[2], w[k]);
      break;
    case 59: /* OpVariable [initializer] */
      if (n > 4)
        join(r, w[2], w[4]);
      break;
    case 83: case 109: case 110: case 111: case 112: case 113: case 114: case 115:
    case 126: case 127: case 143: /* copy, conversions, negations, matrix * scalar */
      join(r, w[2], w[3]);
      break;
    case 128: case 129: case 130: case 131: case 133: case 134: case 135: case 136:
      join(r, w[2], w[3]); /* element-wise add, sub, mul, div */
      join(r, w[2], w[4]);
      break;
    case 169: /* OpSelect */
      join(r, w[2], w[4]);
      join(r, w[2], w[5]);
      break;
    case 82: /* OpCompositeInsert object composite indices... */
      join(r, w[2], w[4]);
      break;
    case SPV_OP_COOP_MULADD_NV:
      if (!fix_role(r, w[3], SPV_USE_A, w[2]) || !fix_role(r, w[4], SPV_USE_B, w[2]) ||
          !fix_role(r, w[5], SPV_USE_ACC, w[2]) || !fix_role(r, w[2], SPV_USE_ACC, w[2]))
        return false;
      break;
    case SPV_OP_COOP_LOAD_NV:
      if (n < 6 || !layout_const(r, w[5], &v))
        return n < 6 ? fail(r, "OpCooperativeMatrixLoadNV %s: too few operands",
                            id_str(r, w[2], b, sizeof b)) : false;
      break;
    case SPV_OP_COOP_STORE_NV:
      if (n < 5 || !layout_const(r, w[4], &v))
        return n < 5 ? fail(r, "OpCooperativeMatrixStoreNV (instruction %zu): too few "
                               "operands", i) : false;
      break;
    case 1: case 44: case 46: case 51: case 80: case SPV_OP_COOP_LENGTH_NV:
      break; /* undef, constants, construct: the use comes from where they flow */
    default:
      if (coop_result)
        return fail(r, "%s is a cooperative matrix made by opcode %u, which the rewriter "
                       "cannot trace a use through", id_str(r, w[2], b, sizeof b), op);
    }
  }
  return true;
}

/* The uses each NV type and pointer type needs, and an id for each (type, use). */
static bool assign_types(rw *r) {
  char b[96], b2[96];
  for (uint32_t id = 1; id < r->bound; id++) {
    if (!is_coop_value(r, id))
      continue;
    int8_t use = r->role[find(r, id)];
    if (use < 0)
      return fail(r, "%s: cannot tell its use (A, B or accumulator): it never flows into "
                     "an OpCooperativeMatrixMulAddNV", id_str(r, id, b, sizeof b));
    uint32_t t = r->type_of[id];
    r->mask[t] |= (uint8_t)(1u << use);
    if (r->kind[t] == K_NVPTR)
      r->mask[r->pointee[t]] |= (uint8_t)(1u << use);
  }
  for (size_t i = 0; i < r->m->n; i++) { /* OpCooperativeMatrixLengthNV names a type */
    const spv_inst *in = &r->m->inst[i];
    if (spv_op(in) != SPV_OP_COOP_LENGTH_NV)
      continue;
    uint32_t t = in->w[3], mk = t < r->bound ? r->mask[t] : 0;
    if (t >= r->bound || r->kind[t] != K_NVTYPE || (mk & (mk - 1)))
      return fail(r, "OpCooperativeMatrixLengthNV %s: its type %s is not one matrix type of "
                     "a single use", id_str(r, in->w[2], b, sizeof b),
                  id_str(r, t, b2, sizeof b2));
    if (!mk)
      r->mask[t] = 1u << SPV_USE_ACC;
  }
  for (uint32_t id = 1; id < r->bound; id++) {
    if (r->kind[id] == K_NONE)
      continue;
    if (!r->mask[id]) /* declared, never used: any use will do */
      r->mask[id] = r->kind[id] == K_NVPTR && r->mask[r->pointee[id]]
                        ? (uint8_t)(r->mask[r->pointee[id]] & -r->mask[r->pointee[id]])
                        : (uint8_t)(1u << SPV_USE_ACC);
    bool first = true;
    for (int u = 0; u < 3; u++) {
      if (!(r->mask[id] & (1u << u)))
        continue;
      r->khr[id * 3 + u] = first ? id : r->bound; /* placeholder: number_new_ids */
      first = false;
    }
    if (r->kind[id] == K_NVTYPE)
      r->need_const |= r->mask[id];
  }
  return true;
}

/* The id an instruction's result type becomes, from the result's use. */
static uint32_t mapped_type(rw *r, uint32_t type, uint32_t value) {
  return r->khr[type * 3 + r->role[find(r, value)]];
}

static bool emit_words(spv_module *out, const uint32_t *w, rw *r) {
  if (!spv_insert(out, out->n, w))
    return fail(r, "out of memory");
  return true;
}

static bool emit(rw *r, spv_module *out) {
  static const char khr_ext[] = SPV_EXT_COOP_KHR;
  uint32_t buf[64];
  for (size_t i = 0; i < r->m->n; i++) {
    const spv_inst *in = &r->m->inst[i];
    uint32_t op = spv_op(in), n = in->nwords;
    if (i == r->first_nv)
      for (uint32_t v = 0; v < 3; v++)
        if ((r->need_const & (1u << v)) && r->konst[v] >= r->bound) {
          uint32_t c[4] = {4u << 16 | SPV_OP_CONSTANT, r->int_type, r->konst[v], v};
          if (!emit_words(out, c, r))
            return false;
        }
    if (op == SPV_OP_TYPE_COOP_NV || (op == 32 && r->kind[in->w[1]] == K_NVPTR)) {
      for (int u = 0; u < 3; u++) {
        uint32_t id = r->khr[in->w[1] * 3 + u];
        if (!id)
          continue;
        if (op == 32) {
          uint32_t p[4] = {4u << 16 | 32, id, in->w[2], r->khr[in->w[3] * 3 + u]};
          if (!emit_words(out, p, r))
            return false;
        } else {
          uint32_t t[7] = {7u << 16 | SPV_OP_TYPE_COOP_KHR, id, in->w[2], in->w[3], in->w[4],
                           in->w[5], r->konst[u]};
          if (!emit_words(out, t, r))
            return false;
        }
      }
      continue;
    }
    if (op == SPV_OP_EXTENSION && !strcmp((const char *)&in->w[1], SPV_EXT_COOP_NV)) {
      uint32_t e[1 + sizeof khr_ext / 4 + 1] = {0};
      memcpy(&e[1], khr_ext, sizeof khr_ext);
      e[0] = (uint32_t)(1 + (sizeof khr_ext + 3) / 4) << 16 | SPV_OP_EXTENSION;
      if (!emit_words(out, e, r))
        return false;
      continue;
    }
    uint32_t *w = n <= 64 ? buf : malloc(n * sizeof *w);
    if (!w)
      return fail(r, "out of memory");
    memcpy(w, in->w, n * sizeof *w);
    if (n > 2 && is_coop_value(r, w[2]) && r->def[w[2]] == (int64_t)i)
      w[1] = mapped_type(r, w[1], w[2]);
    if (op == SPV_OP_CAPABILITY && w[1] == SPV_CAP_COOP_NV)
      w[1] = SPV_CAP_COOP_KHR;
    uint32_t v = 0;
    if (op == SPV_OP_COOP_LOAD_NV) { /* type result ptr stride colmajor [mem] */
      layout_const(r, in->w[5], &v);
      w[0] = n << 16 | SPV_OP_COOP_LOAD_KHR;
      w[4] = r->konst[v]; /* -> type result ptr layout stride [mem] */
      w[5] = in->w[4];
    } else if (op == SPV_OP_COOP_STORE_NV) { /* ptr object stride colmajor [mem] */
      layout_const(r, in->w[4], &v);
      w[0] = n << 16 | SPV_OP_COOP_STORE_KHR;
      w[3] = r->konst[v]; /* -> ptr object layout stride [mem] */
      w[4] = in->w[3];
    } else if (op == SPV_OP_COOP_MULADD_NV) {
      w[0] = n << 16 | SPV_OP_COOP_MULADD_KHR;
    } else if (op == SPV_OP_COOP_LENGTH_NV) {
      w[0] = n << 16 | SPV_OP_COOP_LENGTH_KHR;
      for (int u = 0; u < 3; u++)
        if (r->khr[in->w[3] * 3 + u])
          w[3] = r->khr[in->w[3] * 3 + u];
    }
    bool ok = emit_words(out, w, r);
    if (w != buf)
      free(w);
    if (!ok)
      return false;
  }
  return true;
}

/* Existing constants 0, 1, 2 of the integer type defined before the first matrix type;
 * new ids for the missing ones and for the extra (type, use) pairs. */
static uint32_t number_new_ids(rw *r) {
  uint32_t next = r->bound;
  for (size_t i = 0; i < r->first_nv; i++) {
    const spv_inst *in = &r->m->inst[i];
    if (spv_op(in) == SPV_OP_CONSTANT && in->nwords == 4 && in->w[1] == r->int_type &&
        in->w[3] < 3 && !r->konst[in->w[3]])
      r->konst[in->w[3]] = in->w[2];
  }
  for (uint32_t v = 0; v < 3; v++)
    if ((r->need_const & (1u << v)) && !r->konst[v])
      r->konst[v] = next++;
  for (uint32_t id = 1; id < r->bound; id++)
    for (int u = 0; u < 3; u++)
      if (r->khr[id * 3 + u] == r->bound) /* placeholder of assign_types */
        r->khr[id * 3 + u] = next++;
  return next;
}

bool spv_coop_nv_to_khr(spv_module *m, char *err, size_t errlen) {
  rw r = {.m = m, .bound = m->header[3], .err = err, .errlen = errlen};
  size_t nb = r.bound ? r.bound : 1;
  r.type_of = calloc(nb, sizeof *r.type_of);
  r.def = malloc(nb * sizeof *r.def);
  r.parent = malloc(nb * sizeof *r.parent);
  r.role = malloc(nb * sizeof *r.role);
  r.why = calloc(nb, sizeof *r.why);
  r.kind = calloc(nb, sizeof *r.kind);
  r.pointee = calloc(nb, sizeof *r.pointee);
  r.name = calloc(nb, sizeof *r.name);
  r.mask = calloc(nb, sizeof *r.mask);
  r.khr = calloc(nb * 3, sizeof *r.khr);
  spv_module out = {0};
  bool ok = r.type_of && r.def && r.parent && r.role && r.why && r.kind && r.pointee &&
            r.name && r.mask && r.khr;
  if (!ok)
    fail(&r, "out of memory");
  for (uint32_t id = 0; ok && id < nb; id++) {
    r.def[id] = -1;
    r.parent[id] = id;
    r.role[id] = -1;
  }
  ok = ok && scan_defs(&r) && trace_uses(&r) && assign_types(&r);
  if (ok) {
    uint32_t bound = number_new_ids(&r);
    ok = emit(&r, &out);
    if (ok) {
      memcpy(out.header, m->header, sizeof out.header);
      out.header[3] = bound;
      spv_free(m);
      *m = out;
    } else {
      spv_free(&out);
    }
  }
  free(r.type_of);
  free(r.def);
  free(r.parent);
  free(r.role);
  free(r.why);
  free(r.kind);
  free(r.pointee);
  free(r.name);
  free(r.mask);
  free(r.khr);
  return ok;
}
