/* dwarf_info.c — walks .debug_info (DWARF 2 to 5) for each unit's DW_AT_comp_dir and
 * DW_AT_stmt_list, and for DW_TAG_subprogram address ranges and names (names reached through
 * DW_AT_specification / DW_AT_abstract_origin inside the same section too). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "symbols/dwarf_line.h"
#include "symbols/dwarf_reader.h"
#include "ptrec.h"

enum {
	DW_TAG_compile_unit = 0x11, DW_TAG_subprogram = 0x2e, DW_TAG_partial_unit = 0x3c,
	DW_TAG_skeleton_unit = 0x4a,
	DW_AT_name = 0x03, DW_AT_stmt_list = 0x10, DW_AT_low_pc = 0x11, DW_AT_high_pc = 0x12,
	DW_AT_comp_dir = 0x1b, DW_AT_abstract_origin = 0x31, DW_AT_specification = 0x47,
	DW_AT_linkage_name = 0x6e, DW_AT_str_offsets_base = 0x72, DW_AT_addr_base = 0x73,
	DW_AT_MIPS_linkage_name = 0x2007,
	DW_UT_compile = 1, DW_UT_type = 2, DW_UT_partial = 3, DW_UT_skeleton = 4,
	DW_UT_split_compile = 5, DW_UT_split_type = 6,
};

struct abbrev_attr {
	uint32_t name;
	uint32_t form;
	int64_t implicit;
};

struct abbrev {
	uint64_t code;
	uint32_t tag;
	uint32_t children;
	struct abbrev_attr *attrs;
	size_t nattrs;
};

/* A named DIE, for resolving specification / abstract_origin references. */
struct named_die {
	uint64_t off;       /* .debug_info offset of the DIE */
	const char *name;
};

/* A subprogram waiting for its name through a reference. */
struct pending {
	size_t func;        /* index in funcs */
	uint64_t ref;       /* .debug_info offset referenced */
};

struct info_ctx {
	const struct ptrec_elf *elf;
	struct ptrec_warnings *w;
	struct ptrec_dwarf *d;
	const uint8_t *str, *line_str, *str_off, *addr;
	size_t str_len, line_str_len, str_off_len, addr_len;
	size_t funccap;
	struct named_die *named;
	size_t nnamed, namedcap;
	struct pending *pend;
	size_t npend, pendcap;
};

static void free_abbrevs(struct abbrev *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i].attrs);
	free(a);
}

/* Parses the abbreviation table at off.  Returns 0, -1 (malformed) or -PTREC_ENOMEM. */
static int read_abbrevs(const uint8_t *sec, size_t len, uint64_t off, struct abbrev **out,
                        size_t *nout)
{
	struct dw_cur c;
	size_t cap = 0;

	*out = NULL;
	*nout = 0;
	if (off >= len)
		return -1;
	c = (struct dw_cur){sec + off, sec + len, 0};
	for (;;) {
		struct abbrev a;
		size_t acap = 0;
		memset(&a, 0, sizeof(a));
		a.code = dw_uleb(&c);
		if (c.err)
			return -1;
		if (!a.code)
			return 0;
		a.tag = (uint32_t)dw_uleb(&c);
		a.children = dw_u8(&c);
		for (;;) {
			uint64_t name = dw_uleb(&c), form = dw_uleb(&c);
			int64_t imp = 0;
			if (c.err) {
				free(a.attrs);
				return -1;
			}
			if (!name && !form)
				break;
			if (form == DW_FORM_implicit_const)
				imp = dw_sleb(&c);
			if (a.nattrs == acap) {
				size_t nc = acap ? acap * 2 : 8;
				struct abbrev_attr *p = realloc(a.attrs, nc * sizeof(*p));
				if (!p) {
					free(a.attrs);
					return -PTREC_ENOMEM;
				}
				a.attrs = p;
				acap = nc;
			}
			a.attrs[a.nattrs++] = (struct abbrev_attr){(uint32_t)name, (uint32_t)form, imp};
		}
		if (*nout == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct abbrev *p = realloc(*out, nc * sizeof(*p));
			if (!p) {
				free(a.attrs);
				return -PTREC_ENOMEM;
			}
			*out = p;
			cap = nc;
		}
		(*out)[(*nout)++] = a;
	}
}

static const struct abbrev *find_abbrev(const struct abbrev *a, size_t n, uint64_t code)
{
	if (code >= 1 && code <= n && a[code - 1].code == code)
		return &a[code - 1];
	for (size_t i = 0; i < n; i++)
		if (a[i].code == code)
			return &a[i];
	return NULL;
}

/* Unit-wide values for resolving strx/addrx forms. */
struct unit {
	unsigned version, asz;
	int is64;
	uint64_t str_offsets_base; /* DW_AT_str_offsets_base (default: first table's header) */
	uint64_t addr_base;        /* DW_AT_addr_base */
	uint64_t start;            /* .debug_info offset of the unit header */
};

static int is_strx(unsigned f)
{
	return f == DW_FORM_strx || (f >= DW_FORM_strx1 && f <= DW_FORM_strx4) ||
	       f == DW_FORM_GNU_str_index;
}

static int is_addrx(unsigned f)
{
	return f == DW_FORM_addrx || (f >= DW_FORM_addrx1 && f <= DW_FORM_addrx4) ||
	       f == DW_FORM_GNU_addr_index;
}

static const char *form_string(struct info_ctx *x, const struct unit *u, const struct dw_value *v)
{
	switch (v->form) {
	case DW_FORM_string: return v->str;
	case DW_FORM_strp: return dw_section_str(x->str, x->str_len, v->val);
	case DW_FORM_line_strp: return dw_section_str(x->line_str, x->line_str_len, v->val);
	default:
		if (is_strx(v->form)) {
			unsigned osz = u->is64 ? 8 : 4;
			uint64_t at = u->str_offsets_base + v->val * osz;
			struct dw_cur c;
			if (!x->str_off || at < u->str_offsets_base || at > x->str_off_len)
				return NULL;
			c = (struct dw_cur){x->str_off + at, x->str_off + x->str_off_len, 0};
			at = dw_fixed(&c, osz);
			return c.err ? NULL : dw_section_str(x->str, x->str_len, at);
		}
		return NULL;
	}
}

/* Resolves an address form; returns 0 on success. */
static int form_addr(struct info_ctx *x, const struct unit *u, const struct dw_value *v,
                     uint64_t *out)
{
	if (v->form == DW_FORM_addr) {
		*out = v->val;
		return 0;
	}
	if (is_addrx(v->form)) {
		uint64_t at = u->addr_base + v->val * u->asz;
		struct dw_cur c;
		if (!x->addr || at < u->addr_base || at > x->addr_len)
			return -1;
		c = (struct dw_cur){x->addr + at, x->addr + x->addr_len, 0};
		*out = dw_fixed(&c, u->asz);
		return c.err ? -1 : 0;
	}
	return -1;
}

static int is_constant(unsigned f)
{
	return f == DW_FORM_data1 || f == DW_FORM_data2 || f == DW_FORM_data4 ||
	       f == DW_FORM_data8 || f == DW_FORM_udata || f == DW_FORM_sdata ||
	       f == DW_FORM_implicit_const;
}

static int is_cu_ref(unsigned f)
{
	return f == DW_FORM_ref1 || f == DW_FORM_ref2 || f == DW_FORM_ref4 || f == DW_FORM_ref8 ||
	       f == DW_FORM_ref_udata;
}

static void *grow(void *arrp, size_t *cap, size_t n, size_t esz)
{
	void **arr = arrp;
	if (n < *cap)
		return *arr;
	{
		size_t nc = *cap ? *cap * 2 : 64;
		void *p = realloc(*arr, nc * esz);
		if (!p)
			return NULL;
		*arr = p;
		*cap = nc;
	}
	return *arr;
}

/* Walks the DIEs of one unit.  Returns 0, -1 (malformed; the rest of the unit is skipped) or
 * -PTREC_ENOMEM. */
static int walk_unit(struct info_ctx *x, struct dw_cur *c, const uint8_t *info,
                     const struct abbrev *ab, size_t nab, struct unit *u,
                     struct dwarf_cu_dir **dirs, size_t *ndirs, size_t *dircap)
{
	int first = 1;

	while (c->p < c->end) {
		uint64_t die_off = (uint64_t)(c->p - info);
		uint64_t code = dw_uleb(c);
		const struct abbrev *a;
		struct dw_value name = {0, NULL, 0}, link = {0, NULL, 0}, lo = {0, NULL, 0},
		                hi = {0, NULL, 0}, ref = {0, NULL, 0}, dir = {0, NULL, 0};
		int has_name = 0, has_link = 0, has_lo = 0, has_hi = 0, has_ref = 0, has_dir = 0;
		int has_stmt = 0;
		uint64_t stmt = 0;

		if (c->err)
			return -1;
		if (!code)
			continue; /* end of a sibling list */
		a = find_abbrev(ab, nab, code);
		if (!a)
			return -1;
		for (size_t i = 0; i < a->nattrs; i++) {
			struct dw_value v;
			if (dw_read_form(c, a->attrs[i].form, u->version, u->asz, u->is64,
			                 a->attrs[i].implicit, &v))
				return -1;
			switch (a->attrs[i].name) {
			case DW_AT_name: name = v; has_name = 1; break;
			case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name:
				link = v; has_link = 1; break;
			case DW_AT_low_pc: lo = v; has_lo = 1; break;
			case DW_AT_high_pc: hi = v; has_hi = 1; break;
			case DW_AT_specification: case DW_AT_abstract_origin:
				if (is_cu_ref(v.form)) {
					ref = v;
					ref.val += u->start;
					has_ref = 1;
				} else if (v.form == DW_FORM_ref_addr) {
					ref = v;
					has_ref = 1;
				}
				break;
			case DW_AT_comp_dir: dir = v; has_dir = 1; break;
			case DW_AT_stmt_list: stmt = v.val; has_stmt = 1; break;
			case DW_AT_str_offsets_base: if (first) u->str_offsets_base = v.val; break;
			case DW_AT_addr_base: if (first) u->addr_base = v.val; break;
			default: break;
			}
		}
		if (first) {
			first = 0;
			if (has_stmt && (a->tag == DW_TAG_compile_unit || a->tag == DW_TAG_partial_unit ||
			                 a->tag == DW_TAG_skeleton_unit)) {
				if (!grow(dirs, dircap, *ndirs, sizeof(**dirs)))
					return -PTREC_ENOMEM;
				(*dirs)[(*ndirs)++] = (struct dwarf_cu_dir){
					stmt, has_dir ? form_string(x, u, &dir) : NULL};
			}
			continue;
		}
		if (a->tag != DW_TAG_subprogram && !has_name && !has_link)
			continue;
		{
			const char *n = has_link ? form_string(x, u, &link) : NULL;
			if (!n && has_name)
				n = form_string(x, u, &name);
			if (n) {
				if (!grow(&x->named, &x->namedcap, x->nnamed, sizeof(*x->named)))
					return -PTREC_ENOMEM;
				x->named[x->nnamed++] = (struct named_die){die_off, n};
			}
			if (a->tag == DW_TAG_subprogram && has_lo && has_hi) {
				uint64_t l, h;
				struct ptrec_dwarf *d = x->d;
				if (form_addr(x, u, &lo, &l))
					continue;
				if (is_constant(hi.form))
					h = l + hi.val;
				else if (form_addr(x, u, &hi, &h))
					continue;
				if (h <= l || l == 0)
					continue;
				if (!grow(&d->funcs, &x->funccap, d->nfuncs, sizeof(*d->funcs)))
					return -PTREC_ENOMEM;
				d->funcs[d->nfuncs] = (struct ptrec_dwarf_func){l, h, n};
				if (!n && has_ref) {
					if (!grow(&x->pend, &x->pendcap, x->npend, sizeof(*x->pend)))
						return -PTREC_ENOMEM;
					x->pend[x->npend++] = (struct pending){d->nfuncs, ref.val};
				}
				d->nfuncs++;
			}
		}
	}
	return c->err ? -1 : 0;
}

static int named_cmp(const void *a, const void *b)
{
	const struct named_die *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static const char *section(const struct ptrec_elf *elf, const char *name, size_t *len)
{
	const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, name);
	const uint8_t *p;
	*len = 0;
	if (!s || ptrec_elf_section_bytes(elf, s, &p, len))
		return NULL;
	return (const char *)p;
}

int ptrec_dwarf_info_load(struct ptrec_dwarf *d, const struct ptrec_elf *elf, struct ptrec_warnings *w,
                    struct dwarf_cu_dir **dirs, size_t *ndirs)
{
	struct info_ctx x;
	const uint8_t *info, *abbr;
	size_t info_len, abbr_len, dircap = 0, out = 0;
	int rc = 0;

	memset(&x, 0, sizeof(x));
	x.elf = elf;
	x.w = w;
	x.d = d;
	info = (const uint8_t *)section(elf, ".debug_info", &info_len);
	abbr = (const uint8_t *)section(elf, ".debug_abbrev", &abbr_len);
	if (!info || !abbr)
		return 0;
	d->has_info = 1;
	x.str = (const uint8_t *)section(elf, ".debug_str", &x.str_len);
	x.line_str = (const uint8_t *)section(elf, ".debug_line_str", &x.line_str_len);
	x.str_off = (const uint8_t *)section(elf, ".debug_str_offsets", &x.str_off_len);
	x.addr = (const uint8_t *)section(elf, ".debug_addr", &x.addr_len);

	for (uint64_t off = 0; off < info_len;) {
		struct dw_cur c = {info + off, info + info_len, 0};
		struct unit u;
		struct abbrev *ab = NULL;
		size_t nab = 0;
		uint64_t len, abbrev_off;
		unsigned type = DW_UT_compile;

		memset(&u, 0, sizeof(u));
		u.start = off;
		len = dw_initial_length(&c, &u.is64);
		if (c.err || len > (uint64_t)(c.end - c.p)) {
			ptrec_warn(w, "%s: .debug_info unit at 0x%llx: length runs past the section",
			           elf->path, (unsigned long long)off);
			break;
		}
		c.end = c.p + len;
		u.version = dw_u16(&c);
		if (u.version < 2 || u.version > 5) {
			ptrec_warn(w, "%s: .debug_info unit at 0x%llx: version %u not supported",
			           elf->path, (unsigned long long)off, u.version);
			goto next;
		}
		if (u.version >= 5) {
			type = dw_u8(&c);
			u.asz = dw_u8(&c);
			abbrev_off = dw_fixed(&c, u.is64 ? 8 : 4);
			if (type == DW_UT_skeleton || type == DW_UT_split_compile)
				dw_skip(&c, 8);
			else if (type == DW_UT_type || type == DW_UT_split_type)
				dw_skip(&c, 8 + (u.is64 ? 8 : 4));
		} else {
			abbrev_off = dw_fixed(&c, u.is64 ? 8 : 4);
			u.asz = dw_u8(&c);
		}
		/* Without DW_AT_str_offsets_base the table header (8 or 16 bytes) comes first. */
		u.str_offsets_base = u.is64 ? 16 : 8;
		u.addr_base = 8;
		if (c.err || (u.asz != 8 && u.asz != 4)) {
			ptrec_warn(w, "%s: .debug_info unit at 0x%llx: malformed header", elf->path,
			           (unsigned long long)off);
			goto next;
		}
		if (type != DW_UT_compile && type != DW_UT_partial && type != DW_UT_skeleton)
			goto next;
		rc = read_abbrevs(abbr, abbr_len, abbrev_off, &ab, &nab);
		if (rc == -PTREC_ENOMEM)
			goto out;
		if (rc) {
			rc = 0;
			free_abbrevs(ab, nab);
			ptrec_warn(w, "%s: .debug_abbrev at 0x%llx malformed; unit at 0x%llx skipped",
			           elf->path, (unsigned long long)abbrev_off, (unsigned long long)off);
			goto next;
		}
		rc = walk_unit(&x, &c, info, ab, nab, &u, dirs, ndirs, &dircap);
		free_abbrevs(ab, nab);
		if (rc == -PTREC_ENOMEM)
			goto out;
		if (rc) {
			rc = 0;
			ptrec_warn(w, "%s: .debug_info unit at 0x%llx: malformed DIE; rest of the unit "
			           "skipped", elf->path, (unsigned long long)off);
		}
next:
		off += len + (u.is64 ? 12 : 4);
	}

	/* Names through references, then drop functions still nameless. */
	if (x.npend) {
		if (x.nnamed)
			qsort(x.named, x.nnamed, sizeof(*x.named), named_cmp);
		for (size_t i = 0; i < x.npend; i++) {
			struct named_die key = {x.pend[i].ref, NULL}, *hit;
			hit = x.nnamed ? bsearch(&key, x.named, x.nnamed, sizeof(key), named_cmp) : NULL;
			if (hit)
				d->funcs[x.pend[i].func].name = hit->name;
		}
	}
	for (size_t i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].name)
			d->funcs[out++] = d->funcs[i];
	d->nfuncs = out;
out:
	free(x.named);
	free(x.pend);
	return rc;
}
