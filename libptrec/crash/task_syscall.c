/* task_syscall.c — what the kernel shows of another thread of this process without ptrace:
 * /proc/self/task/TID/syscall (proc(5)).
 *
 * ASYNC-SIGNAL-SAFE ISLAND: called by the dump writer inside the crash handler.  It may not call
 * malloc/free, stdio, locale functions, or take locks: open (through ptrec_crash_open_read, which
 * copes with no free descriptor), read, close, and parsing into the caller's buffers.
 *
 * The file (Linux proc_pid_syscall) is one line:
 *   "NR 0xARG1 0xARG2 0xARG3 0xARG4 0xARG5 0xARG6 0xSP 0xPC"  blocked in system call NR
 *   "-1 0xSP 0xPC"                                             blocked outside a system call
 *   "running"                                                  on a CPU: nothing is known
 * NR is decimal, the rest hexadecimal; SP and PC are the thread's user registers saved at its
 * entry into the kernel (PC: after the `syscall` instruction).  The kernel checks, at the read,
 * that the reader may ptrace the thread in mode PTRACE_MODE_ATTACH_FSCREDS, which a thread of
 * the same thread group always may (Yama is not asked): the read must be made by a thread of
 * this process, even when another process opened the file (ptrec_crash_open's opener child). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "crash/crash.h"

/* Parses one number at *pp: decimal with an optional '-' (an int, as the kernel prints the
 * system call's number), or hexadecimal after "0x" (at most 16 digits).  Returns 1 and advances
 * *pp past it and the spaces after, or 0 when there is none. */
static int next_number(const char **pp, const char *end, int64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int neg = 0, digits = 0;

	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	if (end - p > 2 && p[0] == '0' && p[1] == 'x') {
		for (p += 2; p < end; p++, digits++) {
			unsigned d;
			if (*p >= '0' && *p <= '9') d = (unsigned)(*p - '0');
			else if (*p >= 'a' && *p <= 'f') d = (unsigned)(*p - 'a' + 10);
			else break;
			v = v << 4 | d;
		}
		if (digits > 16)
			return 0;
	} else {
		for (; p < end && *p >= '0' && *p <= '9' && v <= 0x7fffffff; p++, digits++)
			v = v * 10 + (unsigned)(*p - '0');
		if (v > 0x7fffffff)
			return 0;
	}
	if (!digits || (p < end && *p != ' ' && *p != '\n'))
		return 0;
	while (p < end && (*p == ' ' || *p == '\n'))
		p++;
	*pp = p;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

int ptrec_task_parse(const char *text, size_t len, struct ptrec_dump_task *t)
{
	const char *p = text, *end = text + len;
	int64_t v[9];
	unsigned n = 0;

	t->state = PTREC_TASK_UNREADABLE;
	if (len >= 7 && memcmp(text, "running", 7) == 0) {
		t->state = PTREC_TASK_RUNNING;
		return 0;
	}
	while (n < 9 && next_number(&p, end, &v[n]))
		n++;
	if (p != end || n < 3)
		return -1;
	if (v[0] < 0 && n == 3) {
		t->state = PTREC_TASK_BLOCKED;
		t->nr = -1;
	} else if (v[0] >= 0 && n == 9) {
		t->state = PTREC_TASK_SYSCALL;
		t->nr = v[0];
		for (int i = 0; i < 6; i++)
			t->args[i] = (uint64_t)v[1 + i];
	} else {
		return -1;
	}
	t->sp = (uint64_t)v[n - 2];
	t->pc = (uint64_t)v[n - 1];
	return 0;
}

void ptrec_task_read(pid_t tid, struct ptrec_dump_task *t)
{
	char path[64], text[256];
	struct ptrec_sbuf b;
	size_t len = 0;
	int fd;

	memset(t, 0, sizeof(*t));
	t->tid = (uint32_t)tid;
	t->state = PTREC_TASK_UNREADABLE;
	ptrec_sbuf_init(&b, path, sizeof(path));
	ptrec_sbuf_str(&b, "/proc/self/task/");
	ptrec_sbuf_dec(&b, tid);
	ptrec_sbuf_str(&b, "/syscall");
	fd = ptrec_crash_open_read(path);
	if (fd < 0) {
		t->err = errno;
		return;
	}
	while (len < sizeof(text)) {
		ssize_t n = read(fd, text + len, sizeof(text) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			t->err = errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (t->err)
		return;
	if (len == sizeof(text) || ptrec_task_parse(text, len, t) != 0) {
		t->state = PTREC_TASK_UNREADABLE;
		t->err = EBADMSG;
	}
}
