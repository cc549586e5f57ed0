/* cmd_check.c — `ptrec check FILE...`: says for each executable or shared library whether it
 * will record branch history with the instrumented backend, how (which hooks, in how many
 * functions) and whether it links libptrec; for a file that records nothing, why (LTO dropped
 * the flags, built without `ptrec cflags`, stripped) and the fix.  Exit status 0 when every
 * file records, 1 when one records nothing, 3 when one cannot be read.  The findings come
 * from symbols/instr_scan.c. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ptrec.h"
#include "core/arch.h"
#include "core/warnings.h"
#include "symbols/elf_symbols.h"
#include "symbols/instr_scan.h"
#include "tool/tool.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: ptrec check FILE...\n\n"
	        "Says for each executable or shared library whether it records branch history for\n"
	        "libptrec's instrumented backend: the hooks its functions call (fentry, entry/exit,\n"
	        "trace-pc, patchable entry) and in how many functions, whether it links libptrec,\n"
	        "and for a file that records nothing why (LTO dropped the flags, built without\n"
	        "`ptrec cflags`, stripped).  Exit status 0 if every file records, 1 if one records\n"
	        "nothing, 3 if one cannot be read.\n");
}

/* The flag a command line recorded in the file asked for, for the messages. */
static const char *asked_name(unsigned asked)
{
	if (asked & PTREC_ASKED_FENTRY)
		return "-pg -mfentry -mfentry-name=__ptrec_fentry";
	if (asked & PTREC_ASKED_PATCHABLE)
		return "-fpatchable-function-entry";
	if (asked & PTREC_ASKED_INSTRUMENT)
		return "-finstrument-functions";
	if (asked & PTREC_ASKED_TRACE_PC)
		return "-fsanitize-coverage=trace-pc";
	return NULL;
}

static int is_executable(const struct ptrec_elf *elf)
{
	return elf->e_type == 2 /* ET_EXEC */ || ptrec_elf_find_section(elf, ".interp") != NULL;
}

/* Prints what the file links: libptrec, or who must. */
static void print_link(const struct ptrec_elf *elf, const struct ptrec_instr_scan *s)
{
	if (s->links_libptrec)
		printf("; links libptrec.so\n");
	else if (s->defines_runtime)
		printf("; libptrec is linked in\n");
	else if (is_executable(elf))
		printf("; does not link libptrec: link `pkg-config --libs libptrec` and call "
		       "ptrec_init first in main, or run it under `ptrec run`\n");
	else
		printf("; does not link libptrec: the program that loads it must\n");
}

/* Checks one file; returns its exit status. */
static int check_one(const char *path)
{
	struct ptrec_warnings w;
	struct ptrec_elf elf;
	struct ptrec_instr_scan s;
	unsigned total = 0;
	int r, patched;

	memset(&w, 0, sizeof(w));
	r = ptrec_elf_open_file(path, &elf, &w);
	ptrec_warnings_free(&w);
	if (r < 0) {
		tool_error(path, -1, "cannot read it as an x86-64 or aarch64 ELF file: %s",
		           ptrec_strerror(r));
		return TOOL_EXIT_INPUT;
	}
	if (elf.e_type == 1 /* ET_REL */) {
		tool_error(path, -1, "an object file: check the program or library linked from it "
		           "(LTO decides at that link)");
		ptrec_elf_close(&elf);
		return TOOL_EXIT_INPUT;
	}
	r = ptrec_instr_scan(&elf, &s);
	if (r < 0) {
		tool_error(path, -1, "%s", ptrec_strerror(r));
		ptrec_elf_close(&elf);
		return TOOL_EXIT_INPUT;
	}
	/* patchable entries record where they are registered (ptrec_init writes the calls) */
	patched = s.patch_registered;
	for (int k = 0; k < PTREC_INSTR_KINDS_; k++)
		if (k != PTREC_INSTR_PATCHABLE || patched)
			total += s.by_kind[k];
	if (total) {
		const char *sep = "";
		printf("%s: records:", path);
		for (int k = 0; k < PTREC_INSTR_KINDS_; k++) {
			if (!s.by_kind[k] || (k == PTREC_INSTR_PATCHABLE && !patched))
				continue;
			if (k == PTREC_INSTR_PATCHABLE)
				printf("%s %u patchable function entries (calls written in at ptrec_init)",
				       sep, s.by_kind[k]);
			else
				printf("%s %s hooks in %u of %u functions%s", sep,
				       ptrec_instr_kind_name((enum ptrec_instr_kind)k), s.by_kind[k],
				       s.functions,
				       k == PTREC_INSTR_FENTRY && s.fentry_guessed
				       ? " (stripped: a call first in each function, to one target)" : "");
			sep = ",";
		}
		print_link(&elf, &s);
		ptrec_elf_close(&elf);
		return TOOL_EXIT_OK;
	}
	printf("%s: records nothing: ", path);
	const char *asked = asked_name(s.asked);
	if (s.by_kind[PTREC_INSTR_PATCHABLE])
		printf("it has %u patchable function entries (built with `ptrec cflags`) but was not "
		       "linked with `pkg-config --libs libptrec` (no __ptrec_patch_register import): "
		       "nothing registers them, so no call is written in", s.by_kind[PTREC_INSTR_PATCHABLE]);
	else if (asked && (s.asked & PTREC_ASKED_LTO))
		printf("built with %s and -flto, yet none of its %u functions calls a hook: link-time "
		       "optimization dropped the flags (GCC ignores -pg at the LTO link); rebuild with "
		       "what `ptrec cflags` prints now (doc/instrumented.md)", asked, s.functions);
	else if (asked)
		printf("built with %s, yet none of its %u functions calls a hook (all inlined, or "
		       "the flags did not reach code generation)", asked, s.functions);
	else if (!elf.has_symtab && !s.functions)
		printf("stripped and without an .eh_frame_hdr table: no function can be found; "
		       "check the unstripped file");
	else
		printf("not built with `ptrec cflags`: none of its %u functions%s calls a libptrec "
		       "hook; rebuild with `$(ptrec cflags)` on the compile line", s.functions,
		       s.from_fdes ? " (stripped: functions from .eh_frame_hdr)" : "");
	print_link(&elf, &s);
	ptrec_elf_close(&elf);
	return TOOL_EXIT_GAPS;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {TOOL_OPT_HELP, TOOL_OPT_LAST};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	int status = TOOL_EXIT_OK, files = 0;

	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		if (o == TOOL_ARGS_STOP)
			return a.status;
		if (o != TOOL_ARGS_OPERAND)
			return tool_usage_error(&a, "unexpected option");
		int r = check_one(a.arg);
		files++;
		if (r == TOOL_EXIT_INPUT || (r == TOOL_EXIT_GAPS && status == TOOL_EXIT_OK))
			status = r;
	}
	if (!files)
		return tool_no_operand(&a, "FILE");
	fflush(stdout);
	return status;
}
