/* run_target.c — what `ptrec run` checks about a program before it runs it with libptrec
 * preloaded: it is found (PATH), and the dynamic loader will really load libptrec into it.
 * Refused, each with the reason: set-user-ID or set-group-ID files and files with capabilities
 * (the loader runs them in secure mode and ignores a LD_PRELOAD path), static programs (no
 * PT_INTERP: no loader at all), 32-bit programs, and programs that have libptrec already (a
 * DT_NEEDED entry libptrec.so*, or ptrec_init among their symbols: they start the recorder
 * themselves).  A "#!" script is judged by its interpreter.  Then, where it will record no
 * branch history (no PT or BTS here, and a program not built with `ptrec cflags`), one line
 * says so before it starts (issue 27: never silently nothing). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/elf_check.h"
#include "platform/cpuid.h"
#include "platform/pmu_sysfs.h"
#include "ptrec.h"
#include "symbols/elf_symbols.h"
#include "symbols/instr_scan.h"
#include "tool/tool.h"

#define ELF_PT_INTERP 3u
#define ELF_PT_DYNAMIC 2u
#define ELF_PT_LOAD 1u
#define ELF_DT_NULL 0
#define ELF_DT_NEEDED 1
#define ELF_DT_STRTAB 5
#define DYNAMIC_MAX (64u << 10) /* a larger dynamic section is not read */

int run_target_find(const char *cmd, char *out, size_t cap)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		if ((size_t)snprintf(out, cap, "%s", cmd) >= cap)
			return -1;
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		struct stat st;
		/* an empty entry is the current directory */
		if ((size_t)snprintf(out, cap, "%.*s%s%s", (int)len, p, len ? "/" : "", cmd) < cap &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!e)
			break;
		p = e;
	}
	return -1;
}

/* Reads the string at file offset off (up to cap - 1 bytes, NUL-terminated). */
static void read_string(int fd, uint64_t off, char *s, size_t cap)
{
	ssize_t n = pread(fd, s, cap - 1, (off_t)off);
	s[n > 0 ? (size_t)n : 0] = '\0';
}

/* The file offset of link-time address vaddr, through the PT_LOAD segments; 0 if none. */
static uint64_t vaddr_to_offset(const struct ptrec_elf_phdr *ph, unsigned n, uint64_t vaddr)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].type == ELF_PT_LOAD && vaddr >= ph[i].vaddr &&
		    vaddr - ph[i].vaddr < ph[i].filesz)
			return ph[i].offset + (vaddr - ph[i].vaddr);
	return 0;
}

/* Looks for a DT_NEEDED entry naming libptrec.so in the dynamic section dyn of the 64-bit
 * file fd; its name goes to needed.  Returns 1 if found. */
static int needs_libptrec(int fd, const struct ptrec_elf_phdr *ph, unsigned n,
                          const struct ptrec_elf_phdr *dyn, char *needed, size_t cap)
{
	size_t len = dyn->filesz < DYNAMIC_MAX ? (size_t)dyn->filesz : DYNAMIC_MAX;
	uint64_t *d = malloc(len + 16), strtab = 0;
	int found = 0;

	if (!d)
		return 0;
	len = (size_t)pread(fd, d, len, (off_t)dyn->offset);
	if ((ssize_t)len < 0)
		len = 0;
	len /= 16;
	for (size_t i = 0; i < len && d[2 * i] != ELF_DT_NULL; i++)
		if (d[2 * i] == ELF_DT_STRTAB)
			strtab = vaddr_to_offset(ph, n, d[2 * i + 1]);
	for (size_t i = 0; strtab && i < len && d[2 * i] != ELF_DT_NULL && !found; i++) {
		if (d[2 * i] != ELF_DT_NEEDED)
			continue;
		read_string(fd, strtab + d[2 * i + 1], needed, cap);
		found = !strncmp(needed, "libptrec.so", 11);
	}
	free(d);
	return found;
}

/* 1 if the program defines ptrec_init: libptrec linked in statically. */
static int has_ptrec_init(const char *path)
{
	struct ptrec_elf elf;
	struct ptrec_warnings w = {0};
	int found = 0;

	if (ptrec_elf_open_file(path, &elf, &w) != 0) {
		ptrec_warnings_free(&w);
		return 0;
	}
	for (size_t i = 0; i < elf.nsyms && !found; i++)
		found = !elf.syms[i].synthetic && !strcmp(elf.syms[i].name, "ptrec_init");
	ptrec_elf_close(&elf);
	ptrec_warnings_free(&w);
	return found;
}

/* Judges the ELF program open at fd (hd: its first bytes).  Returns 0 or prints why not and
 * returns -1. */
static int check_elf(const char *path, int fd, const struct stat *st, const uint8_t *hd,
                     size_t hlen)
{
	struct ptrec_elf_hdr h;
	struct ptrec_elf_phdr *ph, *interp = NULL, *dyn = NULL;
	const char *why;
	char needed[256];
	int r = -1;

	if (ptrec_elf_hdr_check(hd, hlen, PTREC_ELF_ALLOW32, &h, &why) != 0) {
		tool_error(path, -1, "not a program ptrec run can start: %s", why);
		return -1;
	}
	if (!h.is64) {
		tool_error(path, -1, "a 32-bit program: libptrec is built for %s only", PTREC_ARCH_NAME);
		return -1;
	}
	if (h.machine != PTREC_EM_HOST) {
		tool_error(path, -1, "a program for another machine (ELF e_machine %u): libptrec is "
		           "built for %s", (unsigned)h.machine, PTREC_ARCH_NAME);
		return -1;
	}
	if (h.phnum == 0 || !ptrec_elf_phdrs_within(&h, (uint64_t)st->st_size)) {
		tool_error(path, -1, "no program headers: not a program");
		return -1;
	}
	ph = calloc(h.phnum, sizeof(*ph));
	uint8_t *raw = malloc((size_t)h.phnum * h.phentsize);
	if (!ph || !raw ||
	    pread(fd, raw, (size_t)h.phnum * h.phentsize, (off_t)h.phoff) !=
	        (ssize_t)((size_t)h.phnum * h.phentsize)) {
		tool_error(path, -1, "cannot read the program headers");
		goto out;
	}
	for (unsigned i = 0; i < h.phnum; i++) {
		ptrec_elf_phdr_decode(&h, raw + (size_t)i * h.phentsize, &ph[i]);
		if (ph[i].type == ELF_PT_INTERP)
			interp = &ph[i];
		if (ph[i].type == ELF_PT_DYNAMIC)
			dyn = &ph[i];
	}
	if (!interp) {
		tool_error(path, -1, "statically linked (no PT_INTERP: no dynamic loader), so "
		           "LD_PRELOAD cannot load libptrec into it; link libptrec into it "
		           "instead (libptrec(3))");
		goto out;
	}
	if (dyn && needs_libptrec(fd, ph, h.phnum, dyn, needed, sizeof(needed))) {
		tool_error(path, -1, "links libptrec itself (it needs %s) and starts the recorder "
		           "with ptrec_init: run it directly, with PTREC_* variables for the "
		           "settings", needed);
		goto out;
	}
	if (has_ptrec_init(path)) {
		tool_error(path, -1, "has libptrec linked in (it defines ptrec_init) and starts the "
		           "recorder itself: run it directly, with PTREC_* variables for the "
		           "settings");
		goto out;
	}
	r = 0;
out:
	free(raw);
	free(ph);
	return r;
}

int run_target_check(const char *path, int depth)
{
	struct stat st;
	uint8_t hd[256];
	ssize_t n;
	int fd, r;

	fd = tool_open_input(path, &st);
	if (fd < 0)
		return -1;
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		tool_error(path, -1, "set-%s-ID: the dynamic loader ignores LD_PRELOAD for it, so "
		           "libptrec cannot be preloaded; link libptrec into it instead",
		           st.st_mode & S_ISUID ? "user" : "group");
		close(fd);
		return -1;
	}
	if (fgetxattr(fd, "security.capability", NULL, 0) > 0) {
		tool_error(path, -1, "has file capabilities: the dynamic loader runs it in secure "
		           "mode and ignores LD_PRELOAD; link libptrec into it instead");
		close(fd);
		return -1;
	}
	n = pread(fd, hd, sizeof(hd) - 1, 0);
	if (n < 0)
		n = 0;
	if (n >= 2 && hd[0] == '#' && hd[1] == '!') {
		/* the kernel runs the interpreter named on the first line (up to 4 levels) */
		char interp[256];
		size_t i = 2, k = 0;
		hd[n] = '\0';
		close(fd);
		while (hd[i] == ' ' || hd[i] == '\t')
			i++;
		while (hd[i] && hd[i] != ' ' && hd[i] != '\t' && hd[i] != '\n' && k < sizeof(interp) - 1)
			interp[k++] = (char)hd[i++];
		interp[k] = '\0';
		if (!k || depth >= 4) {
			tool_error(path, -1, "a script without an interpreter ptrec run can follow");
			return -1;
		}
		return run_target_check(interp, depth + 1);
	}
	r = check_elf(path, fd, &st, hd, (size_t)n);
	close(fd);
	return r;
}

/* 1 if the ELF file at path calls libptrec's hooks (instr_scan.h); 0 if it calls none or
 * cannot be read. */
static int instrumented(const char *path)
{
	struct ptrec_warnings w;
	struct ptrec_elf elf;
	struct ptrec_instr_scan s;
	int yes = 0;

	memset(&w, 0, sizeof(w));
	if (ptrec_elf_open_file(path, &elf, &w) != 0) {
		ptrec_warnings_free(&w);
		return 0;
	}
	ptrec_warnings_free(&w);
	if (ptrec_instr_scan(&elf, &s) == 0)
		for (int k = 0; k < PTREC_INSTR_KINDS_; k++)
			yes |= s.by_kind[k] != 0;
	ptrec_elf_close(&elf);
	return yes;
}

void run_target_history_note(const char *path)
{
	char why[256];
	const char *backend = getenv("PTREC_BACKEND");

	if (backend && *backend && strcmp(backend, "auto"))
		return; /* none: meant; an explicit backend says itself whether it starts */
#if !defined(__x86_64__)
	/* (not the sysfs: under qemu-user it is the x86-64 host's) */
	snprintf(why, sizeof(why), "Intel PT is an x86-64 feature; this is an " PTREC_ARCH_NAME
	         " build of libptrec");
	if (instrumented(path))
		return;
#else
	static struct ptrec_pmu pt, bts; /* large */
	struct ptrec_cpuid_raw raw;
	struct ptrec_cpu_info cpu;
	struct ptrec_sys sys;

	ptrec_cpuid_read(&raw);
	ptrec_cpuid_decode(&raw, &cpu);
	ptrec_pmu_read("", "intel_pt", &pt);
	ptrec_pmu_read("", "intel_bts", &bts);
	if (pt.present || bts.present)
		return; /* PT or BTS hardware: the library's own verdict and ptrec info tell */
	ptrec_sys_read("", &sys);
	if (ptrec_pt_verdict(&cpu, &pt, &sys, why, sizeof(why)) == 0 || instrumented(path))
		return;
#endif
	fprintf(stderr, "ptrec: no branch history will be recorded in %s: no intel_pt here (%s), "
	        "and it is not built with `ptrec cflags` (`ptrec check %s`); its crash reports "
	        "still show every thread's stack; PTREC_BACKEND=none silences this line\n",
	        path, why, path);
}
