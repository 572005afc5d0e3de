// SPDX-License-Identifier: BSD-2-Clause
/*
 * ibwatchd's options: one table (opt_table.c). A row names an option
 * (long option, config-file keyword, short option), says how its value
 * is read and checked, where it goes in struct opts, its default (core's
 * named constants), whether SIGHUP applies a change and its help. getopt's
 * table, the config file's keywords, --help, --dump-options and the
 * SIGHUP diff are all made from it. The file holds "name = value"
 * lines, is read first, and the command line overrides it. Errors say
 * where: "ibwatchd: ..." or "FILE:LINE: ...".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "options.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#include "opt_err.h"
#include "opt_table.h"

enum { SRC_DEFAULT, SRC_FILE, SRC_CLI };

static void *field(struct opts *o, const struct opt *r)
{
	return (char *)o + r->off;
}

static const void *cfield(const struct opts *o, const struct opt *r)
{
	return (const char *)o + r->off;
}

/* Numbers go through memcpy: a row's field is any 4- or 8-byte integer
 * or enum (NUM() checks the size). */
static void put_num(struct opts *o, const struct opt *r, unsigned long long v)
{
	uint64_t v64 = v;
	uint32_t v32 = (uint32_t)v;

	if (r->size == sizeof(v64))
		memcpy(field(o, r), &v64, sizeof(v64));
	else
		memcpy(field(o, r), &v32, sizeof(v32));
}

static unsigned long long get_num(const struct opts *o, const struct opt *r)
{
	uint64_t v64;
	uint32_t v32;

	if (r->size == sizeof(v64)) {
		memcpy(&v64, cfield(o, r), sizeof(v64));
		return v64;
	}
	memcpy(&v32, cfield(o, r), sizeof(v32));
	return v32;
}

static void put_str(struct opts *o, const struct opt *r, const char *s)
{
	memcpy(field(o, r), &s, sizeof(s));
}

static const char *get_str(const struct opts *o, const struct opt *r)
{
	const char *s;

	memcpy(&s, cfield(o, r), sizeof(s));
	return s;
}

static unsigned *list_count(struct opts *o, const struct opt *r)
{
	return (unsigned *)((char *)o + r->count_off);
}

static unsigned list_len(const struct opts *o, const struct opt *r)
{
	return *(const unsigned *)((const char *)o + r->count_off);
}

static const char *list_get(const struct opts *o, const struct opt *r,
			    unsigned i)
{
	const char *s;

	memcpy(&s, (const char *)cfield(o, r) + i * sizeof(s), sizeof(s));
	return s;
}

static void list_put(struct opts *o, const struct opt *r, unsigned i,
		     const char *s)
{
	memcpy((char *)field(o, r) + i * sizeof(s), &s, sizeof(s));
}

/* "a, b, c" (@last ", ") or "a, b or c" (@last " or ") into @buf. */
static const char *choice_list(const struct choice *c, const char *last,
			       char *buf, size_t len)
{
	size_t n = 0;
	int w;

	buf[0] = '\0';
	for (; c->name && n < len; c++) {
		w = snprintf(buf + n, len - n, "%s%s",
			     n ? (c[1].name ? ", " : last) : "", c->name);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

/* The default as --help, --dump-options and the man pages show it, or
 * NULL when the option has none. */
static const char *default_text(const struct opt *r, char *buf, size_t len)
{
	const struct choice *c;

	if (r->def_text)
		return r->def_text;
	switch (r->type) {
	case T_UINT:
		snprintf(buf, len, "%llu", r->def);
		return buf;
	case T_CHOICE:
		for (c = r->choices; c->name; c++)
			if ((unsigned long long)c->value == r->def)
				return c->name;
		return NULL;
	case T_STRING:
	case T_LIST:
		return r->def_str;
	default:
		return NULL;
	}
}

/* Apply row @i with argument @arg (NULL for flags) from @src. */
static int apply(struct opts *o, unsigned i, const char *arg, int src)
{
	const struct opt *r = &ibw_opt_table[i];
	const struct choice *c;
	unsigned long long v;
	char name[64], list[128];
	unsigned *n;

	snprintf(name, sizeof(name), "--%s", r->name);
	switch (r->type) {
	case T_FLAG:
		put_num(o, r, get_num(o, r) | (r->bits ? r->bits : 1));
		break;
	case T_UNSET:
		put_str(o, r, NULL);
		break;
	case T_UINT:
		if (ibw_opt_parse_uint(name, arg, r->max, &v) < 0)
			return -1;
		if (v < r->min) {
			ibw_opt_err("%s must be at least %llu\n", name, r->min);
			return -1;
		}
		put_num(o, r, v * (r->scale ? r->scale : 1));
		break;
	case T_STRING:
		if (r->nonempty && !*arg) {
			ibw_opt_err("%s: empty %s\n", name, r->nonempty);
			return -1;
		}
		put_str(o, r, arg);
		break;
	case T_CHOICE:
		for (c = r->choices; c->name; c++)
			if (!strcmp(arg, c->name))
				break;
		if (!c->name) {
			ibw_opt_err("%s: '%s' is not one of %s\n", name, arg,
				    choice_list(r->choices, ", ", list,
						sizeof(list)));
			return -1;
		}
		put_num(o, r, (unsigned)c->value);
		break;
	case T_LIST:
		n = list_count(o, r);
		/* The file's list replaces the default, the command line's
		 * the file's. */
		if (o->src[i] < src)
			*n = 0;
		if (*n == r->max) {
			ibw_opt_err("%s: at most %llu values\n", name, r->max);
			return -1;
		}
		list_put(o, r, (*n)++, arg);
		break;
	case T_CUSTOM:
		if (r->parse(o, arg) < 0)
			return -1;
		break;
	}
	o->src[i] = (unsigned char)src;
	return 0;
}

static char *keep(struct opts *o, const char *s)
{
	char *d;

	if (o->nstrings == IBW_OPTS_MAX_STRINGS)
		return NULL;
	d = strdup(s);
	if (d)
		o->strings[o->nstrings++] = d;
	return d;
}

static void set_defaults(struct opts *o)
{
	const struct opt *r;
	const char *s;
	unsigned i;

	for (i = 0; i < ibw_opt_table_len; i++) {
		r = &ibw_opt_table[i];
		switch (r->type) {
		case T_UINT:
			put_num(o, r, r->def * (r->scale ? r->scale : 1));
			break;
		case T_CHOICE:
			put_num(o, r, r->def);
			break;
		case T_STRING:
			put_str(o, r, r->def_str);
			break;
		case T_LIST:
			s = r->def_str ? keep(o, r->def_str) : NULL;
			if (s)
				apply(o, i, s, SRC_DEFAULT);
			break;
		default:
			break;
		}
	}
	/* Core's link thresholds, which the option changes one by one. */
	ibw_link_thresholds_default(&o->mon.link_thresholds);
	o->mon.have_link_thresholds = 1;
	/* Not options: the engine's deadline and tries. */
	o->mon.discover.retries = -1;
	o->mon.counters.retries = -1;
}

/* The row named @name, or -1. */
static int row_of(const char *name)
{
	unsigned i;

	for (i = 0; i < ibw_opt_table_len; i++)
		if (!strcmp(ibw_opt_table[i].name, name))
			return (int)i;
	return -1;
}

static int takes_value(const struct opt *r)
{
	return r->type != T_FLAG && r->type != T_UNSET;
}

static int parse_bool(const char *s, int *b)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = 0;
			return 0;
		}
	}
	return -1;
}

struct cfg_read {
	FILE *f;
	const char *path;
	unsigned line;
	struct opts *o;
	int errors;
};

/* inih reads the file through this, so we know the line of each key. */
static char *cfg_reader(char *str, int num, void *stream)
{
	struct cfg_read *r = stream;

	r->line++;
	return fgets(str, num, r->f);
}

static int cfg_handler(void *user, const char *section, const char *name,
		       const char *value)
{
	struct cfg_read *r = user;
	int i = row_of(name), b;
	char *arg;

	ibw_opt_where("%s:%u", r->path, r->line);
	if (section && *section) {
		ibw_opt_err("sections are not used ([%s]): put '%s' at the top "
			    "level",
			    section, name);
		r->errors++;
		return 1;
	}
	if (i >= 0 && ibw_opt_table[i].when == IBW_OPT_CLI) {
		ibw_opt_err("'%s' goes only on the command line", name);
		r->errors++;
		return 1;
	}
	if (i < 0) {
		ibw_opt_err("unknown option '%s' (see ibwatch.conf(5))", name);
		r->errors++;
		return 1;
	}
	if (!takes_value(&ibw_opt_table[i])) {
		if (parse_bool(value, &b) < 0) {
			ibw_opt_err("%s: '%s' is not yes or no", name, value);
			r->errors++;
		} else if (b && apply(r->o, (unsigned)i, NULL, SRC_FILE) < 0) {
			r->errors++;
		}
		return 1;
	}
	if (!*value) {
		ibw_opt_err("%s: no value", name);
		r->errors++;
		return 1;
	}
	arg = keep(r->o, value);
	if (!arg) {
		ibw_opt_err("%s: too many values in the file (at most %d)",
			    name, IBW_OPTS_MAX_STRINGS);
		r->errors++;
		return 1;
	}
	if (apply(r->o, (unsigned)i, arg, SRC_FILE) < 0)
		r->errors++;
	return 1;
}

static int read_config(struct opts *o, const char *path, int must_exist)
{
	struct cfg_read r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.o = o;
	r.f = fopen(path, "r");
	if (!r.f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		ibw_opt_where("%s", path);
		ibw_opt_err("cannot read it: %s", strerror(errno));
		return -1;
	}
	ibw_opt_in_file(1);
	rc = ini_parse_stream(cfg_reader, &r, cfg_handler, &r);
	ibw_opt_in_file(0);
	fclose(r.f);
	if (rc > 0) {
		/* A line inih could not parse (the handler never saw it). */
		ibw_opt_where("%s:%d", path, rc);
		ibw_opt_err("not 'name = value'");
		r.errors++;
	} else if (rc < 0) {
		ibw_opt_where("%s", path);
		ibw_opt_err("cannot parse it (out of memory)");
		r.errors++;
	}
	o->config_read = 1;
	return r.errors ? -1 : 0;
}

/* The config file named on the command line, if any. */
static const char *config_arg(int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) &&
		    i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			path = argv[i] + 9;
	}
	return path;
}

/* getopt_long's tables, from ours: a long option's value is 256 + its
 * row. */
static void getopt_tables(struct option *lo, char *so, size_t solen)
{
	const struct opt *r;
	size_t i, n = 0;

	for (i = 0; i < ibw_opt_table_len; i++) {
		r = &ibw_opt_table[i];
		lo[i].name = r->name;
		lo[i].has_arg = takes_value(r) ? required_argument
					       : no_argument;
		lo[i].flag = NULL;
		lo[i].val = 256 + (int)i;
		if (r->short_name && n + 3 < solen) {
			so[n++] = r->short_name;
			if (takes_value(r))
				so[n++] = ':';
		}
	}
	memset(&lo[i], 0, sizeof(lo[i]));
	so[n] = '\0';
}

/* The row of getopt's answer @c, or -1. */
static int row_of_getopt(int c)
{
	unsigned i;

	if (c >= 256 && c < 256 + (int)ibw_opt_table_len)
		return c - 256;
	for (i = 0; i < ibw_opt_table_len; i++)
		if (ibw_opt_table[i].short_name &&
		    ibw_opt_table[i].short_name == c)
			return (int)i;
	return -1;
}

static int given(const struct opts *o, const char *name)
{
	int i = row_of(name);

	return i >= 0 && o->src[i] != SRC_DEFAULT;
}

int ibw_opts_load(int argc, char **argv, struct opts *o, char *errs,
		  size_t errlen)
{
	static struct option longopts[IBW_OPTS_MAX + 1];
	char shortopts[2 * IBW_OPTS_MAX + 1];
	const char *path = config_arg(argc, argv);
	int c, i, failed = 0;

	memset(o, 0, sizeof(*o));
	set_defaults(o);
	ibw_opt_sink(errs, errlen);

	if (read_config(o, path ? path : IBW_DEFAULT_CONFIG, path != NULL) < 0)
		failed = 1;
	o->config = path ? path : o->config_read ? IBW_DEFAULT_CONFIG : NULL;

	ibw_opt_where("ibwatchd");
	getopt_tables(longopts, shortopts, sizeof(shortopts));
	optind = 0; /* start afresh: this may run again on SIGHUP */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		/* getopt has said what is wrong with an unknown option */
		i = row_of_getopt(c);
		if (i < 0 || apply(o, (unsigned)i, optarg, SRC_CLI) < 0)
			return -1;
	}
	if (failed)
		return -1;
	if (optind < argc) {
		ibw_opt_err("unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->textfile && (o->once & 2)) {
		ibw_opt_err("--textfile and --links do not go together\n");
		return -1;
	}
	if (o->full && (!(o->once & 1) || (o->once & 2) || o->textfile)) {
		ibw_opt_err("--full goes with --once alone\n");
		return -1;
	}
	if (o->textfile)
		o->once |= 1;
	if (o->no_probes && o->once) {
		ibw_opt_err("--once needs the probes; drop "
			    "--no-probes\n");
		return -1;
	}
	/* One round decides: an endport that answers its one ping is up. */
	if (o->once && !given(o, "up-after"))
		o->mon.ping.up_after = 1;
	if (o->once && !given(o, "down-after"))
		o->mon.ping.down_after = 1;
	if (o->trace && (o->once || o->ping)) {
		ibw_opt_err("--trace goes with neither --once "
			    "nor --ping\n");
		return -1;
	}
	if (o->ping && o->once) {
		ibw_opt_err("--ping and --once do not go "
			    "together\n");
		return -1;
	}
	/* Where core reads what the table filled in. */
	o->mon.ping.targets = o->mon.ping.ntargets ? o->targets : NULL;
	o->mon.watch = o->mon.nwatch ? o->watch : NULL;
	o->mon.counters.reset_data = (o->reset_counters & 1) != 0;
	o->mon.counters.reset_errors = (o->reset_counters & 2) != 0;
	return 0;
}

void ibw_opts_free(struct opts *o)
{
	unsigned i;

	for (i = 0; i < o->nstrings; i++)
		free(o->strings[i]);
	o->nstrings = 0;
}

/* @s from column @col, words wrapped at 79 columns onto lines indented
 * to @indent. */
static void wrap(FILE *f, const char *s, int col, int indent)
{
	const char *w;
	int len;

	while (*s) {
		while (*s == ' ')
			s++;
		w = s;
		while (*s && *s != ' ')
			s++;
		len = (int)(s - w);
		if (!len)
			break;
		if (col > indent && col + 1 + len > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, w);
		col += len;
	}
	fputc('\n', f);
}

void ibw_opts_usage(FILE *f)
{
	enum { HELP_COL = 23 };
	const struct opt *r;
	char left[64], text[768], choices[128], def[32], applied[512];
	const char *d, *sighup[16];
	size_t i, n = 0, nsighup = 0;
	int col;

	fputs("usage: ibwatchd [options]\n"
	      "       ibwatchd --ping TARGET [--count N] [--ping-method M] "
	      "[--ping-type T]\n"
	      "       ibwatchd --trace TARGET [--reverse] [--confirm]\n",
	      f);
	for (i = 0; i < ibw_opt_table_len; i++) {
		r = &ibw_opt_table[i];
		if (!r->help)
			continue;
		if (r->group)
			fprintf(f, "\n%s%s", r->group, *r->group ? "\n" : "");
		if (r->short_name)
			snprintf(left, sizeof(left), "  -%c, --%s%s%s",
				 r->short_name, r->name, r->arg ? " " : "",
				 r->arg ? r->arg : "");
		else
			snprintf(left, sizeof(left), "  --%s%s%s", r->name,
				 r->arg ? " " : "", r->arg ? r->arg : "");
		d = default_text(r, def, sizeof(def));
		snprintf(text, sizeof(text), "%s%s%s%s%s%s%s%s", r->help,
			 r->choices ? ": " : "",
			 r->choices ? choice_list(r->choices, " or ", choices,
						  sizeof(choices))
				    : "",
			 d ? " (default: " : "", d ? d : "",
			 d && r->def_note ? "; " : "",
			 d && r->def_note ? r->def_note : "", d ? ")" : "");
		col = fprintf(f, "%s", left);
		if (col >= HELP_COL - 1) {
			fprintf(f, "\n");
			col = 0;
		}
		fprintf(f, "%*s", HELP_COL - col, "");
		wrap(f, text, HELP_COL, HELP_COL);
		if (r->when == IBW_OPT_SIGHUP && nsighup < ARRAY_LEN(sighup))
			sighup[nsighup++] = r->name;
	}
	applied[0] = '\0';
	for (i = 0; i < nsighup; i++)
		n += (size_t)snprintf(applied + n, sizeof(applied) - n,
				      "%s--%s",
				      !i		? ""
				      : i + 1 < nsighup ? ", "
							: " and ",
				      sighup[i]);
	snprintf(text, sizeof(text),
		 "SIGHUP reads the config file again and applies %s at once; "
		 "a change to another option needs a restart.",
		 applied);
	fputc('\n', f);
	wrap(f, text, 0, 0);
}

static const char *const when_names[] = {
	[IBW_OPT_CLI] = "cli",
	[IBW_OPT_SIGHUP] = "sighup",
	[IBW_OPT_RESTART] = "restart",
};

void ibw_opts_dump(FILE *f)
{
	const struct opt *r;
	char def[32];
	const char *d;
	size_t i;

	for (i = 0; i < ibw_opt_table_len; i++) {
		r = &ibw_opt_table[i];
		if (!r->help)
			continue;
		d = default_text(r, def, sizeof(def));
		fprintf(f, "%s\t%s\t%s\t", r->name, d ? d : "-",
			when_names[r->when]);
		if (r->short_name)
			fprintf(f, "-%c\n", r->short_name);
		else
			fprintf(f, "-\n");
	}
}

static int str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b));
}

static int differs(const struct opts *a, const struct opts *b,
		   const struct opt *r)
{
	unsigned i;

	switch (r->type) {
	case T_STRING:
	case T_UNSET:
		return str_differs(get_str(a, r), get_str(b, r));
	case T_LIST:
		if (list_len(a, r) != list_len(b, r))
			return 1;
		for (i = 0; i < list_len(a, r); i++)
			if (str_differs(list_get(a, r, i), list_get(b, r, i)))
				return 1;
		return 0;
	default:
		return memcmp(cfield(a, r), cfield(b, r), r->size) != 0;
	}
}

/* 1 when an earlier row has @r's field: the change is named there. */
static int shares_field(const struct opt *r)
{
	const struct opt *p;

	for (p = ibw_opt_table; p < r; p++)
		if (p->off == r->off)
			return 1;
	return 0;
}

void ibw_opts_diff(const struct opts *run, const struct opts *next,
		   void (*cb)(const char *name, enum ibw_opt_when when,
			      const void *arg),
		   const void *arg)
{
	const struct opt *r;
	size_t i;

	for (i = 0; i < ibw_opt_table_len; i++) {
		r = &ibw_opt_table[i];
		if (r->when == IBW_OPT_CLI || shares_field(r))
			continue;
		if (differs(run, next, r))
			cb(r->name, r->when, arg);
	}
}

/* The slot of @o->strings holding @s, or -1 (a default, the command
 * line's argv, NULL). */
static int owned(const struct opts *o, const char *s)
{
	unsigned i;

	for (i = 0; s && i < o->nstrings; i++)
		if (o->strings[i] == s)
			return (int)i;
	return -1;
}

/* @run takes @next's string for row @r, and with it the string's
 * storage; its old one goes to @next, freed with it. */
static void adopt_str(struct opts *run, struct opts *next, const struct opt *r)
{
	const char *was = get_str(run, r), *now = get_str(next, r);
	int k = owned(next, now), j = owned(run, was);

	if (!str_differs(was, now))
		return;
	if (k >= 0 && j >= 0) {
		char *old = run->strings[j]; /* @was, owned by @run */

		run->strings[j] = next->strings[k];
		next->strings[k] = old;
	} else if (k >= 0 && run->nstrings < IBW_OPTS_MAX_STRINGS) {
		run->strings[run->nstrings++] = next->strings[k];
		next->strings[k] = NULL;
	} else if (k >= 0) {
		return; /* no room: the next SIGHUP names it again */
	}
	put_str(run, r, now);
}

void ibw_opts_adopt(struct opts *run, struct opts *next)
{
	const struct opt *r;
	size_t i;

	for (i = 0; i < ibw_opt_table_len; i++) {
		r = &ibw_opt_table[i];
		if (r->when != IBW_OPT_SIGHUP)
			continue;
		/* A list would point into @next's storage: none is
		 * applied by SIGHUP. */
		if (r->type == T_STRING)
			adopt_str(run, next, r);
		else if (r->type != T_LIST && r->type != T_UNSET)
			memcpy(field(run, r), cfield(next, r), r->size);
	}
}

/* The key line of an M_Key file (@buf, NUL-terminated) into @key. No
 * message quotes the file: it holds a secret. */
static int parse_mkey(char *buf, uint64_t *key, const char *path, char *err,
		      size_t errlen)
{
	char *line, *next, *end;
	unsigned n = 0, lineno = 0, keyline = 0;
	unsigned long long v = 0;

	for (line = buf; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t\r");
		if (!*line || *line == '#')
			continue;
		if (n++) {
			snprintf(err, errlen,
				 "mkey-file %s: line %u: a second key (one "
				 "M_Key per file)",
				 path, lineno);
			return -1;
		}
		keyline = lineno;
		errno = 0;
		v = strtoull(line, &end, 0);
		end += strspn(end, " \t\r");
		if (errno || end == line || *end || *line == '-') {
			snprintf(err, errlen,
				 "mkey-file %s: line %u: not a 64-bit number "
				 "(0x-prefixed hex or decimal)",
				 path, lineno);
			return -1;
		}
	}
	if (!n) {
		snprintf(err, errlen, "mkey-file %s: no key in it", path);
		return -1;
	}
	if (!v) {
		snprintf(err, errlen,
			 "mkey-file %s: line %u: the key is 0, what SMPs "
			 "carry without one",
			 path, keyline);
		return -1;
	}
	*key = v;
	return 0;
}

int ibw_opts_read_mkey(const char *path, uint64_t *key, char *err,
		       size_t errlen)
{
	char buf[512];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, rc = -1;

	/* fstat on what we opened: the checks are about the file read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "mkey-file %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "mkey-file %s: %s", path,
			 strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "mkey-file %s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen,
			 "mkey-file %s: mode %04o lets its group or others "
			 "at the M_Key: make it 0600 (or 0400), owned by the "
			 "user ibwatchd runs as",
			 path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "mkey-file %s: %s", path,
				 strerror(errno));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len == sizeof(buf)) {
		snprintf(err, errlen,
			 "mkey-file %s: longer than %zu bytes: not an M_Key "
			 "file",
			 path, sizeof(buf) - 1);
		goto out;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "mkey-file %s: not a text file", path);
		goto out;
	}
	rc = parse_mkey(buf, key, path, err, errlen);
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return rc;
}
