/* signature.c — crash signatures (report/signature.h): frame names normalized, irrelevant frames
 * skipped, generic frames joined to their caller. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptrec.h"
#include "report/report.h"
#include "report/signature.h"

/* Bounded appending to a NUL-terminated buffer. */
struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	while (n-- && o->len + 1 < o->cap)
		o->buf[o->len++] = *s++;
	if (o->cap)
		o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
}

/* 1 if name[i..] is the word w (not followed by an identifier character). */
static int word_at(const char *name, size_t i, const char *w)
{
	size_t n = strlen(w);
	if (strncmp(name + i, w, n))
		return 0;
	char c = name[i + n]; /* in the string: its first n bytes from i were w's */
	return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	         c == '_');
}

/* The length of name without the compiler's clone suffixes: " [clone .cold]" (demangled C++)
 * and ".part.0", ".cold", ".isra.0", ".constprop.0", ".lto_priv.0", ".localalias", ".llvm.N"
 * (symbol names), and a symbol version ("@@GLIBC_2.34"). */
static size_t without_clones(const char *name)
{
	static const char *const kinds[] = {"part", "cold", "isra", "constprop", "lto_priv",
	                                    "localalias", "llvm", "str", "ipa"};
	const char *clone = strstr(name, " [clone ");
	size_t n = clone ? (size_t)(clone - name) : strlen(name);
	const char *version = memchr(name, '@', n); /* a symbol version: pthread_kill@@GLIBC_2.34 */

	if (version && version > name)
		n = (size_t)(version - name);

	for (size_t i = 1; i < n; i++) {
		if (name[i] != '.')
			continue;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			size_t l = strlen(kinds[k]);
			if (i + 1 + l <= n && !strncmp(name + i + 1, kinds[k], l) &&
			    (i + 1 + l == n || name[i + 1 + l] == '.' ||
			     (name[i + 1 + l] >= '0' && name[i + 1 + l] <= '9')))
				return i;
		}
	}
	return n;
}

/* The end of the bracketed group that starts at name[i] (open is '(', '<' or '{'): the index
 * just after its matching closer, or n when it never closes.  Brackets of other kinds inside
 * are nested too. */
static size_t group_end(const char *name, size_t i, size_t n)
{
	int depth = 0;
	for (; i < n; i++) {
		char c = name[i];
		if (c == '(' || c == '<' || c == '{' || c == '[')
			depth++;
		else if ((c == ')' || c == '>' || c == '}' || c == ']') && --depth == 0)
			return i + 1;
	}
	return n;
}

/* After "operator" at name[i]: the length of the operator's own token ("<<", "()", " new[]",
 * " unsigned long"), so that its brackets and spaces are not taken for template arguments, a
 * parameter list or a return type. */
static size_t operator_token(const char *name, size_t i, size_t n)
{
	static const char sym[] = "<>=!+-*/%^&|~,";
	size_t k = i;

	if (k + 1 < n && ((name[k] == '(' && name[k + 1] == ')') ||
	                  (name[k] == '[' && name[k + 1] == ']')))
		return 2;
	if (k < n && strchr(sym, name[k])) {
		while (k < n && name[k] && strchr(sym, name[k]))
			k++;
		return k - i;
	}
	/* new, delete, new[], "" (literal operators), a conversion to a type: up to its '(' */
	while (k < n && name[k] != '(')
		k++;
	return k - i;
}

char *ptrec_signature_normalize(const char *name, char *out, size_t cap)
{
	struct out o = {out, cap, 0};
	size_t n = without_clones(name);
	size_t start = 0; /* where the name proper begins in out (after a return type) */

	if (cap)
		out[0] = '\0';
	for (size_t i = 0; i < n;) {
		char c = name[i];
		if (!strncmp(name + i, "(anonymous namespace)", 21)) {
			put(&o, name + i, 21);
			i += 21;
		} else if (word_at(name, i, "operator") &&
		           (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ')) {
			size_t t = operator_token(name, i + 8, n);
			put(&o, name + i, 8 + t);
			i += 8 + t;
		} else if (c == '<') {
			put(&o, "<T>", 3);
			i = group_end(name, i, n);
		} else if (c == '{') {
			/* {lambda(int)#1}, {unnamed type#1}: kept whole, they name one entity */
			size_t e = group_end(name, i, n);
			put(&o, name + i, e - i);
			i = e;
		} else if (c == '(') {
			/* Parameters, then qualifiers (const, &&, noexcept) up to "::" (a local entity
			 * of this function: f(int)::{lambda()#1}) or the end. */
			i = group_end(name, i, n);
			while (i < n && !(name[i] == ':' && name[i + 1] == ':'))
				i++;
		} else if (c == ' ') {
			/* A space outside brackets ends a return type ("void ns::f<T>"), or stands
			 * between the words of a type ("unsigned long"): the name is what follows the
			 * last one. */
			while (i < n && name[i] == ' ')
				i++;
			if (i < n && name[i] != '(' && name[i] != '[' && name[i] != '&' &&
			    name[i] != '*') {
				put(&o, " ", 1);
				start = o.len;
			}
		} else {
			put(&o, name + i, 1);
			i++;
		}
	}
	if (start && start < o.len)
		memmove(out, out + start, o.len - start + 1);
	else if (start)
		out[start - 1] = '\0';
	return out;
}

/* What a frame is to the signature. */
enum frame_kind {
	FRAME_SKIP,    /* irrelevant: left out */
	FRAME_PREFIX,  /* generic: kept, and the signature goes on with its caller */
	FRAME_END,     /* kept, and the signature ends with it */
};

/* Frames left out wherever they are: how a process dies (raise, abort, libc's and the C++
 * runtime's fatal paths), never where it went wrong. */
static const char *const skip_names[] = {
	"raise", "gsignal", "abort", "pthread_kill", "__pthread_kill", "__pthread_kill_internal",
	"__pthread_kill_implementation", "tgkill", "__restore_rt", "killpg", "kill",
	"__assert_fail", "__assert_fail_base", "__assert_perror_fail", "__assert",
	"__libc_message", "__libc_message_impl", "__libc_fatal", "__fortify_fail", "__chk_fail",
	"__stack_chk_fail", "__stack_chk_fail_local", "malloc_printerr",
	"std::terminate", "__cxxabiv1::__terminate", "__cxxabiv1::__unexpected",
	"std::unexpected", "__gnu_cxx::__verbose_terminate_handler", "__cxa_throw",
	"__cxa_rethrow", "__cxa_call_terminate", "__cxa_call_unexpected", "std::rethrow_exception",
	"__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_throw_bad_array_new_length",
};

/* Generic routines a crash passes through on its way from the code that went wrong: kept,
 * with their caller. */
static const char *const prefix_names[] = {
	"memcpy", "memmove", "memset", "memcmp", "bcmp", "memchr", "memrchr", "rawmemchr",
	"mempcpy", "strlen", "strnlen", "strcmp", "strncmp", "strcasecmp", "strncasecmp",
	"strcpy", "strncpy", "stpcpy", "stpncpy", "strcat", "strncat", "strchr", "strrchr",
	"strchrnul", "strstr", "strdup", "strndup", "strspn", "strcspn", "strpbrk", "strtok",
	"wcslen", "wcscmp", "wcscpy", "wmemcpy", "wmemset",
	"malloc", "calloc", "realloc", "free", "cfree", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "_int_malloc", "_int_free", "_int_realloc",
	"_int_memalign", "malloc_consolidate", "unlink_chunk", "tcache_get", "tcache_put",
	"operator new", "operator new[]", "operator delete", "operator delete[]",
	"__cxa_pure_virtual", "__cxa_deleted_virtual",
	"printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsprintf",
	"vsnprintf", "dprintf", "vdprintf", "asprintf", "vasprintf", "__vfprintf_internal",
	"printf_positional", "__printf_buffer", "__vsnprintf_internal", "__vsprintf_internal",
	"qsort", "qsort_r", "bsearch", "msort_with_tmp",
};

/* Modules of the C and C++ runtimes: their code is generic (a frame there is kept with its
 * caller). */
static const char *const prefix_modules[] = {
	"libc.so", "libc-", "libstdc++.so", "libgcc_s.so", "libm.so", "ld-linux", "libpthread",
	"libc++.so", "libc++abi.so",
};

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* Classifies the frame of normalized function name (NULL: no symbol) in module (basename,
 * NULL: none). */
static enum frame_kind classify(const char *name, const char *module)
{
	const char *plain = name;

	if (module && has_prefix(module, "libptrec"))
		return FRAME_SKIP; /* our own frames */
	if (name) {
		if (has_prefix(name, "ptrec_") || has_prefix(name, "__ptrec") ||
		    has_prefix(name, "__cyg_profile_func_") || !strcmp(name, "__sanitizer_cov_trace_pc"))
			return FRAME_SKIP;
		/* glibc's internal aliases (in its debug files' symbol tables): __GI_raise */
		while (has_prefix(plain, "__GI_") || has_prefix(plain, "__libc_"))
			plain += has_prefix(plain, "__GI_") ? 5 : 7;
		if (plain != name && !*plain)
			plain = name;
		if (in_list(name, skip_names, sizeof(skip_names) / sizeof(skip_names[0])) ||
		    in_list(plain, skip_names, sizeof(skip_names) / sizeof(skip_names[0])))
			return FRAME_SKIP;
		if (in_list(name, prefix_names, sizeof(prefix_names) / sizeof(prefix_names[0])) ||
		    in_list(plain, prefix_names, sizeof(prefix_names) / sizeof(prefix_names[0])) ||
		    /* the C library's variants of its string routines: __memcpy_avx_unaligned */
		    has_prefix(plain, "__mem") || has_prefix(plain, "__str") ||
		    has_prefix(plain, "__wmem") || has_prefix(plain, "__wcs"))
			return FRAME_PREFIX;
	}
	if (!module)
		return FRAME_PREFIX; /* code in no module (JIT code, a wild jump): its caller says more */
	for (size_t i = 0; i < sizeof(prefix_modules) / sizeof(prefix_modules[0]); i++)
		if (has_prefix(module, prefix_modules[i]))
			return FRAME_PREFIX;
	return FRAME_END;
}

/* The signature being built. */
struct sig {
	struct out o;
	unsigned frames;
	int done;
};

/* Adds one frame: raw function name (NULL: unknown), its module (NULL: none), the module
 * offset and the pc (for frames in no module). */
static void add_frame(struct sig *g, const char *raw, const struct ptrec_module *mod,
                      uint64_t module_offset, uint64_t pc)
{
	char name[PTREC_SIGNATURE_MAX], text[PTREC_SIGNATURE_MAX];
	const char *mname = mod ? mod->name : NULL;
	enum frame_kind kind;

	if (g->done)
		return;
	if (raw)
		ptrec_signature_normalize(raw, name, sizeof(name));
	kind = classify(raw && name[0] ? name : NULL, mname);
	if (kind == FRAME_SKIP)
		return;
	if (raw && name[0])
		snprintf(text, sizeof(text), "%s", name);
	else if (mname) /* no symbol: module+offset, stable across ASLR */
		snprintf(text, sizeof(text), "%s+0x%" PRIx64, mname, module_offset);
	else if (pc < 0x10000) /* a call through a null pointer: the page is always there */
		snprintf(text, sizeof(text), "@0x%" PRIx64, pc);
	else
		snprintf(text, sizeof(text), "<no module>");
	size_t need = strlen(text) + (g->frames ? 3 : 0);
	if (g->frames && g->o.len + need >= g->o.cap) {
		g->done = 1; /* full: the frames already in say enough */
		return;
	}
	if (g->frames)
		put(&g->o, " | ", 3);
	put(&g->o, text, strlen(text));
	g->frames++;
	if (kind == FRAME_END || g->frames >= PTREC_SIGNATURE_FRAMES)
		g->done = 1;
}

/* Adds the frames at pc (return_address: a return address), inlined calls first. */
static void add_pc(struct sig *g, struct ptrec_report *r, uint64_t pc, int return_address)
{
	struct ptrec_inline_frame in[16];
	struct ptrec_symbol s;
	size_t n = ptrec_symbolize_inline(&r->sym, pc, return_address, in, 16);

	ptrec_symbolize(&r->sym, pc, return_address, &s);
	for (size_t i = 0; i + 1 < n; i++)
		add_frame(g, in[i].name, s.module, s.module_offset, pc);
	add_frame(g, s.name, s.module, s.module_offset, pc);
}

char *ptrec_report_signature(struct ptrec_report *r, char *out, size_t cap)
{
	struct sig g = {{out, cap < PTREC_SIGNATURE_MAX ? cap : PTREC_SIGNATURE_MAX, 0}, 0, 0};
	const struct ptrec_report_thread *t = r->nthreads ? &r->threads[0] : NULL;

	if (cap)
		out[0] = '\0';
	if (t && t->nunwound) {
		for (size_t k = 0; k < t->nunwound && !g.done; k++) {
			const struct ptrec_unwind_frame *f = &t->unwound[k];
			if (!f->signal_frame)
				add_pc(&g, r, f->pc, f->return_address);
		}
	} else if (t && t->nstack) {
		if (r->have_regs)
			add_pc(&g, r, r->fault_pc, 0);
		for (size_t k = 0; k < t->nstack && !g.done; k++)
			add_pc(&g, r, t->stack[k].site, t->stack[k].site_is_return_address);
	}
	if (!g.frames)
		put(&g.o, "EMPTY: no frame", 15);
	return out;
}

int ptrec_dump_signature(const char *path, const char *const *debug_dirs, char *out,
                         size_t cap)
{
	struct ptrec_dump_file f;
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report_options opt;
	struct ptrec_report r;
	int rc;

	if (cap)
		out[0] = '\0';
	rc = ptrec_dump_load(path, &f, &err);
	if (rc)
		return rc;
	rc = ptrec_dump_parse(f.data, f.size, &d, &err);
	if (rc) {
		ptrec_dump_file_free(&f);
		return rc;
	}
	ptrec_report_options_init(&opt);
	opt.crashed_only = 1;
	opt.debug_dirs = debug_dirs;
	opt.dump_path = path;
	rc = ptrec_report_build(&r, &d, &opt);
	if (!rc)
		snprintf(out, cap, "%s", r.signature);
	ptrec_report_free(&r);
	ptrec_dump_free(&d);
	ptrec_dump_file_free(&f);
	return rc;
}
