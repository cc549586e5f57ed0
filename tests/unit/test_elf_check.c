/* test_elf_check.c — the one ELF header / program header / note checker (core/elf_check.h),
 * on the running test program itself and on headers and notes written out by hand from the
 * System V ABI (ELF-64 Object File Format, "Note Section"). */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/arch.h"
#include "core/elf_check.h"

/* A minimal valid ELF-64 x86-64 header with n program headers right after it. */
static Elf64_Ehdr good64(unsigned n)
{
	Elf64_Ehdr e;
	memset(&e, 0, sizeof(e));
	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ident[EI_DATA] = ELFDATA2LSB;
	e.e_ident[EI_VERSION] = EV_CURRENT;
	e.e_type = ET_DYN;
	e.e_machine = EM_X86_64;
	e.e_version = EV_CURRENT;
	e.e_entry = 0x1040;
	e.e_phoff = sizeof(e);
	e.e_phnum = (uint16_t)n;
	e.e_phentsize = sizeof(Elf64_Phdr);
	e.e_ehsize = sizeof(e);
	return e;
}

static int check(const void *p, size_t len, unsigned flags, struct ptrec_elf_hdr *h,
                 const char **why)
{
	*why = NULL;
	return ptrec_elf_hdr_check(p, len, flags, h, why);
}

int main(void)
{
	struct ptrec_elf_hdr h;
	const char *why;
	Elf64_Ehdr e;

	/* This very program: a little-endian ELF-64 executable of this machine with program
	 * headers. */
	unsigned char self[PTREC_ELF_EHDR_MAX];
	int fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0 && read(fd, self, sizeof(self)) == (ssize_t)sizeof(self));
	if (fd >= 0)
		close(fd);
	CHECK(check(self, sizeof(self), 0, &h, &why) == 0);
	CHECK(h.is64 && h.machine == PTREC_EM_HOST && h.phnum > 0 && h.phentsize == sizeof(Elf64_Phdr));
	CHECK(h.type == ET_DYN || h.type == ET_EXEC);

	/* The fields come from the header. */
	e = good64(3);
	CHECK(check(&e, sizeof(e), 0, &h, &why) == 0);
	CHECK(h.type == ET_DYN && h.entry == 0x1040 && h.phoff == 64 && h.phnum == 3);
	CHECK(ptrec_elf_phdrs_within(&h, 64 + 3 * 56));
	CHECK(!ptrec_elf_phdrs_within(&h, 64 + 3 * 56 - 1));
	e.e_phoff = UINT64_MAX - 8; /* offset + size wraps: never "within" */
	CHECK(check(&e, sizeof(e), 0, &h, &why) == 0 && !ptrec_elf_phdrs_within(&h, UINT64_MAX));

	/* Each broken rule is refused with its reason. */
	CHECK(check("hello", 5, 0, &h, &why) == -1 && !strcmp(why, "not an ELF file"));
	e = good64(1);
	CHECK(check(&e, 40, 0, &h, &why) == -1 && !strcmp(why, "truncated ELF header"));
	e.e_ident[EI_DATA] = ELFDATA2MSB;
	CHECK(check(&e, sizeof(e), 0, &h, &why) == -1 && !strcmp(why, "not a little-endian ELF file"));
	e = good64(1);
	e.e_ident[EI_VERSION] = 0;
	CHECK(check(&e, sizeof(e), 0, &h, &why) == -1 && !strcmp(why, "unknown ELF version"));
	/* Both machines whose dumps the readers take; no other. */
	e = good64(1);
	e.e_machine = EM_AARCH64;
	CHECK(check(&e, sizeof(e), 0, &h, &why) == 0 && h.machine == EM_AARCH64);
	e.e_machine = EM_RISCV;
	CHECK(check(&e, sizeof(e), 0, &h, &why) == -1 &&
	      !strcmp(why, "not an x86-64 or aarch64 ELF file"));
	e = good64(1);
	e.e_phentsize = 32;
	CHECK(check(&e, sizeof(e), 0, &h, &why) == -1 && !strcmp(why, "bad program header entry size"));
	e.e_phnum = 0; /* no program headers (a relocatable object): the entry size does not matter */
	CHECK(check(&e, sizeof(e), 0, &h, &why) == 0 && h.phnum == 0);

	/* ELF-32 only when asked for, and then only for EM_386. */
	Elf32_Ehdr e32;
	memset(&e32, 0, sizeof(e32));
	memcpy(e32.e_ident, ELFMAG, SELFMAG);
	e32.e_ident[EI_CLASS] = ELFCLASS32;
	e32.e_ident[EI_DATA] = ELFDATA2LSB;
	e32.e_ident[EI_VERSION] = EV_CURRENT;
	e32.e_machine = EM_386;
	e32.e_phoff = sizeof(e32);
	e32.e_phnum = 1;
	e32.e_phentsize = sizeof(Elf32_Phdr);
	CHECK(check(&e32, sizeof(e32), 0, &h, &why) == -1 && !strcmp(why, "not a 64-bit ELF file"));
	CHECK(check(&e32, sizeof(e32), PTREC_ELF_ALLOW32, &h, &why) == 0 && !h.is64 && h.phoff == 52);
	e32.e_machine = EM_X86_64;
	CHECK(check(&e32, sizeof(e32), PTREC_ELF_ALLOW32, &h, &why) == -1);

	/* Program headers decode the same from either class. */
	e32.e_machine = EM_386;
	CHECK(check(&e32, sizeof(e32), PTREC_ELF_ALLOW32, &h, &why) == 0);
	Elf32_Phdr p32 = {PT_LOAD, 0x1000, 0x8049000, 0x8049000, 0x200, 0x300, PF_R | PF_X, 0x1000};
	struct ptrec_elf_phdr ph;
	ptrec_elf_phdr_decode(&h, &p32, &ph);
	CHECK(ph.type == PT_LOAD && ph.flags == (PF_R | PF_X) && ph.offset == 0x1000 &&
	      ph.vaddr == 0x8049000 && ph.filesz == 0x200 && ph.memsz == 0x300);

	/* Notes: namesz, descsz, type, then name and desc each padded to 4 bytes. */
	static const unsigned char notes[] = {
		4, 0, 0, 0,  16, 0, 0, 0,  1, 0, 0, 0,  'G', 'N', 'U', 0, /* NT_GNU_ABI_TAG */
		0, 0, 0, 0,  3, 0, 0, 0,  6, 0, 0, 0,  32, 0, 0, 0,
		4, 0, 0, 0,  5, 0, 0, 0,  3, 0, 0, 0,  'G', 'N', 'U', 0, /* NT_GNU_BUILD_ID, 5 bytes */
		0xde, 0xad, 0xbe, 0xef, 0x42, 0, 0, 0,
	};
	const uint8_t *id = NULL;
	CHECK_EQ_U64(ptrec_elf_note_build_id(notes, sizeof(notes), 20, &id), 5);
	CHECK(id == notes + 48 && id[0] == 0xde && id[4] == 0x42);
	/* An id larger than the caller's room is not returned. */
	CHECK_EQ_U64(ptrec_elf_note_build_id(notes, sizeof(notes), 4, &id), 0);
	/* A note cut short is the end of the list, never read past. */
	CHECK_EQ_U64(ptrec_elf_note_build_id(notes, sizeof(notes) - 4, 20, &id), 0);
	CHECK_EQ_U64(ptrec_elf_note_build_id(notes, 11, 20, &id), 0);
	/* A build-id owned by someone else than "GNU" is not a GNU build-id. */
	unsigned char other[sizeof(notes)];
	memcpy(other, notes, sizeof(other));
	other[12 + 32] = 'X';
	CHECK_EQ_U64(ptrec_elf_note_build_id(other, sizeof(other), 20, &id), 0);
	/* Sizes near 2^32 do not wrap the walk. */
	static const unsigned char huge[] = {4, 0, 0, 0, 0xfd, 0xff, 0xff, 0xff, 3, 0, 0, 0,
	                                     'G', 'N', 'U', 0, 1, 2, 3, 4};
	CHECK_EQ_U64(ptrec_elf_note_build_id(huge, sizeof(huge), 64, &id), 0);
	return check_done();
}
