// SPDX-License-Identifier: BSD-2-Clause
#include <stdint.h>
#include <string.h>

#include "safename.h"

static const char repl[] = "\xef\xbf\xbd"; /* U+FFFD */

/* Length of the well-formed sequence at @s (at most @n bytes), 0 if the
 * sequence is ill-formed, or -(bytes seen) if @n ends a well-formed
 * prefix. *@bad is set to the length of the maximal subpart to replace. */
static int utf8_len(const uint8_t *s, size_t n, size_t *bad)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	*bad = 1;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef)
		need = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 4;
	else
		return 0; /* continuation, C0/C1 overlong lead, > U+10FFFF */
	/* Table 3-7: the second byte's range excludes overlong forms,
	 * surrogates (ED A0..BF) and code points above U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < need; i++) {
		if (i >= n)
			return -(int)i;
		if (s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return (int)need;
}

static int is_control(const uint8_t *s, int len)
{
	if (len == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0; /* C1 */
}

size_t ibw_name_sanitize(char *dst, size_t dstlen, const void *src,
			 size_t srclen)
{
	const uint8_t *s = src;
	size_t i = 0, o = 0, bad;

	while (i < srclen) {
		int len = utf8_len(s + i, srclen - i, &bad);
		const char *out = (const char *)s + i;
		size_t olen = (size_t)len;

		if (len < 0)
			break; /* cut by the end of the field: dropped */
		if (len == 0) {
			out = repl;
			olen = 3;
			len = (int)bad;
		} else if (is_control(s + i, len)) {
			out = "?";
			olen = 1;
		}
		if (o + olen > dstlen - 1)
			break;
		memcpy(dst + o, out, olen);
		o += olen;
		i += (size_t)len;
	}
	dst[o] = '\0';
	return o;
}

void ibw_name_trim(char *s)
{
	size_t len = strlen(s), i = len, need;
	uint8_t c;

	/* Back over at most three continuation bytes to the lead. */
	while (i > 0 && len - i < 3 && ((uint8_t)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return;
	c = (uint8_t)s[i - 1];
	if (c < 0xc0)
		return; /* ASCII, or more continuations than a lead allows */
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (len - (i - 1) < need)
		s[i - 1] = '\0';
}

const char *ibw_name_quote(char *dst, size_t dstlen, const char *name)
{
	size_t o = 0;
	const char *p;

	if (dstlen < 3) {
		if (dstlen)
			dst[0] = '\0';
		return dst;
	}
	dst[o++] = '"';
	for (p = name; *p; p++) {
		size_t need = (*p == '"' || *p == '\\') ? 2 : 1;

		if (o + need + 2 > dstlen)
			break;
		if (need == 2)
			dst[o++] = '\\';
		dst[o++] = *p;
	}
	dst[o] = '\0';
	ibw_name_trim(dst); /* cut short: never inside a character */
	o = strlen(dst);
	dst[o++] = '"';
	dst[o] = '\0';
	return dst;
}
