/* dump_read.c — the dump reader: header, records, MAPS text; every size checked against the
 * buffer before use.  Not async-signal-safe (this runs in `ptrec report`). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "core/arch.h"
#include "core/file_open.h"
#include "dump/dump_read.h"
#include "ptrec.h"

const char *ptrec_dump_record_name(uint32_t type)
{
	switch (type) {
	case PTREC_REC_PROCESS: return "PROCESS";
	case PTREC_REC_REGS: return "REGS";
	case PTREC_REC_THREAD: return "THREAD";
	case PTREC_REC_MAPS: return "MAPS";
	case PTREC_REC_STATUS: return "STATUS";
	case PTREC_REC_WATCH: return "WATCH";
	case PTREC_REC_TASK: return "TASK";
	case PTREC_REC_SYSFILE: return "SYSFILE";
	case PTREC_REC_BUILDID: return "BUILDID";
	case PTREC_REC_MEMORY: return "MEMORY";
	case PTREC_REC_END: return "END";
	default: return "unknown";
	}
}

/* After the dump's END (which ends at after_end), at off: returns 0 when a record appended by
 * the report child (SYSFILE, or the END closing them) starts there and is whole, so the caller
 * reads it; otherwise 1 (the caller stops), with a warning unless the file ends right after
 * the dump's END. */
static int appended_record(struct ptrec_dump *d, const uint8_t *buf, size_t size, uint64_t off,
                           uint64_t after_end)
{
	struct ptrec_dump_record r;
	uint64_t remain = size - off;

	if (remain == 0) {
		if (off != after_end)
			ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": the records appended after "
			           "the END record (the host's files) have no END of their own: cut "
			           "short", off);
		return 1;
	}
	if (remain >= sizeof(r)) {
		memcpy(&r, buf + off, sizeof(r));
		int known = r.type == PTREC_REC_SYSFILE || (r.type == PTREC_REC_END && !r.size);
		if (!r.reserved && known && r.size <= remain - sizeof(r) &&
		    ((r.size + 7) & ~(uint64_t)7) <= remain - sizeof(r))
			return 0;
	}
	ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": %" PRIu64 " bytes after the END record "
	           "are not whole SYSFILE records (the host's files the report child appends); "
	           "ignored", off, remain);
	return 1;
}

__attribute__((format(printf, 4, 5)))
static int fail(struct ptrec_dump_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->cause, sizeof(err->cause), fmt, ap);
	va_end(ap);
	return code;
}

/* Grows *arr (of *n elements of size esz) by one zeroed element; returns it or NULL. */
static void *push(void *arrp, size_t *n, size_t esz)
{
	void **arr = arrp;
	void *p = realloc(*arr, (*n + 1) * esz);
	if (!p)
		return NULL;
	*arr = p;
	memset((char *)p + *n * esz, 0, esz);
	return (char *)p + (*n)++ * esz;
}

/* NUL-terminates a fixed char field; returns 1 if it had no NUL. */
static int terminate(char *s, size_t len)
{
	if (memchr(s, 0, len))
		return 0;
	s[len - 1] = 0;
	return 1;
}

static uint64_t parse_hex(const char **p, int *ok)
{
	uint64_t v = 0;
	int digits = 0;
	const char *s = *p;

	for (;; s++, digits++) {
		int c = *s, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (v >> 60)
			*ok = 0;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		*ok = 0;
	*p = s;
	return v;
}

static uint64_t parse_dec(const char **p, int *ok)
{
	uint64_t v = 0;
	int digits = 0;
	const char *s = *p;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (v > UINT64_MAX / 10 - 1)
			*ok = 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (!digits)
		*ok = 0;
	*p = s;
	return v;
}

static int expect(const char **p, char c, int *ok)
{
	if (**p != c) {
		*ok = 0;
		return 0;
	}
	(*p)++;
	return 1;
}

/* Parses one /proc/PID/maps line (NUL-terminated, without the newline) into m; the path
 * points into the line.  Returns 1 on success. */
static int parse_map_line(char *line, struct ptrec_dump_map *m)
{
	const char *p = line;
	int ok = 1;

	m->start = parse_hex(&p, &ok);
	expect(&p, '-', &ok);
	m->end = parse_hex(&p, &ok);
	expect(&p, ' ', &ok);
	if (!ok || strnlen(p, 4) < 4 || m->end < m->start)
		return 0;
	memcpy(m->perms, p, 4);
	m->perms[4] = 0;
	p += 4;
	expect(&p, ' ', &ok);
	m->offset = parse_hex(&p, &ok);
	expect(&p, ' ', &ok);
	parse_hex(&p, &ok); /* dev major */
	expect(&p, ':', &ok);
	parse_hex(&p, &ok); /* dev minor */
	expect(&p, ' ', &ok);
	m->inode = parse_dec(&p, &ok);
	if (!ok)
		return 0;
	while (*p == ' ')
		p++;
	m->path = p;
	return 1;
}

static int read_status(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                       uint64_t off, struct ptrec_dump_error *err)
{
	if (d->status_text) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": second STATUS record ignored", off);
		return 0;
	}
	d->status_text = malloc((size_t)size + 1);
	if (!d->status_text)
		return fail(err, -PTREC_ENOMEM, off, "out of memory for the STATUS text");
	memcpy(d->status_text, payload, (size_t)size);
	d->status_text[size] = 0;
	if (strlen(d->status_text) != size)
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": STATUS text contains a NUL byte; "
		           "read up to it", off);
	return 0;
}

static int read_maps(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                     uint64_t off, struct ptrec_dump_error *err)
{
	char *text, *line, *next;
	size_t lineno = 0;

	if (d->maps_text) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": second MAPS record ignored", off);
		return 0;
	}
	text = malloc((size_t)size + 1);
	if (!text)
		return fail(err, -PTREC_ENOMEM, off, "out of memory for the MAPS text");
	memcpy(text, payload, (size_t)size);
	text[size] = 0;
	if (strlen(text) != size)
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": MAPS text contains a NUL byte; "
		           "read up to it", off);
	d->maps_text = text;
	d->maps_bytes = payload;
	d->maps_size = strlen(text);
	for (line = text; *line; line = next) {
		struct ptrec_dump_map m, *slot;
		char *nl = strchr(line, '\n');

		next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = 0;
		lineno++;
		if (!*line)
			continue;
		memset(&m, 0, sizeof(m));
		if (!parse_map_line(line, &m)) {
			ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": MAPS line %zu malformed, "
			           "skipped", off, lineno);
			continue;
		}
		slot = push(&d->maps, &d->nmaps, sizeof(*slot));
		if (!slot)
			return fail(err, -PTREC_ENOMEM, off, "out of memory for MAPS lines");
		*slot = m;
	}
	return 0;
}

static int read_process(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                        uint64_t off, struct ptrec_dump_error *err)
{
	struct ptrec_dump_process *p = &d->process;
	uint64_t po = off + sizeof(struct ptrec_dump_record);

	if (size != sizeof(*p))
		return fail(err, -PTREC_EFORMAT, off + 8,
		            "PROCESS record has %" PRIu64 " payload bytes, expected %zu", size,
		            sizeof(*p));
	memcpy(p, payload, sizeof(*p));
	if (p->event < PTREC_EVENT_CRASH || p->event > PTREC_EVENT_WATCH)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_process, event),
		            "PROCESS event %" PRIu32 " is not crash (1), assert (2), snapshot (3) "
		            "or watch (4)",
		            p->event);
	if (p->signo < 0 || p->signo > 64)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_process, signo),
		            "PROCESS signal number %" PRId32 " out of range", p->signo);
	if (p->backend >= PTREC_BACKEND_COUNT_)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_process, backend),
		            "PROCESS backend %" PRIu32 " unknown", p->backend);
	if (terminate(p->comm, sizeof(p->comm)) | terminate(p->exe, sizeof(p->exe)) |
	    terminate(p->reason, sizeof(p->reason)))
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": PROCESS strings not "
		           "NUL-terminated; cut", po);
	p->arch = ptrec_dump_arch(p->arch);
	if (p->arch != PTREC_EM_X86_64 && p->arch != PTREC_EM_AARCH64)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_process, arch),
		            "PROCESS arch %" PRIu32 " is not x86-64 (62) or aarch64 (183)", p->arch);
	return 0;
}

_Static_assert(offsetof(struct ptrec_dump_watch, begin_tsc) == PTREC_DUMP_WATCH_V1_SIZE,
               "the first WATCH layout ends where begin_tsc starts");

static int read_watch(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                      uint64_t off, struct ptrec_dump_error *err)
{
	struct ptrec_dump_watch w;

	/* Older writers stop before begin_tsc; newer ones may add fields after end_tsc. */
	if (size < PTREC_DUMP_WATCH_V1_SIZE)
		return fail(err, -PTREC_EFORMAT, off + 8,
		            "WATCH record has %" PRIu64 " payload bytes, expected at least %u", size,
		            PTREC_DUMP_WATCH_V1_SIZE);
	if (d->has_watch) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": second WATCH record ignored", off);
		return 0;
	}
	memset(&w, 0, sizeof(w));
	memcpy(&w, payload, size < sizeof(w) ? (size_t)size : sizeof(w));
	w.name[sizeof(w.name) - 1] = '\0';
	d->watch = w;
	d->has_watch = 1;
	return 0;
}

static int read_regs(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                     uint64_t off, struct ptrec_dump_error *err)
{
	struct ptrec_dump_regs r;
	int a64 = d->process.arch == PTREC_EM_AARCH64;
	uint32_t want = a64 ? PTREC_A64_COUNT : PTREC_REG_COUNT;

	if (size != PTREC_DUMP_REGS_SIZE(want))
		return fail(err, -PTREC_EFORMAT, off + 8,
		            "REGS record has %" PRIu64 " payload bytes, expected %u (%s)", size,
		            PTREC_DUMP_REGS_SIZE(want), a64 ? "aarch64" : "x86-64");
	memset(&r, 0, sizeof(r));
	memcpy(&r, payload, PTREC_DUMP_REGS_SIZE(want));
	if (r.count != want)
		return fail(err, -PTREC_EFORMAT, off + 16 + 4,
		            "REGS count %" PRIu32 ", expected %" PRIu32, r.count, want);
	if (d->has_regs) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": second REGS record ignored", off);
		return 0;
	}
	d->regs = r;
	d->has_regs = 1;
	return 0;
}

static int read_thread(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                       uint64_t off, struct ptrec_dump_error *err)
{
	struct ptrec_dump_thread_rec *t;
	struct ptrec_dump_thread h;
	uint64_t po = off + sizeof(struct ptrec_dump_record);

	if (size < sizeof(h))
		return fail(err, -PTREC_EFORMAT, off + 8,
		            "THREAD record has %" PRIu64 " payload bytes, less than its %zu-byte "
		            "header", size, sizeof(h));
	memcpy(&h, payload, sizeof(h));
	if (h.data_size != size - sizeof(h))
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_thread, data_size),
		            "THREAD %" PRIu32 " data_size %" PRIu64 " does not match the record's "
		            "%" PRIu64 " ring bytes", h.tid, h.data_size, size - sizeof(h));
	if (h.data_size > h.ring_size)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_thread, data_size),
		            "THREAD %" PRIu32 " data_size %" PRIu64 " exceeds ring_size %" PRIu64,
		            h.tid, h.data_size, h.ring_size);
	if (h.head < h.data_size)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_thread, head),
		            "THREAD %" PRIu32 " head %" PRIu64 " is less than its %" PRIu64
		            " data bytes", h.tid, h.head, h.data_size);
	if (h.backend >= PTREC_BACKEND_COUNT_)
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_thread, backend),
		            "THREAD %" PRIu32 " backend %" PRIu32 " unknown", h.tid, h.backend);
	if (terminate(h.name, sizeof(h.name)))
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": THREAD %" PRIu32 " name not "
		           "NUL-terminated; cut", po, h.tid);
	if (h.flags & ~(uint32_t)(PTREC_THREAD_CRASHED | PTREC_THREAD_WRAPPED |
	                          PTREC_THREAD_FROZEN | PTREC_THREAD_UNTRACED |
	                          PTREC_THREAD_HELPER | PTREC_THREAD_EXITED))
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": THREAD %" PRIu32 " has unknown "
		           "flags 0x%" PRIx32, po, h.tid, h.flags);
	if (ptrec_dump_find_thread(d, h.tid))
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": THREAD %" PRIu32 " appears twice",
		           off, h.tid);
	t = push(&d->threads, &d->nthreads, sizeof(*t));
	if (!t)
		return fail(err, -PTREC_ENOMEM, off, "out of memory for THREAD records");
	t->hdr = h;
	t->data = payload + sizeof(h);
	t->offset = off;
	return 0;
}

static int read_memory(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                       uint64_t off, struct ptrec_dump_error *err)
{
	struct ptrec_dump_memory_rec *m;
	struct ptrec_dump_memory h;
	uint64_t po = off + sizeof(struct ptrec_dump_record);

	if (size < sizeof(h))
		return fail(err, -PTREC_EFORMAT, off + 8,
		            "MEMORY record has %" PRIu64 " payload bytes, less than its header",
		            size);
	memcpy(&h, payload, sizeof(h));
	if (h.size != size - sizeof(h))
		return fail(err, -PTREC_EFORMAT, po + offsetof(struct ptrec_dump_memory, size),
		            "MEMORY size %" PRIu64 " does not match the record's %" PRIu64 " bytes",
		            h.size, size - sizeof(h));
	if (h.vaddr + h.size < h.vaddr)
		return fail(err, -PTREC_EFORMAT, po, "MEMORY range 0x%" PRIx64 "+%" PRIu64
		            " wraps around the address space", h.vaddr, h.size);
	if (h.kind < PTREC_MEM_CODE || h.kind > PTREC_MEM_STACK)
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": MEMORY kind %" PRIu32 " unknown",
		           po, h.kind);
	m = push(&d->memory, &d->nmemory, sizeof(*m));
	if (!m)
		return fail(err, -PTREC_ENOMEM, off, "out of memory for MEMORY records");
	m->hdr = h;
	m->bytes = payload + sizeof(h);
	return 0;
}

/* A TASK record: records shorter than the struct (down to tid, state and nr) are read with the
 * missing fields 0, longer ones with their extra bytes ignored. */
static int read_task(struct ptrec_dump *d, const uint8_t *payload, uint64_t size, uint64_t off,
                     struct ptrec_dump_error *err)
{
	struct ptrec_dump_task t, *slot;
	uint64_t po = off + sizeof(struct ptrec_dump_record);

	if (size < offsetof(struct ptrec_dump_task, args))
		return fail(err, -PTREC_EFORMAT, off + 8, "TASK record has %" PRIu64 " payload "
		            "bytes, less than its first %zu", size,
		            offsetof(struct ptrec_dump_task, args));
	memset(&t, 0, sizeof(t));
	memcpy(&t, payload, size < sizeof(t) ? (size_t)size : sizeof(t));
	if (t.state < PTREC_TASK_SYSCALL || t.state > PTREC_TASK_UNREADABLE) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": TASK %" PRIu32 " state %" PRIu32
		           " unknown; ignored", po, t.tid, t.state);
		return 0;
	}
	if (ptrec_dump_find_task(d, t.tid)) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": second TASK record of thread %"
		           PRIu32 " ignored", off, t.tid);
		return 0;
	}
	slot = push(&d->tasks, &d->ntasks, sizeof(*slot));
	if (!slot)
		return fail(err, -PTREC_ENOMEM, off, "out of memory for TASK records");
	*slot = t;
	return 0;
}

/* A SYSFILE record.  Nothing in it is fatal: a short record or a second one of a kind is
 * ignored with a warning, an unknown kind (a later writer's) is skipped. */
static void read_sysfile(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                         uint64_t off, int appended)
{
	struct ptrec_dump_sysfile h;
	struct ptrec_dump_sysfile_rec *f;

	if (size < sizeof(h)) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": SYSFILE record has %" PRIu64
		           " payload bytes, less than its %zu-byte header; ignored", off, size,
		           sizeof(h));
		return;
	}
	memcpy(&h, payload, sizeof(h));
	if (h.kind == 0 || h.kind >= PTREC_SYSFILE_KINDS)
		return;
	f = &d->sysfiles[h.kind];
	if (f->present) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": second SYSFILE record of kind %"
		           PRIu32 " ignored", off, h.kind);
		return;
	}
	f->present = 1;
	f->hdr = h;
	f->bytes = payload + sizeof(h);
	f->len = (size_t)(size - sizeof(h));
	f->appended = appended;
	if (h.size < f->len) {
		ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": SYSFILE kind %" PRIu32 " says the "
		           "file had %" PRIu64 " bytes but keeps %zu", off, h.kind, h.size, f->len);
		f->hdr.size = f->len;
	}
	if (f->hdr.size > f->len)
		f->hdr.flags |= PTREC_SYSFILE_CUT;
}

static int read_buildid(struct ptrec_dump *d, const uint8_t *payload, uint64_t size,
                        uint64_t off, struct ptrec_dump_error *err)
{
	struct ptrec_dump_buildid_rec *b;
	struct ptrec_dump_buildid h;
	uint64_t po = off + sizeof(struct ptrec_dump_record);

	if (size < sizeof(h))
		return fail(err, -PTREC_EFORMAT, off + 8,
		            "BUILDID record has %" PRIu64 " payload bytes, less than its header",
		            size);
	memcpy(&h, payload, sizeof(h));
	if (h.id_len > sizeof(b->id) || h.path_len >= sizeof(b->path))
		return fail(err, -PTREC_EFORMAT, po + 8, "BUILDID lengths id %" PRIu32 " path %"
		            PRIu32 " too large", h.id_len, h.path_len);
	if ((uint64_t)h.id_len + h.path_len != size - sizeof(h))
		return fail(err, -PTREC_EFORMAT, po + 8, "BUILDID lengths id %" PRIu32 " + path %"
		            PRIu32 " do not match the record's %" PRIu64 " bytes", h.id_len,
		            h.path_len, size - sizeof(h));
	b = push(&d->buildids, &d->nbuildids, sizeof(*b));
	if (!b)
		return fail(err, -PTREC_ENOMEM, off, "out of memory for BUILDID records");
	b->start = h.start;
	b->id_len = h.id_len;
	memcpy(b->id, payload + sizeof(h), h.id_len);
	memcpy(b->path, payload + sizeof(h) + h.id_len, h.path_len);
	b->path[h.path_len] = 0;
	return 0;
}

/* Checks the file header at buf (size bytes of the file's start; file_size in all) into *h. */
static int check_header(const uint8_t *buf, size_t size, uint64_t file_size,
                        struct ptrec_dump_header *h, struct ptrec_dump_error *err)
{
	if (size < sizeof(*h))
		return fail(err, -PTREC_ETRUNC, 0, "file has %" PRIu64 " bytes, too short for the "
		            "%zu-byte dump header", file_size, sizeof(*h));
	memcpy(h, buf, sizeof(*h));
	if (memcmp(h->magic, PTREC_DUMP_MAGIC, 8))
		return fail(err, -PTREC_EFORMAT, 0, "bad magic: not a ptrec dump");
	if (h->version < PTREC_DUMP_VERSION_MIN || h->version > PTREC_DUMP_VERSION)
		return fail(err, -PTREC_EFORMAT, 8, "dump format version %" PRIu32 " not supported "
		            "(this build reads versions %u to %u)", h->version,
		            PTREC_DUMP_VERSION_MIN, PTREC_DUMP_VERSION);
	if (h->header_size < sizeof(*h) || h->header_size % 8 || h->header_size > 4096)
		return fail(err, -PTREC_EFORMAT, 12, "header_size %" PRIu32 " invalid",
		            h->header_size);
	return 0;
}

static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int ptrec_dump_load(const char *path, struct ptrec_dump_file *f, struct ptrec_dump_error *err)
{
	struct ptrec_dump_header h;
	struct stat st;
	uint8_t head[sizeof(h)];
	int fd, rc;

	memset(f, 0, sizeof(*f));
	memset(err, 0, sizeof(*err));
	fd = ptrec_open_regular(path, &st);
	if (fd < 0) {
		if (errno == EINVAL)
			return fail(err, -PTREC_EIO, 0, "not a regular file (a %s)",
			            ptrec_file_type(st.st_mode));
		return fail(err, -PTREC_EIO, 0, "cannot open: %s", strerror(errno));
	}
	/* The header first: a large file that is not a dump costs one small read. */
	ssize_t n = read_full(fd, head, sizeof(head));
	if (n < 0) {
		rc = fail(err, -PTREC_EIO, 0, "read failed: %s", strerror(errno));
		goto out;
	}
	rc = check_header(head, (size_t)n, (uint64_t)st.st_size, &h, err);
	if (rc)
		goto out;
	if ((uint64_t)st.st_size > SIZE_MAX / 2) {
		rc = fail(err, -PTREC_ENOMEM, 0, "file of %lld bytes is too large",
		          (long long)st.st_size);
		goto out;
	}
	f->size = (size_t)st.st_size;
	f->data = malloc(f->size);
	if (!f->data) {
		rc = fail(err, -PTREC_ENOMEM, 0, "out of memory reading %zu bytes", f->size);
		goto out;
	}
	memcpy(f->data, head, sizeof(head));
	n = read_full(fd, f->data + sizeof(head), f->size - sizeof(head));
	if (n < 0) {
		rc = fail(err, -PTREC_EIO, sizeof(head), "read failed: %s", strerror(errno));
		goto out;
	}
	f->size = sizeof(head) + (size_t)n; /* a file that shrank is read as far as it goes */
out:
	close(fd);
	if (rc)
		ptrec_dump_file_free(f);
	return rc;
}

void ptrec_dump_file_free(struct ptrec_dump_file *f)
{
	free(f->data);
	f->data = NULL;
	f->size = 0;
}

int ptrec_dump_parse(const uint8_t *buf, size_t size, struct ptrec_dump *d,
                     struct ptrec_dump_error *err)
{
	struct ptrec_dump_header h;
	uint64_t off;
	int have_process = 0, rc = 0;
	size_t crashed = 0;
	uint64_t after_end = 0; /* the offset after the dump's END record */

	memset(d, 0, sizeof(*d));
	memset(err, 0, sizeof(*err));
	rc = check_header(buf, size, size, &h, err);
	if (rc)
		return rc;
	off = h.header_size;
	if (off > size)
		return fail(err, -PTREC_ETRUNC, size, "file ends inside the %" PRIu32
		            "-byte header", h.header_size);
	d->header = h;
	if (h.flags)
		ptrec_warn(&d->warnings, "offset 0x10: header flags 0x%" PRIx64 " not zero",
		           h.flags);
	for (;;) {
		struct ptrec_dump_record r;
		const uint8_t *payload;
		uint64_t remain = size - off, padded;

		if (d->complete) { /* after END: what the report child appended, if anything */
			if (appended_record(d, buf, size, off, after_end))
				goto done;
		}
		if (remain == 0) {
			if (have_process)
				ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": dump cut short: no END "
				           "record; read as far as it goes", off);
			break;
		}
		if (remain < sizeof(r)) {
			if (!have_process)
				break;
			ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": dump cut short inside a "
			           "record header; read as far as it goes", off);
			break;
		}
		memcpy(&r, buf + off, sizeof(r));
		if (!have_process && r.type != PTREC_REC_PROCESS) {
			rc = fail(err, -PTREC_EFORMAT, off, "first record is %s (type %" PRIu32
			          "), expected PROCESS", ptrec_dump_record_name(r.type), r.type);
			goto out;
		}
		if (r.reserved) {
			rc = fail(err, -PTREC_EFORMAT, off + 4, "%s record reserved field is 0x%"
			          PRIx32 ", expected zero", ptrec_dump_record_name(r.type),
			          r.reserved);
			goto out;
		}
		remain -= sizeof(r);
		if (r.size > remain) {
			if (!have_process) {
				rc = fail(err, -PTREC_ETRUNC, off + 8, "PROCESS record claims %" PRIu64
				          " bytes, only %" PRIu64 " remain", r.size, remain);
				goto out;
			}
			ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": dump cut short: %s record "
			           "claims %" PRIu64 " bytes, only %" PRIu64 " remain; read as far "
			           "as it goes", off, ptrec_dump_record_name(r.type), r.size, remain);
			break;
		}
		payload = buf + off + sizeof(r);
		switch (r.type) {
		case PTREC_REC_PROCESS:
			if (have_process) {
				rc = fail(err, -PTREC_EFORMAT, off, "second PROCESS record");
				goto out;
			}
			rc = read_process(d, payload, r.size, off, err);
			have_process = 1;
			break;
		case PTREC_REC_REGS:
			rc = read_regs(d, payload, r.size, off, err);
			break;
		case PTREC_REC_THREAD:
			rc = read_thread(d, payload, r.size, off, err);
			break;
		case PTREC_REC_MAPS:
			rc = read_maps(d, payload, r.size, off, err);
			break;
		case PTREC_REC_STATUS:
			rc = read_status(d, payload, r.size, off, err);
			break;
		case PTREC_REC_WATCH:
			rc = read_watch(d, payload, r.size, off, err);
			break;
		case PTREC_REC_BUILDID:
			rc = read_buildid(d, payload, r.size, off, err);
			break;
		case PTREC_REC_MEMORY:
			rc = read_memory(d, payload, r.size, off, err);
			break;
		case PTREC_REC_TASK:
			rc = read_task(d, payload, r.size, off, err);
			break;
		case PTREC_REC_END:
			if (r.size) {
				rc = fail(err, -PTREC_EFORMAT, off + 8, "END record has %" PRIu64
				          " payload bytes, expected none", r.size);
				goto out;
			}
			off += sizeof(r);
			if (d->complete) /* the END of the appended records */
				goto done;
			d->complete = 1;
			after_end = off;
			continue;
		case PTREC_REC_SYSFILE:
			read_sysfile(d, payload, r.size, off, d->complete);
			break;
		default:
			break; /* unknown types are skipped */
		}
		if (rc)
			goto out;
		padded = (r.size + 7) & ~(uint64_t)7;
		if (padded > remain) {
			off += sizeof(r) + r.size;
			ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": dump cut short inside record "
			           "padding; read as far as it goes", off);
			break;
		}
		for (uint64_t i = r.size; i < padded; i++)
			if (payload[i]) {
				ptrec_warn(&d->warnings, "offset 0x%" PRIx64 ": non-zero padding after "
				           "%s record", off + sizeof(r) + i,
				           ptrec_dump_record_name(r.type));
				break;
			}
		off += sizeof(r) + padded;
	}
done:
	d->end_offset = off;
	if (!have_process) {
		rc = fail(err, -PTREC_ETRUNC, off, "dump ends before its PROCESS record is complete");
		goto out;
	}
	if (d->complete && d->nthreads != d->process.nthreads)
		ptrec_warn(&d->warnings, "PROCESS announces %" PRIu32 " threads, the dump holds %zu",
		           d->process.nthreads, d->nthreads);
	else if (!d->complete && d->nthreads < d->process.nthreads)
		ptrec_warn(&d->warnings, "dump cut short: %zu of %" PRIu32 " THREAD records present",
		           d->nthreads, d->process.nthreads);
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].hdr.flags & PTREC_THREAD_CRASHED)
			crashed++;
	if (crashed > 1)
		ptrec_warn(&d->warnings, "%zu threads are flagged as crashed", crashed);
	return 0;
out:
	ptrec_dump_free(d);
	return rc;
}

void ptrec_dump_free(struct ptrec_dump *d)
{
	free(d->threads);
	free(d->memory);
	free(d->buildids);
	free(d->tasks);
	free(d->maps);
	free(d->maps_text);
	free(d->status_text);
	ptrec_warnings_free(&d->warnings);
	memset(d, 0, sizeof(*d));
}

const struct ptrec_dump_thread_rec *ptrec_dump_find_thread(const struct ptrec_dump *d,
                                                           uint32_t tid)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].hdr.tid == tid)
			return &d->threads[i];
	return NULL;
}

const struct ptrec_dump_task *ptrec_dump_find_task(const struct ptrec_dump *d, uint32_t tid)
{
	for (size_t i = 0; i < d->ntasks; i++)
		if (d->tasks[i].tid == tid)
			return &d->tasks[i];
	return NULL;
}

size_t ptrec_dump_read_memory(const struct ptrec_dump *d, uint64_t addr, void *out, size_t len)
{
	for (size_t i = 0; i < d->nmemory; i++) {
		const struct ptrec_dump_memory_rec *m = &d->memory[i];
		uint64_t n;

		if (addr < m->hdr.vaddr || addr - m->hdr.vaddr >= m->hdr.size)
			continue;
		n = m->hdr.size - (addr - m->hdr.vaddr);
		if (n > len)
			n = len;
		memcpy(out, m->bytes + (addr - m->hdr.vaddr), (size_t)n);
		return (size_t)n;
	}
	return 0;
}
