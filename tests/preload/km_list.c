// SPDX-License-Identifier: BSD-2-Clause
/* The model's port lists: see km_list.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <infiniband/mad.h>

#include "km_list.h"

static int cmp_key(const void *a, const void *b)
{
	const struct km_key *x = a, *y = b;

	if (x->lid != y->lid)
		return x->lid < y->lid ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* "LID PORT ..." of @line into @rec's key and its parser: 0 or -1. */
static int parse(const struct km_list *l, char *line, void *rec)
{
	struct km_key *k = rec;
	unsigned lid, port;
	int used;

	memset(rec, 0, l->elem);
	if (line[0] == '#' || sscanf(line, "%u %u %n", &lid, &port, &used) != 2)
		return -1;
	if ((!lid && !l->lid0) || lid >= 0xc000 || port > 254)
		return -1;
	k->lid = (uint16_t)lid;
	k->port = (uint8_t)port;
	return l->parse(line + used, rec, l->arg);
}

void km_list_reload(struct km_list *l)
{
	struct stat st;
	char line[4096], *v;
	unsigned n = 0, cap = 64;
	FILE *f;

	if (!l->path[0])
		return;
	if (stat(l->path, &st) < 0) {
		free(l->v);
		l->v = NULL;
		l->n = 0;
		return;
	}
	if (l->v && st.st_mtim.tv_sec == l->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == l->mtime.tv_nsec && st.st_size == l->size)
		return;
	f = fopen(l->path, "re");
	if (!f)
		return;
	v = calloc(cap, l->elem);
	while (v && n < l->max && fgets(line, sizeof(line), f)) {
		struct km_key *k;

		if (n == cap) {
			char *w = realloc(v, 2 * cap * l->elem);

			if (!w)
				break;
			v = w;
			cap *= 2;
		}
		k = (struct km_key *)(void *)(v + (size_t)n * l->elem);
		if (parse(l, line, k) == 0) {
			if (!k->have_t0)
				k->t0 = st.st_mtim;
			k->ord = n;
			n++;
		}
	}
	fclose(f);
	if (!v)
		return;
	qsort(v, n, l->elem, cmp_key);
	free(l->v);
	l->v = v;
	l->n = n;
	l->mtime = st.st_mtim;
	l->size = st.st_size;
}

unsigned km_list_lower_bound(const struct km_list *l, uint16_t lid,
			     unsigned port)
{
	unsigned lo = 0, hi = l->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const struct km_key *k = km_list_key(l, mid);

		if (k->lid < lid || (k->lid == lid && k->port < port))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void *km_list_find(const struct km_list *l, uint16_t lid, unsigned port)
{
	unsigned i = km_list_lower_bound(l, lid, port);

	return i < l->n && km_list_key(l, i)->lid == lid &&
			       km_list_key(l, i)->port == port
		       ? km_list_rec(l, i)
		       : NULL;
}

int km_key_word(struct km_key *k, const char *name, const char *value)
{
	double t;

	if (strcmp(name, "t0"))
		return 0;
	t = strtod(value, NULL);
	k->t0.tv_sec = (time_t)t;
	k->t0.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
	k->have_t0 = 1;
	return 1;
}

uint32_t km_field_max(int f)
{
	uint8_t buf[256] = { 0 };

	mad_set_field(buf, 0, (enum MAD_FIELDS)f, 0xffffffffu);
	return mad_get_field(buf, 0, (enum MAD_FIELDS)f);
}
