/* ptt_case.h — one test case in the .ptt format of libipt's public test suite, read by our own
 * parser (test-only; the .ptt files themselves are supplied from outside, never copied here).
 *
 * A .ptt file is yasm assembly.  Comments carry "@pt [label:] directive(args)" lines that
 * describe the trace packets in order, "@pt .exp(tool)" sections holding a tool's expected
 * output (one line per comment line, "#" comments and trailing blanks dropped), "opt:ptxed ..."
 * lines with extra options for the instruction-flow tool and "cpu F/M" lines naming the CPUs the
 * case is run for (each one separately).  The packet IPs name assembly labels ("%l1"); their
 * addresses come from yasm's listing of the assembled image. */
#ifndef PTREC_TESTS_PTT_CASE_H
#define PTREC_TESTS_PTT_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "pt_encode.h"

#define PTT_MAX_LABELS 512
#define PTT_MAX_CPUS 64
#define PTT_MAX_SECTIONS 16

struct ptt_label {
	char name[64];
	uint64_t value; /* code address, or for packet labels the packet's trace offset */
	int is_packet;  /* 1: a "@pt name:" packet label */
};

struct ptt_section {
	uint64_t vstart;    /* address the section is loaded at */
	uint64_t file_off;  /* its offset in the assembled binary */
	uint64_t size;      /* bytes */
};

struct ptt_case {
	char path[4096];
	char name[256];          /* file name without .ptt */
	char opts[512];          /* the opt:ptxed options, space-separated */
	char cpus[PTT_MAX_CPUS][16]; /* "F/M" strings from cpu lines */
	unsigned ncpus;
	int has_org;
	uint64_t org;
	int has_exp;             /* has an .exp(ptxed) section */
	char *exp;               /* its lines, '\n'-terminated (malloc'd) */
	struct ptt_label labels[PTT_MAX_LABELS];
	unsigned nlabels;
	struct ptt_section sections[PTT_MAX_SECTIONS];
	unsigned nsections;      /* 0: the whole binary at org */
	uint8_t *bin;            /* the assembled image (malloc'd) */
	size_t bin_len;
	struct pe_buf pt;        /* the encoded trace */
	char err[256];           /* why the case could not be prepared */
};

/* Reads path, assembles it with yasm in workdir (the yasm program named by the YASM
 * environment variable, default "yasm") and encodes its packets.  Returns 0, or -1 with c->err
 * set. */
int ptt_case_load(struct ptt_case *c, const char *path, const char *workdir);

/* Frees what ptt_case_load allocated. */
void ptt_case_free(struct ptt_case *c);

/* Replaces the label references (%label, %0label, %?label.n, %label.n) in the expected output
 * with their values; returns a malloc'd string or NULL (c->err set). */
char *ptt_case_expand(struct ptt_case *c, const char *text);

#endif
