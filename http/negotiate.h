/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Content negotiation (RFC 9110 12.5): how much a request's Accept or
 * Accept-Encoding header wants one media type or content coding, with
 * its q-values; q=0 refuses.
 */
#ifndef IBW_NEGOTIATE_H
#define IBW_NEGOTIATE_H

/*
 * The q-value, in thousandths (0 to 1000), that Accept header @accept
 * gives media type @type ("text/plain"): that of the most specific range
 * matching it (the type itself, then its type with any subtype, then
 * any type; parameters other than q are ignored). 1000 when @accept is NULL or empty (no
 * preference), 0 when no range matches. With @exact, *@exact says
 * whether a range names @type itself.
 */
int ibw_neg_media_q(const char *accept, const char *type, int *exact);

/*
 * The same for Accept-Encoding header @accept and content coding
 * @coding ("gzip", "identity"): the q of @coding, else of "*"; else 0,
 * but 1 (acceptable, least wanted: RFC 9110 12.5.3) for "identity".
 * NULL @accept: 1000 for "identity", 0 for the others.
 */
int ibw_neg_coding_q(const char *accept, const char *coding);

#endif
