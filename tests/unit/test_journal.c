// SPDX-License-Identifier: BSD-2-Clause
/*
 * The state file's journal (core/ctr_journal.h): what a save writes and
 * leaves out, a torn last batch, batches of another generation, and the
 * order in which batches replace ports and merge into links.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "ctr_journal.h"
#include "ctr_state.h"
#include "hash.h"
#include "links.h"

#define NPORTS 8
#define T0 (1795392000ull * 1000000)
#define STEP 10000000ull

struct rig {
	char path[64], jpath[80];
	struct ibw_port_ctrs p[NPORTS];
	/* what the journal takes: a pointer to each record */
	const struct ibw_port_ctrs *pv[NPORTS];
	uint64_t hw[NPORTS][IBW_CTR_MAX];
	struct ibw_portinfo pi;
	struct ibw_links *l;
	uint64_t now;
};

static int setup(void **state)
{
	struct rig *r = calloc(1, sizeof(*r));
	int fd, i;

	assert_non_null(r);
	strcpy(r->path, "/tmp/test_journal.XXXXXX");
	fd = mkstemp(r->path);
	assert_true(fd >= 0);
	close(fd);
	unlink(r->path);
	snprintf(r->jpath, sizeof(r->jpath), "%s.journal", r->path);
	for (i = 0; i < NPORTS; i++) {
		r->p[i].guid = 0x100 + (uint64_t)i / 2;
		r->p[i].port = (uint8_t)(i % 2 + 1);
		r->pv[i] = &r->p[i];
	}
	r->pi.state = IBW_PORT_ACTIVE;
	r->pi.phys_state = IBW_PHYS_LINKUP;
	r->pi.width_active = r->pi.width_supported = IBW_WIDTH_4X;
	r->pi.speed_active = r->pi.speed_supported = 1;
	r->l = ibw_links_new(NULL);
	assert_non_null(r->l);
	r->now = T0;
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	struct rig *r = *state;

	unlink(r->path);
	unlink(r->jpath);
	ibw_links_free(r->l);
	free(r);
	return 0;
}

/* A sweep: every port's data counters grow, its symbol errors by @err;
 * the links (port 2k to port 2k+1) take it. */
static void sweep(struct rig *r, unsigned err)
{
	struct ibw_link_end_in e[2];
	int i, k;

	r->now += STEP;
	for (i = 0; i < NPORTS; i++) {
		r->hw[i][IBW_CTR_XMIT_DATA] += 1000 * (uint64_t)(i + 1);
		r->hw[i][IBW_CTR_SYMBOL_ERRORS] += err;
		ibw_ctr_update(&r->p[i].v[IBW_CTR_XMIT_DATA],
			       r->hw[i][IBW_CTR_XMIT_DATA], 0, 4, 1);
		ibw_ctr_update(&r->p[i].v[IBW_CTR_SYMBOL_ERRORS],
			       r->hw[i][IBW_CTR_SYMBOL_ERRORS], 65535, 1, 0);
		r->p[i].updated_us = r->now;
	}
	ibw_links_begin(r->l, r->now);
	for (i = 0; i < NPORTS; i += 2) {
		memset(e, 0, sizeof(e));
		for (k = 0; k < 2; k++) {
			e[k].guid = r->p[i + k].guid;
			e[k].port = r->p[i + k].port;
			e[k].pi = &r->pi;
			e[k].have_ctrs = 1;
			e[k].ctr_us = r->now;
			e[k].tick = -1;
			e[k].err[IBW_LERR_SYMBOL] =
				r->p[i + k].v[IBW_CTR_SYMBOL_ERRORS].total;
			e[k].xmit_bytes =
				r->p[i + k].v[IBW_CTR_XMIT_DATA].total;
		}
		assert_int_equal(ibw_links_update(r->l, &e[0], &e[1]), 0);
	}
}

/* Our clear of port @i's symbol errors, acknowledged. */
static void clear(struct rig *r, int i)
{
	r->hw[i][IBW_CTR_SYMBOL_ERRORS] = 0;
	r->p[i].v[IBW_CTR_SYMBOL_ERRORS].reset_by_us = 1;
}

static uint64_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* What a restart would count from the records read back: the same as
 * from ours, reading by reading. */
static void assert_same_base(const struct ibw_port_ctrs *a,
			     const struct ibw_port_ctrs *b)
{
	int k;

	assert_true(a->guid == b->guid && a->port == b->port);
	for (k = 0; k < IBW_CTR_MAX; k++) {
		const struct ibw_ctr_val *x = ibw_ctr_val(a, k),
					 *y = ibw_ctr_val(b, k);
		unsigned s = ibw_ctr_desc(k)->scale;

		assert_true(x->total - x->raw * s == y->total - y->raw * s);
		assert_int_equal(x->reset_by_us, y->reset_by_us);
		assert_int_equal(x->have_raw, y->have_raw);
		assert_int_equal(x->resets, y->resets);
	}
}

static struct ibw_port_ctrs *load(struct rig *r, struct ibw_links *l,
				  unsigned *n, uint64_t *batches)
{
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(r->path, STEP);
	struct ibw_port_ctrs *p = NULL;
	unsigned cap, bad = 0;

	assert_non_null(j);
	assert_int_equal(ibw_ctr_journal_load(j, &p, n, &cap, l, &bad), 0);
	assert_int_equal(bad, 0);
	*batches = ibw_ctr_journal_stats(j).loaded_batches;
	ibw_ctr_journal_free(j);
	return p;
}

/* Counters that only grow write nothing; a clear writes its port. */
static void test_only_changes(void **state)
{
	struct rig *r = *state;
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(r->path, 3600 * STEP);
	struct ibw_port_ctrs *back;
	uint64_t nb;
	unsigned n, i;

	assert_non_null(j);
	sweep(r, 1);
	/* the first save is a snapshot */
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).snapshots, 1);
	assert_true(size_of(r->path) > 0);
	assert_int_equal(size_of(r->jpath), 0);
	for (i = 0; i < 5; i++) {
		sweep(r, 1);
		assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l,
						      r->now),
				 0);
	}
	assert_int_equal(size_of(r->jpath), 0);
	assert_int_equal(ibw_ctr_journal_stats(j).batches, 0);
	clear(r, 3);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).batches, 1);
	/* the reading after the clear counts it whole: written again */
	sweep(r, 1);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).batches, 2);
	sweep(r, 1);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).batches, 2);

	back = load(r, NULL, &n, &nb);
	assert_int_equal(n, NPORTS);
	assert_true(nb == 2);
	for (i = 0; i < NPORTS; i++)
		assert_same_base(&r->p[i], &back[i]);
	free(back);
	ibw_ctr_journal_free(j);
}

/* A torn last batch is dropped whole; the ones before it stay. */
static void test_torn_batch(void **state)
{
	struct rig *r = *state;
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(r->path, 3600 * STEP);
	struct ibw_port_ctrs *back, keep[NPORTS];
	uint64_t nb, whole;
	unsigned n, i;

	assert_non_null(j);
	sweep(r, 0);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	clear(r, 1);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	memcpy(keep, r->p, sizeof(keep));
	whole = size_of(r->jpath);
	/* a second batch, then cut in its middle */
	clear(r, 2);
	clear(r, 5);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).batches, 2);
	assert_true(size_of(r->jpath) > whole + 40);
	assert_int_equal(truncate(r->jpath, (off_t)(whole + 40)), 0);
	back = load(r, NULL, &n, &nb);
	assert_int_equal(n, NPORTS);
	assert_true(nb == 1);
	for (i = 0; i < NPORTS; i++)
		assert_same_base(&keep[i], &back[i]);
	free(back);

	/* a byte changed inside a whole batch: its hash refuses it */
	{
		FILE *f = fopen(r->jpath, "r+");

		assert_non_null(f);
		assert_int_equal(fseek(f, 30, SEEK_SET), 0);
		fputc('9', f);
		fclose(f);
	}
	back = load(r, NULL, &n, &nb);
	assert_true(nb == 0);
	free(back);
	ibw_ctr_journal_free(j);
}

/* A journal left from before the last snapshot (a crash between its
 * rename and the journal's truncation) is never applied. */
static void test_generation(void **state)
{
	struct rig *r = *state;
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(r->path, 3600 * STEP);
	struct ibw_port_ctrs *back;
	char cmd[256];
	uint64_t nb;
	unsigned n;

	assert_non_null(j);
	sweep(r, 0);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	clear(r, 0);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	snprintf(cmd, sizeof(cmd), "cp %s %s.old", r->jpath, r->jpath);
	assert_int_equal(system(cmd), 0);
	back = load(r, NULL, &n, &nb);
	assert_true(nb == 1);
	free(back);
	/* the next snapshot, its generation later; the old journal back */
	r->now += STEP;
	assert_int_equal(
		ibw_ctr_journal_compact(j, r->pv, NPORTS, r->l, r->now), 0);
	assert_int_equal(size_of(r->jpath), 0);
	snprintf(cmd, sizeof(cmd), "mv %s.old %s", r->jpath, r->jpath);
	assert_int_equal(system(cmd), 0);
	back = load(r, NULL, &n, &nb);
	assert_true(nb == 0);
	assert_int_equal(n, NPORTS);
	free(back);
	/* generation 0 (files of versions 1 to 3 read so) takes no journal */
	assert_int_equal(ibw_ctr_state_save(r->path, r->pv, NPORTS, NULL), 0);
	back = load(r, NULL, &n, &nb);
	assert_true(nb == 0);
	free(back);
	ibw_ctr_journal_free(j);
}

struct lines {
	char *s;
	size_t len;
};

static int cat_line(const char *line, void *arg)
{
	struct lines *t = arg;
	size_t n = strlen(line);

	t->s = realloc(t->s, t->len + n + 2);
	assert_non_null(t->s);
	memcpy(t->s + t->len, line, n);
	t->len += n;
	t->s[t->len++] = '\n';
	t->s[t->len] = 0;
	return 0;
}

/* Later batches win: a port's last record, a link's buckets merged
 * over the snapshot's, so the windows read back are those written. */
static void test_merge_order(void **state)
{
	struct rig *r = *state;
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(r->path, 300 * STEP);
	struct ibw_links *m = ibw_links_new(NULL);
	struct lines a = { NULL, 0 }, b = { NULL, 0 };
	struct ibw_port_ctrs *back;
	uint64_t nb;
	unsigned n, i;

	assert_non_null(j);
	assert_non_null(m);
	/* 66 minutes of sweeps, a window batch every 50 minutes: the
	 * snapshot has the first bucket, the journal the rest in two
	 * batches, the second without the first's older buckets */
	for (i = 0; i < 400; i++) {
		sweep(r, i % 7 == 0);
		if (i % 50 == 17)
			clear(r, 4);
		assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l,
						      r->now),
				 0);
	}
	assert_int_equal(ibw_ctr_journal_stats(j).snapshots, 1);
	/* a last window batch 8 h later, whose reading takes a slot */
	r->now += 3000 * STEP;
	sweep(r, 1);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).snapshots, 1);
	assert_true(ibw_ctr_journal_stats(j).batches > 4);
	back = load(r, m, &n, &nb);
	assert_int_equal(n, NPORTS);
	assert_true(nb == ibw_ctr_journal_stats(j).batches);
	for (i = 0; i < NPORTS; i++)
		assert_same_base(&r->p[i], &back[i]);
	free(back);
	assert_int_equal(ibw_links_save(r->l, cat_line, &a), 0);
	assert_int_equal(ibw_links_save(m, cat_line, &b), 0);
	assert_non_null(a.s);
	assert_non_null(b.s);
	assert_string_equal(a.s, b.s);
	free(a.s);
	free(b.s);
	ibw_links_free(m);
	ibw_ctr_journal_free(j);
}

/* A port first seen after the snapshot comes from the journal. */
static void test_new_port(void **state)
{
	struct rig *r = *state;
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(r->path, 3600 * STEP);
	struct ibw_port_ctrs *back;
	uint64_t nb;
	unsigned n;

	assert_non_null(j);
	sweep(r, 0);
	assert_int_equal(
		ibw_ctr_journal_save(j, r->pv, NPORTS - 1, r->l, r->now), 0);
	assert_int_equal(ibw_ctr_journal_save(j, r->pv, NPORTS, r->l, r->now),
			 0);
	assert_int_equal(ibw_ctr_journal_stats(j).batches, 1);
	back = load(r, NULL, &n, &nb);
	assert_int_equal(n, NPORTS);
	assert_same_base(&r->p[NPORTS - 1], &back[NPORTS - 1]);
	free(back);
	ibw_ctr_journal_free(j);
}

/* A file of version 3 (before the journal) loads, and a journal beside
 * it, even one of generation 0, is not applied. */
static void test_version3(void **state)
{
	struct rig *r = *state;
	struct ibw_port_ctrs *back;
	char text[65536], *end, line[128];
	uint64_t h = IBW_FNV1A64_INIT, nb;
	unsigned n, i;
	size_t len;
	FILE *f;

	sweep(r, 2);
	assert_int_equal(ibw_ctr_state_save(r->path, r->pv, NPORTS, NULL), 0);
	f = fopen(r->path, "r");
	assert_non_null(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	/* "ibwatch-counters 4 GEN" becomes "ibwatch-counters 3", the hash
	 * made again */
	assert_true(
		!strncmp(text, "ibwatch-counters 4 0000000000000000\n", 36));
	end = strstr(text, "\nend ");
	assert_non_null(end);
	memmove(text + 19, text + 36, strlen(text + 36) + 1);
	memcpy(text, "ibwatch-counters 3\n", 19);
	end = strstr(text, "\nend ") + 1;
	h = ibw_fnv1a64(h, text, (size_t)(end - text));
	snprintf(line, sizeof(line), "end %u 0 %016llx\n", NPORTS,
		 (unsigned long long)h);
	strcpy(end, line);
	f = fopen(r->path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	/* a whole batch of generation 0 that would change port 0 */
	{
		struct ibw_port_ctrs q = r->p[0];
		char pl[IBW_CTR_STATE_LINES_MAX];
		const char *hd = "batch 0000000000000000\n";

		q.v[IBW_CTR_SYMBOL_ERRORS].total += 1000;
		len = ibw_ctr_state_port_text(pl, sizeof(pl), &q);
		assert_true(len > 0);
		h = ibw_fnv1a64(IBW_FNV1A64_INIT, hd, strlen(hd));
		h = ibw_fnv1a64(h, pl, len);
		f = fopen(r->jpath, "w");
		assert_non_null(f);
		fprintf(f, "%s%send 1 0 %016llx\n", hd, pl,
			(unsigned long long)h);
		fclose(f);
	}
	back = load(r, NULL, &n, &nb);
	assert_int_equal(n, NPORTS);
	assert_true(nb == 0);
	for (i = 0; i < NPORTS; i++)
		assert_same_base(&r->p[i], &back[i]);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_only_changes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_torn_batch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_generation, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_merge_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_new_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version3, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
