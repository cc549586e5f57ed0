/* upload_state.c — the upload state kept beside each dump, or in the state directory
 * (upload.h).  The dump itself is only ever read. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool/tool.h"
#include "tool/upload.h"

#define STATE_MAX 16384 /* a state file is a few hundred bytes */

void upload_escape(const char *text, size_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!cap)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		char e[5];
		size_t n = 0;
		if (c == '\n') {
			e[n++] = '\\';
			e[n++] = 'n';
		} else if (c < 0x20 || c >= 0x7f || c == '\\') {
			e[n++] = '\\';
			e[n++] = 'x';
			e[n++] = hex[c >> 4];
			e[n++] = hex[c & 15];
		} else {
			e[n++] = (char)c;
		}
		if (o + n + 4 > cap) { /* room for "..." and the NUL */
			if (cap >= 4) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(out + o, e, n);
		o += n;
	}
	out[o < cap ? o : cap - 1] = '\0';
}

/* FNV-1a, 64 bits: names a directory's states in the state directory. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int name_files(const char *dump, const char *state_dir, struct upload_state_file *f)
{
	char copy[UPLOAD_PATH_MAX], real[PATH_MAX];
	const char *dir, *base;
	int n;

	memset(f, 0, sizeof(*f));
	f->tmp_fd = -1;
	n = snprintf(f->beside, sizeof(f->beside), "%s.upload", dump);
	if (n < 0 || (size_t)n >= sizeof(f->beside)) {
		tool_error(dump, -1, "upload: the name is too long");
		return -1;
	}
	if (!state_dir || !state_dir[0])
		return 0;
	snprintf(copy, sizeof(copy), "%s", dump);
	dir = dirname(copy);
	if (!realpath(dir, real))
		snprintf(real, sizeof(real), "%s", dir);
	snprintf(copy, sizeof(copy), "%s", dump);
	base = basename(copy);
	n = snprintf(f->in_dir, sizeof(f->in_dir), "%s/%.200s.%016" PRIx64 ".upload", state_dir,
	             base, fnv1a(real));
	if (n < 0 || (size_t)n >= sizeof(f->in_dir)) {
		tool_error(state_dir, -1, "upload: the state directory's name is too long");
		return -1;
	}
	return 0;
}

/* Parses one "key value" line into s. */
static void parse_line(char *line, struct upload_state *s)
{
	char *v = strchr(line, ' ');
	long long n;

	if (!v)
		return;
	*v++ = '\0';
	n = strtoll(v, NULL, 10);
	if (!strcmp(line, "uploaded"))
		s->uploaded = n == 1;
	else if (!strcmp(line, "failures"))
		s->failures = n < 0 ? 0 : n > 64 ? 64 : (unsigned)n;
	else if (!strcmp(line, "last_try"))
		s->last_try = n;
	else if (!strcmp(line, "next_try"))
		s->next_try = n;
	else if (!strcmp(line, "uploaded_at"))
		s->uploaded_at = n;
	else if (!strcmp(line, "http"))
		s->http = (int)n;
	else if (!strcmp(line, "result"))
		snprintf(s->result, sizeof(s->result), "%s", v);
	else if (!strcmp(line, "event_id"))
		snprintf(s->event_id, sizeof(s->event_id), "%s", v);
	else if (!strcmp(line, "answer"))
		snprintf(s->answer, sizeof(s->answer), "%s", v);
	else if (!strcmp(line, "server"))
		snprintf(s->server, sizeof(s->server), "%s", v);
}

/* Reads the state at path.  Returns 1 read, 0 none there, -1 there but unusable (said). */
static int read_state(const char *path, struct upload_state *s)
{
	static char buf[STATE_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	memset(s, 0, sizeof(*s));
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		tool_error(path, -1, "upload: cannot read the upload state (%s); taken as not sent",
		           errno == ELOOP ? "a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0)
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		tool_error(path, -1, "upload: ignoring the upload state: %s",
		           !S_ISREG(st.st_mode) ? "not a regular file" : "not owned by this user");
		close(fd);
		return -1;
	}
	n = read(fd, buf, STATE_MAX);
	close(fd);
	if (n < 0) {
		tool_error(path, -1, "upload: cannot read the upload state (%s); taken as not sent",
		           strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] != '#')
			parse_line(line, s);
	}
	return 1;
}

int upload_state_load(const char *dump, const char *state_dir, struct upload_state_file *f,
                      struct upload_state *s)
{
	struct upload_state other;
	int a, b = 0;

	if (name_files(dump, state_dir, f) != 0)
		return -1;
	a = read_state(f->beside, s);
	if (f->in_dir[0])
		b = read_state(f->in_dir, &other);
	/* Both: the newer one (the directory's write access changed between runs). */
	if (b == 1 && (a != 1 || other.last_try > s->last_try)) {
		*s = other;
		f->path = f->in_dir;
		return 1;
	}
	if (a == 1) {
		f->path = f->beside;
		return 1;
	}
	memset(s, 0, sizeof(*s));
	return 0;
}

/* Opens a new temporary file beside target.  Returns 0 or -1 with errno. */
static int open_tmp(struct upload_state_file *f, const char *target)
{
	struct stat st;

	/* Someone else's file there cannot be replaced in a sticky directory, and is not ours
	 * to trust anyway. */
	if (lstat(target, &st) == 0 && st.st_uid != geteuid()) {
		errno = EPERM;
		return -1;
	}
	snprintf(f->tmp, sizeof(f->tmp), "%s.XXXXXX", target);
	f->tmp_fd = mkostemp(f->tmp, O_CLOEXEC); /* O_CREAT|O_EXCL, 0600: never follows a link */
	if (f->tmp_fd < 0)
		return -1;
	f->path = target;
	return 0;
}

int upload_state_prepare(struct upload_state_file *f)
{
	int err;

	if (f->path == f->in_dir && open_tmp(f, f->in_dir) == 0)
		return 0;
	if (open_tmp(f, f->beside) == 0)
		return 0;
	err = errno;
	if (f->in_dir[0] && open_tmp(f, f->in_dir) == 0)
		return 0;
	if (f->in_dir[0])
		tool_error(f->beside, -1, "upload: cannot keep the upload state beside the dump (%s) "
		           "nor in the state directory (%s): not posted", strerror(err),
		           strerror(errno));
	else
		tool_error(f->beside, -1, "upload: cannot keep the upload state beside the dump (%s): "
		           "not posted (give --state-dir DIR)", strerror(err));
	return -1;
}

int upload_state_commit(struct upload_state_file *f, const struct upload_state *s)
{
	FILE *out;
	int ok;

	if (f->tmp_fd < 0)
		return -1;
	out = fdopen(f->tmp_fd, "w");
	if (!out) {
		tool_error(f->tmp, -1, "upload: cannot write the upload state: %s", strerror(errno));
		upload_state_abort(f);
		return -1;
	}
	fprintf(out, "# ptrec upload's state of a dump (ptrec-upload(8)); replaced whole on each "
	        "try\nuploaded %d\nfailures %u\nlast_try %" PRId64 "\nnext_try %" PRId64
	        "\nuploaded_at %" PRId64 "\nhttp %d\nresult %s\nevent_id %s\nserver %s\n"
	        "answer %s\n", s->uploaded, s->failures, s->last_try, s->next_try, s->uploaded_at,
	        s->http, s->result, s->event_id, s->server, s->answer);
	ok = fflush(out) == 0 && fsync(fileno(out)) == 0;
	if (fclose(out) != 0)
		ok = 0;
	f->tmp_fd = -1;
	if (!ok || rename(f->tmp, f->path) != 0) {
		tool_error(f->path, -1, "upload: cannot write the upload state: %s", strerror(errno));
		unlink(f->tmp);
		return -1;
	}
	return 0;
}

void upload_state_abort(struct upload_state_file *f)
{
	if (f->tmp_fd < 0)
		return;
	close(f->tmp_fd);
	unlink(f->tmp);
	f->tmp_fd = -1;
}
