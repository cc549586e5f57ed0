/* pt_flow_errata.c — the PT errata the flow decoder works around, by CPU model, and the --cpu
 * argument that names the model (see pt_flow.h). */
#include "config.h"

#include <stdlib.h>

#include "ptrec.h"
#include "decode/pt_flow.h"

/* Models (family 6) an erratum applies to, as Intel's errata documents list them (the cpu
 * lines of libipt's public test cases name the same parts). */
static const uint8_t skd010_models[] = {0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6};
static const uint8_t skl014_models[] = {0x4e, 0x55, 0x5e, 0x8e, 0x9e, 0x66, 0x7d, 0x7e, 0xa5,
                                        0xa6, 0x6a, 0x6c, 0x8f, 0x8c, 0x8d, 0xa7, 0xa8, 0x97,
                                        0x9a, 0xbf, 0xad, 0xae, 0xb7, 0xb5, 0xaa, 0xac, 0xcf,
                                        0xba, 0xcc, 0xbd, 0xc5, 0xc6};
static const uint8_t bdm64_models[] = {0x3d, 0x47, 0x4f, 0x56};
static const uint8_t apl11_models[] = {0x5c, 0x5f, 0x7a, 0x86, 0x96, 0x9c, 0x97, 0x9a, 0xbf,
                                       0xb6, 0xaf, 0xb7, 0xb5, 0xaa, 0xac, 0xba, 0xcc, 0xdd,
                                       0xbd, 0xc5, 0xc6};
static const uint8_t apl12_models[] = {0x5c, 0x5f};

static int model_in(unsigned model, const uint8_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == model)
			return 1;
	return 0;
}

#define MODEL_IN(m, list) model_in((m), (list), sizeof(list))

unsigned ptrec_pt_flow_cpu_errata(const struct ptrec_pt_flow_cpu *cpu)
{
	if (!cpu)
		return 0;
	if (cpu->family == 19 && cpu->model == 1)
		return PT_ERRATUM_SKL014 | PT_ERRATUM_SKD022 | PT_ERRATUM_BDM70;
	if (cpu->family != 6)
		return 0;
	unsigned e = 0, m = cpu->model;
	if (MODEL_IN(m, skd010_models))
		e |= PT_ERRATUM_SKD010 | PT_ERRATUM_SKD007;
	if (MODEL_IN(m, skl014_models))
		e |= PT_ERRATUM_SKL014 | PT_ERRATUM_SKD022 | PT_ERRATUM_BDM70;
	if (MODEL_IN(m, bdm64_models))
		e |= PT_ERRATUM_BDM64 | PT_ERRATUM_BDM70;
	if (m == 0x55)
		e |= PT_ERRATUM_BDM70;
	if (MODEL_IN(m, apl11_models))
		e |= PT_ERRATUM_APL11;
	if (MODEL_IN(m, apl12_models))
		e |= PT_ERRATUM_APL12;
	return e;
}

static int parse_num(const char *s, char **end, uint16_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long v = strtoul(s, end, 0);
	if (v > 0xffff)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int ptrec_pt_flow_parse_cpu(const char *s, struct ptrec_pt_flow_cpu *cpu)
{
	char *end;
	struct ptrec_pt_flow_cpu c = {0, 0, 0};
	if (!s || !cpu)
		return -PTREC_EINVAL;
	if (parse_num(s, &end, &c.family) || *end != '/')
		return -PTREC_EINVAL;
	if (parse_num(end + 1, &end, &c.model))
		return -PTREC_EINVAL;
	if (*end == '/') {
		if (parse_num(end + 1, &end, &c.stepping))
			return -PTREC_EINVAL;
	}
	if (*end)
		return -PTREC_EINVAL;
	*cpu = c;
	return 0;
}
