// SPDX-License-Identifier: Apache-2.0
/*
 * instance.c — the Vulkan loader (through volk, loaded at run time), the process-wide
 * VkInstance, device enumeration and the `--device` selection policy.
 *
 * The instance is created once, lazily, and shared by every context; a missing loader
 * or driver is remembered as an SG_UNAVAILABLE error so repeated calls are cheap.
 * kn_vk_shutdown destroys it (tests call it so leak checkers stay quiet).
 */
#define VOLK_IMPLEMENTATION
#include "vk_internal.h"
#include "vk_coop_khr.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;
static bool instance_tried;
static VkInstance instance_handle;
static sg_code instance_code;
static char instance_message[256];
static uint32_t instance_api; /* the apiVersion the instance was created with */
/* The physical devices, described once per instance: they do not change while it lives,
 * and describing them (extension lists, feature queries) costs more than a small
 * request's whole run. */
static kn_vk_device_info *described;
static VkPhysicalDevice *described_pd; /* the handles, same order */
static size_t described_count;

sg_code kn_vk_check(VkResult r, sg_error *err, const char *what) {
  switch (r) {
  case VK_SUCCESS: return SG_OK;
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "vulkan: out of device memory (%s)", what);
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "vulkan: driver out of host memory (%s)", what);
  case VK_ERROR_DEVICE_LOST:
    return sg_error_set(err, SG_UNAVAILABLE, "vulkan: device lost (%s)", what);
  case VK_TIMEOUT:
    return sg_error_set(err, SG_DEADLINE_EXCEEDED, "vulkan: deadline exceeded (%s)", what);
  case VK_ERROR_INITIALIZATION_FAILED:
  case VK_ERROR_INCOMPATIBLE_DRIVER:
    return sg_error_set(err, SG_UNAVAILABLE, "vulkan: no usable driver (%s: VkResult %d)", what,
                        (int)r);
  default: return sg_error_set(err, SG_INTERNAL, "vulkan: %s failed (VkResult %d)", what, (int)r);
  }
}

static sg_code instance_create(void) {
  if (volkInitialize() != VK_SUCCESS) {
    snprintf(instance_message, sizeof instance_message,
             "vulkan: no Vulkan loader (libvulkan.so.1) found");
    return SG_UNAVAILABLE;
  }
  uint32_t version = volkGetInstanceVersion();
  if (version < VK_API_VERSION_1_1) {
    snprintf(instance_message, sizeof instance_message,
             "vulkan: loader version %u.%u is older than 1.1", VK_API_VERSION_MAJOR(version),
             VK_API_VERSION_MINOR(version));
    return SG_UNAVAILABLE;
  }
  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "stagd",
      .applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0),
      .pEngineName = "stagd",
      .apiVersion = version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1,
  };
  instance_api = app.apiVersion;
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app};
  VkResult r = vkCreateInstance(&ci, NULL, &instance_handle);
  if (r != VK_SUCCESS) {
    snprintf(instance_message, sizeof instance_message,
             "vulkan: cannot create an instance (VkResult %d): no usable driver", (int)r);
    instance_handle = VK_NULL_HANDLE;
    return SG_UNAVAILABLE;
  }
  volkLoadInstanceOnly(instance_handle);
  return SG_OK;
}

sg_code kn_vk_instance_get(VkInstance *out, sg_error *err) {
  pthread_mutex_lock(&instance_lock);
  if (!instance_tried) {
    instance_tried = true;
    instance_code = instance_create();
  }
  sg_code code = instance_code;
  *out = instance_handle;
  pthread_mutex_unlock(&instance_lock);
  if (code != SG_OK)
    return sg_error_set(err, code, "%s", instance_message);
  return SG_OK;
}

bool kn_vk_features12(uint32_t device_api) {
  return instance_api >= VK_API_VERSION_1_2 && device_api >= VK_API_VERSION_1_2;
}

bool kn_vk_subgroup_usable(const kn_vk_device_info *d) {
  return d->subgroup_arithmetic && d->subgroup_size >= 4 && d->subgroup_size <= 128;
}

void kn_vk_shutdown(void) {
  pthread_mutex_lock(&instance_lock);
  if (instance_handle != VK_NULL_HANDLE)
    vkDestroyInstance(instance_handle, NULL);
  instance_handle = VK_NULL_HANDLE;
  free(described);
  free(described_pd);
  described = NULL;
  described_pd = NULL;
  described_count = 0;
  instance_tried = false;
  instance_code = SG_OK;
  pthread_mutex_unlock(&instance_lock);
}

const char *kn_vk_device_type_name(kn_vk_device_type t) {
  switch (t) {
  case KN_VK_DEVICE_INTEGRATED_GPU: return "integrated";
  case KN_VK_DEVICE_DISCRETE_GPU: return "discrete";
  case KN_VK_DEVICE_VIRTUAL_GPU: return "virtual";
  case KN_VK_DEVICE_CPU: return "cpu";
  default: return "other";
  }
}

static const char *vendor_name(uint32_t id) {
  switch (id) {
  case 0x10DE: return "NVIDIA";
  case 0x1002:
  case 0x1022: return "AMD";
  case 0x8086: return "Intel";
  case 0x13B5: return "ARM";
  case 0x5143: return "Qualcomm";
  case 0x1010: return "ImgTec";
  case 0x106B: return "Apple";
  case 0x10005: return "Mesa";
  case 0x1AE0: return "Google";
  default: return "unknown";
  }
}

static bool has_extension(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *props = sg_xcalloc(n, sizeof *props);
  bool found = false;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(props[i].extensionName, name) == 0;
  free(props);
  return found;
}

/* The cooperative-matrix shapes the device lists through VK_NV_cooperative_matrix: a
 float32 x float32 -> float32 one (*f32), and the 16x16x16 float16 x float16 -> float32
 subgroup shape of matmul_coop (*f16). */
static void coopmat_shapes(VkPhysicalDevice pd, bool *f32, bool *f16) {
  *f32 = *f16 = false;
  if (!has_extension(pd, "VK_NV_cooperative_matrix") ||
      !vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)
    return;
  uint32_t n = 0;
  if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, NULL) != VK_SUCCESS || n == 0)
    return;
  VkCooperativeMatrixPropertiesNV *props = calloc(n, sizeof *props);
  if (!props)
    return;
  for (uint32_t i = 0; i < n; i++)
    props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n; i++) {
      const VkCooperativeMatrixPropertiesNV *p = &props[i];
      *f32 = *f32 || (p->AType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                      p->BType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                      p->DType == VK_COMPONENT_TYPE_FLOAT32_NV);
      *f16 = *f16 || (p->MSize == 16 && p->NSize == 16 && p->KSize == 16 &&
                      p->scope == VK_SCOPE_SUBGROUP_NV &&
                      p->AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                      p->BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                      p->CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                      p->DType == VK_COMPONENT_TYPE_FLOAT32_NV);
    }
  free(props);
}

/* Whether VK_KHR_cooperative_matrix lists the 16x16x16 float16 x float16 -> float32
 subgroup shape of matmul_coop_khr (*f16), and a float32 x float32 -> float32 one (*f32
 is or-ed in). The query is not in Debian 12's headers: vk_coop_khr.h defines it and it
 is fetched with vkGetInstanceProcAddr. */
static void coopmat_shapes_khr(VkPhysicalDevice pd, bool *f32, bool *f16) {
  *f16 = false;
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR query =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)vkGetInstanceProcAddr(
          instance_handle, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  uint32_t n = 0;
  if (!query || !has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) ||
      query(pd, &n, NULL) != VK_SUCCESS || n == 0)
    return;
  VkCooperativeMatrixPropertiesKHR *props = calloc(n, sizeof *props);
  if (!props)
    return;
  for (uint32_t i = 0; i < n; i++)
    props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  if (query(pd, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n; i++) {
      const VkCooperativeMatrixPropertiesKHR *p = &props[i];
      *f32 = *f32 || (p->AType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                      p->BType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                      p->ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR);
      *f16 = *f16 || (p->MSize == 16 && p->NSize == 16 && p->KSize == 16 &&
                      p->scope == VK_SCOPE_SUBGROUP_KHR &&
                      p->AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
                      p->BType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
                      p->CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                      p->ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                      !p->saturatingAccumulation);
    }
  free(props);
}

/* Optional features of the typed kernels: shaderFloat64/Int64, float16 storage and
 * arithmetic, subgroup ops on extended types, and what matmul_coop (NV) and
 * matmul_coop_khr (KHR) need. */
static void describe_features(VkPhysicalDevice pd, uint32_t api, kn_vk_device_info *info) {
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &v12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  bool nv_coop = has_extension(pd, "VK_NV_cooperative_matrix");
  bool khr_coop = has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (kn_vk_features12(api)) {
    f2.pNext = &v11;
    void **tail = &v12.pNext;
    if (nv_coop) {
      *tail = &coop;
      tail = &coop.pNext;
    }
    if (khr_coop)
      *tail = &coop_khr;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
  } else {
    vkGetPhysicalDeviceFeatures(pd, &f2.features);
  }
  info->float64 = f2.features.shaderFloat64 == VK_TRUE;
  info->int64 = f2.features.shaderInt64 == VK_TRUE;
  info->float16 = v12.shaderFloat16 && v11.storageBuffer16BitAccess;
  info->subgroup_extended_types = v12.shaderSubgroupExtendedTypes == VK_TRUE;
  bool f16_shape;
  coopmat_shapes(pd, &info->cooperative_matrix_f32, &f16_shape);
  info->cooperative_matrix_f16 =
      f16_shape && coop.cooperativeMatrix && v12.vulkanMemoryModel && info->float16;
  coopmat_shapes_khr(pd, &info->cooperative_matrix_f32, &f16_shape);
  info->cooperative_matrix_khr_f16 =
      f16_shape && coop_khr.cooperativeMatrix && v12.vulkanMemoryModel && info->float16;
}

static void describe(VkPhysicalDevice pd, int index, kn_vk_device_info *info) {
  memset(info, 0, sizeof *info);
  info->index = index;
  VkPhysicalDeviceSubgroupProperties sub = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties drv = {.sType =
                                              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sub};
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(pd, &base);
  bool have_driver_props = base.apiVersion >= VK_API_VERSION_1_2 ||
                           has_extension(pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (have_driver_props)
    sub.pNext = &drv;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  const VkPhysicalDeviceProperties *p = &p2.properties;

  snprintf(info->name, sizeof info->name, "%s", p->deviceName);
  switch (p->deviceType) {
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: info->type = KN_VK_DEVICE_INTEGRATED_GPU; break;
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: info->type = KN_VK_DEVICE_DISCRETE_GPU; break;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: info->type = KN_VK_DEVICE_VIRTUAL_GPU; break;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: info->type = KN_VK_DEVICE_CPU; break;
  default: info->type = KN_VK_DEVICE_OTHER; break;
  }
  info->vendor_id = p->vendorID;
  info->vendor_name = vendor_name(p->vendorID);
  info->device_id = p->deviceID;
  info->api_version = p->apiVersion;
  memcpy(info->uuid, p->pipelineCacheUUID, sizeof info->uuid);
  if (have_driver_props) {
    snprintf(info->driver_name, sizeof info->driver_name, "%s", drv.driverName);
    snprintf(info->driver_info, sizeof info->driver_info, "%s", drv.driverInfo);
  }

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  info->heap_count =
      (int)(mem.memoryHeapCount < KN_VK_MAX_HEAPS ? mem.memoryHeapCount : KN_VK_MAX_HEAPS);
  for (int i = 0; i < info->heap_count; i++) {
    info->heap_size[i] = mem.memoryHeaps[i].size;
    info->heap_device_local[i] = mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    if (info->heap_device_local[i])
      info->device_local_bytes += mem.memoryHeaps[i].size;
  }
  const VkMemoryPropertyFlags unified = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < mem.memoryTypeCount; i++)
    if ((mem.memoryTypes[i].propertyFlags & unified) == unified)
      info->unified_memory = true;

  info->subgroup_size = sub.subgroupSize;
  info->subgroup_arithmetic = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                              (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                              (sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
  info->cooperative_matrix = has_extension(pd, "VK_KHR_cooperative_matrix") ||
                             has_extension(pd, "VK_NV_cooperative_matrix");
  describe_features(pd, p->apiVersion, info);
  for (int i = 0; i < 3; i++) {
    info->max_workgroup_size[i] = p->limits.maxComputeWorkGroupSize[i];
    info->max_workgroup_count[i] = p->limits.maxComputeWorkGroupCount[i];
  }
  info->max_workgroup_invocations = p->limits.maxComputeWorkGroupInvocations;
  info->max_shared_memory_bytes = p->limits.maxComputeSharedMemorySize;
  info->max_storage_buffer_range = p->limits.maxStorageBufferRange;
  info->max_push_constants_bytes = p->limits.maxPushConstantsSize;
}

/* Describes every physical device of `inst` into described/described_count; called
 * once, under instance_lock. */
static sg_code describe_all(VkInstance inst, sg_error *err) {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(inst, &n, NULL);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return kn_vk_check(r, err, "vkEnumeratePhysicalDevices");
  VkPhysicalDevice *pds = sg_xcalloc(n ? n : 1, sizeof *pds);
  r = n ? vkEnumeratePhysicalDevices(inst, &n, pds) : VK_SUCCESS;
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(pds);
    return kn_vk_check(r, err, "vkEnumeratePhysicalDevices");
  }
  described = sg_xcalloc(n ? n : 1, sizeof *described);
  for (uint32_t i = 0; i < n; i++)
    describe(pds[i], (int)i, &described[i]);
  described_pd = pds;
  described_count = n;
  return SG_OK;
}

/* The instance, with its devices described (instance_lock held on SG_OK). */
static sg_code described_locked(VkInstance *inst, sg_error *err) {
  sg_code code = kn_vk_instance_get(inst, err);
  if (code != SG_OK)
    return code;
  pthread_mutex_lock(&instance_lock);
  if (!described && *inst == instance_handle)
    code = describe_all(*inst, err);
  if (code != SG_OK)
    pthread_mutex_unlock(&instance_lock);
  return code;
}

sg_code kn_vk_physical(int index, VkInstance *inst, VkPhysicalDevice *pd, kn_vk_device_info *info,
                       sg_error *err) {
  sg_code code = described_locked(inst, err);
  if (code != SG_OK)
    return code;
  size_t n = described_count;
  if (index >= 0 && (size_t)index < n) {
    *pd = described_pd[index];
    *info = described[index];
  }
  pthread_mutex_unlock(&instance_lock);
  if (index < 0 || (size_t)index >= n)
    return sg_error_set(err, SG_NOT_FOUND, "device vulkan:%d not found: %zu Vulkan device%s",
                        index, n, n == 1 ? "" : "s");
  return SG_OK;
}

sg_code kn_vk_enumerate(kn_vk_device_info **out, size_t *count, sg_error *err) {
  *out = NULL;
  *count = 0;
  VkInstance inst;
  sg_code code = described_locked(&inst, err);
  if (code != SG_OK)
    return code;
  if (described_count > 0) {
    *out = sg_xcalloc(described_count, sizeof **out);
    memcpy(*out, described, described_count * sizeof **out);
    *count = described_count;
  }
  pthread_mutex_unlock(&instance_lock);
  return code;
}

int kn_vk_pick_auto(const kn_vk_device_info *devs, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (devs[i].type == KN_VK_DEVICE_DISCRETE_GPU)
      return (int)i;
  for (size_t i = 0; i < count; i++)
    if (devs[i].type == KN_VK_DEVICE_INTEGRATED_GPU)
      return (int)i;
  return -1;
}

/* "vulkan" alone: any device, GPUs first, so a machine with only lavapipe still
 * honours an explicit request for Vulkan. */
static int pick_any(const kn_vk_device_info *devs, size_t count) {
  int best = kn_vk_pick_auto(devs, count);
  if (best >= 0)
    return best;
  for (size_t i = 0; i < count; i++)
    if (devs[i].type == KN_VK_DEVICE_VIRTUAL_GPU)
      return (int)i;
  return count > 0 ? 0 : -1;
}

sg_code kn_vk_choose_device(const char *spec, int *vulkan_index, sg_error *err) {
  *vulkan_index = -1;
  if (spec == NULL || strcmp(spec, "auto") == 0) {
    kn_vk_device_info *devs;
    size_t n;
    sg_error e = SG_ERROR_INIT;
    if (kn_vk_enumerate(&devs, &n, &e) != SG_OK) {
      SG_INFO(0, "device auto: %s; using the CPU backend", e.message);
      sg_error_clear(&e);
      return SG_OK;
    }
    *vulkan_index = kn_vk_pick_auto(devs, n);
    if (*vulkan_index < 0)
      SG_INFO(0, "device auto: no discrete or integrated Vulkan GPU; using the CPU backend");
    else
      SG_INFO(0, "device auto: vulkan:%d (%s)", *vulkan_index, devs[*vulkan_index].name);
    free(devs);
    return SG_OK;
  }
  if (strcmp(spec, "cpu") == 0)
    return SG_OK;
  long want = -2; /* -2: "vulkan" without an index */
  if (strncmp(spec, "vulkan", 6) != 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "bad device '%s': expected auto, cpu, vulkan or vulkan:N", spec);
  const char *rest = spec + 6;
  if (*rest == ':') {
    char *end;
    if (!isdigit((unsigned char)rest[1]))
      return sg_error_set(err, SG_INVALID_ARGUMENT, "bad device '%s': expected vulkan:N", spec);
    want = strtol(rest + 1, &end, 10);
    if (*end != '\0' || want > 1000000)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "bad device '%s': expected vulkan:N", spec);
  } else if (*rest != '\0') {
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "bad device '%s': expected auto, cpu, vulkan or vulkan:N", spec);
  }
  kn_vk_device_info *devs;
  size_t n;
  sg_code code = kn_vk_enumerate(&devs, &n, err);
  if (code != SG_OK)
    return code;
  if (want == -2) {
    *vulkan_index = pick_any(devs, n);
    free(devs);
    if (*vulkan_index < 0)
      return sg_error_set(err, SG_NOT_FOUND, "device 'vulkan': no Vulkan device found");
    return SG_OK;
  }
  free(devs);
  if ((size_t)want >= n)
    return sg_error_set(err, SG_NOT_FOUND, "device '%s' not found: %zu Vulkan device%s", spec, n,
                        n == 1 ? "" : "s");
  *vulkan_index = (int)want;
  return SG_OK;
}
