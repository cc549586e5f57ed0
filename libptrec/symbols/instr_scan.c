/* instr_scan.c — finds libptrec's hooks in an executable or shared library (instr_scan.h).
 * Every function's code is walked with the x86 instruction-length decoder (aarch64: word by
 * word, its BL instructions) and its direct calls compared with the hooks' addresses (their
 * symbols, or their PLT entries); a stripped file's
 * functions come from .eh_frame_hdr, and an entry hook linked into it without a symbol is
 * recognised as the one target most functions call first.  Pure; never trusts the file. */
#include "config.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/x86_ild.h"
#include "symbols/instr_scan.h"

#define FN_BYTES_MAX (1u << 20) /* longer functions are scanned up to here */

static const char *const hook_names[PTREC_INSTR_PATCHABLE] = {
	[PTREC_INSTR_FENTRY] = "__ptrec_fentry",
	[PTREC_INSTR_ENTRY_EXIT] = "__cyg_profile_func_enter",
	[PTREC_INSTR_TRACE_PC] = "__sanitizer_cov_trace_pc",
};

const char *ptrec_instr_kind_name(enum ptrec_instr_kind k)
{
	static const char *const names[PTREC_INSTR_KINDS_] = {
		"fentry", "entry/exit", "trace-pc", "patchable entry",
	};
	return (unsigned)k < PTREC_INSTR_KINDS_ ? names[k] : "?";
}

/* The hooks' addresses: up to two each (a definition and a PLT entry); 0 = none. */
struct hooks {
	uint64_t addr[PTREC_INSTR_PATCHABLE][2];
	int aarch64;  /* the file is aarch64 code */
};

static void hook_add(struct hooks *h, int k, uint64_t addr)
{
	if (!addr || h->addr[k][0] == addr || h->addr[k][1] == addr)
		return;
	h->addr[k][h->addr[k][0] ? 1 : 0] = addr;
}

static void hooks_find(const struct ptrec_elf *elf, struct hooks *h, int *defines_runtime,
                       int *registered)
{
	memset(h, 0, sizeof(*h));
	h->aarch64 = elf->machine == EM_AARCH64;
	for (size_t i = 0; i < elf->nfnames; i++) {
		const char *n = elf->fnames[i].name;
		for (int k = 0; k < PTREC_INSTR_PATCHABLE; k++)
			if (!strcmp(n, hook_names[k]))
				hook_add(h, k, elf->fnames[i].addr);
		if (!strcmp(n, "ptrec_init") && elf->fnames[i].addr)
			*defines_runtime = 1;
		if (!strcmp(n, "__ptrec_patch_register"))
			*registered = 1;
	}
	for (size_t i = 0; i < elf->nsyms; i++) {
		const struct ptrec_elf_sym *s = &elf->syms[i];
		size_t len = strlen(s->name);
		if (!s->synthetic || len < 5 || strcmp(s->name + len - 4, "@plt"))
			continue;
		for (int k = 0; k < PTREC_INSTR_PATCHABLE; k++)
			if (len - 4 == strlen(hook_names[k]) && !strncmp(s->name, hook_names[k], len - 4))
				hook_add(h, k, s->addr);
	}
}

static int hook_kind(const struct hooks *h, uint64_t target)
{
	for (int k = 0; k < PTREC_INSTR_PATCHABLE; k++)
		if (target && (h->addr[k][0] == target || h->addr[k][1] == target))
			return k;
	return -1;
}

/* Reads a function's bytes into *buf (grown as needed).  Returns the bytes read. */
static size_t fn_bytes(const struct ptrec_elf *elf, uint64_t addr, uint64_t size, uint8_t **buf,
                       size_t *cap)
{
	if (size > FN_BYTES_MAX)
		size = FN_BYTES_MAX;
	if (size > *cap) {
		uint8_t *p = realloc(*buf, (size_t)size);
		if (!p)
			return 0;
		*buf = p;
		*cap = (size_t)size;
	}
	return ptrec_elf_read(elf, addr, *buf, (size_t)size);
}

/* The offset of a function's first real instruction: after ENDBR64, if any. */
static size_t skip_endbr(const uint8_t *p, size_t n)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	return n >= 4 && !memcmp(p, endbr64, 4) ? 4 : 0;
}

/* Reads a 4-byte little-endian value. */
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* An aarch64 function: every BL (100101 imm26, target pc + imm26 * 4).  No first-call guess:
 * that is for x86-64's -mfentry, which aarch64 GCC does not have. */
static void fn_scan_a64(const struct hooks *h, const uint8_t *p, size_t n, uint64_t addr,
                        unsigned *kinds)
{
	for (size_t off = 0; off + 4 <= n; off += 4) {
		uint32_t w = le32(p + off);
		if ((w & 0xfc000000u) != 0x94000000u)
			continue;
		/* imm26 at bits 31:6 of a 32-bit value, sign-extended, then / 64 * 4 */
		int64_t disp = (int64_t)(int32_t)(w << 6) / 16;
		int k = hook_kind(h, addr + off + (uint64_t)disp);
		if (k >= 0)
			*kinds |= 1u << k;
	}
}

/* Walks one function, ORs into *kinds a bit per hook kind it calls, and returns the target of
 * its first instruction when that is a direct call (else 0). */
static uint64_t fn_scan(const struct hooks *h, const uint8_t *p, size_t n, uint64_t addr,
                        unsigned *kinds)
{
	uint64_t first = 0;
	size_t off = skip_endbr(p, n);
	int at_first = 1;

	if (h->aarch64) {
		fn_scan_a64(h, p, n, addr, kinds);
		return 0;
	}
	while (off < n) {
		struct ptrec_x86_insn in;
		int len = ptrec_x86_ild_decode(p + off, n - off, addr + off, X86_MODE_64, &in);
		if (len <= 0)
			break; /* data, or a decoder gap: the rest of this function is not read */
		if (in.iclass == X86_IC_CALL && (in.flags & X86_INSN_HAS_TARGET)) {
			int k = hook_kind(h, in.target);
			if (k >= 0)
				*kinds |= 1u << k;
			if (at_first)
				first = in.target;
		}
		at_first = 0;
		off += (size_t)len;
	}
	return first;
}

/* A common first-call target and how many functions start with it. */
struct first_calls {
	uint64_t target[64];
	unsigned count[64];
	unsigned n;
};

static void first_note(struct first_calls *f, uint64_t target)
{
	if (!target)
		return;
	for (unsigned i = 0; i < f->n; i++)
		if (f->target[i] == target) {
			f->count[i]++;
			return;
		}
	if (f->n < 64) {
		f->target[f->n] = target;
		f->count[f->n++] = 1;
	}
}

/* The function starts of .eh_frame_hdr's table, when it has the usual encodings (eh_frame_ptr
 * pcrel|sdata4, fde_count udata4, table datarel|sdata4, what every linker writes).  Returns
 * the count and *starts (malloc'd, sorted), or 0. */
static size_t fde_starts(const struct ptrec_elf *elf, uint64_t **starts)
{
	const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, ".eh_frame_hdr");
	const uint8_t *p;
	size_t len;

	*starts = NULL;
	if (!s || ptrec_elf_section_bytes(elf, s, &p, &len) != 0 || len < 12 || p[0] != 1 ||
	    p[1] != 0x1b || p[2] != 0x03 || p[3] != 0x3b)
		return 0;
	size_t count = le32(p + 8);
	if (count == 0 || count > (len - 12) / 8)
		return 0;
	uint64_t *v = malloc(count * sizeof(*v));
	if (!v)
		return 0;
	for (size_t i = 0; i < count; i++)
		v[i] = s->addr + (uint64_t)(int64_t)(int32_t)le32(p + 12 + 8 * i);
	*starts = v;
	return count;
}

/* Functions from the symbol table: sized code symbols (aliases are one entry already). */
static int scan_symbols(const struct ptrec_elf *elf, const struct hooks *h,
                        struct ptrec_instr_scan *out)
{
	uint8_t *buf = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < elf->nsyms; i++) {
		const struct ptrec_elf_sym *s = &elf->syms[i];
		if (s->synthetic || (s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !s->size)
			continue;
		size_t n = fn_bytes(elf, s->addr, s->size, &buf, &cap);
		if (!n)
			continue;
		unsigned kinds = 0;
		fn_scan(h, buf, n, s->addr, &kinds);
		out->functions++;
		for (int k = 0; k < PTREC_INSTR_PATCHABLE; k++)
			out->by_kind[k] += (kinds >> k) & 1;
	}
	free(buf);
	return 0;
}

/* Functions from .eh_frame_hdr: each runs to the next start (or 64 KiB). */
static int scan_fdes(const struct ptrec_elf *elf, const struct hooks *h,
                     struct ptrec_instr_scan *out, struct first_calls *fc)
{
	uint64_t *starts;
	size_t count = fde_starts(elf, &starts);
	uint8_t *buf = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < count; i++) {
		uint64_t size = i + 1 < count && starts[i + 1] > starts[i] ? starts[i + 1] - starts[i]
		                                                            : 65536;
		size_t n = fn_bytes(elf, starts[i], size, &buf, &cap);
		if (!n)
			continue;
		unsigned kinds = 0;
		out->functions++;
		first_note(fc, fn_scan(h, buf, n, starts[i], &kinds));
		for (int k = 0; k < PTREC_INSTR_PATCHABLE; k++)
			out->by_kind[k] += (kinds >> k) & 1;
	}
	out->from_fdes = count > 0;
	free(starts);
	free(buf);
	return 0;
}

/* 1 if a .dynsym entry, defined or not, is called name (undefined ones are not among the
 * reader's function names). */
static int dynsym_has(const struct ptrec_elf *elf, const char *name)
{
	size_t n = strlen(name) + 1;
	for (size_t i = 0; i < elf->nsections; i++) {
		const struct ptrec_elf_section *d = &elf->sections[i];
		const uint8_t *p, *sp;
		size_t len, slen;
		if (d->type != SHT_DYNSYM || d->link >= elf->nsections ||
		    ptrec_elf_section_bytes(elf, d, &p, &len) != 0 ||
		    ptrec_elf_section_bytes(elf, &elf->sections[d->link], &sp, &slen) != 0)
			continue;
		for (size_t off = 0; off + sizeof(Elf64_Sym) <= len; off += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, p + off, sizeof(sym));
			if (sym.st_name < slen && slen - sym.st_name >= n &&
			    !memcmp(sp + sym.st_name, name, n))
				return 1;
		}
	}
	return 0;
}

/* DT_NEEDED entries naming libptrec.so*. */
static int needs_libptrec(const struct ptrec_elf *elf)
{
	for (size_t i = 0; i < elf->nsections; i++) {
		const struct ptrec_elf_section *d = &elf->sections[i], *str;
		const uint8_t *p, *sp;
		size_t len, slen;
		if (d->type != SHT_DYNAMIC || d->link >= elf->nsections)
			continue;
		str = &elf->sections[d->link];
		if (ptrec_elf_section_bytes(elf, d, &p, &len) != 0 ||
		    ptrec_elf_section_bytes(elf, str, &sp, &slen) != 0)
			continue;
		for (size_t off = 0; off + 16 <= len; off += 16) {
			uint64_t tag, val;
			memcpy(&tag, p + off, 8);
			memcpy(&val, p + off + 8, 8);
			if (tag == DT_NULL)
				break;
			if (tag == DT_NEEDED && val < slen && slen - val > 11 &&
			    !memcmp(sp + val, "libptrec.so", 11))
				return 1;
		}
	}
	return 0;
}

static int has(const uint8_t *p, size_t len, const char *what)
{
	size_t n = strlen(what);
	for (const uint8_t *q = p; len >= n && (q = memchr(q, what[0], len - n + 1 - (size_t)(q - p)));
	     q++)
		if (!memcmp(q, what, n))
			return 1;
	return 0;
}

/* 1 if .rodata holds the string what. */
static int in_rodata(const struct ptrec_elf *elf, const char *what)
{
	const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, ".rodata");
	const uint8_t *p;
	size_t len;
	return s && ptrec_elf_section_bytes(elf, s, &p, &len) == 0 && has(p, len, what);
}

/* The flags the recorded command lines name. */
static unsigned asked_flags(const struct ptrec_elf *elf)
{
	static const char *const dbg[] = {".debug_str", ".debug_line_str", ".debug_info"};
	unsigned asked = 0;
	const uint8_t *p;
	size_t len;

	for (size_t i = 0; i < sizeof(dbg) / sizeof(dbg[0]) + 1; i++) {
		if (i < sizeof(dbg) / sizeof(dbg[0])) {
			if (ptrec_elf_debug_section(elf, dbg[i], &p, &len, NULL) != 0)
				continue;
		} else {
			const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, ".GCC.command.line");
			if (!s || ptrec_elf_section_bytes(elf, s, &p, &len) != 0)
				continue;
		}
		asked |= has(p, len, "-mfentry-name=__ptrec_fentry") ? PTREC_ASKED_FENTRY : 0;
		asked |= has(p, len, "-finstrument-functions") ? PTREC_ASKED_INSTRUMENT : 0;
		asked |= has(p, len, "-fsanitize-coverage=trace-pc") ? PTREC_ASKED_TRACE_PC : 0;
		asked |= has(p, len, "-fpatchable-function-entry") ? PTREC_ASKED_PATCHABLE : 0;
		asked |= has(p, len, "-flto") || has(p, len, "GNU GIMPLE") ? PTREC_ASKED_LTO : 0;
	}
	return asked;
}

int ptrec_instr_scan(const struct ptrec_elf *elf, struct ptrec_instr_scan *out)
{
	struct hooks h;
	struct first_calls *fc = calloc(1, sizeof(*fc));

	memset(out, 0, sizeof(*out));
	if (!fc)
		return -PTREC_ENOMEM;
	hooks_find(elf, &h, &out->defines_runtime, &out->patch_registered);
	out->patch_registered |= dynsym_has(elf, "__ptrec_patch_register");
	if (elf->has_symtab)
		scan_symbols(elf, &h, out);
	else
		scan_fdes(elf, &h, out, fc);
	out->defines_runtime |= in_rodata(elf, "PTREC_BACKEND"); /* settings.c's names */
	if (!elf->has_symtab && out->defines_runtime && !out->by_kind[PTREC_INSTR_FENTRY]) {
		/* An entry hook without a name (a stripped program with libptrec linked in
		 * statically, which brings the hooks): the target most functions call first, named
		 * by no symbol, is __ptrec_fentry.  (Only then: .cold parts and noreturn helpers
		 * of any program may begin with a call.) */
		unsigned best = 0;
		uint64_t target = 0;
		for (unsigned i = 0; i < fc->n; i++)
			if (fc->count[i] > best) {
				best = fc->count[i];
				target = fc->target[i];
			}
		const struct ptrec_elf_sym *named = target ? ptrec_elf_lookup(elf, target) : NULL;
		if (best >= 2 && hook_kind(&h, target) < 0 && (!named || named->addr != target)) {
			out->by_kind[PTREC_INSTR_FENTRY] = best;
			out->fentry_guessed = 1;
		}
	}
	free(fc);
	const struct ptrec_elf_section *pfe = ptrec_elf_find_section(elf, "__patchable_function_entries");
	if (pfe && pfe->valid)
		out->by_kind[PTREC_INSTR_PATCHABLE] = (unsigned)(pfe->size / 8);
	out->links_libptrec = needs_libptrec(elf);
	out->asked = asked_flags(elf);
	return 0;
}
