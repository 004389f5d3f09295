/* Whole files. */
#ifndef AIT_IO_FILE_H
#define AIT_IO_FILE_H
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Reads a whole file into memory (caller frees). Fails past max_bytes. */
ait_status file_read_all(const char *path, size_t max_bytes, uint8_t **buf, size_t *len,
                         ait_error *e);
#endif
