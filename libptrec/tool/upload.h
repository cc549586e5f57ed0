/* upload.h — `ptrec upload` (cmd_upload.c, ptrec-upload(8)): the upload state kept beside each
 * dump (upload_state.c) and the post through curl(1) (upload_post.c).
 *
 * A dump is never changed by an upload.  What the uploads of DUMP did is kept in a small text
 * file beside it, DUMP.upload ("key value" lines), or, when DUMP's directory is not writable
 * for the uploader, in its state directory (--state-dir) as NAME.HASH.upload (HASH: of the
 * directory's path).  The file is replaced whole (a temporary file created 0600 with O_EXCL,
 * then rename), so a reader sees the old state or the new one; one not owned by the uploader
 * is ignored (in a shared directory anyone could have made it). */
#ifndef PTREC_TOOL_UPLOAD_H
#define PTREC_TOOL_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#define UPLOAD_PATH_MAX 4096

/* What the uploads of one dump did so far. */
struct upload_state {
	int uploaded;          /* 1 once a server answered 2xx: never sent again by --pending */
	unsigned failures;     /* failed tries since the last success (the backoff's exponent) */
	int64_t last_try;      /* time of the last try (0: never tried) */
	int64_t next_try;      /* --pending waits until then (Retry-After or backoff; 0: now) */
	int64_t uploaded_at;   /* time of the 2xx */
	int http;              /* the last answer's HTTP status (0: no answer) */
	char result[512];      /* the last try's outcome, in words, one line */
	char event_id[128];    /* the server's id of the event (2xx), or "" */
	char answer[1024];     /* the server's last answer, escaped to one line, cut */
	char server[512];      /* the URL posted to, without its query (no key) */
};

/* Where the state of one dump lives. */
struct upload_state_file {
	char beside[UPLOAD_PATH_MAX];   /* DUMP.upload */
	char in_dir[UPLOAD_PATH_MAX];   /* STATE_DIR/NAME.HASH.upload, or "" without a state dir */
	const char *path;               /* the one read (or to write), beside or in_dir */
	int tmp_fd;                     /* upload_state_prepare's temporary file, or -1 */
	char tmp[UPLOAD_PATH_MAX + 16];
};

/* Names the state files of dump (state_dir may be NULL) and reads the state found: beside
 * first, then in state_dir.  Returns 1 with *s filled, 0 when there is none yet (*s zeroed),
 * -1 on an error already printed (too long a name).  A state file that cannot be read or
 * parsed, or is not owned by this user, is reported and taken as no state (the dump is sent
 * again rather than lost). */
int upload_state_load(const char *dump, const char *state_dir, struct upload_state_file *f,
                      struct upload_state *s);

/* Creates the temporary file the next state will be written to, beside the dump when its
 * directory takes it, else in the state directory: proof that the outcome of a post can be
 * kept, made before posting (a dump sent without its state kept would be sent again).
 * Returns 0, or -1 after printing why. */
int upload_state_prepare(struct upload_state_file *f);

/* Writes s to the prepared file, syncs it and renames it over the state.  Returns 0, or -1
 * after printing why (the old state stays). */
int upload_state_commit(struct upload_state_file *f, const struct upload_state *s);

/* Removes the prepared temporary file, if any. */
void upload_state_abort(struct upload_state_file *f);

/* Copies text into out (cap bytes) as one line: control bytes, '\\' and bytes >= 0x7f become
 * \xHH escapes ('\n' \n); cut with "..." when it does not fit. */
void upload_escape(const char *text, size_t len, char *out, size_t cap);

/* One field of a multipart/form-data post. */
struct upload_field {
	const char *name;      /* the field's name */
	const char *value;     /* a text field's value (file == NULL) */
	const char *file;      /* a file field: the file posted */
	const char *filename;  /* its filename= (only [A-Za-z0-9._-]) */
	const char *type;      /* its Content-Type */
};

/* What came of one post. */
struct upload_reply {
	int answered;          /* 1: the server answered (http is its status) */
	int http;              /* HTTP status */
	int64_t retry_after;   /* seconds from a Retry-After header (-1: none) */
	char body[4096];       /* the answer's first bytes, NUL-terminated */
	size_t body_len;
	char error[512];       /* not answered: curl's message ("Failed to connect ...") */
};

/* Posts the fields to url as multipart/form-data with curl (the program curl, found in PATH
 * unless it holds a '/'), in a child whose options come from a 0600 file in workdir (the URL
 * and its key never show in ps); timeout_s bounds the whole post.  Returns 0 with *r filled,
 * or -1 when curl could not be run at all (message printed: not installed, ...). */
int upload_post(const char *curl, const char *url, const struct upload_field *fields,
                size_t nfields, unsigned timeout_s, const char *workdir,
                struct upload_reply *r);

/* The server's id of the event in a 2xx answer: Sentry's {"id":"..."}, Backtrace's "_rxid",
 * Socorro's "CrashID=...", or a lone token line; "" when none is recognized. */
void upload_event_id(const char *body, char *out, size_t cap);

#endif
