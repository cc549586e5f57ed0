/* fd_id.h — whether a descriptor libptrec keeps open is still the file it opened.
 *
 * A daemon may close every descriptor it did not open (after a preloaded ptrec_init ran before
 * its main) and the numbers come back for its own files: libptrec must then never send to,
 * ioctl or close them.  A descriptor is remembered with the device and inode it had when
 * libptrec opened it; it is ours while fstat gives the same pair.  (perf events all share one
 * anonymous inode: a perf event the application opened on the same number looks like ours.)
 * ASYNC-SIGNAL-SAFE: only fstat and close. */
#ifndef PTREC_FD_ID_H
#define PTREC_FD_ID_H

#include <sys/types.h>

struct ptrec_fd_id {
	dev_t dev;
	ino_t ino;
	int known;  /* 0: nothing remembered; never matches */
};

/* Remembers what fd is now.  Returns 0, or -1 (id unknown) if fd < 0 or fstat fails. */
int ptrec_fd_id_take(int fd, struct ptrec_fd_id *id);

/* 1 if fd is still the file remembered in id, else 0. */
int ptrec_fd_id_same(int fd, const struct ptrec_fd_id *id);

/* Closes fd only if it is still the file remembered in id; forgets id.  Returns 1 if closed. */
int ptrec_fd_id_close(int fd, struct ptrec_fd_id *id);

#endif
