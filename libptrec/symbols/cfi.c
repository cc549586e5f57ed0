/* cfi.c — .eh_frame / .debug_frame parsing (CIE, FDE, pointer encodings, .eh_frame_hdr
 * search table) and the DW_CFA_* machine that computes the unwinding rules at one address. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/arch.h"
#include "ptrec.h"
#include "symbols/cfi.h"
#include "symbols/dwarf_reader.h"

/* Pointer encodings (DW_EH_PE_*, LSB "Exception Frames"). */
enum {
	PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02, PE_udata4 = 0x03, PE_udata8 = 0x04,
	PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b, PE_sdata8 = 0x0c,
	PE_pcrel = 0x10, PE_datarel = 0x30, PE_indirect = 0x80, PE_omit = 0xff,
};

#define REMEMBER_MAX 16     /* DW_CFA_remember_state nesting kept */
#define INDEX_MAX (1u << 22) /* FDEs indexed per section at most */

/* A parsed CIE: what its FDEs need. */
struct cie {
	uint64_t code_align;        /* code alignment factor */
	int64_t data_align;         /* data alignment factor */
	unsigned ra_reg;            /* return-address column */
	uint8_t fde_enc;            /* pointer encoding of FDE addresses ('R') */
	int has_z;                  /* 'z': FDEs have an augmentation length */
	int signal_frame;           /* 'S' */
	unsigned addr_size;         /* .debug_frame v4 address size (8 otherwise) */
	const uint8_t *insns;       /* initial instructions ... */
	const uint8_t *insns_end;   /* ... up to the end of the CIE */
};

/* The rules being built, and the CFA. */
struct state {
	int cfa_is_expr;
	uint8_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	size_t cfa_expr_len;
	struct ptrec_cfi_rule regs[PTREC_CFI_NREGS];
	int ra_signed;              /* aarch64 RA_SIGN_STATE */
};

void ptrec_cfi_init(struct ptrec_cfi *cfi, const uint8_t *data, size_t size, uint64_t vaddr,
                    int is_eh, const uint8_t *hdr, size_t hdr_size, uint64_t hdr_vaddr)
{
	memset(cfi, 0, sizeof(*cfi));
	cfi->data = data;
	cfi->size = data ? size : 0;
	cfi->vaddr = vaddr;
	cfi->is_eh = is_eh;
	if (is_eh && hdr && hdr_size >= 4) {
		cfi->hdr = hdr;
		cfi->hdr_size = hdr_size;
		cfi->hdr_vaddr = hdr_vaddr;
	}
}

void ptrec_cfi_free(struct ptrec_cfi *cfi)
{
	free(cfi->index);
	memset(cfi, 0, sizeof(*cfi));
}

/* Reads a pointer with encoding enc at c; field_vaddr is the link-time address of c->p (for
 * pcrel), data_base the base of datarel.  Returns 0, or -1 for an encoding we do not know. */
static int read_encoded(struct dw_cur *c, uint8_t enc, uint64_t field_vaddr, uint64_t data_base,
                        uint64_t *out)
{
	uint64_t v;

	if (enc == PE_omit) {
		*out = 0;
		return 0;
	}
	switch (enc & 0x0f) {
	case PE_absptr: case PE_udata8: case PE_sdata8: v = dw_u64(c); break;
	case PE_uleb128: v = dw_uleb(c); break;
	case PE_udata2: v = dw_u16(c); break;
	case PE_udata4: v = dw_u32(c); break;
	case PE_sleb128: v = (uint64_t)dw_sleb(c); break;
	case PE_sdata2: v = (uint64_t)(int64_t)(int16_t)dw_u16(c); break;
	case PE_sdata4: v = (uint64_t)(int64_t)(int32_t)dw_u32(c); break;
	default: return -1;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_pcrel: v += field_vaddr; break;
	case PE_datarel: v += data_base; break;
	default: return -1;   /* textrel, funcrel, aligned: not used on x86-64 */
	}
	*out = v;  /* PE_indirect: the address of the pointer; only personalities use it */
	return c->err ? -1 : 0;
}

/* Link-time address of the byte at p inside the section. */
static uint64_t sec_vaddr(const struct ptrec_cfi *cfi, const uint8_t *p)
{
	return cfi->vaddr + (uint64_t)(p - cfi->data);
}

/* Reads the entry header at off: *body = first byte after the length, *end = one past the
 * entry, *id = the CIE id / CIE pointer field, *id_pos = where it was.  Returns 1 for an entry,
 * 0 for the terminator or the end of the section, -1 if malformed. */
static int entry_at(const struct ptrec_cfi *cfi, uint64_t off, const uint8_t **end,
                    uint64_t *id, const uint8_t **id_pos, int *is64, struct dw_cur *c)
{
	uint64_t len;

	if (off >= cfi->size)
		return 0;
	c->p = cfi->data + off;
	c->end = cfi->data + cfi->size;
	c->err = 0;
	len = dw_initial_length(c, is64);
	if (c->err)
		return -1;
	if (len == 0)
		return 0;
	if (len > (uint64_t)(c->end - c->p))
		return -1;
	*end = c->p + len;
	c->end = *end;
	*id_pos = c->p;
	*id = *is64 ? dw_u64(c) : dw_u32(c);
	return c->err ? -1 : 1;
}

static int is_cie_id(const struct ptrec_cfi *cfi, uint64_t id, int is64)
{
	if (cfi->is_eh)
		return id == 0;
	return is64 ? id == UINT64_MAX : id == 0xffffffffu;
}

/* Parses the CIE at off. */
static int parse_cie(const struct ptrec_cfi *cfi, uint64_t off, struct cie *cie)
{
	struct dw_cur c;
	const uint8_t *end, *id_pos, *aug_end = NULL;
	uint64_t id;
	int is64, version;
	const char *aug;

	if (entry_at(cfi, off, &end, &id, &id_pos, &is64, &c) != 1 || !is_cie_id(cfi, id, is64))
		return -1;
	memset(cie, 0, sizeof(*cie));
	cie->addr_size = 8;
	version = dw_u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return -1;
	aug = dw_str(&c);
	if (!aug)
		return -1;
	if (version == 4) {
		cie->addr_size = dw_u8(&c);
		if (dw_u8(&c) != 0 || (cie->addr_size != 4 && cie->addr_size != 8))
			return -1;  /* segment selectors: not on x86-64 */
	}
	if (!strncmp(aug, "eh", 2)) {
		dw_skip(&c, 8);  /* old GCC: the address of the exception table */
		aug += 2;
	}
	cie->code_align = dw_uleb(&c);
	cie->data_align = dw_sleb(&c);
	cie->ra_reg = version == 1 ? dw_u8(&c) : (unsigned)dw_uleb(&c);
	cie->fde_enc = cfi->is_eh ? PE_absptr : (cie->addr_size == 4 ? PE_udata4 : PE_absptr);
	if (aug[0] == 'z') {
		uint64_t alen = dw_uleb(&c);
		if (c.err || alen > (uint64_t)(c.end - c.p))
			return -1;
		aug_end = c.p + alen;
		cie->has_z = 1;
		aug++;
	}
	for (; *aug && !c.err; aug++) {
		uint8_t enc;
		uint64_t dummy;
		switch (*aug) {
		case 'R':
			cie->fde_enc = dw_u8(&c);
			break;
		case 'P':
			enc = dw_u8(&c);
			if (read_encoded(&c, (uint8_t)(enc & ~PE_indirect), sec_vaddr(cfi, c.p), 0,
			                 &dummy))
				return -1;
			break;
		case 'L':
			dw_u8(&c);
			break;
		case 'S':
			cie->signal_frame = 1;
			break;
		case 'B':
			break;
		default:
			/* Unknown augmentation: fine only when 'z' tells where the data ends. */
			if (!aug_end)
				return -1;
			goto done;
		}
	}
done:
	if (aug_end) {
		if (c.p > aug_end)
			return -1;
		c.p = aug_end;
	}
	if (c.err || cie->code_align == 0)
		return -1;
	cie->insns = c.p;
	cie->insns_end = end;
	return 0;
}

/* Parses the FDE at off: its CIE, range and instructions. */
static int parse_fde(const struct ptrec_cfi *cfi, uint64_t off, struct cie *cie,
                     uint64_t *start, uint64_t *range, const uint8_t **insns,
                     const uint8_t **insns_end)
{
	struct dw_cur c;
	const uint8_t *end, *id_pos;
	uint64_t id, cie_off;
	int is64;

	if (entry_at(cfi, off, &end, &id, &id_pos, &is64, &c) != 1 || is_cie_id(cfi, id, is64))
		return -1;
	if (cfi->is_eh) {
		uint64_t pos = (uint64_t)(id_pos - cfi->data);
		if (id > pos)
			return -1;
		cie_off = pos - id;
	} else {
		cie_off = id;
	}
	if (cie_off == off || parse_cie(cfi, cie_off, cie))
		return -1;
	if (read_encoded(&c, cie->fde_enc, sec_vaddr(cfi, c.p), 0, start) ||
	    read_encoded(&c, (uint8_t)(cie->fde_enc & 0x0f), 0, 0, range))
		return -1;
	if (cie->has_z) {
		uint64_t alen = dw_uleb(&c);
		dw_skip(&c, alen);
	}
	if (c.err)
		return -1;
	*insns = c.p;
	*insns_end = end;
	return 0;
}

/* Reads the .eh_frame_hdr table header once. */
static void read_hdr(struct ptrec_cfi *cfi)
{
	struct dw_cur c = {cfi->hdr, cfi->hdr + cfi->hdr_size, 0};
	uint8_t version, ptr_enc, count_enc, table_enc;
	uint64_t ptr, count;

	version = dw_u8(&c);
	ptr_enc = dw_u8(&c);
	count_enc = dw_u8(&c);
	table_enc = dw_u8(&c);
	if (version != 1 || table_enc != (PE_datarel | PE_sdata4))
		return;
	if (read_encoded(&c, ptr_enc, cfi->hdr_vaddr + (uint64_t)(c.p - cfi->hdr), cfi->hdr_vaddr,
	                 &ptr) ||
	    read_encoded(&c, count_enc, cfi->hdr_vaddr + (uint64_t)(c.p - cfi->hdr),
	                 cfi->hdr_vaddr, &count))
		return;
	if (ptr != cfi->vaddr || count > (uint64_t)(c.end - c.p) / 8)
		return;
	cfi->table = c.p;
	cfi->table_count = (size_t)count;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct ptrec_cfi_fde *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Indexes every FDE of the section (one scan, then a sort). */
static int build_index(struct ptrec_cfi *cfi)
{
	uint64_t off = 0;
	size_t cap = 0;

	cfi->indexed = 1;
	for (;;) {
		struct dw_cur c;
		const uint8_t *end, *id_pos, *insns, *insns_end;
		uint64_t id, start, range;
		struct cie cie;
		int is64, rc = entry_at(cfi, off, &end, &id, &id_pos, &is64, &c);

		if (rc != 1)
			break;
		if (!is_cie_id(cfi, id, is64) &&
		    !parse_fde(cfi, off, &cie, &start, &range, &insns, &insns_end) && range &&
		    start + range > start) {
			if (cfi->nindex == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct ptrec_cfi_fde *n;
				if (ncap > INDEX_MAX)
					break;
				n = realloc(cfi->index, ncap * sizeof(*n));
				if (!n)
					return -PTREC_ENOMEM;
				cfi->index = n;
				cap = ncap;
			}
			cfi->index[cfi->nindex].start = start;
			cfi->index[cfi->nindex].end = start + range;
			cfi->index[cfi->nindex++].offset = off;
		}
		off = (uint64_t)(end - cfi->data);
	}
	if (cfi->nindex)
		qsort(cfi->index, cfi->nindex, sizeof(*cfi->index), fde_cmp);
	return 0;
}

/* Finds the offset of the FDE whose range may hold pc: -1 if none. */
static int find_fde(struct ptrec_cfi *cfi, uint64_t pc, uint64_t *off)
{
	size_t lo = 0, hi;

	if (cfi->hdr && !cfi->table && !cfi->indexed) {
		read_hdr(cfi);
		if (!cfi->table)
			cfi->hdr = NULL;
	}
	if (cfi->table) {
		hi = cfi->table_count;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int32_t loc;
			memcpy(&loc, cfi->table + mid * 8, 4);
			if (cfi->hdr_vaddr + (uint64_t)(int64_t)loc <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return -1;
		{
			int32_t fde;
			uint64_t at;
			memcpy(&fde, cfi->table + (lo - 1) * 8 + 4, 4);
			at = cfi->hdr_vaddr + (uint64_t)(int64_t)fde;
			if (at < cfi->vaddr || at - cfi->vaddr >= cfi->size)
				return -1;
			*off = at - cfi->vaddr;
			return 0;
		}
	}
	if (!cfi->indexed) {
		int rc = build_index(cfi);
		if (rc)
			return rc;
	}
	hi = cfi->nindex;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cfi->index[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges may nest or overlap in odd files: look back a little. */
	for (size_t k = lo; k > 0 && lo - k < 4; k--)
		if (pc < cfi->index[k - 1].end) {
			*off = cfi->index[k - 1].offset;
			return 0;
		}
	return -1;
}

/* v * factor, wrapping (offsets in malformed CFI may overflow; they then point nowhere). */
static int64_t scaled(uint64_t v, int64_t factor)
{
	return (int64_t)(v * (uint64_t)factor);
}

static void set_rule(struct state *st, uint64_t reg, uint8_t kind, int64_t off)
{
	if (reg >= PTREC_CFI_NREGS)
		return;  /* vector and other registers: not needed to unwind */
	memset(&st->regs[reg], 0, sizeof(st->regs[reg]));
	st->regs[reg].kind = kind;
	st->regs[reg].off = off;
}

/* Runs instructions [p, end) from location loc, stopping before the first row past pc.
 * init: the state after the CIE's initial instructions (for DW_CFA_restore), or NULL while
 * running them.  Returns 0 or -1 (malformed). */
static int run(const struct ptrec_cfi *cfi, const struct cie *cie, const uint8_t *p,
               const uint8_t *end, uint64_t loc, uint64_t pc, struct state *st,
               const struct state *init)
{
	struct dw_cur c = {p, end, 0};
	struct state saved[REMEMBER_MAX];
	unsigned nsaved = 0;

	while (c.p < c.end && !c.err) {
		uint8_t op = dw_u8(&c), low = op & 0x3f;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = low;
			goto advance;
		case 2: /* DW_CFA_offset */
			off = scaled(dw_uleb(&c), cie->data_align);
			set_rule(st, low, PTREC_CFI_OFFSET, off);
			continue;
		case 3: /* DW_CFA_restore */
			if (init && low < PTREC_CFI_NREGS)
				st->regs[low] = init->regs[low];
			continue;
		default:
			break;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc */
			uint64_t to;
			if (read_encoded(&c, cie->fde_enc, sec_vaddr(cfi, c.p), 0, &to))
				return -1;
			if (to > pc)
				return 0;
			loc = to;
			break;
		}
		case 0x02: delta = dw_u8(&c); goto advance;
		case 0x03: delta = dw_u16(&c); goto advance;
		case 0x04: delta = dw_u32(&c); goto advance;
		case 0x05: /* offset_extended */
			reg = dw_uleb(&c);
			set_rule(st, reg, PTREC_CFI_OFFSET, scaled(dw_uleb(&c), cie->data_align));
			break;
		case 0x06: /* restore_extended */
			reg = dw_uleb(&c);
			if (init && reg < PTREC_CFI_NREGS)
				st->regs[reg] = init->regs[reg];
			break;
		case 0x07: set_rule(st, dw_uleb(&c), PTREC_CFI_UNDEF, 0); break;
		case 0x08: set_rule(st, dw_uleb(&c), PTREC_CFI_SAME, 0); break;
		case 0x09: { /* register */
			uint64_t r2;
			reg = dw_uleb(&c);
			r2 = dw_uleb(&c);
			if (r2 >= PTREC_CFI_NREGS) {
				set_rule(st, reg, PTREC_CFI_UNDEF, 0);
				break;
			}
			set_rule(st, reg, PTREC_CFI_REGISTER, 0);
			if (reg < PTREC_CFI_NREGS)
				st->regs[reg].reg = (uint8_t)r2;
			break;
		}
		case 0x0a: /* remember_state */
			if (nsaved == REMEMBER_MAX)
				return -1;
			saved[nsaved++] = *st;
			break;
		case 0x0b: /* restore_state: the CFA rule comes back too (GCC's epilogues need it) */
			if (!nsaved)
				return -1;
			*st = saved[--nsaved];
			break;
		case 0x0c: /* def_cfa */
			reg = dw_uleb(&c);
			st->cfa_off = (int64_t)dw_uleb(&c);
			goto cfa_reg;
		case 0x12: /* def_cfa_sf */
			reg = dw_uleb(&c);
			st->cfa_off = scaled((uint64_t)dw_sleb(&c), cie->data_align);
			goto cfa_reg;
		case 0x0d: /* def_cfa_register */
			reg = dw_uleb(&c);
cfa_reg:
			if (reg >= PTREC_CFI_NREGS)
				return -1;
			st->cfa_reg = (uint8_t)reg;
			st->cfa_is_expr = 0;
			break;
		case 0x0e: st->cfa_off = (int64_t)dw_uleb(&c); break;
		case 0x13: st->cfa_off = scaled((uint64_t)dw_sleb(&c), cie->data_align); break;
		case 0x0f: { /* def_cfa_expression */
			uint64_t n = dw_uleb(&c);
			st->cfa_expr = c.p;
			st->cfa_expr_len = (size_t)n;
			dw_skip(&c, n);
			st->cfa_is_expr = 1;
			break;
		}
		case 0x10: /* expression */
		case 0x16: { /* val_expression */
			uint64_t n;
			reg = dw_uleb(&c);
			n = dw_uleb(&c);
			set_rule(st, reg, op == 0x10 ? PTREC_CFI_EXPR : PTREC_CFI_VAL_EXPR, 0);
			if (reg < PTREC_CFI_NREGS) {
				st->regs[reg].expr = c.p;
				st->regs[reg].expr_len = (size_t)n;
			}
			dw_skip(&c, n);
			break;
		}
		case 0x11: /* offset_extended_sf */
			reg = dw_uleb(&c);
			off = scaled((uint64_t)dw_sleb(&c), cie->data_align);
			set_rule(st, reg, PTREC_CFI_OFFSET, off);
			break;
		case 0x14: /* val_offset */
			reg = dw_uleb(&c);
			set_rule(st, reg, PTREC_CFI_VAL_OFFSET, scaled(dw_uleb(&c), cie->data_align));
			break;
		case 0x15: /* val_offset_sf */
			reg = dw_uleb(&c);
			off = scaled((uint64_t)dw_sleb(&c), cie->data_align);
			set_rule(st, reg, PTREC_CFI_VAL_OFFSET, off);
			break;
		case 0x2e: /* GNU_args_size */
			dw_uleb(&c);
			break;
		case 0x2c: /* AARCH64_negate_ra_state_with_pc (PAuth_LR: signed with the pc too) */
		case 0x2d: /* AARCH64_negate_ra_state (SPARC's GNU_window_save elsewhere) */
			if (cfi->machine != PTREC_EM_AARCH64)
				return -1;
			st->ra_signed = !st->ra_signed;
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = dw_uleb(&c);
			set_rule(st, reg, PTREC_CFI_OFFSET, scaled(0 - dw_uleb(&c), cie->data_align));
			break;
		default:
			return -1;
		}
		continue;
advance:
		if (!init)
			return -1;  /* no rows in a CIE's initial instructions */
		if (delta * cie->code_align / cie->code_align != delta)
			return -1;
		if (loc + delta * cie->code_align > pc || loc + delta * cie->code_align < loc)
			return 0;
		loc += delta * cie->code_align;
	}
	return c.err ? -1 : 0;
}

int ptrec_cfi_find(struct ptrec_cfi *cfi, uint64_t pc, struct ptrec_cfi_row *row)
{
	const uint8_t *insns, *insns_end;
	uint64_t off, start, range;
	struct state init, st;
	struct cie cie;
	int rc;

	if (!cfi->size)
		return -PTREC_ENOMAP;
	rc = find_fde(cfi, pc, &off);
	if (rc)
		return rc == -PTREC_ENOMEM ? rc : -PTREC_ENOMAP;
	if (parse_fde(cfi, off, &cie, &start, &range, &insns, &insns_end))
		return -PTREC_EFORMAT;
	if (pc < start || pc - start >= range)
		return -PTREC_ENOMAP;
	memset(&init, 0, sizeof(init));
	if (run(cfi, &cie, cie.insns, cie.insns_end, start, pc, &init, NULL))
		return -PTREC_EFORMAT;
	st = init;
	if (run(cfi, &cie, insns, insns_end, start, pc, &st, &init))
		return -PTREC_EFORMAT;
	memset(row, 0, sizeof(*row));
	row->fde_start = start;
	row->fde_end = start + range;
	row->cfa_is_expr = st.cfa_is_expr;
	row->cfa_reg = st.cfa_reg;
	row->cfa_off = st.cfa_off;
	row->cfa_expr = st.cfa_expr;
	row->cfa_expr_len = st.cfa_expr_len;
	memcpy(row->regs, st.regs, sizeof(row->regs));
	row->ra_reg = cie.ra_reg;
	row->ra_signed = st.ra_signed;
	row->signal_frame = cie.signal_frame;
	/* x86-64's return-address column is 16, aarch64's x30 */
	if (cie.ra_reg >= (cfi->machine == PTREC_EM_AARCH64 ? PTREC_CFI_NREGS : PTREC_CFI_RA + 1u))
		return -PTREC_EFORMAT;
	return 0;
}

#define EVAL_STACK 64
#define EVAL_STEPS 1000

int ptrec_cfi_eval(const uint8_t *expr, size_t len, const uint64_t regs[PTREC_CFI_NREGS],
                   const uint8_t valid[PTREC_CFI_NREGS], int push_first, uint64_t initial,
                   ptrec_cfi_read_fn read, void *ctx, uint64_t *out)
{
	uint64_t st[EVAL_STACK];
	size_t sp = 0;
	struct dw_cur c = {expr, expr + len, 0};
	unsigned steps = 0;

#define PUSH(v) do { uint64_t v_ = (v); if (sp == EVAL_STACK) return -1; st[sp++] = v_; } while (0)
#define NEED(n) do { if (sp < (n)) return -1; } while (0)
	if (push_first)
		PUSH(initial);
	while (c.p < c.end) {
		uint8_t op = dw_u8(&c);
		uint64_t a, b, reg;
		int64_t sa;

		if (++steps > EVAL_STEPS || c.err)
			return -1;
		if (op >= 0x30 && op <= 0x4f) { /* lit0..lit31 */
			PUSH((uint64_t)(op - 0x30));
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) { /* breg0..breg31 */
			reg = op - 0x70;
			sa = dw_sleb(&c);
			goto breg;
		}
		switch (op) {
		case 0x03: PUSH(dw_u64(&c)); break;                    /* addr */
		case 0x08: PUSH(dw_u8(&c)); break;                     /* const1u */
		case 0x09: PUSH((uint64_t)(int64_t)(int8_t)dw_u8(&c)); break;
		case 0x0a: PUSH(dw_u16(&c)); break;
		case 0x0b: PUSH((uint64_t)(int64_t)(int16_t)dw_u16(&c)); break;
		case 0x0c: PUSH(dw_u32(&c)); break;
		case 0x0d: PUSH((uint64_t)(int64_t)(int32_t)dw_u32(&c)); break;
		case 0x0e: case 0x0f: PUSH(dw_u64(&c)); break;
		case 0x10: PUSH(dw_uleb(&c)); break;                   /* constu */
		case 0x11: PUSH((uint64_t)dw_sleb(&c)); break;         /* consts */
		case 0x12: NEED(1); PUSH(st[sp - 1]); break;           /* dup */
		case 0x13: NEED(1); sp--; break;                       /* drop */
		case 0x14: NEED(2); PUSH(st[sp - 2]); break;           /* over */
		case 0x15: a = dw_u8(&c); NEED(a + 1); PUSH(st[sp - 1 - a]); break; /* pick */
		case 0x16: NEED(2); a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a; break;
		case 0x17: NEED(3); /* rot: top three a b c -> c a b */
			a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = st[sp - 3]; st[sp - 3] = a;
			break;
		case 0x19: NEED(1); if ((int64_t)st[sp - 1] < 0) st[sp - 1] = -st[sp - 1]; break;
		case 0x1f: NEED(1); st[sp - 1] = -st[sp - 1]; break;   /* neg */
		case 0x20: NEED(1); st[sp - 1] = ~st[sp - 1]; break;   /* not */
		case 0x23: NEED(1); st[sp - 1] += dw_uleb(&c); break;  /* plus_uconst */
		case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e: case 0x21: case 0x22:
		case 0x24: case 0x25: case 0x26: case 0x27: case 0x29: case 0x2a: case 0x2b:
		case 0x2c: case 0x2d: case 0x2e:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (op) {
			case 0x1a: a &= b; break;
			case 0x1b: /* div (signed) */
				if (!b || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
					return -1;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case 0x1c: a -= b; break;
			case 0x1d: if (!b) return -1; a %= b; break;
			case 0x1e: a *= b; break;
			case 0x21: a |= b; break;
			case 0x22: a += b; break;
			case 0x24: a = b >= 64 ? 0 : a << b; break;
			case 0x25: a = b >= 64 ? 0 : a >> b; break;
			case 0x26: a = (uint64_t)((int64_t)a >> (b >= 64 ? 63 : b)); break;
			case 0x27: a ^= b; break;
			case 0x29: a = a == b; break;
			case 0x2a: a = (int64_t)a >= (int64_t)b; break;
			case 0x2b: a = (int64_t)a > (int64_t)b; break;
			case 0x2c: a = (int64_t)a <= (int64_t)b; break;
			case 0x2d: a = (int64_t)a < (int64_t)b; break;
			case 0x2e: a = a != b; break;
			}
			st[sp - 1] = a;
			break;
		case 0x28: /* bra */
		case 0x2f: { /* skip */
			int16_t d = (int16_t)dw_u16(&c);
			if (op == 0x28) {
				NEED(1);
				if (!st[--sp])
					break;
			}
			if (d < 0 ? (size_t)(c.p - expr) < (size_t)-d : (size_t)(c.end - c.p) < (size_t)d)
				return -1;
			c.p += d;
			break;
		}
		case 0x92: /* bregx */
			reg = dw_uleb(&c);
			sa = dw_sleb(&c);
breg:
			if (reg >= PTREC_CFI_NREGS || !valid[reg])
				return -1;
			PUSH(regs[reg] + (uint64_t)sa);
			break;
		case 0x06: /* deref */
		case 0x94: { /* deref_size */
			unsigned n = op == 0x06 ? 8 : dw_u8(&c);
			uint64_t v = 0;
			NEED(1);
			if (!n || n > 8 || !read || read(ctx, st[sp - 1], &v, n))
				return -1;
			st[sp - 1] = v;
			break;
		}
		case 0x96: break; /* nop */
		default:
			return -1;
		}
	}
#undef PUSH
#undef NEED
	if (c.err || !sp)
		return -1;
	*out = st[sp - 1];
	return 0;
}
