// SPDX-License-Identifier: Apache-2.0
/*
 * npz.h — private to server/: NumPy .npz archives (the checkpoint format) as tensors,
 * for the variables of exported models (npz.c).
 */
#ifndef STAGD_SERVER_NPZ_H
#define STAGD_SERVER_NPZ_H

#include "kn.h"
#include "sg.h"

typedef struct sv_npz {
  size_t n;
  char **names;         /* member names without ".npy" */
  kn_tensor **tensors;  /* owned */
} sv_npz;

/* Reads every member of the archive at path. Errors (INVALID_ARGUMENT) name the file
 * and the member. */
sg_code sv_npz_read(const char *path, sv_npz *out, sg_error *err);
/* The tensor named `name` (borrowed), or NULL. */
kn_tensor *sv_npz_find(const sv_npz *z, const char *name);
void sv_npz_free(sv_npz *z);

#endif /* STAGD_SERVER_NPZ_H */
