/* io/json.c — tide/json.h over cJSON: parse with a position in the error,
 * a nesting cap, and node accessors that walk cJSON's linked children. */
#include "tide/json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"

enum { MAX_DEPTH = 512 };

struct tide_json {
  cJSON *root;
};

static int depth_ok(const cJSON *n, int depth) {
  if (depth > MAX_DEPTH) return 0;
  for (const cJSON *c = n->child; c; c = c->next)
    if (!depth_ok(c, depth + 1)) return 0;
  return 1;
}

tide_json *tide_json_parse(const char *text, size_t len) {
  if (!text) {
    TIDE_FAIL(TIDE_ERR_VALUE, "json: no text");
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
    TIDE_FAIL(TIDE_ERR_VALUE, "json: invalid JSON at byte %ld of %zu", off, len);
    return NULL;
  }
  /* one value and nothing after it but white space */
  while (end && end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) end++;
  if (end != text + len) {
    cJSON_Delete(root);
    TIDE_FAIL(TIDE_ERR_VALUE, "json: invalid JSON at byte %ld of %zu (text after the value)",
              end ? (long)(end - text) : -1L, len);
    return NULL;
  }
  if (!depth_ok(root, 0)) {
    cJSON_Delete(root);
    TIDE_FAIL(TIDE_ERR_VALUE, "json: nested deeper than %d levels", MAX_DEPTH);
    return NULL;
  }
  tide_json *doc = calloc(1, sizeof *doc);
  if (!doc) {
    cJSON_Delete(root);
    TIDE_FAIL(TIDE_ERR_MEMORY, "json: out of memory");
    return NULL;
  }
  doc->root = root;
  return doc;
}

void tide_json_free(tide_json *doc) {
  if (!doc) return;
  cJSON_Delete(doc->root);
  free(doc);
}

const tide_json_node *tide_json_root(const tide_json *doc) { return doc ? (const tide_json_node *)doc->root : NULL; }

int tide_json_kind(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  if (!n) return TIDE_JSON_NULL;
  if (cJSON_IsFalse(n)) return TIDE_JSON_FALSE;
  if (cJSON_IsTrue(n)) return TIDE_JSON_TRUE;
  if (cJSON_IsNumber(n)) return TIDE_JSON_NUMBER;
  if (cJSON_IsString(n)) return TIDE_JSON_STRING;
  if (cJSON_IsArray(n)) return TIDE_JSON_ARRAY;
  if (cJSON_IsObject(n)) return TIDE_JSON_OBJECT;
  return TIDE_JSON_NULL;
}

double tide_json_number(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  return n && cJSON_IsNumber(n) ? n->valuedouble : 0;
}

const char *tide_json_string(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  return n && cJSON_IsString(n) ? n->valuestring : NULL;
}

int tide_json_count(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  if (!n || !(cJSON_IsArray(n) || cJSON_IsObject(n))) return 0;
  return cJSON_GetArraySize(n);
}

const tide_json_node *tide_json_first(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  if (!n || !(cJSON_IsArray(n) || cJSON_IsObject(n))) return NULL;
  return (const tide_json_node *)n->child;
}

const tide_json_node *tide_json_next(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  return n ? (const tide_json_node *)n->next : NULL;
}

const char *tide_json_key(const tide_json_node *node) {
  const cJSON *n = (const cJSON *)node;
  return n ? n->string : NULL;
}
