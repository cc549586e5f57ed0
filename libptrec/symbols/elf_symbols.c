/* elf_symbols.c — ELF64 reader: headers, symbols, PLT entries, build-id, debuglink.
 * Reads only through bounds-checked helpers; never trusts a size or offset from the file. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/elf_check.h"
#include "core/file_open.h"
#include "symbols/elf_symbols.h"
#include "ptrec.h"

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1u << 11)
#endif
#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

/* 1 if [off, off+len) lies inside the file. */
static int in_file(const struct ptrec_elf *elf, uint64_t off, uint64_t len)
{
	return off <= elf->size && len <= elf->size - off;
}

/* Returns the NUL-terminated string at off inside [base, base+len) of the file, or NULL. */
static const char *str_at(const struct ptrec_elf *elf, uint64_t base, uint64_t len, uint64_t off)
{
	const char *s;

	if (off >= len || !in_file(elf, base, len))
		return NULL;
	s = (const char *)elf->data + base + off;
	if (!memchr(s, 0, (size_t)(len - off)))
		return NULL;
	return s;
}

static int read_headers(struct ptrec_elf *elf, struct ptrec_warnings *w)
{
	struct ptrec_elf_hdr h;
	const char *why;
	uint64_t shnum, shstrndx;

	if (ptrec_elf_hdr_check(elf->data, elf->size, 0, &h, &why) != 0)
		return -PTREC_EFORMAT;
	elf->e_type = h.type;
	elf->machine = h.machine;
	elf->entry = h.entry;

	/* Program headers: PT_LOAD segments. */
	if (h.phnum) {
		if (!ptrec_elf_phdrs_within(&h, elf->size))
			return -PTREC_EFORMAT;
		elf->loads = calloc(h.phnum, sizeof(*elf->loads));
		if (!elf->loads)
			return -PTREC_ENOMEM;
		for (unsigned i = 0; i < h.phnum; i++) {
			struct ptrec_elf_phdr ph;
			ptrec_elf_phdr_decode(&h, elf->data + h.phoff + (uint64_t)i * h.phentsize, &ph);
			if (ph.type != PT_LOAD)
				continue;
			if (ph.filesz > ph.memsz || ph.vaddr + ph.memsz < ph.vaddr) {
				ptrec_warn(w, "%s: PT_LOAD %u has inconsistent sizes; ignored", elf->path, i);
				continue;
			}
			if (!in_file(elf, ph.offset, ph.filesz)) {
				ptrec_warn(w, "%s: PT_LOAD %u lies outside the file (truncated?)",
				           elf->path, i);
				ph.filesz = ph.offset <= elf->size ? elf->size - ph.offset : 0;
			}
			elf->loads[elf->nloads++] = (struct ptrec_elf_load){
				ph.vaddr, ph.offset, ph.filesz, ph.memsz, ph.flags};
		}
	}

	/* Section headers. */
	if (!h.shoff)
		return 0;
	if (h.shentsize != sizeof(Elf64_Shdr) || !in_file(elf, h.shoff, sizeof(Elf64_Shdr))) {
		ptrec_warn(w, "%s: section headers lie outside the file; no symbols", elf->path);
		return 0;
	}
	shnum = h.shnum;
	shstrndx = h.shstrndx;
	if (shnum == 0 || shstrndx == SHN_XINDEX) {
		Elf64_Shdr s0;
		memcpy(&s0, elf->data + h.shoff, sizeof(s0));
		if (shnum == 0)
			shnum = s0.sh_size;
		if (shstrndx == SHN_XINDEX)
			shstrndx = s0.sh_link;
	}
	if (shnum > 65536 * 4 || !in_file(elf, h.shoff, shnum * sizeof(Elf64_Shdr))) {
		ptrec_warn(w, "%s: %llu section headers do not fit in the file; no symbols",
		           elf->path, (unsigned long long)shnum);
		return 0;
	}
	elf->sections = calloc(shnum ? shnum : 1, sizeof(*elf->sections));
	if (!elf->sections)
		return -PTREC_ENOMEM;
	elf->nsections = shnum;
	for (uint64_t i = 0; i < shnum; i++) {
		Elf64_Shdr sh;
		struct ptrec_elf_section *s = &elf->sections[i];
		memcpy(&sh, elf->data + h.shoff + i * sizeof(sh), sizeof(sh));
		s->type = sh.sh_type;
		s->link = sh.sh_link;
		s->flags = sh.sh_flags;
		s->addr = sh.sh_addr;
		s->offset = sh.sh_offset;
		s->size = sh.sh_size;
		s->entsize = sh.sh_entsize;
		s->name = "";
		s->valid = sh.sh_type == SHT_NOBITS || in_file(elf, sh.sh_offset, sh.sh_size);
	}
	if (shstrndx < shnum && elf->sections[shstrndx].valid &&
	    elf->sections[shstrndx].type != SHT_NOBITS) {
		const struct ptrec_elf_section *ss = &elf->sections[shstrndx];
		for (uint64_t i = 0; i < shnum; i++) {
			Elf64_Shdr sh;
			const char *n;
			memcpy(&sh, elf->data + h.shoff + i * sizeof(sh), sizeof(sh));
			n = str_at(elf, ss->offset, ss->size, sh.sh_name);
			elf->sections[i].name = n ? n : "";
		}
	} else {
		ptrec_warn(w, "%s: section name table missing or outside the file", elf->path);
	}
	for (uint64_t i = 0; i < shnum; i++)
		if (!elf->sections[i].valid && elf->sections[i].type != SHT_NULL)
			ptrec_warn(w, "%s: section %s lies outside the file (truncated?)", elf->path,
			           elf->sections[i].name);
	return 0;
}

const struct ptrec_elf_section *ptrec_elf_find_section(const struct ptrec_elf *elf,
                                                       const char *name)
{
	for (size_t i = 0; i < elf->nsections; i++)
		if (!strcmp(elf->sections[i].name, name))
			return &elf->sections[i];
	return NULL;
}

int ptrec_elf_section_bytes(const struct ptrec_elf *elf, const struct ptrec_elf_section *s,
                            const uint8_t **p, size_t *len)
{
	if (!s->valid || s->type == SHT_NOBITS)
		return -PTREC_EFORMAT;
	if ((s->flags & SHF_COMPRESSED) || !strncmp(s->name, ".zdebug", 7))
		return ptrec_elf_unpack(elf, s, p, len);
	*p = elf->data + s->offset;
	*len = (size_t)s->size;
	return 0;
}

/* 1 if section index shndx is an executable section. */
static int exec_section(const struct ptrec_elf *elf, unsigned shndx)
{
	return shndx < elf->nsections && (elf->sections[shndx].flags & SHF_EXECINSTR);
}

static int add_sym(struct ptrec_elf *elf, size_t *cap, const struct ptrec_elf_sym *s)
{
	if (elf->nsyms == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct ptrec_elf_sym *p = realloc(elf->syms, ncap * sizeof(*p));
		if (!p)
			return -PTREC_ENOMEM;
		elf->syms = p;
		*cap = ncap;
	}
	elf->syms[elf->nsyms++] = *s;
	return 0;
}

/* Reads the code symbols of a SYMTAB/DYNSYM section. */
static int read_symtab(struct ptrec_elf *elf, const struct ptrec_elf_section *st, size_t *cap,
                       struct ptrec_warnings *w)
{
	const struct ptrec_elf_section *strs;
	uint64_t n;

	if (!st->valid || st->type == SHT_NOBITS)
		return 0;
	if (st->entsize != sizeof(Elf64_Sym) || st->link >= elf->nsections) {
		ptrec_warn(w, "%s: symbol table %s malformed; ignored", elf->path, st->name);
		return 0;
	}
	strs = &elf->sections[st->link];
	if (!strs->valid || strs->type != SHT_STRTAB) {
		ptrec_warn(w, "%s: string table of %s malformed; ignored", elf->path, st->name);
		return 0;
	}
	n = st->size / sizeof(Elf64_Sym);
	for (uint64_t i = 1; i < n; i++) {
		Elf64_Sym sym;
		struct ptrec_elf_sym s;
		unsigned type;
		const char *name;
		int rc;

		memcpy(&sym, elf->data + st->offset + i * sizeof(sym), sizeof(sym));
		type = ELF64_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && exec_section(elf, sym.st_shndx)))
			continue;
		name = str_at(elf, strs->offset, strs->size, sym.st_name);
		if (!name) {
			ptrec_warn(w, "%s: symbol %llu of %s has a name outside its string table",
			           elf->path, (unsigned long long)i, st->name);
			continue;
		}
		if (!*name || name[0] == '$' || !strncmp(name, ".L", 2))
			continue;
		s.addr = sym.st_value;
		s.size = sym.st_size;
		s.name = name;
		s.type = (uint8_t)type;
		s.bind = (uint8_t)ELF64_ST_BIND(sym.st_info);
		s.synthetic = 0;
		s.shndx = sym.st_shndx;
		if ((rc = add_sym(elf, cap, &s)))
			return rc;
	}
	return 0;
}

/* Preference among symbols at the same address: lower is better. */
static int sym_rank(const struct ptrec_elf_sym *s)
{
	int r = 0;
	if (s->type == STT_NOTYPE)
		r += 8;
	if (s->synthetic)
		r += 16;
	if (s->bind == STB_LOCAL)
		r += 2;
	else if (s->bind == STB_WEAK)
		r += 1;
	if (!s->size)
		r += 4;
	return r;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct ptrec_elf_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (sym_rank(x) != sym_rank(y))
		return sym_rank(x) - sym_rank(y);
	return strcmp(x->name, y->name);
}

/* Keeps the names of the function symbols read so far (before one per address is kept): a
 * call site may name a function by an alias (glibc's __GI_ names).  Not sorted: the debug
 * information's reader sorts what it takes (sorting every program's names here made `ptrec
 * run` on node, 110,000 symbols, 60 ms slower). */
static int keep_fnames(struct ptrec_elf *elf)
{
	size_t n = 0;
	for (size_t i = 0; i < elf->nsyms; i++)
		n += elf->syms[i].type == STT_FUNC && !elf->syms[i].synthetic;
	if (!n)
		return 0;
	if (!(elf->fnames = malloc(n * sizeof(*elf->fnames))))
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < elf->nsyms; i++)
		if (elf->syms[i].type == STT_FUNC && !elf->syms[i].synthetic)
			elf->fnames[elf->nfnames++] =
				(struct ptrec_elf_name){elf->syms[i].name, elf->syms[i].addr};
	return 0;
}

/* GOT address -> symbol name, from JUMP_SLOT/GLOB_DAT relocations. */
struct got_name {
	uint64_t got;
	const char *name;
};

static int got_cmp(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

static int collect_relocs(const struct ptrec_elf *elf, struct got_name **out, size_t *nout)
{
	size_t cap = 0;

	for (size_t i = 0; i < elf->nsections; i++) {
		const struct ptrec_elf_section *r = &elf->sections[i], *dsym, *dstr;
		if (r->type != SHT_RELA || !r->valid || r->entsize != sizeof(Elf64_Rela) ||
		    r->link >= elf->nsections)
			continue;
		dsym = &elf->sections[r->link];
		/* (a NOBITS section is "valid" at any offset and size: it has no bytes to read) */
		if (!dsym->valid || dsym->type == SHT_NOBITS || dsym->entsize != sizeof(Elf64_Sym) ||
		    dsym->link >= elf->nsections)
			continue;
		dstr = &elf->sections[dsym->link];
		for (uint64_t k = 0; k < r->size / sizeof(Elf64_Rela); k++) {
			Elf64_Rela rel;
			Elf64_Sym sym;
			uint64_t si;
			const char *name;
			memcpy(&rel, elf->data + r->offset + k * sizeof(rel), sizeof(rel));
			if (elf->machine == EM_AARCH64
			    ? ELF64_R_TYPE(rel.r_info) != R_AARCH64_JUMP_SLOT &&
			      ELF64_R_TYPE(rel.r_info) != R_AARCH64_GLOB_DAT
			    : ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT &&
			      ELF64_R_TYPE(rel.r_info) != R_X86_64_GLOB_DAT)
				continue;
			si = ELF64_R_SYM(rel.r_info);
			if (!si || si >= dsym->size / sizeof(Elf64_Sym))
				continue;
			memcpy(&sym, elf->data + dsym->offset + si * sizeof(sym), sizeof(sym));
			name = str_at(elf, dstr->offset, dstr->size, sym.st_name);
			if (!name || !*name)
				continue;
			if (*nout == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct got_name *p = realloc(*out, ncap * sizeof(*p));
				if (!p)
					return -PTREC_ENOMEM;
				*out = p;
				cap = ncap;
			}
			(*out)[(*nout)++] = (struct got_name){rel.r_offset, name};
		}
	}
	if (*nout)
		qsort(*out, *nout, sizeof(**out), got_cmp);
	return 0;
}

/* Adds the symbol name@plt for the PLT entry at addr of size bytes, if its GOT slot got has a
 * relocation naming a function. */
static int add_plt_sym(struct ptrec_elf *elf, size_t *cap, const struct got_name *gots,
                       size_t ngots, const struct ptrec_elf_section *s, uint64_t addr,
                       uint64_t size, uint64_t got)
{
	struct got_name key = {got, NULL}, *hit = bsearch(&key, gots, ngots, sizeof(key), got_cmp);
	struct ptrec_elf_sym sym = {addr, size, NULL, STT_FUNC, STB_GLOBAL, 1,
	                            (uint16_t)(s - elf->sections)};
	char *name, **ow;

	if (!hit)
		return 0;
	if (asprintf(&name, "%s@plt", hit->name) < 0)
		return -PTREC_ENOMEM;
	ow = realloc(elf->owned, (elf->nowned + 1) * sizeof(*ow));
	if (!ow) {
		free(name);
		return -PTREC_ENOMEM;
	}
	elf->owned = ow;
	ow[elf->nowned++] = name;
	sym.name = name;
	return add_sym(elf, cap, &sym);
}

static uint32_t word_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* aarch64 (GNU ld, lld): each entry of .plt loads its GOT slot with
 *   adrp x16, PAGE(slot); ldr x17, [x16, #PAGEOFF(slot)]; add x16, x16, #PAGEOFF; br x17
 * (16 bytes; 24 with BTI, which puts `bti c` first, or with PAC's autia1716 before the br).
 * PLT0 (stp x16, x30, [sp, #-16]!; adrp ... GOT[2]) loads a slot without a relocation, so
 * only the entries get names.  An entry runs from its `bti c` or adrp to the next one. */
static int add_plt_syms_a64(struct ptrec_elf *elf, size_t *cap, const struct got_name *gots,
                            size_t ngots)
{
	const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, ".plt");
	uint64_t start = 0, got = 0, step = 16;
	int have = 0, rc;

	if (!s || !s->valid || s->type != SHT_PROGBITS || s->size < 8)
		return 0;
	for (uint64_t off = 0; off + 8 <= s->size; off += 4) {
		const uint8_t *b = elf->data + s->offset + off;
		uint32_t adrp = word_at(b), ldr = word_at(b + 4);
		uint64_t pc = s->addr + off, page, slot;

		/* ADRP x16 (op 1, Rd 16); LDR x17, [x16, #imm12*8] (64-bit, unsigned offset) */
		if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
			continue;
		/* immhi:immlo (21 bits, signed) pages: put at bits 31:11, sign-extended, times 2 */
		page = (uint64_t)(int64_t)(int32_t)(((adrp >> 5) & 0x7ffffu) << 13 |
		                                    ((adrp >> 29) & 3u) << 11) << 1;
		slot = (pc & ~(uint64_t)0xfff) + page + (uint64_t)((ldr >> 10) & 0xfffu) * 8;
		if (off >= 4 && word_at(b - 4) == 0xd503245fu) /* bti c */
			pc -= 4;
		if (have && (rc = add_plt_sym(elf, cap, gots, ngots, s, start, step = pc - start,
		                              got)))
			return rc;
		start = pc;
		got = slot;
		have = 1;
		off += 4;
	}
	if (have)
		return add_plt_sym(elf, cap, gots, ngots, s, start,
		                   s->addr + s->size - start < step ? s->addr + s->size - start : step,
		                   got);
	return 0;
}

/* Adds name@plt symbols for the entries of .plt, .plt.sec and .plt.got: each entry's
 * `jmp *disp32(%rip)` names the GOT slot, whose relocation names the function (aarch64:
 * add_plt_syms_a64). */
static int add_plt_syms(struct ptrec_elf *elf, size_t *cap)
{
	static const char *const plts[] = {".plt", ".plt.sec", ".plt.got"};
	struct got_name *gots = NULL;
	size_t ngots = 0;
	int rc;

	if ((rc = collect_relocs(elf, &gots, &ngots)) || !ngots)
		goto out;
	if (elf->machine == EM_AARCH64) {
		rc = add_plt_syms_a64(elf, cap, gots, ngots);
		goto out;
	}
	for (size_t p = 0; p < sizeof(plts) / sizeof(plts[0]); p++) {
		const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, plts[p]);
		uint64_t step;
		if (!s || !s->valid || s->type != SHT_PROGBITS)
			continue;
		step = (s->entsize == 8 || s->entsize == 16) ? s->entsize : 16;
		for (uint64_t e = 0; e + step <= s->size; e += step) {
			const uint8_t *b = elf->data + s->offset + e;
			for (uint64_t k = 0; k + 6 <= step; k++) {
				int32_t disp;
				if (b[k] != 0xff || b[k + 1] != 0x25)
					continue;
				memcpy(&disp, b + k + 2, 4);
				if ((rc = add_plt_sym(elf, cap, gots, ngots, s, s->addr + e, step,
				                      s->addr + e + k + 6 + (uint64_t)(int64_t)disp)))
					goto out;
				break;
			}
		}
	}
out:
	free(gots);
	return rc;
}

/* Reads NT_GNU_BUILD_ID from notes in [off, off+len) of the file. */
static void read_notes(struct ptrec_elf *elf, uint64_t off, uint64_t len)
{
	const uint8_t *id;
	size_t n = ptrec_elf_note_build_id(elf->data + off, (size_t)len, sizeof(elf->build_id), &id);

	if (n) {
		memcpy(elf->build_id, id, n);
		elf->build_id_len = n;
	}
}

static void read_ids(struct ptrec_elf *elf)
{
	const struct ptrec_elf_section *dl;

	for (size_t i = 0; i < elf->nsections && !elf->build_id_len; i++) {
		const struct ptrec_elf_section *s = &elf->sections[i];
		if (s->type == SHT_NOTE && s->valid)
			read_notes(elf, s->offset, s->size);
	}
	if (!elf->build_id_len && !elf->nsections) {
		Elf64_Ehdr eh;
		memcpy(&eh, elf->data, sizeof(eh));
		for (unsigned i = 0; i < eh.e_phnum && !elf->build_id_len; i++) {
			Elf64_Phdr ph;
			memcpy(&ph, elf->data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_NOTE && in_file(elf, ph.p_offset, ph.p_filesz))
				read_notes(elf, ph.p_offset, ph.p_filesz);
		}
	}
	dl = ptrec_elf_find_section(elf, ".gnu_debuglink");
	if (dl && dl->valid && dl->type != SHT_NOBITS && dl->size >= 8) {
		const char *n = str_at(elf, dl->offset, dl->size, 0);
		if (n && *n) {
			uint64_t crc_off = (strlen(n) + 1 + 3) & ~3ull;
			if (crc_off + 4 <= dl->size) {
				elf->debuglink = n;
				memcpy(&elf->debuglink_crc, elf->data + dl->offset + crc_off, 4);
			}
		}
	}
}

static int load(struct ptrec_elf *elf, struct ptrec_warnings *w)
{
	size_t cap = 0, out = 0;
	int rc;

	if ((rc = read_headers(elf, w)))
		return rc;
	if (elf->nsections && !(elf->unpacked = calloc(elf->nsections, sizeof(*elf->unpacked))))
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < elf->nsections; i++)
		if (elf->sections[i].type == SHT_SYMTAB) {
			if ((rc = read_symtab(elf, &elf->sections[i], &cap, w)))
				return rc;
			elf->has_symtab = 1;
		}
	for (size_t i = 0; i < elf->nsections; i++)
		if (elf->sections[i].type == SHT_DYNSYM)
			if ((rc = read_symtab(elf, &elf->sections[i], &cap, w)))
				return rc;
	if ((rc = add_plt_syms(elf, &cap)))
		return rc;
	if ((rc = keep_fnames(elf)))
		return rc;
	if (elf->nsyms) {
		qsort(elf->syms, elf->nsyms, sizeof(*elf->syms), sym_cmp);
		/* Keep the best-ranked symbol per address. */
		for (size_t i = 0; i < elf->nsyms; i++)
			if (!out || elf->syms[out - 1].addr != elf->syms[i].addr)
				elf->syms[out++] = elf->syms[i];
		elf->nsyms = out;
		/* A symbol without a size ends at the next symbol or at the end of its section. */
		for (size_t i = 0; i < elf->nsyms; i++) {
			struct ptrec_elf_sym *s = &elf->syms[i];
			uint64_t end = i + 1 < elf->nsyms ? elf->syms[i + 1].addr : UINT64_MAX;
			if (s->size)
				continue;
			if (s->shndx && s->shndx < elf->nsections) {
				const struct ptrec_elf_section *sec = &elf->sections[s->shndx];
				if (sec->addr + sec->size < end && sec->addr + sec->size > s->addr)
					end = sec->addr + sec->size;
			}
			s->size = end == UINT64_MAX ? 1 : end - s->addr;
		}
		elf->sym_addrs = malloc(elf->nsyms * sizeof(*elf->sym_addrs));
		if (!elf->sym_addrs)
			return -PTREC_ENOMEM;
		for (size_t i = 0; i < elf->nsyms; i++)
			elf->sym_addrs[i] = elf->syms[i].addr;
	}
	read_ids(elf);
	return 0;
}

static char *dup_path(const char *p)
{
	return strdup(p ? p : "(memory)");
}

int ptrec_elf_open_mem(const uint8_t *data, size_t size, const char *name,
                       struct ptrec_elf *elf, struct ptrec_warnings *w)
{
	int rc;

	memset(elf, 0, sizeof(*elf));
	elf->path = dup_path(name);
	if (!elf->path)
		return -PTREC_ENOMEM;
	elf->data = data;
	elf->size = size;
	if ((rc = load(elf, w)))
		ptrec_elf_close(elf);
	return rc;
}

int ptrec_elf_open_file(const char *path, struct ptrec_elf *elf, struct ptrec_warnings *w)
{
	struct stat st;
	void *map;
	int fd, rc;

	memset(elf, 0, sizeof(*elf));
	fd = ptrec_open_regular(path, &st); /* a FIFO in a dump's MAPS must not hang us */
	if (fd < 0)
		return -PTREC_EIO;
	if (st.st_size <= 0) {
		close(fd);
		errno = EINVAL;
		return -PTREC_EIO;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -PTREC_EIO;
	elf->path = dup_path(path);
	if (!elf->path) {
		munmap(map, (size_t)st.st_size);
		return -PTREC_ENOMEM;
	}
	elf->data = map;
	elf->size = (size_t)st.st_size;
	elf->mapped = 1;
	if ((rc = load(elf, w)))
		ptrec_elf_close(elf);
	return rc;
}

void ptrec_elf_close(struct ptrec_elf *elf)
{
	if (elf->mapped && elf->data)
		munmap((void *)elf->data, elf->size);
	for (size_t i = 0; i < elf->nowned; i++)
		free(elf->owned[i]);
	free(elf->owned);
	for (size_t i = 0; elf->unpacked && i < elf->nsections; i++)
		free(elf->unpacked[i].data);
	free(elf->unpacked);
	free(elf->sections);
	free(elf->loads);
	free(elf->syms);
	free(elf->sym_addrs);
	free(elf->fnames);
	free((void *)elf->path);
	memset(elf, 0, sizeof(*elf));
}

const struct ptrec_elf_sym *ptrec_elf_lookup(const struct ptrec_elf *elf, uint64_t vaddr)
{
	size_t lo = 0, hi = elf->nsyms;
	const struct ptrec_elf_sym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (elf->sym_addrs[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &elf->syms[lo - 1];
	if (vaddr - s->addr < s->size)
		return s;
	/* vaddr lies past the nearest symbol: maybe inside an enclosing one. */
	for (size_t k = 2; k <= 8 && k <= lo; k++) {
		const struct ptrec_elf_sym *o = &elf->syms[lo - k];
		if (o->size && vaddr - o->addr < o->size)
			return o;
	}
	return NULL;
}

int ptrec_elf_offset_to_vaddr(const struct ptrec_elf *elf, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < elf->nloads; i++) {
		const struct ptrec_elf_load *l = &elf->loads[i];
		uint64_t span = l->filesz ? l->filesz : l->memsz;
		if (offset >= l->offset && offset - l->offset < span) {
			*vaddr = l->vaddr + (offset - l->offset);
			return 0;
		}
	}
	return -PTREC_ENOMAP;
}

size_t ptrec_elf_read(const struct ptrec_elf *elf, uint64_t vaddr, void *out, size_t len)
{
	for (size_t i = 0; i < elf->nloads; i++) {
		const struct ptrec_elf_load *l = &elf->loads[i];
		uint64_t n;
		if (vaddr < l->vaddr || vaddr - l->vaddr >= l->filesz)
			continue;
		n = l->filesz - (vaddr - l->vaddr);
		if (n > len)
			n = len;
		memcpy(out, elf->data + l->offset + (vaddr - l->vaddr), (size_t)n);
		return (size_t)n;
	}
	return 0;
}

uint64_t ptrec_elf_base_vaddr(const struct ptrec_elf *elf)
{
	uint64_t lo = UINT64_MAX;
	for (size_t i = 0; i < elf->nloads; i++)
		if (elf->loads[i].vaddr < lo)
			lo = elf->loads[i].vaddr;
	return lo == UINT64_MAX ? 0 : lo & ~0xfffull;
}

uint32_t ptrec_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}
