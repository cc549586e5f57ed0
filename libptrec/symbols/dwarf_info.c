/* dwarf_info.c — walks .debug_info (DWARF 2 to 5) for each unit's DW_AT_comp_dir and
 * DW_AT_stmt_list, for DW_TAG_subprogram address ranges and names (names reached through
 * DW_AT_specification / DW_AT_abstract_origin inside the same section too), and for the call
 * sites whose callee is a function with an entry address (tail calls, dwarf_calls.c). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "symbols/dwarf_line.h"
#include "symbols/dwarf_reader.h"
#include "ptrec.h"

enum {
	DW_TAG_compile_unit = 0x11, DW_TAG_subprogram = 0x2e, DW_TAG_partial_unit = 0x3c,
	DW_TAG_skeleton_unit = 0x4a, DW_TAG_inlined_subroutine = 0x1d,
	DW_AT_ranges = 0x55, DW_AT_call_file = 0x58, DW_AT_call_line = 0x59,
	DW_AT_rnglists_base = 0x74,
	DW_AT_name = 0x03, DW_AT_stmt_list = 0x10, DW_AT_low_pc = 0x11, DW_AT_high_pc = 0x12,
	DW_AT_comp_dir = 0x1b, DW_AT_abstract_origin = 0x31, DW_AT_specification = 0x47,
	DW_AT_linkage_name = 0x6e, DW_AT_str_offsets_base = 0x72, DW_AT_addr_base = 0x73,
	DW_AT_MIPS_linkage_name = 0x2007,
	DW_TAG_call_site = 0x48, DW_TAG_GNU_call_site = 0x4109,
	DW_AT_call_return_pc = 0x7d, DW_AT_call_origin = 0x7f, DW_AT_call_tail_call = 0x82,
	DW_AT_GNU_tail_call = 0x2115, DW_AT_language = 0x13,
	DW_LANG_C_plus_plus = 0x04, DW_LANG_C_plus_plus_03 = 0x19, DW_LANG_C_plus_plus_11 = 0x1a,
	DW_LANG_C_plus_plus_14 = 0x21,
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

/* A named DIE, or one that refers to another for its name (specification /
 * abstract_origin), for resolving references. */
struct named_die {
	uint64_t off;       /* .debug_info offset of the DIE */
	const char *name;   /* its name, or NULL */
	uint64_t ref;       /* where its name is (when name is NULL), or 0 */
	int plain_cxx;      /* a C++ unit's DIE without a linkage name (an extern "C" function's
	                       declaration: gdb knows no function by it) */
};

/* A subprogram or inlined call waiting for its name through a reference. */
struct pending {
	size_t index;       /* index in funcs or inlines */
	uint64_t ref;       /* .debug_info offset referenced */
	int is_inline;      /* 1: index is in inlines */
};

/* A call site as read: its return address, the DIE it calls (DW_AT_call_origin, DWARF 4's
 * DW_AT_abstract_origin), tail or not. */
struct raw_call {
	uint64_t ret, origin;
	int tail;
};

/* A DIE a function's entry is known by: its own DW_TAG_subprogram with an address range, or the
 * declaration or abstract instance that one refers to. */
struct die_entry {
	uint64_t off, entry;
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
	size_t inlinecap;
	const uint8_t *ranges, *rnglists;   /* .debug_ranges (DWARF 2-4), .debug_rnglists (5) */
	size_t ranges_len, rnglists_len;
	struct raw_call *calls;
	size_t ncalls, callcap;
	struct die_entry *entries;
	size_t nentries, entrycap;
	size_t fnamecap;
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
	int cplus;                 /* DW_AT_language is C++ */
	uint64_t str_offsets_base; /* DW_AT_str_offsets_base (default: first table's header) */
	uint64_t addr_base;        /* DW_AT_addr_base */
	uint64_t start;            /* .debug_info offset of the unit header */
	uint64_t low_pc;           /* the unit's DW_AT_low_pc: base of its range lists */
	uint64_t rnglists_base;    /* DW_AT_rnglists_base */
	uint64_t stmt_list;        /* its line table */
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

/* Where an inlined call came from, for its ranges. */
struct inline_site {
	uint32_t depth;
	uint64_t call_file, call_line;
	uint64_t origin;    /* DW_AT_abstract_origin (.debug_info offset), 0 if none */
};

static int add_inline(struct info_ctx *x, const struct unit *u, uint64_t lo, uint64_t hi,
                      const struct inline_site *site)
{
	struct ptrec_dwarf *d = x->d;
	if (hi <= lo || !lo || !site->origin)
		return 0;
	if (!grow(&d->inlines, &x->inlinecap, d->ninlines, sizeof(*d->inlines)) ||
	    !grow(&x->pend, &x->pendcap, x->npend, sizeof(*x->pend)))
		return -PTREC_ENOMEM;
	d->inlines[d->ninlines] = (struct ptrec_dwarf_inline){
		lo, hi, NULL, u->stmt_list, (uint32_t)site->call_file, (uint32_t)site->call_line,
		site->depth, 0};
	x->pend[x->npend++] = (struct pending){d->ninlines, site->origin, 1};
	d->ninlines++;
	return 0;
}

static int add_inline_lohi(struct info_ctx *x, const struct unit *u, const struct dw_value *lo,
                           const struct dw_value *hi, const struct inline_site *site)
{
	uint64_t l, h;
	if (form_addr(x, u, lo, &l))
		return 0;
	if (is_constant(hi->form))
		h = l + hi->val;
	else if (form_addr(x, u, hi, &h))
		return 0;
	return add_inline(x, u, l, h, site);
}

/* Takes one address range [lo, hi) of a DIE (for for_ranges).  Returns 0 or -PTREC_ENOMEM. */
typedef int (*range_fn)(struct info_ctx *x, const struct unit *u, uint64_t lo, uint64_t hi,
                        void *arg);

static int inline_range(struct info_ctx *x, const struct unit *u, uint64_t lo, uint64_t hi,
                        void *site)
{
	return add_inline(x, u, lo, hi, site);
}

/* Passes each range of DW_AT_ranges to add, in their order: .debug_ranges pairs (DWARF 2-4) or
 * .debug_rnglists entries (DWARF 5; DW_FORM_rnglistx through DW_AT_rnglists_base). */
static int for_ranges(struct info_ctx *x, const struct unit *u, const struct dw_value *v,
                      range_fn add, void *arg)
{
	uint64_t base = u->low_pc, off = v->val;
	struct dw_cur c;
	unsigned osz = u->is64 ? 8 : 4;
	int rc = 0;

	if (u->version < 5) {
		if (!x->ranges || off >= x->ranges_len)
			return 0;
		c = (struct dw_cur){x->ranges + off, x->ranges + x->ranges_len, 0};
		for (unsigned k = 0; k < 4096 && !c.err && !rc; k++) {
			uint64_t a = dw_fixed(&c, u->asz), b = dw_fixed(&c, u->asz);
			uint64_t all = u->asz == 8 ? UINT64_MAX : 0xffffffffu;
			if (c.err || (!a && !b))
				break;
			if (a == all)
				base = b;
			else
				rc = add(x, u, base + a, base + b, arg);
		}
		return rc;
	}
	if (!x->rnglists)
		return 0;
	if (v->form == DW_FORM_rnglistx) {
		uint64_t at = u->rnglists_base + off * osz;
		if (at < u->rnglists_base || at > x->rnglists_len)
			return 0;
		c = (struct dw_cur){x->rnglists + at, x->rnglists + x->rnglists_len, 0};
		off = u->rnglists_base + dw_fixed(&c, osz);
		if (c.err)
			return 0;
	}
	if (off >= x->rnglists_len)
		return 0;
	c = (struct dw_cur){x->rnglists + off, x->rnglists + x->rnglists_len, 0};
	for (unsigned k = 0; k < 4096 && !c.err && !rc; k++) {
		unsigned kind = dw_u8(&c);
		uint64_t a, b;
		struct dw_value ax = {0, NULL, DW_FORM_addrx}, bx = {0, NULL, DW_FORM_addrx};
		switch (kind) {
		case 0: /* DW_RLE_end_of_list */
			return 0;
		case 1: /* base_addressx */
			ax.val = dw_uleb(&c);
			if (form_addr(x, u, &ax, &base))
				return 0;
			break;
		case 2: /* startx_endx */
			ax.val = dw_uleb(&c);
			bx.val = dw_uleb(&c);
			if (form_addr(x, u, &ax, &a) || form_addr(x, u, &bx, &b))
				return 0;
			rc = add(x, u, a, b, arg);
			break;
		case 3: /* startx_length */
			ax.val = dw_uleb(&c);
			b = dw_uleb(&c);
			if (form_addr(x, u, &ax, &a))
				return 0;
			rc = add(x, u, a, a + b, arg);
			break;
		case 4: /* offset_pair */
			a = dw_uleb(&c);
			b = dw_uleb(&c);
			rc = add(x, u, base + a, base + b, arg);
			break;
		case 5: /* base_address */
			base = dw_fixed(&c, u->asz);
			break;
		case 6: /* start_end */
			a = dw_fixed(&c, u->asz);
			b = dw_fixed(&c, u->asz);
			rc = add(x, u, a, b, arg);
			break;
		case 7: /* start_length */
			a = dw_fixed(&c, u->asz);
			b = dw_uleb(&c);
			rc = add(x, u, a, a + b, arg);
			break;
		default:
			return 0;
		}
	}
	return rc;
}

/* A subprogram being read, for its ranges. */
struct func_site {
	const char *name;   /* its name, or NULL (then ref names it) */
	uint64_t ref;       /* DW_AT_specification / DW_AT_abstract_origin, 0 if none */
	size_t first;       /* index of its first range in funcs */
};

/* Adds one range of a subprogram to funcs: its entry is the start of its first range (gdb's
 * entry of a function in several ranges, such as one with a .cold part). */
static int func_range(struct info_ctx *x, const struct unit *u, uint64_t lo, uint64_t hi,
                      void *arg)
{
	struct func_site *fs = arg;
	struct ptrec_dwarf *d = x->d;
	(void)u;
	if (hi <= lo || !lo)
		return 0;
	if (!grow(&d->funcs, &x->funccap, d->nfuncs, sizeof(*d->funcs)))
		return -PTREC_ENOMEM;
	d->funcs[d->nfuncs] = (struct ptrec_dwarf_func){
		lo, hi, fs->name, d->nfuncs > fs->first ? d->funcs[fs->first].entry : lo};
	if (!fs->name && fs->ref) {
		if (!grow(&x->pend, &x->pendcap, x->npend, sizeof(*x->pend)))
			return -PTREC_ENOMEM;
		x->pend[x->npend++] = (struct pending){d->nfuncs, fs->ref, 0};
	}
	d->nfuncs++;
	return 0;
}

/* Walks the DIEs of one unit.  Returns 0, -1 (malformed; the rest of the unit is skipped) or
 * -PTREC_ENOMEM. */
static int walk_unit(struct info_ctx *x, struct dw_cur *c, const uint8_t *info,
                     const struct abbrev *ab, size_t nab, struct unit *u,
                     struct dwarf_cu_dir **dirs, size_t *ndirs, size_t *dircap)
{
	int first = 1;
	uint32_t depth = 0;

	while (c->p < c->end) {
		uint64_t die_off = (uint64_t)(c->p - info);
		uint64_t code = dw_uleb(c);
		const struct abbrev *a;
		struct dw_value name = {0, NULL, 0}, link = {0, NULL, 0}, lo = {0, NULL, 0},
		                hi = {0, NULL, 0}, ref = {0, NULL, 0}, dir = {0, NULL, 0},
		                ranges = {0, NULL, 0}, retpc = {0, NULL, 0};
		int has_name = 0, has_link = 0, has_lo = 0, has_hi = 0, has_ref = 0, has_dir = 0;
		int has_stmt = 0, has_ranges = 0, has_retpc = 0, tail = 0;
		uint64_t stmt = 0, call_file = 0, call_line = 0;
		uint32_t die_depth = depth;

		if (c->err)
			return -1;
		if (!code) {
			if (depth)
				depth--; /* end of a sibling list */
			continue;
		}
		a = find_abbrev(ab, nab, code);
		if (!a)
			return -1;
		if (a->children)
			depth++;
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
			case DW_AT_specification: case DW_AT_abstract_origin: case DW_AT_call_origin:
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
			case DW_AT_rnglists_base: if (first) u->rnglists_base = v.val; break;
			case DW_AT_language:
				if (first)
					u->cplus = v.val == DW_LANG_C_plus_plus ||
					           v.val == DW_LANG_C_plus_plus_03 ||
					           v.val == DW_LANG_C_plus_plus_11 ||
					           v.val == DW_LANG_C_plus_plus_14;
				break;
			case DW_AT_ranges: ranges = v; has_ranges = 1; break;
			case DW_AT_call_file: call_file = v.val; break;
			case DW_AT_call_line: call_line = v.val; break;
			case DW_AT_call_return_pc: retpc = v; has_retpc = 1; break;
			case DW_AT_call_tail_call: case DW_AT_GNU_tail_call: tail = v.val != 0; break;
			default: break;
			}
		}
		if (first) {
			first = 0;
			if (has_lo)
				(void)form_addr(x, u, &lo, &u->low_pc);
			u->stmt_list = has_stmt ? stmt : UINT64_MAX;
			if (has_stmt && (a->tag == DW_TAG_compile_unit || a->tag == DW_TAG_partial_unit ||
			                 a->tag == DW_TAG_skeleton_unit)) {
				if (!grow(dirs, dircap, *ndirs, sizeof(**dirs)))
					return -PTREC_ENOMEM;
				(*dirs)[(*ndirs)++] = (struct dwarf_cu_dir){
					stmt, has_dir ? form_string(x, u, &dir) : NULL};
			}
			continue;
		}
		if (a->tag == DW_TAG_call_site || a->tag == DW_TAG_GNU_call_site) {
			/* DWARF 5 gives the return address in DW_AT_call_return_pc, DWARF 4's GNU
			 * extension in DW_AT_low_pc. */
			uint64_t r;
			if (!has_ref || (has_retpc ? form_addr(x, u, &retpc, &r)
			                           : !has_lo || form_addr(x, u, &lo, &r)))
				continue;
			if (!grow(&x->calls, &x->callcap, x->ncalls, sizeof(*x->calls)))
				return -PTREC_ENOMEM;
			x->calls[x->ncalls++] = (struct raw_call){r, ref.val, tail};
			continue;
		}
		if (a->tag == DW_TAG_inlined_subroutine) {
			struct inline_site site = {die_depth, call_file, call_line, has_ref ? ref.val : 0};
			int rc;
			if (has_lo && has_hi)
				rc = add_inline_lohi(x, u, &lo, &hi, &site);
			else if (has_ranges)
				rc = for_ranges(x, u, &ranges, inline_range, &site);
			else
				rc = 0;
			if (rc)
				return rc;
			continue;
		}
		if (a->tag != DW_TAG_subprogram && !has_name && !has_link)
			continue;
		{
			const char *n = has_link ? form_string(x, u, &link) : NULL;
			if (!n && has_name)
				n = form_string(x, u, &name);
			if (n || (has_ref && a->tag == DW_TAG_subprogram)) {
				if (!grow(&x->named, &x->namedcap, x->nnamed, sizeof(*x->named)))
					return -PTREC_ENOMEM;
				x->named[x->nnamed++] = (struct named_die){die_off, n, n ? 0 : ref.val,
				                                           u->cplus && !has_link};
			}
			if (a->tag == DW_TAG_subprogram && ((has_lo && has_hi) || has_ranges)) {
				struct ptrec_dwarf *d = x->d;
				struct func_site fs = {n, has_ref ? ref.val : 0, d->nfuncs};
				int rc;
				if (has_lo && has_hi) {
					uint64_t l, h;
					if (form_addr(x, u, &lo, &l))
						continue;
					if (is_constant(hi.form))
						h = l + hi.val;
					else if (form_addr(x, u, &hi, &h))
						continue;
					rc = func_range(x, u, l, h, &fs);
				} else {
					rc = for_ranges(x, u, &ranges, func_range, &fs);
				}
				if (rc)
					return rc;
				if (d->nfuncs == fs.first)
					continue;
				uint64_t l = d->funcs[fs.first].entry;
				for (int k = 0; k < 1 + has_ref; k++) {
					if (!grow(&x->entries, &x->entrycap, x->nentries,
					          sizeof(*x->entries)))
						return -PTREC_ENOMEM;
					x->entries[x->nentries++] =
						(struct die_entry){k ? ref.val : die_off, l};
				}
				const char *plain = has_name ? form_string(x, u, &name) : NULL;
				for (int k = 0; k < 2; k++) {
					const char *nm = k ? plain : n;
					if (!nm || (k && n && !strcmp(nm, n)))
						continue;
					if (!grow(&d->names, &x->fnamecap, d->nnames,
					          sizeof(*d->names)))
						return -PTREC_ENOMEM;
					d->names[d->nnames++] = (struct ptrec_dwarf_name){nm, l};
				}
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

static int inline_cmp(const void *a, const void *b)
{
	const struct ptrec_dwarf_inline *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct die_entry *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static int call_cmp(const void *a, const void *b)
{
	const struct ptrec_dwarf_call *x = a, *y = b;
	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

static int fname_cmp(const void *a, const void *b)
{
	const struct ptrec_dwarf_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* 1 if one of the first n names (sorted) is name. */
static int has_fname(const struct ptrec_dwarf_name *names, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(names[mid].name, name);
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* 1 if addr is one of the n sorted values of v. */
static int has_u64(const uint64_t *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] == addr)
			return 1;
		if (v[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Sorts d->names and adds the names of the ELF's function symbols at the entry of a function of
 * the debug information that it does not name so, as gdb finds a declaration's callee by its
 * linkage name among the ELF symbols: an alias (glibc declares __printf_fp as
 * __GI___printf_fp, defines ___printf_fp and makes the other two names aliases of it).  Only
 * at those entries: a program with a little debug information and a large symbol table (node:
 * 110,000 symbols) would sort them all for nothing. */
static int sort_names(struct info_ctx *x)
{
	struct ptrec_dwarf *d = x->d;
	size_t n = d->nnames, nent = 0;
	uint64_t *ent;

	if (n)
		qsort(d->names, n, sizeof(*d->names), fname_cmp);
	if (!x->elf->nfnames || !d->nfuncs)
		return 0;
	if (!(ent = malloc(d->nfuncs * sizeof(*ent))))
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < d->nfuncs; i++)
		ent[nent++] = d->funcs[i].entry;
	qsort(ent, nent, sizeof(*ent), u64_cmp);
	for (size_t i = 0; i < x->elf->nfnames; i++) {
		const struct ptrec_elf_name *e = &x->elf->fnames[i];
		if (!has_u64(ent, nent, e->addr) || has_fname(d->names, n, e->name))
			continue;
		if (!grow(&d->names, &x->fnamecap, d->nnames, sizeof(*d->names))) {
			free(ent);
			return -PTREC_ENOMEM;
		}
		d->names[d->nnames++] = (struct ptrec_dwarf_name){e->name, e->addr};
	}
	free(ent);
	if (d->nnames > n)
		qsort(d->names, d->nnames, sizeof(*d->names), fname_cmp);
	return 0;
}

/* Gives each call site read its callee, into d->calls: the entry of the function whose DIE it
 * names, or, for a declaration, of the one function of that name here (by the debug
 * information's names, else the ELF's symbols), else that name (a function of another file).
 * Calls to several functions (clones of one abstract instance, static functions of one name)
 * are left out. */
static int resolve_calls(struct info_ctx *x)
{
	struct ptrec_dwarf *d = x->d;
	size_t n = 0;
	int rc;

	if ((rc = sort_names(x)))
		return rc;
	if (!x->ncalls)
		return 0;
	if (x->nentries)
		qsort(x->entries, x->nentries, sizeof(*x->entries), entry_cmp);
	if (x->nnamed)
		qsort(x->named, x->nnamed, sizeof(*x->named), named_cmp);
	d->calls = malloc(x->ncalls * sizeof(*d->calls));
	if (!d->calls)
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < x->ncalls; i++) {
		const struct raw_call *c = &x->calls[i];
		size_t lo = 0, hi = x->nentries;
		while (lo < hi) { /* the first entry of the origin */
			size_t mid = lo + (hi - lo) / 2;
			if (x->entries[mid].off < c->origin)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint64_t entry = 0;
		const char *name = NULL;
		if (lo < x->nentries && x->entries[lo].off == c->origin) {
			entry = x->entries[lo].entry;
			for (size_t k = lo + 1; k < x->nentries && x->entries[k].off == c->origin; k++)
				if (x->entries[k].entry != entry)
					entry = 0;
			if (!entry)
				continue;
		} else {
			struct named_die key = {c->origin, NULL, 0, 0};
			const struct named_die *hit =
				x->nnamed ? bsearch(&key, x->named, x->nnamed, sizeof(key), named_cmp)
				          : NULL;
			if (!hit || !hit->name || hit->plain_cxx)
				continue;
			entry = ptrec_dwarf_entry_by_name(d, hit->name);
			if (!entry)
				name = hit->name;
		}
		d->calls[n++] = (struct ptrec_dwarf_call){c->ret, entry, name, (uint32_t)c->tail, 0};
	}
	d->ncalls = n;
	if (n)
		qsort(d->calls, n, sizeof(*d->calls), call_cmp);
	return 0;
}

static const char *section(const struct ptrec_elf *elf, const char *name, size_t *len)
{
	const uint8_t *p;
	if (ptrec_elf_debug_section(elf, name, &p, len, NULL))
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
	x.ranges = (const uint8_t *)section(elf, ".debug_ranges", &x.ranges_len);
	x.rnglists = (const uint8_t *)section(elf, ".debug_rnglists", &x.rnglists_len);

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
			struct named_die key = {x.pend[i].ref, NULL, 0, 0}, *hit = NULL;
			/* Follow abstract_origin -> specification chains a few steps. */
			for (int hop = 0; hop < 4 && x.nnamed; hop++) {
				hit = bsearch(&key, x.named, x.nnamed, sizeof(key), named_cmp);
				if (!hit || hit->name || !hit->ref)
					break;
				key.off = hit->ref;
			}
			if (hit && hit->name) {
				if (x.pend[i].is_inline)
					d->inlines[x.pend[i].index].name = hit->name;
				else
					d->funcs[x.pend[i].index].name = hit->name;
			}
		}
	}
	if (d->ninlines) {
		qsort(d->inlines, d->ninlines, sizeof(*d->inlines), inline_cmp);
		d->inline_maxhi = malloc(d->ninlines * sizeof(*d->inline_maxhi));
		if (!d->inline_maxhi) {
			rc = -PTREC_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < d->ninlines; i++)
			d->inline_maxhi[i] = i && d->inline_maxhi[i - 1] > d->inlines[i].hi
			                         ? d->inline_maxhi[i - 1] : d->inlines[i].hi;
	}
	for (size_t i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].name)
			d->funcs[out++] = d->funcs[i];
	d->nfuncs = out;
	rc = resolve_calls(&x);
out:
	free(x.named);
	free(x.pend);
	free(x.calls);
	free(x.entries);
	return rc;
}
