/* NumPy .npy and .npz files. */
#ifndef AIT_IO_NPY_H
#define AIT_IO_NPY_H
#include <unistd.h>

#include "core/tensor.h"

/* A .npy header: the array it declares and where its data starts. */
typedef struct npy_info {
    ait_dtype dtype;
    int rank;
    int64_t dims[AIT_MAX_RANK], numel;
    long uw;                /* unicode: code points per element */
    size_t data_off, bytes; /* data_off + bytes is checked not to overflow */
} npy_info;
/* Parses the header at the start of buf (len may be a prefix of the image). */
ait_status npy_header(const uint8_t *buf, size_t len, npy_info *o, const char *what, ait_error *e);
/* The most a .npy header can take: magic, version, length, 64 KiB of dict. */
#define NPY_HEAD_MAX (12 + 65536)
/* An array that declares more than max_bytes of data (0: no limit) is
 * refused (AIT_E_OVERFLOW) with its declared size and the limit. */
ait_status npy_check_limit(const npy_info *h, size_t max_bytes, const char *what, ait_error *e);
/* Parses a whole .npy image: data shorter or longer than declared is an error; `what` names it in messages. */
ait_status npy_parse(const uint8_t *buf, size_t len, tensor **out, const char *what, ait_error *e);
/* The same, refusing an array over max_bytes (0: no limit) before allocating it. */
ait_status npy_parse_max(const uint8_t *buf, size_t len, size_t max_bytes, tensor **out,
                         const char *what, ait_error *e);
/* Serialises t as a .npy image (caller frees *out). */
ait_status npy_serialise(const tensor *t, uint8_t **out, size_t *len, ait_error *e);

/* A .npz archive's arrays. Names drop the ".npy" suffix. */
typedef struct npz {
    int n;
    char **names;
    tensor **arrays;
} npz;
ait_status npz_load(const char *path, npz **out, ait_error *e);
/* The same, refusing an entry whose array declares more than max_bytes (0:
 * no limit) before allocating or inflating it. The archive is not read
 * whole: its directory (within its size on disk), then each entry read or
 * inflated straight into its tensor. */
ait_status npz_load_max(const char *path, size_t max_bytes, npz **out, ait_error *e);
/* Writes arrays (stored, uncompressed) atomically. */
ait_status npz_save(const char *path, int n, const char *const *names, const tensor *const *arrays,
                    ait_error *e);
void npz_free(npz *z);

#endif
