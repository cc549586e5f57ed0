/* upload_post.c — one multipart/form-data post through curl(1) (upload.h).  The tool writes no
 * HTTP or TLS of its own: curl brings the host's proxy variables (https_proxy, no_proxy), its
 * CA store and ~/.curlrc; the library never uploads anything. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"
#include "tool/tool.h"
#include "tool/upload.h"

extern char **environ;

/* Writes s as a quoted curl config value (curl(1), "-K, --config": "\\", "\"", "\n" ...). */
static void quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		switch (*s) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default: fputc(*s, out); break;
		}
	}
	fputc('"', out);
}

/* Reads up to cap-1 bytes of path into buf (NUL-terminated).  Returns the length, or 0. */
static size_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd >= 0) {
		ssize_t n;
		while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
			len += (size_t)n;
		close(fd);
	}
	buf[len] = '\0';
	return len;
}

/* Seconds to wait from a Retry-After value (RFC 9110 10.2.3: delay-seconds or an HTTP-date),
 * or -1 when it is neither. */
static int64_t retry_after(const char *v)
{
	struct tm tm;
	char *end;

	while (*v == ' ' || *v == '\t')
		v++;
	if (isdigit((unsigned char)*v)) {
		long long n = strtoll(v, &end, 10);
		return n < 0 ? -1 : n;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end)
		return -1;
	int64_t d = (int64_t)timegm(&tm) - (int64_t)time(NULL);
	return d < 0 ? 0 : d;
}

/* Finds Retry-After in the last header block curl wrote (after a "100 Continue" there are
 * two). */
static int64_t header_retry_after(const char *headers)
{
	const char *block = headers, *p;
	int64_t r = -1;

	for (p = headers; (p = strstr(p, "HTTP/")) != NULL; p++)
		if (p == headers || p[-1] == '\n')
			block = p;
	for (p = block; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncasecmp(p, "Retry-After:", 12))
			r = retry_after(p + 12);
	return r;
}

static void no_curl(const char *curl)
{
	tool_error(NULL, -1, "upload: curl(1) is not installed (%s not found%s): ptrec "
	           "upload posts through curl; install it (Debian: apt-get install "
	           "curl) or give --curl PATH", curl, strchr(curl, '/') ? "" : " in PATH");
}

int upload_post(const char *curl, const char *url, const struct upload_field *fields,
                size_t nfields, unsigned timeout_s, const char *workdir,
                struct upload_reply *r)
{
	char cfg[UPLOAD_PATH_MAX], answer[UPLOAD_PATH_MAX], headers[UPLOAD_PATH_MAX];
	char code[UPLOAD_PATH_MAX], errs[UPLOAD_PATH_MAX], buf[8192], prog[UPLOAD_PATH_MAX];
	char *argv[] = {(char *)"curl", (char *)"--config", cfg, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int fd, st, rc;
	FILE *out;

	memset(r, 0, sizeof(*r));
	r->retry_after = -1;
	/* found (PATH as execvp looks it up) and executable before anything is spawned: where the
	 * spawn cannot report a missing program (under qemu-user the child exits 127), the error
	 * is the same */
	if (run_target_find(curl, prog, sizeof(prog)) != 0 || access(prog, X_OK) != 0) {
		no_curl(curl);
		return -1;
	}
	snprintf(cfg, sizeof(cfg), "%s/curl.conf", workdir);
	snprintf(answer, sizeof(answer), "%s/answer", workdir);
	snprintf(headers, sizeof(headers), "%s/headers", workdir);
	snprintf(code, sizeof(code), "%s/status", workdir);
	snprintf(errs, sizeof(errs), "%s/curl.err", workdir);
	unlink(cfg);
	unlink(answer);
	unlink(headers);
	fd = open(cfg, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		tool_error(cfg, -1, "upload: cannot write curl's options: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fputs("silent\nshow-error\nproto = \"=http,https\"\nheader = \"Expect:\"\n", out);
	fprintf(out, "user-agent = \"ptrec-upload/%s\"\n", ptrec_version());
	fprintf(out, "max-time = %u\nconnect-timeout = %u\n", timeout_s,
	        timeout_s < 30 ? timeout_s : 30);
	fputs("write-out = \"%{http_code}\"\noutput = ", out);
	quoted(out, answer);
	fputs("\ndump-header = ", out);
	quoted(out, headers);
	fputs("\nurl = ", out);
	quoted(out, url);
	fputc('\n', out);
	for (size_t i = 0; i < nfields; i++) {
		const struct upload_field *f = &fields[i];
		if (f->file) {
			/* The files are the tool's own, in workdir, with plain names; filename is
			 * reduced to [A-Za-z0-9._-] by the caller. */
			snprintf(buf, sizeof(buf), "%s=@\"%s\";type=%s;filename=\"%s\"", f->name, f->file,
			         f->type, f->filename);
			fputs("form = ", out);
		} else {
			snprintf(buf, sizeof(buf), "%s=%s", f->name, f->value);
			fputs("form-string = ", out);
		}
		quoted(out, buf);
		fputc('\n', out);
	}
	if (fclose(out) != 0) {
		tool_error(cfg, -1, "upload: cannot write curl's options: %s", strerror(errno));
		return -1;
	}

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, code, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, errs, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		if (rc == ENOENT)
			no_curl(curl);
		else
			tool_error(curl, -1, "upload: cannot run curl: %s", strerror(rc));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			tool_error(curl, -1, "upload: waiting for curl: %s", strerror(errno));
			return -1;
		}
	slurp(code, buf, sizeof(buf));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && atoi(buf) >= 100) {
		r->answered = 1;
		r->http = atoi(buf);
		r->body_len = slurp(answer, r->body, sizeof(r->body));
		slurp(headers, buf, sizeof(buf));
		r->retry_after = header_retry_after(buf);
		return 0;
	}
	slurp(errs, buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = '\0';
	if (WIFSIGNALED(st))
		snprintf(r->error, sizeof(r->error), "curl was killed by signal %d", WTERMSIG(st));
	else if (buf[0])
		snprintf(r->error, sizeof(r->error), "%.500s", buf);
	else
		snprintf(r->error, sizeof(r->error), "curl exited with status %d", WEXITSTATUS(st));
	return 0;
}

/* The string value of "key" in a JSON text (a plain scan: enough for a server's short answer),
 * copied to out when it is made of [A-Za-z0-9._:-]. */
static int json_string(const char *body, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);

	for (const char *p = body; (p = strchr(p, '"')) != NULL; p++) {
		const char *v = p + 1;
		size_t n = 0;
		if (strncmp(v, key, klen) || v[klen] != '"')
			continue;
		v += klen + 1;
		while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
			v++;
		if (*v++ != ':')
			continue;
		while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
			v++;
		if (*v++ != '"')
			continue;
		while (v[n] && (isalnum((unsigned char)v[n]) || strchr("._:-", v[n])))
			n++;
		if (v[n] != '"' || !n || n >= cap)
			continue;
		memcpy(out, v, n);
		out[n] = '\0';
		return 1;
	}
	return 0;
}

/* The length of the token at p: [A-Za-z0-9_-]. */
static size_t token(const char *p)
{
	size_t n = 0;
	while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_'))
		n++;
	return n;
}

void upload_event_id(const char *body, char *out, size_t cap)
{
	const char *p, *q;
	size_t n;

	if (!cap)
		return;
	out[0] = '\0';
	if (json_string(body, "id", out, cap) || json_string(body, "_rxid", out, cap) ||
	    json_string(body, "event_id", out, cap))
		return;
	p = strstr(body, "CrashID="); /* Socorro's collector */
	if (p) {
		p += 8;
	} else { /* a lone token (Crashpad's collector answers the report's id) */
		for (p = body; isspace((unsigned char)*p); p++) {}
		for (q = p + token(p); isspace((unsigned char)*q); q++) {}
		if (*q)
			return;
	}
	n = token(p);
	if (n >= 8 && n < cap) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}
