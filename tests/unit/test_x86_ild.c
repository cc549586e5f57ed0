/* test_x86_ild.c — the x86 instruction-length decoder on hand-picked encodings from the SDM
 * (Vol. 2 chapter 2 and the instruction pages, Appendix A opcode maps, the APX specification):
 * every prefix, escape, ModRM/SIB/displacement and immediate rule, in 64-, 32- and 16-bit code,
 * with the branch class and direct-branch target of each.  Then properties on random bytes:
 * never more than 15 bytes, never a read past len, and every shorter len is -PTREC_ETRUNC. */
#include <stdint.h>

#include "check.h"
#include "ptrec.h"
#include "decode/x86_ild.h"

#define M64 X86_MODE_64
#define M32 X86_MODE_32
#define M16 X86_MODE_16

#define OTHER X86_IC_OTHER
#define JCC X86_IC_JCC
#define JMP X86_IC_JMP
#define CALL X86_IC_CALL
#define JIND X86_IC_JMP_IND
#define CIND X86_IC_CALL_IND
#define RET X86_IC_RET
#define FAR X86_IC_FAR
#define PTW X86_IC_PTWRITE

#define NOTARGET UINT64_MAX
#define EFORMAT (-PTREC_EFORMAT)
#define ETRUNC (-PTREC_ETRUNC)

/* One case: bytes (hex) at ip in mode → result (length or -error), class, target. */
struct tcase {
	int line;            /* source line, for the message */
	enum ptrec_x86_mode mode;  /* mode */
	uint64_t ip;         /* address of the instruction */
	const char *hex;     /* bytes, "48 89 e5" */
	int result;          /* expected length, or -PTREC_E* */
	unsigned iclass;     /* expected class when result > 0 */
	uint64_t target;     /* expected target, NOTARGET when none */
};

#define T(mode, ip, hex, res, cls, tgt) { __LINE__, mode, ip, hex, res, cls, tgt }
/* 64-bit at 0x1000, 32-bit at 0x8048000, 16-bit at 0x100, no target */
#define T64(hex, res, cls) T(M64, 0x1000, hex, res, cls, NOTARGET)
#define T32(hex, res, cls) T(M32, 0x8048000, hex, res, cls, NOTARGET)
#define T16(hex, res, cls) T(M16, 0x100, hex, res, cls, NOTARGET)

static const struct tcase cases[] = {
	/* ---- 64-bit: prefixes and REX (SDM 2.1.1, 2.2.1) ---- */
	T64("90", 1, OTHER),
	T64("48 89 e5", 3, OTHER),                        /* mov %rsp,%rbp */
	T64("48 66 89 c0", 4, OTHER),                     /* REX before 66: ignored, still a byte */
	T64("40 48 01 c0", 4, OTHER),                     /* two REX: the last counts */
	T64("66 66 66 2e 0f 1f 84 00 00 00 00 00", 12, OTHER), /* data16 data16 cs nopw */
	T64("f0 48 0f b1 0e", 5, OTHER),                  /* lock cmpxchg %rcx,(%rsi) */
	T64("f3 48 a5", 3, OTHER),                        /* rep movsq */
	T64("f2 f3 f2 ae", 4, OTHER),                     /* mixed repeated F2/F3: repne scasb */
	T64("64 48 8b 04 25 28 00 00 00", 9, OTHER),      /* mov %fs:0x28,%rax */
	/* 15-byte limit: six 66 + cs + nopw [sib+disp32] is 15; one more prefix is 16 */
	T64("66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", 15, OTHER),
	T64("66 66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", EFORMAT, 0),
	T64("66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 90", EFORMAT, 0),

	/* ---- 64-bit: immediates ---- */
	T64("b8 01 00 00 00", 5, OTHER),                  /* mov $1,%eax: iv = 32 */
	T64("66 b8 01 00", 4, OTHER),                     /* iv = 16 */
	T64("48 b8 01 02 03 04 05 06 07 08", 10, OTHER),  /* movabs: iv = 64 with REX.W */
	T64("66 48 b8 01 02 03 04 05 06 07 08", 11, OTHER), /* REX.W beats 66 */
	T64("49 bb 01 02 03 04 05 06 07 08", 10, OTHER),  /* movabs $imm,%r11 */
	T64("48 c7 c0 ff ff ff ff", 7, OTHER),            /* mov $-1,%rax: iz stays 32 */
	T64("66 c7 00 34 12", 5, OTHER),                  /* movw $0x1234,(%rax) */
	T64("48 81 c4 00 01 00 00", 7, OTHER),            /* add $0x100,%rsp */
	T64("48 83 ec 08", 4, OTHER),                     /* sub $8,%rsp */
	T64("68 00 01 00 00", 5, OTHER),                  /* push $imm32 (64-bit default) */
	T64("66 68 00 01", 4, OTHER),                     /* pushw $imm16 */
	T64("6a ff", 2, OTHER),
	T64("69 c0 10 00 00 00", 6, OTHER),               /* imul $16,%eax,%eax */
	T64("6b c0 10", 3, OTHER),
	T64("a1 88 77 66 55 44 33 22 11", 9, OTHER),      /* mov moffs64,%eax */
	T64("48 a3 88 77 66 55 44 33 22 11", 10, OTHER),  /* mov %rax,moffs64 */
	T64("67 a1 44 33 22 11", 6, OTHER),               /* moffs32 with 67 */
	T64("c8 10 00 01", 4, OTHER),                     /* enter $0x10,$1: iw + ib */
	T64("f6 00 12", 3, OTHER),                        /* testb $0x12,(%rax): F6 /0 ib */
	T64("f6 08 12", 3, OTHER),                        /* F6 /1: test alias, ib */
	T64("f6 10", 2, OTHER),                           /* notb (%rax): F6 /2, no imm */
	T64("f6 f1", 2, OTHER),                           /* div %cl */
	T64("f7 c0 00 00 01 00", 6, OTHER),               /* test $imm32,%eax */
	T64("66 f7 c0 00 01", 5, OTHER),                  /* test $imm16,%ax */
	T64("48 f7 c0 00 00 01 00", 7, OTHER),            /* test $imm32,%rax */
	T64("f7 d8", 2, OTHER),                           /* neg %eax */
	T64("48 f7 7c 24 08", 5, OTHER),                  /* idivq 8(%rsp) */
	T64("c0 e0 04", 3, OTHER),                        /* shl $4,%al */
	T64("a8 01", 2, OTHER),
	T64("66 a9 01 00", 4, OTHER),
	T64("c6 f8 05", 3, OTHER),                        /* xabort $5 */
	T64("c7 f8 00 00 00 00", 6, OTHER),               /* xbegin: fallback is no PT branch */

	/* ---- 64-bit: ModRM, SIB, displacement (SDM 2.1.5, 2.2.1.6) ---- */
	T64("8b 04 24", 3, OTHER),                        /* (%rsp): SIB */
	T64("8b 05 00 10 00 00", 6, OTHER),               /* RIP-relative */
	T64("8b 04 25 00 10 00 00", 7, OTHER),            /* SIB, no base: disp32 */
	T64("42 8b 04 2d 00 10 00 00", 8, OTHER),         /* SIB base 101 mod 00 with REX.X */
	T64("8b 44 24 08", 4, OTHER),                     /* disp8 */
	T64("8b 84 24 00 01 00 00", 7, OTHER),            /* SIB + disp32 */
	T64("8b 80 00 01 00 00", 6, OTHER),               /* disp32 */
	T64("41 8b 45 00", 4, OTHER),                     /* (%r13): mod 01 disp8, REX.B no help */
	T64("41 8b 04 24", 4, OTHER),                     /* (%r12): SIB despite REX.B */
	T64("67 8b 04 24", 4, OTHER),                     /* 32-bit addressing: same rules */
	T64("67 8b 05 00 10 00 00", 7, OTHER),            /* EIP-relative */
	T64("0f 20 c0", 3, OTHER),                        /* mov %cr0,%rax */
	T64("0f 22 05", 3, OTHER),                        /* MOV CR: mod ignored, no disp32 */
	T64("0f 21 3c", 3, OTHER),                        /* MOV DR: mod ignored, no SIB */

	/* ---- 64-bit: 0F, 0F38, 0F3A maps, 3DNow! ---- */
	T64("0f 0b", 2, OTHER),                           /* ud2 */
	T64("0f a2", 2, OTHER),                           /* cpuid */
	T64("0f b6 c0", 3, OTHER),                        /* movzbl */
	T64("0f ba e0 05", 4, OTHER),                     /* bt $5,%eax: group 8 ib */
	T64("0f a4 c2 04", 4, OTHER),                     /* shld $4 */
	T64("66 0f 70 c0 1b", 5, OTHER),                  /* pshufd ib */
	T64("66 0f 73 d8 08", 5, OTHER),                  /* psrldq $8: group 14 ib */
	T64("0f c6 c1 44", 4, OTHER),                     /* shufps ib */
	T64("0f c2 c1 01", 4, OTHER),                     /* cmpltps ib */
	T64("66 0f c4 c0 03", 5, OTHER),                  /* pinsrw ib */
	T64("0f 77", 2, OTHER),                           /* emms: no ModRM */
	T64("0f c8", 2, OTHER),                           /* bswap */
	T64("66 0f 38 00 c1", 5, OTHER),                  /* pshufb */
	T64("f2 48 0f 38 f1 c1", 6, OTHER),               /* crc32q */
	T64("66 0f 3a 0f c1 08", 6, OTHER),               /* palignr ib */
	T64("66 0f 3a 44 04 24 11", 7, OTHER),            /* pclmulqdq ib, SIB */
	T64("0f 3a cc c1 01", 5, OTHER),                  /* sha1rnds4 ib */
	T64("66 0f 78 c0 08 10", 6, OTHER),               /* extrq $8,$16: ib ib */
	T64("f2 0f 78 c1 08 10", 6, OTHER),               /* insertq ib ib */
	T64("0f 78 c1", 3, OTHER),                        /* vmread: no imm */
	T64("f3 0f b8 c1", 4, OTHER),                     /* popcnt */
	T64("0f b8 c1", EFORMAT, 0),                      /* JMPE: IA-64 only */
	T64("0f ff 00", 3, OTHER),                        /* ud0 (%rax),%eax: ModRM */
	T64("0f 0f c1 b4", 4, OTHER),                     /* pfmul: 3DNow! imm8 suffix */
	T64("0f 0f 44 24 08 9e", 6, OTHER),               /* pfadd 8(%rsp),%mm0 */
	T64("f3 0f 1e fa", 4, OTHER),                     /* endbr64 */
	T64("f3 0f a6 c8", 4, OTHER),                     /* VIA PadLock xsha1 */
	T64("0f a7 c0", 3, OTHER),                        /* VIA PadLock xstore */
	T64("0f 04", EFORMAT, 0),
	T64("0f 39", EFORMAT, 0),

	/* ---- 64-bit: opcodes invalid in 64-bit mode ---- */
	T64("06", EFORMAT, 0),
	T64("27", EFORMAT, 0),
	T64("60", EFORMAT, 0),
	T64("82 c0 01", EFORMAT, 0),
	T64("9a 00 00 00 00 10 00", EFORMAT, 0),
	T64("ea 00 00 00 00 10 00", EFORMAT, 0),
	T64("ce", EFORMAT, 0),
	T64("d4 0a", EFORMAT, 0),
	T64("d6", EFORMAT, 0),
	T64("fe 38", EFORMAT, 0),                         /* group 4 /7 */
	T64("ff 38", EFORMAT, 0),                         /* group 5 /7 */

	/* ---- 64-bit: VEX, EVEX, XOP (SDM 2.3, 2.7; AMD XOP) ---- */
	T64("c5 f8 77", 3, OTHER),                        /* vzeroupper: no ModRM */
	T64("c5 fd 6f 04 24", 5, OTHER),                  /* vmovdqa (%rsp),%ymm0 */
	T64("c5 f9 70 c0 1b", 5, OTHER),                  /* vpshufd ib (map 0F) */
	T64("c4 e3 7d 18 c1 01", 6, OTHER),               /* vinsertf128 (map 0F3A) ib */
	T64("c4 e2 79 18 05 00 10 00 00", 9, OTHER),      /* vbroadcastss RIP-rel (0F38) */
	T64("c4 e2 78 f2 c1", 5, OTHER),                  /* andn */
	T64("c4 e1 f9 7e c0", 5, OTHER),                  /* vmovq %xmm0,%rax (VEX.W) */
	T64("66 c5 f8 77", EFORMAT, 0),                   /* 66 before VEX: #UD */
	T64("48 c5 f8 77", EFORMAT, 0),                   /* REX before VEX: #UD */
	T64("f0 c4 e2 78 f2 c1", EFORMAT, 0),             /* LOCK before VEX: #UD */
	T64("c4 e0 78 00 c0", EFORMAT, 0),                /* VEX map 0 */
	T64("62 f1 7c 48 28 c1", 6, OTHER),               /* vmovaps %zmm1,%zmm0 */
	T64("62 f1 fd 48 7f 44 24 01", 8, OTHER),         /* vmovdqa64 disp8*N */
	T64("62 f3 7d 48 1f c1 00", 7, OTHER),            /* vpcmpd ib (map 0F3A) */
	T64("62 f1 7d 48 72 e0 05", 7, OTHER),            /* vpsrad $5: map 0F group ib */
	T64("62 f2 7d 48 58 84 24 00 01 00 00", 11, OTHER), /* vpbroadcastd SIB disp32 */
	T64("62 f5 7c 48 58 c1", 6, OTHER),               /* vaddph (map 5, FP16) */
	T64("66 62 f1 7c 48 28 c1", EFORMAT, 0),
	T64("8f e8 78 c0 c1 05", 6, OTHER),               /* vprotb $5 (XOP map 8: ib) */
	T64("8f e9 78 80 c1", 5, OTHER),                  /* vfrczps (XOP map 9) */
	T64("8f ea 78 10 c0 04 03 00 00", 9, OTHER),      /* bextr $imm32 (XOP map A: id) */
	T64("8f c0", 2, OTHER),                           /* pop %rax: map field < 8 */
	T64("8f 44 24 08", 4, OTHER),                     /* pop 8(%rsp) */

	/* ---- 64-bit: REX2 and EVEX map 4 (APX) ---- */
	T64("d5 00 89 c0", 4, OTHER),                     /* mov with REX2 */
	T64("d5 48 b8 01 02 03 04 05 06 07 08", 11, OTHER), /* REX2.W: movabs imm64 */
	T64("d5 80 af c0", 4, OTHER),                     /* REX2.M0=1: imul (map 1) */
	T64("d5 10 ff d0", 4, CIND),                      /* call *%r16 */
	T64("d5 11 ff e1", 4, JIND),                      /* jmp *%r25 */
	T64("d5 11 ff 50 08", 5, CIND),                   /* call *8(%r24) */
	T64("d5 00 a1 88 77 66 55 44 33 22 11", 11, JIND), /* JMPABS: PT sends a TIP for it */
	T64("d5 08 a1 88 77 66 55 44 33 22 11", EFORMAT, 0), /* REX2.W=1 A1: reserved */
	T64("d5 00 74 00", EFORMAT, 0),                   /* Jcc rel8 under REX2 */
	T64("d5 00 e8 00 00 00 00", EFORMAT, 0),          /* call rel32 under REX2 */
	T64("d5 80 85 00 00 00 00", EFORMAT, 0),          /* 0F 85 under REX2 */
	T64("48 d5 00 89 c0", EFORMAT, 0),                /* REX before REX2 */
	T64("62 f4 7c 18 01 c1", 6, OTHER),               /* add %eax,%ecx,%eax (NDD) */
	T64("62 f4 7c 18 81 c0 00 01 00 00", 10, OTHER),  /* add $imm32 */
	T64("62 f4 7d 18 81 c0 00 01", 8, OTHER),         /* pp=01 (66): imm16 */
	T64("62 f4 fd 18 81 c0 00 01 00 00", 10, OTHER),  /* W=1 beats pp=01: imm32 */
	T64("62 f4 7c 18 f7 c0 00 01 00 00", 10, OTHER),  /* test imm32 (F7 /0) */
	T64("62 f4 7c 18 f7 d8", 6, OTHER),               /* neg (F7 /3): no imm */

	/* ---- 64-bit: branches and their targets ---- */
	T(M64, 0x1000, "74 05", 2, JCC, 0x1007),
	T(M64, 0x1000, "74 fe", 2, JCC, 0x1000),
	T(M64, 0x1000, "0f 85 10 00 00 00", 6, JCC, 0x1016),
	T(M64, 0x1000, "2e 74 00", 3, JCC, 0x1003),       /* branch hint prefix */
	T(M64, 0x1000, "e3 00", 2, JCC, 0x1002),          /* jrcxz */
	T(M64, 0x1000, "67 e3 00", 3, JCC, 0x1003),       /* jecxz */
	T(M64, 0x1000, "e2 fe", 2, JCC, 0x1000),          /* loop */
	T(M64, 0x1000, "e1 fe", 2, JCC, 0x1000),          /* loope */
	T(M64, 0x1000, "e0 fe", 2, JCC, 0x1000),          /* loopne */
	T(M64, 0x1000, "eb 00", 2, JMP, 0x1002),
	T(M64, 0x1000, "e9 fb ff ff ff", 5, JMP, 0x1000),
	T(M64, 0x1000, "66 e9 00 00 00 00", 6, JMP, 0x1006), /* Intel 64: 66 ignored */
	T(M64, 0x1000, "f2 e9 00 00 00 00", 6, JMP, 0x1006), /* bnd jmp */
	T(M64, 0x1000, "e8 00 00 00 00", 5, CALL, 0x1005),
	T(M64, 0xffffffffffffff00ull, "e8 00 01 00 00", 5, CALL, 0x5), /* wraps at 2^64 */
	T(M64, 0x7ffff7a00000ull, "e8 00 00 00 80", 5, CALL, 0x7fff77a00005ull), /* negative */
	T64("ff d0", 2, CIND),                            /* call *%rax */
	T64("41 ff d3", 3, CIND),                         /* call *%r11 */
	T64("ff 15 00 10 00 00", 6, CIND),                /* call *disp(%rip) */
	T64("ff 14 c5 00 10 00 00", 7, CIND),             /* call *disp(,%rax,8) */
	T64("ff e0", 2, JIND),                            /* jmp *%rax */
	T64("3e ff e0", 3, JIND),                         /* notrack jmp *%rax */
	T64("ff 24 c5 00 10 00 00", 7, JIND),
	T64("41 ff 24 24", 4, JIND),                      /* jmp *(%r12) */
	T64("ff 18", 2, FAR),                             /* lcall *(%rax) */
	T64("ff 28", 2, FAR),                             /* ljmp *(%rax) */
	T64("48 ff 2c 24", 4, FAR),                       /* rex.W ljmp *(%rsp) */
	T64("ff 30", 2, OTHER),                           /* push (%rax) */
	T64("ff c0", 2, OTHER),                           /* inc %eax */
	T64("c3", 1, RET),
	T64("f3 c3", 2, RET),                             /* repz ret */
	T64("c2 08 00", 3, RET),
	T64("f2 c3", 2, RET),                             /* bnd ret */
	T64("66 c3", 2, RET),
	T(M64, 0x1000, "f2 e8 00 00 00 00", 6, CALL, 0x1006), /* bnd call */
	T64("0f 01 d7", 3, OTHER),                        /* enclu: the leaf decides */
	T64("0f 01 cf", 3, OTHER),                        /* encls (seamcall needs 66) */
	T64("0f 01 d4", 3, OTHER),                        /* vmfunc */
	T64("cb", 1, FAR),                                /* lret */
	T64("48 cb", 2, FAR),
	T64("ca 08 00", 3, FAR),
	T64("cc", 1, FAR),                                /* int3 */
	T64("cd 80", 2, FAR),
	T64("f1", 1, FAR),                                /* int1 */
	T64("cf", 1, FAR),                                /* iret */
	T64("48 cf", 2, FAR),                             /* iretq */
	T64("0f 05", 2, FAR),                             /* syscall */
	T64("48 0f 07", 3, FAR),                          /* sysretq */
	T64("0f 34", 2, FAR),                             /* sysenter */
	T64("48 0f 35", 3, FAR),                          /* sysexitq */
	T64("0f aa", 2, FAR),                             /* rsm */
	T64("0f 01 c1", 3, FAR),                          /* vmcall */
	T64("0f 01 c2", 3, FAR),                          /* vmlaunch */
	T64("0f 01 c3", 3, FAR),                          /* vmresume */
	T64("0f 01 c4", 3, OTHER),                        /* vmxoff */
	T64("f3 0f 01 ca", 4, FAR),                       /* FRED ERETU */
	T64("f2 0f 01 ca", 4, FAR),                       /* FRED ERETS */
	T64("0f 01 ca", 3, OTHER),                        /* clac */
	T64("f3 0f 01 ec", 4, FAR),                       /* uiret */
	T64("66 0f 01 cc", 4, FAR),                       /* tdcall */
	T64("66 0f 01 cf", 4, FAR),                       /* seamcall */
	T64("0f 01 d0", 3, OTHER),                        /* xgetbv */
	T64("0f 01 f9", 3, OTHER),                        /* rdtscp */
	T64("0f 01 10", 3, OTHER),                        /* lgdt (%rax): mod != 11 */
	T64("0f 01 15 00 10 00 00", 7, OTHER),            /* lgdt disp(%rip) */
	T64("f3 0f ae e0", 4, PTW),                       /* ptwrite %eax */
	T64("f3 48 0f ae 20", 5, PTW),                    /* ptwriteq (%rax) */
	T64("f3 0f ae 64 24 08", 6, PTW),                 /* ptwrite 8(%rsp) */
	T64("0f ae 20", 3, OTHER),                        /* xsave (%rax): no F3 */
	T64("0f ae e8", 3, OTHER),                        /* lfence */
	T64("f3 0f ae e8", 4, OTHER),                     /* incsspd: /5 */
	T64("0f 0b", 2, OTHER),                           /* ud2 is not a branch */

	/* ---- 32-bit ---- */
	T32("40", 1, OTHER),                              /* inc %eax, not REX */
	T32("48 89 e5", 1, OTHER),                        /* dec %eax; the mov is separate */
	T32("b8 01 00 00 00", 5, OTHER),
	T32("66 b8 01 00", 4, OTHER),
	T32("a1 00 10 00 00", 5, OTHER),                  /* moffs32 */
	T32("67 a1 00 10", 4, OTHER),                     /* moffs16 */
	T32("8b 04 24", 3, OTHER),
	T32("8b 05 00 10 00 00", 6, OTHER),               /* absolute disp32 */
	T32("67 8b 46 08", 4, OTHER),                     /* 16-bit addressing: 8(%bp) */
	T32("67 8b 06 00 10", 5, OTHER),                  /* mod 00 rm 110: disp16 */
	T32("67 8b 80 00 10", 5, OTHER),                  /* 0x1000(%bx,%si) */
	T32("67 8b 04", 3, OTHER),                        /* (%si): no SIB in 16-bit */
	T32("66 67 c7 07 34 12", 6, OTHER),               /* movw $0x1234,(%bx) */
	T32("c5 f8 77", 3, OTHER),                        /* vzeroupper: mod bits 11 */
	T32("c5 06", 2, OTHER),                           /* lds (%esi),%eax */
	T32("c4 06", 2, OTHER),                           /* les (%esi),%eax */
	T32("c4 05 00 10 00 00", 6, OTHER),               /* les 0x1000,%eax */
	T32("c4 e3 7d 18 c1 01", 6, OTHER),               /* VEX3 */
	T32("62 f1 7c 48 28 c1", 6, OTHER),               /* EVEX */
	T32("62 06", 2, OTHER),                           /* bound %eax,(%esi) */
	T32("8f c0", 2, OTHER),                           /* pop %eax */
	T32("8f e8 78 c0 c1 05", 6, OTHER),               /* XOP */
	T32("d5 0a", 2, OTHER),                           /* aad: no REX2 here */
	T32("d4 0a", 2, OTHER),                           /* aam */
	T32("60", 1, OTHER),
	T32("06", 1, OTHER),
	T32("27", 1, OTHER),
	T32("82 c0 01", 3, OTHER),
	T32("0f 20 00", 3, OTHER),                        /* MOV CR: mod ignored */
	T32("9a 78 56 34 12 08 00", 7, FAR),              /* lcall $8,$0x12345678 */
	T32("66 9a 34 12 08 00", 6, FAR),                 /* ptr16:16 */
	T32("ea 78 56 34 12 08 00", 7, FAR),
	T32("ce", 1, FAR),                                /* into */
	T32("ff 1d 00 10 00 00", 6, FAR),                 /* lcall *0x1000 */
	T32("ff d0", 2, CIND),
	T32("ff 25 00 10 00 00", 6, JIND),
	T32("f3 0f ae e0", 4, PTW),
	T32("c2 04 00", 3, RET),
	T(M32, 0x8048000, "e8 00 00 00 00", 5, CALL, 0x8048005),
	T(M32, 0x8048000, "66 e8 00 00", 4, CALL, 0x8004),     /* rel16: EIP truncated */
	T(M32, 0x8048000, "66 e9 fc ff", 4, JMP, 0x8000),
	T(M32, 0x8048000, "66 eb fe", 3, JMP, 0x8001),         /* rel8, 16-bit operand size */
	T(M32, 0x8048000, "74 fe", 2, JCC, 0x8048000),
	T(M32, 0x8048000, "0f 85 00 01 00 00", 6, JCC, 0x8048106),
	T(M32, 0x8048000, "66 0f 85 00 01", 5, JCC, 0x8105),
	T(M32, 0x8048000, "e3 fe", 2, JCC, 0x8048000),         /* jecxz */
	T(M32, 0x8048000, "67 e3 fd", 3, JCC, 0x8048000),      /* jcxz */
	T(M32, 0xfffffff0, "e9 10 00 00 00", 5, JMP, 0x5),     /* wraps at 2^32 */
	T32("f0 c5 fa 7f 07", EFORMAT, 0),                /* LOCK before VEX */

	/* ---- 16-bit ---- */
	T16("b8 34 12", 3, OTHER),                        /* mov $0x1234,%ax */
	T16("66 b8 78 56 34 12", 6, OTHER),
	T16("8b 46 08", 3, OTHER),                        /* 8(%bp) */
	T16("8b 06 34 12", 4, OTHER),                     /* disp16 */
	T16("8b 87 34 12", 4, OTHER),                     /* 0x1234(%bx) */
	T16("8b 04", 2, OTHER),                           /* (%si) */
	T16("67 8b 04 24", 4, OTHER),                     /* 32-bit addressing: SIB */
	T16("67 8b 05 00 10 00 00", 7, OTHER),
	T16("a1 34 12", 3, OTHER),                        /* moffs16 */
	T16("67 a1 00 10 00 00", 6, OTHER),
	T16("68 34 12", 3, OTHER),
	T16("66 68 78 56 34 12", 6, OTHER),
	T16("c8 08 00 00", 4, OTHER),
	T16("f7 c0 34 12", 4, OTHER),
	T16("c7 06 00 10 34 12", 6, OTHER),               /* movw $0x1234,0x1000 */
	T16("c5 f8 77", 3, OTHER),
	T16("c5 06 34 12", 4, OTHER),                     /* lds 0x1234,%ax */
	T16("9a 00 00 00 10", 5, FAR),                    /* lcall $0x1000,$0 */
	T16("66 9a 00 00 00 00 00 10", 8, FAR),            /* ptr16:32 */
	T16("cf", 1, FAR),
	T(M16, 0x100, "e8 fd ff", 3, CALL, 0x100),
	T(M16, 0x100, "66 e8 00 00 01 00", 6, CALL, 0x10106),  /* rel32 with 66 */
	T(M16, 0xfff0, "e9 20 00", 3, JMP, 0x0013),            /* wraps at 2^16 */
	T(M16, 0x100, "eb fe", 2, JMP, 0x100),
	T(M16, 0x100, "74 fe", 2, JCC, 0x100),
	T(M16, 0x100, "0f 84 00 01", 4, JCC, 0x204),
	T(M16, 0x100, "e2 fe", 2, JCC, 0x100),
	T16("ff d0", 2, CIND),
	T16("ff 26 00 10", 4, JIND),                      /* jmp *0x1000 */
	T16("ff 1e 00 10", 4, FAR),                       /* lcall *0x1000 */
	T16("c3", 1, RET),
};

/* Parses hex into out; returns the byte count. */
static size_t parse_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	while (*hex && n < cap) {
		while (*hex == ' ')
			hex++;
		if (!*hex)
			break;
		out[n++] = (uint8_t)strtoul((char[3]){ hex[0], hex[1], 0 }, NULL, 16);
		hex += 2;
	}
	return n;
}

static void run_cases(void)
{
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const struct tcase *c = &cases[k];
		uint8_t b[32];
		size_t n = parse_hex(c->hex, b, sizeof b);
		/* the buffer holds the instruction and 16 bytes of int3 after it: the decoder must
		 * stop by itself, not at the end of the bytes */
		uint8_t buf[48];
		memcpy(buf, b, n);
		memset(buf + n, 0xcc, sizeof buf - n);
		struct ptrec_x86_insn insn;
		memset(&insn, 0xa5, sizeof insn);
		int r = ptrec_x86_ild_decode(buf, sizeof buf, c->ip, c->mode, &insn);
		check_count++;
		int ok = r == c->result;
		if (ok && r > 0) {
			ok = insn.length == r && insn.iclass == c->iclass && insn.mode == c->mode;
			if (c->target == NOTARGET)
				ok = ok && !(insn.flags & X86_INSN_HAS_TARGET);
			else
				ok = ok && (insn.flags & X86_INSN_HAS_TARGET) && insn.target == c->target;
		}
		if (!ok) {
			check_failures++;
			fprintf(stderr, "%s:%d: [%s] mode %d: got %d %s target %#" PRIx64
			        " flags %u; want %d %s target %#" PRIx64 "\n", __FILE__, c->line,
			        c->hex, 16 << c->mode, r, r > 0 ? ptrec_x86_iclass_name(insn.iclass) : "-",
			        insn.target, insn.flags, c->result,
			        c->result > 0 ? ptrec_x86_iclass_name(c->iclass) : "-", c->target);
		}
		/* every shorter buffer of a valid instruction is reported as truncated */
		if (r > 0) {
			for (size_t len = 0; len < (size_t)r; len++) {
				int t = ptrec_x86_ild_decode(b, len, c->ip, c->mode, &insn);
				if (t != ETRUNC) {
					check_failures++;
					fprintf(stderr, "%s:%d: [%s] len %zu: got %d, want ETRUNC\n",
					        __FILE__, c->line, c->hex, len, t);
					break;
				}
			}
		}
	}
}

/* Random bytes in every mode: results stay in range, the decoder reads nothing past len
 * (each instruction is decoded again from a heap copy of exactly its length, which ASan
 * watches), every shorter len is -PTREC_ETRUNC, and more bytes after it change nothing. */
static void random_properties(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned bad_range = 0, bad_exact = 0, bad_trunc = 0;
	unsigned long ok = 0;
	for (unsigned iter = 0; iter < 200000; iter++) {
		uint8_t b[16];
		for (unsigned k = 0; k < sizeof b; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* bias towards prefixes and escapes so that the rare paths are reached */
			static const uint8_t common[] = { 0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x0f, 0x48,
			                                  0x41, 0xc4, 0xc5, 0x62, 0x8f, 0xd5, 0x38,
			                                  0x3a, 0xff };
			b[k] = (x >> 40) % 4 == 0 ? common[(x >> 20) % sizeof common] : (uint8_t)x;
		}
		enum ptrec_x86_mode mode = (enum ptrec_x86_mode)(iter % 3);
		struct ptrec_x86_insn insn;
		int r = ptrec_x86_ild_decode(b, sizeof b, 0x400000, mode, &insn);
		if (r < 0) {
			if (r != EFORMAT && r != ETRUNC)
				bad_range++;
			continue;
		}
		if (r < 1 || r > 15 || insn.length != r || insn.iclass >= X86_IC_COUNT_)
			bad_range++;
		uint8_t *exact = malloc((size_t)r);
		if (!exact)
			exit(99);
		memcpy(exact, b, (size_t)r);
		struct ptrec_x86_insn again;
		if (ptrec_x86_ild_decode(exact, (size_t)r, 0x400000, mode, &again) != r ||
		    again.iclass != insn.iclass || again.target != insn.target)
			bad_exact++;
		if (r > 1 && ptrec_x86_ild_decode(exact, (size_t)r - 1, 0x400000, mode, &again) != ETRUNC)
			bad_trunc++;
		free(exact);
		ok++;
	}
	printf("random: %lu valid instructions decoded\n", ok);
	CHECK(ok > 50000);
	CHECK(bad_range == 0);
	CHECK(bad_exact == 0);
	CHECK(bad_trunc == 0);
}

int main(void)
{
	run_cases();
	random_properties();

	CHECK_STR(ptrec_x86_iclass_name(X86_IC_OTHER), "other");
	CHECK_STR(ptrec_x86_iclass_name(X86_IC_JCC), "jcc");
	CHECK_STR(ptrec_x86_iclass_name(X86_IC_CALL_IND), "call_ind");
	CHECK_STR(ptrec_x86_iclass_name(X86_IC_PTWRITE), "ptwrite");
	CHECK_STR(ptrec_x86_iclass_name(X86_IC_COUNT_), "?");

	struct ptrec_x86_insn insn;
	uint8_t nop = 0x90;
	CHECK(ptrec_x86_ild_decode(&nop, 1, 0, (enum ptrec_x86_mode)7, &insn) == -PTREC_EINVAL);
	CHECK(ptrec_x86_ild_decode(&nop, 0, 0, X86_MODE_64, &insn) == ETRUNC);
	return check_done();
}
