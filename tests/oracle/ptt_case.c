/* ptt_case.c — reads one .ptt case: options, CPUs, expected ptxed output, the image assembled by
 * yasm (label addresses from its listing) and the trace encoded from the @pt directives.
 * Test-only; our own reading of the format described in libipt's doc/howto_pttc.md. */
#define _GNU_SOURCE
#include "ptt_case.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(struct ptt_case *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf)
			break;
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		char *nb = realloc(buf, 2 * cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = n;
	}
	return buf;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static void rstrip(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

static struct ptt_label *find_label(struct ptt_case *c, const char *name, size_t n)
{
	for (unsigned i = 0; i < c->nlabels; i++)
		if (strlen(c->labels[i].name) == n && !strncmp(c->labels[i].name, name, n))
			return &c->labels[i];
	return NULL;
}

static int add_label(struct ptt_case *c, const char *name, size_t n, uint64_t value, int is_packet)
{
	if (n == 0 || n >= sizeof(c->labels[0].name))
		return fail(c, "bad label name");
	if (find_label(c, name, n))
		return fail(c, "label %.*s defined twice", (int)n, name);
	if (c->nlabels == PTT_MAX_LABELS)
		return fail(c, "too many labels");
	struct ptt_label *l = &c->labels[c->nlabels++];
	memcpy(l->name, name, n);
	l->name[n] = 0;
	l->value = value;
	l->is_packet = is_packet;
	return 0;
}

static int is_ident(int ch)
{
	return isalnum(ch) || ch == '_' || ch == '.';
}

/* ---- assembling ------------------------------------------------------------------------- */

static int run_yasm(struct ptt_case *c, const char *bin, const char *lst)
{
	const char *yasm = getenv("YASM");
	if (!yasm || !*yasm)
		yasm = "yasm";
	pid_t pid = fork();
	if (pid < 0)
		return fail(c, "fork: %s", strerror(errno));
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execlp(yasm, yasm, "-f", "bin", "-o", bin, "-l", lst, c->path, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return fail(c, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return fail(c, "yasm failed (status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* Parses "name=value" out of a [section ...] line. */
static int section_attr(const char *line, const char *name, uint64_t *v)
{
	const char *p = strstr(line, name);
	if (!p || (p > line && is_ident((unsigned char)p[-1])) || p[strlen(name)] != '=')
		return 0;
	*v = strtoull(p + strlen(name) + 1, NULL, 0);
	return 1;
}

/* Reads label addresses from yasm's listing: the source text starts in column 40, the section
 * offset in column 8.  A label alone on its line takes the next address in its section. */
static int read_listing(struct ptt_case *c, const char *lst)
{
	char *text = read_all(lst, NULL);
	if (!text)
		return fail(c, "cannot read the listing");
	uint64_t base = c->org, next = 0;
	int sec = -1;
	char pending[8][64];
	unsigned npending = 0;
	int rc = 0;
	for (char *line = text, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		if (strlen(line) < 16)
			continue;
		int has_addr = isxdigit((unsigned char)line[7]) && line[15] == ' ';
		uint64_t off = has_addr ? strtoull(line + 7, NULL, 16) : 0;
		const char *src = strlen(line) > 39 ? line + 39 : "";
		const char *s = skip_ws(src);
		if (!strncmp(s, "[section", 8)) {
			uint64_t vs = 0, st = 0;
			if (c->nsections == PTT_MAX_SECTIONS) {
				rc = fail(c, "too many sections");
				break;
			}
			section_attr(s, "vstart", &vs);
			if (!section_attr(s, "start", &st) && c->nsections)
				st = c->sections[c->nsections - 1].file_off + c->sections[c->nsections - 1].size;
			sec = (int)c->nsections++;
			c->sections[sec].vstart = vs;
			c->sections[sec].file_off = st;
			c->sections[sec].size = 0;
			base = vs;
			next = 0;
			continue;
		}
		if (has_addr) {
			/* byte count: hex pairs from column 16 up to a blank or '-' */
			unsigned nbytes = 0;
			for (const char *b = line + 16; isxdigit((unsigned char)b[0]) && isxdigit((unsigned char)b[1]); b += 2)
				nbytes++;
			if (nbytes) {
				for (unsigned i = 0; i < npending && rc == 0; i++)
					rc = add_label(c, pending[i], strlen(pending[i]), base + off, 0);
				npending = 0;
				/* continuation lines repeat the start address */
				if (off + nbytes > next || off >= next)
					next = off >= next ? off + nbytes : next + nbytes;
				if (sec >= 0 && next > c->sections[sec].size)
					c->sections[sec].size = next;
			}
		}
		/* a label definition: identifier followed by ':' */
		const char *e = s;
		while (is_ident((unsigned char)*e))
			e++;
		if (e > s && *e == ':' && *s != '.' && !isdigit((unsigned char)*s)) {
			if (has_addr) {
				rc = add_label(c, s, (size_t)(e - s), base + off, 0);
			} else if (npending < 8 && (size_t)(e - s) < 64) {
				memcpy(pending[npending], s, (size_t)(e - s));
				pending[npending][e - s] = 0;
				npending++;
			}
		}
		if (rc)
			break;
	}
	for (unsigned i = 0; i < npending && rc == 0; i++)
		rc = add_label(c, pending[i], strlen(pending[i]), base + next, 0);
	free(text);
	return rc;
}

/* ---- packets ---------------------------------------------------------------------------- */

/* Parses a number or a %label (with an optional +/- constant). */
static int parse_value(struct ptt_case *c, const char *s, uint64_t *v, const char **end)
{
	s = skip_ws(s);
	uint64_t val;
	if (*s == '%') {
		const char *n = ++s;
		while (is_ident((unsigned char)*s) && *s != '.')
			s++;
		struct ptt_label *l = find_label(c, n, (size_t)(s - n));
		if (!l)
			return fail(c, "unknown label %.*s", (int)(s - n), n);
		val = l->value;
	} else {
		char *e;
		errno = 0;
		val = strtoull(s, &e, 0);
		if (e == s || errno)
			return fail(c, "bad number '%.20s'", s);
		s = e;
	}
	s = skip_ws(s);
	while (*s == '+' || *s == '-') {
		int neg = *s == '-';
		char *e;
		uint64_t k = strtoull(skip_ws(s + 1), &e, 0);
		val = neg ? val - k : val + k;
		s = skip_ws(e);
	}
	*v = val;
	if (end)
		*end = s;
	return 0;
}

static void put_le(struct pe_buf *b, uint64_t v, unsigned n)
{
	uint8_t t[8];
	for (unsigned i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	pe_bytes(b, t, n);
}

static void put2(struct pe_buf *b, uint8_t x, uint8_t y)
{
	uint8_t t[2] = {x, y};
	pe_bytes(b, t, 2);
}

/* "c<state>[.<sub>]" -> state, sub */
static int parse_cstate(const char *s, unsigned *state, unsigned *sub)
{
	s = skip_ws(s);
	if (*s != 'c' && *s != 'C')
		return -1;
	char *e;
	*state = (unsigned)strtoul(s + 1, &e, 10);
	*sub = 0;
	if (*e == '.')
		*sub = (unsigned)strtoul(e + 1, &e, 10);
	return *state > 15 || *sub > 15 ? -1 : 0;
}

static int has_word(const char *args, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = args; (p = strstr(p, w)) != NULL; p += n)
		if ((p == args || !is_ident((unsigned char)p[-1])) && !is_ident((unsigned char)p[n]))
			return 1;
	return 0;
}

/* Encodes one directive (name, args) into c->pt. */
static int encode(struct ptt_case *c, const char *name, const char *args)
{
	struct pe_buf *b = &c->pt;
	uint64_t v = 0, w = 0;
	const char *e;
	if (!strcmp(name, "psb")) {
		pe_psb(b);
	} else if (!strcmp(name, "psbend")) {
		pe_psbend(b);
	} else if (!strcmp(name, "pad")) {
		pe_pad(b);
	} else if (!strcmp(name, "ovf")) {
		pe_ovf(b);
	} else if (!strcmp(name, "stop")) {
		put2(b, 0x02, 0x83);
	} else if (!strcmp(name, "tnt") || !strcmp(name, "tnt64")) {
		uint64_t bits = 0;
		unsigned n = 0;
		for (const char *p = args; *p; p++) {
			if (*p == 't' || *p == 'n') {
				bits = bits << 1 | (*p == 't');
				n++;
			} else if (*p != ' ' && *p != '.' && *p != '\t') {
				return fail(c, "bad tnt payload '%s'", args);
			}
		}
		if (n == 0 || n > (name[3] ? 47u : 6u))
			return fail(c, "bad tnt size");
		if (name[3])
			pe_tnt_long(b, bits, n);
		else
			pe_tnt_short(b, bits, n);
	} else if (!strcmp(name, "tip") || !strcmp(name, "tip.pge") || !strcmp(name, "tip.pgd") ||
	           !strcmp(name, "fup")) {
		char *colon;
		unsigned long ipc = strtoul(args, &colon, 0);
		colon = (char *)skip_ws(colon);
		if (*colon != ':')
			return fail(c, "bad ip argument '%s'", args);
		if (parse_value(c, colon + 1, &v, NULL))
			return -1;
		static const enum pe_ipbytes map[8] = {PE_IP_SUPPRESSED, PE_IP_UPD16, PE_IP_UPD32,
		                                      PE_IP_SEXT48, PE_IP_UPD48, 5, PE_IP_FULL, 7};
		if (ipc > 7)
			return fail(c, "bad ipc %lu", ipc);
		enum pe_ip_type t = !strcmp(name, "tip") ? PE_TIP : !strcmp(name, "fup") ? PE_FUP
		                    : name[6] == 'e' ? PE_TIP_PGE : PE_TIP_PGD;
		pe_ip(b, t, map[ipc], v);
	} else if (!strcmp(name, "mode.exec")) {
		int csl = has_word(args, "64bit"), csd = has_word(args, "32bit");
		if (!csl && !csd && !has_word(args, "16bit"))
			return fail(c, "bad mode.exec '%s'", args);
		pe_mode_exec(b, csl, csd, has_word(args, "if"));
	} else if (!strcmp(name, "mode.tsx")) {
		if (has_word(args, "begin"))
			pe_mode_tsx(b, 1, 0);
		else if (has_word(args, "abort"))
			pe_mode_tsx(b, 0, 1);
		else if (has_word(args, "commit"))
			pe_mode_tsx(b, 0, 0);
		else
			return fail(c, "bad mode.tsx '%s'", args);
	} else if (!strcmp(name, "pip")) {
		if (parse_value(c, args, &v, &e))
			return -1;
		int nr = *e == ',' && has_word(e, "nr");
		put2(b, 0x02, 0x43);
		put_le(b, (v >> 5) << 1 | (uint64_t)nr, 6);
	} else if (!strcmp(name, "tsc")) {
		if (parse_value(c, args, &v, NULL))
			return -1;
		pe_tsc(b, v);
	} else if (!strcmp(name, "cbr")) {
		if (parse_value(c, args, &v, NULL))
			return -1;
		pe_cbr(b, (uint8_t)v);
	} else if (!strcmp(name, "tma")) {
		if (parse_value(c, args, &v, &e) || *e != ',' || parse_value(c, e + 1, &w, NULL))
			return fail(c, "bad tma '%s'", args);
		pe_tma(b, (uint16_t)v, (uint16_t)w);
	} else if (!strcmp(name, "mtc")) {
		if (parse_value(c, args, &v, NULL))
			return -1;
		pe_mtc(b, (uint8_t)v);
	} else if (!strcmp(name, "cyc")) {
		if (parse_value(c, args, &v, NULL))
			return -1;
		pe_cyc(b, v ? v : 1);
	} else if (!strcmp(name, "vmcs")) {
		if (parse_value(c, args, &v, NULL))
			return -1;
		put2(b, 0x02, 0xc8);
		put_le(b, v >> 12, 5);
	} else if (!strcmp(name, "mnt")) {
		if (parse_value(c, args, &v, NULL))
			return -1;
		put2(b, 0x02, 0xc3);
		put_le(b, 0x88, 1);
		put_le(b, v, 8);
	} else if (!strcmp(name, "exstop")) {
		put2(b, 0x02, has_word(args, "ip") ? 0xe2 : 0x62);
	} else if (!strcmp(name, "mwait")) {
		if (parse_value(c, args, &v, &e) || *e != ',' || parse_value(c, e + 1, &w, NULL))
			return fail(c, "bad mwait '%s'", args);
		put2(b, 0x02, 0xc2);
		put_le(b, v, 4);
		put_le(b, w, 4);
	} else if (!strcmp(name, "pwre")) {
		unsigned st, sub;
		if (parse_cstate(args, &st, &sub))
			return fail(c, "bad pwre '%s'", args);
		put2(b, 0x02, 0x22);
		put_le(b, has_word(args, "hw") ? 0x80 : 0, 1);
		put_le(b, ((st - 1) & 0xf) << 4 | ((sub - 1) & 0xf), 1);
	} else if (!strcmp(name, "pwrx")) {
		const char *colon = strchr(args, ':');
		unsigned last, deepest, sub, wr = 0;
		if (!colon || parse_cstate(colon + 1, &last, &sub))
			return fail(c, "bad pwrx '%s'", args);
		const char *comma = strchr(colon, ',');
		if (!comma || parse_cstate(comma + 1, &deepest, &sub))
			return fail(c, "bad pwrx '%s'", args);
		const char *r = skip_ws(args);
		if (!strncmp(r, "int", 3))
			wr = 1;
		else if (!strncmp(r, "st", 2))
			wr = 4;
		else if (!strncmp(r, "hw", 2))
			wr = 8;
		else
			return fail(c, "bad pwrx wake reason '%s'", args);
		put2(b, 0x02, 0xa2);
		put_le(b, ((last - 1) & 0xf) << 4 | ((deepest - 1) & 0xf), 1);
		put_le(b, wr, 1);
		put_le(b, 0, 3);
	} else if (!strcmp(name, "ptw")) {
		char *colon;
		unsigned long sz = strtoul(args, &colon, 0);
		if (*skip_ws(colon) != ':' || sz > 1 || parse_value(c, skip_ws(colon) + 1, &v, &e))
			return fail(c, "bad ptw '%s'", args);
		int ip = *e == ',' && has_word(e, "ip");
		put2(b, 0x02, (uint8_t)(0x12 | sz << 5 | (unsigned)ip << 7));
		put_le(b, v, sz ? 8 : 4);
	} else if (!strcmp(name, "trig")) {
		/* trig(TRBV[, icnt: N][, ip][, mult]): D9, IP bit 7 | ICNTV bit 6 | MULT bit 5,
		 * TRBV, [ICNT 2 bytes] (the layout of libipt's packet reader) */
		const char *ic = strstr(args, "icnt:");
		uint64_t n = 0;
		if (parse_value(c, args, &v, NULL) || (ic && parse_value(c, ic + 5, &n, NULL)))
			return fail(c, "bad trig '%s'", args);
		put2(b, 0xd9, (uint8_t)((has_word(args, "ip") ? 0x80 : 0) | (ic ? 0x40 : 0) |
		                        (has_word(args, "mult") ? 0x20 : 0)));
		put_le(b, v, 1);
		if (ic)
			put_le(b, n, 2);
	} else if (!strcmp(name, "cfe")) {
		/* cfe(TYPE[: VECTOR][, ip]) */
		if (parse_value(c, args, &v, &e) || v > 0x1f)
			return fail(c, "bad cfe '%s'", args);
		if (*e == ':' && (parse_value(c, e + 1, &w, NULL) || w > 0xff))
			return fail(c, "bad cfe vector '%s'", args);
		pe_cfe(b, (unsigned)v, (uint8_t)w, has_word(e, "ip"));
	} else if (!strcmp(name, "evd")) {
		/* evd(TYPE: PAYLOAD) */
		if (parse_value(c, args, &v, &e) || v > 0x3f || *e != ':' ||
		    parse_value(c, e + 1, &w, NULL))
			return fail(c, "bad evd '%s'", args);
		pe_evd(b, (unsigned)v, w);
	} else if (!strncmp(name, "raw-", 4)) {
		unsigned bits = (unsigned)atoi(name + 4);
		if ((bits != 8 && bits != 16 && bits != 32 && bits != 64) || parse_value(c, args, &v, NULL))
			return fail(c, "bad raw '%s'", args);
		put_le(b, v, bits / 8);
	} else {
		return fail(c, "unsupported directive %s", name);
	}
	return b->failed ? fail(c, "out of memory") : 0;
}

/* Copies the line at line into buf (truncated, without the newline); returns the next line or
 * NULL. */
static char *take_line(char *line, char *buf, size_t size)
{
	char *nl = strchr(line, '\n');
	size_t n = nl ? (size_t)(nl - line) : strlen(line);
	snprintf(buf, size, "%.*s", (int)(n < size - 1 ? n : size - 1), line);
	return nl ? nl + 1 : NULL;
}

/* ---- the file --------------------------------------------------------------------------- */

/* Appends the .exp line (the text after ';', without '#' comments, trailing blanks dropped). */
static int exp_line(struct ptt_case *c, const char *line, size_t *len, size_t *cap)
{
	const char *semi = strchr(line, ';');
	if (!semi)
		return 0;
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", semi + 1);
	char *hash = strchr(buf, '#');
	if (hash)
		*hash = 0;
	rstrip(buf);
	size_t n = strlen(buf);
	if (*len + n + 2 > *cap) {
		size_t nc = (*cap + n + 2) * 2;
		char *ne = realloc(c->exp, nc);
		if (!ne)
			return fail(c, "out of memory");
		c->exp = ne;
		*cap = nc;
	}
	memcpy(c->exp + *len, buf, n);
	*len += n;
	c->exp[(*len)++] = '\n';
	c->exp[*len] = 0;
	return 0;
}

int ptt_case_load(struct ptt_case *c, const char *path, const char *workdir)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	const char *base = strrchr(path, '/');
	snprintf(c->name, sizeof(c->name), "%s", base ? base + 1 : path);
	char *dot = strstr(c->name, ".ptt");
	if (dot)
		*dot = 0;

	char *text = read_all(path, NULL);
	if (!text)
		return fail(c, "cannot read %s: %s", path, strerror(errno));

	/* pass 1: options, cpus, org, the expected output */
	int in_exp = 0, seen_exp = 0;
	size_t elen = 0, ecap = 0;
	int rc = 0;
	for (char *line = text; line && *line && rc == 0;) {
		char buf[1024];
		line = take_line(line, buf, sizeof(buf));
		const char *s = skip_ws(buf);
		const char *at = strstr(buf, "@pt");
		if (at && strstr(at, ".exp(")) {
			seen_exp = 1;
			in_exp = strstr(at, ".exp(ptxed)") != NULL;
			if (in_exp)
				c->has_exp = 1;
			continue;
		}
		if (in_exp) {
			rc = exp_line(c, buf, &elen, &ecap);
			continue;
		}
		if (*s == ';') {
			const char *t = skip_ws(s + 1);
			if (!strncmp(t, "opt:ptxed", 9) && (t[9] == ' ' || t[9] == '\t')) {
				char o[512];
				snprintf(o, sizeof(o), "%s", skip_ws(t + 9));
				rstrip(o);
				size_t ol = strlen(c->opts);
				snprintf(c->opts + ol, sizeof(c->opts) - ol, "%s%s", ol ? " " : "", o);
			} else if (!seen_exp && !strncmp(t, "cpu", 3) && (t[3] == ' ' || t[3] == '\t') &&
			           c->ncpus < PTT_MAX_CPUS) {
				snprintf(c->cpus[c->ncpus], sizeof(c->cpus[0]), "%s", skip_ws(t + 3));
				rstrip(c->cpus[c->ncpus]);
				c->ncpus++;
			}
		} else if (!strncasecmp(s, "org", 3) && isspace((unsigned char)s[3])) {
			c->has_org = 1;
			c->org = strtoull(skip_ws(s + 3), NULL, 0);
		}
	}
	if (rc) {
		free(text);
		return rc;
	}

	/* assemble and read the labels */
	char bin[4400], lst[4400];
	snprintf(bin, sizeof(bin), "%s/%s.bin", workdir, c->name);
	snprintf(lst, sizeof(lst), "%s/%s.lst", workdir, c->name);
	if (run_yasm(c, bin, lst) || read_listing(c, lst)) {
		free(text);
		return -1;
	}
	c->bin = (uint8_t *)read_all(bin, &c->bin_len);
	if (!c->bin) {
		free(text);
		return fail(c, "cannot read the assembled image");
	}

	/* pass 2: the packets, in order, up to the first .exp */
	for (char *line = text; line && *line && rc == 0;) {
		char buf[1024];
		line = take_line(line, buf, sizeof(buf));
		const char *semi = strchr(buf, ';');
		const char *at = semi ? strstr(semi, "@pt") : NULL;
		if (!at)
			continue;
		const char *s = skip_ws(at + 3);
		if (!strncmp(s, ".exp(", 5))
			break;
		/* optional label */
		const char *e = s;
		while (is_ident((unsigned char)*e) && *e != '.')
			e++;
		const char *colon = skip_ws(e);
		if (e > s && *colon == ':') {
			rc = add_label(c, s, (size_t)(e - s), c->pt.len, 1);
			s = skip_ws(colon + 1);
		}
		char name[32];
		size_t k = 0;
		while ((is_ident((unsigned char)s[k]) || s[k] == '-') && k < sizeof(name) - 1) {
			name[k] = s[k];
			k++;
		}
		name[k] = 0;
		const char *open = skip_ws(s + k);
		const char *close = strrchr(open, ')');
		if (*open != '(' || !close) {
			rc = fail(c, "bad directive '%s'", s);
			break;
		}
		char args[512];
		snprintf(args, sizeof(args), "%.*s", (int)(close - open - 1), open + 1);
		if (rc == 0)
			rc = encode(c, name, args);
	}
	if (rc == 0)
		rc = add_label(c, "eos", 3, c->pt.len, 1);
	free(text);
	return rc;
}

void ptt_case_free(struct ptt_case *c)
{
	free(c->exp);
	free(c->bin);
	free(c->pt.data);
	c->exp = NULL;
	c->bin = NULL;
	c->pt.data = NULL;
}

char *ptt_case_expand(struct ptt_case *c, const char *text)
{
	size_t cap = strlen(text) * 2 + 64, len = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = text; *p;) {
		char piece[80];
		size_t pn;
		if (*p == '%') {
			const char *q = p + 1;
			int zero = 0, mask = 0;
			if (*q == '?') {
				mask = 1;
				q++;
			} else if (*q == '0' && (isalpha((unsigned char)q[1]) || q[1] == '_')) {
				zero = 1;
				q++;
			}
			const char *n = q;
			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
			struct ptt_label *l = q > n ? find_label(c, n, (size_t)(q - n)) : NULL;
			if (!l) {
				piece[0] = '%';
				pn = 1;
				p++;
			} else {
				uint64_t v = l->value;
				int bytes = -1;
				if (*q == '.' && isdigit((unsigned char)q[1])) {
					bytes = (int)strtol(q + 1, (char **)&q, 10);
					if (bytes < 8)
						v &= bytes ? (~0ull >> (64 - 8 * bytes)) : 0;
				}
				if (mask) {
					int digits = bytes < 0 ? 16 : 2 * bytes;
					snprintf(piece, sizeof(piece), "%.*s%0*llx", 16 - digits, "????????????????",
					         digits, (unsigned long long)v);
					if (digits == 0)
						snprintf(piece, sizeof(piece), "????????????????");
				} else if (zero) {
					snprintf(piece, sizeof(piece), "%016llx", (unsigned long long)v);
				} else {
					snprintf(piece, sizeof(piece), "%llx", (unsigned long long)v);
				}
				pn = strlen(piece);
				p = q;
			}
		} else {
			piece[0] = *p++;
			pn = 1;
		}
		if (len + pn + 1 > cap) {
			cap = (cap + pn) * 2;
			char *no = realloc(out, cap);
			if (!no) {
				free(out);
				return NULL;
			}
			out = no;
		}
		memcpy(out + len, piece, pn);
		len += pn;
	}
	out[len] = 0;
	return out;
}
