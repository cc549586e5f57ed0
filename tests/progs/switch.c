/* switch.c — ptgen test program: a dense switch compiled to a jump table (an indirect jump
 * through a table), a sparse switch (compare chains), and a small bytecode interpreter. */
#include <stdio.h>

enum op { OP_PUSH, OP_ADD, OP_SUB, OP_MUL, OP_DUP, OP_SWAP, OP_DROP, OP_JNZ, OP_DEC, OP_HALT };

static long run(const int *code)
{
	long stack[16];
	int sp = 0, pc = 0;
	for (;;) {
		int op = code[pc++];
		switch (op) {
		case OP_PUSH: stack[sp++] = code[pc++]; break;
		case OP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case OP_SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case OP_MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case OP_DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case OP_SWAP: { long t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; break; }
		case OP_DROP: sp--; break;
		case OP_JNZ: { int target = code[pc++]; if (stack[sp - 1]) pc = target; break; }
		case OP_DEC: stack[sp - 1]--; break;
		case OP_HALT: return stack[sp - 1];
		default: return -1;
		}
	}
}

static int sparse(int x)
{
	switch (x) {
	case 1: return 10;
	case 100: return 20;
	case 10000: return 30;
	case 1000000: return 40;
	default: return 0;
	}
}

int main(void)
{
	/* acc = 1; n = 10; do { acc *= 2; n--; } while (n); -> 1024 */
	static const int prog[] = {
		OP_PUSH, 1, OP_PUSH, 10,       /* acc n */
		OP_SWAP, OP_PUSH, 2, OP_MUL,   /* n acc*2 */
		OP_SWAP, OP_DEC,               /* acc*2 n-1 */
		OP_JNZ, 4,
		OP_DROP, OP_HALT,
	};
	long r = run(prog);
	int s = sparse(1) + sparse(100) + sparse(10000) + sparse(1000000) + sparse(5);
	printf("interpreter=%ld sparse=%d\n", r, s);
	return r == 1024 && s == 100 ? 0 : 1;
}
