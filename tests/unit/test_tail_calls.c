/* test_tail_calls.c — the tail-call frames between a frame and its caller, from the debug
 * information's call sites (symbols/dwarf_calls.c), on hand-made tables: functions A..F at
 * 0x1000, 0x2000, ... (0x100 bytes each) and their call sites.  The rules, as gdb applies
 * them: the caller's call site, found by its return address, names the function it called;
 * when the frame below runs in another function, the tail calls recorded in the called
 * function's body (and in those it jumps to) must lead there one way only; each function on
 * that chain is a frame, at the return address of its tail call, innermost first. */
#include "config.h"

#include <string.h>

#include "symbols/dwarf_line.h"
#include "check.h"

#define FN(k) (0x1000u * (k))          /* entry of function k (1 = A) */
#define AT(k, off) (FN(k) + (off))     /* an address inside it */

static struct ptrec_dwarf_func funcs[] = {
#define F(k, name) {FN(k), FN(k) + 0x100, name, FN(k)}
	F(1, "A"), F(2, "B"), F(3, "C"), F(4, "D"), F(5, "E"), F(6, "F"),
#undef F
};

static struct ptrec_dwarf_call calls[16];
static size_t ncalls;

static void call(uint64_t ret, uint64_t target, int tail)
{
	calls[ncalls++] = (struct ptrec_dwarf_call){ret, target, NULL, (uint32_t)tail, 0};
}

static struct ptrec_dwarf dw(void)
{
	struct ptrec_dwarf d;
	memset(&d, 0, sizeof(d));
	d.funcs = funcs;
	d.nfuncs = sizeof(funcs) / sizeof(funcs[0]);
	/* sorted by return address, as the reader leaves them */
	for (size_t i = 1; i < ncalls; i++)
		for (size_t j = i; j > 0 && calls[j - 1].ret > calls[j].ret; j--) {
			struct ptrec_dwarf_call t = calls[j];
			calls[j] = calls[j - 1];
			calls[j - 1] = t;
		}
	d.calls = calls;
	d.ncalls = ncalls;
	return d;
}

/* The frames between a frame in function `callee` and its caller, whose call returns to ret:
 * what the symbolizer asks (the called function from the call site, then the chain). */
static size_t between(uint64_t ret, uint64_t callee, uint64_t *out, size_t max)
{
	struct ptrec_dwarf d = dw();
	const struct ptrec_dwarf_call *c = ptrec_dwarf_call_at(&d, ret);
	return c ? ptrec_dwarf_tail_chain(&d, c->target, callee, out, max) : 0;
}

int main(void)
{
	uint64_t out[8];

	/* A calls B (returning to A+0x10); B ends in a jump to C (at B+0x20, the function's last
	 * bytes: its return address is B's end); C jumps to D. */
	ncalls = 0;
	call(AT(1, 0x10), FN(2), 0);
	call(FN(2) + 0x100, FN(3), 1);
	call(AT(3, 0x40), FN(4), 1);
	/* a frame in D whose caller returns to A+0x10: B and C jumped, innermost first */
	CHECK_EQ_U64(between(AT(1, 0x10), FN(4), out, 8), 2);
	CHECK_EQ_U64(out[0], AT(3, 0x40));
	CHECK_EQ_U64(out[1], FN(2) + 0x100);
	/* a frame in C: only B jumped */
	CHECK_EQ_U64(between(AT(1, 0x10), FN(3), out, 8), 1);
	CHECK_EQ_U64(out[0], FN(2) + 0x100);
	/* a frame in B itself, the function called: no tail call between */
	CHECK_EQ_U64(between(AT(1, 0x10), FN(2), out, 8), 0);
	/* a frame in F, which no tail call reaches: none (not a guess) */
	CHECK_EQ_U64(between(AT(1, 0x10), FN(6), out, 8), 0);
	/* a return address that is no call site's: none */
	CHECK_EQ_U64(between(AT(1, 0x11), FN(4), out, 8), 0);
	/* a chain longer than the room given: none, rather than part of it */
	CHECK_EQ_U64(between(AT(1, 0x10), FN(4), out, 1), 0);

	/* Two ways from B to E (B jumps to C or to D, both jump to E): which one ran is not known,
	 * so there is no frame; a normal call on the way (C calls E) does not count. */
	ncalls = 0;
	call(AT(1, 0x10), FN(2), 0);
	call(AT(2, 0x20), FN(3), 1);
	call(AT(2, 0x30), FN(4), 1);
	call(AT(3, 0x20), FN(5), 1);
	call(AT(4, 0x20), FN(5), 1);
	CHECK_EQ_U64(between(AT(1, 0x10), FN(5), out, 8), 0);
	ncalls = 0;
	call(AT(1, 0x10), FN(2), 0);
	call(AT(2, 0x20), FN(3), 1);
	call(AT(3, 0x20), FN(5), 0);
	CHECK_EQ_U64(between(AT(1, 0x10), FN(5), out, 8), 0);

	/* A function that jumps to itself (a loop of tail calls) before jumping on: any number of
	 * rounds fits, so no one chain; and the walk ends. */
	ncalls = 0;
	call(AT(1, 0x10), FN(2), 0);
	call(AT(2, 0x20), FN(2), 1);
	call(AT(2, 0x30), FN(3), 1);
	CHECK_EQ_U64(between(AT(1, 0x10), FN(3), out, 8), 0);

	/* Names: one function of a name gives its entry; two of one name (static functions of two
	 * files) give none. */
	struct ptrec_dwarf_name names[] = {{"dup", FN(1)}, {"dup", FN(2)}, {"one", FN(3)}};
	struct ptrec_dwarf d;
	memset(&d, 0, sizeof(d));
	d.names = names;
	d.nnames = 3;
	CHECK_EQ_U64(ptrec_dwarf_entry_by_name(&d, "one"), FN(3));
	CHECK_EQ_U64(ptrec_dwarf_entry_by_name(&d, "dup"), 0);
	CHECK_EQ_U64(ptrec_dwarf_entry_by_name(&d, "none"), 0);
	return check_done();
}
