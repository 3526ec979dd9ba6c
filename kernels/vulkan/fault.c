// SPDX-License-Identifier: Apache-2.0
/*
 * fault.c — test-only fault injection for the device layer: makes the N-th call at a
 * site (queue submission, fence wait, memory allocation, memory mapping) fail with
 * VK_ERROR_DEVICE_LOST or VK_ERROR_OUT_OF_DEVICE_MEMORY, so tests can provoke what a
 * real GPU does rarely (docs/vulkan.md, "Device loss and out of memory").
 *
 * Configured by STAGD_VK_FAULT (read once, when the first context is opened) or by
 * kn_vk_fault_set. Unset, kn_vk_fault costs one relaxed atomic load.
 */
#include "vk_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const site_names[KN_VK_FAULT_NSITES] = {"submit", "wait", "alloc", "map"};

typedef struct fault_plan {
  VkResult result[KN_VK_FAULT_NSITES]; /* VK_SUCCESS: the site is not armed */
  uint64_t nth[KN_VK_FAULT_NSITES];    /* the call that fails (1-based) */
  uint64_t calls[KN_VK_FAULT_NSITES];  /* calls seen since the plan was set */
} fault_plan;

static atomic_bool armed;
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static fault_plan plan;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char *env_error; /* why STAGD_VK_FAULT was refused, NULL if it was not */

/* "KIND@SITE:N[,KIND@SITE:N...]" → p. */
static sg_code parse(const char *spec, fault_plan *p, sg_error *err) {
  memset(p, 0, sizeof *p);
  const char *s = spec;
  while (*s) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char item[64];
    if (len == 0 || len >= sizeof item)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "bad fault '%.*s': expected KIND@SITE:N",
                          (int)len, s);
    memcpy(item, s, len);
    item[len] = '\0';
    char *at = strchr(item, '@'), *colon = at ? strchr(at, ':') : NULL;
    if (!at || !colon)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "bad fault '%s': expected KIND@SITE:N (e.g. lost@submit:2)", item);
    *at = *colon = '\0';
    VkResult r;
    if (!strcmp(item, "lost"))
      r = VK_ERROR_DEVICE_LOST;
    else if (!strcmp(item, "oom"))
      r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    else
      return sg_error_set(err, SG_INVALID_ARGUMENT, "bad fault kind '%s': expected lost or oom",
                          item);
    int site = -1;
    for (int i = 0; i < KN_VK_FAULT_NSITES; i++)
      if (!strcmp(at + 1, site_names[i]))
        site = i;
    if (site < 0)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "bad fault site '%s': expected submit, wait, alloc or map", at + 1);
    char *num_end;
    unsigned long long n = strtoull(colon + 1, &num_end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *num_end || n == 0)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "bad fault count '%s': expected a call number from 1", colon + 1);
    if (p->result[site] != VK_SUCCESS)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "fault site '%s' given twice", at + 1);
    p->result[site] = r;
    p->nth[site] = n;
    s += len + (end ? 1 : 0);
  }
  return SG_OK;
}

static sg_code plan_set(const char *spec, sg_error *err) {
  fault_plan p;
  memset(&p, 0, sizeof p);
  if (spec) {
    sg_code code = parse(spec, &p, err);
    if (code != SG_OK)
      return code;
  }
  bool any = false;
  for (int i = 0; i < KN_VK_FAULT_NSITES; i++)
    any = any || p.result[i] != VK_SUCCESS;
  pthread_mutex_lock(&plan_lock);
  plan = p;
  atomic_store(&armed, any);
  pthread_mutex_unlock(&plan_lock);
  return SG_OK;
}

static void read_env(void) {
  const char *spec = getenv("STAGD_VK_FAULT");
  if (!spec || !*spec)
    return;
  sg_error e = SG_ERROR_INIT;
  if (plan_set(spec, &e) != SG_OK)
    env_error = sg_xasprintf("environment STAGD_VK_FAULT: %s", e.message);
  else
    SG_WARN(0, "vulkan: fault injection armed (STAGD_VK_FAULT=%s): for tests only", spec);
  sg_error_clear(&e);
}

sg_code kn_vk_fault_set(const char *spec, sg_error *err) {
  pthread_once(&env_once, read_env); /* so a later first context does not override it */
  return plan_set(spec, err);
}

sg_code kn_vk_fault_env(sg_error *err) {
  pthread_once(&env_once, read_env);
  return env_error ? sg_error_set(err, SG_INVALID_ARGUMENT, "%s", env_error) : SG_OK;
}

VkResult kn_vk_fault(kn_vk_fault_site site) {
  if (!atomic_load_explicit(&armed, memory_order_relaxed))
    return VK_SUCCESS;
  VkResult r = VK_SUCCESS;
  pthread_mutex_lock(&plan_lock);
  if (plan.result[site] != VK_SUCCESS && ++plan.calls[site] == plan.nth[site]) {
    r = plan.result[site];
    SG_WARN(0, "vulkan: injected %s at %s call %llu (STAGD_VK_FAULT)",
            r == VK_ERROR_DEVICE_LOST ? "VK_ERROR_DEVICE_LOST" : "VK_ERROR_OUT_OF_DEVICE_MEMORY",
            site_names[site], (unsigned long long)plan.nth[site]);
  }
  pthread_mutex_unlock(&plan_lock);
  return r;
}
