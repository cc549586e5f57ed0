/* dump_write.c — writes a ptrec dump (dump_format.h, doc/dump-format.md).
 *
 * ASYNC-SIGNAL-SAFE ISLAND: called from the crash handler.  It may not call malloc/free,
 * stdio, locale functions, or take locks, and must not fault on the crashed process's memory:
 * every read of memory we do not own (ELF headers and notes of mapped files, JIT code, the
 * vDSO, the stack) goes through process_vm_readv on our own tid, which fails with EFAULT
 * instead of faulting.  Ring memory is ours and is written directly.  Buffers are static (one
 * set for crashes, one for snapshots) or were mapped at ptrec_init (the /proc/self/maps text).
 *
 * Record order: PROCESS, REGS (when a ucontext is known), STATUS, SYSFILE (cmdline, auxv, the
 * event thread's status), WATCH, THREAD for every listed thread (the event thread first), MAPS,
 * BUILDID per mapped ELF file, MEMORY (JIT code, vDSO, stack near SP), then for each other
 * thread of a crash or assertion its stack (MEMORY) when the kernel shows it blocked, and its
 * TASK record, END.  The report child then appends the host's SYSFILE records (cpuinfo,
 * lsb-release, os-release, uname) and another END: ptrec_dump_append_host. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/elf_check.h"
#include "core/safe_str.h"
#include "capture/patch_entries.h"
#include "crash/crash.h"

#define BOUNCE_SIZE (64u << 10)
#define PTREC_STACK_GAP (1u << 20) /* SP this far below a mapping still counts as its stack */
#define MAPS_RESERVE (256u << 10)  /* room at the end of the maps text for the lines a report
                                      cannot do without (maps_line_needed) */

/* A file read for a SYSFILE record: its first bytes in a buffer of the writer's. */
struct sysfile {
	int read;      /* 1 if the file could be read */
	size_t len;    /* bytes kept */
	uint64_t size; /* bytes the file had */
};

/* One writer's state and buffers. */
struct dump_ctx {
	int fd;                       /* output */
	int failed;                   /* a write failed */
	int err;                      /* errno of the failed write */
	uint64_t code_budget;         /* JIT bytes still allowed */
	uint8_t bounce[BOUNCE_SIZE];  /* safe-copy buffer */
	char maps[PTREC_MAPS_MAX];    /* /proc/self/maps text */
	size_t maps_len;              /* bytes in maps */
	unsigned maps_left_out;       /* data mappings left out of maps for room */
	int prepared;                 /* maps and comm read by ptrec_dump_prepare */
	char comm[sizeof(((struct ptrec_dump_process *)0)->comm)]; /* /proc/self/comm */
	struct sysfile cmdline;       /* /proc/self/cmdline */
	char cmdline_buf[PTREC_SYSFILE_CMDLINE_MAX];
	struct sysfile status;        /* /proc/self/task/TID/status of the event thread */
	char status_buf[PTREC_SYSFILE_STATUS_MAX];
	struct ptrec_dump_process proc; /* PROCESS payload */
	struct ptrec_dump_thread th;  /* THREAD payload header */
};

static struct dump_ctx ctx_store[2];

/* /proc/self/auxv, read at ptrec_init (ptrec_dump_prepare_auxv): it never changes. */
static struct sysfile auxv;
static char auxv_buf[PTREC_SYSFILE_AUXV_MAX];

/* The host's files appended by the report child, per slot (a crash's report child may run
 * while a snapshot's does). */
static char host_buf[2][PTREC_SYSFILE_CPUINFO_MAX];

_Static_assert(PTREC_TASK_STACK_DUMP <= BOUNCE_SIZE, "a thread's stack is copied in one piece");

/* 1 once process_vm_readv said ENOSYS: qemu-user (whose guests have no process_vm_readv) or a
 * kernel built without CONFIG_CROSS_MEMORY_ATTACH. */
static int no_vm_readv;

/* Copies through a pipe made for this call: write(2) reads the source in the kernel (in qemu,
 * through its guest address translation) and fails with EFAULT instead of faulting.  Page by
 * page, so a readable start is kept; stops at the first unreadable page.  0 when no pipe can
 * be made (no descriptor free). */
static size_t pipe_copy(void *dst, uint64_t addr, size_t len)
{
	int p[2], e = errno;
	size_t got = 0;

	if (pipe2(p, O_CLOEXEC) != 0) {
		errno = e;
		return 0;
	}
	while (got < len) {
		uint64_t at = addr + got;
		size_t chunk = (size_t)(4096 - (at & 4095));
		if (chunk > len - got)
			chunk = len - got;
		ssize_t w = write(p[1], (const void *)(uintptr_t)at, chunk);
		if (w <= 0 || read(p[0], (char *)dst + got, (size_t)w) != w)
			break;
		got += (size_t)w;
	}
	close(p[0]);
	close(p[1]);
	errno = e;
	return got;
}

size_t ptrec_safe_copy(void *dst, uint64_t addr, size_t len)
{
	struct iovec local = {dst, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	if (no_vm_readv)
		return pipe_copy(dst, addr, len);
	/* The thread, not the process: a leader that ended with pthread_exit has no memory. */
	ssize_t n = process_vm_readv(ptrec_gettid(), &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS) {
		no_vm_readv = 1;
		return pipe_copy(dst, addr, len);
	}
	return n > 0 ? (size_t)n : 0;
}

void ptrec_self_exe(char *buf, size_t len)
{
	/* /proc/self/exe fails once the main thread has exited: then the thread's own (Linux
	 * 3.17 and later).  In that order, qemu-user (which shows the guest program only as
	 * /proc/self/exe) names the program too. */
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		n = readlink("/proc/thread-self/exe", buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (n <= 0) /* no /proc in a new root (chroot): the path noted before it */
		ptrec_strlcpy(buf, ptrec_root_exe(), len);
}

static void out(struct dump_ctx *c, const void *p, size_t n)
{
	if (c->failed || !n)
		return;
	if (ptrec_write_all(c->fd, p, n) != 0) {
		c->failed = 1;
		c->err = errno;
	}
}

static void out_pad(struct dump_ctx *c, uint64_t size)
{
	static const uint8_t zeros[8];
	if (size % 8)
		out(c, zeros, 8 - size % 8);
}

static void rec_begin(struct dump_ctx *c, uint32_t type, uint64_t size)
{
	struct ptrec_dump_record r = {type, 0, size};
	out(c, &r, sizeof(r));
}

/* Writes len bytes of memory at addr through the bounce buffer; unreadable bytes become
 * zeros, so the record keeps its announced size. */
static void out_memory(struct dump_ctx *c, uint64_t addr, uint64_t len)
{
	while (len) {
		size_t chunk = len < BOUNCE_SIZE ? (size_t)len : BOUNCE_SIZE;
		size_t got = ptrec_safe_copy(c->bounce, addr, chunk);
		if (got < chunk)
			memset(c->bounce + got, 0, chunk - got);
		out(c, c->bounce, chunk);
		addr += chunk;
		len -= chunk;
	}
}

/* ---- SYSFILE ---------------------------------------------------------------------------- */

#define SYSFILE_COUNT_MAX (16u << 20) /* a file's bytes past what is kept are counted up to this */

/* Reads the regular file at fd (closed here) into buf, up to cap bytes, counting the rest in
 * f->size (up to SYSFILE_COUNT_MAX); a read that fails midway keeps what came before it. */
static void sysfile_read_fd(int fd, char *buf, size_t cap, struct sysfile *f)
{
	char rest[512];
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) { /* a FIFO, a device */
		close(fd);
		fd = -1;
	}
	f->read = fd >= 0;
	f->len = 0;
	f->size = 0;
	if (fd < 0)
		return;
	for (;;) {
		int full = f->len == cap;
		ssize_t n = full ? read(fd, rest, sizeof(rest)) : read(fd, buf + f->len, cap - f->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!full)
			f->len += (size_t)n;
		f->size += (uint64_t)n;
		if (f->size >= SYSFILE_COUNT_MAX) /* counted no further */
			break;
	}
	close(fd);
}

static void write_sysfile(struct dump_ctx *c, uint32_t kind, const char *bytes,
                          const struct sysfile *f)
{
	if (!f->read)
		return;
	struct ptrec_dump_sysfile h = {kind, f->size > f->len ? PTREC_SYSFILE_CUT : 0u, f->size};
	rec_begin(c, PTREC_REC_SYSFILE, sizeof(h) + f->len);
	out(c, &h, sizeof(h));
	out(c, bytes, f->len);
	out_pad(c, sizeof(h) + f->len);
}

void ptrec_dump_prepare_auxv(void)
{
	sysfile_read_fd(open("/proc/self/auxv", O_RDONLY | O_CLOEXEC), auxv_buf, sizeof(auxv_buf),
	                &auxv);
}

/* The event thread's status: /proc/self/task/TID/status (a snapshot's dump is written by
 * another thread), else /proc/thread-self/status when that is the thread (the leader of a
 * process whose main thread ended has no /proc/self). */
static void read_status_file(struct dump_ctx *c, pid_t tid)
{
	char path[64];
	struct ptrec_sbuf b;

	ptrec_sbuf_init(&b, path, sizeof(path));
	ptrec_sbuf_str(&b, "/proc/self/task/");
	ptrec_sbuf_dec(&b, tid);
	ptrec_sbuf_str(&b, "/status");
	int fd = ptrec_crash_open_read(path);
	if (fd < 0 && tid == ptrec_gettid())
		fd = ptrec_crash_open_read("/proc/thread-self/status");
	sysfile_read_fd(fd, c->status_buf, sizeof(c->status_buf), &c->status);
}

/* /proc/self/cmdline, or the thread's own when the leader's reads empty (its main thread
 * ended: no memory). */
static void read_cmdline(struct dump_ctx *c)
{
	sysfile_read_fd(ptrec_crash_open_read("/proc/self/cmdline"), c->cmdline_buf,
	                sizeof(c->cmdline_buf), &c->cmdline);
	if (c->cmdline.size == 0)
		sysfile_read_fd(ptrec_crash_open_read("/proc/thread-self/cmdline"), c->cmdline_buf,
		                sizeof(c->cmdline_buf), &c->cmdline);
}

/* ---- PROCESS, REGS ---------------------------------------------------------------------- */

static void write_process(struct dump_ctx *c, const struct ptrec_dump_request *req)
{
	struct ptrec_dump_process *p = &c->proc;
	struct timespec now;

	memset(p, 0, sizeof(*p));
	clock_gettime(CLOCK_REALTIME, &now);
	p->pid = (uint32_t)getpid();
	p->tid = (uint32_t)req->tid;
	p->event = req->event;
	p->signo = req->signo;
	if (req->info) {
		p->si_code = req->info->si_code;
		p->si_errno = req->info->si_errno;
		if (ptrec_dump_code_sent(req->info->si_code))
			p->fault_addr = (uint32_t)req->info->si_pid |
			                (uint64_t)(uint32_t)req->info->si_uid << 32;
		else if (ptrec_dump_signal_faults(req->signo))
			p->fault_addr = (uint64_t)(uintptr_t)req->info->si_addr;
	}
	p->time_sec = now.tv_sec;
	p->time_nsec = now.tv_nsec;
	p->backend = ptrec_crash.backend;
	p->cpu_family = ptrec_crash.cpu_family;
	p->cpu_model = ptrec_crash.cpu_model;
	p->cpu_stepping = ptrec_crash.cpu_stepping;
	p->arch = PTREC_EM_HOST;
	p->nthreads = req->nthreads;
	memcpy(p->comm, c->comm, sizeof(p->comm));
	ptrec_self_exe(p->exe, sizeof(p->exe));
	ptrec_strlcpy(p->reason, req->reason, sizeof(p->reason));
	rec_begin(c, PTREC_REC_PROCESS, sizeof(*p));
	out(c, p, sizeof(*p));
	out_pad(c, sizeof(*p));
}

static uint64_t context_sp(const void *ucontext)
{
	const ucontext_t *uc = ucontext;
	return uc ? ptrec_uc_sp(uc) : 0;
}

static void write_regs(struct dump_ctx *c, const struct ptrec_dump_request *req)
{
	const ucontext_t *uc = req->ucontext;
	struct ptrec_dump_regs r;

	if (!uc)
		return;
	memset(&r, 0, sizeof(r));
	r.tid = (uint32_t)req->tid;
#if defined(__x86_64__)
	r.count = PTREC_REG_COUNT;
	/* glibc's gregs order (REG_R8 .. REG_CR2) is the dump's order. */
	for (int i = 0; i < PTREC_REG_COUNT && i < NGREG; i++)
		r.gregs[i] = (uint64_t)uc->uc_mcontext.gregs[i];
#else
	/* the kernel's sigcontext order: regs[31], sp, pc, pstate */
	r.count = PTREC_A64_COUNT;
	for (int i = 0; i < 31; i++)
		r.gregs[i] = uc->uc_mcontext.regs[i];
	r.gregs[PTREC_A64_SP] = uc->uc_mcontext.sp;
	r.gregs[PTREC_A64_PC] = uc->uc_mcontext.pc;
	r.gregs[PTREC_A64_PSTATE] = uc->uc_mcontext.pstate;
#endif
	size_t len = PTREC_DUMP_REGS_SIZE(r.count);
	rec_begin(c, PTREC_REC_REGS, len);
	out(c, &r, len);
	out_pad(c, len);
}

/* ---- STATUS ---------------------------------------------------------------------------- */

/* Which path each perf ring came from: "perf_rings N by this process, M by ptrec-helper
 * (tids ...)", the tids capped at 32.  Nothing when no thread has a perf ring. */
static void status_ring_paths(struct ptrec_sbuf *b, const struct ptrec_dump_request *req)
{
	unsigned direct = 0, helper = 0, listed = 0;

	for (unsigned i = 0; i < req->nthreads; i++) {
		const struct ptrec_thread *t = req->threads[i];
		if (t->ops && t->ring.fd >= 0)
			t->ring.via_helper ? helper++ : direct++;
	}
	if (!direct && !helper)
		return;
	ptrec_sbuf_str(b, "perf_rings ");
	ptrec_sbuf_udec(b, direct);
	ptrec_sbuf_str(b, " opened by this process, ");
	ptrec_sbuf_udec(b, helper);
	ptrec_sbuf_str(b, " by ptrec-helper");
	for (unsigned i = 0; i < req->nthreads && helper; i++) {
		const struct ptrec_thread *t = req->threads[i];
		if (!t->ops || t->ring.fd < 0 || !t->ring.via_helper)
			continue;
		ptrec_sbuf_str(b, listed ? " " : " (tids ");
		if (++listed > 32) {
			ptrec_sbuf_str(b, "...");
			break;
		}
		ptrec_sbuf_dec(b, t->tid);
	}
	ptrec_sbuf_str(b, listed ? ")\n" : "\n");
}

static void write_status(struct dump_ctx *c, const struct ptrec_dump_request *req)
{
	struct ptrec_sbuf b;

	ptrec_sbuf_init(&b, (char *)c->bounce, BOUNCE_SIZE);
	ptrec_sbuf_str(&b, "backend ");
	ptrec_sbuf_str(&b, ptrec_backend_name(ptrec_crash.backend));
	ptrec_sbuf_str(&b, "\nring_size ");
	ptrec_sbuf_udec(&b, ptrec_crash.cfg.ring_size);
	ptrec_sbuf_str(&b, "\nmemory_budget ");
	ptrec_sbuf_udec(&b, ptrec_crash.cfg.memory_budget);
	ptrec_sbuf_str(&b, "\nthreads_untraced ");
	ptrec_sbuf_udec(&b, atomic_load(ptrec_crash.threads_untraced));
	ptrec_sbuf_char(&b, '\n');
	if (c->maps_left_out) {
		ptrec_sbuf_str(&b, "maps_left_out ");
		ptrec_sbuf_udec(&b, c->maps_left_out);
		ptrec_sbuf_str(&b, " data mappings without a file (/proc/self/maps is over ");
		ptrec_sbuf_udec(&b, (sizeof(c->maps) - MAPS_RESERVE) >> 10);
		ptrec_sbuf_str(&b, " KiB; every file, code and stack mapping is kept)\n");
	}
	status_ring_paths(&b, req);
	if (ptrec_patch_note[0]) {
		ptrec_sbuf_str(&b, "patched_entries ");
		ptrec_sbuf_str(&b, ptrec_patch_note);
		ptrec_sbuf_char(&b, '\n');
	}
	for (int i = 0; i < PTREC_BACKEND_COUNT_; i++) {
		if (!ptrec_crash.reason[i][0])
			continue;
		ptrec_sbuf_str(&b, "refused ");
		ptrec_sbuf_str(&b, ptrec_backend_name((enum ptrec_backend)i));
		ptrec_sbuf_str(&b, ": ");
		ptrec_sbuf_str(&b, ptrec_crash.reason[i]);
		ptrec_sbuf_char(&b, '\n');
	}
	rec_begin(c, PTREC_REC_STATUS, b.len);
	out(c, c->bounce, b.len);
	out_pad(c, b.len);
}

/* ---- THREAD ----------------------------------------------------------------------------- */

static void write_thread(struct dump_ctx *c, const struct ptrec_dump_request *req,
                         struct ptrec_thread *t)
{
	struct ptrec_dump_thread *h = &c->th;
	struct ptrec_ring_view v;
	char path[64];
	struct ptrec_sbuf b;

	memset(h, 0, sizeof(*h));
	memset(&v, 0, sizeof(v));
	h->tid = (uint32_t)t->tid;
	h->backend = t->ops ? (uint32_t)t->ops->id : PTREC_BACKEND_NONE;
	h->flags = t->flags & PTREC_THREAD_UNTRACED;
	if (t->ops && t->ring.via_helper)
		h->flags |= PTREC_THREAD_HELPER;
	if (atomic_load(&t->state) == PTREC_SLOT_EXITED)
		h->flags |= PTREC_THREAD_EXITED;
	if (t->tid == req->tid) {
		h->flags |= PTREC_THREAD_CRASHED;
		h->stack_pointer = context_sp(req->ucontext);
	}
	ptrec_sbuf_init(&b, path, sizeof(path));
	ptrec_sbuf_str(&b, "/proc/self/task/");
	ptrec_sbuf_dec(&b, t->tid);
	ptrec_sbuf_str(&b, "/comm");
	if (t->name[0]) /* noted by a snapshot: the thread may be gone by now */
		ptrec_strlcpy(h->name, t->name, sizeof(h->name));
	else if (ptrec_read_small_file(path, h->name, sizeof(h->name)) < 0 && t->tid == ptrec_gettid())
		prctl(PR_GET_NAME, h->name, 0, 0, 0); /* no descriptor free: our own name */
	if (t->ops) {
		if (req->source == PTREC_DUMP_COPIES)
			v = t->snap;
		else if (t->ops->view(&t->ring, &v) != 0)
			memset(&v, 0, sizeof(v));
		h->flags |= PTREC_THREAD_FROZEN;
		if (v.wrapped)
			h->flags |= PTREC_THREAD_WRAPPED;
		h->ring_size = t->ring.size;
		h->head = v.head;
		h->data_size = v.len[0] + v.len[1];
		h->pt_config = t->ring.config;
		h->pt_config1 = t->ring.config1;
		h->pt_config2 = t->ring.config2;
		h->mtc_period = t->ring.mtc_period;
		h->tsc_ratio_n = ptrec_crash.tsc_ratio_n;
		h->tsc_ratio_d = ptrec_crash.tsc_ratio_d;
		h->nom_freq = ptrec_crash.nom_freq;
		h->time_zero = t->ring.time_zero;
		h->time_shift = t->ring.time_shift;
		h->time_mult = t->ring.time_mult;
	}
	rec_begin(c, PTREC_REC_THREAD, sizeof(*h) + h->data_size);
	out(c, h, sizeof(*h));
	if (v.part[0])
		out(c, v.part[0], v.len[0]);
	if (v.part[1])
		out(c, v.part[1], v.len[1]);
	out_pad(c, sizeof(*h) + h->data_size);
}

/* ---- MAPS and what they point to -------------------------------------------------------- */

/* One parsed line of /proc/self/maps. */
struct map_line {
	uint64_t start, end, offset; /* range and file offset */
	char perms[5];               /* "r-xp" */
	const char *path;            /* into the maps text (not NUL-terminated) */
	size_t path_len;             /* bytes of path */
};

static uint64_t parse_hex(const char **pp, const char *end)
{
	uint64_t v = 0;
	const char *p = *pp;
	for (; p < end; p++) {
		char ch = *p;
		unsigned d;
		if (ch >= '0' && ch <= '9') d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f') d = (unsigned)(ch - 'a' + 10);
		else break;
		v = v << 4 | d;
	}
	*pp = p;
	return v;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* Parses the line [p, eol) of /proc/self/maps into *m. */
static void parse_map(const char *p, const char *eol, struct map_line *m)
{
	m->start = parse_hex(&p, eol);
	if (p < eol && *p == '-')
		p++;
	m->end = parse_hex(&p, eol);
	while (p < eol && *p == ' ')
		p++;
	for (int i = 0; i < 4; i++)
		m->perms[i] = p + i < eol ? p[i] : '-';
	m->perms[4] = '\0';
	p = skip_field(p, eol);            /* perms */
	m->offset = parse_hex(&p, eol);
	p = skip_field(p, eol);            /* offset */
	p = skip_field(p, eol);            /* dev */
	p = skip_field(p, eol);            /* inode */
	m->path = p;
	m->path_len = (size_t)(eol - p);
}

/* Parses the line starting at *pos.  Returns 1 and advances *pos, or 0 at the end. */
static int next_map(const struct dump_ctx *c, size_t *pos, struct map_line *m)
{
	const char *p = c->maps + *pos, *end = c->maps + c->maps_len;
	if (p >= end)
		return 0;
	const char *eol = p;
	while (eol < end && *eol != '\n')
		eol++;
	*pos = (size_t)(eol - c->maps) + 1;
	parse_map(p, eol, m);
	return 1;
}

/* 1 if a line must be kept even once the maps text fills the buffer but for MAPS_RESERVE: a
 * file's, a named one ([stack], [vdso], [heap]), executable code, or the stack at sp.  Data
 * mappings without a file (a server with tens of thousands of them: 4 MiB of text at 60 000)
 * go first: without that, the libraries, the stack and the vDSO at the top of the address
 * space were cut off, and the report could place nothing outside the program. */
static int maps_line_needed(const char *l, size_t n, uint64_t sp)
{
	struct map_line m;
	parse_map(l, l + n, &m);
	if (m.path_len || m.perms[2] == 'x')
		return 1;
	return sp && sp < m.end && (sp >= m.start || m.start - sp <= PTREC_STACK_GAP);
}

/* Appends one line (with its newline) to the maps text, or counts it as left out. */
static void maps_add(struct dump_ctx *c, const char *l, size_t n, uint64_t sp)
{
	size_t room = sizeof(c->maps) - c->maps_len;
	if (n + 1 > room ||
	    (room < MAPS_RESERVE + n + 1 && !maps_line_needed(l, n, sp))) {
		c->maps_left_out++;
		return;
	}
	memcpy(c->maps + c->maps_len, l, n);
	c->maps[c->maps_len + n] = '\n';
	c->maps_len += n + 1;
}

/* Reads /proc/self/maps (or the maps kept open before a chroot) line by line through the
 * bounce buffer.  Once the main thread has exited /proc/self/maps reads empty: then
 * /proc/thread-self/maps (the order of ptrec_self_exe, for the same reasons). */
static void read_maps_from(struct dump_ctx *c, uint64_t sp, int fd);

static void read_maps(struct dump_ctx *c, uint64_t sp)
{
	int fd = ptrec_crash_open_read("/proc/self/maps");
	read_maps_from(c, sp, fd);
	if (fd >= 0 && c->maps_len == 0) {
		fd = ptrec_crash_open_read("/proc/thread-self/maps");
		if (fd >= 0)
			read_maps_from(c, sp, fd);
	}
}

static void read_maps_from(struct dump_ctx *c, uint64_t sp, int fd)
{
	char *buf = (char *)c->bounce;
	size_t have = 0, off = 0;
	c->maps_len = 0;
	c->maps_left_out = 0;
	for (;;) {
		/* No /proc in a new root (chroot): the maps kept open before it. */
		ssize_t n = fd >= 0 ? read(fd, buf + have, BOUNCE_SIZE - have)
		                    : ptrec_root_pread_maps(buf + have, BOUNCE_SIZE - have, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
		have += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			maps_add(c, buf + start, i - start, sp);
			start = i + 1;
		}
		if (start == 0 && have == BOUNCE_SIZE) /* a line longer than the buffer */
			have = 0;
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	/* A last line without its newline is cut: left out. */
	if (fd >= 0)
		close(fd);
}

static int path_is(const struct map_line *m, const char *s)
{
	size_t n = strlen(s);
	return m->path_len == n && memcmp(m->path, s, n) == 0;
}

/* Finds the GNU build-id of the ELF file mapped at m (offset 0) by reading its program
 * headers and notes from memory.  Returns the id length (0 if none) with the id in id. */
static size_t find_build_id(struct dump_ctx *c, const struct map_line *m, uint8_t *id,
                            size_t idcap)
{
	uint8_t ehbuf[PTREC_ELF_EHDR_MAX];
	struct ptrec_elf_hdr eh;
	Elf64_Phdr ph[64];
	const char *why;

	if (ptrec_safe_copy(ehbuf, m->start, sizeof(ehbuf)) != sizeof(ehbuf) ||
	    ptrec_elf_hdr_check(ehbuf, sizeof(ehbuf), 0, &eh, &why) != 0 || eh.phnum == 0 ||
	    eh.phnum > 64 || !ptrec_elf_phdrs_within(&eh, m->end - m->start))
		return 0;
	size_t phbytes = eh.phnum * sizeof(Elf64_Phdr);
	if (ptrec_safe_copy(ph, m->start + eh.phoff, phbytes) != phbytes)
		return 0;
	uint64_t bias = 0;
	if (eh.type == ET_DYN) {
		for (unsigned i = 0; i < eh.phnum; i++)
			if (ph[i].p_type == PT_LOAD) {
				bias = m->start - (ph[i].p_vaddr & ~(uint64_t)0xfff);
				break;
			}
	}
	for (unsigned i = 0; i < eh.phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_memsz < 12)
			continue;
		size_t len = ph[i].p_memsz < BOUNCE_SIZE ? (size_t)ph[i].p_memsz : BOUNCE_SIZE;
		const uint8_t *found;
		len = ptrec_safe_copy(c->bounce, bias + ph[i].p_vaddr, len);
		size_t n = ptrec_elf_note_build_id(c->bounce, len, idcap, &found);
		if (n) {
			memcpy(id, found, n);
			return n;
		}
	}
	return 0;
}

static void write_buildids(struct dump_ctx *c)
{
	struct map_line m;
	size_t pos = 0;
	uint8_t id[64];

	while (next_map(c, &pos, &m)) {
		if (m.offset != 0 || m.path_len == 0 || m.path[0] != '/' || m.perms[0] != 'r')
			continue;
		size_t n = find_build_id(c, &m, id, sizeof(id));
		if (!n)
			continue;
		struct ptrec_dump_buildid b = {m.start, (uint32_t)n, (uint32_t)m.path_len};
		uint64_t size = sizeof(b) + n + m.path_len;
		rec_begin(c, PTREC_REC_BUILDID, size);
		out(c, &b, sizeof(b));
		out(c, id, n);
		out(c, m.path, m.path_len);
		out_pad(c, size);
	}
}

static void write_memory(struct dump_ctx *c, uint64_t addr, uint64_t len, uint32_t kind,
                         uint32_t tid)
{
	struct ptrec_dump_memory h = {addr, kind, tid, len};
	rec_begin(c, PTREC_REC_MEMORY, sizeof(h) + len);
	out(c, &h, sizeof(h));
	out_memory(c, addr, len);
	out_pad(c, sizeof(h) + len);
}

static void write_code_and_stack(struct dump_ctx *c, const struct ptrec_dump_request *req)
{
	struct map_line m;
	size_t pos = 0;
	uint64_t sp = context_sp(req->ucontext);

	int stack_done = 0;

	if (req->stack_copy) { /* a snapshot's stack, copied when it was taken */
		struct ptrec_dump_memory h = {req->stack_addr, PTREC_MEM_STACK, (uint32_t)req->tid,
		                              req->stack_len};
		rec_begin(c, PTREC_REC_MEMORY, sizeof(h) + req->stack_len);
		out(c, &h, sizeof(h));
		out(c, req->stack_copy, req->stack_len);
		out_pad(c, sizeof(h) + req->stack_len);
		stack_done = 1;
	}

	c->code_budget = PTREC_CODE_DUMP_MAX;
	while (next_map(c, &pos, &m)) {
		uint64_t len = m.end - m.start;
		/* The stack from SP up; after a stack overflow SP lies in the guard gap just below
		 * the stack mapping, and the stack is kept from the mapping's start. */
		uint64_t from = sp >= m.start ? sp : m.start;
		int near = sp >= m.start || m.start - sp <= PTREC_STACK_GAP;
		if (sp && !stack_done && sp < m.end && near) {
			uint64_t n = m.end - from < PTREC_STACK_DUMP ? m.end - from : PTREC_STACK_DUMP;
			write_memory(c, from, n, PTREC_MEM_STACK, (uint32_t)req->tid);
			stack_done = 1;
		}
		if (m.perms[2] != 'x')
			continue;
		if (path_is(&m, "[vdso]")) {
			write_memory(c, m.start, len, PTREC_MEM_VDSO, 0);
			continue;
		}
		int anon = m.path_len == 0 || (m.path_len > 6 && memcmp(m.path, "[anon:", 6) == 0) ||
		           (m.path_len > 7 && memcmp(m.path, "/memfd:", 7) == 0);
		if (!anon || len > c->code_budget)
			continue;
		c->code_budget -= len;
		write_memory(c, m.start, len, PTREC_MEM_CODE, 0);
	}
}

/* ---- TASK: the other threads as the kernel shows them ----------------------------------- */

/* The end of the mapping that holds sp, or sp + PTREC_TASK_STACK_DUMP when the maps text does
 * not list it (left out for room): the copy then stops at the first unreadable page. */
static uint64_t stack_end(const struct dump_ctx *c, uint64_t sp)
{
	struct map_line m;
	size_t pos = 0;
	while (next_map(c, &pos, &m))
		if (sp >= m.start && sp < m.end)
			return m.end;
	return sp + PTREC_TASK_STACK_DUMP;
}

/* For every listed thread but the event thread and those that ended: reads its syscall file,
 * copies up to PTREC_TASK_STACK_DUMP bytes of its stack from SP (while the dump's budget of
 * PTREC_TASK_STACKS_MAX lasts), reads the file again to see whether the thread ran meanwhile,
 * and writes the stack (MEMORY) and the TASK record.  The other threads keep running while the
 * dump is written: one blocked in a system call stays put, and its stack with it. */
static void write_tasks(struct dump_ctx *c, const struct ptrec_dump_request *req)
{
	uint64_t budget = PTREC_TASK_STACKS_MAX;
	struct ptrec_dump_task t, again;

	if (req->source != PTREC_DUMP_LIVE)
		return;
	for (unsigned i = 0; i < req->nthreads; i++) {
		const struct ptrec_thread *th = req->threads[i];
		size_t got = 0;
		if (th->tid == req->tid || atomic_load(&th->state) == PTREC_SLOT_EXITED)
			continue;
		ptrec_task_read(th->tid, &t);
		if ((t.state == PTREC_TASK_SYSCALL || t.state == PTREC_TASK_BLOCKED) && t.sp) {
			uint64_t want = stack_end(c, t.sp) - t.sp;
			if (want > PTREC_TASK_STACK_DUMP)
				want = PTREC_TASK_STACK_DUMP;
			if (want > budget) {
				want = budget;
				t.flags |= PTREC_TASK_BUDGET;
			}
			got = want ? ptrec_safe_copy(c->bounce, t.sp, (size_t)want) : 0;
			budget -= got;
			ptrec_task_read(th->tid, &again);
			if (again.state != t.state || again.sp != t.sp || again.pc != t.pc ||
			    again.nr != t.nr)
				t.flags |= PTREC_TASK_MOVED;
		}
		if (got) {
			struct ptrec_dump_memory h = {t.sp, PTREC_MEM_STACK, t.tid, got};
			rec_begin(c, PTREC_REC_MEMORY, sizeof(h) + got);
			out(c, &h, sizeof(h));
			out(c, c->bounce, got);
			out_pad(c, sizeof(h) + got);
		}
		t.stack_size = got;
		rec_begin(c, PTREC_REC_TASK, sizeof(t));
		out(c, &t, sizeof(t));
		out_pad(c, sizeof(t));
	}
}

void ptrec_dump_prepare(int slot, pid_t tid, const void *ucontext)
{
	struct dump_ctx *c = &ctx_store[slot ? 1 : 0];
	int fd;

	read_maps(c, context_sp(ucontext));
	read_cmdline(c);
	read_status_file(c, tid);
	memset(c->comm, 0, sizeof(c->comm));
	fd = ptrec_crash_open_read("/proc/self/comm");
	if (fd >= 0) {
		ssize_t n = read(fd, c->comm, sizeof(c->comm) - 1);
		close(fd);
		while (n > 0 && (c->comm[n - 1] == '\n' || c->comm[n - 1] == '\0'))
			c->comm[--n] = '\0';
	} else if (slot == 0) { /* no /proc (a new root) or no descriptor: the crashing thread's */
		prctl(PR_GET_NAME, c->comm, 0, 0, 0);
	}
	c->prepared = 1;
}

int ptrec_dump_write(const struct ptrec_dump_request *req, int slot)
{
	struct dump_ctx *c = &ctx_store[slot ? 1 : 0];
	struct ptrec_dump_header h;

	if (!c->prepared)
		ptrec_dump_prepare(slot, req->tid, req->ucontext);

	c->fd = req->fd;
	c->failed = 0;
	c->err = 0;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PTREC_DUMP_MAGIC, 8);
	h.version = PTREC_DUMP_VERSION;
	h.header_size = sizeof(h);
	out(c, &h, sizeof(h));
	write_process(c, req);
	write_regs(c, req);
	write_status(c, req);
	write_sysfile(c, PTREC_SYSFILE_CMDLINE, c->cmdline_buf, &c->cmdline);
	write_sysfile(c, PTREC_SYSFILE_AUXV, auxv_buf, &auxv);
	write_sysfile(c, PTREC_SYSFILE_STATUS, c->status_buf, &c->status);
	if (req->watch) {
		rec_begin(c, PTREC_REC_WATCH, sizeof(*req->watch));
		out(c, req->watch, sizeof(*req->watch));
	}
	for (unsigned i = 0; i < req->nthreads; i++)
		write_thread(c, req, req->threads[i]);
	c->prepared = 0;
	rec_begin(c, PTREC_REC_MAPS, c->maps_len);
	out(c, c->maps, c->maps_len);
	out_pad(c, c->maps_len);
	write_buildids(c);
	write_code_and_stack(c, req);
	write_tasks(c, req);
	rec_begin(c, PTREC_REC_END, 0);
	if (c->failed)
		errno = c->err;
	return c->failed ? -PTREC_EIO : 0;
}

/* ---- the host's files, appended by the report child ------------------------------------ */

/* Reads f->path into buf (f->cap bytes at most; regular files only) and writes its SYSFILE
 * record.  /proc/cpuinfo is cut after its last whole processor entry (entries end with a
 * blank line).  Returns 1 if the file was read. */
static int append_host_file(struct dump_ctx *c, char *buf, const struct ptrec_host_file *hf)
{
	struct sysfile f;

	sysfile_read_fd(open(hf->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), buf,
	                hf->cap < PTREC_SYSFILE_CPUINFO_MAX ? hf->cap : PTREC_SYSFILE_CPUINFO_MAX,
	                &f);
	if (!f.read)
		return 0;
	if (hf->kind == PTREC_SYSFILE_CPUINFO && f.size > f.len) {
		size_t keep = f.len;
		while (keep >= 2 && !(buf[keep - 1] == '\n' && buf[keep - 2] == '\n'))
			keep--;
		if (keep >= 2)
			f.len = keep;
	}
	write_sysfile(c, hf->kind, buf, &f);
	return 1;
}

/* The kernel's name, release, version and machine, as Breakpad's writer puts them in the
 * minidump's OS version string (never the host name). */
static void append_uname(struct dump_ctx *c, char *buf)
{
	struct utsname u;
	struct ptrec_sbuf b;
	struct sysfile f = {1, 0, 0};

	if (uname(&u) != 0)
		return;
	ptrec_sbuf_init(&b, buf, PTREC_SYSFILE_CPUINFO_MAX);
	ptrec_sbuf_str(&b, u.sysname);
	ptrec_sbuf_char(&b, ' ');
	ptrec_sbuf_str(&b, u.release);
	ptrec_sbuf_char(&b, ' ');
	ptrec_sbuf_str(&b, u.version);
	ptrec_sbuf_char(&b, ' ');
	ptrec_sbuf_str(&b, u.machine);
	f.len = b.len;
	f.size = b.len;
	write_sysfile(c, PTREC_SYSFILE_UNAME, buf, &f);
}

const struct ptrec_host_file ptrec_host_files[] = {
	{PTREC_SYSFILE_CPUINFO, "/proc/cpuinfo", PTREC_SYSFILE_CPUINFO_MAX},
	{PTREC_SYSFILE_LSB_RELEASE, "/etc/lsb-release", PTREC_SYSFILE_RELEASE_MAX},
	{PTREC_SYSFILE_OS_RELEASE, "/etc/os-release", PTREC_SYSFILE_RELEASE_MAX},
	{PTREC_SYSFILE_OS_RELEASE, "/usr/lib/os-release", PTREC_SYSFILE_RELEASE_MAX},
	{0, NULL, 0},
};

int ptrec_dump_append_files(int slot, const char *dump, const struct ptrec_host_file *files)
{
	struct dump_ctx *c = &ctx_store[slot ? 1 : 0];
	char *buf = host_buf[slot ? 1 : 0];
	uint32_t done = 0; /* kinds read, by bit */
	struct stat st;

	c->fd = open(dump, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (c->fd < 0)
		return -PTREC_EIO;
	c->failed = 0;
	c->err = 0;
	if (fstat(c->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(c->fd);
		return -PTREC_EIO;
	}
	for (const struct ptrec_host_file *f = files; f->path; f++)
		if (f->kind < 32 && !(done & 1u << f->kind) && append_host_file(c, buf, f))
			done |= 1u << f->kind;
	append_uname(c, buf);
	rec_begin(c, PTREC_REC_END, 0);
	if (c->failed) /* the disk filled: the dump as it was */
		(void)!ftruncate(c->fd, st.st_size);
	close(c->fd);
	return c->failed ? -PTREC_EIO : 0;
}

int ptrec_dump_append_host(int slot, const char *dump)
{
	return ptrec_dump_append_files(slot, dump, ptrec_host_files);
}
