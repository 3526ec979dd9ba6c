// SPDX-License-Identifier: Apache-2.0
/* test_config.c — configuration: defaults, precedence (file < env < flags), list
 * replacement, and located errors for bad files, values and flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

static void clear_env(void) {
  const char *vars[] = {"STAGD_LISTEN", "STAGD_LSP_LISTEN", "STAGD_DEVICE", "STAGD_WORKERS", "STAGD_LOG_LEVEL",
                        "STAGD_MAX_MESSAGE_BYTES", "STAGD_DEADLINE_MS", "STAGD_SHUTDOWN_TIMEOUT_MS",
                        "STAGD_CONFIG", "STAGD_MAX_PING_DELAY_MS"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static sg_code load(sv_config *c, sg_error *err, int argc, char **argv) {
  bool exit_now;
  int code;
  sv_config_init(c);
  return sv_config_load(c, argc, argv, &exit_now, &code, err);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void defaults(void **state) {
  clear_env();
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  char *argv[] = {"stagd", NULL};
  assert_int_equal(load(&c, &err, 1, argv), SG_OK);
  assert_int_equal(c.listen.len, 1);
  assert_string_equal(c.listen.items[0], SV_DEFAULT_ADDR);
  assert_string_equal(c.device, "auto");
  assert_true(c.workers >= 2);
  assert_int_equal(c.max_message_bytes, 64u << 20);
  sv_config_free(&c);
}

static void lsp_stdio_has_no_default_grpc(void **state) {
  clear_env();
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  char *argv[] = {"stagd", "--lsp", "--stdio", NULL};
  assert_int_equal(load(&c, &err, 3, argv), SG_OK);
  assert_int_equal(c.listen.len, 0);
  assert_true(c.lsp && c.stdio);
  sv_config_free(&c);
}

static void precedence_file_env_flags(void **state) {
  clear_env();
  write_file("precedence.conf",
             "# a comment\n"
             "device = cpu\n"
             "workers = 3\n"
             "listen = 127.0.0.1:1111\n"
             "listen = unix:/tmp/x.sock\n"
             "log-level = debug\n");
  setenv("STAGD_CONFIG", "precedence.conf", 1);
  setenv("STAGD_WORKERS", "5", 1);
  setenv("STAGD_LISTEN", "127.0.0.1:2222, 127.0.0.1:3333", 1);
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  char *argv[] = {"stagd", "--workers=7", NULL};
  assert_int_equal(load(&c, &err, 2, argv), SG_OK);
  assert_string_equal(c.device, "cpu");      /* file only */
  assert_int_equal(c.log_level, SG_LOG_DEBUG); /* file only */
  assert_int_equal(c.workers, 7);            /* flag beats env beats file */
  assert_int_equal(c.listen.len, 2);         /* env replaced the file's list */
  assert_string_equal(c.listen.items[0], "127.0.0.1:2222");
  assert_string_equal(c.listen.items[1], "127.0.0.1:3333");
  assert_string_equal(c.config_file, "precedence.conf");
  sv_config_free(&c);

  /* flags replace the env's list; repeated flags append */
  char *argv2[] = {"stagd", "--listen", "localhost:1", "--listen", "[::1]:2", NULL};
  assert_int_equal(load(&c, &err, 5, argv2), SG_OK);
  assert_int_equal(c.listen.len, 2);
  assert_string_equal(c.listen.items[0], "localhost:1");
  assert_string_equal(c.listen.items[1], "[::1]:2");
  sv_config_free(&c);
  clear_env();
}

static void config_flag_beats_env_file(void **state) {
  clear_env();
  write_file("a.conf", "device = cpu\n");
  write_file("b.conf", "device = vulkan:1\n");
  setenv("STAGD_CONFIG", "a.conf", 1);
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  char *argv[] = {"stagd", "--config", "b.conf", NULL};
  assert_int_equal(load(&c, &err, 3, argv), SG_OK);
  assert_string_equal(c.device, "vulkan:1");
  sv_config_free(&c);
  clear_env();
}

static void file_errors_are_located(void **state) {
  clear_env();
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  char *argv[] = {"stagd", "--config", "bad.conf", NULL};

  write_file("bad.conf", "device = cpu\n\nnot a setting\n");
  assert_int_equal(load(&c, &err, 3, argv), SG_INVALID_ARGUMENT);
  assert_string_equal(err.file, "bad.conf");
  assert_int_equal(err.line, 3);
  assert_non_null(strstr(err.message, "key = value"));
  sv_config_free(&c);

  write_file("bad.conf", "colour = blue\n");
  assert_int_equal(load(&c, &err, 3, argv), SG_INVALID_ARGUMENT);
  assert_int_equal(err.line, 1);
  assert_non_null(strstr(err.message, "unknown option 'colour'"));
  sv_config_free(&c);

  write_file("bad.conf", "# ok\nworkers = many\n");
  assert_int_equal(load(&c, &err, 3, argv), SG_INVALID_ARGUMENT);
  assert_int_equal(err.line, 2);
  assert_int_equal(err.col, 11);
  assert_non_null(strstr(err.message, "workers"));
  sv_config_free(&c);

  char *missing[] = {"stagd", "--config", "does-not-exist.conf", NULL};
  assert_int_equal(load(&c, &err, 3, missing), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "does-not-exist.conf"));
  sv_config_free(&c);
  sg_error_clear(&err);
}

static void bad_flags_and_values(void **state) {
  clear_env();
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  struct {
    int argc;
    char *argv[4];
    const char *needle;
  } cases[] = {
      {2, {"stagd", "--colour"}, "unknown option '--colour'"},
      {2, {"stagd", "--listen"}, "needs a value"},
      {3, {"stagd", "--workers", "0"}, "--workers"},
      {3, {"stagd", "--max-message-bytes", "-5"}, "--max-message-bytes"},
      {3, {"stagd", "--log-level", "loud"}, "debug, info, warn or error"},
      {2, {"stagd", "--stdio"}, "--stdio needs --lsp"},
      {2, {"stagd", "--lsp"}, "--lsp needs --stdio or --lsp-listen"},
      {2, {"stagd", "stray"}, "unexpected argument 'stray'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(load(&c, &err, cases[i].argc, cases[i].argv), SG_INVALID_ARGUMENT);
    if (!strstr(err.message, cases[i].needle)) fail_msg("case %zu: '%s' lacks '%s'", i, err.message, cases[i].needle);
    sv_config_free(&c);
  }
  setenv("STAGD_DEADLINE_MS", "soon", 1);
  char *argv[] = {"stagd", NULL};
  assert_int_equal(load(&c, &err, 1, argv), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "STAGD_DEADLINE_MS"));
  sv_config_free(&c);
  sg_error_clear(&err);
  clear_env();
}

/* A non-loopback address needs TLS and tokens, or --insecure; TLS flags go together. */
static void exposure(void **state) {
  (void)state;
  clear_env();
  sv_config c;
  sg_error err = SG_ERROR_INIT;
  char *open_[] = {"stagd", "--listen", "0.0.0.0:7420", NULL};
  assert_int_equal(load(&c, &err, 3, open_), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "--insecure"));
  assert_non_null(strstr(err.message, "0.0.0.0:7420"));
  sv_config_free(&c);
  char *lsp[] = {"stagd", "--lsp", "--lsp-listen", "10.1.2.3:2087", "--listen", "unix:/tmp/s", NULL};
  assert_int_equal(load(&c, &err, 6, lsp), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "--lsp-listen 10.1.2.3:2087"));
  sv_config_free(&c);
  char *insecure[] = {"stagd", "--listen", "0.0.0.0:7420", "--insecure", NULL};
  assert_int_equal(load(&c, &err, 4, insecure), SG_OK);
  sv_config_free(&c);
  char *tls_only[] = {"stagd", "--listen", "0.0.0.0:7420", "--tls-cert", "c", "--tls-key", "k", NULL};
  assert_int_equal(load(&c, &err, 7, tls_only), SG_INVALID_ARGUMENT); /* no tokens */
  sv_config_free(&c);
  char *both[] = {"stagd", "--listen", "0.0.0.0:7420", "--tls-cert", "c", "--tls-key", "k", "--auth-token-file", "t", NULL};
  assert_int_equal(load(&c, &err, 9, both), SG_OK);
  sv_config_free(&c);
  char *half[] = {"stagd", "--tls-cert", "c", NULL};
  assert_int_equal(load(&c, &err, 3, half), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "go together"));
  sv_config_free(&c);
  char *ca[] = {"stagd", "--tls-client-ca", "ca", NULL};
  assert_int_equal(load(&c, &err, 3, ca), SG_INVALID_ARGUMENT);
  sv_config_free(&c);
  assert_true(sv_addr_is_local("127.0.0.1:1") && sv_addr_is_local("127.9.9.9:1") && sv_addr_is_local("unix:/x"));
  assert_false(sv_addr_is_local("127.0.0.1.evil.com:1") || sv_addr_is_local(":7420") || sv_addr_is_local("[::]:1"));
  sg_error_clear(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults),
      cmocka_unit_test(lsp_stdio_has_no_default_grpc),
      cmocka_unit_test(precedence_file_env_flags),
      cmocka_unit_test(config_flag_beats_env_file),
      cmocka_unit_test(file_errors_are_located),
      cmocka_unit_test(bad_flags_and_values),
      cmocka_unit_test(exposure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
