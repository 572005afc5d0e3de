// SPDX-License-Identifier: BSD-2-Clause
/* What the renderers' unit tests share (render_fx.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_fx.h"

char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

int has_line_with(const char *text, const char *prefix, const char *sub)
{
	const char *p = text, *e;
	size_t n = strlen(prefix), k = strlen(sub);

	for (; p && *p; p = e ? e + 1 : NULL) {
		const char *q;

		e = strchr(p, '\n');
		if (strncmp(p, prefix, n))
			continue;
		for (q = p; q + k <= (e ? e : p + strlen(p)); q++)
			if (!strncmp(q, sub, k))
				return 1;
	}
	return 0;
}

int has_line(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	while (p && *p) {
		if (!strncmp(p, prefix, n))
			return 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

char *dump(json_t *j)
{
	char *s = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	size_t n = strlen(s);
	char *t = malloc(n + 2);

	memcpy(t, s, n);
	t[n] = '\n';
	t[n + 1] = '\0';
	free(s);
	json_decref(j);
	return t;
}

char *written(struct ibw_jw *w)
{
	size_t n;
	char *s = ibw_jw_finish(w, &n);
	char *t;

	assert_non_null(s);
	assert_int_equal(n, strlen(s));
	t = realloc(s, n + 2);
	assert_non_null(t);
	t[n] = '\n';
	t[n + 1] = '\0';
	return t;
}

void same_as_tree(const char *t)
{
	size_t n = strlen(t), i = 0, k, o = 0;
	char *m = malloc(2 * n + 1), *d;
	json_error_t err;
	json_t *j;

	assert_non_null(m);
	while (i < n) {
		for (k = i; k < n && t[k] >= '0' && t[k] <= '9';)
			k++;
		if (k - i >= 19 && t[i - 1] == ' ') {
			o += (size_t)sprintf(m + o, "\"\\u0001u64:%.*s\"",
					     (int)(k - i), t + i);
			i = k;
		} else if (k > i) {
			memcpy(m + o, t + i, k - i);
			o += k - i;
			i = k;
		} else {
			m[o++] = t[i++];
		}
	}
	m[o] = '\0';
	j = json_loads(m, 0, &err);
	if (!j)
		fail_msg("writer output does not parse: %s", err.text);
	free(m);
	d = dump(j);
	assert_string_equal(d, t);
	free(d);
}
