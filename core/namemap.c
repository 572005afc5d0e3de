// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namemap.h"
#include "safename.h"

#define NAME_MAX_LEN 128

struct entry {
	uint64_t guid;
	char *name;
};

struct ibw_namemap {
	struct entry *e;
	unsigned n, cap;
};

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const struct entry *)a)->guid;
	uint64_t y = ((const struct entry *)b)->guid;

	return (x > y) - (x < y);
}

void ibw_namemap_free(struct ibw_namemap *m)
{
	unsigned i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->e[i].name);
	free(m->e);
	free(m);
}

static int add(struct ibw_namemap *m, uint64_t guid, const char *name,
	       size_t len)
{
	char safe[IBW_NAME_SIZE];

	if (m->n == m->cap) {
		unsigned cap = m->cap ? m->cap * 2 : 64;
		struct entry *ne = realloc(m->e, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		m->e = ne;
		m->cap = cap;
	}
	/* Names stand in for NodeDescriptions: made safe the same way. */
	ibw_name_sanitize(safe, sizeof(safe), name, len);
	m->e[m->n].guid = guid;
	m->e[m->n].name = strdup(safe);
	if (!m->e[m->n].name)
		return -ENOMEM;
	m->n++;
	return 0;
}

/* One line: "GUID name" with the name quoted (or a bare word). */
static const char *parse_line(struct ibw_namemap *m, const char *s,
			      const char *end)
{
	char *gend;
	const char *name, *nend;
	unsigned long long guid;
	char buf[32];
	size_t glen;

	while (s < end && isspace((unsigned char)*s))
		s++;
	if (s == end || *s == '#')
		return NULL;
	for (glen = 0; s + glen < end && !isspace((unsigned char)s[glen]);
	     glen++)
		;
	if (glen >= sizeof(buf))
		return "GUID too long";
	memcpy(buf, s, glen);
	buf[glen] = '\0';
	errno = 0;
	guid = strtoull(buf, &gend, 0);
	if (errno || *gend || gend == buf || !guid)
		return "not a GUID";
	s += glen;
	while (s < end && isspace((unsigned char)*s))
		s++;
	if (s == end)
		return "GUID without a name";
	if (*s == '"') {
		name = ++s;
		nend = memchr(s, '"', (size_t)(end - s));
		if (!nend)
			return "unterminated quote";
		s = nend + 1;
	} else {
		name = s;
		while (s < end && !isspace((unsigned char)*s))
			s++;
		nend = s;
	}
	while (s < end && isspace((unsigned char)*s))
		s++;
	if (s < end && *s != '#')
		return "text after the name";
	if (nend == name)
		return "empty name";
	if (nend - name > NAME_MAX_LEN)
		return "name longer than 128 characters";
	for (s = name; s < nend; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return "control character in the name";
	if (add(m, guid, name, (size_t)(nend - name)) < 0)
		return "out of memory";
	return NULL;
}

struct ibw_namemap *ibw_namemap_parse(const char *text, size_t len,
				      const char *fname, char *err,
				      size_t errlen)
{
	struct ibw_namemap *m = calloc(1, sizeof(*m));
	const char *s = text, *end = text + len;
	unsigned lineno = 0, i;

	if (!m)
		return NULL;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		const char *why;

		lineno++;
		if (memchr(s, '\0', (size_t)(le - s)))
			why = "NUL byte";
		else
			why = parse_line(m, s, le);
		if (why) {
			if (err)
				snprintf(err, errlen, "%s:%u: %s", fname,
					 lineno, why);
			ibw_namemap_free(m);
			return NULL;
		}
		s = nl ? nl + 1 : end;
	}
	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), cmp_entry);
	/* A GUID listed twice: the later line wins, as in the diags. */
	for (i = 1; i < m->n; i++) {
		if (m->e[i].guid == m->e[i - 1].guid) {
			free(m->e[i - 1].name);
			memmove(&m->e[i - 1], &m->e[i],
				(m->n - i) * sizeof(*m->e));
			m->n--;
			i--;
		}
	}
	return m;
}

struct ibw_namemap *ibw_namemap_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	struct ibw_namemap *m;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		if (err)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (len + 4096 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 16384;
			if (cap > (64u << 20)) {
				if (err)
					snprintf(err, errlen,
						 "%s: larger than 64 MiB",
						 path);
				free(buf);
				fclose(f);
				return NULL;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	m = ibw_namemap_parse(buf ? buf : "", len, path, err, errlen);
	free(buf);
	return m;
}

const char *ibw_namemap_get(const struct ibw_namemap *m, uint64_t guid)
{
	struct entry key, *e;

	if (!m || !m->n)
		return NULL;
	key.guid = guid;
	e = bsearch(&key, m->e, m->n, sizeof(*m->e), cmp_entry);
	return e ? e->name : NULL;
}

const char *ibw_namemap_name(const struct ibw_namemap *m, uint64_t guid,
			     const char *dflt)
{
	const char *nm = ibw_namemap_get(m, guid);

	return nm ? nm : dflt;
}

unsigned ibw_namemap_count(const struct ibw_namemap *m)
{
	return m ? m->n : 0;
}
