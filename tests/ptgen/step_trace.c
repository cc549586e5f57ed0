/* step_trace.c — the ptrace single-step recorder (see step_trace.h). */
#include "config.h"

#include "step_trace.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "insn_class.h"

/* ---- classification cache: instruction address -> class (code does not change) ---- */

struct cache_slot {
	uint64_t ip;        /* address + 1 (0 = empty) */
	struct ic_insn ci;  /* its class */
};

struct cache {
	struct cache_slot *slots; /* open addressing, linear probing */
	size_t mask;              /* slots - 1 (a power of two minus one) */
	size_t used;              /* occupied slots */
};

static size_t cache_hash(uint64_t ip, size_t mask)
{
	return (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 20) & mask;
}

static struct ic_insn *cache_find(struct cache *c, uint64_t ip)
{
	for (size_t i = cache_hash(ip, c->mask);; i = (i + 1) & c->mask) {
		if (c->slots[i].ip == ip + 1)
			return &c->slots[i].ci;
		if (!c->slots[i].ip)
			return NULL;
	}
}

static int cache_add(struct cache *c, uint64_t ip, const struct ic_insn *ci)
{
	if ((c->used + 1) * 2 > c->mask + 1) {
		size_t nmask = c->mask * 2 + 1;
		struct cache_slot *n = calloc(nmask + 1, sizeof(*n));
		if (!n)
			return -1;
		for (size_t i = 0; i <= c->mask; i++) {
			if (!c->slots[i].ip)
				continue;
			size_t j = cache_hash(c->slots[i].ip - 1, nmask);
			while (n[j].ip)
				j = (j + 1) & nmask;
			n[j] = c->slots[i];
		}
		free(c->slots);
		c->slots = n;
		c->mask = nmask;
	}
	size_t i = cache_hash(ip, c->mask);
	while (c->slots[i].ip)
		i = (i + 1) & c->mask;
	c->slots[i].ip = ip + 1;
	c->slots[i].ci = *ci;
	c->used++;
	return 0;
}

/* ---- tracee memory ---- */

/* Reads up to len bytes at addr; returns the number read (stops at an unreadable page). */
static size_t peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		uint64_t a = addr + got;
		size_t chunk = len - got, to_page = 4096 - (size_t)(a & 4095);
		if (chunk > to_page)
			chunk = to_page;
		struct iovec local = {(char *)buf + got, chunk};
		struct iovec remote = {(void *)(uintptr_t)a, chunk};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* ---- image: executable mappings ---- */

/* Fills *bias and *minvaddr from the ELF file at path, given that file offset map_off is mapped
 * at map_start.  Returns 0, or -1 if the file is not a 64-bit ELF or no PT_LOAD covers it. */
static int elf_bias(const char *path, uint64_t map_start, uint64_t map_off, uint64_t *bias,
                    uint64_t *minvaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf64_Ehdr eh;
	int rc = -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	uint64_t lo = UINT64_MAX;
	int found = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			goto out;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		uint64_t seg_lo = ph.p_offset & ~(uint64_t)4095;
		if (!found && map_off >= seg_lo && map_off < ph.p_offset + ph.p_filesz) {
			*bias = map_start - (ph.p_vaddr + map_off - ph.p_offset);
			found = 1;
		}
	}
	if (found && lo != UINT64_MAX) {
		*minvaddr = lo;
		rc = 0;
	}
out:
	close(fd);
	return rc;
}

static int image_has(const struct st_image *img, const char *path, uint64_t bias)
{
	for (unsigned i = 0; i < img->count; i++)
		if (img->objs[i].bias == bias && !strcmp(img->objs[i].path, path))
			return 1;
	return 0;
}

static int image_add(struct st_image *img, const char *path, uint64_t bias, uint64_t minvaddr)
{
	struct st_object *n = realloc(img->objs, (img->count + 1) * sizeof(*n));
	if (!n)
		return -1;
	img->objs = n;
	n[img->count].path = strdup(path);
	if (!n[img->count].path)
		return -1;
	n[img->count].bias = bias;
	n[img->count].base = bias + minvaddr;
	img->count++;
	return 0;
}

/* Adds every executable file mapping (and the vDSO) of pid to img.  Returns 0 or -1. */
static int snapshot_maps(pid_t pid, const struct st_options *opt, struct st_image *img)
{
	char name[64], line[4096 + 256];
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(name, "r");
	if (!f) {
		fprintf(stderr, "ptgen: %s: %s\n", name, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int pathpos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &pathpos) < 4 ||
		    perms[2] != 'x' || !pathpos)
			continue;
		char *path = line + pathpos;
		path[strcspn(path, "\n")] = 0;
		if (!strcmp(path, "[vdso]")) {
			if (!opt->vdso_path || image_has(img, opt->vdso_path, start))
				continue;
			size_t size = (size_t)(end - start);
			char *mem = malloc(size);
			if (!mem || peek(pid, start, mem, size) != size) {
				free(mem);
				fprintf(stderr, "ptgen: cannot read the vDSO at 0x%llx\n", start);
				continue;
			}
			FILE *v = fopen(opt->vdso_path, "wb");
			int ok = v && fwrite(mem, 1, size, v) == size;
			if (v && fclose(v) != 0)
				ok = 0;
			free(mem);
			uint64_t bias, lo;
			if (!ok || elf_bias(opt->vdso_path, start, 0, &bias, &lo) != 0) {
				fprintf(stderr, "ptgen: %s: cannot write the vDSO\n", opt->vdso_path);
				continue;
			}
			if (image_add(img, opt->vdso_path, bias, lo) != 0)
				goto oom;
			continue;
		}
		if (path[0] != '/' || strstr(path, " (deleted)"))
			continue;
		uint64_t bias, lo;
		if (elf_bias(path, start, off, &bias, &lo) != 0) {
			fprintf(stderr, "ptgen: %s: not an ELF file we can place; left out of the image\n",
			        path);
			continue;
		}
		if (!image_has(img, path, bias) && image_add(img, path, bias, lo) != 0)
			goto oom;
	}
	fclose(f);
	return 0;
oom:
	fclose(f);
	fprintf(stderr, "ptgen: out of memory\n");
	return -1;
}

void st_image_free(struct st_image *img)
{
	for (unsigned i = 0; i < img->count; i++)
		free(img->objs[i].path);
	free(img->objs);
	img->objs = NULL;
	img->count = 0;
}

/* ---- signals ---- */

enum disposition { DISP_IGNORE, DISP_CATCH, DISP_FATAL };

static uint64_t status_mask(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* What the tracee does with signal sig: runs a handler, ignores it, or dies. */
static enum disposition signal_disposition(pid_t pid, int sig)
{
	char name[64], buf[4096];
	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	uint64_t bit = 1ull << (sig - 1);
	if (status_mask(buf, "SigCgt:") & bit)
		return DISP_CATCH;
	if (status_mask(buf, "SigIgn:") & bit)
		return DISP_IGNORE;
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return DISP_IGNORE;
	default:
		return DISP_FATAL;
	}
}

/* ---- the recorder ---- */

static uint64_t read_entry(pid_t pid)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/auxv", (int)pid);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint64_t av[2], entry = 0;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_ENTRY)
			entry = av[1];
	close(fd);
	return entry;
}

/* Runs the stopped tracee to addr with a temporary INT3.  Returns 0 or -1. */
static int run_to(pid_t pid, uint64_t addr)
{
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)addr, NULL);
	if (errno)
		return -1;
	long patched = (long)(((unsigned long)word & ~0xfful) | 0xcc);
	if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)addr, (void *)patched) != 0)
		return -1;
	int sig = 0;
	for (;;) {
		int status;
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)sig) != 0 ||
		    waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status))
			return -1;
		if (WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status);
			continue;
		}
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0 || regs.rip != addr + 1)
			return -1;
		regs.rip = addr;
		if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)addr, (void *)word) != 0 ||
		    ptrace(PTRACE_SETREGS, pid, NULL, &regs) != 0)
			return -1;
		return 0;
	}
}

static int classify_at(pid_t pid, struct cache *cache, uint64_t ip, struct ic_insn *out)
{
	struct ic_insn *hit = cache_find(cache, ip);
	if (hit) {
		*out = *hit;
		return 0;
	}
	uint8_t bytes[16];
	size_t n = peek(pid, ip, bytes, sizeof(bytes));
	if (!n || ic_classify(bytes, n, out) != 0) {
		fprintf(stderr, "ptgen: cannot read the instruction at 0x%" PRIx64 "\n", ip);
		return -1;
	}
	return cache_add(cache, ip, out);
}

/* Checks what the CPU did against the classification.  Returns 0, or -1 with a message. */
static int verify(pid_t pid, const struct ic_insn *ci, uint64_t ip, uint64_t next, uint64_t rsp)
{
	uint64_t fall = ip + ci->len, target = fall + (uint64_t)(int64_t)ci->disp, ret = 0;
	const char *why = NULL;
	switch (ci->kind) {
	case IC_OTHER:
		if (next <= ip || next - ip > 15)
			why = "a control transfer by an instruction classified as non-branch";
		break;
	case IC_JCC:
		if (next != fall && next != target)
			why = "a conditional jump went neither to its target nor to the next instruction";
		break;
	case IC_JMP:
		if (next != target)
			why = "a direct jump did not reach its target";
		break;
	case IC_CALL:
		if (next != target)
			why = "a direct call did not reach its target";
		/* fall through */
	case IC_CALL_IND:
		if (!why && (peek(pid, rsp, &ret, sizeof(ret)) != sizeof(ret) || ret != fall))
			why = "the pushed return address is not the next instruction";
		break;
	default:
		break;
	}
	if (!why)
		return 0;
	uint8_t b[16] = {0};
	peek(pid, ip, b, sizeof(b));
	fprintf(stderr, "ptgen: at 0x%" PRIx64 " (%s, length %u): %s (next rip 0x%" PRIx64
	        "); bytes:", ip, ic_kind_name(ci->kind), ci->len, why, next);
	for (unsigned i = 0; i < sizeof(b); i++)
		fprintf(stderr, " %02x", b[i]);
	fprintf(stderr, "\n");
	return -1;
}

int st_record(char *const argv[], const struct st_options *opt, struct xl_log *log,
              struct st_image *img, struct st_result *res)
{
	memset(res, 0, sizeof(*res));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ptgen: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(126);
		personality((unsigned long)personality(0xffffffff) | ADDR_NO_RANDOMIZE);
		execvp(argv[0], argv);
		_exit(127);
	}

	int status, rc = 1;
	struct cache cache = {calloc(1u << 14, sizeof(struct cache_slot)), (1u << 14) - 1, 0};
	if (!cache.slots)
		goto kill;
	if (waitpid(pid, &status, __WALL) != pid)
		goto kill;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 126) {
			fprintf(stderr, "ptgen: ptrace(PTRACE_TRACEME) is not permitted here\n");
			rc = 77;
		} else {
			fprintf(stderr, "ptgen: %s: cannot execute\n", argv[0]);
		}
		goto out;
	}
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		fprintf(stderr, "ptgen: %s: unexpected first stop\n", argv[0]);
		goto kill;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(uintptr_t)PTRACE_O_EXITKILL);
	res->entry = read_entry(pid);
	if (!res->entry || run_to(pid, res->entry) != 0) {
		if (errno == EPERM) {
			fprintf(stderr, "ptgen: ptrace is not permitted here (%s)\n", strerror(errno));
			rc = 77;
		} else {
			fprintf(stderr, "ptgen: %s: cannot run to the entry point\n", argv[0]);
		}
		goto kill;
	}
	if (snapshot_maps(pid, opt, img) != 0)
		goto kill;

	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
		goto kill;
	uint64_t cur = regs.rip;
	int in_kernel = 1;    /* tracing starts disabled: the first instruction enables it */
	int inject = 0;       /* signal to deliver with the next step */
	int inject_caught = 0;
	for (;;) {
		struct ic_insn ci;
		if (opt->max_steps && res->steps >= opt->max_steps) {
			struct xl_rec r = {.ip = cur, .type = XL_STOP};
			if (xl_append(log, &r) != 0)
				goto kill;
			rc = 0;
			goto kill;
		}
		if (classify_at(pid, &cache, cur, &ci) != 0)
			goto kill;
		uint64_t nr = regs.rax;
		if (!inject && ci.kind == IC_SYSCALL && (nr == 60 || nr == 231) &&
		    snapshot_maps(pid, opt, img) != 0)
			goto kill;
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(uintptr_t)inject) != 0 ||
		    waitpid(pid, &status, __WALL) != pid) {
			fprintf(stderr, "ptgen: single-step at 0x%" PRIx64 ": %s\n", cur, strerror(errno));
			goto kill;
		}
		res->steps++;
		struct xl_rec r = {.ip = cur, .type = XL_INSN, .kind = ci.kind, .len = ci.len,
		                   .disp = ci.disp};
		if (ci.kind == IC_CALL && ci.disp == 0)
			r.flags |= XL_F_ZERO_CALL;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (!inject && ci.kind == IC_SYSCALL) {
				r.next = 0; /* exit, exit_group (or a kill during a syscall) */
				if (xl_append(log, &r) != 0)
					goto out;
			} else if (!in_kernel) {
				struct xl_rec a = {.ip = cur, .type = XL_ASYNC};
				if (xl_append(log, &a) != 0)
					goto out;
			}
			res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			rc = 0;
			goto out;
		}
		if (!WIFSTOPPED(status) || ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			goto kill;
		int sig = WSTOPSIG(status);
		if (inject && inject_caught) {
			/* The kernel built the handler's frame and stopped at its first instruction
			 * (or stopped again for another pending signal); nothing ran in user mode. */
			cur = regs.rip;
			inject = 0;
			if (sig == SIGTRAP)
				continue;
		} else if (sig == SIGTRAP || regs.rip != cur) {
			/* cur completed (a signal stop with a moved RIP: a syscall finished and a
			 * signal is being delivered on the way back). */
			if (sig == SIGTRAP && ci.kind == IC_OTHER && regs.rip == cur && ci.rep)
				continue; /* one iteration of a REP string instruction */
			r.next = regs.rip;
			if (verify(pid, &ci, cur, regs.rip, regs.rsp) != 0 || xl_append(log, &r) != 0)
				goto kill;
			in_kernel = ci.kind == IC_SYSCALL || ci.kind == IC_FAR;
			if (ci.kind == IC_SYSCALL && (nr == 9 || nr == 10) &&
			    snapshot_maps(pid, opt, img) != 0)
				goto kill;
			cur = regs.rip;
			inject = 0;
			if (sig == SIGTRAP)
				continue;
		}
		/* A signal is about to be delivered before cur runs. */
		enum disposition d = signal_disposition(pid, sig);
		if (d == DISP_IGNORE) {
			inject = 0;
			continue;
		}
		if (!in_kernel) {
			struct xl_rec a = {.ip = cur, .type = XL_ASYNC};
			if (xl_append(log, &a) != 0)
				goto kill;
			in_kernel = 1;
		}
		inject = sig;
		inject_caught = d == DISP_CATCH;
	}
kill:
	kill(pid, SIGKILL);
	waitpid(pid, &status, __WALL);
out:
	free(cache.slots);
	return rc;
}
