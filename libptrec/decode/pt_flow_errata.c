/* pt_flow_errata.c — the PT errata the flow decoder works around, by CPU model, and the --cpu
 * argument that names the model (see pt_flow.h). */
#include "config.h"

#include <stdlib.h>

#include "ptrec.h"
#include "decode/pt_flow.h"

/* The errata by model, as Intel's errata documents list them; the groups are libipt's table
 * (master of 2025-12, pt_config.c), whose test cases name the same parts in their cpu lines.
 * SKL168 and SKZ84 are not modelled here (the flow decoder needs nothing for them). */
struct model_errata {
	uint16_t family;
	uint8_t models[14];
	unsigned errata;
};

#define SKL (PT_ERRATUM_BDM70 | PT_ERRATUM_SKD007 | PT_ERRATUM_SKD022 | PT_ERRATUM_SKD010 | \
             PT_ERRATUM_SKL014)
static const struct model_errata table[] = {
	{6, {0x3d, 0x47, 0x4f, 0x56}, PT_ERRATUM_BDM70 | PT_ERRATUM_BDM64},
	{6, {0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6}, SKL},
	{6, {0x55, 0x6a, 0x6c}, PT_ERRATUM_BDM70 | PT_ERRATUM_SKL014 | PT_ERRATUM_SKD022},
	{6, {0x8f, 0xcf, 0xad, 0xae}, PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022},
	{6, {0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8},
	 PT_ERRATUM_BDM70 | PT_ERRATUM_SKL014 | PT_ERRATUM_SKD022},
	{6, {0x97, 0x9a, 0xba, 0xb7, 0xbf, 0xc5, 0xc6, 0xb5, 0xaa, 0xac, 0xbd, 0xcc, 0xd5},
	 PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022 | PT_ERRATUM_APL11},
	{6, {0x5c, 0x5f}, PT_ERRATUM_APL12 | PT_ERRATUM_APL11},
	{6, {0x7a, 0x86, 0x96, 0x9c, 0xb6, 0xaf, 0xdd}, PT_ERRATUM_APL11},
	{18, {0x01, 0x03}, PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022 | PT_ERRATUM_APL11},
	{19, {0x01}, PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022},
};

unsigned ptrec_pt_flow_cpu_errata(const struct ptrec_pt_flow_cpu *cpu)
{
	if (!cpu)
		return 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		for (size_t k = 0; k < sizeof(table[i].models) && table[i].models[k]; k++)
			if (table[i].family == cpu->family && table[i].models[k] == cpu->model)
				return table[i].errata;
	return 0;
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
