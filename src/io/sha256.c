/* SHA-256 from FIPS 180-4 section 6.2: a portable block function,
 * byte-oriented so it is independent of the host's endianness, and one with
 * the x86 SHA extensions (about 7x faster: loading an artifact hashes every
 * byte of it), chosen at run time from CPUID. */
#include "io/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SHA256_X86 1
#else
#define SHA256_X86 0
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void block_portable(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

#if SHA256_X86
/* The same compression with SHA-NI. The state lives in two registers, ABEF
 * and CDGH (the order sha256rnds2 wants); each sha256rnds2 does two rounds
 * and swaps their roles. The schedule is kept as four registers of four
 * words: group g (rounds 4g..4g+3) for g >= 4 is
 * msg2(msg1(W[g-4], W[g-3]) + W[t-7..t-4], W[g-1]). */
__attribute__((target("sha,sse4.1,ssse3"))) static void block_shani(uint32_t h[8], const uint8_t *p,
                                                                     size_t nblocks)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)h);       /* lanes a b c d */
    __m128i hgfe = _mm_loadu_si128((const __m128i *)(h + 4)); /* lanes e f g h */
    __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);             /* b a d c */
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);             /* h g f e */
    __m128i abef = _mm_alignr_epi8(badc, efgh, 8);            /* f e b a */
    __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);         /* h g d c */
    for (; nblocks; nblocks--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, m[4];
        for (int g = 0; g < 16; g++) {
            __m128i *w = &m[g & 3];
            if (g < 4) {
                *w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
            } else {
                __m128i prev = m[(g + 3) & 3], t7 = _mm_alignr_epi8(prev, m[(g + 2) & 3], 4);
                *w = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(*w, m[(g + 1) & 3]), t7),
                                          prev);
            }
            __m128i k = _mm_add_epi32(*w, _mm_loadu_si128((const __m128i *)(K + 4 * g)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)h, _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

/* Set by sha256_force_portable (tests only). */
static bool force_portable;

void sha256_force_portable(bool on) { force_portable = on; }

static int use_shani(void)
{
#if SHA256_X86
    /* Threads that race here compute the same value; atomic, so the race
     * is not a data race (artifacts may be loaded from several threads). */
    static int have = -1;
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        h = cpu_has_all("sha,sse4.2", NULL, 0);
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    return h && !force_portable;
#else
    return 0;
#endif
}

static void sha256_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
#if SHA256_X86
    if (use_shani()) {
        block_shani(h, p, nblocks);
        return;
    }
#endif
    for (; nblocks; nblocks--, p += 64) block_portable(h, p);
}

void sha256_init(sha256_ctx *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->bits = 0;
    c->nbuf = 0;
}

void sha256_update(sha256_ctx *c, const void *data, size_t len)
{
    if (!len) return; /* data may be NULL then: no pointer arithmetic on it */
    const uint8_t *p = data;
    c->bits += (uint64_t)len * 8; /* wraps mod 2^64 as the spec's length field does */
    if (c->nbuf) {
        size_t take = 64 - c->nbuf < len ? 64 - c->nbuf : len;
        memcpy(c->buf + c->nbuf, p, take);
        c->nbuf += take, p += take, len -= take;
        if (c->nbuf < 64) return;
        sha256_blocks(c->h, c->buf, 1);
        c->nbuf = 0;
    }
    sha256_blocks(c->h, p, len / 64);
    p += len / 64 * 64, len %= 64;
    if (len) memcpy(c->buf, p, len);
    c->nbuf = len;
}

void sha256_final(sha256_ctx *c, uint8_t out[SHA256_BYTES])
{
    uint64_t bits = c->bits;
    c->buf[c->nbuf++] = 0x80;
    if (c->nbuf > 56) {
        memset(c->buf + c->nbuf, 0, 64 - c->nbuf);
        sha256_blocks(c->h, c->buf, 1);
        c->nbuf = 0;
    }
    memset(c->buf + c->nbuf, 0, 56 - c->nbuf);
    for (int i = 0; i < 8; i++) c->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_blocks(c->h, c->buf, 1);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(c->h[i] >> (24 - 8 * j));
}

void sha256(const void *data, size_t len, uint8_t out[SHA256_BYTES])
{
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, data, len);
    sha256_final(&c, out);
}

void sha256_hex(const uint8_t d[SHA256_BYTES], char hex[SHA256_HEX])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < SHA256_BYTES; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = 0;
}

ait_status sha256_file(const char *path, char hex[SHA256_HEX], ait_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, AIT_E_IO, "%s: cannot open: %s", path, strerror(errno));
    sha256_ctx c;
    sha256_init(&c);
    uint8_t buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&c, buf, got);
    int bad = ferror(f);
    fclose(f);
    if (bad) return err_set(e, AIT_E_IO, "%s: read failed", path);
    uint8_t d[SHA256_BYTES];
    sha256_final(&c, d);
    sha256_hex(d, hex);
    return AIT_OK;
}
