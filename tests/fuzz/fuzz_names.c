// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: a NodeDescription of any bytes through every front end.
 * The input's first 64 octets are a switch's and a host's
 * NodeDescription answer; the name made of them is served by each
 * renderer and each output is read back by its real parser:
 *  - JSON (/api/v1/nodes, /api/v1/map, an event): jansson parses the
 *    document and finds the name in it, as the agent made it;
 *  - IBWATCH-MIB (ibwNodeName, answered by the MIB's handlers): net-snmp
 *    BER-encodes the value and parses it back, at most 255 octets of
 *    UTF-8 (IbwUtf8Name), equal to the name;
 *  - /metrics: valid UTF-8, the name in the hca and switch labels
 *    escaped as the exposition format says; with IBW_FUZZ_DUMP=DIR each
 *    input's /metrics is also written to DIR/NAME.prom for promtool
 *    (tests/integration/fuzz_names.sh runs it on the whole corpus);
 *  - a log line: the quoted name read back (backslash escapes undone)
 *    equals the name.
 * A mismatch aborts, so libFuzzer and the replay both report it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mib.h" /* net-snmp's headers first: see its xdump note */

#define xdump ibw_libibmad_xdump
#include "codec.h"
#include "events.h"
#include "fmap.h"
#include "json.h"
#include "json_events.h"
#include "json_map.h"
#include "prom.h"
#include "safename.h"
#include "snapfixture.h"
#undef xdump

#define SW 0x0002c90300000001ull
#define H1 0x0002c90300000010ull

static void die(const char *what, const char *name)
{
	fprintf(stderr, "fuzz_names: %s (name \"%s\")\n", what, name);
	abort();
}

/* jansson refuses a string that is not UTF-8 */
static int utf8_ok(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);

	json_decref(j);
	return j != NULL;
}

static struct ibw_snapshot *get_snap(void *arg)
{
	return ibw_snapshot_ref(arg);
}

/* The writer's document parsed by jansson. */
static json_t *parsed(struct ibw_jw *w, const char *name)
{
	json_error_t err;
	size_t n;
	char *text = ibw_jw_finish(w, &n);
	json_t *j;

	if (!text)
		die("a JSON writer failed", name);
	/* counters past 2^63 are numbers jansson holds only as reals */
	j = json_loadb(text, n, JSON_DECODE_INT_AS_REAL, &err);
	if (!j)
		die(err.text, name);
	free(text);
	return j;
}

static void check_json(struct ibw_snapshot *s, const char *name)
{
	struct ibw_fmap *m = ibw_fmap_build(s);
	struct ibw_event e;
	struct ibw_jw w;
	json_t *j, *x;
	size_t i;
	int seen = 0;
	char *text;

	ibw_jw_init(&w);
	ibw_json_write_nodes(&w, s);
	j = parsed(&w, name);
	json_array_foreach(j, i, x)
	{
		const char *v = json_string_value(json_object_get(x, "name"));
		const char *g = json_string_value(json_object_get(x, "guid"));

		if (g && (!strcmp(g, "0x0002c90300000001") ||
			  !strcmp(g, "0x0002c90300000010")))
			seen += v && !strcmp(v, name);
	}
	if (seen != 2)
		die("/api/v1/nodes does not name both nodes", name);
	json_decref(j);

	ibw_jw_init(&w);
	ibw_json_write_map(&w, s, m);
	json_decref(parsed(&w, name));
	ibw_fmap_free(m);

	memset(&e, 0, sizeof(e));
	e.seq = 1;
	e.time_us = T0;
	e.kind = IBW_EVT_ENDPORT_STATE;
	e.node_guid = H1;
	e.port = 1;
	snprintf(e.name, sizeof(e.name), "%s", name);
	ibw_jw_init(&w);
	ibw_json_write_events_doc(&w, 1, &e, 1);
	j = parsed(&w, name);
	x = json_array_get(json_object_get(j, "events"), 0);
	if (name[0] &&
	    strcmp(json_string_value(json_object_get(x, "name")), name))
		die("the event's name differs", name);
	json_decref(j);
	j = ibw_json_event(&e);
	text = json_dumps(j, 0);
	if (!text)
		die("the event's tree does not dump", name);
	free(text);
	json_decref(j);
}

/* ibwNodeName of the switch, BER-encoded and parsed back by net-snmp. */
static void check_mib(struct ibw_snapshot *s, const char *name)
{
	static const oid col[] = { IBW_MIB_ROOT, 1, 2, 1, 3 };
	struct ibw_local_port lp = { 0 };
	struct ibw_localport_query lq = { 0 };
	struct ibw_mib_stats st = { 0 };
	struct ibw_mib *mib = ibw_mib_new(get_snap, s, &lp, &lq, &st, NULL);
	netsnmp_variable_list *vb = calloc(1, sizeof(*vb));
	oid o[MAX_OID_LEN];
	u_char buf[600], *p, back[300], type;
	size_t olen = OID_LENGTH(col), left = sizeof(buf), blen = sizeof(back);
	size_t parsed_len = sizeof(buf);
	unsigned i;

	if (!mib || !vb)
		die("out of memory", name);
	memcpy(o, col, sizeof(col));
	/* the switch's row: rows are given in GUID order */
	o[olen] = 1;
	for (i = 0; i < s->nnode_views; i++)
		o[olen] += s->node_views[i].n->guid < SW;
	olen++;
	snmp_set_var_objid(vb, o, olen);
	if (ibw_mib_query(mib, vb, 0) != 0 || vb->type != ASN_OCTET_STR)
		die("ibwNodeName is not answered", name);
	if (vb->val_len > 255 || !utf8_ok((char *)vb->val.string, vb->val_len))
		die("ibwNodeName is no IbwUtf8Name", name);
	p = asn_build_string(buf, &left, ASN_OCTET_STR, vb->val.string,
			     vb->val_len);
	if (!p)
		die("net-snmp cannot encode ibwNodeName", name);
	parsed_len = (size_t)(p - buf);
	if (!asn_parse_string(buf, &parsed_len, &type, back, &blen) ||
	    type != ASN_OCTET_STR || blen != strlen(name) ||
	    memcmp(back, name, blen))
		die("ibwNodeName read back differs", name);
	snmp_free_varbind(vb);
	ibw_mib_free(mib);
}

/* @name as a Prometheus label value. */
static void label_escape(char *out, size_t n, const char *name)
{
	size_t o = 0;

	for (; *name && o + 3 < n; name++) {
		if (*name == '\\' || *name == '"' || *name == '\n')
			out[o++] = '\\';
		out[o++] = *name == '\n' ? 'n' : *name;
	}
	out[o] = '\0';
}

/* With IBW_FUZZ_DUMP=DIR, @len bytes at @text into DIR/HASH-SIZE.@ext,
 * named by the input (@data, @size). */
static void dump(const uint8_t *data, size_t size, const char *ext,
		 const char *text, size_t len)
{
	const char *dir = getenv("IBW_FUZZ_DUMP");
	char path[4096];
	unsigned long h = 5381;
	FILE *f;
	size_t i;

	if (!dir || !*dir)
		return;
	for (i = 0; i < size; i++)
		h = h * 33 + data[i];
	snprintf(path, sizeof(path), "%s/%016lx-%zu.%s", dir, h, size, ext);
	f = fopen(path, "w");
	if (f) {
		fwrite(text, 1, len, f);
		fclose(f);
	}
}

static void check_prom(struct ibw_snapshot *s, const char *name,
		       const uint8_t *data, size_t size)
{
	char esc[2 * IBW_NAME_SIZE], want[2 * IBW_NAME_SIZE + 16];
	size_t len;
	char *text = ibw_prom_render(s, NULL, T0, NULL, &len);

	if (!text)
		die("/metrics is not rendered", name);
	if (!utf8_ok(text, len) || strlen(text) != len)
		die("/metrics is not UTF-8 text", name);
	label_escape(esc, sizeof(esc), name);
	snprintf(want, sizeof(want), "hca=\"%s\"", esc);
	if (!strstr(text, want))
		die("no hca label names the host", name);
	snprintf(want, sizeof(want), "switch=\"%s\"", esc);
	if (!strstr(text, want))
		die("no switch label names the switch", name);
	dump(data, size, "prom", text, len);
	free(text);
}

static void check_log(const char *name)
{
	char q[IBW_NAME_QUOTED_SIZE], back[IBW_NAME_SIZE];
	size_t i, o = 0;

	ibw_name_quote(q, sizeof(q), name);
	if (q[0] != '"' || q[strlen(q) - 1] != '"' || strchr(q, '\n'))
		die("the log's quoted name is not one quoted string", name);
	for (i = 1; q[i + 1] && o + 1 < sizeof(back); i++) {
		if (q[i] == '"')
			die("a quote in the log's name is not escaped", name);
		if (q[i] == '\\')
			i++;
		back[o++] = q[i];
	}
	back[o] = '\0';
	if (strcmp(back, name))
		die("the log's name read back differs", name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	uint8_t mad[256] = { 0 };
	char name[IBW_NAME_SIZE];
	struct ibw_snapshot *s;
	unsigned i;

	if (!init) {
		/* no MIB files, no config: only the BER codec is used */
		netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
				       NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
		init = 1;
	}
	mad[0] = 1;
	mad[1] = 0x81; /* a directed-route SMP GetResp: data at 64 */
	mad[2] = 1;
	mad[3] = 0x81;
	mad[17] = 0x10;
	memcpy(mad + 64, data, size < 64 ? size : 64);
	if (ibw_nodedesc_decode(mad, sizeof(mad), name, sizeof(name)) < 0)
		die("the decoder refused a whole MAD", "");
	if (!utf8_ok(name, strlen(name)))
		die("the decoded name is not UTF-8", name);
	for (i = 0; name[i]; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			die("the decoded name holds a control byte", name);

	s = ibw_test_snapshot();
	for (i = 0; i < s->fabric->nnodes; i++)
		if (s->fabric->nodes[i].guid == SW ||
		    s->fabric->nodes[i].guid == H1)
			snprintf(s->fabric->nodes[i].desc,
				 sizeof(s->fabric->nodes[i].desc), "%s", name);
	if (ibw_snapshot_seal(s) != 0)
		die("the snapshot does not seal", name);
	/* an empty name is no name: renderers fall back to the GUID */
	if (name[0]) {
		check_json(s, name);
		check_mib(s, name);
		check_prom(s, name, data, size);
	} else {
		dump(data, size, "noname", "", 0);
	}
	check_log(name);
	ibw_snapshot_unref(s);
	return 0;
}
