// SPDX-License-Identifier: Apache-2.0
/*
 * test_spv_coop_khr.c — the build-time NV -> KHR cooperative-matrix rewrite
 * (kernels/vulkan/spv_coop_khr.c) and the KHR/NV kernel choice, all without a device
 * (lavapipe has no cooperative matrix): the real matmul_coop kernel rewritten and
 * checked with the tool's own reader, hand-made modules whose matrix uses conflict or
 * cannot be told (library message and the tool's exit status), the reader/writer round
 * trip of ordinary kernels (byte-identical, spirv-val clean), and kn_vk_coop_choice on
 * described devices. KN_SPV_DIR, SPV_COOP_KHR_TOOL and SPIRV_VAL come from CMake.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "kn_vulkan.h"
#include "spv_coop_khr.h"

static spv_module read_spv(const char *name) {
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/%s", KN_SPV_DIR, name);
  spv_module m;
  if (!spv_read_file(path, &m, err, sizeof err))
    fail_msg("%s", err);
  return m;
}

/* The result id an instruction defines (0: none). */
static uint32_t result_id(const spv_inst *in, uint32_t *type) {
  bool has_type, has_result;
  assert_true(spv_result_info(spv_op(in), &has_type, &has_result));
  *type = has_type ? in->w[1] : 0;
  return has_result ? in->w[has_type ? 2 : 1] : 0;
}

/* Per id: defining instruction index + 1 (0: undefined), asserting each is defined once
 * and below the header's bound. */
static size_t *definitions(const spv_module *m) {
  size_t *def = calloc(m->header[3], sizeof *def);
  for (size_t i = 0; i < m->n; i++) {
    uint32_t type, id = result_id(&m->inst[i], &type);
    if (!id)
      continue;
    assert_true(id < m->header[3]);
    assert_int_equal(def[id], 0);
    def[id] = i + 1;
  }
  return def;
}

/* The use of the KHR matrix type a value (or type) id has: its type's Use constant. */
static int use_of_type(const spv_module *m, const size_t *def, uint32_t type) {
  assert_true(type < m->header[3] && def[type]);
  const spv_inst *t = &m->inst[def[type] - 1];
  assert_int_equal(spv_op(t), SPV_OP_TYPE_COOP_KHR);
  const spv_inst *c = &m->inst[def[t->w[6]] - 1];
  assert_int_equal(spv_op(c), SPV_OP_CONSTANT);
  return (int)c->w[3];
}

static int use_of_value(const spv_module *m, const size_t *def, uint32_t value) {
  assert_true(value < m->header[3] && def[value]);
  return use_of_type(m, def, m->inst[def[value] - 1].w[1]);
}

static void rewrite_ok(spv_module *m) {
  char err[512] = "";
  if (!spv_coop_nv_to_khr(m, err, sizeof err))
    fail_msg("rewrite failed: %s", err);
}

/* matmul_coop.spv as the build rewrites it, re-read from its words */
static void real_kernel(void **state) {
  (void)state;
  spv_module nv = read_spv("matmul_coop.spv");
  uint32_t old_bound = nv.header[3];
  rewrite_ok(&nv);
  size_t nwords;
  uint32_t *words = spv_write(&nv, &nwords);
  spv_free(&nv);
  spv_module m;
  char err[256];
  assert_true(spv_read(&m, words, nwords, err, sizeof err));
  free(words);
  assert_true(m.header[3] > old_bound); /* the B type (and its pointer) are new ids */
  size_t *def = definitions(&m);
  int uses_seen[3] = {0}, muladds = 0, loads = 0, stores = 0, khr_cap = 0, khr_ext = 0;
  for (size_t i = 0; i < m.n; i++) {
    const spv_inst *in = &m.inst[i];
    uint32_t op = spv_op(in);
    assert_false(op >= SPV_OP_TYPE_COOP_NV && op <= SPV_OP_COOP_LENGTH_NV);
    if (op == SPV_OP_CAPABILITY) {
      assert_int_not_equal(in->w[1], SPV_CAP_COOP_NV);
      khr_cap += in->w[1] == SPV_CAP_COOP_KHR;
    }
    if (op == SPV_OP_EXTENSION) {
      assert_string_not_equal((const char *)&in->w[1], SPV_EXT_COOP_NV);
      khr_ext += !strcmp((const char *)&in->w[1], SPV_EXT_COOP_KHR);
    }
    if (op == SPV_OP_TYPE_COOP_KHR)
      uses_seen[use_of_type(&m, def, in->w[1])]++;
    if (op == SPV_OP_COOP_MULADD_KHR) {
      muladds++;
      assert_int_equal(use_of_type(&m, def, in->w[1]), SPV_USE_ACC);
      assert_int_equal(use_of_value(&m, def, in->w[3]), SPV_USE_A);
      assert_int_equal(use_of_value(&m, def, in->w[4]), SPV_USE_B);
      assert_int_equal(use_of_value(&m, def, in->w[5]), SPV_USE_ACC);
    }
    if (op == SPV_OP_COOP_LOAD_KHR) { /* type result pointer layout stride memory... */
      loads++;
      const spv_inst *layout = &m.inst[def[in->w[4]] - 1];
      assert_int_equal(spv_op(layout), SPV_OP_CONSTANT);
      assert_int_equal(layout->w[3], 0); /* RowMajorKHR: the kernel is row-major */
      assert_int_not_equal(use_of_type(&m, def, in->w[1]), SPV_USE_ACC);
    }
    if (op == SPV_OP_COOP_STORE_KHR) { /* pointer object layout stride memory... */
      stores++;
      assert_int_equal(use_of_value(&m, def, in->w[2]), SPV_USE_ACC);
      assert_int_equal(m.inst[def[in->w[3]] - 1].w[3], 0);
    }
  }
  /* three distinct KHR types, one per use; 2x4 tiles per subgroup, two 16-deep halves
   * of each K step of 32 (the unrolled loop): 2 x (2 A and 4 B loads, 8 MulAdds), then
   * 8 stores */
  assert_int_equal(uses_seen[SPV_USE_A], 1);
  assert_int_equal(uses_seen[SPV_USE_B], 1);
  assert_int_equal(uses_seen[SPV_USE_ACC], 1);
  assert_int_equal(muladds, 16);
  assert_int_equal(loads, 12);
  assert_int_equal(stores, 8);
  assert_int_equal(khr_cap, 1);
  assert_int_equal(khr_ext, 1);
  free(def);
  spv_free(&m);
}

/* The embedded matmul_coop_khr.spv is what the library makes of matmul_coop.spv. */
static void build_output_matches(void **state) {
  (void)state;
  spv_module nv = read_spv("matmul_coop.spv"), khr = read_spv("matmul_coop_khr.spv");
  rewrite_ok(&nv);
  size_t n1, n2;
  uint32_t *a = spv_write(&nv, &n1), *b = spv_write(&khr, &n2);
  assert_int_equal(n1, n2);
  assert_memory_equal(a, b, n1 * sizeof *a);
  free(a);
  free(b);
  spv_free(&nv);
  spv_free(&khr);
}

/* Reading and writing back an ordinary kernel gives its bytes, and spirv-val passes. */
static void round_trip(void **state) {
  (void)state;
  static const char *const names[] = {"matmul.spv", "binary_f16.spv", "reduce_subgroup.spv"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    char in[1024], out[1024], err[512], cmd[4096];
    snprintf(in, sizeof in, "%s/%s", KN_SPV_DIR, names[k]);
    snprintf(out, sizeof out, "test_spv_round_trip_%s", names[k]);
    spv_module m;
    assert_true(spv_read_file(in, &m, err, sizeof err));
    assert_true(spv_write_file(out, &m, err, sizeof err));
    spv_free(&m);
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", in, out);
    assert_int_equal(system(cmd), 0);
#ifdef SPIRV_VAL
    snprintf(cmd, sizeof cmd, "'%s' --target-env vulkan1.2 '%s'", SPIRV_VAL, out);
    assert_int_equal(system(cmd), 0);
#endif
    remove(out);
  }
  /* malformed input: a clear message, never a crash */
  uint32_t bad[] = {SPV_MAGIC, 0x10500, 0, 10, 0, 9u << 16 | 17, 1};
  spv_module m;
  char err[256];
  assert_false(spv_read(&m, bad, sizeof bad / sizeof *bad, err, sizeof err));
  assert_non_null(strstr(err, "runs past the end"));
  assert_false(spv_read(&m, bad + 1, 4, err, sizeof err));
  assert_non_null(strstr(err, "not a little-endian SPIR-V module"));
}

/* ------------------------------------------------- hand-made NV modules */

typedef struct {
  uint32_t w[256];
  size_t n;
} builder;

static void put(builder *b, uint32_t op, int nops, ...) {
  va_list ap;
  va_start(ap, nops);
  b->w[b->n++] = (uint32_t)(nops + 1) << 16 | op;
  for (int i = 0; i < nops; i++)
    b->w[b->n++] = va_arg(ap, uint32_t);
  va_end(ap);
}

static void put_string(builder *b, uint32_t op, uint32_t id, const char *s) {
  size_t len = strlen(s) + 1, nw = (len + 3) / 4;
  b->w[b->n++] = (uint32_t)(1 + (id ? 1 : 0) + nw) << 16 | op;
  if (id)
    b->w[b->n++] = id;
  memset(&b->w[b->n], 0, nw * 4);
  memcpy(&b->w[b->n], s, len);
  b->n += nw;
}

/* %6 = f16 16x16 matrix, %7 = f32 one, %8 = null %6 ("shared"), %9 = null %7,
 * %15 = null %6, then `body` inside a void function; bound 20. */
static spv_module nv_module(void (*body)(builder *)) {
  builder b = {.n = 0};
  uint32_t hdr[5] = {SPV_MAGIC, 0x10500, 0, 20, 0};
  memcpy(b.w, hdr, sizeof hdr);
  b.n = 5;
  put(&b, SPV_OP_CAPABILITY, 1, 1u);
  put(&b, SPV_OP_CAPABILITY, 1, (uint32_t)SPV_CAP_COOP_NV);
  put_string(&b, SPV_OP_EXTENSION, 0, SPV_EXT_COOP_NV);
  put(&b, 14, 2, 0u, 1u); /* OpMemoryModel Logical GLSL450 */
  put_string(&b, 5, 8, "shared");
  put(&b, 22, 2, 1u, 16u);       /* %1 = OpTypeFloat 16 */
  put(&b, 22, 2, 2u, 32u);       /* %2 = OpTypeFloat 32 */
  put(&b, 21, 3, 3u, 32u, 0u);   /* %3 = OpTypeInt 32 0 */
  put(&b, SPV_OP_CONSTANT, 3, 3u, 4u, 3u);   /* %4 = Subgroup scope */
  put(&b, SPV_OP_CONSTANT, 3, 3u, 5u, 16u);  /* %5 = 16 */
  put(&b, SPV_OP_TYPE_COOP_NV, 5, 6u, 1u, 4u, 5u, 5u);
  put(&b, SPV_OP_TYPE_COOP_NV, 5, 7u, 2u, 4u, 5u, 5u);
  put(&b, 46, 2, 6u, 8u);  /* %8 = OpConstantNull %6 */
  put(&b, 46, 2, 7u, 9u);  /* %9 = OpConstantNull %7 */
  put(&b, 46, 2, 6u, 15u); /* %15 = OpConstantNull %6 */
  put(&b, 19, 1, 10u);     /* %10 = OpTypeVoid */
  put(&b, 33, 2, 11u, 10u);          /* %11 = OpTypeFunction %10 */
  put(&b, 54, 4, 10u, 12u, 0u, 11u); /* %12 = OpFunction %10 None %11 */
  put(&b, 248, 1, 13u);              /* %13 = OpLabel */
  body(&b);
  put(&b, 253, 0);                   /* OpReturn */
  put(&b, 56, 0);                    /* OpFunctionEnd */
  spv_module m;
  char err[256];
  if (!spv_read(&m, b.w, b.n, err, sizeof err))
    fail_msg("%s", err);
  return m;
}

static void body_ok(builder *b) { /* %14 = MulAdd %7 %8 %15 %9 */
  put(b, SPV_OP_COOP_MULADD_NV, 5, 7u, 14u, 8u, 15u, 9u);
}
static void body_conflict(builder *b) { /* %14 = MulAdd %7 %8 %8 %9: %8 is A and B */
  put(b, SPV_OP_COOP_MULADD_NV, 5, 7u, 14u, 8u, 8u, 9u);
}
static void body_unknown_use(builder *b) { /* %16 = copy of %15, never multiplied */
  put(b, 83, 3, 6u, 16u, 15u);
}

static void hand_made(void **state) {
  (void)state;
  /* one NV float16 type feeding A and B: split in two, the extra type gets id 20+ */
  spv_module m = nv_module(body_ok);
  rewrite_ok(&m);
  size_t *def = definitions(&m);
  int ntypes = 0;
  for (size_t i = 0; i < m.n; i++)
    if (spv_op(&m.inst[i]) == SPV_OP_TYPE_COOP_KHR)
      ntypes++;
  assert_int_equal(ntypes, 3);
  assert_int_equal(use_of_value(&m, def, 8), SPV_USE_A);
  assert_int_equal(use_of_value(&m, def, 15), SPV_USE_B);
  assert_int_equal(use_of_value(&m, def, 9), SPV_USE_ACC);
  assert_int_equal(use_of_value(&m, def, 14), SPV_USE_ACC);
  free(def);
  spv_free(&m);

  char err[512];
  m = nv_module(body_conflict);
  assert_false(spv_coop_nv_to_khr(&m, err, sizeof err));
  assert_non_null(strstr(err, "%8 (shared) flows into cooperative-matrix operands of two uses"));
  assert_non_null(strstr(err, "MatrixA"));
  assert_non_null(strstr(err, "MatrixB"));
  assert_int_equal(spv_op(&m.inst[m.n - 3]), SPV_OP_COOP_MULADD_NV); /* left unchanged */
  spv_free(&m);

  m = nv_module(body_unknown_use);
  assert_false(spv_coop_nv_to_khr(&m, err, sizeof err));
  assert_non_null(strstr(err, "cannot tell its use"));
  spv_free(&m);

  /* not an NV module at all */
  m = read_spv("matmul.spv");
  assert_false(spv_coop_nv_to_khr(&m, err, sizeof err));
  assert_non_null(strstr(err, "no CooperativeMatrixNV capability"));
  spv_free(&m);
}

/* The tool fails (exit 1, message on stderr naming the input) and leaves no output. */
static void tool_exit_status(void **state) {
  (void)state;
  spv_module m = nv_module(body_conflict);
  char err[256], cmd[2048];
  assert_true(spv_write_file("test_spv_conflict.spv", &m, err, sizeof err));
  spv_free(&m);
  snprintf(cmd, sizeof cmd,
           "'%s' test_spv_conflict.spv test_spv_conflict_khr.spv 2>test_spv_conflict.err",
           SPV_COOP_KHR_TOOL);
  int st = system(cmd);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
  FILE *f = fopen("test_spv_conflict.err", "r");
  assert_non_null(f);
  char line[1024] = "";
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  assert_non_null(strstr(line, "spv_coop_khr: test_spv_conflict.spv: %8 (shared) flows into"));
  assert_null(fopen("test_spv_conflict_khr.spv", "rb"));
  remove("test_spv_conflict.spv");
  remove("test_spv_conflict.err");
}

/* ------------------------------------------------- KHR / NV choice */

static void coop_choice(void **state) {
  (void)state;
  kn_vk_device_info none = {.float16 = true}, nv = none, khr = none, both = none;
  nv.cooperative_matrix = nv.cooperative_matrix_f16 = true;
  khr.cooperative_matrix = khr.cooperative_matrix_khr_f16 = true;
  both = nv;
  both.cooperative_matrix_khr_f16 = true;
  const char *kernel, *reason;
  assert_int_equal(kn_vk_coop_choice(&nv, KN_VK_COOP_AUTO, &kernel, &reason), KN_VK_COOP_NV);
  assert_string_equal(kernel, "matmul_coop");
  assert_non_null(strstr(reason, "no KHR"));
  assert_int_equal(kn_vk_coop_choice(&khr, KN_VK_COOP_AUTO, &kernel, &reason), KN_VK_COOP_KHR);
  assert_string_equal(kernel, "matmul_coop_khr");
  assert_int_equal(kn_vk_coop_choice(&both, KN_VK_COOP_AUTO, &kernel, &reason), KN_VK_COOP_KHR);
  assert_string_equal(kernel, "matmul_coop_khr");
  assert_non_null(strstr(reason, "preferred"));
  assert_int_equal(kn_vk_coop_choice(&none, KN_VK_COOP_AUTO, &kernel, &reason), KN_VK_COOP_AUTO);
  assert_null(kernel);
  /* forced: the named one where offered, else none and why */
  assert_int_equal(kn_vk_coop_choice(&both, KN_VK_COOP_NV, &kernel, &reason), KN_VK_COOP_NV);
  assert_string_equal(kernel, "matmul_coop");
  assert_int_equal(kn_vk_coop_choice(&both, KN_VK_COOP_KHR, &kernel, &reason), KN_VK_COOP_KHR);
  assert_int_equal(kn_vk_coop_choice(&khr, KN_VK_COOP_NV, &kernel, &reason), KN_VK_COOP_AUTO);
  assert_null(kernel);
  assert_non_null(strstr(reason, "STAGD_VK_COOP=nv"));
  assert_int_equal(kn_vk_coop_choice(&nv, KN_VK_COOP_KHR, &kernel, &reason), KN_VK_COOP_AUTO);
  assert_non_null(strstr(reason, "STAGD_VK_COOP=khr"));
  /* the matmul policy: float16 products take the coop variant with the preferred kernel */
  kn_vk_device_info gpu = khr;
  gpu.subgroup_size = 32;
  gpu.max_workgroup_invocations = 1024;
  gpu.max_shared_memory_bytes = 49152;
  kn_vk_matmul_shape square = {1, 512, 512, 512};
  kn_vk_matmul_plan p = kn_vk_matmul_choice(&square, KN_VK_F16, &gpu, KN_VK_MATMUL_AUTO);
  assert_int_equal(p.variant, KN_VK_MATMUL_COOP);
  assert_string_equal(p.kernel, "matmul_coop_khr");
  gpu.cooperative_matrix_f16 = true;
  gpu.cooperative_matrix_khr_f16 = false;
  assert_string_equal(kn_vk_matmul_choice(&square, KN_VK_F16, &gpu, KN_VK_MATMUL_COOP).kernel,
                      "matmul_coop");
  /* ListDevices' kernels JSON names the cooperative-matrix kernel and why */
  sg_buf json = SG_BUF_INIT;
  kn_vk_device_info_json(&both, &json);
  assert_non_null(strstr(json.data, "\"cooperative_matrix_khr_f16\":true"));
  assert_non_null(strstr(json.data, "\"coop\":\"matmul_coop_khr\",\"coop_reason\":"
                                    "\"VK_KHR_cooperative_matrix (preferred"));
  sg_buf_free(&json);
  json = (sg_buf)SG_BUF_INIT;
  kn_vk_device_info_json(&none, &json);
  assert_non_null(strstr(json.data, "\"cooperative_matrix_khr_f16\":false"));
  assert_non_null(strstr(json.data, "\"coop\":null,\"coop_reason\":\"no 16x16x16"));
  sg_buf_free(&json);
  /* flavour names and STAGD_VK_COOP */
  kn_vk_coop_flavour f;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_coop_flavour_parse("khr", &f, &e), SG_OK);
  assert_int_equal(f, KN_VK_COOP_KHR);
  assert_int_equal(kn_vk_coop_flavour_parse("", &f, &e), SG_OK);
  assert_int_equal(f, KN_VK_COOP_AUTO);
  setenv("STAGD_VK_COOP", "amd", 1);
  assert_int_equal(kn_vk_coop_env_flavour(&f, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "STAGD_VK_COOP: unknown cooperative-matrix flavour 'amd'"));
  sg_error_clear(&e);
  setenv("STAGD_VK_COOP", "nv", 1);
  assert_int_equal(kn_vk_coop_env_flavour(&f, &e), SG_OK);
  assert_int_equal(f, KN_VK_COOP_NV);
  unsetenv("STAGD_VK_COOP");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(real_kernel),   cmocka_unit_test(build_output_matches),
      cmocka_unit_test(round_trip),    cmocka_unit_test(hand_made),
      cmocka_unit_test(tool_exit_status), cmocka_unit_test(coop_choice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
