/* helper_request.c — ptrec-helper's request parser (helper_request.h).  Pure. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "capture/helper_client.h"
#include "core/settings.h"
#include "helper/helper_request.h"

/* The next space-separated word of [*p, end): stores its start and length, advances past it
 * and one following space.  Returns 0 at the end of the message. */
static size_t next_word(const char **p, const char *end, const char **word)
{
	const char *s = *p;
	size_t n = 0;

	*word = s;
	while (s + n < end && s[n] != ' ')
		n++;
	*p = s + n < end ? s + n + 1 : s + n;
	return n;
}

static int word_is(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(w, lit, n);
}

/* Parses a decimal without sign or leading zero, at most max.  Returns 0 or -1. */
static int parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* "KEY=VALUE": the value of key in word w[0..n), or NULL. */
static const char *key_value(const char *w, size_t n, const char *key, size_t *vlen)
{
	size_t k = strlen(key);

	if (n <= k || memcmp(w, key, k) || w[k] != '=')
		return NULL;
	*vlen = n - k - 1;
	return w + k + 1;
}

int ptrec_helper_request_parse(const char *msg, size_t len, struct ptrec_helper_request *req,
                               char *err, size_t errlen)
{
	const char *end = msg + len, *p = msg, *w;
	size_t n;

	memset(req, 0, sizeof(*req));
	if (errlen)
		err[0] = '\0';
	if (len > PTREC_HELPER_MSG_MAX) {
		snprintf(err, errlen, "request of %zu bytes is over the limit of %u", len,
		         PTREC_HELPER_MSG_MAX);
		return -PTREC_EFORMAT;
	}
	if (len && msg[len - 1] == '\n')
		end--;
	if (end == msg) {
		snprintf(err, errlen, "empty request");
		return -PTREC_EFORMAT;
	}
	for (const char *c = msg; c < end; c++) {
		if (*c < 0x20 || *c > 0x7e) {
			snprintf(err, errlen, "byte 0x%02x at offset %zu is not printable ASCII",
			         (unsigned)(unsigned char)*c, (size_t)(c - msg));
			return -PTREC_EFORMAT;
		}
	}
	n = next_word(&p, end, &w);
	if (!word_is(w, n, PTREC_HELPER_PROTO)) {
		snprintf(err, errlen, "not a " PTREC_HELPER_PROTO " request");
		return -PTREC_EFORMAT;
	}
	n = next_word(&p, end, &w);
	if (word_is(w, n, "ping")) {
		if (p != end) {
			snprintf(err, errlen, "ping takes no arguments");
			return -PTREC_EFORMAT;
		}
		req->verb = PTREC_HELPER_PING;
		return 0;
	}
	if (!word_is(w, n, "open")) {
		snprintf(err, errlen, "unknown verb \"%.*s\" (ping, open)", (int)(n > 32 ? 32 : n), w);
		return -PTREC_EFORMAT;
	}
	req->verb = PTREC_HELPER_OPEN;
	n = next_word(&p, end, &w);
	if (word_is(w, n, "intel_pt")) {
		req->backend = PTREC_BACKEND_INTEL_PT;
	} else if (word_is(w, n, "intel_bts")) {
		req->backend = PTREC_BACKEND_INTEL_BTS;
	} else {
		snprintf(err, errlen, "event \"%.*s\" is not one the helper opens (intel_pt, "
		         "intel_bts)", (int)(n > 32 ? 32 : n), w);
		return -PTREC_EINVAL;
	}
	int have_tid = 0, have_ring = 0;
	while (p < end) {
		const char *v;
		size_t vn;
		uint64_t x;

		n = next_word(&p, end, &w);
		if ((v = key_value(w, n, "tid", &vn))) {
			if (have_tid++) {
				snprintf(err, errlen, "tid given twice");
				return -PTREC_EFORMAT;
			}
			if (parse_dec(v, vn, PTREC_HELPER_TID_MAX, &x) || x == 0) {
				snprintf(err, errlen, "tid \"%.*s\" is not a thread id (1..%d)",
				         (int)(vn > 24 ? 24 : vn), v, PTREC_HELPER_TID_MAX);
				return -PTREC_EINVAL;
			}
			req->tid = (pid_t)x;
		} else if ((v = key_value(w, n, "ring", &vn))) {
			if (have_ring++) {
				snprintf(err, errlen, "ring given twice");
				return -PTREC_EFORMAT;
			}
			if (parse_dec(v, vn, PTREC_RING_MAX, &x) || !ptrec_ring_size_valid((size_t)x)) {
				snprintf(err, errlen, "ring \"%.*s\" is not a power of two in %u..%u",
				         (int)(vn > 24 ? 24 : vn), v, PTREC_RING_MIN, PTREC_RING_MAX);
				return -PTREC_EINVAL;
			}
			req->ring_size = (size_t)x;
		} else {
			snprintf(err, errlen, "unknown argument \"%.*s\" (tid=, ring=)",
			         (int)(n > 32 ? 32 : n), w);
			return -PTREC_EFORMAT;
		}
	}
	if (!have_tid || !have_ring) {
		snprintf(err, errlen, "open needs tid= and ring=");
		return -PTREC_EFORMAT;
	}
	return 0;
}
