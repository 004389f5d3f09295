/* Whole files. */
#ifndef AIT_IO_FILE_H
#define AIT_IO_FILE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core/status.h"

/* Opens path for reading if it is a regular file; a FIFO, directory or device
 * is refused with a message naming what it is, before any read can block. */
ait_status file_open_regular(const char *path, int *fd, struct stat *st, ait_error *e);
/* Reads exactly n bytes from fd (path names it in errors). */
ait_status file_read_fd(int fd, uint8_t *buf, size_t n, const char *path, ait_error *e);
/* Reads a whole file into memory (caller frees). Fails past max_bytes. */
ait_status file_read_all(const char *path, size_t max_bytes, uint8_t **buf, size_t *len,
                         ait_error *e);
#endif
