// SPDX-License-Identifier: BSD-2-Clause
/*
 * Silent kinds of request for the kernel and fabric model (km_silent.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "km_silent.h"

#define KMS_MAX 16

struct kind {
	uint8_t cls;
	int attr; /* -1: every attribute */
	uint8_t *lids; /* a bit a LID; NULL: every LID */
};

static struct kind kinds[KMS_MAX];
static unsigned nkinds;

static int class_of(const char *s, uint8_t *cls)
{
	char *end;
	unsigned long v;

	if (!strcmp(s, "pma"))
		*cls = 0x04;
	else if (!strcmp(s, "sma"))
		*cls = 0x01;
	else if (!strcmp(s, "sa"))
		*cls = 0x03;
	else {
		v = strtoul(s, &end, 0);
		if (end == s || *end || v > 0xff)
			return -1;
		*cls = (uint8_t)v;
	}
	return 0;
}

/* "5,7-9" into a new bitmap; NULL if malformed or out of memory. */
static uint8_t *lids_of(const char *s)
{
	uint8_t *map = calloc(65536 / 8, 1);
	unsigned long a, b;
	char *end;

	if (!map)
		return NULL;
	while (*s) {
		if (*s == ',') {
			s++;
			continue;
		}
		a = strtoul(s, &end, 0);
		if (end == s)
			goto bad;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 0);
			if (end == s + 1)
				goto bad;
			s = end;
		}
		if (*s && *s != ',')
			goto bad;
		for (; a <= b && a < 65536; a++)
			map[a / 8] |= (uint8_t)(1u << (a % 8));
	}
	return map;
bad:
	free(map);
	return NULL;
}

static int add(char *tok)
{
	struct kind k = { .attr = -1 };
	char *at = strchr(tok, '@'), *colon, *end;
	unsigned long v;

	if (nkinds == KMS_MAX)
		return -1;
	if (at) {
		*at = 0;
		k.lids = lids_of(at + 1);
		if (!k.lids)
			return -1;
	}
	colon = strchr(tok, ':');
	if (colon) {
		*colon = 0;
		v = strtoul(colon + 1, &end, 0);
		if (end == colon + 1 || *end || v > 0xffff)
			goto bad;
		k.attr = (int)v;
	}
	if (class_of(tok, &k.cls) < 0)
		goto bad;
	kinds[nkinds++] = k;
	return 0;
bad:
	free(k.lids);
	return -1;
}

int kms_init(const char *spec)
{
	char *buf, *tok, *save;
	int rc = 0;

	if (!spec || !*spec)
		return 0;
	buf = strdup(spec);
	if (!buf)
		return -1;
	for (tok = strtok_r(buf, " \t\n;", &save); tok;
	     tok = strtok_r(NULL, " \t\n;", &save)) {
		char copy[64];

		snprintf(copy, sizeof(copy), "%.63s", tok);
		if (add(tok) < 0) {
			fprintf(stderr,
				"ibw_kmodel: bad IBW_KM_SILENT entry %s "
				"(CLASS[:ATTR][@LIDS], at most %d)\n",
				copy, KMS_MAX);
			rc = -1;
		}
	}
	free(buf);
	return rc;
}

int kms_silent(uint8_t cls, uint16_t attr, uint16_t lid)
{
	unsigned i;

	for (i = 0; i < nkinds; i++) {
		const struct kind *k = &kinds[i];

		if (k->cls == cls && (k->attr < 0 || k->attr == attr) &&
		    (!k->lids || (k->lids[lid / 8] >> (lid % 8) & 1)))
			return 1;
	}
	return 0;
}
