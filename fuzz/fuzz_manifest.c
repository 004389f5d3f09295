/* libFuzzer target: the manifest and plan of an artifact, past its hashes.
 * The input is a recipe, not a file:
 *   u8 count, then count blobs of (u8 name length, name, u16 length, bytes),
 *   then the manifest text (the rest)
 * from which the target builds a container with every hash right (the model
 * hash from the blob "model.onnx"), so that a mutation reaches the JSON
 * reader, plan_parse and the prepared blobs' checks instead of a checksum
 * refusal; then loads it as ait_artifact_load does and makes a session,
 * which builds the plan's modules from the prepared blobs. The seeds
 * (fuzz/corpus/manifest) are real artifacts of a small model made into
 * recipes by tools/fuzz_recipe.py. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ait.h"
#include "io/artifact_fmt.h"
#include "io/sha256.h"
#include "memfile.h"

#define MAX_BLOBS 32

typedef struct part {
    char name[ARTIFACT_NAME_MAX];
    const uint8_t *data;
    size_t len;
} part;

/* The container of blobs and manifest, canonical (artifact.h); caller frees. */
static uint8_t *build(const part *b, int n, const uint8_t *man, size_t man_len, size_t *out)
{
    uint64_t tab, pos, off[MAX_BLOBS];
    if (!layout_table(man_len, &tab)) return NULL;
    pos = tab + (uint64_t)n * ARTIFACT_ENTRY_SIZE;
    for (int i = 0; i < n; i++) {
        align_up(pos, ARTIFACT_ALIGN, &off[i]);
        pos = off[i] + b[i].len;
    }
    uint8_t *f = calloc(1, (size_t)pos);
    if (!f) return NULL;
    const char *model = "";
    char hex[SHA256_HEX] = "";
    memcpy(f + H_MAGIC, ARTIFACT_MAGIC, sizeof ARTIFACT_MAGIC);
    put_u32(f + H_FORMAT, ARTIFACT_FORMAT);
    put_u32(f + H_HSIZE, ARTIFACT_HEADER_SIZE);
    memcpy(f + H_VERSION, "fuzz", 4);
    memcpy(f + ARTIFACT_HEADER_SIZE, man, man_len);
    for (int i = 0; i < n; i++) {
        uint8_t *t = f + tab + (size_t)i * ARTIFACT_ENTRY_SIZE;
        memcpy(t + E_NAME, b[i].name, strlen(b[i].name));
        put_u64(t + E_OFF, off[i]);
        put_u64(t + E_LEN, b[i].len);
        sha256(b[i].data, b[i].len, t + E_SHA);
        memcpy(f + off[i], b[i].data, b[i].len);
        if (!strcmp(b[i].name, "model.onnx")) {
            sha256_hex(t + E_SHA, hex);
            model = hex;
        }
    }
    memcpy(f + H_MODEL, model, strlen(model));
    put_u64(f + H_MAN_OFF, ARTIFACT_HEADER_SIZE);
    put_u64(f + H_MAN_LEN, man_len);
    sha256(man, man_len, f + H_MAN_SHA);
    put_u64(f + H_TAB_OFF, tab);
    put_u64(f + H_COUNT, (uint64_t)n);
    put_u64(f + H_FSIZE, pos);
    sha256(f + tab, (size_t)n * ARTIFACT_ENTRY_SIZE, f + H_TAB_SHA);
    sha256(f, H_SUM, f + H_SUM);
    *out = (size_t)pos;
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    part b[MAX_BLOBS];
    size_t at = 1;
    if (size < 1 || data[0] > MAX_BLOBS) return 0;
    int n = data[0];
    for (int i = 0; i < n; i++) {
        if (at + 1 > size) return 0;
        size_t nl = data[at++];
        if (!nl || nl >= ARTIFACT_NAME_MAX || at + nl + 2 > size) return 0;
        memcpy(b[i].name, data + at, nl);
        b[i].name[nl] = 0;
        if (strlen(b[i].name) != nl) return 0;
        at += nl;
        b[i].len = (size_t)data[at] | (size_t)data[at + 1] << 8;
        at += 2;
        if (at + b[i].len > size) return 0;
        b[i].data = data + at;
        at += b[i].len;
    }
    for (int i = 0; i < n; i++) /* names are unique in a container */
        for (int j = 0; j < i; j++)
            if (!strcmp(b[i].name, b[j].name)) return 0;
    size_t flen;
    uint8_t *file = build(b, n, data + at, size - at, &flen);
    if (!file) return 0;
    char path[64];
    int fd = memfile(file, flen, path, sizeof path);
    free(file);
    if (fd < 0) return 0;
    ait_model *m = NULL;
    ait_session *s = NULL;
    ait_artifact_options o = {.size = sizeof o};
    if (ait_artifact_load(path, &o, &m, NULL) == AIT_OK &&
        ait_session_create(m, NULL, &s, NULL) == AIT_OK)
        ait_session_free(s);
    ait_model_free(m);
    close(fd);
    return 0;
}
