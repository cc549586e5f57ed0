/* patch_entries.c — writes calls of __ptrec_fentry into the patchable function entries of the
 * modules that registered them (patch_entries.h has the contract, doc/instrumented.md the
 * design and what was measured).
 *
 * Per entry: the address must lie in an executable, readable PT_LOAD segment of the module that
 * registered it (dl_iterate_phdr), its bytes must be a NOP sled or already the call, and the hook
 * must be within the call's reach (the module's own stub otherwise, which always is).
 * - x86-64: five bytes (GCC: five 0x90; Clang: one 0f 1f 44 00 xx) become `call rel32`, written
 *   with one atomic store when they sit in one aligned 8- or 16-byte block (always for GCC's
 *   16-byte-aligned functions, with or without endbr64), so another thread entering the
 *   function runs either the NOPs or the whole call.
 * - aarch64: two NOPs become `mov x9, x30; bl` (write_entry says how, and why only while no
 *   other thread runs code), and the instruction cache is synchronized.
 * The page (two when the entry crosses a page boundary) is made writable while staying
 * executable, since other threads may be running code on it, and given back its segment's
 * protection right after.
 *
 * Init time only (ptrec_init, dlopen constructors), under a mutex; never in the crash path. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/patch_entries.h"
#include "capture/patch_skip.h"
#include "core/settings.h"

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrec_patch_module *patch_modules; /* registered, newest first */
static int patch_live;                           /* apply ran: patch modules as they come */
static int patch_refused;                        /* errno of a refused mprotect, 0 if none */
static unsigned patch_skipped;                   /* entries left alone (not a NOP sled, out of
                                                    every segment, out of reach) */
static unsigned patch_busy;                      /* other threads running code at apply: not
                                                    patched */
static struct ptrec_skip_names skip_names;       /* PTREC_NO_TRACE (patch_skip.h) */
static int skip_state;                           /* 0 unread, 1 read, -1 too long */
static struct ptrec_skip_addrs skip_addrs;       /* the module being patched: its functions
                                                    PTREC_NO_TRACE names */
static unsigned skip_left;                       /* entries left as NOPs by PTREC_NO_TRACE */
static const char *skip_why;                     /* a module's symbols could not be read */

/* The executable segments of the module holding an address. */
struct patch_find {
	uintptr_t addr;
	int found;
	const char *path;   /* the module's file ("" for the executable, as dl_iterate_phdr says) */
	uintptr_t bias;     /* its load bias */
	unsigned nseg;
	struct {
		uintptr_t lo, hi;
		int prot;
	} seg[16];
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct patch_find *f = data;
	(void)size;
	int holds = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz)
			holds = 1;
	}
	if (!holds)
		return 0;
	f->found = 1;
	f->path = info->dlpi_name;
	f->bias = info->dlpi_addr;
	for (unsigned i = 0; i < info->dlpi_phnum && f->nseg < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !(ph->p_flags & PF_R))
			continue;
		f->seg[f->nseg].lo = info->dlpi_addr + ph->p_vaddr;
		f->seg[f->nseg].hi = f->seg[f->nseg].lo + ph->p_memsz;
		f->seg[f->nseg].prot = PROT_READ | PROT_EXEC | ((ph->p_flags & PF_W) ? PROT_WRITE : 0);
		f->nseg++;
	}
	return 1;
}

/* The protection of the executable segment holding [a, a + PTREC_PATCH_BYTES), or -1. */
static int seg_prot(const struct patch_find *f, uintptr_t a)
{
	for (unsigned i = 0; i < f->nseg; i++)
		if (a >= f->seg[i].lo && a + PTREC_PATCH_BYTES <= f->seg[i].hi)
			return f->seg[i].prot;
	return -1;
}

#if defined(__aarch64__)
/* The two instructions of a patched entry, and a NOP (little-endian words). */
#define A64_NOP 0xd503201fu
#define A64_MOV_X9_X30 0xaa1e03e9u /* orr x9, xzr, x30 */
#define A64_BL 0x94000000u         /* bl, imm26 = word offset */

static int is_nop_sled(const uint8_t *b)
{
	uint32_t w[2];
	memcpy(w, b, sizeof(w));
	return w[0] == A64_NOP && w[1] == A64_NOP;
}

/* `mov x9, x30; bl target` placed at address at, in ins; 0 when target is beyond a bl's
 * reach (128 MiB). */
static int make_call(uintptr_t at, uintptr_t target, uint8_t ins[PTREC_PATCH_BYTES])
{
	int64_t rel = (int64_t)(target - (at + 4));
	if (!target || (rel & 3) || rel < -(1ll << 27) || rel >= (1ll << 27))
		return 0;
	uint32_t w[2] = {A64_MOV_X9_X30, A64_BL | ((uint32_t)(rel >> 2) & 0x3ffffffu)};
	memcpy(ins, w, sizeof(w));
	return 1;
}

/* Writes ins over the two NOPs at a (writable now): one 8-byte store when they share an aligned
 * doubleword (a function without BTI), else the `mov x9, x30` first and then the `bl`.  Unlike
 * x86-64's one-instruction call, the pair does not change at once for a thread that is between
 * the two NOPs while they are written: it would run the bl without the mov and lose its return
 * address.  So ptrec_init patches only while every other thread is blocked in a system call
 * (threads_settle), and a module registered later is patched from its own constructor, before
 * dlopen returns it.  Then the instruction cache is made to see the new words. */
static void write_entry(uintptr_t a, const uint8_t ins[PTREC_PATCH_BYTES])
{
	if (!(a & 7)) {
		uint64_t v;
		memcpy(&v, ins, sizeof(v));
		__atomic_store_n((uint64_t *)a, v, __ATOMIC_SEQ_CST);
	} else {
		uint32_t w[2];
		memcpy(w, ins, sizeof(w));
		__atomic_store_n((uint32_t *)a, w[0], __ATOMIC_SEQ_CST);
		__builtin___clear_cache((char *)a, (char *)a + 4);
		__atomic_store_n((uint32_t *)(a + 4), w[1], __ATOMIC_SEQ_CST);
	}
	__builtin___clear_cache((char *)a, (char *)a + PTREC_PATCH_BYTES);
}
#else
static int is_nop_sled(const uint8_t *b)
{
	static const uint8_t nop1[PTREC_PATCH_BYTES] = {0x90, 0x90, 0x90, 0x90, 0x90};
	return !memcmp(b, nop1, sizeof(nop1)) ||
	       (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0x00);
}

/* `call target` placed at address at, in ins; 0 when target is beyond a rel32's reach. */
static int make_call(uintptr_t at, uintptr_t target, uint8_t ins[PTREC_PATCH_BYTES])
{
	int64_t rel = (int64_t)(target - (at + PTREC_PATCH_BYTES));
	if (!target || rel < INT32_MIN || rel > INT32_MAX)
		return 0;
	int32_t r32 = (int32_t)rel;
	ins[0] = 0xe8;
	memcpy(ins + 1, &r32, sizeof(r32));
	return 1;
}

/* Writes ins over the five bytes at a (writable now) so that an instruction fetch by another
 * thread sees the old bytes or the new ones, never a mix, whenever they share an aligned 8- or
 * 16-byte block; byte by byte (first byte last) otherwise. */
static void write_entry(uintptr_t a, const uint8_t ins[PTREC_PATCH_BYTES])
{
	if ((a & 7) <= 8 - PTREC_PATCH_BYTES) {
		uint64_t *w = (uint64_t *)(a & ~(uintptr_t)7);
		uint64_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
		memcpy((uint8_t *)&v + (a & 7), ins, PTREC_PATCH_BYTES);
		__atomic_store_n(w, v, __ATOMIC_SEQ_CST);
	} else if ((a & 15) <= 16 - PTREC_PATCH_BYTES) {
		uint64_t *w = (uint64_t *)(a & ~(uintptr_t)15);
		uint64_t old[2] = {__atomic_load_n(&w[0], __ATOMIC_RELAXED),
		                   __atomic_load_n(&w[1], __ATOMIC_RELAXED)};
		uint64_t nv[2] = {old[0], old[1]};
		memcpy((uint8_t *)nv + (a & 15), ins, PTREC_PATCH_BYTES);
		unsigned char ok;
		do { /* only this thread writes text here: the first try succeeds */
			__asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
			                 : "=q"(ok), "+m"(*(volatile uint64_t(*)[2])w), "+a"(old[0]),
			                   "+d"(old[1])
			                 : "b"(nv[0]), "c"(nv[1])
			                 : "memory", "cc");
		} while (!ok);
	} else {
		volatile uint8_t *b = (volatile uint8_t *)a;
		for (int i = PTREC_PATCH_BYTES - 1; i >= 0; i--)
			b[i] = ins[i];
	}
}
#endif

/* Pages [lo, hi) currently writable, and the protection to give back. */
struct patch_window {
	uintptr_t lo, hi;
	int prot;
};

static void window_close(struct patch_window *w)
{
	if (w->hi > w->lo)
		mprotect((void *)w->lo, w->hi - w->lo, w->prot);
	w->lo = w->hi = 0;
}

/* Patches m's entries; returns 0, or an errno when the first page could not be made writable
 * (then nothing of m was written). */
static int patch_module(struct ptrec_patch_module *m)
{
	struct patch_find f = {.addr = (uintptr_t)m->start};
	struct patch_window w = {0, 0, 0};
	const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	int err = 0;

	dl_iterate_phdr(find_module, &f);
	m->patched = 0;
	skip_addrs.n = 0;
	if (f.found && skip_names.n) {
		const char *why;
		const char *path = f.path && *f.path ? f.path : "/proc/self/exe";
		if (ptrec_skip_find(&skip_names, path, f.bias, &skip_addrs, &why) != 0)
			skip_why = why;
	}
	for (const uintptr_t *p = m->start; f.found && p < m->stop; p++) {
		uintptr_t a = *p;
		uint8_t ins[PTREC_PATCH_BYTES];
		int prot = a ? seg_prot(&f, a) : -1;
		if (prot < 0 || !(make_call(a, (uintptr_t)m->hook, ins) ||
		                  make_call(a, (uintptr_t)m->stub, ins))) {
			patch_skipped += a != 0; /* 0: an entry of a function the linker dropped */
			continue;
		}
		if (!memcmp((const void *)a, ins, sizeof(ins))) {
			m->patched++;
			continue;
		}
		if (skip_addrs.n && ptrec_skip_has(&skip_addrs, a)) {
			skip_left++;
			continue;
		}
		if (!is_nop_sled((const uint8_t *)a)) {
			patch_skipped++;
			continue;
		}
		uintptr_t lo = a & ~(pg - 1), hi = (a + PTREC_PATCH_BYTES + pg - 1) & ~(pg - 1);
		if (lo < w.lo || hi > w.hi) {
			window_close(&w);
			if (mprotect((void *)lo, hi - lo, prot | PROT_WRITE) != 0) {
				err = errno;
				break;
			}
			w = (struct patch_window){lo, hi, prot};
		}
		write_entry(a, ins);
		m->patched++;
	}
	window_close(&w);
	return err;
}

/* Appends to ptrec_patch_note what PTREC_NO_TRACE did: " (N left out by PTREC_NO_TRACE;
 * symbols unreadable: WHY; no function NAME, NAME)", or that it was ignored. */
static void note_skip(void)
{
	size_t n = strlen(ptrec_patch_note);
	const size_t cap = sizeof(ptrec_patch_note);
#define NOTE(...) (void)(n < cap && (n += (size_t)snprintf(ptrec_patch_note + n, cap - n, __VA_ARGS__)))
	if (skip_state < 0)
		NOTE(" (PTREC_NO_TRACE ignored: %u bytes or longer)", PTREC_SKIP_LIST_MAX);
	if (!skip_names.n)
		return;
	NOTE(" (%u left out by PTREC_NO_TRACE", skip_left);
	if (skip_why)
		NOTE("; symbols unreadable: %s", skip_why);
	const char *sep = "; no function ";
	for (unsigned i = 0; i < skip_names.n; i++) {
		if (!(skip_names.found & (1ull << i))) {
			NOTE("%s%s", sep, skip_names.name[i]);
			sep = ", ";
		}
	}
	NOTE(")");
#undef NOTE
}

/* Fills ptrec_patch_note from the modules' counts; under patch_lock. */
static void note_update(void)
{
	unsigned mods = 0, entries = 0, patched = 0;
	for (const struct ptrec_patch_module *m = patch_modules; m; m = m->next) {
		mods++;
		entries += (unsigned)(m->stop - m->start);
		patched += m->patched;
	}
	if (!mods) {
		ptrec_patch_note[0] = '\0';
		return;
	}
	int n = snprintf(ptrec_patch_note, sizeof(ptrec_patch_note),
	                 "%u of %u patchable function entries in %u module%s call __ptrec_fentry",
	                 patched, entries, mods, mods == 1 ? "" : "s");
	if (n > 0 && (size_t)n < sizeof(ptrec_patch_note) && patch_busy)
		snprintf(ptrec_patch_note + n, sizeof(ptrec_patch_note) - (size_t)n,
		         " (%u other threads ran code at ptrec_init)", patch_busy);
	else if (n > 0 && (size_t)n < sizeof(ptrec_patch_note) && patch_refused)
		snprintf(ptrec_patch_note + n, sizeof(ptrec_patch_note) - (size_t)n,
		         " (making text writable was refused: %s)", strerror(patch_refused));
	else if (n > 0 && (size_t)n < sizeof(ptrec_patch_note) && patch_skipped)
		snprintf(ptrec_patch_note + n, sizeof(ptrec_patch_note) - (size_t)n,
		         " (%u left alone: not a NOP sled, or the hook out of reach)", patch_skipped);
	note_skip();
}

PTREC_API void __ptrec_patch_register(struct ptrec_patch_module *m)
{
	if (!m || m->struct_size != sizeof(*m) || !m->start || m->stop <= m->start)
		return;
	pthread_mutex_lock(&patch_lock);
	m->next = patch_modules;
	m->patched = 0;
	patch_modules = m;
	if (patch_live && !patch_refused) {
		int err = patch_module(m);
		if (err)
			patch_refused = err;
	}
	note_update();
	pthread_mutex_unlock(&patch_lock);
}

/* How many of the process's other threads are running code rather than blocked in a system
 * call, as /proc/self/task/TID/syscall tells ("running", or "-1 ..." outside a system call);
 * 0 when /proc cannot tell (not mounted: a chroot). */
static unsigned threads_running(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	long self = syscall(SYS_gettid);
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char path[sizeof(e->d_name) + 32], buf[16];
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || atol(e->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* gone */
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k > 0 && (buf[0] == 'r' || buf[0] == '-'))
			n++;
	}
	closedir(d);
	return n;
}

/* Waits up to about 200 ms for the other threads to be blocked in system calls; returns how
 * many still run code.  A thread stopped inside an entry's NOPs when the call is
 * written there would resume in the middle of the call; one blocked in a system call is not
 * there, and one entering a function meanwhile runs the NOPs or the whole call. */
static unsigned threads_settle(void)
{
	unsigned n = threads_running();
	for (int i = 0; i < 200 && n; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
		n = threads_running();
	}
	return n;
}

int ptrec_patch_apply(char *why, size_t why_len)
{
	unsigned patched = 0, busy = 0;
	int refused = 0;

	pthread_mutex_lock(&patch_lock);
	patch_skipped = 0;
	patch_busy = 0;
	skip_left = 0;
	skip_why = NULL;
	if (!skip_state)
		skip_state = ptrec_skip_parse(ptrec_env("PTREC_NO_TRACE"), &skip_names) < 0 ? -1 : 1;
	if (patch_modules && (busy = threads_settle()) != 0) {
		patch_busy = busy;
		note_update();
		pthread_mutex_unlock(&patch_lock);
		snprintf(why, why_len,
		         "patchable function entries not patched: %u other thread%s kept running code "
		         "at ptrec_init, which writing the calls could break: call ptrec_init first in "
		         "main, before threads start", busy, busy == 1 ? "" : "s");
		return -PTREC_ENOSUPP;
	}
	for (struct ptrec_patch_module *m = patch_modules; m && !refused; m = m->next) {
		refused = patch_module(m);
		patched += m->patched;
	}
	patch_refused = refused;
	patch_live = !refused;
	note_update();
	pthread_mutex_unlock(&patch_lock);
	if (refused && !patched) {
		snprintf(why, why_len,
		         "patchable function entries not patched: making code writable was refused "
		         "(%s; SELinux, seccomp, MemoryDenyWriteExecute?): allow it, or rebuild with "
		         "-finstrument-functions", strerror(refused));
		return -PTREC_ENOSUPP;
	}
	return (int)patched;
}
