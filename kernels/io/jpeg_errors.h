/* io/jpeg_errors.h — the libjpeg error manager the JPEG decoder and encoder share:
 * libjpeg's default error_exit prints and calls exit(); this one formats the
 * message and longjmps back to the codec, which turns it into a tide error. */
#ifndef TIDE_IO_JPEG_ERRORS_H
#define TIDE_IO_JPEG_ERRORS_H

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

typedef struct jpeg_errors {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
} jpeg_errors;

static inline void tide_jpeg_on_error(j_common_ptr cinfo) {
  jpeg_errors *e = (jpeg_errors *)cinfo->err;
  cinfo->err->format_message(cinfo, e->msg);
  longjmp(e->jump, 1);
}

static inline void tide_jpeg_on_message(j_common_ptr cinfo) { (void)cinfo; } /* warnings: TF counts and goes on */

/* Point cinfo at e with the handlers above (setjmp(e->jump) is the caller's). */
static inline void tide_jpeg_errors_init(j_common_ptr cinfo, jpeg_errors *e) {
  cinfo->err = jpeg_std_error(&e->pub);
  e->pub.error_exit = tide_jpeg_on_error;
  e->pub.output_message = tide_jpeg_on_message;
  e->msg[0] = 0;
}

#endif
