/* Signed artifacts (Ed25519, through OpenSSL's libcrypto). Hashes protect
 * against damage; a signature against a forger, who can recompute hashes.
 *
 * The signature covers the artifact's 512-byte header, whose own sha256 covers
 * the manifest's sha256, the blob table's sha256 (each blob's name, offset,
 * length and sha256), the model hash and the file size: so every byte of the
 * artifact, through the hashes the loader checks anyway. It lives beside the
 * artifact in NAME.ait.sig, so signing never rewrites the artifact (its
 * hashes and its sums file stay as they were), and an artifact saved again
 * over the name no longer matches its old signature. The .sig file is text:
 *   ait-signature 1
 *   key <sha256 hex of the raw 32-byte public key>
 *   sig <128 hex digits: the Ed25519 signature of SIGN_CONTEXT and the header>
 */
#ifndef AIT_IO_SIGN_H
#define AIT_IO_SIGN_H
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define SIGN_CONTEXT "ait-artifact-signature-v1" /* with its NUL, before the header */
#define SIGN_SUFFIX ".sig"

/* Makes a key pair: BASE.pem (private, mode 0600) and BASE.pub (public), PEM. */
ait_status sign_keygen(const char *base, ait_error *e);
/* Signs header[0..len) of the artifact at path with the private key in
 * key_pem (a file); writes path.sig. */
ait_status sign_header(const char *path, const uint8_t *header, size_t len, const char *key_pem,
                       ait_error *e);
/* Checks that path.sig holds a signature of header[0..len) by the public key
 * in pub_pem (a file); every refusal names the artifact and says why
 * (unsigned, another key, a signature that does not match). */
ait_status sign_verify(const char *path, const uint8_t *header, size_t len, const char *pub_pem,
                       ait_error *e);

#endif
