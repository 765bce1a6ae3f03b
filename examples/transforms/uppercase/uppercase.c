/*
 * UppercaseValue: a wasmconnect transformation written in C against the plugin ABI directly
 * (sdk/ABI.md), without an SDK. It upper-cases the ASCII letters of STRING record values, passes
 * null values (tombstones) through unchanged, and fails (per record, so that errors.tolerance and
 * the dead letter queue apply) on values of any other kind.
 *
 * Optional config: "header" names a header to add to every transformed record, with the value
 * "uppercased".
 *
 * Build: clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all -o uppercase.wasm uppercase.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))

enum { OP_OPEN = 1, OP_CLOSE = 2, OP_VALIDATE = 3, OP_TRANSFORM = 11 };
enum { TAG_NULL = 0, TAG_BYTES = 1, TAG_STRING = 2, TAG_JSON = 3 };
enum { ST_RECORD = 0, ST_FAILED = 1, ST_UNCHANGED = 2 };
#define RESULT_ERROR 0x80000000u

static const char DESCRIPTOR[] =
    "{\"abi\":1,\"plugins\":[{\"name\":\"UppercaseValue\",\"class\":\"com.example.transforms.UppercaseValue\","
    "\"kind\":\"transformation\",\"version\":\"1.0.0\",\"config\":["
    "{\"name\":\"header\",\"type\":\"STRING\",\"required\":false,\"default_value\":null,\"importance\":\"LOW\","
    "\"documentation\":\"A header to add to every transformed record, with the value uppercased\","
    "\"group\":null,\"width\":\"NONE\",\"display_name\":\"header\",\"dependents\":[],\"order\":-1}]}]}";

/* ---- output buffer: valid until the next call (ABI §2) ---------------------------------------- */

static uint8_t *out;
static size_t out_len, out_cap;
static int out_failed;

static void reserve(size_t n) {
    if (out_failed || out_len + n <= out_cap) return;
    size_t cap = out_cap ? out_cap : 4096;
    while (cap < out_len + n) cap *= 2;
    uint8_t *p = realloc(out, cap);
    if (!p) { out_failed = 1; return; }
    out = p;
    out_cap = cap;
}

static void put(const void *p, size_t n) {
    reserve(n);
    if (out_failed) return;
    memcpy(out + out_len, p, n);
    out_len += n;
}

static void put_u32(uint32_t v) {
    uint8_t b[4] = {v, v >> 8, v >> 16, v >> 24};
    put(b, 4);
}

static void put_u8(uint8_t v) { put(&v, 1); }

static void put_str(const char *s, size_t n) {
    put_u32((uint32_t)n);
    put(s, n);
}

static uint64_t result(const void *p, size_t n, uint32_t flags) {
    return ((uint64_t)(uintptr_t)p << 32) | (uint64_t)((uint32_t)n | flags);
}

static uint64_t fail(const char *msg) { return result(msg, strlen(msg), RESULT_ERROR); }

/* ---- input reader ----------------------------------------------------------------------------- */

typedef struct {
    const uint8_t *p, *end;
    int bad;
} reader;

static uint32_t get_u32(reader *r) {
    if (r->bad || r->end - r->p < 4) { r->bad = 1; return 0; }
    uint32_t v = r->p[0] | r->p[1] << 8 | r->p[2] << 16 | (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

static const uint8_t *skip(reader *r, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) { r->bad = 1; return 0; }
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

static const uint8_t *get_bytes(reader *r, uint32_t *n) {
    *n = get_u32(r);
    return skip(r, *n);
}

/* skip_data skips a data value (ABI §5.1) and returns its tag. */
static int skip_data(reader *r) {
    const uint8_t *t = skip(r, 1);
    if (!t) return -1;
    uint32_t n;
    switch (*t) {
    case TAG_NULL: break;
    case TAG_BYTES:
    case TAG_STRING: get_bytes(r, &n); break;
    case TAG_JSON: get_bytes(r, &n); get_bytes(r, &n); break;
    default: r->bad = 1;
    }
    return *t;
}

/* ---- the transformation ----------------------------------------------------------------------- */

static char header[256];
static size_t header_len;
static int opened;

/* json_string finds "key":"value" in a flat JSON object and copies value (no escapes) into dst. */
static size_t json_string(const uint8_t *json, size_t n, const char *key, char *dst, size_t cap) {
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl + 4 < n; i++) {
        if (json[i] == '"' && memcmp(json + i + 1, key, kl) == 0 && json[i + 1 + kl] == '"') {
            size_t j = i + kl + 2;
            while (j < n && (json[j] == ' ' || json[j] == ':')) j++;
            if (j >= n || json[j] != '"') return 0;
            size_t k = ++j;
            while (k < n && json[k] != '"' && k - j < cap) k++;
            memcpy(dst, json + j, k - j);
            return k - j;
        }
    }
    return 0;
}

static uint64_t open_object(const uint8_t *in, size_t n) {
    /* The request names the plugin to open (the host sends its name); anything else, malformed
     * input included, is refused, so that a host that mixed up modules hears about it. */
    char plugin[64];
    size_t pl = json_string(in, n, "plugin", plugin, sizeof plugin);
    if (!(pl == 14 && memcmp(plugin, "UppercaseValue", 14) == 0) &&
        !(pl == 37 && memcmp(plugin, "com.example.transforms.UppercaseValue", 37) == 0))
        return fail("UppercaseValue: OPEN of a plugin this module does not have (it has UppercaseValue)");
    /* One object at a time is enough for a sketch; a real plugin keeps a table of handles. */
    const char *cfg = "\"config\":";
    for (size_t i = 0; i + 9 < n; i++) {
        if (memcmp(in + i, cfg, 9) == 0) {
            header_len = json_string(in + i, n - i, "header", header, sizeof header);
            break;
        }
    }
    opened = 1;
    static const char resp[] = "{\"handle\":1}";
    return result(resp, sizeof resp - 1, 0);
}

static uint64_t transform(const uint8_t *in, size_t n) {
    reader r = {in, in + n, 0};
    uint32_t count = get_u32(&r);
    out_len = 0;
    out_failed = 0;
    put_u32(0); /* entry count, patched at the end */
    uint32_t entries = 0;
    for (uint32_t i = 0; i < count && !r.bad; i++) {
        const uint8_t *start = r.p;
        uint32_t len;
        get_bytes(&r, &len);              /* topic */
        skip(&r, 4 + 8 + 8);              /* partition, offset, timestamp */
        skip_data(&r);                    /* key */
        const uint8_t *value = r.p;
        int tag = skip_data(&r);          /* value */
        const uint8_t *headers = r.p;
        uint32_t nh = get_u32(&r);
        for (uint32_t h = 0; h < nh && !r.bad; h++) {
            get_bytes(&r, &len);
            skip_data(&r);
        }
        const uint8_t *tail = r.p;        /* source partition and offset */
        get_bytes(&r, &len);
        get_bytes(&r, &len);
        if (r.bad) break;

        put_u32(i);
        entries++;
        if (tag == TAG_NULL) {
            put_u8(ST_UNCHANGED);
            continue;
        }
        if (tag != TAG_STRING) {
            static const char cls[] = "org.apache.kafka.connect.errors.DataException";
            static const char msg[] = "UppercaseValue supports STRING values only";
            put_u8(ST_FAILED);
            put_str(cls, sizeof cls - 1);
            put_str(msg, sizeof msg - 1);
            continue;
        }
        /* The record as it came, with its value upper-cased and maybe one more header. */
        put_u8(ST_RECORD);
        size_t at = out_len;
        put(start, headers - start);
        if (out_failed) break;
        uint8_t *v = out + at + (value - start) + 5; /* tag, u32 length */
        uint32_t vn = value[1] | value[2] << 8 | value[3] << 16 | (uint32_t)value[4] << 24;
        for (uint32_t k = 0; k < vn; k++)
            if (v[k] >= 'a' && v[k] <= 'z') v[k] -= 32;
        put_u32(nh + (header_len ? 1 : 0));
        put(headers + 4, tail - headers - 4);
        if (header_len) {
            put_str(header, header_len);
            put_u8(TAG_STRING);
            put_str("uppercased", 10);
        }
        put_u32(0); /* source partition and offset: the host keeps the input's */
        put_u32(0);
    }
    if (r.bad || r.p != r.end) return fail("UppercaseValue: malformed record batch");
    if (out_failed) return fail("UppercaseValue: out of memory");
    out[0] = entries;
    out[1] = entries >> 8;
    out[2] = entries >> 16;
    out[3] = entries >> 24;
    return result(out, out_len, 0);
}

/* ---- ABI exports ------------------------------------------------------------------------------ */

EXPORT("wc_abi_version") int32_t wc_abi_version(void) { return 1; }

EXPORT("wc_alloc") void *wc_alloc(int32_t size) { return malloc(size > 0 ? (size_t)size : 1); }

EXPORT("wc_free") void wc_free(void *p, int32_t size) { (void)size; free(p); }

EXPORT("wc_describe") int64_t wc_describe(void) { return result(DESCRIPTOR, sizeof DESCRIPTOR - 1, 0); }

EXPORT("wc_call") int64_t wc_call(int32_t handle, int32_t op, const uint8_t *in, int32_t n) {
    switch (op) {
    case OP_OPEN:
        return open_object(in, (size_t)n);
    case OP_CLOSE:
        opened = 0;
        return 0;
    case OP_VALIDATE: {
        static const char ok[] = "{\"errors\":{}}";
        return result(ok, sizeof ok - 1, 0);
    }
    case OP_TRANSFORM:
        if (handle != 1 || !opened) return fail("UppercaseValue: no open object with that handle");
        return transform(in, (size_t)n);
    }
    return fail("UppercaseValue: unknown operation");
}
