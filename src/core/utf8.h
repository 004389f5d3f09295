/* UTF-8 decoding and encoding (string ops, .npy unicode arrays), and the
 * ASCII whitespace the string ops split and trim on. */
#ifndef AIT_CORE_UTF8_H
#define AIT_CORE_UTF8_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The code point at s (n bytes left) in *cp; its length, 0 when s does not
 * start with a valid UTF-8 sequence (overlong forms and surrogates are not). */
static inline int utf8_dec(const unsigned char *s, size_t n, uint32_t *cp)
{
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    int len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!len || (size_t)len > n) return 0;
    uint32_t c = len == 1 ? s[0] : s[0] & (0x7f >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return len;
}

static inline int utf8_enc(uint32_t c, char *o)
{
    if (c < 0x80) return o[0] = (char)c, 1;
    if (c < 0x800) return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), 2;
    if (c < 0x10000) {
        o[0] = (char)(0xe0 | c >> 12);
        o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | c >> 18);
    o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

static inline bool utf8_valid(const char *s)
{
    size_t n = strlen(s);
    uint32_t c;
    for (size_t i = 0; i < n;) {
        int k = utf8_dec((const unsigned char *)s + i, n - i, &c);
        if (!k) return false;
        i += (size_t)k;
    }
    return true;
}

/* Space, tab, newline, vertical tab, form feed, carriage return. */
static inline bool ascii_space(char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

#endif
