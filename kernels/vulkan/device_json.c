// SPDX-License-Identifier: Apache-2.0
/*
 * device_json.c — one kn_vk_device_info as a JSON object, for `stagctl devices`,
 * ListDevices details and logs. Keys are stable; new ones may be added.
 */
#include "kn_vulkan.h"

#include <stdio.h>
#include <string.h>

void kn_vk_device_info_json(const kn_vk_device_info *d, sg_buf *out) {
  char name[32];
  snprintf(name, sizeof name, "vulkan:%d", d->index);
  sg_buf_puts(out, "{\"name\":");
  sg_buf_put_json_string(out, name, strlen(name));
  sg_buf_puts(out, ",\"description\":");
  sg_buf_put_json_string(out, d->name, strlen(d->name));
  sg_buf_printf(out, ",\"type\":\"%s\",\"vendor\":", kn_vk_device_type_name(d->type));
  const char *vendor = d->vendor_name ? d->vendor_name : "unknown";
  sg_buf_put_json_string(out, vendor, strlen(vendor));
  sg_buf_printf(out, ",\"vendor_id\":%u,\"device_id\":%u,\"driver\":", d->vendor_id, d->device_id);
  sg_buf_put_json_string(out, d->driver_name, strlen(d->driver_name));
  sg_buf_puts(out, ",\"driver_info\":");
  sg_buf_put_json_string(out, d->driver_info, strlen(d->driver_info));
  /* VK_API_VERSION_MAJOR/MINOR/PATCH, spelled out to keep Vulkan headers out of here */
  sg_buf_printf(out, ",\"api_version\":\"%u.%u.%u\"", (d->api_version >> 22) & 0x7fu,
                (d->api_version >> 12) & 0x3ffu, d->api_version & 0xfffu);
  sg_buf_printf(out, ",\"memory_bytes\":%llu,\"unified_memory\":%s,\"heaps\":[",
                (unsigned long long)d->device_local_bytes, d->unified_memory ? "true" : "false");
  for (int i = 0; i < d->heap_count; i++)
    sg_buf_printf(out, "%s{\"bytes\":%llu,\"device_local\":%s}", i ? "," : "",
                  (unsigned long long)d->heap_size[i], d->heap_device_local[i] ? "true" : "false");
  sg_buf_printf(out,
                "],\"subgroup_size\":%u,\"subgroup_arithmetic\":%s,\"cooperative_matrix\":%s,"
                "\"cooperative_matrix_f32\":%s,"
                "\"max_workgroup_size\":[%u,%u,%u],\"max_workgroup_invocations\":%u,"
                "\"max_shared_memory_bytes\":%u,\"max_storage_buffer_bytes\":%llu}",
                d->subgroup_size, d->subgroup_arithmetic ? "true" : "false",
                d->cooperative_matrix ? "true" : "false",
                d->cooperative_matrix_f32 ? "true" : "false", d->max_workgroup_size[0],
                d->max_workgroup_size[1], d->max_workgroup_size[2], d->max_workgroup_invocations,
                d->max_shared_memory_bytes, (unsigned long long)d->max_storage_buffer_range);
  /* drop the closing brace to add the feature flags and kernel choices */
  out->len--;
  sg_buf_printf(out, ",\"cooperative_matrix_f16\":%s,\"float16\":%s,\"subgroup_extended_types\":%s"
                     ",\"cooperative_matrix_khr_f16\":%s",
                d->cooperative_matrix_f16 ? "true" : "false", d->float16 ? "true" : "false",
                d->subgroup_extended_types ? "true" : "false",
                d->cooperative_matrix_khr_f16 ? "true" : "false");
  kn_vk_matmul_plan mp = kn_vk_matmul_choice(NULL, KN_VK_F32, d, KN_VK_MATMUL_AUTO);
  sg_buf_printf(out, ",\"kernels\":{\"reduce\":\"%s\",\"softmax\":\"%s\",\"matmul\":\"%s\","
                     "\"matmul_reason\":",
                d->subgroup_arithmetic ? "reduce_subgroup" : "reduce",
                d->subgroup_arithmetic ? "softmax_subgroup" : "softmax", mp.kernel);
  sg_buf_put_json_string(out, mp.reason, strlen(mp.reason));
  const char *coop_kernel, *coop_reason;
  kn_vk_coop_choice(d, KN_VK_COOP_AUTO, &coop_kernel, &coop_reason);
  if (coop_kernel)
    sg_buf_printf(out, ",\"coop\":\"%s\"", coop_kernel);
  else
    sg_buf_puts(out, ",\"coop\":null");
  sg_buf_puts(out, ",\"coop_reason\":");
  sg_buf_put_json_string(out, coop_reason, strlen(coop_reason));
  /* per variant, the element types it runs on this device */
  static const struct {
    kn_vk_elem et;
    const char *name;
  } dts[] = {{KN_VK_F32, "float32"}, {KN_VK_F64, "float64"}, {KN_VK_I32, "int32"},
             {KN_VK_I64, "int64"},   {KN_VK_F16, "float16"}};
  sg_buf_puts(out, ",\"matmul_variants\":{");
  for (int v = KN_VK_MATMUL_TILED; v < KN_VK_MATMUL_NVARIANTS; v++) {
    sg_buf_printf(out, "%s\"%s\":[", v == KN_VK_MATMUL_TILED ? "" : ",",
                  kn_vk_matmul_variant_name((kn_vk_matmul_variant)v));
    bool first = true;
    for (size_t i = 0; i < sizeof dts / sizeof *dts; i++)
      if (kn_vk_matmul_available(d, dts[i].et, (kn_vk_matmul_variant)v, NULL)) {
        sg_buf_printf(out, "%s\"%s\"", first ? "" : ",", dts[i].name);
        first = false;
      }
    sg_buf_putc(out, ']');
  }
  sg_buf_puts(out, "}}}");
}
