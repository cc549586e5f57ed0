/* dwarf_reader.h — a bounds-checked byte cursor for the DWARF readers (dwarf_line.c,
 * dwarf_info.c).  Reading past the end sets err and yields zeros; callers check err. */
#ifndef PTREC_DWARF_READER_H
#define PTREC_DWARF_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A cursor over [p, end). */
struct dw_cur {
	const uint8_t *p;   /* next byte */
	const uint8_t *end; /* one past the last byte */
	int err;            /* 1 once a read went past end or a value overflowed */
};

static inline int dw_need(struct dw_cur *c, size_t n)
{
	if (c->err || (size_t)(c->end - c->p) < n) {
		c->err = 1;
		c->p = c->end;
		return 0;
	}
	return 1;
}

static inline uint64_t dw_fixed(struct dw_cur *c, size_t n)
{
	uint64_t v = 0;
	if (!dw_need(c, n))
		return 0;
	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static inline uint8_t dw_u8(struct dw_cur *c) { return (uint8_t)dw_fixed(c, 1); }
static inline uint16_t dw_u16(struct dw_cur *c) { return (uint16_t)dw_fixed(c, 2); }
static inline uint32_t dw_u32(struct dw_cur *c) { return (uint32_t)dw_fixed(c, 4); }
static inline uint64_t dw_u64(struct dw_cur *c) { return dw_fixed(c, 8); }

static inline void dw_skip(struct dw_cur *c, uint64_t n)
{
	if (c->err || (uint64_t)(c->end - c->p) < n) {
		c->err = 1;
		c->p = c->end;
		return;
	}
	c->p += n;
}

static inline uint64_t dw_uleb(struct dw_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		uint8_t b;
		if (!dw_need(c, 1))
			return 0;
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
		if (shift > 70) {
			c->err = 1;
			return 0;
		}
	}
}

static inline int64_t dw_sleb(struct dw_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (!dw_need(c, 1))
			return 0;
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (shift > 70 && (b & 0x80)) {
			c->err = 1;
			return 0;
		}
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* Reads a NUL-terminated string; NULL (and err) if it is not terminated before end. */
static inline const char *dw_str(struct dw_cur *c)
{
	const uint8_t *z;
	const char *s;
	if (c->err)
		return NULL;
	z = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!z) {
		c->err = 1;
		c->p = c->end;
		return NULL;
	}
	s = (const char *)c->p;
	c->p = z + 1;
	return s;
}

/* Returns the NUL-terminated string at off in a string section, or NULL. */
static inline const char *dw_section_str(const uint8_t *sec, size_t len, uint64_t off)
{
	if (!sec || off >= len || !memchr(sec + off, 0, (size_t)(len - off)))
		return NULL;
	return (const char *)sec + off;
}

/* Reads an initial length: sets *is64 for 64-bit DWARF.  Returns the unit length. */
static inline uint64_t dw_initial_length(struct dw_cur *c, int *is64)
{
	uint64_t len = dw_u32(c);
	*is64 = 0;
	if (len == 0xffffffffu) {
		*is64 = 1;
		len = dw_u64(c);
	} else if (len >= 0xfffffff0u) {
		c->err = 1;
	}
	return len;
}

/* DWARF forms this reader understands (DWARF 2-5 and the GNU extensions seen in practice). */
enum {
	DW_FORM_addr = 0x01, DW_FORM_block2 = 0x03, DW_FORM_block4 = 0x04, DW_FORM_data2 = 0x05,
	DW_FORM_data4 = 0x06, DW_FORM_data8 = 0x07, DW_FORM_string = 0x08, DW_FORM_block = 0x09,
	DW_FORM_block1 = 0x0a, DW_FORM_data1 = 0x0b, DW_FORM_flag = 0x0c, DW_FORM_sdata = 0x0d,
	DW_FORM_strp = 0x0e, DW_FORM_udata = 0x0f, DW_FORM_ref_addr = 0x10, DW_FORM_ref1 = 0x11,
	DW_FORM_ref2 = 0x12, DW_FORM_ref4 = 0x13, DW_FORM_ref8 = 0x14, DW_FORM_ref_udata = 0x15,
	DW_FORM_indirect = 0x16, DW_FORM_sec_offset = 0x17, DW_FORM_exprloc = 0x18,
	DW_FORM_flag_present = 0x19, DW_FORM_strx = 0x1a, DW_FORM_addrx = 0x1b,
	DW_FORM_ref_sup4 = 0x1c, DW_FORM_strp_sup = 0x1d, DW_FORM_data16 = 0x1e,
	DW_FORM_line_strp = 0x1f, DW_FORM_ref_sig8 = 0x20, DW_FORM_implicit_const = 0x21,
	DW_FORM_loclistx = 0x22, DW_FORM_rnglistx = 0x23, DW_FORM_ref_sup8 = 0x24,
	DW_FORM_strx1 = 0x25, DW_FORM_strx2 = 0x26, DW_FORM_strx3 = 0x27, DW_FORM_strx4 = 0x28,
	DW_FORM_addrx1 = 0x29, DW_FORM_addrx2 = 0x2a, DW_FORM_addrx3 = 0x2b, DW_FORM_addrx4 = 0x2c,
	DW_FORM_GNU_addr_index = 0x1f01, DW_FORM_GNU_str_index = 0x1f02,
	DW_FORM_GNU_ref_alt = 0x1f20, DW_FORM_GNU_strp_alt = 0x1f21,
};

/* A form's value: numbers, offsets and indexes in val; inline strings in str. */
struct dw_value {
	uint64_t val;       /* constant, offset, address or index */
	const char *str;    /* DW_FORM_string contents, else NULL */
	unsigned form;      /* the (resolved, for DW_FORM_indirect) form */
};

/* Reads one attribute value of form (implicit_const takes implicit).  version and addr_size
 * describe the unit, is64 its offset size.  Returns 0, or -1 for an unknown form or a read
 * past the end (the cursor's err is set then too). */
static inline int dw_read_form(struct dw_cur *c, unsigned form, unsigned version,
                               unsigned addr_size, int is64, int64_t implicit,
                               struct dw_value *v)
{
	unsigned osz = is64 ? 8 : 4;
	int depth = 0;

again:
	v->val = 0;
	v->str = NULL;
	v->form = form;
	switch (form) {
	case DW_FORM_addr: v->val = dw_fixed(c, addr_size); break;
	case DW_FORM_block2: dw_skip(c, dw_u16(c)); break;
	case DW_FORM_block4: dw_skip(c, dw_u32(c)); break;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		v->val = dw_u16(c); break;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_ref_sup4: case DW_FORM_strx4:
	case DW_FORM_addrx4:
		v->val = dw_u32(c); break;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		v->val = dw_u64(c); break;
	case DW_FORM_data16: dw_skip(c, 16); break;
	case DW_FORM_string: v->str = dw_str(c); break;
	case DW_FORM_block: case DW_FORM_exprloc: dw_skip(c, dw_uleb(c)); break;
	case DW_FORM_block1: dw_skip(c, dw_u8(c)); break;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		v->val = dw_u8(c); break;
	case DW_FORM_strx3: case DW_FORM_addrx3: v->val = dw_fixed(c, 3); break;
	case DW_FORM_sdata: v->val = (uint64_t)dw_sleb(c); break;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		v->val = dw_uleb(c); break;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
	case DW_FORM_strp_sup: case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
		v->val = dw_fixed(c, osz); break;
	case DW_FORM_ref_addr: v->val = dw_fixed(c, version <= 2 ? addr_size : osz); break;
	case DW_FORM_flag_present: v->val = 1; break;
	case DW_FORM_implicit_const: v->val = (uint64_t)implicit; break;
	case DW_FORM_indirect:
		form = (unsigned)dw_uleb(c);
		if (c->err || ++depth > 4)
			return -1;
		goto again;
	default:
		c->err = 1;
		return -1;
	}
	return c->err ? -1 : 0;
}

#endif
