/* cmd_upload.c — `ptrec upload`: sends dumps to a crash server (Sentry, Backtrace, a Breakpad or
 * Crashpad collector) as the multipart/form-data post they all take: the minidump in
 * upload_file_minidump, the text and JSON reports as extra files, and fields for the release,
 * host, signature and tags.  Nothing is lost: a dump is marked uploaded only on a 2xx answer,
 * kept with the server's answer beside it (upload.h); 429, 5xx and network errors leave it
 * pending with the wait the next `--pending` run honours; the dump is only ever read.
 * ptrec-upload(8) is the manual. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/settings.h"
#include "dump/dump_read.h"
#include "ptrec.h"
#include "report/minidump.h"
#include "report/report.h"
#include "tool/tool.h"
#include "tool/upload.h"

#ifndef PTREC_UPLOAD_CONFIG
#define PTREC_UPLOAD_CONFIG "/etc/ptrec/upload.conf"
#endif

#define MAX_TAGS 32
#define MAX_DIRS 32
#define BACKOFF_MAX (6 * 3600) /* the longest wait after failures: 6 hours */
#define RETRY_AFTER_MAX (24 * 3600)
#define SETTLE_S 60 /* --pending leaves dumps younger than this (settling) */

/* The settings, from the command line, the environment and the configuration file. */
struct upload_opts {
	const char *url, *dsn;        /* where (one of them) */
	const char *url_from;         /* which of the three gave it, for messages */
	const char *release, *host, *state_dir, *curl;
	const char *tags[MAX_TAGS];   /* "KEY=VALUE" */
	unsigned ntags;
	const char *dirs[MAX_DIRS];   /* the configuration's `dir` lines (--pending's default) */
	unsigned ndirs;
	size_t max_size;              /* bytes posted per dump at most */
	unsigned long timeout;        /* seconds one post may take */
	unsigned long backoff;        /* the first wait after a failure, doubled after each */
	unsigned long breadcrumbs;    /* last branches sent as Sentry breadcrumbs (0: none) */
	int max_size_set, timeout_set, backoff_set, breadcrumbs_set;
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec upload [--url URL | --dsn DSN] [OPTIONS] DUMP...\n"
	        "       ptrec upload [--url URL | --dsn DSN] [OPTIONS] --pending [DIR...]\n"
	        "Posts dumps to a crash server as multipart/form-data (the minidump in\n"
	        "upload_file_minidump, the text and JSON reports as files), through curl(1).\n"
	        "  --url URL        any minidump endpoint (or PTREC_UPLOAD_URL, or `url` in the\n"
	        "                   configuration)\n"
	        "  --dsn DSN        Sentry: https://KEY@HOST/PROJECT posts to\n"
	        "                   https://HOST/api/PROJECT/minidump/?sentry_key=KEY\n"
	        "                   (or PTREC_UPLOAD_DSN, or `dsn`)\n"
	        "  --pending        every dump in DIRs (default: the configuration's `dir`\n"
	        "                   lines, else the places `ptrec list` searches) not uploaded\n"
	        "                   yet whose wait (Retry-After, backoff) is over\n"
	        "  --config FILE    the configuration (default " PTREC_UPLOAD_CONFIG ")\n"
	        "  --state-dir DIR  where the upload state goes when a dump's directory is not\n"
	        "                   writable (default: beside the dump only)\n"
	        "  --release R      the release field (sentry[release])\n"
	        "  --tag KEY=VALUE  a tag (sentry[tags][KEY]); repeatable\n"
	        "  --host NAME      the host field (default: this host's name)\n"
	        "  --breadcrumbs N  the crashed thread's last N branches as Sentry breadcrumbs\n"
	        "  --max-size SIZE  post no dump whose files pass SIZE (default 20M)\n"
	        "  --timeout S      seconds a post may take (default 120)\n"
	        "  --backoff S      first wait after a failed post, doubled after each (default\n"
	        "                   60, at most 6 hours)\n"
	        "  --curl PATH      the curl program (default: curl in PATH)\n"
	        "Exit status: 0 all sent (or waiting), 1 some not sent (they stay pending),\n"
	        "2 usage, 3 a named dump unreadable.\n");
}

/* ---- settings --------------------------------------------------------------------------- */

/* Applies one setting named like its long option.  from: "--x" or "FILE:LINE" for messages.
 * Values are kept (argv or the configuration's lines, which live to the end).  Returns 0 or
 * -1 after printing why. */
static int set_option(struct upload_opts *o, const char *key, const char *val, const char *from,
                      int from_config)
{
	unsigned long n;

	if (!strcmp(key, "url") || !strcmp(key, "dsn")) {
		if (from_config && (o->url || o->dsn))
			return 0; /* the command line or the environment said it */
		if (!from_config && (o->url || o->dsn) && !strcmp(o->url_from, "the command line")) {
			tool_error(NULL, -1, "upload: %s: give --url or --dsn, not both", from);
			return -1;
		}
		o->url = !strcmp(key, "url") ? val : NULL;
		o->dsn = !strcmp(key, "dsn") ? val : NULL;
		o->url_from = from_config ? "the configuration" : "the command line";
		return 0;
	}
	if (!strcmp(key, "tag")) {
		const char *eq = strchr(val, '=');
		size_t klen = eq ? (size_t)(eq - val) : 0;
		if (!eq || !klen || klen > 32 || strspn(val, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") != klen || strlen(eq + 1) > 200 ||
		    strpbrk(eq + 1, "\n\r")) {
			tool_error(NULL, -1, "upload: %s '%s': expected KEY=VALUE (KEY: up to 32 of "
			           "[A-Za-z0-9._:-], VALUE: one line, up to 200 bytes)", from, val);
			return -1;
		}
		if (o->ntags == MAX_TAGS) {
			tool_error(NULL, -1, "upload: %s: at most %d tags", from, MAX_TAGS);
			return -1;
		}
		o->tags[o->ntags++] = val;
		return 0;
	}
	if (!strcmp(key, "dir")) {
		if (!from_config) {
			tool_error(NULL, -1, "upload: %s: unknown", from);
			return -1;
		}
		if (o->ndirs == MAX_DIRS) {
			tool_error(NULL, -1, "upload: %s: at most %d dir lines", from, MAX_DIRS);
			return -1;
		}
		o->dirs[o->ndirs++] = val;
		return 0;
	}
	if (!strcmp(key, "release") || !strcmp(key, "host") || !strcmp(key, "state-dir") ||
	    !strcmp(key, "curl")) {
		const char **slot = !strcmp(key, "release") ? &o->release
		                  : !strcmp(key, "host") ? &o->host
		                  : !strcmp(key, "state-dir") ? &o->state_dir : &o->curl;
		if (!from_config || !*slot)
			*slot = val;
		return 0;
	}
	if (!strcmp(key, "max-size")) {
		size_t sz;
		if (ptrec_parse_size(val, &sz) != 0 || !sz) {
			tool_error(NULL, -1, "upload: %s '%s': expected a size (20M, 1G, 500000)", from,
			           val);
			return -1;
		}
		if (!from_config || !o->max_size_set)
			o->max_size = sz;
		o->max_size_set = 1;
		return 0;
	}
	if (!strcmp(key, "timeout") || !strcmp(key, "backoff") || !strcmp(key, "breadcrumbs")) {
		unsigned long max = !strcmp(key, "timeout") ? 3600 : !strcmp(key, "backoff")
		                  ? BACKOFF_MAX : 200;
		unsigned long min = !strcmp(key, "breadcrumbs") ? 0 : 1;
		unsigned long *slot = !strcmp(key, "timeout") ? &o->timeout
		                    : !strcmp(key, "backoff") ? &o->backoff : &o->breadcrumbs;
		int *set = !strcmp(key, "timeout") ? &o->timeout_set
		         : !strcmp(key, "backoff") ? &o->backoff_set : &o->breadcrumbs_set;
		if (tool_parse_number(val, min, max, &n) != 0) {
			tool_error(NULL, -1, "upload: %s '%s': expected a number in %lu..%lu", from, val,
			           min, max);
			return -1;
		}
		if (!from_config || !*set)
			*slot = n;
		*set = 1;
		return 0;
	}
	tool_error(NULL, -1, "upload: %s: unknown setting '%s'", from, key);
	return -1;
}

/* Reads the configuration: "key = value" or "key value" lines, '#' comments; keys as the long
 * options, plus `dir` (repeatable).  A missing default file is no error.  Returns 0 or -1. */
static int read_config(struct upload_opts *o, const char *path, int named)
{
	static char text[65536];
	char from[UPLOAD_PATH_MAX + 32];
	unsigned lineno = 0;
	ssize_t n;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		if (errno == ENOENT && !named)
			return 0;
		tool_error(path, -1, "upload: cannot read the configuration: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		tool_error(path, -1, "upload: the configuration is not a regular file");
		close(fd);
		return -1;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0 || (size_t)n == sizeof(text) - 1) {
		tool_error(path, -1, "upload: cannot read the configuration: %s",
		           n < 0 ? strerror(errno) : "larger than 64 KiB");
		return -1;
	}
	text[n] = '\0';
	for (char *line = text, *next; line; line = next) {
		char *key, *val, *end;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		key = line + strspn(line, " \t");
		if (!*key || *key == '#')
			continue;
		val = key + strcspn(key, " \t=");
		end = val;
		val += strspn(val, " \t");
		if (*val == '=')
			val++;
		val += strspn(val, " \t");
		*end = '\0';
		for (end = val + strlen(val); end > val && strchr(" \t\r", end[-1]); end--)
			end[-1] = '\0';
		snprintf(from, sizeof(from), "%s:%u: %s", path, lineno, key);
		if (!*val) {
			tool_error(NULL, -1, "upload: %s: no value", from);
			return -1;
		}
		if (set_option(o, key, val, from, 1) != 0)
			return -1;
	}
	return 0;
}

/* The URL a Sentry DSN posts minidumps to: SCHEME://KEY[:SECRET]@HOST[:PORT][/PATH]/PROJECT
 * -> SCHEME://HOST[:PORT][/PATH]/api/PROJECT/minidump/?sentry_key=KEY.  Returns 0 or -1. */
static int dsn_url(const char *dsn, char *out, size_t cap)
{
	const char *scheme_end = strstr(dsn, "://"), *at, *host, *slash, *project, *colon;
	size_t klen;
	int n;

	if (!scheme_end || (strncmp(dsn, "https://", 8) && strncmp(dsn, "http://", 7)))
		return -1;
	host = scheme_end + 3;
	at = strchr(host, '@');
	slash = strchr(host, '/');
	if (!at || (slash && slash < at))
		return -1;
	colon = memchr(host, ':', (size_t)(at - host));
	klen = (size_t)((colon ? colon : at) - host);
	if (!klen || strspn(host, "0123456789abcdefABCDEF") < klen)
		return -1;
	project = strrchr(at + 1, '/');
	if (!project || project == at + 1 || !project[1] ||
	    strspn(project + 1, "0123456789abcdefghijklmnopqrstuvwxyz-_") != strlen(project + 1))
		return -1;
	n = snprintf(out, cap, "%.*s%.*s/api/%s/minidump/?sentry_key=%.*s",
	             (int)(scheme_end + 3 - dsn), dsn, (int)(project - at - 1), at + 1, project + 1,
	             (int)klen, host);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* ---- one dump's files ------------------------------------------------------------------- */

/* What is posted for one dump, prepared in the work directory. */
struct post_files {
	char minidump[UPLOAD_PATH_MAX], text[UPLOAD_PATH_MAX], json[UPLOAD_PATH_MAX];
	char name[256];                /* the dump's base name, reduced to [A-Za-z0-9._-] */
	char fname_dmp[300], fname_txt[300], fname_json[300];
	size_t total;                  /* bytes of the three files */
	char signature[512];           /* the report's signature, or "" */
	char *breadcrumbs;             /* the `sentry` JSON field with the breadcrumbs, or NULL */
};

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* Opens a new file in the work directory for writing. */
static FILE *create(const char *path)
{
	int fd;
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

/* Copies the file DUMP+suffix written at crash time (the report DUMP.txt) to out_path when it
 * is a regular file of the dump's owner, never through a symbolic link: in a shared directory
 * someone else could have put one there.  Returns 0, or -1 with errno when there is none. */
static int copy_beside(const char *dump, const char *suffix, uid_t owner, const char *out_path)
{
	char path[UPLOAD_PATH_MAX + 8], buf[65536];
	struct stat st;
	ssize_t n;
	FILE *out;
	int fd;

	snprintf(path, sizeof(path), "%s%s", dump, suffix);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != owner ||
	    !(out = create(out_path))) {
		if (S_ISREG(st.st_mode) && st.st_uid != owner)
			errno = EPERM;
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	close(fd);
	return fclose(out) == 0 && n == 0 ? 0 : -1;
}

/* Appends s to the JSON text in *b as a string. */
static void json_str(FILE *b, const char *s)
{
	fputc('"', b);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(b, "\\%c", c);
		else if (c < 0x20)
			fprintf(b, "\\u%04x", c);
		else
			fputc(c, b);
	}
	fputc('"', b);
}

/* The `sentry` field: {"breadcrumbs":{"values":[...]}} with the event thread's last n
 * branches, oldest first, "KIND FROM -> TO" each (Sentry's event payload, breadcrumbs
 * interface).  NULL when there are none. */
static char *breadcrumbs(struct ptrec_report *rep, unsigned long n)
{
	const struct ptrec_report_thread *t = rep->nthreads ? &rep->threads[0] : NULL;
	char *text = NULL, from[512], to[512], msg[1100];
	size_t len = 0, first;
	FILE *b;

	if (!n || !t || !t->nbranches)
		return NULL;
	b = open_memstream(&text, &len);
	if (!b)
		return NULL;
	first = t->nbranches > n ? t->nbranches - n : 0;
	fputs("{\"breadcrumbs\":{\"values\":[", b);
	for (size_t i = first; i < t->nbranches; i++) {
		const struct ptrec_branch *br = &t->branches[i];
		struct ptrec_symbol s;
		ptrec_symbolize(&rep->sym, br->from, ptrec_branch_from_is_ret(t, br), &s);
		ptrec_symbol_format(&s, from, sizeof(from));
		ptrec_symbolize(&rep->sym, br->to, ptrec_branch_to_is_ret(t, br), &s);
		ptrec_symbol_format(&s, to, sizeof(to));
		snprintf(msg, sizeof(msg), "%s %s -> %s", ptrec_branch_kind_name(br->kind), from, to);
		fputs(i > first ? ",{" : "{", b);
		fputs("\"type\":\"default\",\"category\":\"ptrec.branch\",\"level\":\"info\","
		      "\"message\":", b);
		json_str(b, msg);
		fputc('}', b);
	}
	fputs("]}}", b);
	if (fclose(b) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Keeps [A-Za-z0-9._-] of s (others become '_'), at most cap-1 bytes. */
static void plain_name(const char *s, char *out, size_t cap)
{
	size_t i;
	for (i = 0; s[i] && i + 1 < cap; i++)
		out[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
		                s[i]) ? s[i] : '_';
	out[i] = '\0';
}

/* Writes the minidump of the report's dump to path (report/minidump.h: the same bytes as
 * `ptrec minidump DUMP`).  Returns 0 or -1 after printing why. */
static int write_minidump(const char *dump, const struct ptrec_report *rep, const char *path)
{
	struct ptrec_minidump md;
	int rc = ptrec_minidump_build(rep, &md);

	if (rc) {
		tool_error(dump, -1, "upload: not posted: cannot make its minidump: %s",
		           ptrec_minidump_strerror(rc));
		return -1;
	}
	unlink(path);
	rc = ptrec_minidump_save(&md, path);
	ptrec_minidump_free(&md);
	if (rc) {
		tool_error(path, -1, "upload: cannot write the minidump: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Prepares the files of dump in workdir.  Returns 0, or -1 after printing why. */
static int prepare_files(const char *dump, const struct upload_opts *o, const char *workdir,
                         struct post_files *pf)
{
	struct ptrec_report_options ropt;
	struct ptrec_dump_file f;
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report rep;
	struct stat st;
	const char *base = strrchr(dump, '/') ? strrchr(dump, '/') + 1 : dump;
	FILE *out;
	int rc, ok = 0;

	memset(pf, 0, sizeof(*pf));
	plain_name(base, pf->name, sizeof(pf->name));
	snprintf(pf->minidump, sizeof(pf->minidump), "%.1000s/minidump.dmp", workdir);
	snprintf(pf->text, sizeof(pf->text), "%.1000s/report.txt", workdir);
	snprintf(pf->json, sizeof(pf->json), "%.1000s/report.json", workdir);
	snprintf(pf->fname_dmp, sizeof(pf->fname_dmp), "%s.dmp", pf->name);
	snprintf(pf->fname_txt, sizeof(pf->fname_txt), "%s.txt", pf->name);
	snprintf(pf->fname_json, sizeof(pf->fname_json), "%s.json", pf->name);

	rc = ptrec_dump_load(dump, &f, &err);
	if (!rc)
		rc = ptrec_dump_parse(f.data, f.size, &d, &err);
	if (rc) {
		if (rc == -PTREC_EIO)
			tool_error(dump, -1, "%s", err.cause);
		else
			tool_error(dump, (long long)err.offset, "%s (%s)", err.cause,
			           ptrec_strerror(rc));
		if (rc != -PTREC_EIO)
			ptrec_dump_file_free(&f);
		return -1;
	}
	ptrec_report_options_init(&ropt);
	ropt.dump_path = dump;
	rc = ptrec_report_build(&rep, &d, &ropt);
	if (rc) {
		tool_error(dump, -1, "upload: cannot build the report: %s", ptrec_strerror(rc));
		ptrec_dump_free(&d);
		ptrec_dump_file_free(&f);
		return -1;
	}
	snprintf(pf->signature, sizeof(pf->signature), "%s", rep.signature); /* signature.h */
	out = create(pf->json);
	if (!out || ptrec_report_json(&rep, out) != 0 || fclose(out) != 0) {
		tool_error(pf->json, -1, "upload: cannot write the JSON report: %s", strerror(errno));
		goto done;
	}
	if (stat(dump, &st) != 0) {
		tool_error(dump, -1, "upload: %s", strerror(errno));
		goto done;
	}
	if (copy_beside(dump, ".txt", st.st_uid, pf->text) != 0) {
		out = create(pf->text); /* no report beside the dump: this one */
		if (!out || ptrec_report_text(&rep, out) != 0 || fclose(out) != 0) {
			tool_error(pf->text, -1, "upload: cannot write the text report: %s",
			           strerror(errno));
			goto done;
		}
	}
	if (write_minidump(dump, &rep, pf->minidump) != 0)
		goto done;
	pf->breadcrumbs = breadcrumbs(&rep, o->breadcrumbs);
	pf->total = (size_t)file_size(pf->minidump) + (size_t)file_size(pf->text) +
	            (size_t)file_size(pf->json);
	ok = 1;
done:
	ptrec_report_free(&rep);
	ptrec_dump_free(&d);
	ptrec_dump_file_free(&f);
	return ok ? 0 : -1;
}

/* ---- one post --------------------------------------------------------------------------- */

/* Everything about this run that every dump shares. */
struct run {
	const struct upload_opts *o;
	char url[UPLOAD_PATH_MAX];    /* where to post */
	char server[512];             /* url without its query, for messages and the state */
	char host[256];
	char workdir[1100];
	int64_t now;
	int stop;                     /* 1 after a 429 or an unreachable server: the others wait */
	char stop_why[256];
};

/* Adds a text field. */
#define FIELD(n, v) (fields[nf++] = (struct upload_field){.name = (n), .value = (v)})

/* The wait after the n-th failure in a row: backoff * 2^(n-1), at most BACKOFF_MAX. */
static int64_t backoff_wait(unsigned long base, unsigned n)
{
	int64_t w = (int64_t)base;
	for (unsigned i = 1; i < n && w < BACKOFF_MAX; i++)
		w *= 2;
	return w < BACKOFF_MAX ? w : BACKOFF_MAX;
}

static void when_text(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(out, cap, "%" PRId64, t);
}

static int send_locked(struct run *run, const struct tool_dump *td, int pending);

/* 1 if the dump or its report changed less than SETTLE_S seconds before now: at crash time the
 * report child writes DUMP.txt for up to PTREC_REPORT_TIMEOUT_MS (10 s by default) after the
 * dump, and a partial one would be sent for good. */
static int settling(const char *dump, int64_t now)
{
	char txt[UPLOAD_PATH_MAX + 8];
	struct stat st;

	if (stat(dump, &st) == 0 && (int64_t)st.st_mtime > now - SETTLE_S)
		return 1;
	snprintf(txt, sizeof(txt), "%s.txt", dump);
	return lstat(txt, &st) == 0 && (int64_t)st.st_mtime > now - SETTLE_S;
}

/* Sends one dump.  Returns 0 uploaded (or already, or being sent by another run), 1 not sent
 * (stays pending). */
static int send_dump(struct run *run, const struct tool_dump *td, int pending)
{
	const char *dump = td->path;

	/* One sender per dump: a second `ptrec upload` (the timer's and one by hand) leaves it to
	 * the first.  An advisory lock on a read-only descriptor: the dump is not changed. */
	int lock = open(dump, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
		printf("%s: being sent by another ptrec upload\n", dump);
		close(lock);
		return 0;
	}
	int rc = send_locked(run, td, pending);
	if (lock >= 0)
		close(lock);
	return rc;
}

/* send_dump, with the dump's lock held. */
static int send_locked(struct run *run, const struct tool_dump *td, int pending)
{
	const struct upload_opts *o = run->o;
	const char *dump = td->path;
	struct upload_state_file sf;
	struct upload_state s;
	struct upload_reply reply;
	struct post_files pf;
	struct upload_field fields[16 + 2 * MAX_TAGS];
	char tagnames[MAX_TAGS + 4][64], tagvals[MAX_TAGS][256], when[64];
	char signal_name[32];
	size_t nf = 0;
	int have;

	have = upload_state_load(dump, o->state_dir, &sf, &s);
	if (have < 0)
		return 1;
	if (have && s.uploaded) {
		if (!pending) {
			when_text(s.uploaded_at, when, sizeof(when));
			printf("%s: already uploaded %s to %s%s%s; remove %s to send it again\n", dump,
			       when, s.server, s.event_id[0] ? ", event " : "", s.event_id, sf.path);
		}
		return 0;
	}
	if (run->stop) {
		printf("%s: not tried: %s\n", dump, run->stop_why);
		return 1;
	}
	if (pending && have && s.next_try > run->now) {
		when_text(s.next_try, when, sizeof(when));
		printf("%s: waiting until %s (%s)\n", dump, when, s.result);
		return 0;
	}
	if (pending && settling(dump, run->now)) {
		printf("%s: written less than %d s ago (its report may still be being written): left "
		       "for the next run\n", dump, SETTLE_S);
		return 0;
	}
	if (prepare_files(dump, o, run->workdir, &pf) != 0)
		return 1;
	if (pf.total > o->max_size) {
		tool_error(dump, -1, "upload: not posted: its minidump and reports are %zu bytes, "
		           "over --max-size %zu (raise max-size, or send it by other means)",
		           pf.total, o->max_size);
		free(pf.breadcrumbs);
		return 1;
	}
	if (upload_state_prepare(&sf) != 0) {
		free(pf.breadcrumbs);
		return 1;
	}

	fields[nf++] = (struct upload_field){.name = "upload_file_minidump", .file = pf.minidump,
		.filename = pf.fname_dmp, .type = "application/octet-stream"};
	fields[nf++] = (struct upload_field){.name = "ptrec_report", .file = pf.text,
		.filename = pf.fname_txt, .type = "text/plain"};
	fields[nf++] = (struct upload_field){.name = "ptrec_report_json", .file = pf.json,
		.filename = pf.fname_json, .type = "application/json"};
	if (o->release) {
		FIELD("release", o->release);
		FIELD("sentry[release]", o->release);
	}
	FIELD("host", run->host);
	FIELD("sentry[server_name]", run->host);
	if (pf.signature[0]) {
		FIELD("signature", pf.signature);
		FIELD("sentry[tags][ptrec.signature]", pf.signature);
	}
	/* Tags: what the dump says, then the operator's. */
	unsigned nt = 0;
	snprintf(signal_name, sizeof(signal_name), "%s", td->p.signo
	         ? ptrec_report_signal_name(td->p.signo) : "");
	const char *auto_tags[][2] = {
		{"ptrec.event", ptrec_report_event_name(td->p.event)},
		{"ptrec.signal", signal_name},
		{"ptrec.program", td->p.comm},
		{"ptrec.backend", ptrec_backend_name((enum ptrec_backend)td->p.backend)},
	};
	for (size_t i = 0; i < sizeof(auto_tags) / sizeof(auto_tags[0]); i++) {
		if (!auto_tags[i][1] || !auto_tags[i][1][0])
			continue;
		snprintf(tagnames[nt], sizeof(tagnames[nt]), "sentry[tags][%s]", auto_tags[i][0]);
		FIELD(tagnames[nt], auto_tags[i][1]);
		nt++;
	}
	for (unsigned i = 0; i < o->ntags; i++, nt++) {
		const char *eq = strchr(o->tags[i], '=');
		snprintf(tagnames[nt], sizeof(tagnames[nt]), "sentry[tags][%.*s]",
		         (int)(eq - o->tags[i]), o->tags[i]);
		snprintf(tagvals[i], sizeof(tagvals[i]), "%s", eq + 1);
		FIELD(tagnames[nt], tagvals[i]);
	}
	if (pf.breadcrumbs)
		FIELD("sentry", pf.breadcrumbs);

	s.last_try = run->now;
	snprintf(s.server, sizeof(s.server), "%s", run->server);
	if (upload_post(o->curl ? o->curl : "curl", run->url, fields, nf, (unsigned)o->timeout,
	                run->workdir, &reply) != 0) {
		upload_state_abort(&sf);
		free(pf.breadcrumbs);
		run->stop = 1;
		snprintf(run->stop_why, sizeof(run->stop_why), "curl cannot be run");
		return 1;
	}
	free(pf.breadcrumbs);
	run->now = (int64_t)time(NULL); /* waits count from the answer */
	if (reply.answered) {
		s.http = reply.http;
		upload_escape(reply.body, reply.body_len, s.answer, sizeof(s.answer));
	} else {
		s.http = 0;
		s.answer[0] = '\0';
	}
	if (reply.answered && reply.http >= 200 && reply.http <= 299) {
		s.uploaded = 1;
		s.uploaded_at = run->now;
		s.failures = 0;
		s.next_try = 0;
		upload_event_id(reply.body, s.event_id, sizeof(s.event_id));
		snprintf(s.result, sizeof(s.result), "uploaded: HTTP %d", reply.http);
		if (upload_state_commit(&sf, &s) != 0)
			return 1; /* sent, but not kept: said; --pending would send it again */
		printf("%s: uploaded to %s (HTTP %d%s%s)\n", dump, run->server, reply.http,
		       s.event_id[0] ? ", event " : "", s.event_id);
		return 0;
	}
	s.failures = s.failures < 64 ? s.failures + 1 : 64;
	char answer[300];
	upload_escape(reply.body, reply.body_len < 240 ? reply.body_len : 240, answer,
	              sizeof(answer));
	if (reply.answered && reply.http == 429) {
		int64_t wait = reply.retry_after >= 0 ? reply.retry_after
		             : backoff_wait(o->backoff, s.failures);
		if (wait > RETRY_AFTER_MAX)
			wait = RETRY_AFTER_MAX;
		s.next_try = run->now + wait;
		snprintf(s.result, sizeof(s.result), "HTTP 429 Too Many Requests: retry after %" PRId64
		         " s (%s)", wait, reply.retry_after >= 0 ? "Retry-After" : "no Retry-After: "
		         "backoff");
		run->stop = 1;
		snprintf(run->stop_why, sizeof(run->stop_why), "the server answered 429 (Too Many "
		         "Requests) for an earlier dump");
	} else if (reply.answered) {
		int64_t wait = backoff_wait(o->backoff, s.failures);
		s.next_try = run->now + wait;
		snprintf(s.result, sizeof(s.result), "HTTP %d%s%s; next try in %" PRId64 " s",
		         reply.http, answer[0] ? ": " : "", answer, wait);
	} else {
		int64_t wait = backoff_wait(o->backoff, s.failures);
		s.next_try = run->now + wait;
		char e[400];
		upload_escape(reply.error, strlen(reply.error), e, sizeof(e));
		snprintf(s.result, sizeof(s.result), "no answer: %s; next try in %" PRId64 " s", e,
		         wait);
		run->stop = 1;
		snprintf(run->stop_why, sizeof(run->stop_why), "the server did not answer for an "
		         "earlier dump");
	}
	upload_state_commit(&sf, &s);
	tool_error(dump, -1, "upload: not uploaded to %s: %s", run->server, s.result);
	return 1;
}

/* ---- the command ------------------------------------------------------------------------ */

int cmd_upload(int argc, char **argv)
{
	struct upload_opts o = {.max_size = 20u << 20, .timeout = 120, .backoff = 60};
	struct tool_dumps all = {0};
	struct run run;
	const char *config = NULL;
	const char **operands = calloc((size_t)argc, sizeof(*operands));
	int noperands = 0, pending = 0, failed = 0, unreadable = 0, status;
	const char *env;

	enum { OPT_URL = 256, OPT_DSN, OPT_PENDING, OPT_CONFIG, OPT_STATE_DIR, OPT_RELEASE, OPT_TAG,
	       OPT_HOST, OPT_BREADCRUMBS, OPT_MAX_SIZE, OPT_TIMEOUT, OPT_BACKOFF, OPT_CURL };
	static const struct option opts[] = {
		{"url", required_argument, NULL, OPT_URL},
		{"dsn", required_argument, NULL, OPT_DSN},
		{"pending", no_argument, NULL, OPT_PENDING},
		{"config", required_argument, NULL, OPT_CONFIG},
		{"state-dir", required_argument, NULL, OPT_STATE_DIR},
		{"release", required_argument, NULL, OPT_RELEASE},
		{"tag", required_argument, NULL, OPT_TAG},
		{"host", required_argument, NULL, OPT_HOST},
		{"breadcrumbs", required_argument, NULL, OPT_BREADCRUMBS},
		{"max-size", required_argument, NULL, OPT_MAX_SIZE},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"backoff", required_argument, NULL, OPT_BACKOFF},
		{"curl", required_argument, NULL, OPT_CURL},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);

	if (!operands) {
		tool_error(NULL, -1, "upload: out of memory");
		return TOOL_EXIT_INPUT;
	}
	memset(&run, 0, sizeof(run));
	for (int c; (c = tool_getopt(&a)) != TOOL_ARGS_END;) {
		const char *key = a.name + 2;
		switch (c) {
		case TOOL_ARGS_STOP:
			free(operands);
			return a.status;
		case TOOL_ARGS_OPERAND:
			operands[noperands++] = a.arg;
			break;
		case OPT_PENDING:
			pending = 1;
			break;
		case OPT_CONFIG:
			config = a.arg;
			break;
		default:
			if (set_option(&o, key, a.arg, a.name, 0) != 0) {
				free(operands);
				return TOOL_EXIT_USAGE;
			}
		}
	}
	if (!pending && !noperands) {
		free(operands);
		return tool_no_operand(&a, "DUMP (or --pending)");
	}
	/* The environment, then the configuration, fill what the command line left. */
	if (!o.url && !o.dsn) {
		const char *u = getenv("PTREC_UPLOAD_URL"), *d = getenv("PTREC_UPLOAD_DSN");
		if (u && *u && d && *d) {
			free(operands);
			return tool_usage_error(&a, "PTREC_UPLOAD_URL and PTREC_UPLOAD_DSN are both set");
		}
		if (u && *u)
			o.url = u;
		else if (d && *d)
			o.dsn = d;
		if (o.url || o.dsn)
			o.url_from = "the environment";
	}
	if (read_config(&o, config ? config : PTREC_UPLOAD_CONFIG, config != NULL) != 0) {
		free(operands);
		return TOOL_EXIT_USAGE;
	}
	if (!o.url && !o.dsn) {
		free(operands);
		return tool_usage_error(&a, "no server: give --url URL or --dsn DSN (or set "
		                        "PTREC_UPLOAD_URL / PTREC_UPLOAD_DSN, or url/dsn in %s)",
		                        config ? config : PTREC_UPLOAD_CONFIG);
	}
	run.o = &o;
	if (o.dsn) {
		if (dsn_url(o.dsn, run.url, sizeof(run.url)) != 0) {
			free(operands);
			return tool_usage_error(&a, "DSN from %s: expected "
			                        "https://KEY@HOST[:PORT]/PROJECT", o.url_from);
		}
	} else {
		if ((strncmp(o.url, "https://", 8) && strncmp(o.url, "http://", 7)) ||
		    strpbrk(o.url, " \t\r\n\"\\")) {
			free(operands);
			return tool_usage_error(&a, "URL from %s: expected http:// or https:// and no "
			                        "space, quote or backslash", o.url_from);
		}
		snprintf(run.url, sizeof(run.url), "%s", o.url);
	}
	snprintf(run.server, sizeof(run.server), "%.*s", (int)strcspn(run.url, "?#"), run.url);
	if (o.host)
		snprintf(run.host, sizeof(run.host), "%s", o.host);
	else if (gethostname(run.host, sizeof(run.host) - 1) != 0)
		snprintf(run.host, sizeof(run.host), "unknown");

	/* Which dumps. */
	if (pending) {
		for (int i = 0; i < noperands; i++)
			if (tool_dumps_add_dir(&all, operands[i]) != 0) {
				tool_error(operands[i], -1, "upload: cannot list: %s", strerror(errno));
				unreadable = 1;
			}
		for (unsigned i = 0; !noperands && i < o.ndirs; i++)
			if (tool_dumps_add_dir(&all, o.dirs[i]) != 0 && errno != ENOENT)
				tool_error(o.dirs[i], -1, "upload: cannot list: %s", strerror(errno));
		if (!noperands && !o.ndirs)
			tool_dumps_add_places(&all);
		tool_dumps_sort(&all);
	} else {
		for (int i = 0; i < noperands; i++)
			if (tool_dumps_add_file(&all, operands[i]) != 0) {
				tool_error(operands[i], -1, "upload: not a readable ptrec dump");
				unreadable = 1;
			}
	}
	free(operands);

	env = getenv("TMPDIR");
	snprintf(run.workdir, sizeof(run.workdir), "%.1000s/ptrec-upload.XXXXXX",
	         env && env[0] == '/' && !strpbrk(env, "\";,\\\n") ? env : "/tmp");
	if (all.n && !mkdtemp(run.workdir)) {
		tool_error(run.workdir, -1, "upload: cannot make a work directory: %s",
		           strerror(errno));
		tool_dumps_free(&all);
		return TOOL_EXIT_INPUT;
	}
	run.now = (int64_t)time(NULL);
	/* Named dumps in the order given; --pending's oldest first. */
	for (size_t k = 0; k < all.n; k++)
		failed += send_dump(&run, &all.v[pending ? all.n - 1 - k : k], pending);
	if (all.n) {
		static const char *const files[] = {"minidump.dmp", "report.txt", "report.json",
			"curl.conf", "answer", "headers", "status", "curl.err"};
		char p[UPLOAD_PATH_MAX + 32];
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", run.workdir, files[i]);
			unlink(p);
		}
		rmdir(run.workdir);
	}
	if (pending && !all.n)
		printf("no dumps found\n");
	tool_dumps_free(&all);
	status = failed ? TOOL_EXIT_GAPS : TOOL_EXIT_OK;
	if (unreadable && !failed)
		status = TOOL_EXIT_INPUT;
	return status;
}
