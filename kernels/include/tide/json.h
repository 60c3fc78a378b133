/* tide/json.h — reading JSON documents (cJSON underneath) through a small
 * node API, so Lua and C callers walk parsed JSON without a parser of their own. */
#ifndef TIDE_JSON_H
#define TIDE_JSON_H

#include <stddef.h>

#include "tide/error.h"
#include "tide/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed document; its nodes live as long as it does. */
typedef struct tide_json tide_json;
/* One value inside a document. */
typedef struct tide_json_node tide_json_node;

enum {
  TIDE_JSON_NULL = 0,
  TIDE_JSON_FALSE,
  TIDE_JSON_TRUE,
  TIDE_JSON_NUMBER,
  TIDE_JSON_STRING,
  TIDE_JSON_ARRAY,
  TIDE_JSON_OBJECT
};

/* Parse len bytes of JSON text (the whole text must be one value). NULL on
 * bad JSON, with an error naming the byte offset; nesting deeper than 512
 * levels is refused. */
TIDE_API tide_json *tide_json_parse(const char *text, size_t len);
TIDE_API void tide_json_free(tide_json *doc);
TIDE_API const tide_json_node *tide_json_root(const tide_json *doc);
/* The node's TIDE_JSON_* kind. */
TIDE_API int tide_json_kind(const tide_json_node *n);
/* A number's value (0 for other kinds). */
TIDE_API double tide_json_number(const tide_json_node *n);
/* A string's bytes (NUL-terminated; JSON strings hold no NUL), or NULL. */
TIDE_API const char *tide_json_string(const tide_json_node *n);
/* The number of elements of an array or members of an object (0 otherwise). */
TIDE_API int tide_json_count(const tide_json_node *n);
/* The first element or member of an array or object (NULL when empty or
 * for other kinds), and the one after n (NULL after the last). */
TIDE_API const tide_json_node *tide_json_first(const tide_json_node *n);
TIDE_API const tide_json_node *tide_json_next(const tide_json_node *n);
/* The key of an object member, or NULL for other nodes. */
TIDE_API const char *tide_json_key(const tide_json_node *n);

#ifdef __cplusplus
}
#endif

#endif
