/* patch_skip.c — PTREC_NO_TRACE at run time: the names it gives, looked up in a module's
 * symbol table (patch_skip.h has the contract).
 *
 * Init time only (ptrec_init, dlopen constructors), under the patcher's lock; reads the file
 * and allocates; never in the crash path. */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/patch_skip.h"
#include "core/elf_check.h"

#define SECTIONS_MAX 65535u               /* e_shnum's range */
#define TABLE_MAX (256u << 20)            /* a symbol or string table larger is not read */

int ptrec_skip_parse(const char *list, struct ptrec_skip_names *names)
{
	memset(names, 0, sizeof(*names));
	if (!list)
		return 0;
	size_t len = strlen(list);
	if (len >= sizeof(names->buf))
		return -1;
	memcpy(names->buf, list, len + 1);
	char *p = names->buf;
	while (*p && names->n < PTREC_SKIP_NAMES) {
		while (*p == ',' || *p == ' ' || *p == ':' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		names->name[names->n++] = p;
		while (*p && *p != ',' && *p != ' ' && *p != ':' && *p != '\t')
			p++;
	}
	return (int)names->n;
}

/* The index of the first name matching symbol sym (the name itself, or the name followed by a
 * clone suffix starting with '.'), or -1. */
static int name_match(const struct ptrec_skip_names *names, const char *sym)
{
	for (unsigned i = 0; i < names->n; i++) {
		size_t k = strlen(names->name[i]);
		if (!strncmp(sym, names->name[i], k) && (sym[k] == '\0' || sym[k] == '.'))
			return (int)i;
	}
	return -1;
}

/* Reads len bytes at off of fd into a new buffer (NULL on failure or when too large). */
static void *read_at(int fd, uint64_t off, uint64_t len)
{
	if (len == 0 || len > TABLE_MAX)
		return NULL;
	char *b = malloc((size_t)len);
	if (!b)
		return NULL;
	size_t got = 0;
	while (got < len) {
		ssize_t k = pread(fd, b + got, (size_t)len - got, (off_t)(off + got));
		if (k <= 0) {
			free(b);
			return NULL;
		}
		got += (size_t)k;
	}
	return b;
}

/* The symbol table to read: .symtab, else .dynsym (a stripped file keeps that one). */
static const Elf64_Shdr *pick_symtab(const Elf64_Shdr *sh, unsigned n)
{
	const Elf64_Shdr *dyn = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < n)
			return &sh[i];
		if (sh[i].sh_type == SHT_DYNSYM && sh[i].sh_link < n && !dyn)
			dyn = &sh[i];
	}
	return dyn;
}

static void add_addr(struct ptrec_skip_addrs *out, uintptr_t a)
{
	for (unsigned i = 0; i < out->n; i++)
		if (out->addr[i] == a)
			return;
	if (out->n < PTREC_SKIP_ADDRS)
		out->addr[out->n++] = a;
}

static int no(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

static int find_in(int fd, struct ptrec_skip_names *names, uintptr_t bias,
                   struct ptrec_skip_addrs *out, const char **why)
{
	unsigned char eh[PTREC_ELF_EHDR_MAX];
	struct ptrec_elf_hdr h;
	if (pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    ptrec_elf_hdr_check(eh, sizeof(eh), 0, &h, why) != 0)
		return no(why, *why ? *why : "not an ELF file");
	if (!h.shoff || h.shentsize != sizeof(Elf64_Shdr))
		return no(why, "no section headers");
	unsigned n = h.shnum;
	if (n == 0) { /* the count is in section 0's sh_size */
		Elf64_Shdr s0;
		if (pread(fd, &s0, sizeof(s0), (off_t)h.shoff) != (ssize_t)sizeof(s0))
			return no(why, "section headers cut short");
		n = s0.sh_size > SECTIONS_MAX ? 0 : (unsigned)s0.sh_size;
	}
	Elf64_Shdr *sh = n ? read_at(fd, h.shoff, (uint64_t)n * sizeof(Elf64_Shdr)) : NULL;
	if (!sh)
		return no(why, "section headers unreadable");
	const Elf64_Shdr *st = pick_symtab(sh, n);
	if (!st) {
		free(sh);
		return no(why, "no symbol table");
	}
	const Elf64_Shdr *ss = &sh[st->sh_link];
	Elf64_Sym *sym = read_at(fd, st->sh_offset, st->sh_size);
	char *str = read_at(fd, ss->sh_offset, ss->sh_size);
	if (!sym || !str || str[ss->sh_size - 1] != '\0') {
		free(sym);
		free(str);
		free(sh);
		return no(why, "symbol table unreadable");
	}
	for (uint64_t i = 0; i < st->sh_size / sizeof(Elf64_Sym); i++) {
		const Elf64_Sym *s = &sym[i];
		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
		    !s->st_value || s->st_name >= ss->sh_size)
			continue;
		int k = name_match(names, str + s->st_name);
		if (k < 0)
			continue;
		names->found |= 1ull << k;
		add_addr(out, bias + (uintptr_t)s->st_value);
	}
	free(sym);
	free(str);
	free(sh);
	return 0;
}

int ptrec_skip_find(struct ptrec_skip_names *names, const char *path, uintptr_t bias,
                    struct ptrec_skip_addrs *out, const char **why)
{
	out->n = 0;
	*why = NULL;
	if (!names->n)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return no(why, "cannot open the file");
	int r = find_in(fd, names, bias, out, why);
	close(fd);
	return r;
}

int ptrec_skip_has(const struct ptrec_skip_addrs *s, uintptr_t entry)
{
#if defined(__aarch64__)
	static const uint8_t landing[4] = {0x5f, 0x24, 0x03, 0xd5}; /* bti c */
#else
	static const uint8_t landing[4] = {0xf3, 0x0f, 0x1e, 0xfa}; /* endbr64 */
#endif
	for (unsigned i = 0; i < s->n; i++)
		if (s->addr[i] == entry ||
		    (s->addr[i] + 4 == entry && !memcmp((const void *)s->addr[i], landing, 4)))
			return 1;
	return 0;
}
