/* libFuzzer target: an arbitrary byte string through the JSON reader, and
 * the lookups on what it parsed. */
#include <stdint.h>
#include <stdlib.h>

#include "io/json_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_val *v = NULL;
    if (json_parse((const char *)data, size, "fuzz.json", &v, NULL) != AIT_OK) return 0;
    long long x;
    double d;
    for (int i = 0; i < json_len(v); i++) {
        const json_val *it = json_at(v, i);
        (void)json_int_of(it, -1000, 1000, &x);
        (void)json_num_of(it, &d);
        (void)json_str_of(it);
        (void)json_get(it, "name");
    }
    json_free(v);
    return 0;
}
