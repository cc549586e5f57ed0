/* new_root.c — what the crash path keeps of a process that changed its root directory after
 * ptrec_init (chroot: vsftpd, postfix, bind, OpenSSH's privilege separation).
 *
 * ASYNC-SIGNAL-SAFE ISLAND for everything the crash path calls here (ptrec_root_*): only
 * open/close/fstat/stat and raw syscalls on static buffers.  ptrec_root_note is called by the
 * interposed chroot (runtime/chroot_interpose.c), outside any signal handler.
 *
 * The new root rarely holds /proc, the report tool, or the ELF files the report reads: the
 * dump would lack its maps and program (a report placing nothing), and no report can run.  So,
 * before the first chroot, /proc/self/maps is opened and kept (a file, not a directory: it
 * opens no way out of the new root; reading it again from offset 0 gives the maps of that
 * moment) and the program's path remembered.  The host's path of the new root is remembered
 * too: the crash line names files as the host sees them, and configured places under the new
 * root (PTREC_DIR=/srv/jail/crash with chroot /srv/jail) are found inside it.  A directory
 * descriptor of the old root or of /proc would let the report escape the new root, and so
 * would anything in the application: none is kept.  Not even /proc/self/task for the other
 * threads' comm and syscall files: ".." from it leads to the host's files (tests/crash/
 * test_crash_chroot.sh checks that no descriptor does), so in a new root without /proc those
 * stay unread (names '-', TASK records unreadable). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/fd_id.h"
#include "core/safe_str.h"
#include "crash/crash.h"

static int maps_fd = -1;              /* /proc/self/maps, opened before the first chroot */
static struct ptrec_fd_id maps_id;    /* the application may close it and reuse the number */
static char exe[PTREC_PATH_MAX];      /* the program's path before the first chroot */
static char root[PTREC_PATH_MAX];     /* the new root as the host sees it, "" if unknown */
static dev_t root_dev;                /* "/" at ptrec_init */
static ino_t root_ino;
static int root_known;                /* root_dev and root_ino are set */

void ptrec_root_prepare(void)
{
	struct stat st;
	root_known = stat("/", &st) == 0;
	root_dev = root_known ? st.st_dev : 0;
	root_ino = root_known ? st.st_ino : 0;
}

void ptrec_root_note(const char *host_root, int changed)
{
	if (!changed) {
		if (!ptrec_fd_id_same(maps_fd, &maps_id))
			maps_fd = -1;
		if (maps_fd < 0) {
			maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
			ptrec_fd_id_take(maps_fd, &maps_id);
		}
		if (!exe[0])
			ptrec_self_exe(exe, sizeof(exe));
		return;
	}
	/* "/" is no change of place; a root the host cannot name is unknown. */
	if (!host_root || strcmp(host_root, "/") == 0 || strlen(host_root) >= sizeof(root))
		root[0] = '\0';
	else
		ptrec_strlcpy(root, host_root, sizeof(root));
}

const char *ptrec_root_host(void)
{
	return root;
}

int ptrec_root_changed(void)
{
	struct stat st;
	if (root[0])
		return 1;
	return root_known && stat("/", &st) == 0 && (st.st_dev != root_dev || st.st_ino != root_ino);
}

const char *ptrec_root_inside(const char *path)
{
	size_t n = strlen(root);
	if (n && path && strncmp(path, root, n) == 0 && path[n] == '/')
		return path + n;
	return path;
}

long ptrec_root_pread_maps(char *buf, size_t cap, size_t off)
{
	if (!ptrec_fd_id_same(maps_fd, &maps_id)) {
		errno = EBADF;
		return -1;
	}
	return syscall(SYS_pread64, maps_fd, buf, cap, (long)off);
}

const char *ptrec_root_exe(void)
{
	return exe;
}
