/* preload.c — libptrec.so loaded with LD_PRELOAD into a program that does not link it
 * (`ptrec run`, ptrec(1)).
 *
 * A constructor starts the recorder from the PTREC_* environment, but only when PTREC_PRELOAD
 * is set and this copy of the library is the one LD_PRELOAD named (a program that links
 * libptrec statically, like the ptrec tool, has the constructor too and stays quiet).  A
 * program that links libptrec itself (a DT_NEEDED entry of any loaded object) calls ptrec_init
 * on its own, with the same PTREC_* variables: the constructor leaves it to the program, so
 * there is never a second init.  PTREC_PRELOAD=once (`ptrec run --no-follow`) then takes
 * libptrec out of the process's environment (its LD_PRELOAD entry and PTREC_PRELOAD; the other
 * PTREC_* settings stay for programs that link libptrec themselves), so the programs it starts
 * run without the recorder.
 *
 * The report child started at crash time gets the environment of ptrec_init without
 * libptrec's LD_PRELOAD entry and without PTREC_PRELOAD (ptrec_preload_env_prepare), so the
 * report tool never records itself.  Normal context only. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/safe_str.h"
#include "core/settings.h"
#include "runtime/recorder.h"

extern char **environ;

/* Where this copy of the library lives: the file and the load base of the object holding this
 * code (for libptrec.so its path as the loader opened it; for a static copy the executable). */
static int self_object(const char **path, const void **base)
{
	Dl_info info;
	if (!dladdr((void *)&self_object, &info) || !info.dli_fname)
		return -1;
	*path = info.dli_fname;
	*base = info.dli_fbase;
	return 0;
}

static const char *base_name(const char *path, size_t len)
{
	const char *b = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			b = path + i + 1;
	return b;
}

/* 1 if the LD_PRELOAD entry [e, e + len) names libptrec: a file whose name starts with
 * "libptrec.so", or the very file this copy was loaded from. */
static int entry_is_libptrec(const char *e, size_t len)
{
	const char *self, *b = base_name(e, len);
	const void *base;
	char path[PTREC_PATH_MAX];
	struct stat a, s;

	if ((size_t)(e + len - b) >= 11 && !memcmp(b, "libptrec.so", 11))
		return 1;
	if (len >= sizeof(path) || memchr(e, '/', len) == NULL || self_object(&self, &base) != 0)
		return 0;
	memcpy(path, e, len);
	path[len] = '\0';
	return stat(path, &a) == 0 && stat(self, &s) == 0 && a.st_dev == s.st_dev &&
	       a.st_ino == s.st_ino;
}

/* LD_PRELOAD's entries are separated by spaces or colons (ld.so(8)). */
static int preload_sep(char c)
{
	return c == ' ' || c == ':';
}

int ptrec_preload_without_libptrec(const char *list, char *out, size_t cap)
{
	size_t n = 0;
	int removed = 0;

	for (const char *p = list; *p;) {
		const char *e;
		if (preload_sep(*p)) {
			p++;
			continue;
		}
		for (e = p; *e && !preload_sep(*e); e++)
			;
		if (entry_is_libptrec(p, (size_t)(e - p))) {
			removed++;
		} else {
			if (n + (n > 0) + (size_t)(e - p) + 1 > cap)
				return -1;
			if (n > 0)
				out[n++] = ':';
			memcpy(out + n, p, (size_t)(e - p));
			n += (size_t)(e - p);
		}
		p = e;
	}
	if (cap == 0)
		return -1;
	out[n] = '\0';
	return removed;
}

/* 1 if this copy was loaded because LD_PRELOAD named it. */
static int loaded_by_preload(void)
{
	const char *list = ptrec_env("LD_PRELOAD"), *self;
	const void *base;
	size_t self_len;

	if (!list || self_object(&self, &base) != 0)
		return 0;
	self_len = strlen(self);
	for (const char *p = list; *p;) {
		const char *e;
		struct stat a, s;
		char path[PTREC_PATH_MAX];
		if (preload_sep(*p)) {
			p++;
			continue;
		}
		for (e = p; *e && !preload_sep(*e); e++)
			;
		size_t len = (size_t)(e - p);
		if (memchr(p, '/', len) == NULL) {
			/* a bare name is looked up like a DT_NEEDED entry: compare file names */
			const char *b = base_name(self, self_len);
			if (strlen(b) == len && !memcmp(b, p, len))
				return 1;
		} else if (len < sizeof(path)) {
			memcpy(path, p, len);
			path[len] = '\0';
			if (stat(path, &a) == 0 && stat(self, &s) == 0 && a.st_dev == s.st_dev &&
			    a.st_ino == s.st_ino)
				return 1;
		}
		p = e;
	}
	return 0;
}

/* dl_iterate_phdr callback: stops (returns 1) at an object with a DT_NEEDED entry naming
 * libptrec.so (libptrec.so itself has none). */
static int needs_libptrec(struct dl_phdr_info *info, size_t size, void *unused)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t strtab = 0;

	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
	if (!strtab)
		return 0;
	/* glibc relocates the loaded objects' DT_STRTAB in place; the vDSO's stays an offset */
	if (strtab < info->dlpi_addr)
		strtab += info->dlpi_addr;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_NEEDED &&
		    !strncmp((const char *)strtab + d->d_un.d_val, "libptrec.so", 11))
			return 1;
	return 0;
}

/* 1 if the program (or a library it loaded) links libptrec itself. */
static int program_links_libptrec(void)
{
	return dl_iterate_phdr(needs_libptrec, NULL) != 0;
}

/* PTREC_PRELOAD=once: takes libptrec out of this process's environment. */
static void leave_environment(void)
{
	const char *list = getenv("LD_PRELOAD");

	unsetenv("PTREC_PRELOAD");
	if (!list)
		return;
	size_t cap = strlen(list) + 1;
	char *rest = malloc(cap);
	if (!rest)
		return;
	if (ptrec_preload_without_libptrec(list, rest, cap) > 0) {
		if (rest[0])
			setenv("LD_PRELOAD", rest, 1);
		else
			unsetenv("LD_PRELOAD");
	}
	free(rest);
}

__attribute__((constructor)) static void preload_start(void)
{
	const char *mode = ptrec_env("PTREC_PRELOAD");
	int r;

	if (!mode || !*mode || !loaded_by_preload())
		return;
	if (!program_links_libptrec()) {
		ptrec_rec.quiet_init = 1; /* `ptrec run` says once whether history is recorded */
		r = ptrec_init(NULL);
		ptrec_rec.quiet_init = 0;
		if (r < 0) {
			ptrec_stderr("ptrec: the recorder did not start in this program (LD_PRELOAD): ");
			ptrec_stderr(ptrec_strerror(r));
			ptrec_stderr("\n");
		}
	}
	if (!strcmp(mode, "once"))
		leave_environment();
}

void ptrec_preload_env_prepare(void)
{
	const char *list = ptrec_env("LD_PRELOAD");
	char rest[PTREC_PATH_MAX];

	/* a list too long for rest leaves the report child without LD_PRELOAD */
	if (!list || ptrec_preload_without_libptrec(list, rest, sizeof(rest)) < 0)
		rest[0] = '\0';
	ptrec_report_env_prepare(environ, rest);
}
