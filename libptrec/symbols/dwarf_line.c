/* dwarf_line.c — .debug_line programs (DWARF 2 to 5) run into sorted address -> file:line rows,
 * and the lookups over rows and functions. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/dwarf_line.h"
#include "symbols/dwarf_reader.h"
#include "ptrec.h"

enum {
	DW_LNS_copy = 1, DW_LNS_advance_pc, DW_LNS_advance_line, DW_LNS_set_file,
	DW_LNS_set_column, DW_LNS_negate_stmt, DW_LNS_set_basic_block, DW_LNS_const_add_pc,
	DW_LNS_fixed_advance_pc, DW_LNS_set_prologue_end, DW_LNS_set_epilogue_begin,
	DW_LNS_set_isa,
	DW_LNE_end_sequence = 1, DW_LNE_set_address, DW_LNE_define_file, DW_LNE_set_discriminator,
	DW_LNCT_path = 1, DW_LNCT_directory_index = 2,
};

/* Growable arrays used while reading. */
struct rows_vec {
	struct ptrec_line_row *v;
	size_t n, cap;
};

struct seq {
	size_t first;  /* index of its first row in the scratch vector */
	size_t count;  /* rows including the end row */
	uint64_t start;
};

struct line_ctx {
	struct ptrec_dwarf *d;
	const struct ptrec_elf *elf;
	struct ptrec_warnings *w;
	const uint8_t *line_str;  /* .debug_line_str */
	size_t line_str_len;
	const uint8_t *str;       /* .debug_str */
	size_t str_len;
	struct rows_vec rows;     /* scratch rows, sequences contiguous */
	struct seq *seqs;
	size_t nseqs, seqcap;
	size_t filecap;
};

static int push_row(struct rows_vec *r, const struct ptrec_line_row *row)
{
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 1024;
		struct ptrec_line_row *p = realloc(r->v, ncap * sizeof(*p));
		if (!p)
			return -PTREC_ENOMEM;
		r->v = p;
		r->cap = ncap;
	}
	r->v[r->n++] = *row;
	return 0;
}

/* Adds a path to the file table; returns its index or a negative code. */
static long add_file(struct line_ctx *x, const char *comp_dir, const char *dir, const char *name)
{
	struct ptrec_dwarf *d = x->d;
	char *path;
	int n;

	if (!name)
		name = "??";
	if (name[0] == '/' || !dir || !*dir) {
		if (name[0] != '/' && comp_dir && *comp_dir)
			n = asprintf(&path, "%s/%s", comp_dir, name);
		else
			n = asprintf(&path, "%s", name);
	} else if (dir[0] == '/' || !comp_dir || !*comp_dir) {
		n = asprintf(&path, "%s/%s", dir, name);
	} else {
		n = asprintf(&path, "%s/%s/%s", comp_dir, dir, name);
	}
	if (n < 0)
		return -PTREC_ENOMEM;
	if (d->nfiles == x->filecap) {
		size_t ncap = x->filecap ? x->filecap * 2 : 64;
		char **p = realloc(d->files, ncap * sizeof(*p));
		if (!p) {
			free(path);
			return -PTREC_ENOMEM;
		}
		d->files = p;
		x->filecap = ncap;
	}
	d->files[d->nfiles] = path;
	return (long)d->nfiles++;
}

/* Reads a v5 string-ish form value of an entry format. */
static const char *v5_string(struct line_ctx *x, const struct dw_value *v)
{
	switch (v->form) {
	case DW_FORM_string: return v->str;
	case DW_FORM_line_strp: return dw_section_str(x->line_str, x->line_str_len, v->val);
	case DW_FORM_strp: return dw_section_str(x->str, x->str_len, v->val);
	default: return NULL;
	}
}

/* Reads a v5 entry-format list and its entries: directories (want_dir = 0) or files.
 * names[i] / dirs[i] receive DW_LNCT_path / DW_LNCT_directory_index. */
static int v5_entries(struct line_ctx *x, struct dw_cur *c, unsigned version, unsigned asz,
                      int is64, const char ***names, uint64_t **dirs, size_t *count)
{
	uint64_t fmt[32][2];
	unsigned nfmt = dw_u8(c);
	uint64_t n;

	if (nfmt > 32)
		return -1;
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[i][0] = dw_uleb(c);
		fmt[i][1] = dw_uleb(c);
	}
	n = dw_uleb(c);
	if (c->err || n > (uint64_t)(c->end - c->p))
		return -1;
	*names = calloc(n ? n : 1, sizeof(**names));
	*dirs = calloc(n ? n : 1, sizeof(**dirs));
	if (!*names || !*dirs)
		return -1;
	*count = (size_t)n;
	for (uint64_t e = 0; e < n; e++)
		for (unsigned i = 0; i < nfmt; i++) {
			struct dw_value v;
			if (dw_read_form(c, (unsigned)fmt[i][1], version, asz, is64, 0, &v))
				return -1;
			if (fmt[i][0] == DW_LNCT_path)
				(*names)[e] = v5_string(x, &v);
			else if (fmt[i][0] == DW_LNCT_directory_index)
				(*dirs)[e] = v.val;
		}
	return c->err ? -1 : 0;
}

/* Looks up the compilation directory for the unit at stmt_list. */
static const char *comp_dir_of(const struct dwarf_cu_dir *dirs, size_t ndirs, uint64_t off)
{
	size_t lo = 0, hi = ndirs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dirs[mid].stmt_list == off)
			return dirs[mid].comp_dir;
		if (dirs[mid].stmt_list < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The header of one line-number program unit (DWARF 2-5, section 6.2.4). */
struct line_hdr {
	unsigned version;
	unsigned asz;             /* address size: from the v5 header, else 8 */
	int is64;                 /* 64-bit DWARF */
	unsigned min_len;         /* minimum_instruction_length */
	unsigned max_ops;         /* maximum_operations_per_instruction (v4+; else 1) */
	int line_base;
	unsigned line_range;
	unsigned opbase;          /* opcode_base */
	uint8_t std_len[256];     /* operand count of each standard opcode */
	const uint8_t *prog;      /* the program: prog..unit_end */
	const uint8_t *unit_end;
};

/* The directories and files a unit names, and the file table index of each file number. */
struct unit_files {
	const char *comp_dir;     /* the unit's compilation directory, or NULL */
	const char **dnames, **fnames;
	uint64_t *ddirs, *fdirs;
	size_t ndirs, nfnames;
	long *file_ids;           /* file number -> index in d->files, or -1 */
	size_t nfile_ids, filecap;
};

/* How reading a part of a unit went, besides a negative -PTREC_E* code. */
enum { UNIT_OK = 0, UNIT_BAD = 1 /* malformed: skip the rest */, UNIT_SKIP = 2 /* warned */ };

/* Reads the header of the unit at sec + uoff into h and sets *next to the next unit; leaves
 * hc over the header's directory and file lists.  Returns UNIT_OK, UNIT_BAD or UNIT_SKIP. */
static int read_header(struct line_ctx *x, const uint8_t *sec, size_t seclen, uint64_t uoff,
                       struct line_hdr *h, struct dw_cur *hc, uint64_t *next)
{
	struct dw_cur c = {sec + uoff, sec + seclen, 0};
	uint64_t unit_len = dw_initial_length(&c, &h->is64), hdr_len;

	if (c.err || unit_len > (uint64_t)(c.end - c.p)) {
		ptrec_warn(x->w, "%s: .debug_line unit at 0x%llx: length runs past the section",
		           x->elf->path, (unsigned long long)uoff);
		*next = seclen;
		return UNIT_SKIP;
	}
	h->unit_end = c.p + unit_len;
	*next = (uint64_t)(h->unit_end - sec);
	c.end = h->unit_end;
	h->version = dw_u16(&c);
	if (h->version < 2 || h->version > 5) {
		ptrec_warn(x->w, "%s: .debug_line unit at 0x%llx: version %u not supported",
		           x->elf->path, (unsigned long long)uoff, h->version);
		return UNIT_SKIP;
	}
	h->asz = 8;
	if (h->version >= 5) {
		h->asz = dw_u8(&c);
		dw_u8(&c); /* segment selector size */
		if (h->asz != 8 && h->asz != 4)
			return UNIT_BAD;
	}
	hdr_len = dw_fixed(&c, h->is64 ? 8 : 4);
	if (c.err || hdr_len > (uint64_t)(c.end - c.p))
		return UNIT_BAD;
	h->prog = c.p + hdr_len;
	*hc = (struct dw_cur){c.p, h->prog, 0};
	h->min_len = dw_u8(hc);
	h->max_ops = h->version >= 4 ? dw_u8(hc) : 1;
	dw_u8(hc); /* default_is_stmt */
	h->line_base = (int8_t)dw_u8(hc);
	h->line_range = dw_u8(hc);
	h->opbase = dw_u8(hc);
	if (hc->err || !h->line_range || !h->opbase || !h->max_ops)
		return UNIT_BAD;
	memset(h->std_len, 0, sizeof(h->std_len));
	for (unsigned i = 1; i < h->opbase; i++)
		h->std_len[i] = dw_u8(hc);
	return UNIT_OK;
}

/* Appends the file table index id as the unit's next file number.  Returns 0 or -ENOMEM. */
static int add_file_id(struct unit_files *f, long id)
{
	if (f->nfile_ids == f->filecap) {
		long *p = realloc(f->file_ids, f->filecap * 2 * sizeof(*p));
		if (!p)
			return -PTREC_ENOMEM;
		f->file_ids = p;
		f->filecap *= 2;
	}
	f->file_ids[f->nfile_ids++] = id;
	return 0;
}

/* DWARF 5: the directory and file entry lists (with their formats); files count from 0.
 * Returns UNIT_OK, UNIT_BAD or -ENOMEM. */
static int read_files_v5(struct line_ctx *x, struct dw_cur *hc, const struct line_hdr *h,
                         struct unit_files *f)
{
	if (v5_entries(x, hc, h->version, h->asz, h->is64, &f->dnames, &f->ddirs, &f->ndirs))
		return UNIT_BAD;
	if (v5_entries(x, hc, h->version, h->asz, h->is64, &f->fnames, &f->fdirs, &f->nfnames))
		return UNIT_BAD;
	if (!f->comp_dir && f->ndirs)
		f->comp_dir = f->dnames[0];
	f->file_ids = calloc(f->nfnames ? f->nfnames : 1, sizeof(*f->file_ids));
	if (!f->file_ids)
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < f->nfnames; i++) {
		const char *dir = f->fdirs[i] < f->ndirs ? f->dnames[f->fdirs[i]] : NULL;
		long id = add_file(x, f->comp_dir, dir, f->fnames[i]);
		if (id < 0)
			return (int)id;
		f->file_ids[i] = id;
	}
	f->nfile_ids = f->filecap = f->nfnames;
	return UNIT_OK;
}

/* DWARF 2-4: include_directories then file_names, each list ended by an empty string; files
 * count from 1.  Returns UNIT_OK, UNIT_BAD (the files read so far are kept) or -ENOMEM. */
static int read_files_v2(struct line_ctx *x, struct dw_cur *hc, struct unit_files *f)
{
	size_t dcap = 0;
	int rc;

	for (;;) {
		const char *s = dw_str(hc);
		if (!s)
			return UNIT_BAD;
		if (!*s)
			break;
		if (f->ndirs == dcap) {
			size_t nc = dcap ? dcap * 2 : 16;
			const char **p = realloc(f->dnames, nc * sizeof(*p));
			if (!p)
				return -PTREC_ENOMEM;
			f->dnames = p;
			dcap = nc;
		}
		f->dnames[f->ndirs++] = s;
	}
	/* file_ids[0] is unused: DWARF 2-4 files count from 1. */
	f->filecap = 16;
	f->file_ids = calloc(f->filecap, sizeof(*f->file_ids));
	if (!f->file_ids)
		return -PTREC_ENOMEM;
	f->file_ids[0] = -1;
	f->nfile_ids = 1;
	for (;;) {
		const char *s = dw_str(hc), *dir;
		uint64_t di;
		long id;
		if (!s)
			return UNIT_BAD;
		if (!*s)
			break;
		di = dw_uleb(hc);
		dw_uleb(hc);
		dw_uleb(hc);
		if (hc->err)
			return UNIT_BAD;
		dir = di == 0 ? NULL : di <= f->ndirs ? f->dnames[di - 1] : NULL;
		id = add_file(x, f->comp_dir, dir, s);
		if (id < 0)
			return (int)id;
		if ((rc = add_file_id(f, id)))
			return rc;
	}
	return UNIT_OK;
}

/* The state machine's registers, and the sequence being built. */
struct line_regs {
	uint64_t addr;
	uint64_t file;
	int64_t line;
	size_t seq_first;  /* its first row in x->rows */
	int seq_ok;        /* addresses did not go down */
};

static void regs_reset(struct line_regs *r, size_t seq_first)
{
	*r = (struct line_regs){0, 1, 1, seq_first, 1};
}

/* Ends the sequence at the rows since r->seq_first: kept as a sequence, or dropped when its
 * addresses go down, it starts at 0 or a tombstone (discarded code) or has one row.  Returns 0
 * or -ENOMEM. */
static int end_sequence(struct line_ctx *x, struct line_regs *r)
{
	uint64_t start = x->rows.v[r->seq_first].addr;

	if (r->seq_ok && start != 0 && start < UINT64_MAX - 1 && x->rows.n - r->seq_first >= 2) {
		if (x->nseqs == x->seqcap) {
			size_t nc = x->seqcap ? x->seqcap * 2 : 64;
			struct seq *s = realloc(x->seqs, nc * sizeof(*s));
			if (!s)
				return -PTREC_ENOMEM;
			x->seqs = s;
			x->seqcap = nc;
		}
		x->seqs[x->nseqs++] = (struct seq){r->seq_first, x->rows.n - r->seq_first, start};
	} else {
		x->rows.n = r->seq_first;
	}
	regs_reset(r, x->rows.n);
	return 0;
}

/* Appends a row from the registers (the end row of its sequence when end).  Returns 0 or
 * -ENOMEM. */
static int emit_row(struct line_ctx *x, struct line_regs *r, const struct unit_files *f, int end)
{
	struct ptrec_line_row row;
	int rc;

	row.addr = r->addr;
	row.file = r->file < f->nfile_ids && f->file_ids[r->file] >= 0
	           ? (uint32_t)f->file_ids[r->file] : UINT32_MAX;
	row.line = r->line > 0 && r->line < UINT32_MAX ? (uint32_t)r->line : 0;
	row.end = (uint32_t)end;
	row.reserved = 0;
	if (x->rows.n > r->seq_first && r->addr < x->rows.v[x->rows.n - 1].addr)
		r->seq_ok = 0;
	if ((rc = push_row(&x->rows, &row)))
		return rc;
	return end ? end_sequence(x, r) : 0;
}

/* One extended opcode (after its 0 byte) at p.  Returns 1 if it emits a row (end_sequence), 0
 * if not, UNIT_SKIP when its length is bad (the program stops), or -ENOMEM. */
static int extended_op(struct line_ctx *x, struct dw_cur *p, const struct line_hdr *h,
                       struct unit_files *f, struct line_regs *r)
{
	uint64_t len = dw_uleb(p);
	int emit = 0;

	if (p->err || len == 0 || len > (uint64_t)(p->end - p->p))
		return UNIT_SKIP;
	const uint8_t *ext_end = p->p + len;
	switch (dw_u8(p)) {
	case DW_LNE_end_sequence:
		emit = 1;
		break;
	case DW_LNE_set_address:
		r->addr = dw_fixed(p, (size_t)(len - 1 > 8 ? 8 : len - 1));
		break;
	case DW_LNE_define_file: {
		const char *s = dw_str(p);
		long id;
		dw_uleb(p);
		dw_uleb(p);
		dw_uleb(p);
		if (!s || h->version >= 5)
			break;
		id = add_file(x, f->comp_dir, NULL, s);
		if (id < 0)
			return (int)id;
		int rc = add_file_id(f, id);
		if (rc)
			return rc;
		break;
	}
	default:
		break;
	}
	p->p = ext_end;
	return emit;
}

/* One standard opcode op (1 .. opcode_base - 1) at p.  Returns 1 if it emits a row. */
static int standard_op(unsigned op, struct dw_cur *p, const struct line_hdr *h,
                       struct line_regs *r)
{
	switch (op) {
	case DW_LNS_copy: return 1;
	case DW_LNS_advance_pc: r->addr += dw_uleb(p) * h->min_len; break;
	case DW_LNS_advance_line: r->line += dw_sleb(p); break;
	case DW_LNS_set_file: r->file = dw_uleb(p); break;
	case DW_LNS_const_add_pc:
		r->addr += (uint64_t)((255 - h->opbase) / h->line_range) * h->min_len;
		break;
	case DW_LNS_fixed_advance_pc: r->addr += dw_u16(p); break;
	default:
		for (unsigned i = 0; i < h->std_len[op]; i++)
			dw_uleb(p);
		break;
	}
	return 0;
}

/* Runs the line-number program into x->rows and x->seqs; an unterminated last sequence is
 * dropped.  Returns 0 or -ENOMEM. */
static int run_program(struct line_ctx *x, const struct line_hdr *h, struct unit_files *f,
                       uint64_t uoff)
{
	struct dw_cur p = {h->prog, h->unit_end, 0};
	struct line_regs r;
	int rc;

	regs_reset(&r, x->rows.n);
	while (p.p < p.end && !p.err) {
		unsigned op = dw_u8(&p);
		int emit;

		if (op >= h->opbase) { /* special opcode */
			unsigned adj = op - h->opbase;
			r.addr += (uint64_t)(adj / h->line_range) * h->min_len;
			r.line += h->line_base + (int)(adj % h->line_range);
			emit = 1;
		} else if (op == 0) {
			emit = extended_op(x, &p, h, f, &r);
			if (emit < 0)
				return emit;
			if (emit == UNIT_SKIP)
				break;
			if (emit && (rc = emit_row(x, &r, f, 1)))
				return rc;
			continue;
		} else {
			emit = standard_op(op, &p, h, &r);
		}
		if (emit && (rc = emit_row(x, &r, f, 0)))
			return rc;
	}
	if (p.err)
		ptrec_warn(x->w, "%s: .debug_line unit at 0x%llx: program runs past its end",
		           x->elf->path, (unsigned long long)uoff);
	x->rows.n = r.seq_first; /* drop an unterminated sequence */
	return 0;
}

/* Keeps the unit's file list in x->d (inlined calls name their call_file by its index); takes
 * f->file_ids.  Returns 0 or -ENOMEM. */
static int keep_unit_files(struct line_ctx *x, uint64_t uoff, struct unit_files *f)
{
	struct ptrec_dwarf *d = x->d;
	struct ptrec_dwarf_unit_files *u = realloc(d->units, (d->nunits + 1) * sizeof(*u));

	if (!u)
		return -PTREC_ENOMEM;
	d->units = u;
	u[d->nunits++] = (struct ptrec_dwarf_unit_files){uoff, f->file_ids, f->nfile_ids};
	f->file_ids = NULL;
	return 0;
}

/* Runs one line-number program unit at sec + uoff.  Returns 0 (also for a malformed unit,
 * which is skipped with a warning after *next is set), or -ENOMEM. */
static int read_unit(struct line_ctx *x, const uint8_t *sec, size_t seclen, uint64_t uoff,
                     const char *comp_dir, uint64_t *next)
{
	struct line_hdr h;
	struct unit_files f = {.comp_dir = comp_dir};
	struct dw_cur hc;
	int rc = read_header(x, sec, seclen, uoff, &h, &hc, next);

	if (rc == UNIT_SKIP)
		return 0;
	if (rc == UNIT_OK)
		rc = h.version >= 5 ? read_files_v5(x, &hc, &h, &f) : read_files_v2(x, &hc, &f);
	if (rc == UNIT_OK) {
		rc = run_program(x, &h, &f, uoff);
	} else if (rc == UNIT_BAD) {
		ptrec_warn(x->w, "%s: .debug_line unit at 0x%llx: malformed header; skipped",
		           x->elf->path, (unsigned long long)uoff);
		rc = 0;
	}
	if (!rc && f.file_ids)
		rc = keep_unit_files(x, uoff, &f);
	free(f.dnames);
	free(f.ddirs);
	free(f.fnames);
	free(f.fdirs);
	free(f.file_ids);
	return rc;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int dir_cmp(const void *a, const void *b)
{
	const struct dwarf_cu_dir *x = a, *y = b;
	return x->stmt_list < y->stmt_list ? -1 : x->stmt_list > y->stmt_list;
}

static int func_cmp(const void *a, const void *b)
{
	const struct ptrec_dwarf_func *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Larger ranges first, so that nested ones follow their parent. */
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

/* Points *p at a debug section's bytes (decompressed if need be); warns about those that
 * cannot be read. */
static int debug_section(const struct ptrec_elf *elf, const char *name, const uint8_t **p,
                         size_t *len, struct ptrec_warnings *w)
{
	const struct ptrec_elf_section *s;
	int rc = ptrec_elf_debug_section(elf, name, p, len, &s);

	if (!rc)
		return 0;
	if (!s)
		return -1;
	if (rc == -PTREC_ENOSUPP)
		ptrec_warn(w, "%s: %s uses an unknown compression; no file:line from it", elf->path,
		           s->name);
	else if (rc == -PTREC_ENOMEM)
		ptrec_warn(w, "%s: %s: out of memory decompressing it", elf->path, s->name);
	else if ((s->flags & 0x800 /* SHF_COMPRESSED */) || !strncmp(s->name, ".zdebug", 7))
		ptrec_warn(w, "%s: %s (at file offset 0x%llx) does not decompress: corrupt; no "
		           "file:line from it", elf->path, s->name, (unsigned long long)s->offset);
	else if (s->type != 8 /* SHT_NOBITS: stripped into a separate file */)
		ptrec_warn(w, "%s: %s lies outside the file", elf->path, name);
	return -1;
}

int ptrec_dwarf_load(struct ptrec_dwarf *d, const struct ptrec_elf *elf, struct ptrec_warnings *w)
{
	struct line_ctx x;
	struct dwarf_cu_dir *dirs = NULL;
	size_t ndirs = 0, total = 0;
	const uint8_t *sec;
	size_t seclen;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	memset(&x, 0, sizeof(x));
	x.d = d;
	x.elf = elf;
	x.w = w;
	if ((rc = ptrec_dwarf_info_load(d, elf, w, &dirs, &ndirs)))
		goto out;
	if (d->nfuncs)
		qsort(d->funcs, d->nfuncs, sizeof(*d->funcs), func_cmp);
	if (ndirs)
		qsort(dirs, ndirs, sizeof(*dirs), dir_cmp);
	if (debug_section(elf, ".debug_line", &sec, &seclen, w))
		goto out;
	d->has_lines = 1;
	debug_section(elf, ".debug_line_str", &x.line_str, &x.line_str_len, w);
	debug_section(elf, ".debug_str", &x.str, &x.str_len, w);
	for (uint64_t off = 0; off < seclen;) {
		uint64_t next = seclen;
		if ((rc = read_unit(&x, sec, seclen, off, comp_dir_of(dirs, ndirs, off), &next)))
			goto out;
		if (next <= off)
			break;
		off = next;
	}
	/* Units are read in .debug_line order, so their file lists are sorted by offset. */
	/* Order the sequences by address and lay their rows out in that order. */
	if (x.nseqs)
		qsort(x.seqs, x.nseqs, sizeof(*x.seqs), seq_cmp);
	for (size_t i = 0; i < x.nseqs; i++)
		total += x.seqs[i].count;
	d->rows = malloc((total ? total : 1) * sizeof(*d->rows));
	if (!d->rows) {
		rc = -PTREC_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < x.nseqs; i++) {
		memcpy(d->rows + d->nrows, x.rows.v + x.seqs[i].first,
		       x.seqs[i].count * sizeof(*d->rows));
		d->nrows += x.seqs[i].count;
	}
out:
	free(x.rows.v);
	free(x.seqs);
	free(dirs);
	if (rc)
		ptrec_dwarf_free(d);
	return rc;
}

void ptrec_dwarf_free(struct ptrec_dwarf *d)
{
	for (size_t i = 0; i < d->nfiles; i++)
		free(d->files[i]);
	free(d->files);
	free(d->rows);
	free(d->funcs);
	free(d->inlines);
	free(d->inline_maxhi);
	free(d->calls);
	free(d->names);
	for (size_t i = 0; i < d->nunits; i++)
		free(d->units[i].ids);
	free(d->units);
	memset(d, 0, sizeof(*d));
}

int ptrec_dwarf_lookup_line(const struct ptrec_dwarf *d, uint64_t addr, const char **file,
                            unsigned *line)
{
	size_t lo = 0, hi = d->nrows;
	const struct ptrec_line_row *r;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -PTREC_ENOMAP;
	r = &d->rows[lo - 1];
	if (r->end)
		return -PTREC_ENOMAP;
	*file = r->file < d->nfiles ? d->files[r->file] : "??";
	*line = r->line;
	return 0;
}

const struct ptrec_dwarf_func *ptrec_dwarf_lookup_func(const struct ptrec_dwarf *d,
                                                       uint64_t addr)
{
	size_t lo = 0, hi = d->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->funcs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The nearest start at or below addr, then parents before it (bounded look-back). */
	for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
		const struct ptrec_dwarf_func *f = &d->funcs[k - 1];
		if (addr < f->hi)
			return f;
	}
	return NULL;
}

size_t ptrec_dwarf_lookup_inlines(const struct ptrec_dwarf *d, uint64_t addr,
                                  const struct ptrec_dwarf_inline **out, size_t max)
{
	size_t lo = 0, hi = d->ninlines, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->inlines[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back while some earlier range may still reach addr. */
	for (size_t k = lo; k > 0 && d->inline_maxhi[k - 1] > addr; k--) {
		const struct ptrec_dwarf_inline *in = &d->inlines[k - 1];
		size_t j;
		if (addr >= in->hi || !in->name)
			continue;
		/* Insert by depth, outermost first; one range per depth. */
		for (j = 0; j < n && out[j]->depth < in->depth; j++)
			;
		if (j < n && out[j]->depth == in->depth)
			continue;
		if (n == max) {
			if (j == n)
				continue;
			n--;
		}
		memmove(out + j + 1, out + j, (n - j) * sizeof(*out));
		out[j] = in;
		n++;
	}
	return n;
}

const char *ptrec_dwarf_call_file(const struct ptrec_dwarf *d, const struct ptrec_dwarf_inline *in)
{
	size_t lo = 0, hi = d->nunits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->units[mid].stmt_list < in->stmt_list)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nunits || d->units[lo].stmt_list != in->stmt_list ||
	    in->call_file >= d->units[lo].n || d->units[lo].ids[in->call_file] < 0 ||
	    (size_t)d->units[lo].ids[in->call_file] >= d->nfiles)
		return NULL;
	return d->files[d->units[lo].ids[in->call_file]];
}

size_t ptrec_dwarf_inline_chain(const struct ptrec_dwarf *d, uint64_t addr,
                                struct ptrec_inline_frame *out, size_t max)
{
	const struct ptrec_dwarf_inline *in[32];
	size_t n, w = 0;
	const char *file = NULL;
	unsigned line = 0;

	if (max < 2)
		return 0;
	n = ptrec_dwarf_lookup_inlines(d, addr, in, max - 1 < 32 ? max - 1 : 32);
	if (!n)
		return 0;
	if (ptrec_dwarf_lookup_line(d, addr, &file, &line) || !line)
		file = NULL;
	/* Innermost first: each frame is at the call site of the one inside it. */
	for (size_t k = n; k > 0; k--) {
		out[w].name = in[k - 1]->name;
		out[w].file = file;
		out[w].line = file ? line : 0;
		w++;
		file = ptrec_dwarf_call_file(d, in[k - 1]);
		line = in[k - 1]->call_line;
	}
	out[w].name = NULL;
	out[w].file = file;
	out[w].line = file ? line : 0;
	return w + 1;
}
