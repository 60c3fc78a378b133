/* tests/c/test_infer_unknown.c — shape inference on descriptors with unknown
 * (-1) dims, as a traced graph's None: one table row per case, every op with inputs covered. */
#include "check.h"
#include "util.h"

#define U (-1)
#define F32 TIDE_FLOAT32
#define I32 TIDE_INT32
#define I64 TIDE_INT64
#define BOOL TIDE_BOOL
#define STR TIDE_STRING

/* A tensor descriptor: dtype, rank and dims (U where unknown). */
typedef struct desc {
  int dt, nd;
  int64_t d[TIDE_MAX_DIMS];
} desc;

/* One inference: op, attrs, inputs, and the status (with a message
 * fragment) or the output dims it must give. */
typedef struct icase {
  int line, op;
  tide_attrs at;
  int n_in;
  desc in[6]; /* six: bpe_tokenize */
  tide_status st;
  const char *msg;
  int nd0, nd1;
  int64_t out0[TIDE_MAX_DIMS], out1[TIDE_MAX_DIMS];
} icase;

#define D(dt, nd, ...) {dt, nd, {__VA_ARGS__}}
#define S(dt) {dt, 0, {0}}
#define IN1(a) .n_in = 1, .in = {a}
#define IN2(a, b) .n_in = 2, .in = {a, b}
#define IN3(a, b, c) .n_in = 3, .in = {a, b, c}
#define IN4(a, b, c, d) .n_in = 4, .in = {a, b, c, d}
#define IN5(a, b, c, d, e) .n_in = 5, .in = {a, b, c, d, e}
#define IN6(a, b, c, d, e, f) .n_in = 6, .in = {a, b, c, d, e, f}
#define A(...) .at = {__VA_ARGS__}
#define OUT(nd, ...) .nd0 = nd, .out0 = {__VA_ARGS__}
#define OUT1(nd, ...) .nd1 = nd, .out1 = {__VA_ARGS__}
#define ERR(code, m) .st = code, .msg = m
#define ROW(opname) .line = __LINE__, .op = TIDE_OP_##opname

/* conv attrs: strides, dilations, pads, mode (and the shape a backprop op produces). */
#define CONV_SAME(s) .ints = {s, s, 1, 1, 0, 0, 0, 0}, .nints = 8, .m = 1
#define CONV_VALID .ints = {1, 1, 1, 1, 0, 0, 0, 0}, .nints = 8, .m = 0
#define CONV_BP_SAME(a, b, c, d) .ints = {1, 1, 1, 1, 0, 0, 0, 0, a, b, c, d}, .nints = 12, .m = 1
#define POOL(k, s, mode) .ints = {k, k, s, s}, .nints = 4, .m = mode

static const icase cases[] = {
    /* ---- tf.linalg (core/infer_matrix.c): batch and matrix dims unknown ---- */
    {ROW(MATRIX_TRANSPOSE), IN1(D(F32, 3, U, 2, U)), OUT(3, U, U, 2)},
    {ROW(MATRIX_BAND_PART), A(.ints = {1, 0}, .nints = 2), IN1(D(F32, 3, U, 3, U)), OUT(3, U, 3, U)},
    {ROW(MATRIX_DIAG), A(.ints = {0, 0, -1, -1}, .nints = 4), IN1(D(F32, 2, U, 3)), OUT(3, U, 3, 3)},
    {ROW(MATRIX_DIAG_PART), A(.ints = {0, 0}, .nints = 2), IN1(D(F32, 3, U, 3, 3)), OUT(2, U, 3)},
    {ROW(MATRIX_SET_DIAG), A(.ints = {0, 0}, .nints = 2), IN2(D(F32, 3, U, 3, 3), D(F32, 2, U, 3)), OUT(3, U, 3, 3)},
    {ROW(CHOLESKY), IN1(D(F32, 3, U, 3, 3)), OUT(3, U, 3, 3)},
    {ROW(MATRIX_INVERSE), IN1(D(F32, 3, U, U, 3)), OUT(3, U, 3, 3)},
    {ROW(MATRIX_INVERSE), IN1(D(F32, 2, 2, 3)), ERR(TIDE_ERR_SHAPE, "matrix_inverse")},
    {ROW(MATRIX_DETERMINANT), IN1(D(F32, 3, U, 3, 3)), OUT(1, U)},
    {ROW(LOG_MATRIX_DETERMINANT), IN1(D(F32, 3, U, 3, 3)), OUT(1, U), OUT1(1, U)},
    {ROW(LU), A(.dtype = I32), IN1(D(F32, 3, U, 3, 3)), OUT(3, U, 3, 3), OUT1(2, U, 3)},
    {ROW(MATRIX_SOLVE), IN2(D(F32, 3, U, 3, 3), D(F32, 3, U, 3, 2)), OUT(3, U, 3, 2)},
    {ROW(MATRIX_TRIANGULAR_SOLVE), IN2(D(F32, 3, U, 3, 3), D(F32, 3, U, 3, 2)), OUT(3, U, 3, 2)},
    {ROW(MATRIX_SOLVE_LS), IN2(D(F32, 3, U, 3, 3), D(F32, 3, U, 3, 2)), OUT(3, U, 3, 2)},
    {ROW(TRIDIAGONAL_SOLVE), IN2(D(F32, 3, U, 3, 3), D(F32, 3, U, 3, 2)), OUT(3, U, 3, 2)},
    {ROW(QR), IN1(D(F32, 3, U, 3, 3)), OUT(3, U, 3, 3), OUT1(3, U, 3, 3)},
    {ROW(SVD), IN1(D(F32, 3, U, 3, 3)), OUT(2, U, 3), OUT1(3, U, 3, 3)},
    {ROW(SELF_ADJOINT_EIG), IN1(D(F32, 3, U, 3, 3)), OUT(2, U, 3), OUT1(3, U, 3, 3)},
    {ROW(EIG), IN1(D(F32, 3, U, 3, 3)), OUT(2, U, 3), OUT1(2, U, 3)},
    {ROW(MATRIX_EXPONENTIAL), IN1(D(F32, 3, U, 3, 3)), OUT(3, U, 3, 3)},
    {ROW(MATRIX_SQUARE_ROOT), IN1(D(F32, 3, U, 3, 3)), OUT(3, U, 3, 3)},
    /* ---- tf.signal: lengths given fix the transformed dims; -1 takes the input's (unknown stays unknown) ---- */
    {ROW(FFT), A(.ints = {-1}, .nints = 1), IN2(D(F32, 2, U, 6), D(F32, 2, U, U)), OUT(2, U, 6), OUT1(2, U, 6)},
    {ROW(IFFT), A(.ints = {4, -1}, .nints = 2), IN2(D(F32, 2, U, U), D(F32, 2, U, U)), OUT(2, 4, U), OUT1(2, 4, U)},
    {ROW(RFFT), A(.ints = {-1}, .nints = 1), IN1(D(F32, 2, U, 8)), OUT(2, U, 5), OUT1(2, U, 5)},
    {ROW(RFFT), A(.ints = {-1}, .nints = 1), IN1(D(F32, 2, 3, U)), OUT(2, 3, U), OUT1(2, 3, U)},
    {ROW(RFFT), A(.ints = {7}, .nints = 1), IN1(D(F32, 2, 3, U)), OUT(2, 3, 4), OUT1(2, 3, 4)},
    {ROW(IRFFT), A(.ints = {-1}, .nints = 1), IN2(D(F32, 2, U, 5), D(F32, 2, U, 5)), OUT(2, U, 8)},
    {ROW(IRFFT), A(.ints = {3, 7}, .nints = 2), IN2(D(F32, 2, U, U), D(F32, 2, U, U)), OUT(2, 3, 7)},
    {ROW(RFFT), A(.ints = {-2}, .nints = 1), IN1(D(F32, 1, U)), ERR(TIDE_ERR_VALUE, "fft_length must hold lengths >= 0")},
    {ROW(FFT), A(.ints = {-1, -1}, .nints = 2), IN2(D(F32, 1, U), D(F32, 1, U)), ERR(TIDE_ERR_SHAPE, "must have rank >= 2")},
    /* ---- decode_bmp: the image's height and width are the file's ---- */
    {ROW(DECODE_BMP), A(.n = 3, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, 3)},
    {ROW(DECODE_GIF), A(.dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(4, U, U, U, 3)},
    /* ---- decode_wav: the file's samples; channels when desired ---- */
    {ROW(DECODE_WAV), A(.n = 2, .m = -1, .dtype = TIDE_FLOAT32), IN1(D(TIDE_UINT8, 1, U)), OUT(2, U, 2), OUT1(0, 0)},
    {ROW(DECODE_WAV), A(.n = -1, .m = 16000, .dtype = TIDE_FLOAT32), IN1(D(TIDE_UINT8, 1, U)), OUT(2, 16000, U), OUT1(0, 0)},
    {ROW(DECODE_WAV), A(.n = -2, .m = -1, .dtype = TIDE_FLOAT32), IN1(D(TIDE_UINT8, 1, U)), ERR(TIDE_ERR_VALUE, "desired_channels must be -1")},
    {ROW(DECODE_WEBP), A(.n = 0, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(4, U, U, U, U)},
    {ROW(DECODE_WEBP), A(.n = 4, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(4, U, U, U, 4)},
    {ROW(DECODE_WEBP), A(.n = 1, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), ERR(TIDE_ERR_VALUE, "channels must be 0, 3 or 4 for WebP")},
    {ROW(DECODE_JXL), A(.n = 0, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, U)},
    {ROW(DECODE_JXL), A(.n = 1, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, 1)},
    {ROW(DECODE_JXL), A(.n = 2, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), ERR(TIDE_ERR_VALUE, "channels must be 0, 1, 3 or 4")},
    /* ---- elementwise: TF's broadcasting with unknown dims ---- */
    {ROW(ADD), IN2(D(F32, 2, U, 3), D(F32, 1, 3)), OUT(2, U, 3)},
    {ROW(ADD), IN2(D(F32, 2, U, 1), D(F32, 2, 1, 4)), OUT(2, U, 4)},
    {ROW(ADD), IN2(D(F32, 1, U), D(F32, 1, 1)), OUT(1, U)},    /* -1 with 1: -1 */
    {ROW(ADD), IN2(D(F32, 1, 1), D(F32, 1, U)), OUT(1, U)},
    {ROW(ADD), IN2(D(F32, 1, U), D(F32, 1, 5)), OUT(1, 5)},    /* -1 with n > 1: n */
    {ROW(ADD), IN2(D(F32, 1, 5), D(F32, 1, U)), OUT(1, 5)},
    {ROW(ADD), IN2(D(F32, 1, U), D(F32, 1, U)), OUT(1, U)},    /* -1 with -1: -1 */
    {ROW(ADD), IN2(D(F32, 1, U), D(F32, 1, 0)), OUT(1, U)},    /* -1 with 0: -1 (TF) */
    {ROW(ADD), IN2(D(F32, 2, U, 3), D(F32, 2, 2, U)), OUT(2, 2, 3)},
    {ROW(ADD), IN2(D(F32, 2, U, 3), S(F32)), OUT(2, U, 3)},
    {ROW(ADD), IN2(D(F32, 2, 2, 3), D(F32, 2, U, 4)), ERR(TIDE_ERR_SHAPE, "dimension 1: 3 vs 4")},
    {ROW(ADD), IN2(D(F32, 2, U, 3), D(I32, 2, U, 3)), ERR(TIDE_ERR_DTYPE, "dtype mismatch")},
    {ROW(LESS), IN2(D(F32, 2, U, 3), D(F32, 1, 3)), OUT(2, U, 3)},
    {ROW(WHERE), IN3(D(BOOL, 2, U, 1), D(F32, 1, 3), D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(WHERE), IN3(D(BOOL, 1, U), D(F32, 1, 2), D(F32, 1, 3)), ERR(TIDE_ERR_SHAPE, "incompatible shapes")},
    {ROW(CLIP), IN3(D(F32, 2, U, 2), S(F32), D(F32, 1, 2)), OUT(2, U, 2)},
    {ROW(CAST), A(.dtype = TIDE_INT32), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(RANDOM_SHUFFLE), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},

    /* ---- reductions, arg-reductions, scans, sorting ---- */
    {ROW(SUM), A(.ints = {1}, .nints = 1), IN1(D(F32, 2, U, 3)), OUT(1, U)},
    {ROW(SUM), A(.ints = {0}, .nints = 1), IN1(D(F32, 2, U, 3)), OUT(1, 3)},
    {ROW(MEAN), A(.ints = {0}, .nints = 1, .flags = TIDE_ATTR_KEEPDIMS), IN1(D(F32, 2, U, 3)), OUT(2, 1, 3)},
    {ROW(MAX), A(.ints = {-1}, .nints = 1, .flags = TIDE_ATTR_KEEPDIMS), IN1(D(F32, 3, 2, U, U)), OUT(3, 2, U, 1)},
    {ROW(PROD), IN1(D(F32, 2, U, 3)), OUT(0, 0)},
    {ROW(MIN), A(.ints = {2}, .nints = 1), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_VALUE, "axis 2 is out of range")},
    {ROW(ANY), A(.ints = {1}, .nints = 1), IN1(D(BOOL, 2, U, 3)), OUT(1, U)},
    {ROW(ALL), A(.ints = {0}, .nints = 1), IN1(D(BOOL, 2, U, 3)), OUT(1, 3)},
    {ROW(ARGMAX), A(.axis = 0, .dtype = TIDE_INT64), IN1(D(F32, 2, U, 3)), OUT(1, 3)},
    {ROW(ARGMIN), A(.axis = 1, .dtype = TIDE_INT32), IN1(D(F32, 2, U, 3)), OUT(1, U)},
    {ROW(ARGMAX), A(.axis = 1, .dtype = TIDE_INT32), IN1(D(F32, 2, U, 0)), ERR(TIDE_ERR_VALUE, "axis 1 is empty")},
    {ROW(CUMSUM), A(.axis = 0), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(CUMULATIVE_LOGSUMEXP), A(.axis = 1), IN1(D(F32, 3, U, 2, U)), OUT(3, U, 2, U)},
    {ROW(CUMULATIVE_LOGSUMEXP), A(.axis = 0), IN1(D(I32, 1, U)), ERR(TIDE_ERR_DTYPE, "must be a float tensor")},
    {ROW(CUMPROD), A(.axis = -1), IN1(D(F32, 2, 2, U)), OUT(2, 2, U)},
    {ROW(SORT), A(.axis = -1), IN1(D(F32, 1, U)), OUT(1, U)},
    {ROW(ARGSORT), A(.axis = 1, .dtype = TIDE_INT64), IN1(D(F32, 2, 2, U)), OUT(2, 2, U)},
    {ROW(TOP_K), A(.n = 5), IN1(D(F32, 2, U, U)), OUT(2, U, 5), OUT1(2, U, 5)}, /* any k while the dim is unknown */
    {ROW(TOP_K), A(.n = 2), IN1(D(F32, 2, U, 3)), OUT(2, U, 2), OUT1(2, U, 2)},
    {ROW(TOP_K), A(.n = 5), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_VALUE, "k = 5 must be between 0")},
    {ROW(TOP_K), A(.n = -1), IN1(D(F32, 1, U)), ERR(TIDE_ERR_VALUE, "k = -1")},

    /* ---- matmul: inner dims merge, batch dims broadcast ---- */
    {ROW(MATMUL), IN2(D(F32, 2, U, 3), D(F32, 2, 3, 4)), OUT(2, U, 4)},
    {ROW(MATMUL), IN2(D(F32, 2, U, U), D(F32, 2, 3, 4)), OUT(2, U, 4)},
    {ROW(MATMUL), IN2(D(F32, 2, U, 3), D(F32, 2, 4, 5)), ERR(TIDE_ERR_SHAPE, "inner dimensions do not match")},
    {ROW(MATMUL), IN2(D(F32, 4, 2, U, 3, 4), D(F32, 3, U, 4, 5)), OUT(4, 2, U, 3, 5)},
    {ROW(MATMUL), A(.flags = TIDE_ATTR_TRANSPOSE_B), IN2(D(F32, 2, U, 3), D(F32, 2, U, 3)), OUT(2, U, U)},
    {ROW(MATMUL), IN2(D(F32, 1, U), D(F32, 2, U, 4)), OUT(1, 4)},
    {ROW(MATMUL), IN2(D(F32, 3, 2, U, 4), D(F32, 3, 3, 4, 5)), ERR(TIDE_ERR_SHAPE, "batch dimensions")},

    /* ---- reshape ---- */
    {ROW(RESHAPE), A(.ints = {-1}, .nints = 1), IN1(D(F32, 2, U, 3)), OUT(1, U)},
    {ROW(RESHAPE), A(.ints = {-1, 6}, .nints = 2), IN1(D(F32, 2, U, 3)), OUT(2, U, 6)},
    {ROW(RESHAPE), A(.ints = {6, -1}, .nints = 2), IN1(D(F32, 2, U, 3)), OUT(2, 6, U)},
    {ROW(RESHAPE), A(.ints = {2, 3}, .nints = 2), IN1(D(F32, 2, U, 3)), OUT(2, 2, 3)}, /* checked at run */
    {ROW(RESHAPE), A(.ints = {4}, .nints = 1), IN1(D(F32, 2, U, U)), OUT(1, 4)},
    {ROW(RESHAPE), A(.ints = {4}, .nints = 1), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_SHAPE, "a multiple of 3")},
    {ROW(RESHAPE), A(.ints = {0, -1}, .nints = 2), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_SHAPE, "cannot reshape")},
    {ROW(RESHAPE), A(.ints = {-1, -1}, .nints = 2), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_SHAPE, "only one")},

    /* ---- transpose, expand_dims, squeeze ---- */
    {ROW(TRANSPOSE), IN1(D(F32, 3, U, 3, 2)), OUT(3, 2, 3, U)},
    {ROW(TRANSPOSE), A(.ints = {1, 0, 2}, .nints = 3), IN1(D(F32, 3, U, 3, 2)), OUT(3, 3, U, 2)},
    {ROW(TRANSPOSE), A(.ints = {1, 1, 2}, .nints = 3), IN1(D(F32, 3, U, 3, 2)), ERR(TIDE_ERR_VALUE, "permutation")},
    {ROW(EXPAND_DIMS), A(.axis = 0), IN1(D(F32, 2, U, 3)), OUT(3, 1, U, 3)},
    {ROW(EXPAND_DIMS), A(.axis = -1), IN1(D(F32, 2, U, 3)), OUT(3, U, 3, 1)},
    {ROW(SQUEEZE), A(.ints = {0}, .nints = 1), IN1(D(F32, 3, U, 1, 3)), OUT(2, 1, 3)}, /* checked at run */
    {ROW(SQUEEZE), A(.ints = {1}, .nints = 1), IN1(D(F32, 3, U, 1, 3)), OUT(2, U, 3)},
    {ROW(SQUEEZE), IN1(D(F32, 2, 2, 1)), OUT(1, 2)},
    {ROW(SQUEEZE), IN1(D(F32, 3, U, 1, 3)), OUT(TIDE_UNKNOWN_RANK, 0)}, /* which dims go is known at run: TF's unknown rank */
    {ROW(SQUEEZE), A(.ints = {1}, .nints = 1), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_VALUE, "cannot squeeze axis 1")},

    /* ---- slice: ints = (start, stop, step) per dim; n shrink mask; m begin | end << 8 ---- */
    {ROW(SLICE), A(.ints = {0, 2, 1, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(SLICE), A(.ints = {1, 0, 1, 0, 3, 1}, .nints = 6, .n = 1), IN1(D(F32, 2, U, 3)), OUT(1, 3)},
    {ROW(SLICE), A(.ints = {-1, 0, 1, 0, 3, 1}, .nints = 6, .n = 1), IN1(D(F32, 2, U, 3)), OUT(1, 3)},
    {ROW(SLICE), A(.ints = {3, 1, 1, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), OUT(2, 0, 3)},
    {ROW(SLICE), A(.ints = {-1, -3, 1, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), OUT(2, 0, 3)},
    {ROW(SLICE), A(.ints = {1, 3, -1, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), OUT(2, 0, 3)},
    {ROW(SLICE), A(.ints = {-3, -1, 1, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(SLICE), A(.ints = {1, -1, 1, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(SLICE), A(.ints = {0, 0, -1, 0, 3, 2}, .nints = 6, .m = 1 | (1 << 8)), IN1(D(F32, 2, U, 3)), OUT(2, U, 2)},
    {ROW(SLICE), A(.ints = {0, 2, 0, 0, 3, 1}, .nints = 6), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_VALUE, "step cannot")},
    {ROW(SLICE), A(.ints = {0, 2, 1, 5, 0, 1}, .nints = 6, .n = 2), IN1(D(F32, 2, 2, U)), OUT(1, 2)},
    {ROW(SLICE), A(.ints = {0, 2, 1, 5, 0, 1}, .nints = 6, .n = 2), IN1(D(F32, 2, U, 3)),
     ERR(TIDE_ERR_INDEX, "index 5 is out of range")},
    {ROW(SLICE_UPDATE), A(.ints = {0, 2, 1, 0, 3, 1}, .nints = 6), IN2(D(F32, 2, U, 3), D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(SLICE_UPDATE), A(.ints = {0, 2, 1, 0, 3, 1}, .nints = 6), IN2(D(F32, 2, U, 3), D(F32, 2, 2, 3)), OUT(2, U, 3)},
    {ROW(SLICE_UPDATE), A(.ints = {0, 2, 1, 0, 3, 1}, .nints = 6), IN2(D(F32, 2, U, 3), D(F32, 2, U, 4)),
     ERR(TIDE_ERR_SHAPE, "update has shape")},

    /* ---- broadcast_to ---- */
    {ROW(BROADCAST_TO), A(.ints = {4, 5}, .nints = 2), IN1(D(F32, 2, U, 1)), OUT(2, 4, 5)},
    {ROW(BROADCAST_TO), A(.ints = {2, 3}, .nints = 2), IN1(D(F32, 1, U)), OUT(2, 2, 3)},
    {ROW(BROADCAST_TO), A(.ints = {4, 3}, .nints = 2), IN1(D(F32, 2, U, 2)), ERR(TIDE_ERR_SHAPE, "cannot broadcast")},

    /* ---- concat, tile, pad, reverse ---- */
    {ROW(CONCAT), A(.axis = 0), IN2(D(F32, 2, U, 3), D(F32, 2, 2, 3)), OUT(2, U, 3)},
    {ROW(CONCAT), A(.axis = 1), IN2(D(F32, 2, 2, 3), D(F32, 2, 2, U)), OUT(2, 2, U)},
    {ROW(CONCAT), A(.axis = 1), IN2(D(F32, 2, U, 3), D(F32, 2, 2, 3)), OUT(2, 2, 6)},
    {ROW(CONCAT), A(.axis = 0), IN3(D(F32, 2, U, U), D(F32, 2, 2, U), D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(CONCAT), A(.axis = 0), IN2(D(F32, 2, U, 3), D(F32, 2, U, 4)), ERR(TIDE_ERR_SHAPE, "dimension 1 of input 2 is 4")},
    {ROW(CONCAT), A(.axis = 1), IN3(D(F32, 2, U, U), D(F32, 2, 2, 3), D(F32, 2, 4, 3)),
     ERR(TIDE_ERR_SHAPE, "dimension 0 of input 3 is 4 but input 2 has 2")},
    {ROW(TILE), A(.ints = {2, 2}, .nints = 2), IN1(D(F32, 2, U, 3)), OUT(2, U, 6)},
    {ROW(TILE), A(.ints = {0, 1}, .nints = 2), IN1(D(F32, 2, U, 3)), OUT(2, 0, 3)}, /* TF's Multiply: 0 wins */
    {ROW(TILE), A(.ints = {1}, .nints = 1), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_VALUE, "multiples")},
    {ROW(PAD), A(.ints = {1, 1, 0, 2}, .nints = 4), IN1(D(F32, 2, U, 3)), OUT(2, U, 5)},
    {ROW(PAD), A(.ints = {-1, 1, 0, 2}, .nints = 4), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_VALUE, "must be >= 0")},
    {ROW(REVERSE), A(.ints = {0}, .nints = 1), IN1(D(F32, 2, U, 3)), OUT(2, U, 3)},

    /* ---- gather, one_hot, scatter_add ---- */
    {ROW(GATHER), A(.axis = 0), IN2(D(F32, 2, U, 4), D(I32, 1, 5)), OUT(2, 5, 4)},
    {ROW(GATHER), A(.axis = 1), IN2(D(F32, 2, 5, U), D(I32, 2, U, 2)), OUT(3, 5, U, 2)},
    {ROW(GATHER), A(.axis = 1, .n = 1), IN2(D(F32, 3, U, 4, 6), D(I32, 2, 3, 2)), OUT(3, 3, 2, 6)},
    {ROW(GATHER), A(.axis = 1, .n = 1), IN2(D(F32, 2, 2, U), D(I32, 2, 3, 2)), ERR(TIDE_ERR_SHAPE, "must agree")},
    /* ---- shapes as tensors: the rank is known, so shape's length is ---- */
    {ROW(SHAPE), A(.dtype = TIDE_INT32), IN1(D(F32, 3, U, 2, U)), OUT(1, 3)},
    {ROW(SHAPE), A(.dtype = TIDE_INT64), IN1(S(BOOL)), OUT(1, 0)},
    {ROW(SHAPE), A(.dtype = TIDE_FLOAT32), IN1(D(F32, 1, U)), ERR(TIDE_ERR_DTYPE, "out_type must be int32 or int64")},
    {ROW(SIZE), A(.dtype = TIDE_INT32), IN1(D(F32, 2, U, 3)), OUT(0, 0)},
    /* ---- a traced shape input (TIDE_OPF_SHAPE_INPUT): its length is the rank, every dim unknown ---- */
    {ROW(FILL), A(.dtype = TIDE_FLOAT32), IN1(D(I32, 1, 3)), OUT(3, U, U, U)},
    /* range with its bounds as tensors: the length is known only with their values */
    {ROW(RANGE_DYNAMIC), A(.dtype = I32), IN3(S(I32), S(I32), S(I32)), OUT(1, U)},
    {ROW(RANGE_DYNAMIC), A(.dtype = I32), IN3(S(I32), D(I32, 1, 2), S(I32)), ERR(TIDE_ERR_SHAPE, "range_dynamic: limit must be a scalar (0-d), got shape [2]")},
    {ROW(RANGE_DYNAMIC), A(.dtype = I32), IN3(S(F32), S(I32), S(I32)), ERR(TIDE_ERR_DTYPE, "range_dynamic: start is float32 but the result is int32")},
    {ROW(FILL), A(.dtype = TIDE_FLOAT32), IN1(D(TIDE_INT64, 1, 0)), OUT(0, 0)},
    {ROW(RANDOM_NORMAL), A(.dtype = TIDE_FLOAT32), IN1(D(I32, 1, 2)), OUT(2, U, U)},
    {ROW(FILL), A(.dtype = TIDE_FLOAT32), IN1(D(F32, 1, 2)), ERR(TIDE_ERR_DTYPE, "fill: the shape must be an int32 or int64")},
    {ROW(FILL), A(.dtype = TIDE_FLOAT32), IN1(D(I32, 2, 1, 2)), ERR(TIDE_ERR_SHAPE, "fill: the shape must be a 1-D tensor")},
    {ROW(FILL), A(.dtype = TIDE_FLOAT32), IN1(D(I32, 1, U)), OUT(TIDE_UNKNOWN_RANK, 0)}, /* a shape of unknown length */
    {ROW(RESHAPE), IN2(D(F32, 2, U, 3), D(I32, 1, 3)), OUT(3, U, U, U)},
    {ROW(BROADCAST_TO), IN2(D(F32, 2, U, 3), D(I32, 1, 3)), OUT(3, U, U, U)},
    {ROW(BROADCAST_TO), IN2(D(F32, 2, U, 3), D(I32, 1, 1)), ERR(TIDE_ERR_SHAPE, "to a shape of rank 1")},
    /* attrs ints of the shape's length: the dims the trace knows (-1: known at run time) */
    {ROW(FILL), A(.dtype = TIDE_FLOAT32, .ints = {U, 3}, .nints = 2), IN1(D(TIDE_INT64, 1, 2)), OUT(2, U, 3)},
    {ROW(FILL), A(.dtype = TIDE_FLOAT32, .ints = {4}, .nints = 1), IN1(D(TIDE_INT64, 1, 2)), OUT(2, U, U)},
    {ROW(BROADCAST_TO), A(.ints = {U, 5, 3}, .nints = 3), IN2(D(F32, 2, U, 3), D(I32, 1, 3)), OUT(3, U, 5, 3)},
    /* sum_to: broadcast_to's transpose; an unknown target dim is decided at run time */
    {ROW(SUM_TO), A(.ints = {3}, .nints = 1), IN1(D(F32, 2, U, 3)), OUT(1, 3)},
    {ROW(SUM_TO), A(.ints = {1, 3}, .nints = 2), IN1(D(F32, 2, U, U)), OUT(2, 1, 3)},
    {ROW(SUM_TO), A(.ints = {U, 3}, .nints = 2), IN2(D(F32, 2, U, 3), D(TIDE_INT64, 1, 2)), OUT(2, U, 3)},
    {ROW(SUM_TO), A(.ints = {2, 3}, .nints = 2), IN1(D(F32, 2, U, 4)), ERR(TIDE_ERR_SHAPE, "cannot sum shape")},
    {ROW(SUM_TO), A(.ints = {1, 1, 3}, .nints = 3), IN1(D(F32, 2, U, 3)), ERR(TIDE_ERR_SHAPE, "a shape of rank 3")},
    {ROW(EYE), A(.dtype = TIDE_FLOAT32, .ints = {2, 2}, .nints = 2), IN1(D(I32, 1, 2)),
     ERR(TIDE_ERR_VALUE, "expects 0 input(s), got 1")}, /* not flagged: no shape input */

    {ROW(ONE_HOT), A(.n = 4, .axis = -1, .dtype = TIDE_FLOAT32), IN1(D(I32, 1, U)), OUT(2, U, 4)},
    {ROW(ONE_HOT), A(.n = 4, .axis = 0, .dtype = TIDE_FLOAT32), IN1(D(I32, 1, U)), OUT(2, 4, U)},
    {ROW(SCATTER_ADD), A(.axis = 0), IN3(D(F32, 2, U, 3), D(I32, 1, 5), D(F32, 2, 5, 3)), OUT(2, U, 3)},
    {ROW(SCATTER_ADD), A(.axis = 0), IN3(D(F32, 2, U, U), D(I32, 1, 2), D(F32, 2, 2, 7)), OUT(2, U, 7)},
    {ROW(SCATTER_ADD), A(.axis = 1), IN3(D(F32, 2, U, 6), D(I32, 1, U), D(F32, 2, 4, U)), OUT(2, 4, 6)},
    {ROW(SCATTER_ADD), A(.axis = 0), IN3(D(F32, 2, U, 3), D(I32, 1, 5), D(F32, 2, 5, 4)),
     ERR(TIDE_ERR_SHAPE, "updates have shape")},

    /* ---- the n-d index ops: the index depth (indices' last dim) must be known ---- */
    {ROW(GATHER_ND), IN2(D(F32, 2, U, 3), D(I32, 2, U, 1)), OUT(2, U, 3)},
    {ROW(GATHER_ND), A(.n = 1), IN2(D(F32, 3, U, 4, 5), D(I32, 3, 2, U, 1)), OUT(3, 2, U, 5)},
    {ROW(GATHER_ND), IN2(D(F32, 2, 3, 3), D(I32, 2, U, U)), ERR(TIDE_ERR_SHAPE, "(the index depth) must be known")},
    {ROW(GATHER_ND), IN2(D(F32, 1, U), D(I32, 2, U, 2)), ERR(TIDE_ERR_SHAPE, "cannot index params of rank 1")},
    {ROW(TENSOR_SCATTER_ND_ADD), IN3(D(F32, 2, U, 3), D(I32, 2, U, 1), D(F32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(TENSOR_SCATTER_ND_UPDATE), IN3(D(F32, 2, U, U), D(I32, 2, 4, 1), D(F32, 2, 4, 5)), OUT(2, U, 5)},
    {ROW(TENSOR_SCATTER_ND_ADD), IN3(D(F32, 2, U, 3), D(I32, 2, U, 1), D(F32, 2, U, 4)),
     ERR(TIDE_ERR_SHAPE, "updates have shape")},
    /* ---- sized by their kernels (TIDE_OPF_DATA_SHAPE): the counted dim is always unknown ---- */
    {ROW(WHERE_INDICES), IN1(D(BOOL, 3, U, 2, U)), OUT(2, U, 3)},
    {ROW(UNIQUE), A(.dtype = TIDE_INT32), IN1(D(F32, 1, U)), OUT(1, U), OUT1(1, U)},
    {ROW(UNIQUE), A(.dtype = TIDE_INT64), IN1(D(F32, 1, 5)), OUT(1, U), OUT1(1, 5)},
    {ROW(SEGMENT_SUM), IN2(D(F32, 2, U, 3), D(I32, 1, U)), OUT(2, U, 3)},
    {ROW(SEGMENT_MEAN), IN2(D(F32, 2, 4, U), D(I32, 1, U)), OUT(2, U, U)},
    {ROW(SEGMENT_MAX), IN2(D(F32, 1, U), D(I32, 1, 4)), OUT(1, U)},
    {ROW(SEGMENT_MIN), IN2(D(F32, 2, U, 3), D(I32, 1, 2)), OUT(2, U, 3)},
    {ROW(SEGMENT_PROD), IN2(D(F32, 2, 4, 3), D(I32, 1, 5)), ERR(TIDE_ERR_SHAPE, "one id per row")},
    /* ---- unsorted segments: num_segments a traced scalar, its value unknown ---- */
    {ROW(UNSORTED_SEGMENT_SUM), IN3(D(F32, 3, U, 2, 3), D(I32, 2, U, 2), S(I32)), OUT(2, U, 3)},
    {ROW(UNSORTED_SEGMENT_MAX), IN3(D(F32, 2, U, U), D(I32, 1, U), S(TIDE_INT64)), OUT(2, U, U)},
    {ROW(UNSORTED_SEGMENT_MIN), IN3(D(F32, 1, U), D(I32, 1, U), D(I32, 1, 1)), OUT(1, U)},
    {ROW(UNSORTED_SEGMENT_PROD), IN3(D(F32, 2, U, 3), D(I32, 2, U, 4), S(I32)),
     ERR(TIDE_ERR_SHAPE, "does not start with segment_ids' shape")},

    /* ---- convolutions and pooling (NHWC) ---- */
    {ROW(CONV2D), A(CONV_SAME(1)), IN2(D(F32, 4, U, 8, 8, 3), D(F32, 4, 3, 3, 3, 16)), OUT(4, U, 8, 8, 16)},
    {ROW(CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, U, U, 3), D(F32, 4, 3, 3, 3, 16)), OUT(4, U, U, U, 16)},
    {ROW(CONV2D), A(CONV_SAME(2)), IN2(D(F32, 4, 2, U, 9, 3), D(F32, 4, 3, 3, 3, 4)), OUT(4, 2, U, 5, 4)},
    {ROW(CONV2D), A(CONV_SAME(2)), IN2(D(F32, 4, 2, 9, 9, 3), D(F32, 4, U, U, 3, 4)), OUT(4, 2, 5, 5, 4)},
    {ROW(CONV2D), A(CONV_VALID), IN2(D(F32, 4, 2, 9, 9, 3), D(F32, 4, U, 3, 3, U)), OUT(4, 2, U, 7, U)},
    {ROW(CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, 8, 8, U), D(F32, 4, 3, 3, 3, 16)), OUT(4, U, 6, 6, 16)},
    {ROW(CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, 8, 8, 4), D(F32, 4, 3, 3, 3, 16)),
     ERR(TIDE_ERR_SHAPE, "4 channel(s) but the filters expect 3")},
    /* TF's rule: a window larger by less than two strides gives an empty result, larger fails */
    {ROW(CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, 2, 2, 3), D(F32, 4, 3, 3, 3, 16)), OUT(4, U, 0, 0, 16)},
    {ROW(CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, 1, 2, 3), D(F32, 4, 3, 3, 3, 16)),
     ERR(TIDE_ERR_SHAPE, "larger than the padded input (1x2) by two strides or more")},
    {ROW(DEPTHWISE_CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, 8, 8, U), D(F32, 4, 3, 3, U, 2)), OUT(4, U, 6, 6, U)},
    {ROW(DEPTHWISE_CONV2D), A(CONV_VALID), IN2(D(F32, 4, U, 8, 8, U), D(F32, 4, 3, 3, 3, 2)), OUT(4, U, 6, 6, 6)},
    {ROW(CONV2D_BACKPROP_INPUT), A(CONV_BP_SAME(2, 8, 8, 3)), IN2(D(F32, 4, U, 8, 8, 16), D(F32, 4, 3, 3, 3, 16)),
     OUT(4, 2, 8, 8, 3)},
    {ROW(CONV2D_BACKPROP_INPUT), A(CONV_BP_SAME(2, 8, 8, 3)), IN2(D(F32, 4, U, 7, 8, 16), D(F32, 4, 3, 3, 3, 16)),
     ERR(TIDE_ERR_SHAPE, "out_backprop has shape")},
    {ROW(CONV2D_BACKPROP_FILTER), A(CONV_BP_SAME(3, 3, 3, 16)), IN2(D(F32, 4, U, 8, 8, 3), D(F32, 4, U, 8, 8, 16)),
     OUT(4, 3, 3, 3, 16)},
    {ROW(DEPTHWISE_CONV2D_BACKPROP_INPUT), A(CONV_BP_SAME(2, 8, 8, 3)),
     IN2(D(F32, 4, U, 8, U, 6), D(F32, 4, 3, 3, 3, 2)), OUT(4, 2, 8, 8, 3)},
    {ROW(DEPTHWISE_CONV2D_BACKPROP_FILTER), A(CONV_BP_SAME(3, 3, 3, 2)),
     IN2(D(F32, 4, U, 8, 8, U), D(F32, 4, U, 8, 8, 6)), OUT(4, 3, 3, 3, 2)},
    {ROW(MAX_POOL2D), A(POOL(2, 2, 0)), IN1(D(F32, 4, U, 8, 8, 3)), OUT(4, U, 4, 4, 3)},
    {ROW(AVG_POOL2D), A(POOL(2, 2, 1)), IN1(D(F32, 4, U, U, 7, 3)), OUT(4, U, U, 4, 3)},
    {ROW(MAX_POOL2D_GRAD), A(POOL(2, 2, 0)), IN3(D(F32, 4, U, 8, 8, 3), D(F32, 4, U, 4, 4, 3), D(F32, 4, U, 4, 4, 3)),
     OUT(4, U, 8, 8, 3)},
    {ROW(AVG_POOL2D_GRAD), A(POOL(2, 2, 0)), IN2(D(F32, 4, U, 8, 8, 3), D(F32, 4, U, 5, 4, 3)),
     ERR(TIDE_ERR_SHAPE, "out_backprop has shape")},
    {ROW(MAX_POOL2D_GRAD_GRAD), A(POOL(2, 2, 0)), IN3(D(F32, 4, U, 8, U, 3), D(F32, 4, 2, U, 4, 3), D(F32, 4, U, 8, 8, U)),
     OUT(4, 2, 4, 4, 3)}, /* each operand lends the dims it knows */
    {ROW(MAX_POOL2D_GRAD_GRAD), A(POOL(2, 2, 0)), IN3(D(F32, 4, U, 8, 8, 3), D(F32, 4, U, 4, 4, 3), D(F32, 4, U, 8, 7, 3)),
     ERR(TIDE_ERR_SHAPE, "grad has shape")},
    /* a backprop op's shape as a third input (a traced tide.shape(x)): ints[8..11] are what the trace knows */
    {ROW(CONV2D_BACKPROP_INPUT), A(CONV_BP_SAME(U, 8, U, 3)),
     IN3(D(F32, 4, U, 8, 8, 16), D(F32, 4, 3, 3, 3, 16), D(TIDE_INT64, 1, 4)), OUT(4, U, 8, U, 3)},
    {ROW(DEPTHWISE_CONV2D_BACKPROP_FILTER), A(CONV_BP_SAME(3, 3, U, U)),
     IN3(D(F32, 4, U, 8, 8, U), D(F32, 4, U, 8, 8, 6), D(I32, 1, 4)), OUT(4, 3, 3, U, U)},
    {ROW(CONV2D_BACKPROP_FILTER), A(CONV_BP_SAME(3, 3, 3, 16)),
     IN3(D(F32, 4, U, 8, 8, 3), D(F32, 4, U, 8, 8, 16), D(I32, 1, 3)), ERR(TIDE_ERR_SHAPE, "must have 4 entries")},
    {ROW(CONV2D_BACKPROP_INPUT), A(CONV_BP_SAME(U, 8, 8, 3)), IN2(D(F32, 4, U, 8, 8, 16), D(F32, 4, 3, 3, 3, 16)),
     ERR(TIDE_ERR_SHAPE, "has a negative dimension")}, /* -1 only beside a shape input */

    /* ---- softmax and the fused cross-entropy ---- */
    {ROW(SOFTMAX), A(.axis = -1), IN1(D(F32, 2, U, 5)), OUT(2, U, 5)},
    {ROW(LOG_SOFTMAX), A(.axis = 0), IN1(D(F32, 2, U, U)), OUT(2, U, U)},
    {ROW(SPARSE_SOFTMAX_XENT), IN2(D(I32, 1, U), D(F32, 2, U, 5)), OUT(1, U), OUT1(2, U, 5)},
    {ROW(SPARSE_SOFTMAX_XENT), IN2(D(I32, 1, 4), D(F32, 2, U, 5)), OUT(1, 4), OUT1(2, 4, 5)},
    {ROW(SPARSE_SOFTMAX_XENT), IN2(D(I32, 1, 3), D(F32, 2, 4, U)), ERR(TIDE_ERR_SHAPE, "same first dimension")},
    {ROW(SPARSE_SOFTMAX_XENT), IN2(D(I32, 1, U), D(F32, 2, U, 0)), ERR(TIDE_ERR_SHAPE, "at least one class")},
    {ROW(BETAINC), IN3(D(F32, 2, U, 3), S(F32), D(F32, 2, 4, U)), OUT(2, 4, 3)},
    {ROW(BETAINC), IN3(D(F32, 1, 2), D(F32, 1, 3), S(F32)), ERR(TIDE_ERR_SHAPE, "incompatible shapes")},
    {ROW(CTC_LOSS), IN4(D(F32, 3, U, U, 5), D(I32, 2, U, U), D(I32, 1, U), D(I32, 1, 3)), OUT(1, 3), OUT1(3, U, 3, 5)},
    {ROW(CTC_LOSS), A(.n = 4), IN4(D(F32, 3, U, 2, U), D(I32, 2, 2, 7), D(I32, 1, U), D(I32, 1, U)), OUT(1, 2), OUT1(3, U, 2, U)},
    {ROW(CTC_LOSS), A(.n = 5), IN4(D(F32, 3, 4, 2, 5), D(I32, 2, 2, 3), D(I32, 1, 2), D(I32, 1, 2)),
     ERR(TIDE_ERR_VALUE, "blank_index 5 is not a class")},
    {ROW(CTC_LOSS), IN4(D(F32, 3, 4, 2, 5), D(I32, 2, 3, 3), D(I32, 1, U), D(I32, 1, U)), ERR(TIDE_ERR_SHAPE, "labels has a batch of 3")},
    {ROW(CTC_LOSS), IN4(D(F32, 3, 4, 2, 5), D(I32, 2, 2, 3), D(F32, 1, 2), D(I32, 1, 2)), ERR(TIDE_ERR_DTYPE, "label_length must be int32 or int64")},
    {ROW(CTC_LOSS), IN4(D(F32, 3, 4, 2, 5), D(I32, 1, 2), D(I32, 1, 2), D(I32, 1, 2)), ERR(TIDE_ERR_SHAPE, "labels must be 2-D")},
    {ROW(CTC_LOSS), IN4(D(F32, 3, 4, U, 0), D(I32, 2, U, 3), D(I32, 1, U), D(I32, 1, U)), ERR(TIDE_ERR_SHAPE, "at least one class")},
    /* ---- images: decoders size H and W from the file; resize keeps batch and channels ---- */
    {ROW(DECODE_PNG), A(.n = 0, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, U)},
    {ROW(DECODE_PNG), A(.n = 4, .dtype = I32), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, 4)},
    {ROW(DECODE_PNG), A(.n = 2, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), ERR(TIDE_ERR_VALUE, "channels must be 0, 1, 3 or 4")},
    {ROW(DECODE_JPEG), A(.n = 1, .m = 2, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, 1)},
    {ROW(DECODE_JPEG), A(.n = 1, .m = 3, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), ERR(TIDE_ERR_VALUE, "ratio must be 1, 2, 4 or 8")},
    {ROW(DECODE_IMAGE), A(.n = 0, .dtype = TIDE_UINT8), IN1(S(STR)), OUT(3, U, U, U)},
    {ROW(DECODE_IMAGE), A(.n = 1, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 1, U)), OUT(3, U, U, 1)},
    {ROW(DECODE_IMAGE), A(.n = 2, .dtype = TIDE_UINT8), IN1(S(STR)), ERR(TIDE_ERR_VALUE, "channels must be 0, 1, 3 or 4")},
    {ROW(DECODE_IMAGE), A(.dtype = TIDE_UINT8), IN1(D(STR, 1, U)), ERR(TIDE_ERR_VALUE, "contents must be a scalar string tensor")},
    {ROW(READ_FILE), IN1(S(STR)), OUT(0, 0)},
    {ROW(READ_FILE), IN1(D(STR, 1, U)), ERR(TIDE_ERR_VALUE, "filename must be a scalar string tensor")},
    {ROW(ENCODE_PNG), A(.n = -1, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 3, U, U, 3)), OUT(1, U)},
    {ROW(ENCODE_PNG), A(.n = -1, .dtype = TIDE_UINT8), IN1(D(TIDE_UINT8, 3, U, U, 5)), ERR(TIDE_ERR_SHAPE, "1 to 4 channels")},
    {ROW(RESIZE_BILINEAR), A(.ints = {3, 4}, .nints = 2, .dtype = F32), IN1(D(TIDE_UINT8, 4, U, U, U, 3)), OUT(4, U, 3, 4, 3)},
    {ROW(RESIZE_NEAREST), A(.ints = {5, 2}, .nints = 2), IN1(D(F32, 3, U, 7, U)), OUT(3, 5, 2, U)},
    {ROW(RESIZE_NEAREST), A(.ints = {5, 2}, .nints = 2), IN1(D(F32, 2, U, 7)), ERR(TIDE_ERR_SHAPE, "images must be [height, width, channels]")},
    {ROW(RESIZE_BILINEAR_GRAD), A(.dtype = F32), IN2(D(F32, 4, U, 3, 4, 2), D(F32, 4, U, U, U, 2)), OUT(4, U, U, U, 2)},
    {ROW(RESIZE_NEAREST_GRAD), A(.dtype = F32), IN2(D(F32, 3, 3, 4, U), D(F32, 3, 8, 8, 2)), OUT(3, 8, 8, 2)},
    {ROW(RESIZE_NEAREST_GRAD), A(.dtype = F32), IN2(D(F32, 3, 3, 4, 1), D(F32, 3, 8, 8, 2)), ERR(TIDE_ERR_SHAPE, "must agree in rank, batch and channels")},
    /* ---- image boxes: the unpadded count comes from the data; padded and combined results are known ---- */
    {ROW(NON_MAX_SUPPRESSION), A(.n = 5), IN2(D(F32, 2, U, 4), D(F32, 1, U)), OUT(1, U), OUT1(1, U)},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 5, .m = 1), IN2(D(F32, 2, U, 4), D(F32, 1, U)), OUT(1, 5), OUT1(1, 5)},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 3, .m = 3), IN2(D(F32, 3, U, U, 4), D(F32, 2, U, U)), OUT(2, U, 3), OUT1(2, U, 3)},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 3), IN2(D(F32, 2, U, 4), D(F32, 1, 2)), OUT(1, U), OUT1(1, U)},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 3), IN2(D(F32, 2, 3, 4), D(F32, 1, 2)), ERR(TIDE_ERR_SHAPE, "one score per box")},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 3), IN2(D(F32, 2, U, 5), D(F32, 1, U)), ERR(TIDE_ERR_SHAPE, "boxes must have 4 columns")},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 3, .scalars = {2}), IN2(D(F32, 2, U, 4), D(F32, 1, U)), ERR(TIDE_ERR_VALUE, "iou_threshold must be in [0, 1]")},
    {ROW(NON_MAX_SUPPRESSION_OVERLAPS), A(.n = 2, .scalars = {2}), IN2(D(F32, 2, U, U), D(F32, 1, U)), OUT(1, U), OUT1(1, U)},
    {ROW(NON_MAX_SUPPRESSION_OVERLAPS), A(.n = 2), IN2(D(F32, 2, 3, 4), D(F32, 1, U)), ERR(TIDE_ERR_SHAPE, "overlaps must be square")},
    {ROW(COMBINED_NON_MAX_SUPPRESSION), A(.n = 2, .m = 7), IN2(D(F32, 4, U, U, 1, 4), D(F32, 3, U, U, 3)), OUT(3, U, 7, 4), OUT1(2, U, 7)},
    {ROW(COMBINED_NON_MAX_SUPPRESSION), A(.n = 2, .m = 7, .ints = {1, 1}, .nints = 2), IN2(D(F32, 4, 2, U, U, 4), D(F32, 3, 2, U, 3)), OUT(3, 2, 6, 4), OUT1(2, 2, 6)},
    {ROW(COMBINED_NON_MAX_SUPPRESSION), A(.n = 2, .m = 7, .ints = {1, 1}, .nints = 2), IN2(D(F32, 4, 2, U, U, 4), D(F32, 3, 2, U, U)), OUT(3, 2, U, 4), OUT1(2, 2, U)},
    {ROW(COMBINED_NON_MAX_SUPPRESSION), A(.n = 2, .m = 7), IN2(D(F32, 4, U, U, 2, 4), D(F32, 3, U, U, 3)), ERR(TIDE_ERR_SHAPE, "either 1 or num_classes")},
    {ROW(DRAW_BOUNDING_BOXES), IN3(D(F32, 4, U, U, U, 3), D(F32, 3, U, U, 4), D(F32, 2, U, 4)), OUT(4, U, U, U, 3)},
    {ROW(DRAW_BOUNDING_BOXES), IN3(D(F32, 4, U, U, U, 2), D(F32, 3, U, U, 4), D(F32, 2, U, 4)), ERR(TIDE_ERR_SHAPE, "channel depth should be")},
    {ROW(ENCODE_JPEG), A(.ints = {0, 300, 300}, .nints = 3, .dtype = TIDE_UINT8), IN2(D(TIDE_UINT8, 3, U, U, 3), S(I32)), OUT(1, U)},
    {ROW(ENCODE_JPEG), A(.ints = {0, 300, 300}, .nints = 3, .dtype = TIDE_UINT8), IN2(D(TIDE_UINT8, 3, U, U, 2), S(I32)), ERR(TIDE_ERR_SHAPE, "1 or 3 channels")},
    {ROW(STATELESS_RANDOM_UNIFORM), A(.ints = {2, 3}, .nints = 2, .dtype = F32), IN1(D(I32, 1, U)), OUT(2, 2, 3)},
    {ROW(STATELESS_RANDOM_UNIFORM), A(.dtype = F32), IN2(D(I32, 1, 2), D(I32, 1, 2)), OUT(2, U, U)},
    {ROW(STATELESS_RANDOM_UNIFORM), A(.dtype = I32, .scalars = {3, 3}), IN1(D(I32, 1, 2)), ERR(TIDE_ERR_VALUE, "needs minval < maxval")},
    {ROW(SAMPLE_DISTORTED_BOUNDING_BOX), A(.n = 10, .scalars = {0.1, 1, 0.75, 1.33}), IN3(D(I32, 1, U), D(F32, 3, U, U, 4), S(F32)), OUT(1, 3), OUT1(1, 3)},
    {ROW(SAMPLE_DISTORTED_BOUNDING_BOX), A(.n = 10, .scalars = {0, 1, 0.75, 1.33}), IN3(D(I32, 1, 3), D(F32, 3, 1, U, 4), S(F32)), ERR(TIDE_ERR_VALUE, "area_range must lie in (0, 1]")},
    {ROW(STATELESS_SAMPLE_DISTORTED_BOUNDING_BOX), A(.n = 1, .scalars = {0.1, 1, 1, 1}), IN4(D(TIDE_INT64, 1, 3), D(F32, 3, U, U, 4), S(F32), D(I32, 1, U)), OUT(1, 3), OUT1(1, 3)},
    {ROW(STATELESS_SAMPLE_DISTORTED_BOUNDING_BOX), A(.n = 1, .scalars = {0.1, 1, 1, 1}), IN4(D(I32, 1, 3), D(F32, 2, U, 4), S(F32), D(I32, 1, 2)), ERR(TIDE_ERR_SHAPE, "bounding_boxes must be 3-D")},

    /* ---- strings: elementwise shapes kept; split's sizes come from the data ---- */
    {ROW(STRING_LOWER), IN1(D(STR, 2, U, 3)), OUT(2, U, 3)},
    {ROW(STRING_UPPER), IN1(D(STR, 1, U)), OUT(1, U)},
    {ROW(STRING_STRIP), IN1(D(STR, 1, U)), OUT(1, U)},
    {ROW(STRING_LENGTH), IN1(D(STR, 2, 2, U)), OUT(2, 2, U)},
    {ROW(STRING_TO_NUMBER), A(.dtype = TIDE_FLOAT32), IN1(D(STR, 1, U)), OUT(1, U)},
    {ROW(AS_STRING), IN1(D(I32, 2, U, 4)), OUT(2, U, 4)},
    {ROW(STRING_JOIN), IN3(S(STR), D(STR, 2, U, 1), D(STR, 1, 3)), OUT(2, U, 3)},
    {ROW(STRING_JOIN), IN3(S(STR), D(STR, 1, 2), D(STR, 1, 3)), ERR(TIDE_ERR_SHAPE, "incompatible shapes")},
    {ROW(STRING_JOIN), IN2(D(STR, 1, U), D(STR, 1, 3)), ERR(TIDE_ERR_VALUE, "the separator must be a scalar string")},
    {ROW(STRING_FORMAT), IN2(D(STR, 1, U), D(TIDE_FLOAT32, 2, U, 3)), OUT(0, 0)},
    {ROW(STRING_FORMAT), IN2(D(STR, 1, 3), D(TIDE_FLOAT32, 1, U)),
     ERR(TIDE_ERR_VALUE, "the pieces must be a 1-D string tensor of 2 (one more than the 1 tensors)")},
    {ROW(REDUCE_JOIN), A(.ints = {0}, .nints = 1), IN2(D(STR, 2, U, 3), S(STR)), OUT(1, 3)},
    {ROW(REDUCE_JOIN), A(.ints = {1}, .nints = 1, .flags = TIDE_ATTR_KEEPDIMS), IN2(D(STR, 2, U, 3), S(STR)), OUT(2, U, 1)},
    {ROW(SUBSTR), IN3(D(STR, 1, U), S(I32), D(TIDE_INT64, 2, 2, 1)), OUT(2, 2, U)},
    {ROW(SUBSTR), IN3(D(STR, 1, U), S(F32), S(I32)), ERR(TIDE_ERR_DTYPE, "pos must be int32 or int64, got float32")},
    {ROW(REGEX_REPLACE), IN3(D(STR, 2, U, 2), S(STR), S(STR)), OUT(2, U, 2)},
    {ROW(REGEX_REPLACE), IN3(D(STR, 1, U), D(STR, 1, 1), S(STR)), ERR(TIDE_ERR_VALUE, "the pattern must be a scalar")},
    {ROW(STRING_SPLIT), IN2(D(STR, 1, U), S(STR)), OUT(1, U), OUT1(1, U)},
    {ROW(STRING_SPLIT), IN2(D(STR, 1, 4), S(STR)), OUT(1, U), OUT1(1, 5)},
    {ROW(STRING_SPLIT), IN2(S(STR), S(STR)), OUT(1, U), OUT1(1, 2)},
    {ROW(STRING_SPLIT), IN2(D(STR, 2, U, 2), S(STR)), ERR(TIDE_ERR_SHAPE, "must be a scalar or a vector")},
    {ROW(STRING_HASH), A(.n = 7), IN1(D(STR, 2, U, 3)), OUT(2, U, 3)},
    {ROW(FINGERPRINT), A(.dtype = TIDE_UINT8), IN1(D(STR, 2, U, 3)), OUT(2, U, 8)},
    {ROW(FINGERPRINT), A(.dtype = TIDE_UINT8), IN1(D(I32, 3, 4, U, 2)), OUT(2, 4, 8)},
    {ROW(FINGERPRINT), A(.dtype = TIDE_UINT8), IN1(D(I32, 0)), ERR(TIDE_ERR_SHAPE, "fingerprint: data must have rank at least 1")},
    {ROW(BITCAST), A(.dtype = TIDE_UINT8), IN1(D(F32, 2, U, 3)), OUT(3, U, 3, 4)},
    {ROW(BITCAST), A(.dtype = F32), IN1(D(TIDE_UINT8, 2, 3, U)), OUT(1, 3)},
    {ROW(BITCAST), A(.dtype = I32), IN1(D(F32, 1, U)), OUT(1, U)},
    {ROW(BITCAST), A(.dtype = I32), IN1(D(TIDE_UINT8, 1, 3)), ERR(TIDE_ERR_SHAPE, "shape [3] does not end in 4")},
    {ROW(CROSS_HASHED), A(.n = 7), IN3(D(STR, 2, U, 2), D(I64, 2, 4, 3), D(STR, 2, U, 1)), OUT(2, 4, 6)},
    {ROW(UNICODE_DECODE), A(.m = 1), IN1(D(STR, 1, U)), OUT(1, U), OUT1(1, U)},
    {ROW(UNICODE_DECODE), IN1(D(STR, 1, 3)), OUT(1, U), OUT1(1, 4)},
    {ROW(UNICODE_DECODE), IN1(D(STR, 2, U, 3)), ERR(TIDE_ERR_SHAPE, "must be a scalar or a vector")},
    {ROW(UNICODE_DECODE), A(.m = 7), IN1(D(STR, 1, U)), ERR(TIDE_ERR_VALUE, "unknown encoding 7")},
    {ROW(UNICODE_ENCODE), IN1(D(I32, 2, U, 3)), OUT(2, U, 3)},
    {ROW(UNICODE_ENCODE), IN2(D(I32, 1, U), D(I64, 1, U)), OUT(1, U)},
    {ROW(UNICODE_ENCODE), IN2(D(I32, 1, U), D(I64, 1, 5)), OUT(1, 4)},
    {ROW(UNICODE_ENCODE), A(.n = 3), IN1(D(I32, 1, U)), ERR(TIDE_ERR_VALUE, "unknown error mode 3")},
    {ROW(UNICODE_ENCODE), IN2(D(I32, 2, U, 2), D(I64, 1, U)), ERR(TIDE_ERR_SHAPE, "ragged code points must be a vector")},
    {ROW(UNICODE_SCRIPT), IN1(D(I32, 2, U, 2)), OUT(2, U, 2)},
    {ROW(UNICODE_SCRIPT), IN1(D(I64, 1, U)), ERR(TIDE_ERR_DTYPE, "must be int32 code points")},
    {ROW(REGEX_FULL_MATCH), IN2(D(STR, 2, U, 2), S(STR)), OUT(2, U, 2)},
    {ROW(REGEX_FULL_MATCH), IN2(D(STR, 1, U), D(STR, 1, 1)), ERR(TIDE_ERR_VALUE, "the pattern must be a scalar string")},
    {ROW(UNSORTED_SEGMENT_JOIN), A(.n = 5), IN3(D(STR, 3, U, 2, 3), D(I64, 2, U, 2), S(STR)), OUT(2, 5, 3)},
    {ROW(UNSORTED_SEGMENT_JOIN), A(.n = 5), IN3(D(STR, 2, 4, 3), D(I32, 1, 3), S(STR)), ERR(TIDE_ERR_SHAPE, "must be a prefix of the inputs' shape")},
    {ROW(UNSORTED_SEGMENT_JOIN), A(.n = -1), IN3(D(STR, 1, 4), D(I32, 1, 4), S(STR)), ERR(TIDE_ERR_VALUE, "num_segments must be 0 or more")},
    {ROW(CROSS_HASHED), IN2(D(STR, 2, U, U), D(I64, 2, U, 1)), OUT(2, U, U)},
    {ROW(CROSS_HASHED), IN2(D(STR, 2, 2, 1), D(I64, 2, 3, 1)), ERR(TIDE_ERR_SHAPE, "input 2 has 3 rows, an earlier input 2")},
    {ROW(CROSS_HASHED), IN2(D(STR, 1, 2), D(I64, 2, 2, 1)), ERR(TIDE_ERR_SHAPE, "input 1 must be 2-D [batch, features]")},
    {ROW(CROSS_HASHED), A(.n = -1), IN2(D(STR, 2, 2, 1), D(I64, 2, 2, 1)), ERR(TIDE_ERR_VALUE, "num_buckets must be 0 (none) or more")},
    {ROW(STRING_HASH), A(.n = 0), IN1(D(STR, 1, U)), ERR(TIDE_ERR_VALUE, "num_buckets must be at least 1, got 0")},
    {ROW(STRING_NGRAMS), A(.ints = {2, 3}, .nints = 2, .n = -1), IN4(D(STR, 2, U, 4), S(STR), S(STR), S(STR)), OUT(2, U, 11), OUT1(1, U)},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN4(D(STR, 2, 3, U), S(STR), S(STR), S(STR)), OUT(2, 3, U), OUT1(1, 4)},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN5(D(STR, 1, U), S(STR), S(STR), S(STR), D(I64, 1, U)), OUT(1, U), OUT1(1, U)},
    {ROW(STRING_NGRAMS), A(.ints = {0}, .nints = 1), IN4(D(STR, 1, U), S(STR), S(STR), S(STR)), ERR(TIDE_ERR_VALUE, "every ngram_width must be at least 1")},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN4(S(STR), S(STR), S(STR), S(STR)), ERR(TIDE_ERR_SHAPE, "rank 1 or more")},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN5(D(STR, 1, U), S(STR), S(STR), S(STR), D(I32, 1, U)), ERR(TIDE_ERR_VALUE, "row_splits must be a 1-D int64")},
    {ROW(LOOKUP_TABLE), IN1(D(STR, 1, U)), OUT(1, U)},
    {ROW(LOOKUP_TABLE), IN1(D(TIDE_INT64, 1, 5)), OUT(1, 16)},
    {ROW(LOOKUP_TABLE), IN1(D(STR, 2, 2, U)), ERR(TIDE_ERR_SHAPE, "the vocabulary must be a vector")},
    {ROW(LOOKUP_FIND), A(.n = 2, .m = 1), IN3(D(STR, 2, U, 3), D(STR, 1, U), D(TIDE_INT64, 1, U)), OUT(2, U, 3)},
    {ROW(LOOKUP_FIND), IN3(D(STR, 1, U), D(STR, 1, 3), D(TIDE_INT64, 1, 4)), ERR(TIDE_ERR_VALUE, "the table has 4 slots")},
    {ROW(LOOKUP_FIND), IN3(D(I32, 1, U), D(TIDE_INT64, 1, U), D(TIDE_INT64, 1, U)), ERR(TIDE_ERR_DTYPE, "must have the vocabulary's dtype")},
    {ROW(LOOKUP_FIND), A(.n = 3, .m = 2), IN3(D(STR, 1, U), D(STR, 1, U), D(TIDE_INT64, 1, U)), ERR(TIDE_ERR_VALUE, "at most one OOV slot")},
    {ROW(RAGGED_TO_TENSOR), A(.n = 4), IN3(D(STR, 1, U), D(TIDE_INT64, 1, U), S(STR)), OUT(2, U, 4)},
    {ROW(RAGGED_TO_TENSOR), IN3(D(TIDE_INT64, 1, U), D(TIDE_INT64, 1, 3), S(TIDE_INT64)), OUT(2, 2, U)},
    {ROW(RAGGED_TO_TENSOR), IN3(D(STR, 1, U), D(TIDE_INT64, 1, U), S(TIDE_INT64)), ERR(TIDE_ERR_VALUE, "the default must be a scalar")},
    {ROW(TEXT_NGRAMS), A(.ints = {1, 2}, .nints = 2), IN3(D(STR, 1, U), D(TIDE_INT64, 1, U), S(STR)), OUT(1, U), OUT1(1, U)},
    {ROW(TEXT_NGRAMS), A(.ints = {2}, .nints = 1), IN3(D(STR, 1, U), D(TIDE_INT64, 1, 4), S(STR)), OUT(1, U), OUT1(1, 4)},
    {ROW(TEXT_NGRAMS), IN3(D(STR, 1, U), D(TIDE_INT64, 1, U), S(STR)), ERR(TIDE_ERR_VALUE, "at least one n-gram width")},
    {ROW(WORDPIECE_TOKENIZE), A(.n = 100), IN5(D(STR, 1, U), D(STR, 1, U), D(TIDE_INT64, 1, U), S(STR), D(STR, 1, 2)), OUT(1, U), OUT1(1, U)},
    {ROW(WORDPIECE_TOKENIZE), A(.n = 100), IN5(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), S(STR), D(STR, 1, 2)), OUT(1, U), OUT1(1, 3)},
    {ROW(WORDPIECE_TOKENIZE), IN5(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), S(STR), D(STR, 1, 2)), ERR(TIDE_ERR_VALUE, "max bytes a word must be >= 1")},
    {ROW(WORDPIECE_TOKENIZE), A(.n = 100), IN5(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 1), D(STR, 1, 2)), ERR(TIDE_ERR_VALUE, "the suffix indicator must be a scalar string")},
    {ROW(WORDPIECE_TOKENIZE), A(.n = 100), IN5(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), S(STR), S(STR)), ERR(TIDE_ERR_VALUE, "the special tokens must be a string vector")},
    {ROW(BPE_TOKENIZE), IN6(D(STR, 1, U), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 2), D(TIDE_INT64, 1, 4), D(STR, 1, 0)), OUT(1, U), OUT1(1, U)},
    {ROW(BPE_TOKENIZE), A(.flags = 3), IN6(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 2), D(TIDE_INT64, 1, 4), D(STR, 1, 0)), OUT(1, U), OUT1(1, 3)},
    {ROW(BPE_TOKENIZE), IN6(D(STR, 2, 2, 1), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 2), D(TIDE_INT64, 1, 4), D(STR, 1, 0)), ERR(TIDE_ERR_VALUE, "the input must be a string vector")},
    {ROW(BPE_TOKENIZE), IN6(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 2), D(STR, 1, 4), D(STR, 1, 0)), ERR(TIDE_ERR_VALUE, "the merges' table must be an int64")},
    {ROW(BPE_TOKENIZE), IN6(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 2), D(TIDE_INT64, 1, 4), S(STR)), ERR(TIDE_ERR_VALUE, "the unsplittable tokens must be a string vector")},
    {ROW(BPE_TOKENIZE), A(.flags = 4), IN6(D(STR, 1, 2), D(STR, 1, 3), D(TIDE_INT64, 1, 8), D(STR, 1, 2), D(TIDE_INT64, 1, 4), D(STR, 1, 0)), ERR(TIDE_ERR_VALUE, "unknown flags 4")},
    {ROW(BPE_BYTES_DECODE), IN1(D(STR, 2, U, 3)), OUT(2, U, 3)},
    {ROW(TEXT_CHARS), IN1(D(STR, 1, U)), OUT(1, U), OUT1(1, U)},
    {ROW(TEXT_CHARS), IN1(D(STR, 1, 3)), OUT(1, U), OUT1(1, 4)},
    {ROW(TEXT_CHARS), IN1(D(STR, 2, U, 1)), ERR(TIDE_ERR_VALUE, "the input must be a string vector")},
    {ROW(ASSERT), IN2(D(BOOL, 2, U, 3), S(STR)), OUT(0, 0)},
    {ROW(ASSERT), IN2(D(F32, 1, U), S(STR)), OUT(0, 0)},
    {ROW(ASSERT), IN2(D(I32, 1, U), S(STR)), ERR(TIDE_ERR_DTYPE, "assert: the condition must be a bool tensor")},
    {ROW(ASSERT), IN2(D(BOOL, 1, U), D(STR, 1, U)), ERR(TIDE_ERR_VALUE, "assert: the message must be a 0-d string")},
    {ROW(ALL_REDUCE_SUM), IN2(D(F32, 2, U, 3), S(F32)), OUT(2, U, 3), OUT1(0, 0)},
    {ROW(ALL_REDUCE_SUM), IN1(D(I32, 1, U)), ERR(TIDE_ERR_DTYPE, "only float32 and float64")},
    {ROW(ALL_REDUCE_SUM), A(.n = -1), IN1(D(F32, 1, U)), ERR(TIDE_ERR_VALUE, "the bucket size must be")},
    {ROW(PARSE_EXAMPLE_DENSE), A(.dtype = TIDE_INT64, .ints = {2}, .nints = 1), IN3(D(STR, 1, U), S(STR), D(TIDE_INT64, 1, 0)), OUT(2, U, 2)},
    {ROW(PARSE_EXAMPLE_DENSE), A(.dtype = F32, .m = 1), IN3(S(STR), S(STR), S(TIDE_INT64)), ERR(TIDE_ERR_DTYPE, "the default value is int64")},
    {ROW(PARSE_EXAMPLE_DENSE), A(.dtype = F32, .ints = {2}, .nints = 1, .m = 1), IN3(S(STR), S(STR), D(F32, 1, 3)), ERR(TIDE_ERR_SHAPE, "has 3 values")},
    {ROW(PARSE_EXAMPLE_DENSE), A(.dtype = I32), IN3(S(STR), S(STR), S(I32)), ERR(TIDE_ERR_DTYPE, "dtype must be int64, float32 or string")},
    {ROW(PARSE_EXAMPLE_SPARSE), A(.dtype = STR), IN2(D(STR, 1, U), S(STR)), OUT(2, U, 2), OUT1(1, U)},
    {ROW(PARSE_EXAMPLE_SPARSE), A(.dtype = F32), IN2(D(STR, 2, U, U), S(STR)), ERR(TIDE_ERR_VALUE, "rank 0 or 1")},
    {ROW(PARSE_EXAMPLE_SPARSE), A(.dtype = F32), IN2(S(STR), D(STR, 1, 1)), ERR(TIDE_ERR_VALUE, "the feature name must be a scalar")},
};

/* Make t a symbolic descriptor of d (nelem -1 when a dim is unknown). */
static void make_desc(tide_tensor *t, const desc *d) {
  memset(t, 0, sizeof *t);
  t->dt = d->dt;
  t->ndim = d->nd;
  int64_t n = 1;
  for (int i = 0; i < d->nd; i++) {
    t->dims[i] = d->d[i];
    n = (n < 0 || d->d[i] < 0) ? -1 : n * d->d[i];
  }
  t->nelem = n;
  t->flags = TIDE_TENSOR_SYMBOLIC;
}

/* True when t has rank nd and dims want; says what differs when not. */
static bool same_dims(const tide_tensor *t, int nd, const int64_t *want, int line, int k) {
  bool ok = t->ndim == nd;
  for (int i = 0; ok && i < nd; i++) ok = t->dims[i] == want[i];
  if (!ok) {
    fprintf(stderr, "case at line %d, output %d: rank %d dims [", line, k, t->ndim);
    for (int i = 0; i < t->ndim; i++) fprintf(stderr, i ? ", %lld" : "%lld", (long long)t->dims[i]);
    fprintf(stderr, "]\n");
  }
  return ok;
}

static bool covered[TIDE_NUM_OPS];

/* Run one row through tide_op_infer and compare. */
static void run_case(const icase *c) {
  tide_tensor in[6], out[4]; /* four: combined_non_max_suppression's outputs */
  const tide_tensor *ins[6];
  tide_tensor *outs[4] = {&out[0], &out[1], &out[2], &out[3]};
  for (int i = 0; i < c->n_in; i++) make_desc(&in[i], &c->in[i]), ins[i] = &in[i];
  memset(out, 0, sizeof out);
  int n_out = tide_op_num_outputs(c->op);
  if (n_out < 0) n_out = c->n_in; /* one per input */
  tide_status st = tide_op_infer(c->op, &c->at, c->n_in, ins, n_out, outs);
  covered[c->op] = true;
  if (c->st) {
    bool ok = st == c->st && contains(tide_last_error(), c->msg);
    if (!ok)
      fprintf(stderr, "case at line %d (%s): want status %d with \"%s\", got %d: %s\n", c->line,
              tide_op_name(c->op), c->st, c->msg, st, st ? tide_last_error() : "");
    CHECK(ok);
    return;
  }
  if (st) fprintf(stderr, "case at line %d (%s): %s\n", c->line, tide_op_name(c->op), tide_last_error());
  CHECK(st == TIDE_OK);
  if (st) return;
  CHECK(same_dims(&out[0], c->nd0, c->out0, c->line, 0));
  if (n_out > 1) CHECK(same_dims(&out[1], c->nd1, c->out1, c->line, 1));
  for (int k = 0; k < n_out; k++) { /* nelem -1 exactly when a dim is unknown */
    bool unknown = out[k].ndim < 0; /* an unknown rank, or a dim */
    int64_t n = 1;
    for (int i = 0; i < out[k].ndim; i++) unknown |= out[k].dims[i] < 0, n *= out[k].dims[i] < 0 ? 1 : out[k].dims[i];
    CHECK(out[k].nelem == (unknown ? -1 : n));
  }
}

/* Every elementwise op of one or two inputs, on a dtype it accepts. */
static void test_all_elementwise(void) {
  for (int op = 0; op < TIDE_NUM_OPS; op++) {
    if (!(tide_op_flags(op) & TIDE_OPF_ELEMENTWISE) || tide_op_num_inputs(op) > 2) continue;
    uint32_t dts = tide_op_dtypes(op);
    int dt = (dts & (1u << TIDE_FLOAT32)) ? TIDE_FLOAT32 : (dts & (1u << TIDE_INT32)) ? TIDE_INT32 : TIDE_BOOL;
    icase c = {.line = __LINE__, .op = op, .at = {.dtype = TIDE_FLOAT32}, .n_in = tide_op_num_inputs(op),
               .in = {D(dt, 3, U, 1, 3), D(dt, 2, 4, 1)}, .nd0 = 3, .out0 = {U, 4, 3}};
    if (c.n_in == 1) c.out0[1] = 1;
    run_case(&c);
  }
}

/* Layouts: nelem -1 with an unknown dim; strides exact inside it, 0 outside. */
static void test_layout(void) {
  tide_tensor x, o;
  desc d = D(F32, 3, 2, U, 3);
  make_desc(&x, &d);
  const tide_tensor *in[1] = {&x};
  tide_tensor *out[1] = {&o};
  memset(&o, 0, sizeof o);
  CHECK(tide_op_infer(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_OK);
  CHECK(o.nelem == -1);
  CHECK(o.strides[0] == 0 && o.strides[1] == 3 && o.strides[2] == 1);
  desc k = D(F32, 3, 2, 4, 3);
  make_desc(&x, &k);
  CHECK(tide_op_infer(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_OK);
  CHECK(o.nelem == 24 && o.strides[0] == 12 && o.strides[1] == 3 && o.strides[2] == 1);
  desc two = D(F32, 2, U, U); /* two unknowns must not multiply into a "known" 1 */
  make_desc(&x, &two);
  CHECK(tide_op_infer(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_OK);
  CHECK(o.nelem == -1 && o.strides[0] == 0 && o.strides[1] == 1);
  /* an overflow is still an error when every dim is known */
  desc big = D(F32, 2, (int64_t)1 << 40, (int64_t)1 << 40);
  make_desc(&x, &big);
  CHECK(tide_op_infer(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "too many elements"));
  /* ...and not when a dim is unknown: the graph's run decides */
  desc bigu = D(F32, 3, (int64_t)1 << 40, (int64_t)1 << 40, U);
  make_desc(&x, &bigu);
  CHECK(tide_op_infer(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_OK);
}

/* tide_op_run never computes on unknown dims: a symbolic input outside a
 * trace is refused, and so is a hand-made header with -1 dims. */
static void test_run_refuses_unknown(void) {
  tide_tensor x, o;
  desc d = D(F32, 2, U, 3);
  make_desc(&x, &d);
  const tide_tensor *in[1] = {&x};
  tide_tensor *out[1] = {&o};
  memset(&o, 0, sizeof o);
  CHECK(tide_op_run(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "used outside its trace"));
  x.flags = 0;
  CHECK(tide_op_run(TIDE_OP_NEG, NULL, 1, in, 1, out) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "unknown (-1) dimensions"));
  /* eager tensors cannot be made with unknown dims */
  int64_t dims[2] = {U, 3};
  tide_tensor t = blank();
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 2, dims) == TIDE_ERR_SHAPE);
}

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  test_all_elementwise();
  test_layout();
  test_run_refuses_unknown();
  /* every op that takes inputs has a row (creation ops have no dims to be unknown) */
  for (int op = 0; op < TIDE_NUM_OPS; op++) {
    if (tide_op_num_inputs(op) == 0 || covered[op]) continue;
    fprintf(stderr, "no unknown-dim case for op %s\n", tide_op_name(op));
    CHECK(covered[op]);
  }
  return CHECK_SUMMARY("infer_unknown");
}
