// SPDX-License-Identifier: Apache-2.0
/*
 * wire_check.c — what a binary request must pass before protobuf-c unpacks it
 * (sv_wire_check, sv.h): a walk over the wire bytes guided by the message descriptors.
 */
#include <stdio.h>
#include <string.h>

#include "sv.h"

/* Walks the wire bytes of a request before protobuf-c unpacks them and refuses what
 * would be unsafe or silently changed: field number 0, messages nested more than
 * SV_MAX_MESSAGE_DEPTH deep, string fields that are not UTF-8 (proto3 requires it; the
 * Python client could not decode a reply echoing them) or hold a NUL (protobuf-c stores
 * strings NUL-terminated, so the string would be cut short). Writes the problem to why and
 * returns false. Malformed input is left to the unpacker (true). The recursion is
 * bounded by the depth limit. */
static bool check_at(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, int depth, char *why,
                     size_t cap) {
  if (depth >= SV_MAX_MESSAGE_DEPTH) {
    snprintf(why, cap, "messages nested more than %d deep (inside %s)", SV_MAX_MESSAGE_DEPTH, d->name);
    return false;
  }
  size_t i = 0;
  while (i < len) {
    uint64_t key = 0;
    for (int shift = 0; i < len && shift < 64; shift += 7) {
      key |= (uint64_t)(p[i] & 0x7f) << shift;
      if (!(p[i++] & 0x80)) break;
    }
    unsigned wire = key & 7;
    uint32_t id = (uint32_t)(key >> 3);
    if (id == 0) {
      /* invalid in protobuf, yet protobuf-c keeps it as an unknown field and then packs
       * bytes it cannot unpack again (found by fuzz_requests) */
      snprintf(why, cap, "field number 0 in %s (not valid protobuf)", d->name);
      return false;
    }
    if (wire == 0) {
      while (i < len && (p[i++] & 0x80)) {
      }
    } else if (wire == 1) {
      i += 8;
    } else if (wire == 5) {
      i += 4;
    } else if (wire == 2) {
      uint64_t n = 0;
      for (int shift = 0; i < len && shift < 64; shift += 7) {
        n |= (uint64_t)(p[i] & 0x7f) << shift;
        if (!(p[i++] & 0x80)) break;
      }
      if (n > len - i) return true;
      const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, id);
      if (f && f->type == PROTOBUF_C_TYPE_STRING) {
        size_t bad;
        if (memchr(p + i, 0, n)) {
          snprintf(why, cap, "string field '%s.%s' contains a NUL character, which stagd does not accept", d->name,
                   f->name);
          return false;
        }
        if (!sg_utf8_valid((const char *)p + i, n, &bad)) {
          snprintf(why, cap, "string field '%s.%s' is not valid UTF-8 (byte %zu of the string)", d->name, f->name,
                   bad);
          return false;
        }
      }
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && !check_at(f->descriptor, p + i, n, depth + 1, why, cap))
        return false;
      i += n;
    } else {
      return true;
    }
  }
  return true;
}

bool sv_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, char *why, size_t cap) {
  return check_at(d, p, len, 0, why, cap);
}
