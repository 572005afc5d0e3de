// SPDX-License-Identifier: BSD-2-Clause
/*
 * The JSON writer (http/jw.c) against jansson: the same bytes for many
 * keys, for every kind of scalar, and no document after a failed value.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "render_fx.h"

/* A document of @n of each scalar, written directly into @a and from
 * jansson values into @b, as an array and as an object's members. */
struct scalar_docs {
	struct ibw_jw a, b;
};

static void scalar_docs_open(struct scalar_docs *d)
{
	ibw_jw_init(&d->a);
	ibw_jw_init(&d->b);
	ibw_jw_object(&d->a);
	ibw_jw_object(&d->b);
	ibw_jw_key(&d->a, "a");
	ibw_jw_key(&d->b, "a");
	ibw_jw_array(&d->a);
	ibw_jw_array(&d->b);
}

/* Both documents must be the same bytes. */
static void scalar_docs_close(struct scalar_docs *d)
{
	char *ta, *tb;

	ibw_jw_end(&d->a);
	ibw_jw_end(&d->b);
	ibw_jw_end(&d->a);
	ibw_jw_end(&d->b);
	ta = written(&d->a);
	tb = written(&d->b);
	assert_string_equal(ta, tb);
	free(ta);
	free(tb);
}

/* A jansson value as ibw_jw_value() takes it: NULL (what jansson
 * refused to make) is left out as json_array_append_new() leaves it. */
static void tree_value(struct ibw_jw *w, json_t *v)
{
	if (v)
		ibw_jw_value(w, v);
}

/*
 * Keys are remembered by address as needing no escapes: more distinct
 * keys than the writer remembers, each used over and over among others
 * (and one that must be escaped between them), lay out as jansson's tree.
 */
void test_writer_many_keys(void **state)
{
	static char keys[1500][8];
	static const char odd[] = "k\xc3\xa9\"";
	struct ibw_jw w;
	json_t *doc = json_object(), *o;
	char *t, *u;
	int i, r;

	(void)state;
	/* in strcmp() order, as the writer wants them */
	for (i = 0; i < 1500; i++)
		snprintf(keys[i], sizeof(keys[i]), "k%04d", i);
	ibw_jw_init(&w);
	ibw_jw_object(&w);
	for (r = 0; r < 3; r++) {
		char name[8];

		snprintf(name, sizeof(name), "%c%d", r ? 'z' : 'a', r);
		o = json_object();
		ibw_jw_key(&w, r == 1 ? odd : name);
		ibw_jw_object(&w);
		for (i = 0; i < 1500; i++) {
			ibw_jw_key(&w, keys[i]);
			ibw_jw_int(&w, i * (r + 1));
			json_object_set_new(o, keys[i],
					    json_integer(i * (r + 1)));
		}
		ibw_jw_end(&w);
		json_object_set_new(doc, r == 1 ? odd : name, o);
	}
	ibw_jw_end(&w);
	t = ibw_jw_finish(&w, NULL);
	u = ibw_json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	assert_non_null(t);
	assert_non_null(u);
	assert_non_null(strstr(t, "\"k\xc3\xa9\\\"\": {"));
	assert_string_equal(t, u);
	free(t);
	free(u);
	json_decref(doc);
}

/*
 * The direct scalar writers write what jansson writes for the same
 * value: reals of every form (and random bit patterns), integers at
 * their limits, strings plain, escaped, non-ASCII and not UTF-8 (left
 * out, in an array and with its key in an object), GUIDs and times.
 */
void test_writer_scalars(void **state)
{
	static const double reals[] = {
		0.0,
		-0.0,
		1.0,
		-1.0,
		0.1,
		1e-7,
		12.5e9,
		1e12,
		999999999999.0,
		-999999999999.0,
		1e11 + 0.5,
		123456789012345.0,
		1e21,
		1e300,
		5e-324,
		1.7976931348623157e308,
		2.0 / 3.0,
		40.0,
		56.25,
		100.0,
		0.000123456789012345,
		-2.5e-15,
		9007199254740993.0,
		1e16,
		-1e-300,
		3.14159265358979,
	};
	static const char *const strs[] = {
		"",
		"plain",
		"with \"quote\"",
		"back\\slash",
		"tab\there",
		"nl\n",
		"\x01\x1f\x7f",
		"caf\xc3\xa9",
		"\xf0\x9f\x98\x80 x",
		"bad \xff",
		"\xc3",
		"a/b",
		"~}{",
	};
	static const int64_t ints[] = {
		0, 1, -1, 42, INT64_MAX, INT64_MIN, -9007199254740993ll
	};
	static const uint64_t u64s[] = { 0,
					 1,
					 9007199254740993ull,
					 9223372036854775807ull,
					 9223372036854775808ull,
					 18446744073709551615ull };
	struct scalar_docs d;
	uint64_t bits = 0x9e3779b97f4a7c15ull;
	size_t i;
	double v;

	scalar_docs_open(&d);
	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		ibw_jw_real(&d.a, reals[i]);
		tree_value(&d.b, json_real(reals[i]));
	}
	for (i = 0; i < 20000; i++) {
		bits ^= bits << 13;
		bits ^= bits >> 7;
		bits ^= bits << 17;
		memcpy(&v, &bits, sizeof(v));
		ibw_jw_real(&d.a, v); /* NaN and inf: left out */
		tree_value(&d.b, json_real(v));
		v = (double)(bits % 100000000) / 1000.0;
		ibw_jw_real(&d.a, v);
		tree_value(&d.b, json_real(v));
	}
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		ibw_jw_string(&d.a, strs[i]);
		tree_value(&d.b, json_string(strs[i]));
	}
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		ibw_jw_int(&d.a, ints[i]);
		tree_value(&d.b, json_integer(ints[i]));
	}
	for (i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++) {
		ibw_jw_u64(&d.a, u64s[i]);
		tree_value(&d.b, ibw_json_u64(u64s[i]));
		ibw_jw_guid(&d.a, u64s[i]);
		tree_value(&d.b, ibw_json_guid(u64s[i]));
		ibw_jw_time(&d.a, u64s[i] % 4102444800000000ull);
		tree_value(&d.b, ibw_json_time(u64s[i] % 4102444800000000ull));
	}
	/* the second ibw_jw_time() remembers: within it, the next, one
	 * before it and back */
	for (i = 0; i < 8; i++) {
		static const uint64_t dt[8] = { 0,	1, 999999,  1000000,
						999999, 0, 2000001, 59999999 };
		uint64_t t = 1763900000123456ull + dt[i];

		ibw_jw_time(&d.a, t);
		tree_value(&d.b, ibw_json_time(t));
	}
	ibw_jw_bool(&d.a, 1);
	tree_value(&d.b, json_true());
	ibw_jw_bool(&d.a, 0);
	tree_value(&d.b, json_false());
	ibw_jw_null(&d.a);
	tree_value(&d.b, json_null());
	ibw_jw_string(&d.a, NULL);
	scalar_docs_close(&d);

	/* in an object: a refused value takes its key with it */
	scalar_docs_open(&d);
	ibw_jw_end(&d.a);
	ibw_jw_end(&d.b);
	ibw_jw_key(&d.a, "b");
	ibw_jw_string(&d.a, "bad \xff");
	ibw_jw_key(&d.a, "c");
	ibw_jw_real(&d.a, 0.0 / 0.0);
	ibw_jw_key(&d.a, "d");
	ibw_jw_string(&d.a, "ok");
	ibw_jw_key(&d.b, "d");
	ibw_jw_value(&d.b, json_string("ok"));
	ibw_jw_key(&d.a, "e");
	ibw_jw_real(&d.a, 1.0 / 0.0);
	ibw_jw_key(&d.a, "f");
	ibw_jw_key(&d.b, "f");
	ibw_jw_object(&d.a);
	ibw_jw_object(&d.b);
	ibw_jw_key(&d.a, "x");
	ibw_jw_string(&d.a, "bad \xff");
	ibw_jw_key(&d.a, "y");
	ibw_jw_real(&d.a, 0.25);
	ibw_jw_key(&d.b, "y");
	ibw_jw_value(&d.b, json_real(0.25));
	ibw_jw_end(&d.a);
	ibw_jw_end(&d.b);
	/* a key jansson escapes */
	ibw_jw_key(&d.a, "k\xc3\xa9y \"q\"");
	ibw_jw_key(&d.b, "k\xc3\xa9y \"q\"");
	ibw_jw_int(&d.a, 1);
	ibw_jw_value(&d.b, json_integer(1));
	ibw_jw_end(&d.a);
	ibw_jw_end(&d.b);
	{
		char *ta = written(&d.a), *tb = written(&d.b);

		assert_string_equal(ta, tb);
		same_as_tree(ta);
		assert_non_null(strstr(ta, "\"k\xc3\xa9y \\\"q\\\"\": 1"));
		assert_null(strstr(ta, "\"b\""));
		free(ta);
		free(tb);
	}
	/* as the document, a refused value is an error */
	ibw_jw_init(&d.a);
	ibw_jw_string(&d.a, "bad \xff");
	assert_int_equal(d.a.err, -EINVAL);
	ibw_jw_release(&d.a);
}

/* Misuse and the document's end are refused, not written. */
void test_writer_refuses(void **state)
{
	struct ibw_jw w;
	size_t n;

	ibw_jw_init(&w);
	ibw_jw_array(&w);
	assert_null(ibw_jw_finish(&w, &n)); /* not closed */
	ibw_jw_init(&w);
	ibw_jw_object(&w);
	ibw_jw_value(&w, json_integer(1)); /* no key */
	ibw_jw_end(&w);
	assert_int_equal(w.err, -EINVAL);
	assert_null(ibw_jw_finish(&w, &n));
	ibw_jw_init(&w);
	ibw_jw_value(&w, json_integer(1));
	ibw_jw_value(&w, json_integer(2)); /* a second document */
	assert_null(ibw_jw_finish(&w, &n));
	ibw_jw_init(&w);
	ibw_jw_value(&w, NULL); /* what a failed json_*() gives */
	assert_null(ibw_jw_finish(&w, &n));
}
