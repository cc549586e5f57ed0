/* symbolize.c — modules from the dump's MAPS, lazy ELF/DWARF loading, address lookups and
 * C++ demangling through a run-time lookup of __cxa_demangle. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/debug_file.h"
#include "ptrec.h"
#include "symbols/symbolize.h"

struct demangle_entry {
	const char *key;  /* mangled name (pointer identity) */
	char *val;        /* demangled, or NULL if demangling failed */
};

/* Recent lookups: reports ask for the same addresses again and again. */
#define RECENT_SLOTS 4096
struct symbol_cache_entry {
	uint64_t key;              /* address, low bit folded with return_address */
	int used;                  /* slot holds a result */
	int return_address;
	struct ptrec_symbol sym;   /* the result */
};

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn find_demangler(void)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!f) {
		/* Not linked in: load the C++ runtime if this machine has one (no link dependency). */
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			f = dlsym(h, "__cxa_demangle");
	}
	demangle_fn fn;
	memcpy(&fn, &f, sizeof(fn));
	return fn;
}

static int range_cmp(const void *a, const void *b)
{
	const struct ptrec_module_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int ptrec_symbolizer_init(struct ptrec_symbolizer *s, const struct ptrec_dump *dump,
                          const char *const *debug_dirs, struct ptrec_warnings *w)
{
	memset(s, 0, sizeof(*s));
	s->dump = dump;
	s->debug_dirs = debug_dirs;
	s->w = w;
	s->demangle = find_demangler();
	if (!dump->nmaps) {
		ptrec_warn(w, "the dump has no MAPS record: addresses are shown without symbols");
		return 0;
	}
	s->mods = calloc(dump->nmaps, sizeof(*s->mods));
	s->ranges = calloc(dump->nmaps, sizeof(*s->ranges));
	if (!s->mods || !s->ranges)
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < dump->nmaps; i++) {
		const struct ptrec_dump_map *m = &dump->maps[i];
		struct ptrec_module *mod = NULL;
		size_t k;

		if (!m->path[0] || (m->path[0] == '[' && strcmp(m->path, "[vdso]")))
			continue;
		for (k = 0; k < s->nmods; k++)
			if (!strcmp(s->mods[k].path, m->path)) {
				mod = &s->mods[k];
				break;
			}
		int exec = m->perms[2] == 'x';
		if (!mod) {
			mod = &s->mods[s->nmods++];
			mod->path = strdup(m->path);
			if (!mod->path)
				return -PTREC_ENOMEM;
			mod->name = base_name(mod->path);
			mod->start = m->start;
			mod->end = m->end;
			mod->map_start = m->start;
			mod->map_offset = m->offset;
			mod->map_exec = exec;
		}
		if (m->start < mod->start)
			mod->start = m->start;
		if (m->end > mod->end)
			mod->end = m->end;
		/* The bias comes from the code the loader mapped: a file may also be mapped whole
		 * for reading (Ruby's crash handler maps its own library to read its symbols), at
		 * offset 0 below the loaded one. */
		if ((exec && !mod->map_exec) ||
		    (exec == mod->map_exec && m->offset < mod->map_offset)) {
			mod->map_start = m->start;
			mod->map_offset = m->offset;
			mod->map_exec = exec;
		}
		s->ranges[s->nranges++] = (struct ptrec_module_range){m->start, m->end, k};
	}
	if (s->nranges)
		qsort(s->ranges, s->nranges, sizeof(*s->ranges), range_cmp);
	for (size_t k = 0; k < s->nmods; k++) {
		struct ptrec_module *mod = &s->mods[k];
		for (size_t b = 0; b < dump->nbuildids; b++) {
			const struct ptrec_dump_buildid_rec *r = &dump->buildids[b];
			if (r->start == mod->start || !strcmp(r->path, mod->path)) {
				mod->dump_id = r->id;
				mod->dump_id_len = r->id_len;
				break;
			}
		}
		for (size_t i = 0; i < dump->nmemory; i++) {
			const struct ptrec_dump_memory_rec *r = &dump->memory[i];
			if (r->hdr.vaddr == mod->start &&
			    (r->hdr.kind == PTREC_MEM_VDSO || !strcmp(mod->path, "[vdso]"))) {
				mod->image = r;
				break;
			}
		}
	}
	return 0;
}

void ptrec_symbolizer_free(struct ptrec_symbolizer *s)
{
	for (size_t i = 0; i < s->nmods; i++) {
		struct ptrec_module *m = &s->mods[i];
		ptrec_dwarf_free(&m->dwarf);
		ptrec_cfi_free(&m->eh_frame);
		ptrec_cfi_free(&m->debug_frame);
		if (m->has_dbg)
			ptrec_elf_close(&m->dbg);
		if (m->has_elf)
			ptrec_elf_close(&m->elf);
		free(m->path);
	}
	free(s->mods);
	free(s->ranges);
	for (size_t i = 0; i < s->cache_cap; i++)
		free(s->cache[i].val);
	free(s->cache);
	free(s->recent);
	memset(s, 0, sizeof(*s));
}

static void hex_id(const uint8_t *id, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	out[0] = 0;
	for (size_t i = 0; i < len && o + 3 <= outlen; i++, o += 2)
		snprintf(out + o, 3, "%02x", id[i]);
}

/* Computes the load bias from the mapping with the lowest file offset. */
static void compute_bias(struct ptrec_module *m)
{
	const struct ptrec_elf *e = &m->elf;
	uint64_t best = UINT64_MAX;

	for (size_t i = 0; i < e->nloads; i++)
		if ((e->loads[i].offset & ~0xfffull) == m->map_offset &&
		    (e->loads[i].vaddr & ~0xfffull) < best)
			best = e->loads[i].vaddr & ~0xfffull;
	if (best == UINT64_MAX)
		best = m->map_offset == 0 ? ptrec_elf_base_vaddr(e) : m->map_offset;
	m->bias = m->map_start - best;
}

static int has_debug_section(const struct ptrec_elf *e, const char *name)
{
	const struct ptrec_elf_section *sec = ptrec_elf_find_section(e, name);
	char zname[64];
	if (!sec && snprintf(zname, sizeof(zname), ".z%s", name + 1) > 0)
		sec = ptrec_elf_find_section(e, zname);  /* legacy .zdebug_* */
	return sec && sec->type != 8 /* SHT_NOBITS */;
}

/* Opens a replacement for m's file into m->elf: a --binary with the dump's build-id, else the
 * debuginfod cache's executable.  Returns 1 if one was found. */
static int replace_file(struct ptrec_symbolizer *s, struct ptrec_module *m)
{
	if (!m->dump_id)
		return 0; /* nothing to check a replacement against */
	for (size_t i = 0; s->binaries && s->binaries[i]; i++) {
		struct ptrec_warnings quiet = {0};
		int rc = ptrec_elf_open_file(s->binaries[i], &m->elf, &quiet);
		ptrec_warnings_free(&quiet);
		if (rc)
			continue;
		if (m->elf.build_id_len == m->dump_id_len &&
		    !memcmp(m->elf.build_id, m->dump_id, m->dump_id_len)) {
			ptrec_warn(s->w, "%s: using %s instead (--binary; its build-id is the dump's)",
			           m->path, s->binaries[i]);
			return 1;
		}
		ptrec_elf_close(&m->elf);
	}
	if (!ptrec_debug_cache_open(s->debuginfod_cache, m->dump_id, m->dump_id_len, "executable", &m->elf,
	                            s->w)) {
		ptrec_warn(s->w, "%s: using %s instead (the debuginfod cache; its build-id is the "
		           "dump's)", m->path, m->elf.path);
		return 1;
	}
	return 0;
}

static void load_module(struct ptrec_symbolizer *s, struct ptrec_module *m)
{
	const char *path = m->path;
	char buf[4096];
	int rc;

	m->state = -1;
	if (m->image) {
		rc = ptrec_elf_open_mem(m->image->bytes, (size_t)m->image->hdr.size, m->path, &m->elf,
		                        s->w);
		if (rc) {
			ptrec_warn(s->w, "%s: the dump's copy is not a valid ELF (%s); addresses shown "
			           "as module+offset", m->path, ptrec_strerror(rc));
			return;
		}
	} else {
		size_t n = strlen(path);
		if (n > 10 && !strcmp(path + n - 10, " (deleted)")) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(n - 10), path);
			ptrec_warn(s->w, "%s: the file was deleted after it was mapped; reading %s if "
			           "it exists", path, buf);
			path = buf;
		}
		rc = ptrec_elf_open_file(path, &m->elf, s->w);
		if (rc) {
			int err = errno;
			if (!replace_file(s, m)) {
				ptrec_warn(s->w, "%s: %s (%s); addresses shown as module+offset", path,
				           rc == -PTREC_EIO ? "cannot read the file"
				                            : "not a valid x86-64 or aarch64 ELF",
				           rc == -PTREC_EIO ? strerror(err) : ptrec_strerror(rc));
				m->lacks = PTREC_MODULE_NO_FILE;
				return;
			}
		} else if (m->dump_id && (m->elf.build_id_len != m->dump_id_len ||
		                          memcmp(m->elf.build_id, m->dump_id, m->dump_id_len))) {
			char want[129], got[129];
			hex_id(m->dump_id, m->dump_id_len, want, sizeof(want));
			hex_id(m->elf.build_id, m->elf.build_id_len, got, sizeof(got));
			ptrec_warn(s->w, "%s: build-id mismatch: the dump has %s, the file on disk has "
			           "%s; its symbols are NOT used", path, want, got[0] ? got : "none");
			compute_bias(m);
			ptrec_elf_close(&m->elf);
			if (!replace_file(s, m)) {
				ptrec_warn(s->w, "%s: addresses shown as module+offset (--binary names a "
				           "file with the dump's build-id)", path);
				m->lacks = PTREC_MODULE_NO_FILE;
				return;
			}
		}
		if (strcmp(m->elf.path, path))
			path = m->elf.path; /* a replacement: its debuglink is looked for beside it */
	}
	m->has_elf = 1;
	compute_bias(m);
	if (!m->image && (!m->elf.has_symtab || !has_debug_section(&m->elf, ".debug_line"))) {
		if (!ptrec_debug_file_open(&m->elf, path, s->debug_dirs, &m->dbg, s->w) ||
		    !ptrec_debug_cache_open(s->debuginfod_cache, m->elf.build_id, m->elf.build_id_len,
		                            "debuginfo", &m->dbg, s->w))
			m->has_dbg = 1;
		else
			m->lacks |= PTREC_MODULE_NO_DEBUG;
	}
	if (m->has_dbg && (has_debug_section(&m->dbg, ".debug_line") ||
	                   has_debug_section(&m->dbg, ".debug_info")))
		rc = ptrec_dwarf_load(&m->dwarf, &m->dbg, s->w);
	else
		rc = ptrec_dwarf_load(&m->dwarf, &m->elf, s->w);
	if (rc)
		ptrec_warn(s->w, "%s: debug information not loaded: %s", path, ptrec_strerror(rc));
	m->state = 1;
}

struct ptrec_module *ptrec_symbolizer_module(struct ptrec_symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nranges;
	const struct ptrec_module_range *r;
	struct ptrec_module *m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	r = &s->ranges[lo - 1];
	if (addr >= r->end)
		return NULL;
	m = &s->mods[r->module];
	if (m->state == 0)
		load_module(s, m);
	return m;
}

size_t ptrec_symbolizer_tail_calls(struct ptrec_symbolizer *s, uint64_t callee_pc, int callee_ret,
                                   uint64_t caller_ret, uint64_t *out, size_t max)
{
	struct ptrec_module *a = ptrec_symbolizer_module(s, caller_ret);
	struct ptrec_module *b = ptrec_symbolizer_module(s, callee_pc);
	if (!a || !b || a->state != 1 || b->state != 1)
		return 0;
	const struct ptrec_dwarf_call *c = ptrec_dwarf_call_at(&a->dwarf, caller_ret - a->bias);
	const struct ptrec_dwarf_func *f =
		ptrec_dwarf_lookup_func(&b->dwarf, callee_pc - (callee_ret ? 1 : 0) - b->bias);
	if (!c || !f)
		return 0;
	/* the function the caller called, in the callee's file: by entry in the same file, else
	 * by name (a call into a shared library) */
	uint64_t from = c->target && a == b ? c->target
	              : c->name ? ptrec_dwarf_entry_by_name(&b->dwarf, c->name) : 0;
	size_t n = ptrec_dwarf_tail_chain(&b->dwarf, from, f->entry, out, max);
	for (size_t i = 0; i < n; i++)
		out[i] += b->bias;
	return n;
}

static size_t ptr_hash(const void *p)
{
	uint64_t v = (uint64_t)(uintptr_t)p;
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v;
}

/* Returns the demangled form of name (cached), or name itself. */
static const char *demangled(struct ptrec_symbolizer *s, const char *name)
{
	size_t i;

	if (!s->demangle || name[0] != '_' || name[1] != 'Z')
		return name;
	if (s->cache_used * 2 >= s->cache_cap) {
		size_t ncap = s->cache_cap ? s->cache_cap * 2 : 256;
		struct demangle_entry *n = calloc(ncap, sizeof(*n));
		if (!n)
			return name;
		for (size_t k = 0; k < s->cache_cap; k++) {
			if (!s->cache[k].key)
				continue;
			for (i = ptr_hash(s->cache[k].key) & (ncap - 1); n[i].key; i = (i + 1) & (ncap - 1))
				;
			n[i] = s->cache[k];
		}
		free(s->cache);
		s->cache = n;
		s->cache_cap = ncap;
	}
	for (i = ptr_hash(name) & (s->cache_cap - 1); s->cache[i].key; i = (i + 1) & (s->cache_cap - 1))
		if (s->cache[i].key == name)
			return s->cache[i].val ? s->cache[i].val : name;
	{
		int status = -1;
		char *d = s->demangle(name, NULL, NULL, &status);
		if (status != 0) {
			free(d);
			d = NULL;
		}
		s->cache[i].key = name;
		s->cache[i].val = d;
		s->cache_used++;
		return d ? d : name;
	}
}

static void symbolize_uncached(struct ptrec_symbolizer *s, uint64_t addr, int return_address,
                               struct ptrec_symbol *out);

void ptrec_symbolize(struct ptrec_symbolizer *s, uint64_t addr, int return_address,
                     struct ptrec_symbol *out)
{
	struct symbol_cache_entry *e;

	if (!s->recent)
		s->recent = calloc(RECENT_SLOTS, sizeof(*s->recent));
	if (!s->recent) {
		symbolize_uncached(s, addr, return_address, out);
		return;
	}
	e = &s->recent[(ptr_hash((const void *)(uintptr_t)addr) + (size_t)!!return_address) &
	               (RECENT_SLOTS - 1)];
	if (e->used && e->key == addr && e->return_address == !!return_address) {
		*out = e->sym;
		return;
	}
	symbolize_uncached(s, addr, return_address, out);
	e->used = 1;
	e->key = addr;
	e->return_address = !!return_address;
	e->sym = *out;
}

static void symbolize_uncached(struct ptrec_symbolizer *s, uint64_t addr, int return_address,
                               struct ptrec_symbol *out)
{
	struct ptrec_module *m;
	uint64_t look, link;
	const struct ptrec_elf_sym *sym = NULL;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	look = return_address && addr ? addr - 1 : addr;
	m = ptrec_symbolizer_module(s, look);
	if (!m)
		return;
	out->module = m;
	if (m->state != 1) {
		out->module_offset = m->has_elf || m->bias ? addr - m->bias : addr - m->start;
		return;
	}
	out->module_offset = addr - m->bias;
	link = look - m->bias;
	if (m->has_dbg && m->dbg.has_symtab)
		sym = ptrec_elf_lookup(&m->dbg, link);
	if (!sym)
		sym = ptrec_elf_lookup(&m->elf, link);
	if (sym) {
		out->name = demangled(s, sym->name);
		out->offset = link - sym->addr + (look != addr);
	} else {
		const struct ptrec_dwarf_func *f = ptrec_dwarf_lookup_func(&m->dwarf, link);
		if (f) {
			out->name = demangled(s, f->name);
			out->offset = link - f->lo + (look != addr);
		}
	}
	{
		const char *file;
		unsigned line;
		if (!ptrec_dwarf_lookup_line(&m->dwarf, link, &file, &line) && line) {
			out->file = file;
			out->line = line;
		}
	}
}

/* Points cfi at section name of e (with hdr, for .eh_frame). */
static void cfi_section(struct ptrec_cfi *cfi, const struct ptrec_elf *e, const char *name,
                        int is_eh)
{
	const struct ptrec_elf_section *sec = ptrec_elf_find_section(e, name), *hs;
	const uint8_t *p, *hp = NULL;
	size_t len, hlen = 0;
	uint64_t haddr = 0;

	if (!sec || ptrec_elf_section_bytes(e, sec, &p, &len))
		return;
	if (is_eh && (hs = ptrec_elf_find_section(e, ".eh_frame_hdr")) &&
	    !ptrec_elf_section_bytes(e, hs, &hp, &hlen))
		haddr = hs->addr;
	ptrec_cfi_init(cfi, p, len, sec->addr, is_eh, hp, hlen, haddr);
	cfi->machine = e->machine;
}

int ptrec_symbolizer_cfi(struct ptrec_symbolizer *s, uint64_t addr, struct ptrec_cfi_row *row,
                         uint64_t *bias)
{
	struct ptrec_module *m = ptrec_symbolizer_module(s, addr);
	int rc;

	if (!m || !m->has_elf)
		return -PTREC_ENOMAP;
	if (!m->cfi_state) {
		m->cfi_state = 1;
		cfi_section(&m->eh_frame, &m->elf, ".eh_frame", 1);
		cfi_section(&m->debug_frame, m->has_dbg ? &m->dbg : &m->elf, ".debug_frame", 0);
		if (!m->debug_frame.size && m->has_dbg)
			cfi_section(&m->debug_frame, &m->elf, ".debug_frame", 0);
	}
	*bias = m->bias;
	rc = ptrec_cfi_find(&m->eh_frame, addr - m->bias, row);
	if (rc == -PTREC_ENOMAP)
		rc = ptrec_cfi_find(&m->debug_frame, addr - m->bias, row);
	return rc;
}

size_t ptrec_symbolize_inline(struct ptrec_symbolizer *s, uint64_t addr, int return_address,
                              struct ptrec_inline_frame *out, size_t max)
{
	uint64_t look = return_address && addr ? addr - 1 : addr;
	struct ptrec_module *m = ptrec_symbolizer_module(s, look);
	struct ptrec_symbol sym;
	size_t n;

	if (!m || m->state != 1)
		return 0;
	n = ptrec_dwarf_inline_chain(&m->dwarf, look - m->bias, out, max);
	if (!n)
		return 0;
	for (size_t k = 0; k + 1 < n; k++)
		out[k].name = demangled(s, out[k].name);
	ptrec_symbolize(s, addr, return_address, &sym);
	out[n - 1].name = sym.name;
	return n;
}

size_t ptrec_symbolizer_read(struct ptrec_symbolizer *s, uint64_t addr, void *buf, size_t len)
{
	struct ptrec_module *m;
	size_t n = ptrec_dump_read_memory(s->dump, addr, buf, len);

	if (n)
		return n;
	m = ptrec_symbolizer_module(s, addr);
	if (!m || !m->has_elf)
		return 0;
	return ptrec_elf_read(&m->elf, addr - m->bias, buf, len);
}

char *ptrec_symbol_format(const struct ptrec_symbol *sym, char *buf, size_t len)
{
	int n;

	if (sym->name)
		n = snprintf(buf, len, "%s+0x%" PRIx64, sym->name, sym->offset);
	else if (sym->module)
		n = snprintf(buf, len, "%s+0x%" PRIx64, sym->module->name, sym->module_offset);
	else
		n = snprintf(buf, len, "0x%" PRIx64, sym->addr);
	if (n >= 0 && (size_t)n < len && sym->file)
		snprintf(buf + n, len - (size_t)n, " (%s:%u)", sym->file, sym->line);
	return buf;
}
