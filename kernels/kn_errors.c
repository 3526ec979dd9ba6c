// SPDX-License-Identifier: Apache-2.0
/*
 * kn_errors.c — the error families a client catches by type (sg_reason): one function
 * per family, so each wording lives here once and every site that finds the condition
 * (shape inference, the CPU kernels, the Vulkan executor) sets the same reason. The
 * Python client maps the reasons to stagd.IndexOutOfBounds (an IndexError) and
 * stagd.ShapeMismatch (a ValueError); docs/api.md "Error reasons".
 */
#include "kn.h"

sg_code kn_err_axis(sg_error *err, const char *op, int64_t axis, int ndim) {
  return sg_error_set_reason(err, SG_REASON_INDEX_OUT_OF_BOUNDS, SG_INVALID_ARGUMENT,
                             "%s%saxis %lld is out of bounds for a %d-d tensor", op ? op : "",
                             op ? ": " : "", (long long)axis, ndim);
}

sg_code kn_err_index(sg_error *err, const char *op, int64_t index, int axis, int64_t size) {
  return sg_error_set_reason(err, SG_REASON_INDEX_OUT_OF_BOUNDS, SG_INVALID_ARGUMENT,
                             "%s: index %lld is out of bounds for axis %d with size %lld", op,
                             (long long)index, axis, (long long)size);
}

sg_code kn_err_tuple_index(sg_error *err, int64_t index, int len) {
  return sg_error_set_reason(err, SG_REASON_INDEX_OUT_OF_BOUNDS, SG_INVALID_ARGUMENT,
                             "getitem: tuple index %lld out of range (length %d)", (long long)index,
                             len);
}

sg_code kn_err_misaligned(sg_error *err, const char *op, int an, const int64_t *as, int bn,
                          const int64_t *bs, int trans, int64_t k, int64_t kb) {
  sg_buf m = SG_BUF_INIT;
  sg_buf_printf(&m, "%s: shapes ", op);
  kn_put_shape(&m, an, as);
  sg_buf_puts(&m, trans & KN_MATMUL_TRANS_A ? " (transposed) and " : " and ");
  kn_put_shape(&m, bn, bs);
  sg_buf_puts(&m, trans & KN_MATMUL_TRANS_B ? " (transposed)" : "");
  sg_buf_printf(&m, " do not align (%lld != %lld)", (long long)k, (long long)kb);
  sg_error_set_reason(err, SG_REASON_SHAPE_MISMATCH, SG_INVALID_ARGUMENT, "%s", m.data);
  sg_buf_free(&m);
  return SG_INVALID_ARGUMENT;
}

sg_code kn_err_broadcast(sg_error *err, const char *op, int an, const int64_t *as, int bn,
                         const int64_t *bs) {
  sg_buf m = SG_BUF_INIT;
  if (op) sg_buf_printf(&m, "%s: ", op);
  sg_buf_puts(&m, "shapes ");
  kn_put_shape(&m, an, as);
  sg_buf_puts(&m, " and ");
  kn_put_shape(&m, bn, bs);
  sg_buf_puts(&m, " cannot be broadcast together");
  sg_error_set_reason(err, SG_REASON_SHAPE_MISMATCH, SG_INVALID_ARGUMENT, "%s", m.data);
  sg_buf_free(&m);
  return SG_INVALID_ARGUMENT;
}

sg_code kn_slice_misfit(sg_error *err, int vn, const int64_t *vshape, int sn, const int64_t *sshape) {
  sg_buf m = SG_BUF_INIT;
  sg_buf_puts(&m, "slice_update: could not broadcast a value of shape ");
  kn_put_shape(&m, vn, vshape);
  sg_buf_puts(&m, " into a slice of shape ");
  kn_put_shape(&m, sn, sshape);
  sg_error_set_reason(err, SG_REASON_SHAPE_MISMATCH, SG_INVALID_ARGUMENT, "%s", m.data);
  sg_buf_free(&m);
  return SG_INVALID_ARGUMENT;
}
