/* file_open.h — opening an input file for a reader without ever blocking on it: a FIFO, a
 * terminal or a device named as a dump, a trace or an ELF file (on the command line or in a
 * dump's MAPS) is refused at once instead of hanging the tool. */
#ifndef PTREC_FILE_OPEN_H
#define PTREC_FILE_OPEN_H

#include <sys/stat.h>

/* Opens path read-only with O_NONBLOCK|O_NOCTTY|O_CLOEXEC (open never waits for a FIFO's
 * writer), fstat()s it into *st and refuses anything but a regular file.  Returns the
 * descriptor (back in blocking mode), or -1 with errno set: the open's error, or EINVAL for a
 * file that is not regular (ptrec_file_type names what it is). */
int ptrec_open_regular(const char *path, struct stat *st);

/* Names the type in a st_mode: "regular file", "FIFO", "directory", "character device", ... */
const char *ptrec_file_type(mode_t mode);

#endif
