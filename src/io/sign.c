/* Signed artifacts (see sign.h): Ed25519 keys, signatures and the .sig file. */
#include "io/sign.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "io/file.h"
#include "io/publish.h"
#include "io/sha256.h"

#define SIG_BYTES 64
#define KEY_BYTES 32
#define FILE_MAX 65536 /* a key or a .sig file is a few hundred bytes */

/* libcrypto's last error, for a message. */
static const char *ossl_why(void)
{
    static _Thread_local char buf[160];
    unsigned long c = ERR_get_error();
    if (!c) return "libcrypto failed";
    ERR_error_string_n(c, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

typedef struct blob_job {
    const void *bytes;
    size_t len;
    int mode;
} blob_job;

static int write_body(void *arg, int fd)
{
    const blob_job *j = arg;
    if (fchmod(fd, (mode_t)j->mode) != 0) return 0;
    const char *p = j->bytes;
    for (size_t done = 0; done < j->len;) {
        ssize_t n = write(fd, p + done, j->len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        done += (size_t)n;
    }
    return 1;
}

/* Publishes bytes as path (whole or not at all), with mode. */
static ait_status write_file(const char *path, const void *bytes, size_t len, int mode,
                             ait_error *e)
{
    char tmp[1][PUBLISH_PATH_MAX];
    blob_job j = {bytes, len, mode};
    TRY(publish_stage(path, write_body, &j, tmp[0], e));
    const char *paths[1] = {path};
    return publish_commit(1, tmp, paths, e);
}

/* A PEM file's key: private or public, Ed25519 only. */
static ait_status read_key(const char *path, int private, EVP_PKEY **out, ait_error *e)
{
    uint8_t *buf;
    size_t len;
    TRY(file_read_all(path, FILE_MAX, &buf, &len, e));
    BIO *bio = BIO_new_mem_buf(buf, (int)len);
    EVP_PKEY *k = !bio ? NULL : private ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)
                                        : PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    free(buf);
    if (!k)
        return err_set(e, AIT_E_PARSE, "%s: not a PEM %s key (%s)", path,
                       private ? "private" : "public", ossl_why());
    if (EVP_PKEY_get_id(k) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(k);
        return err_set(e, AIT_E_UNSUPPORTED, "%s: not an Ed25519 key (ait keygen makes one)", path);
    }
    *out = k;
    return AIT_OK;
}

/* The hex sha256 of k's raw public key: the key's id in .sig files. */
static ait_status key_id(EVP_PKEY *k, char *hex, ait_error *e)
{
    uint8_t raw[KEY_BYTES], d[SHA256_BYTES];
    size_t n = sizeof raw;
    if (EVP_PKEY_get_raw_public_key(k, raw, &n) != 1 || n != KEY_BYTES)
        return err_set(e, AIT_E_INTERNAL, "reading an Ed25519 public key: %s", ossl_why());
    sha256(raw, n, d);
    sha256_hex(d, hex);
    return AIT_OK;
}

/* SIGN_CONTEXT with its NUL, then the header: what is signed (caller frees). */
static uint8_t *message(const uint8_t *header, size_t len, size_t *n)
{
    *n = sizeof SIGN_CONTEXT + len;
    uint8_t *m = malloc(*n);
    if (m) {
        memcpy(m, SIGN_CONTEXT, sizeof SIGN_CONTEXT);
        memcpy(m + sizeof SIGN_CONTEXT, header, len);
    }
    return m;
}

/* A key's PEM text (caller frees) via bio-writing f. */
static char *pem_of(EVP_PKEY *k, int private, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *out = NULL, *p;
    int ok = bio && (private ? PEM_write_bio_PrivateKey(bio, k, NULL, NULL, 0, NULL, NULL)
                             : PEM_write_bio_PUBKEY(bio, k));
    long n = ok ? BIO_get_mem_data(bio, &p) : 0;
    if (n > 0 && (out = malloc((size_t)n))) {
        memcpy(out, p, (size_t)n);
        *len = (size_t)n;
    }
    BIO_free(bio);
    return out;
}

ait_status sign_keygen(const char *base, ait_error *e)
{
    char priv[PUBLISH_PATH_MAX], pub[PUBLISH_PATH_MAX];
    if (snprintf(priv, sizeof priv, "%s.pem", base) >= (int)sizeof priv ||
        snprintf(pub, sizeof pub, "%s.pub", base) >= (int)sizeof pub)
        return err_set(e, AIT_E_INVALID_ARG, "%s: path too long", base);
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    if (!c || EVP_PKEY_keygen_init(c) != 1 || EVP_PKEY_keygen(c, &k) != 1) {
        EVP_PKEY_CTX_free(c);
        return err_set(e, AIT_E_INTERNAL, "making an Ed25519 key: %s", ossl_why());
    }
    EVP_PKEY_CTX_free(c);
    size_t n1 = 0, n2 = 0;
    char *t1 = pem_of(k, 1, &n1), *t2 = pem_of(k, 0, &n2);
    EVP_PKEY_free(k);
    ait_status s = t1 && t2 ? AIT_OK : err_set(e, AIT_E_NOMEM, "writing a key: %s", ossl_why());
    if (s == AIT_OK) s = write_file(priv, t1, n1, 0600, e);
    if (s == AIT_OK) s = write_file(pub, t2, n2, 0644, e);
    free(t1);
    free(t2);
    return s;
}

static void to_hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static int from_hex(const char *s, uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdef", s[2 * i]) ||
            !s[2 * i + 1] || !strchr("0123456789abcdef", s[2 * i + 1]))
            return 0;
        b[i] = (uint8_t)v;
    }
    return 1;
}

ait_status sign_header(const char *path, const uint8_t *header, size_t len, const char *key_pem,
                       ait_error *e)
{
    char sig_path[PUBLISH_PATH_MAX], id[SHA256_HEX];
    if (snprintf(sig_path, sizeof sig_path, "%s" SIGN_SUFFIX, path) >= (int)sizeof sig_path)
        return err_set(e, AIT_E_INVALID_ARG, "%s: path too long", path);
    EVP_PKEY *k;
    TRY(read_key(key_pem, 1, &k, e));
    size_t mlen, slen = SIG_BYTES;
    uint8_t *msg = message(header, len, &mlen), sig[SIG_BYTES];
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    ait_status s = key_id(k, id, e);
    if (s == AIT_OK && (!msg || !c)) s = err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK && (EVP_DigestSignInit(c, NULL, NULL, NULL, k) != 1 ||
                        EVP_DigestSign(c, sig, &slen, msg, mlen) != 1 || slen != SIG_BYTES))
        s = err_set(e, AIT_E_INTERNAL, "%s: signing: %s", path, ossl_why());
    EVP_MD_CTX_free(c);
    EVP_PKEY_free(k);
    free(msg);
    if (s != AIT_OK) return s;
    char text[64 + SHA256_HEX + 2 * SIG_BYTES + 1], hex[2 * SIG_BYTES + 1];
    to_hex(sig, SIG_BYTES, hex);
    int n = snprintf(text, sizeof text, "ait-signature 1\nkey %s\nsig %s\n", id, hex);
    return write_file(sig_path, text, (size_t)n, 0644, e);
}

ait_status sign_verify(const char *path, const uint8_t *header, size_t len, const char *pub_pem,
                       ait_error *e)
{
    char sig_path[PUBLISH_PATH_MAX], id[SHA256_HEX];
    if (snprintf(sig_path, sizeof sig_path, "%s" SIGN_SUFFIX, path) >= (int)sizeof sig_path)
        return err_set(e, AIT_E_INVALID_ARG, "%s: path too long", path);
    EVP_PKEY *k;
    TRY(read_key(pub_pem, 0, &k, e));
    ait_status s = key_id(k, id, e);
    uint8_t *text = NULL;
    size_t tlen = 0;
    struct stat st;
    if (s == AIT_OK && stat(sig_path, &st) != 0 && errno == ENOENT)
        s = err_set(e, AIT_E_SECURITY, "%s: not signed (no %s), and a trusted key is required",
                    path, sig_path);
    if (s == AIT_OK) s = file_read_all(sig_path, FILE_MAX, &text, &tlen, e);
    char *t = NULL, kid[SHA256_HEX] = "", shex[2 * SIG_BYTES + 1] = "";
    uint8_t sig[SIG_BYTES];
    if (s == AIT_OK && !(t = strndup((const char *)text, tlen)))
        s = err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK && (sscanf(t, "ait-signature 1\nkey %64s\nsig %128s\n", kid, shex) != 2 ||
                        strlen(kid) != 64 || strlen(shex) != 2 * SIG_BYTES ||
                        !from_hex(shex, sig, SIG_BYTES)))
        s = err_set(e, AIT_E_PARSE, "%s: not an ait signature file", sig_path);
    if (s == AIT_OK && strcmp(kid, id) != 0)
        s = err_set(e, AIT_E_SECURITY, "%s: signed by key %.16s..., not by the trusted key %.16s... "
                    "(%s)", path, kid, id, pub_pem);
    size_t mlen;
    uint8_t *msg = s == AIT_OK ? message(header, len, &mlen) : NULL;
    EVP_MD_CTX *c = msg ? EVP_MD_CTX_new() : NULL;
    if (s == AIT_OK && !c) s = err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK && (EVP_DigestVerifyInit(c, NULL, NULL, NULL, k) != 1 ||
                        EVP_DigestVerify(c, sig, SIG_BYTES, msg, mlen) != 1)) {
        ERR_clear_error();
        s = err_set(e, AIT_E_SECURITY, "%s: the signature in %s does not match the artifact "
                    "(changed after signing, or signed before a save over it)", path, sig_path);
    }
    EVP_MD_CTX_free(c);
    free(msg);
    free(t);
    free(text);
    EVP_PKEY_free(k);
    return s;
}
