/* tests/c/test_csv.c — the CSV reader (kernels/io/csv.c): RFC 4180 records
 * (quotes, doubled quotes, line breaks in quotes, CRLF, lone CR), typed
 * decoding with defaults and na_value, and errors (never crashes) on garbage. */
#include <stdlib.h>
#include <string.h>

#include "util.h"

static bool field_is(tide_csv_reader *r, int64_t j, const char *want) {
  size_t len;
  const char *s = tide_csv_field(r, j, &len);
  return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

static void test_records(void) {
  const char *text = "a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",,x\rlast,\"\",z";
  tide_csv_reader *r = tide_csv_open_memory(text, strlen(text), "t.csv", ',', true);
  CHECK(r != NULL);
  CHECK(tide_csv_next(r) == 1 && tide_csv_num_fields(r) == 3);
  CHECK(field_is(r, 0, "a") && field_is(r, 1, "b,c") && field_is(r, 2, "say \"hi\""));
  CHECK(tide_csv_record_index(r) == 0 && tide_csv_record_line(r) == 1);
  CHECK(tide_csv_next(r) == 1 && field_is(r, 0, "two\nlines") && field_is(r, 1, "") && field_is(r, 2, "x"));
  CHECK(tide_csv_record_line(r) == 2);
  CHECK(tide_csv_next(r) == 1 && field_is(r, 0, "last") && field_is(r, 1, "") && field_is(r, 2, "z"));
  CHECK(tide_csv_record_line(r) == 4);
  CHECK(tide_csv_field(r, 3, NULL) == NULL);
  CHECK(tide_csv_next(r) == 0 && tide_csv_next(r) == 0);
  tide_csv_close(r);
  /* no quoting: quotes are data */
  r = tide_csv_open_memory("\"a\";b\n", 6, "t.csv", ';', false);
  CHECK(tide_csv_next(r) == 1 && field_is(r, 0, "\"a\"") && field_is(r, 1, "b"));
  tide_csv_close(r);
}

static void test_decode(void) {
  const char *text = " 7 ,-2.5,NA,9000000000,hello\n";
  tide_csv_reader *r = tide_csv_open_memory(text, strlen(text), "d.csv", ',', true);
  CHECK(tide_csv_next(r) == 1);
  int32_t dts[5] = {TIDE_INT32, TIDE_FLOAT64, TIDE_FLOAT32, TIDE_INT64, TIDE_STRING};
  tide_tensor def = blank();
  CHECK(tide_tensor_init(&def, TIDE_FLOAT32, 0, NULL) == TIDE_OK);
  *(float *)def.data = 1.25f;
  const tide_tensor *defaults[5] = {NULL, NULL, &def, NULL, NULL};
  tide_tensor outs[5];
  tide_tensor *out[5];
  for (int i = 0; i < 5; i++) outs[i] = blank(), out[i] = &outs[i];
  CHECK(tide_csv_decode(r, 5, NULL, dts, defaults, "NA", out) == TIDE_OK);
  CHECK(*(int32_t *)outs[0].data == 7 && *(double *)outs[1].data == -2.5 && *(float *)outs[2].data == 1.25f);
  CHECK(*(int64_t *)outs[3].data == 9000000000LL);
  int64_t len;
  const char *s = tide_string_at(outs[4].data, 0, &len);
  CHECK(len == 5 && memcmp(s, "hello", 5) == 0);
  for (int i = 0; i < 5; i++) tide_tensor_release(&outs[i]);
  /* a required value missing; an int32 out of range; a selection */
  defaults[2] = NULL;
  CHECK(tide_csv_decode(r, 5, NULL, dts, defaults, "NA", out) != TIDE_OK);
  CHECK(contains(tide_last_error(), "Field 2 is required but missing") && contains(tide_last_error(), "'d.csv'"));
  dts[3] = TIDE_INT32;
  defaults[2] = &def;
  CHECK(tide_csv_decode(r, 5, NULL, dts, defaults, "NA", out) != TIDE_OK);
  CHECK(contains(tide_last_error(), "Field 3 in record is not a valid int32: 9000000000"));
  int64_t cols[2] = {4, 0};
  int32_t dts2[2] = {TIDE_STRING, TIDE_INT64};
  const tide_tensor *none[2] = {NULL, NULL};
  CHECK(tide_csv_decode(r, 2, cols, dts2, none, NULL, out) == TIDE_OK);
  CHECK(*(int64_t *)outs[1].data == 7);
  for (int i = 0; i < 2; i++) tide_tensor_release(&outs[i]);
  CHECK(tide_csv_decode(r, 4, NULL, dts, defaults, NULL, out) != TIDE_OK);
  CHECK(contains(tide_last_error(), "Expect 4 fields but have more: 5 in record"));
  tide_tensor_release(&def);
  tide_csv_close(r);
}

static void test_garbage(void) {
  unsigned char junk[64];
  const char alphabet[] = "a1,\"\n\r \377";
  srand(4);
  int bad = 0;
  for (int t = 0; t < 2000; t++) {
    size_t n = (size_t)(rand() % 64);
    for (size_t i = 0; i < n; i++) junk[i] = (unsigned char)alphabet[rand() % (sizeof alphabet - 1)];
    tide_csv_reader *r = tide_csv_open_memory(junk, n, "junk", ',', true);
    int rc, k = 0;
    while ((rc = tide_csv_next(r)) == 1 && k < 100) {
      for (int64_t j = 0; j < tide_csv_num_fields(r); j++) {
        size_t len;
        if (!tide_csv_field(r, j, &len)) bad++;
      }
      k++;
    }
    if (rc < 0 && !contains(tide_last_error(), "'junk'")) bad++;
    tide_csv_close(r);
  }
  CHECK(bad == 0);
  CHECK(tide_csv_open("/nonexistent.csv", ',', true) == NULL && contains(tide_last_error(), "cannot be opened"));
  CHECK(tide_csv_open_memory("", 0, "x", '\n', true) == NULL);
}

int main(void) {
  test_records();
  test_decode();
  test_garbage();
  return CHECK_SUMMARY("csv");
}
