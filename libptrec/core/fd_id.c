/* fd_id.c — whether a descriptor libptrec keeps open is still the file it opened (fd_id.h).
 * ASYNC-SIGNAL-SAFE: only fstat and close. */
#include "config.h"

#include <sys/stat.h>
#include <unistd.h>

#include "core/fd_id.h"

int ptrec_fd_id_take(int fd, struct ptrec_fd_id *id)
{
	struct stat st;
	id->known = 0;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->known = 1;
	return 0;
}

int ptrec_fd_id_same(int fd, const struct ptrec_fd_id *id)
{
	struct stat st;
	return fd >= 0 && id->known && fstat(fd, &st) == 0 && st.st_dev == id->dev &&
	       st.st_ino == id->ino;
}

int ptrec_fd_id_close(int fd, struct ptrec_fd_id *id)
{
	int same = ptrec_fd_id_same(fd, id);
	id->known = 0;
	return same && close(fd) == 0;
}
