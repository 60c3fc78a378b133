/* tests/c/test_infer_rank.c — inputs of unknown rank (TIDE_UNKNOWN_RANK): each
 * op family's inference rule (every op with inputs covered), and graphs built
 * and run from C whose argument's rank is known only when they run. */
#include "check.h"
#include "util.h"

#include <math.h>
#include <stdio.h>

#define R TIDE_UNKNOWN_RANK
#define U (-1)
#define F32 TIDE_FLOAT32
#define I32 TIDE_INT32
#define I64 TIDE_INT64
#define BOOL TIDE_BOOL
#define STR TIDE_STRING

/* A descriptor: dtype, rank (R: unknown) and dims (U where unknown). */
typedef struct desc {
  int dt, nd;
  int64_t d[TIDE_MAX_DIMS];
} desc;

/* One inference: op, attrs, inputs, and the status (with a message fragment)
 * or each output's dtype, rank (R: unknown) and dims. */
typedef struct rcase {
  int line, op;
  tide_attrs at;
  int n_in;
  desc in[6]; /* six: bpe_tokenize */
  tide_status st;
  const char *msg;
  int dt0, nd0, dt1, nd1;
  int64_t out0[TIDE_MAX_DIMS], out1[TIDE_MAX_DIMS];
} rcase;

#define D(dt, nd, ...) {dt, nd, {__VA_ARGS__}}
#define UR(dt) {dt, R, {0}}
#define S(dt) {dt, 0, {0}}
#define IN1(a) .n_in = 1, .in = {a}
#define IN2(a, b) .n_in = 2, .in = {a, b}
#define IN3(a, b, c) .n_in = 3, .in = {a, b, c}
#define IN4(a, b, c, d) .n_in = 4, .in = {a, b, c, d}
#define IN5(a, b, c, d, e) .n_in = 5, .in = {a, b, c, d, e}
#define IN6(a, b, c, d, e, f) .n_in = 6, .in = {a, b, c, d, e, f}
#define A(...) .at = {__VA_ARGS__}
#define OUT(dt, nd, ...) .dt0 = dt, .nd0 = nd, .out0 = {__VA_ARGS__}
#define OUT1(dt, nd, ...) .dt1 = dt, .nd1 = nd, .out1 = {__VA_ARGS__}
#define ERR(code, m) .st = code, .msg = m
#define ROW(opname) .line = __LINE__, .op = TIDE_OP_##opname
#define CONV_SAME .ints = {1, 1, 1, 1, 0, 0, 0, 0}, .nints = 8, .m = 1
#define CONV_BP(a, b, c, d) .ints = {1, 1, 1, 1, 0, 0, 0, 0, a, b, c, d}, .nints = 12, .m = 1
#define POOL2 .ints = {2, 2, 2, 2}, .nints = 4

static const rcase cases[] = {
    /* ---- tf.linalg (core/infer_matrix.c): one matrix stands in for any batch of them, the results'
     * ranks stay unknown; dtypes are checked on the stand-in ---- */
    {ROW(MATRIX_TRANSPOSE), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(MATRIX_BAND_PART), A(.ints = {1, 0}, .nints = 2), IN1(UR(I32)), OUT(I32, R, 0)},
    {ROW(MATRIX_DIAG), A(.ints = {0, 0, -1, -1}, .nints = 4), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(MATRIX_DIAG_PART), A(.ints = {0, 0}, .nints = 2), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(MATRIX_SET_DIAG), A(.ints = {0, 0}, .nints = 2), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(MATRIX_SET_DIAG), A(.ints = {0, 0}, .nints = 2), IN2(UR(F32), D(F32, 1, 3)), OUT(F32, R, 0)},
    {ROW(CHOLESKY), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(CHOLESKY), IN1(UR(I32)), ERR(TIDE_ERR_DTYPE, "cholesky")},
    {ROW(MATRIX_INVERSE), IN1(UR(TIDE_FLOAT64)), OUT(TIDE_FLOAT64, R, 0)},
    {ROW(MATRIX_DETERMINANT), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(LOG_MATRIX_DETERMINANT), IN1(UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(LU), A(.dtype = I32), IN1(UR(F32)), OUT(F32, R, 0), OUT1(I32, R, 0)},
    {ROW(LU), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "output_idx_type must be int32 or int64")},
    {ROW(MATRIX_SOLVE), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(MATRIX_TRIANGULAR_SOLVE), IN2(UR(F32), D(F32, 2, 3, 2)), OUT(F32, R, 0)},
    {ROW(MATRIX_SOLVE_LS), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(TRIDIAGONAL_SOLVE), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(QR), IN1(UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(SVD), IN1(UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(SELF_ADJOINT_EIG), IN1(UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(EIG), IN1(UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    /* ---- tf.signal (core/infer_signal.c): the transformed axes stand in; the results' ranks stay unknown ---- */
    {ROW(FFT), A(.ints = {-1}, .nints = 1), IN2(UR(F32), UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(IFFT), A(.ints = {-1, -1}, .nints = 2), IN2(UR(F32), UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(RFFT), A(.ints = {8}, .nints = 1), IN1(UR(F32)), OUT(F32, R, 0), OUT1(F32, R, 0)},
    {ROW(IRFFT), A(.ints = {8}, .nints = 1), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(RFFT), A(.ints = {8}, .nints = 1), IN1(UR(I32)), ERR(TIDE_ERR_DTYPE, "rfft")},
    {ROW(MATRIX_EXPONENTIAL), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(MATRIX_SQUARE_ROOT), IN1(UR(TIDE_FLOAT64)), OUT(TIDE_FLOAT64, R, 0)},
    /* ---- decode_bmp: bytes of any rank stand in for one file ---- */
    {ROW(DECODE_BMP), A(.n = 3, .dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    {ROW(DECODE_GIF), A(.dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    {ROW(DECODE_WAV), A(.n = -1, .m = -1, .dtype = F32), IN1(UR(TIDE_UINT8)), OUT(F32, 2, U, U), OUT1(I32, 0, 0)},
    {ROW(DECODE_WEBP), A(.n = 3, .dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    {ROW(DECODE_JXL), A(.n = 3, .dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    /* ---- elementwise: the op's dtype checks on a scalar stand-in; an unknown rank out ---- */
    {ROW(ADD), IN2(UR(F32), D(F32, 2, 2, 3)), OUT(F32, R, 0)},
    {ROW(ADD), IN2(UR(F32), UR(I32)), ERR(TIDE_ERR_DTYPE, "add: dtype mismatch: x is float32 but y is int32")},
    {ROW(DIV), IN2(UR(I32), UR(I32)), OUT(TIDE_FLOAT64, R, 0)}, /* TF's truediv */
    {ROW(LESS), IN2(D(F32, 1, 3), UR(F32)), OUT(BOOL, R, 0)},
    {ROW(EXP), IN1(UR(I32)), ERR(TIDE_ERR_DTYPE, "exp: input must be a float tensor")},
    {ROW(CAST), A(.dtype = I64), IN1(UR(F32)), OUT(I64, R, 0)},
    {ROW(WHERE), IN3(UR(F32), S(F32), S(F32)), ERR(TIDE_ERR_DTYPE, "where: condition must be bool")},
    {ROW(WHERE), IN3(UR(BOOL), D(F32, 1, 3), UR(F32)), OUT(F32, R, 0)},
    {ROW(CLIP), IN3(UR(F32), S(F32), S(F32)), OUT(F32, R, 0)},
    {ROW(RANDOM_SHUFFLE), IN1(UR(F32)), OUT(F32, R, 0)},
    /* ---- reductions: all axes without keepdims is a scalar whatever the rank ---- */
    {ROW(SUM), IN1(UR(F32)), OUT(F32, 0, 0)},
    {ROW(SUM), A(.ints = {-1}, .nints = 1), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(MEAN), A(.flags = TIDE_ATTR_KEEPDIMS), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(MAX), A(.ints = {0, -1}, .nints = 2), IN1(UR(F32)), OUT(F32, R, 0)}, /* several axes: checked at run */
    {ROW(MIN), IN1(UR(F32)), OUT(F32, 0, 0)},
    {ROW(PROD), IN1(UR(F32)), OUT(F32, 0, 0)},
    {ROW(ANY), IN1(UR(BOOL)), OUT(BOOL, 0, 0)},
    {ROW(ALL), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "all: input must be a bool tensor")},
    {ROW(ARGMAX), A(.axis = -1, .dtype = I64), IN1(UR(F32)), OUT(I64, R, 0)},
    {ROW(ARGMIN), A(.axis = 8, .dtype = I32), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "axis 8 is out of range")}, /* at any rank */
    {ROW(CUMSUM), A(.axis = -2), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(CUMPROD), A(.axis = 0), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(CUMULATIVE_LOGSUMEXP), A(.axis = 0), IN1(UR(I32)), ERR(TIDE_ERR_DTYPE, "must be a float tensor")},
    {ROW(SORT), A(.axis = -1), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(ARGSORT), A(.axis = -1, .dtype = I32), IN1(UR(F32)), OUT(I32, R, 0)},
    {ROW(TOP_K), A(.n = 2), IN1(UR(F32)), OUT(F32, R, 0), OUT1(I32, R, 0)},
    {ROW(TOP_K), A(.n = -1), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "k = -1")},
    /* ---- matmul ---- */
    {ROW(MATMUL), IN2(UR(F32), D(F32, 2, 3, 4)), OUT(F32, R, 0)},
    {ROW(MATMUL), IN2(UR(F32), S(F32)), ERR(TIDE_ERR_SHAPE, "both inputs need rank >= 1")},
    {ROW(MATMUL), IN2(UR(F32), UR(I32)), ERR(TIDE_ERR_DTYPE, "dtype mismatch")},
    /* ---- views: a shape from the attrs is kept ---- */
    {ROW(RESHAPE), A(.ints = {-1}, .nints = 1), IN1(UR(F32)), OUT(F32, 1, U)},
    {ROW(RESHAPE), A(.ints = {2, 3}, .nints = 2), IN1(UR(F32)), OUT(F32, 2, 2, 3)},
    {ROW(RESHAPE), A(.ints = {2, -1, 0}, .nints = 3), IN1(UR(F32)), ERR(TIDE_ERR_SHAPE, "cannot reshape")},
    {ROW(RESHAPE), IN2(UR(F32), D(I32, 1, U)), OUT(F32, R, 0)},       /* a shape of unknown length */
    {ROW(RESHAPE), IN2(UR(F32), UR(I32)), OUT(F32, R, 0)},            /* ... or of unknown rank */
    {ROW(RESHAPE), IN2(UR(F32), D(I32, 1, 3)), OUT(F32, 3, U, U, U)},
    {ROW(TRANSPOSE), A(.ints = {1, 0}, .nints = 2), IN1(UR(F32)), OUT(F32, 2, U, U)},
    {ROW(TRANSPOSE), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(TRANSPOSE), A(.ints = {1, 1}, .nints = 2), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "not a permutation")},
    {ROW(TRANSPOSE), A(.nints = 12), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "has 12 entries but the tensor has rank 8")},
    {ROW(SLICE), A(.ints = {0, 0, 1}, .nints = 3, .n = 1), IN1(UR(F32)), OUT(F32, R, 0)}, /* x[0] */
    {ROW(SLICE), A(.ints = {0, 0, 0}, .nints = 3), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "step cannot be zero")},
    {ROW(BROADCAST_TO), A(.ints = {2, 3}, .nints = 2), IN1(UR(F32)), OUT(F32, 2, 2, 3)},
    {ROW(BROADCAST_TO), IN2(UR(F32), D(I32, 1, U)), OUT(F32, R, 0)},
    {ROW(SQUEEZE), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(SQUEEZE), IN1(D(F32, 2, U, 1)), OUT(F32, R, 0)}, /* which dims go is known at run (TF) */
    {ROW(SQUEEZE), A(.ints = {0}, .nints = 1), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(EXPAND_DIMS), A(.axis = -1), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(EXPAND_DIMS), A(.axis = 9), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "axis 9 is out of range")},
    /* ---- shape ops that copy ---- */
    {ROW(CONCAT), A(.axis = 0), IN2(UR(F32), D(F32, 2, 2, 3)), OUT(F32, 2, U, 3)}, /* TF's merge */
    {ROW(CONCAT), A(.axis = -1), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(CONCAT), A(.axis = 0), IN2(UR(F32), UR(I32)), ERR(TIDE_ERR_DTYPE, "input 2 is int32 but input 1 is float32")},
    {ROW(CONCAT), A(.axis = 0), IN2(UR(F32), S(F32)), ERR(TIDE_ERR_SHAPE, "cannot concatenate 0-d tensors")},
    {ROW(TILE), A(.ints = {2, 0}, .nints = 2), IN1(UR(F32)), OUT(F32, 2, U, 0)},
    {ROW(PAD), A(.ints = {1, 1, 0, 2}, .nints = 4), IN1(UR(F32)), OUT(F32, 2, U, U)},
    {ROW(PAD), A(.ints = {1, 1, 0}, .nints = 3), IN1(UR(F32)), ERR(TIDE_ERR_VALUE, "paddings must be (before, after) pairs, got 3")},
    {ROW(GATHER), IN2(UR(F32), D(I32, 1, 2)), OUT(F32, R, 0)},
    {ROW(GATHER), IN2(D(F32, 2, 3, 4), UR(F32)), ERR(TIDE_ERR_DTYPE, "indices must be int32 or int64")},
    {ROW(ONE_HOT), A(.n = 3, .axis = -1, .dtype = F32), IN1(UR(I32)), OUT(F32, R, 0)},
    {ROW(REVERSE), A(.ints = {0, -1}, .nints = 2), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(SHAPE), A(.dtype = I32), IN1(UR(F32)), OUT(I32, 1, U)}, /* a vector of unknown length */
    {ROW(SIZE), A(.dtype = I64), IN1(UR(F32)), OUT(I64, 0, 0)},
    /* ---- creation ops with a shape input of unknown length or rank ---- */
    {ROW(FILL), A(.dtype = F32), IN1(D(I32, 1, U)), OUT(F32, R, 0)},
    {ROW(FILL), A(.dtype = F32), IN1(UR(I32)), OUT(F32, R, 0)},
    {ROW(RANDOM_UNIFORM), A(.dtype = F32, .scalars = {0, 1}), IN1(UR(I64)), OUT(F32, R, 0)},
    {ROW(RANDOM_NORMAL), A(.dtype = F32), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "the shape must be an int32 or int64")},
    {ROW(TRUNCATED_NORMAL), A(.dtype = F32), IN1(UR(I32)), OUT(F32, R, 0)},
    {ROW(RANGE_DYNAMIC), A(.dtype = I32), IN3(UR(I32), S(I32), S(I32)), OUT(I32, R, 0)}, /* checked at run */
    /* ---- gradients' ops ---- */
    {ROW(SLICE_UPDATE), A(.ints = {0, 0, 1}, .nints = 3, .n = 1), IN2(UR(F32), UR(F32)), OUT(F32, R, 0)},
    {ROW(SLICE_UPDATE), A(.ints = {0, 0, 1}, .nints = 3, .n = 1), IN2(D(F32, 2, 3, 3), UR(F32)), OUT(F32, 2, 3, 3)},
    {ROW(SLICE_UPDATE), IN2(UR(F32), UR(I32)), ERR(TIDE_ERR_DTYPE, "update is int32 but x is float32")},
    {ROW(SCATTER_ADD), IN3(D(F32, 2, 4, 3), UR(I32), UR(F32)), OUT(F32, 2, 4, 3)},
    {ROW(SCATTER_ADD), IN3(UR(F32), D(I32, 1, 2), UR(I32)), ERR(TIDE_ERR_DTYPE, "updates are int32 but base is float32")},
    {ROW(SUM_TO), A(.ints = {3, 1}, .nints = 2), IN1(UR(F32)), OUT(F32, 2, 3, 1)}, /* decided at run */
    {ROW(SUM_TO), A(.ints = {U, 1}, .nints = 2), IN2(UR(F32), D(I64, 1, 2)), OUT(F32, 2, U, 1)},
    {ROW(SUM_TO), IN2(D(F32, 2, 3, 1), D(I64, 1, U)), OUT(F32, R, 0)}, /* a target of unknown length */
    {ROW(SUM_TO), IN2(D(F32, 2, 3, 1), UR(I64)), OUT(F32, R, 0)},
    {ROW(SUM_TO), IN2(D(F32, 2, 3, 1), UR(F32)), ERR(TIDE_ERR_DTYPE, "the shape must be an int32 or int64")},
    {ROW(SUM_TO), A(.ints = {3}, .nints = 1), IN1(D(F32, 2, 3, 4)), ERR(TIDE_ERR_SHAPE, "cannot sum shape [3, 4] to [3]")},
    {ROW(SUM_TO), A(.ints = {2, 1, 4}, .nints = 3), IN1(D(F32, 2, U, 4)), ERR(TIDE_ERR_SHAPE, "a shape of rank 3")},
    /* ---- index-driven ops ---- */
    {ROW(GATHER_ND), IN2(UR(F32), D(I32, 2, 2, 1)), OUT(F32, R, 0)},
    {ROW(TENSOR_SCATTER_ND_ADD), IN3(D(F32, 2, 4, 3), UR(I32), UR(F32)), OUT(F32, 2, 4, 3)},
    {ROW(TENSOR_SCATTER_ND_UPDATE), IN3(UR(F32), UR(I32), UR(F32)), OUT(F32, R, 0)},
    {ROW(WHERE_INDICES), IN1(UR(BOOL)), OUT(I64, 2, U, U)},
    {ROW(UNIQUE), A(.dtype = I32), IN1(UR(F32)), OUT(F32, 1, U), OUT1(I32, 1, U)},
    {ROW(SEGMENT_SUM), IN2(UR(F32), D(I32, 1, U)), OUT(F32, R, 0)},
    {ROW(SEGMENT_MEAN), IN2(D(F32, 2, 4, 3), UR(I32)), OUT(F32, 2, U, 3)}, /* ids: 1-D when it runs */
    {ROW(SEGMENT_MAX), IN2(UR(F32), UR(I32)), OUT(F32, R, 0)},
    {ROW(SEGMENT_MIN), IN2(UR(F32), UR(F32)), ERR(TIDE_ERR_DTYPE, "segment_ids must be int32 or int64")},
    {ROW(SEGMENT_PROD), IN2(UR(F32), UR(I64)), OUT(F32, R, 0)},
    {ROW(UNSORTED_SEGMENT_SUM), IN3(UR(F32), D(I32, 1, 4), S(I32)), OUT(F32, R, 0)},
    {ROW(UNSORTED_SEGMENT_SUM), IN3(UR(F32), D(I32, 2, 2, 4), S(I32)), OUT(F32, R, 0)}, /* ids of rank 2: data too */
    {ROW(UNSORTED_SEGMENT_MAX), IN3(D(F32, 2, 4, 3), UR(I32), S(I32)), OUT(F32, R, 0)},
    {ROW(UNSORTED_SEGMENT_MIN), IN3(D(F32, 2, 4, 3), D(I32, 1, 4), UR(I32)), OUT(F32, 2, U, 3)},
    {ROW(UNSORTED_SEGMENT_PROD), IN3(UR(F32), UR(I32), UR(I32)), OUT(F32, R, 0)},
    /* ---- neural-network ops: images and filters are 4-D, so the output's rank is known ---- */
    {ROW(CONV2D), A(CONV_SAME), IN2(UR(F32), D(F32, 4, 3, 3, 2, 5)), OUT(F32, 4, U, U, U, 5)},
    {ROW(CONV2D), A(CONV_SAME), IN2(UR(F32), D(F32, 3, 3, 2, 5)), ERR(TIDE_ERR_SHAPE, "filters must be 4-D")},
    {ROW(CONV2D_BACKPROP_INPUT), A(CONV_BP(2, 5, 5, 2)), IN2(UR(F32), UR(F32)), OUT(F32, 4, 2, 5, 5, 2)},
    {ROW(CONV2D_BACKPROP_FILTER), A(CONV_BP(3, 3, 2, 4)), IN2(UR(F32), UR(F32)), OUT(F32, 4, 3, 3, 2, 4)},
    {ROW(DEPTHWISE_CONV2D), A(CONV_SAME), IN2(D(F32, 4, 1, 5, 5, 2), UR(F32)), OUT(F32, 4, 1, 5, 5, U)},
    {ROW(DEPTHWISE_CONV2D_BACKPROP_INPUT), A(CONV_BP(1, 4, 4, 2)), IN2(UR(F32), UR(F32)), OUT(F32, 4, 1, 4, 4, 2)},
    {ROW(DEPTHWISE_CONV2D_BACKPROP_FILTER), A(CONV_BP(3, 3, 2, 1)), IN2(UR(F32), UR(F32)), OUT(F32, 4, 3, 3, 2, 1)},
    {ROW(MAX_POOL2D), A(POOL2), IN1(UR(F32)), OUT(F32, 4, U, U, U, U)},
    {ROW(AVG_POOL2D), A(POOL2), IN1(UR(I32)), ERR(TIDE_ERR_DTYPE, "must be a float tensor")},
    {ROW(MAX_POOL2D_GRAD), A(POOL2), IN3(UR(F32), UR(F32), UR(F32)), OUT(F32, 4, U, U, U, U)},
    {ROW(MAX_POOL2D_GRAD_GRAD), A(POOL2), IN3(UR(F32), UR(F32), UR(F32)), OUT(F32, 4, U, U, U, U)}, /* y's shape */
    {ROW(MAX_POOL2D_GRAD_GRAD), A(POOL2), IN3(D(F32, 4, 1, 4, 4, 2), UR(F32), UR(F32)), OUT(F32, 4, 1, 2, 2, 2)},
    {ROW(AVG_POOL2D_GRAD), A(POOL2), IN2(D(F32, 4, 1, 4, 4, 2), UR(F32)), OUT(F32, 4, 1, 4, 4, 2)},
    {ROW(SOFTMAX), A(.axis = -1), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(LOG_SOFTMAX), A(.axis = -1), IN1(UR(F32)), OUT(F32, R, 0)},
    {ROW(SPARSE_SOFTMAX_XENT), IN2(UR(I32), UR(F32)), OUT(F32, 1, U), OUT1(F32, 2, U, U)},
    {ROW(SPARSE_SOFTMAX_XENT), IN2(UR(I32), D(F32, 2, 4, 3)), OUT(F32, 1, 4), OUT1(F32, 2, 4, 3)},
    {ROW(BETAINC), IN3(UR(F32), S(F32), D(F32, 2, 3, 4)), OUT(F32, R, 0)},
    {ROW(BETAINC), IN3(UR(I32), S(I32), S(I32)), ERR(TIDE_ERR_DTYPE, "a must be")},
    {ROW(CTC_LOSS), IN4(UR(F32), UR(I32), UR(I32), UR(I64)), OUT(F32, 1, U), OUT1(F32, 3, U, U, U)},
    {ROW(CTC_LOSS), IN4(D(F32, 3, 5, 2, 4), UR(I32), UR(I32), D(I32, 1, 2)), OUT(F32, 1, 2), OUT1(F32, 3, 5, 2, 4)},
    {ROW(CTC_LOSS), IN4(UR(I32), UR(I32), UR(I32), UR(I32)), ERR(TIDE_ERR_DTYPE, "logits must be")},
    /* ---- images: codecs and resize take the generic rule (an unknown rank out) ---- */
    {ROW(DECODE_PNG), A(.n = 3, .dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    {ROW(DECODE_JPEG), A(.m = 1, .dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    {ROW(ENCODE_PNG), A(.dtype = TIDE_UINT8), IN1(UR(TIDE_UINT8)), OUT(TIDE_UINT8, R, 0)},
    {ROW(DECODE_IMAGE), A(.n = 3, .dtype = TIDE_UINT8), IN1(UR(STR)), OUT(TIDE_UINT8, R, 0)},
    {ROW(READ_FILE), IN1(UR(STR)), OUT(STR, R, 0)},
    {ROW(RESIZE_BILINEAR), A(.ints = {3, 4}, .nints = 2, .dtype = F32), IN1(UR(TIDE_UINT8)), OUT(F32, R, 0)},
    {ROW(RESIZE_NEAREST), A(.ints = {3, 4}, .nints = 2), IN1(UR(I32)), OUT(I32, R, 0)},
    {ROW(RESIZE_BILINEAR_GRAD), A(.dtype = TIDE_FLOAT64), IN2(UR(F32), UR(TIDE_FLOAT64)), OUT(TIDE_FLOAT64, R, 0)},
    {ROW(RESIZE_NEAREST_GRAD), A(.dtype = F32), IN2(UR(F32), D(F32, 3, 4, 4, 1)), OUT(F32, R, 0)},
    {ROW(RESIZE_NEAREST_GRAD), A(.dtype = F32), IN2(UR(I32), UR(F32)), ERR(TIDE_ERR_DTYPE, "must be a float tensor")},
    /* ---- image boxes, encode_jpeg, stateless draws: each input has one valid rank, so the shapes hold ---- */
    {ROW(NON_MAX_SUPPRESSION), A(.n = 4), IN2(UR(F32), UR(F32)), OUT(I32, 1, U), OUT1(F32, 1, U)},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 4, .m = 3), IN2(UR(F32), D(F32, 2, 2, U)), OUT(I32, 2, U, 4), OUT1(F32, 2, U, 4)},
    {ROW(NON_MAX_SUPPRESSION), A(.n = 4), IN2(UR(I32), UR(F32)), ERR(TIDE_ERR_DTYPE, "boxes must be float32")},
    {ROW(NON_MAX_SUPPRESSION_OVERLAPS), A(.n = 4, .m = 1), IN2(UR(F32), UR(F32)), OUT(I32, 1, 4), OUT1(F32, 1, 4)},
    {ROW(COMBINED_NON_MAX_SUPPRESSION), A(.n = 1, .m = 3), IN2(UR(F32), UR(F32)), OUT(F32, 3, U, 3, 4), OUT1(F32, 2, U, 3)},
    {ROW(DRAW_BOUNDING_BOXES), IN3(UR(F32), UR(F32), UR(F32)), OUT(F32, 4, U, U, U, U)},
    {ROW(DRAW_BOUNDING_BOXES), IN3(UR(I32), UR(F32), UR(F32)), ERR(TIDE_ERR_DTYPE, "images must be float32 or float16")},
    {ROW(ENCODE_JPEG), A(.ints = {1, 72, 72}, .nints = 3, .dtype = TIDE_UINT8), IN2(UR(TIDE_UINT8), UR(I32)), OUT(TIDE_UINT8, 1, U)},
    {ROW(STATELESS_RANDOM_UNIFORM), A(.ints = {4}, .nints = 1, .dtype = TIDE_FLOAT64), IN1(UR(I64)), OUT(TIDE_FLOAT64, 1, 4)},
    {ROW(STATELESS_RANDOM_UNIFORM), A(.dtype = F32), IN2(D(I32, 1, 2), UR(I32)), OUT(F32, R, 0)},
    {ROW(SAMPLE_DISTORTED_BOUNDING_BOX), A(.n = 5, .scalars = {0.1, 1, 0.5, 2}), IN3(UR(I64), UR(F32), UR(F32)), OUT(I64, 1, 3), OUT1(I64, 1, 3)},
    {ROW(STATELESS_SAMPLE_DISTORTED_BOUNDING_BOX), A(.n = 5, .scalars = {0.1, 1, 0.5, 2}), IN4(UR(I32), UR(F32), UR(F32), UR(I32)), OUT(I32, 1, 3), OUT1(I32, 1, 3)},
    /* ---- strings: elementwise, with an unknown rank out; split's outputs are vectors ---- */
    {ROW(STRING_LOWER), IN1(UR(STR)), OUT(STR, R, 0)},
    {ROW(STRING_UPPER), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "string_upper: input must be a string tensor, got float32")},
    {ROW(STRING_STRIP), IN1(UR(STR)), OUT(STR, R, 0)},
    {ROW(STRING_LENGTH), IN1(UR(STR)), OUT(I32, R, 0)},
    {ROW(STRING_TO_NUMBER), A(.dtype = I64), IN1(UR(STR)), OUT(I64, R, 0)},
    {ROW(STRING_TO_NUMBER), A(.dtype = BOOL), IN1(UR(STR)), ERR(TIDE_ERR_DTYPE, "out_type must be float32")},
    {ROW(AS_STRING), IN1(UR(F32)), OUT(STR, R, 0)},
    {ROW(STRING_JOIN), IN3(S(STR), UR(STR), D(STR, 1, 3)), OUT(STR, R, 0)},
    {ROW(STRING_JOIN), IN2(UR(STR), D(STR, 1, 3)), OUT(STR, 1, 3)}, /* a separator of unknown rank: checked at run */
    {ROW(STRING_FORMAT), IN3(D(STR, 1, 3), UR(F32), D(I32, 2, 2, 3)), OUT(STR, 0, 0)},
    {ROW(STRING_FORMAT), IN2(UR(STR), UR(F32)), OUT(STR, 0, 0)},
    {ROW(REDUCE_JOIN), IN2(UR(STR), S(STR)), OUT(STR, 0, 0)},
    {ROW(REDUCE_JOIN), A(.ints = {0, -1}, .nints = 2), IN2(UR(STR), S(STR)), OUT(STR, R, 0)},
    {ROW(REDUCE_JOIN), A(.ints = {1}, .nints = 1), IN2(D(STR, 2, 2, 3), UR(STR)), OUT(STR, 1, 2)},
    {ROW(REDUCE_JOIN), IN2(UR(STR), D(STR, 1, 1)), ERR(TIDE_ERR_VALUE, "the separator must be a scalar string")},
    {ROW(SUBSTR), IN3(UR(STR), S(I32), UR(I32)), OUT(STR, R, 0)},
    {ROW(REGEX_REPLACE), IN3(UR(STR), S(STR), S(STR)), OUT(STR, R, 0)},
    {ROW(REGEX_REPLACE), IN3(D(STR, 1, 2), UR(STR), S(STR)), OUT(STR, 1, 2)},
    {ROW(SUBSTR), IN3(D(STR, 1, 2), S(I32), S(I32)), OUT(STR, 1, 2)},
    {ROW(STRING_SPLIT), IN2(UR(STR), S(STR)), OUT(STR, 1, U), OUT1(I64, 1, U)},
    {ROW(STRING_HASH), A(.n = 10), IN1(UR(STR)), OUT(I64, R, 0)},
    {ROW(FINGERPRINT), A(.dtype = TIDE_UINT8), IN1(UR(STR)), OUT(TIDE_UINT8, 2, U, 8)},
    {ROW(FINGERPRINT), A(.dtype = TIDE_UINT8), IN1(UR(F32)), OUT(TIDE_UINT8, 2, U, 8)},
    {ROW(BITCAST), A(.dtype = I32), IN1(UR(F32)), OUT(I32, R, 0)},
    {ROW(BITCAST), A(.dtype = I32), IN1(UR(STR)), ERR(TIDE_ERR_DTYPE, "bitcast: input 1 is a string tensor")},
    {ROW(BITCAST), A(.dtype = STR), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "bitcast: type must be a numeric or bool dtype")},
    {ROW(CROSS_HASHED), A(.n = 10), IN2(UR(STR), D(I64, 2, 3, 2)), OUT(I64, 2, 3, U)},
    {ROW(UNICODE_DECODE), IN1(UR(STR)), OUT(I32, 1, U), OUT1(I64, 1, U)},
    {ROW(UNICODE_ENCODE), IN2(UR(I32), UR(I64)), OUT(STR, 1, U)},
    {ROW(UNICODE_ENCODE), IN1(UR(I32)), OUT(STR, R, 0)},
    {ROW(UNICODE_ENCODE), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "code points must be int32 or int64")},
    {ROW(UNICODE_SCRIPT), IN1(UR(I32)), OUT(I32, R, 0)},
    {ROW(REGEX_FULL_MATCH), IN2(UR(STR), S(STR)), OUT(BOOL, R, 0)},
    {ROW(REGEX_FULL_MATCH), IN2(D(STR, 2, 2, 3), UR(STR)), OUT(BOOL, 2, 2, 3)},
    {ROW(UNSORTED_SEGMENT_JOIN), A(.n = 3), IN3(UR(STR), D(I32, 1, 4), S(STR)), OUT(STR, R, 0)},
    {ROW(UNSORTED_SEGMENT_JOIN), A(.n = 3), IN3(D(STR, 2, 4, 2), D(I32, 1, 4), UR(STR)), OUT(STR, 2, 3, 2)},
    {ROW(CROSS_HASHED), A(.n = 10), IN2(UR(STR), UR(F32)), ERR(TIDE_ERR_DTYPE, "input 2 must be string or int64")},
    {ROW(STRING_HASH), A(.n = 10), IN1(UR(F32)), ERR(TIDE_ERR_DTYPE, "string_hash: input must be a string tensor")},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN4(UR(STR), S(STR), S(STR), S(STR)), OUT(STR, R, 0), OUT1(I64, 1, U)},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN4(D(STR, 2, 3, 4), UR(STR), S(STR), S(STR)), OUT(STR, 2, 3, 3), OUT1(I64, 1, 4)},
    {ROW(STRING_NGRAMS), A(.ints = {2}, .nints = 1), IN5(UR(STR), S(STR), S(STR), S(STR), UR(I64)), OUT(STR, 1, U), OUT1(I64, 1, U)},
    {ROW(LOOKUP_TABLE), IN1(UR(STR)), OUT(I64, 1, U)},
    {ROW(LOOKUP_FIND), IN3(UR(STR), UR(STR), UR(I64)), OUT(I64, R, 0)},
    {ROW(LOOKUP_FIND), IN3(D(STR, 2, 2, 3), UR(STR), UR(I64)), OUT(I64, 2, 2, 3)},
    {ROW(RAGGED_TO_TENSOR), A(.n = 3), IN3(UR(I64), UR(I64), S(I64)), OUT(I64, 2, U, 3)},
    {ROW(TEXT_NGRAMS), A(.ints = {1}, .nints = 1), IN3(UR(STR), UR(I64), UR(STR)), OUT(STR, 1, U), OUT1(I64, 1, U)},
    {ROW(TEXT_CHARS), IN1(UR(STR)), OUT(STR, 1, U), OUT1(I64, 1, U)},
    {ROW(WORDPIECE_TOKENIZE), A(.n = 100), IN5(UR(STR), UR(STR), UR(I64), UR(STR), UR(STR)), OUT(I64, 1, U), OUT1(I64, 1, U)},
    {ROW(BPE_TOKENIZE), IN6(UR(STR), UR(STR), UR(I64), UR(STR), UR(I64), UR(STR)), OUT(I64, 1, U), OUT1(I64, 1, U)},
    {ROW(BPE_TOKENIZE), A(.flags = 2), IN6(UR(STR), UR(STR), UR(I64), UR(STR), UR(I64), UR(STR)), OUT(STR, 1, U), OUT1(I64, 1, U)},
    {ROW(BPE_BYTES_DECODE), IN1(UR(STR)), OUT(STR, R, 0)},
    {ROW(ASSERT), IN2(UR(BOOL), S(STR)), OUT(BOOL, 0, 0)},
    {ROW(ALL_REDUCE_SUM), IN2(UR(F32), D(F32, 2, 2, 3)), OUT(F32, R, 0), OUT1(F32, 2, 2, 3)},
    {ROW(ALL_REDUCE_SUM), IN1(UR(I32)), ERR(TIDE_ERR_DTYPE, "all_reduce_sum: input 1 is int32")},
    {ROW(PARSE_EXAMPLE_DENSE), A(.dtype = I64, .ints = {2}, .nints = 1), IN3(UR(STR), S(STR), D(I64, 1, 0)), OUT(I64, R, 0)},
    {ROW(PARSE_EXAMPLE_SPARSE), A(.dtype = F32), IN2(UR(STR), S(STR)), OUT(I64, R, 0), OUT1(F32, R, 0)},
};

static bool covered[TIDE_NUM_OPS];

/* "[2, None]" or "<unknown>", for failure messages. */
static const char *shape_text(char *buf, size_t size, const tide_tensor *t) {
  if (t->ndim < 0) return snprintf(buf, size, "<unknown>"), buf;
  int len = snprintf(buf, size, "[");
  for (int i = 0; i < t->ndim && len < (int)size; i++)
    len += snprintf(buf + len, size - (size_t)len, i ? ", %lld" : "%lld", (long long)t->dims[i]);
  if (len < (int)size) snprintf(buf + len, size - (size_t)len, "]");
  return buf;
}

static void make_desc(tide_tensor *t, const desc *d) {
  *t = blank();
  t->dt = d->dt;
  t->ndim = d->nd;
  t->nelem = d->nd < 0 ? -1 : 1;
  for (int i = 0; i < d->nd; i++) {
    t->dims[i] = d->d[i];
    t->nelem = (t->nelem < 0 || d->d[i] < 0) ? -1 : t->nelem * d->d[i];
  }
  t->flags = TIDE_TENSOR_SYMBOLIC;
}

/* True when t has dtype dt, rank nd (R: unknown) and dims want. */
static bool same_out(const tide_tensor *t, int dt, int nd, const int64_t *want, int line, int k) {
  bool ok = t->dt == dt && t->ndim == nd;
  for (int i = 0; ok && i < nd; i++) ok = t->dims[i] == want[i];
  if (nd == R) ok = ok && t->nelem == -1;
  if (!ok) {
    char s[128];
    fprintf(stderr, "case at line %d, output %d: %s %s\n", line, k, tide_dtype_name(t->dt), shape_text(s, sizeof s, t));
  }
  return ok;
}

static void run_case(const rcase *c) {
  tide_tensor in[6], out[4] = {blank(), blank(), blank(), blank()}; /* four: combined_non_max_suppression's */
  const tide_tensor *ins[6];
  tide_tensor *outs[4] = {&out[0], &out[1], &out[2], &out[3]};
  for (int i = 0; i < c->n_in; i++) make_desc(&in[i], &c->in[i]), ins[i] = &in[i];
  int n_out = tide_op_num_outputs(c->op);
  if (n_out < 0) n_out = c->n_in; /* one per input */
  tide_status st = tide_op_infer(c->op, &c->at, c->n_in, ins, n_out, outs);
  covered[c->op] = true;
  if (c->st) {
    bool ok = st == c->st && contains(tide_last_error(), c->msg);
    if (!ok)
      fprintf(stderr, "case at line %d (%s): want status %d with \"%s\", got %d: %s\n", c->line, tide_op_name(c->op),
              c->st, c->msg, st, st ? tide_last_error() : "");
    CHECK(ok);
    return;
  }
  if (st) fprintf(stderr, "case at line %d (%s): %s\n", c->line, tide_op_name(c->op), tide_last_error());
  CHECK(st == TIDE_OK);
  if (st) return;
  CHECK(same_out(&out[0], c->dt0, c->nd0, c->out0, c->line, 0));
  if (n_out > 1) CHECK(same_out(&out[1], c->dt1, c->nd1, c->out1, c->line, 1));
}

/* Every elementwise op of one or two inputs: an unknown rank in, an unknown rank out. */
static void test_all_elementwise(void) {
  for (int op = 0; op < TIDE_NUM_OPS; op++) {
    if (!(tide_op_flags(op) & TIDE_OPF_ELEMENTWISE) || tide_op_num_inputs(op) > 2) continue;
    uint32_t dts = tide_op_dtypes(op);
    int dt = (dts & (1u << F32)) ? F32 : (dts & (1u << I32)) ? I32 : BOOL;
    tide_tensor x, y, o = blank();
    desc dx = UR(dt), dy = D(dt, 2, 2, 3);
    make_desc(&x, &dx);
    make_desc(&y, &dy);
    const tide_tensor *ins[2] = {&x, &y};
    tide_tensor *outs[1] = {&o};
    tide_attrs a;
    memset(&a, 0, sizeof a);
    a.dtype = F32;
    tide_status st = tide_op_infer(op, &a, tide_op_num_inputs(op), ins, 1, outs);
    if (st) fprintf(stderr, "%s: %s\n", tide_op_name(op), tide_last_error());
    CHECK(st == TIDE_OK && o.ndim == R && o.nelem == -1);
    covered[op] = true;
  }
}

/* Messages print an unknown rank as <unknown> (TF's word). */
static void test_messages(void) {
  tide_tensor x, o = blank();
  desc d = UR(F32);
  make_desc(&x, &d);
  const tide_tensor *in[1] = {&x};
  tide_tensor *out[1] = {&o};
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.ints[0] = 1, a.ints[1] = 1, a.nints = 2;
  CHECK(tide_op_infer(TIDE_OP_TRANSPOSE, &a, 1, in, 1, out) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "perm [1, 1] is not a permutation"));
  a.ints[0] = 2, a.ints[1] = 0, a.ints[2] = -1, a.nints = 3;
  CHECK(tide_op_infer(TIDE_OP_RESHAPE, &a, 1, in, 1, out) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "cannot reshape a tensor of shape [None]")); /* the stand-in's one unknown dim */
  /* an eager op given a header of unknown rank (not a traced one) refuses it */
  tide_tensor fake = blank(), r = blank();
  fake.ndim = TIDE_UNKNOWN_RANK, fake.dt = F32, fake.nelem = -1;
  CHECK(tide_op_unary(TIDE_OP_NEG, &r, &fake) != TIDE_OK && contains(tide_last_error(), "<unknown>"));
}

/* ---- graphs that run on arguments of any rank ---------------------------------- */

static void f32_iota(tide_tensor *t, int nd, const int64_t *dims) { iota_f32(t, nd, dims, false); }

/* f(x): y = exp(x) + 1 (fused), s = sum(y), m = max(y, axis -1), n = size(shape(x)) (the rank). */
static void test_graph_any_rank(void) {
  tide_graph *g = tide_graph_new("f");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor x = blank(), bad = blank();
  CHECK(tide_graph_input(g, F32, -2, NULL, &bad) == TIDE_ERR_SHAPE);
  int64_t two = 2;
  CHECK(tide_graph_input(g, F32, 1, NULL, &bad) == TIDE_ERR_SHAPE && contains(tide_last_error(), "dims is NULL"));
  CHECK(tide_graph_input(g, F32, TIDE_UNKNOWN_RANK, NULL, &x) == TIDE_OK);
  CHECK(x.ndim == TIDE_UNKNOWN_RANK && x.nelem == -1 && (x.flags & TIDE_TENSOR_SYMBOLIC));
  tide_tensor one = blank(), e = blank(), y = blank(), s = blank(), m = blank(), sh = blank(), n = blank();
  tide_tensor_init(&one, F32, 0, NULL);
  *(float *)one.data = 1;
  CHECK(tide_op_unary(TIDE_OP_EXP, &e, &x) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_ADD, &y, &e, &one) == TIDE_OK);
  CHECK(y.ndim == TIDE_UNKNOWN_RANK);
  CHECK(tide_op_unary(TIDE_OP_SUM, &s, &y) == TIDE_OK);
  CHECK(s.ndim == 0);
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.ints[0] = -1, a.nints = 1;
  const tide_tensor *yin[1] = {&y};
  tide_tensor *mo[1] = {&m};
  CHECK(tide_op_run(TIDE_OP_MAX, &a, 1, yin, 1, mo) == TIDE_OK);
  memset(&a, 0, sizeof a);
  a.dtype = I32;
  const tide_tensor *xin[1] = {&x};
  tide_tensor *sho[1] = {&sh}, *no[1] = {&n};
  CHECK(tide_op_run(TIDE_OP_SHAPE, &a, 1, xin, 1, sho) == TIDE_OK);
  CHECK(sh.ndim == 1 && sh.dims[0] == -1);
  const tide_tensor *shin[1] = {&sh};
  CHECK(tide_op_run(TIDE_OP_SIZE, &a, 1, shin, 1, no) == TIDE_OK);
  const tide_tensor *outs[4] = {&y, &s, &m, &n};
  CHECK(tide_graph_set_outputs(g, 4, outs) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  CHECK(contains(tide_graph_text(g), "graph f(%0: float32<unknown>)"));
  CHECK(contains(tide_graph_dot(g), "digraph"));
  /* ranks 1 to 3, then rank 2 again (its cached plan); rank 0 has no axis -1 for max */
  int64_t shapes[5][3] = {{0}, {3}, {2, 3}, {2, 1, 2}, {2, 3}};
  int ranks[5] = {0, 1, 2, 3, 2};
  for (int k = 0; k < 5; k++) {
    if (ranks[k] == 0) {
      tide_tensor in = blank(), r1 = blank(), r2 = blank(), r3 = blank(), r4 = blank();
      f32_iota(&in, 0, NULL);
      const tide_tensor *ins[1] = {&in};
      tide_tensor *routs[4] = {&r1, &r2, &r3, &r4};
      CHECK(tide_graph_run(g, 1, ins, 4, routs) == TIDE_ERR_VALUE);
      CHECK(contains(tide_last_error(), "max: axis -1 is out of range for a tensor of rank 0"));
      tide_tensor_release(&in);
      continue;
    }
    tide_tensor in = blank(), ry = blank(), rs = blank(), rm = blank(), rn = blank();
    f32_iota(&in, ranks[k], shapes[k]);
    const tide_tensor *ins[1] = {&in};
    tide_tensor *routs[4] = {&ry, &rs, &rm, &rn};
    tide_status st = tide_graph_run(g, 1, ins, 4, routs);
    if (st) fprintf(stderr, "rank %d: %s\n", ranks[k], tide_last_error());
    CHECK(st == TIDE_OK);
    if (st) continue;
    CHECK(ry.ndim == ranks[k] && ry.nelem == in.nelem);
    double sum = 0;
    for (int64_t i = 0; i < in.nelem; i++) {
      float want = expf((float)i) + 1;
      CHECK_NEAR(((float *)ry.data)[i], want, 1e-3f * want);
      sum += want;
    }
    CHECK_NEAR(*(float *)rs.data, (float)sum, 1e-3 * sum);
    CHECK(rm.ndim == (ranks[k] ? ranks[k] - 1 : 0));
    CHECK(*(int32_t *)rn.data == ranks[k]);
    tide_tensor_release(&in), tide_tensor_release(&ry), tide_tensor_release(&rs), tide_tensor_release(&rm);
    tide_tensor_release(&rn);
  }
  /* the wrong dtype is named with the graph's <unknown> shape */
  tide_tensor wrong = blank(), o1 = blank(), o2 = blank(), o3 = blank(), o4 = blank();
  tide_tensor_init(&wrong, I32, 1, &two);
  const tide_tensor *wins[1] = {&wrong};
  tide_tensor *wouts[4] = {&o1, &o2, &o3, &o4};
  CHECK(tide_graph_run(g, 1, wins, 4, wouts) == TIDE_ERR_SHAPE &&
        contains(tide_last_error(), "input 1 is int32 [2] but the graph takes float32 <unknown>"));
  tide_tensor_release(&wrong);
  tide_tensor_release(&one);
  tide_graph_free(g);
}

/* g(x, v): reshape(v, shape(x)) (a shape input of unknown length), x[0] (a
 * spec for the leading dim only), and x's gradient-style sum back to v's shape. */
static void test_graph_shapes_at_run(void) {
  tide_graph *g = tide_graph_new("g");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor x = blank(), v = blank(), sh = blank(), r = blank(), row = blank(), back = blank();
  int64_t unknown = -1;
  CHECK(tide_graph_input(g, F32, TIDE_UNKNOWN_RANK, NULL, &x) == TIDE_OK);
  CHECK(tide_graph_input(g, F32, 1, &unknown, &v) == TIDE_OK);
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.dtype = I32;
  const tide_tensor *xin[1] = {&x};
  tide_tensor *sho[1] = {&sh};
  CHECK(tide_op_run(TIDE_OP_SHAPE, &a, 1, xin, 1, sho) == TIDE_OK);
  memset(&a, 0, sizeof a);
  const tide_tensor *rin[2] = {&v, &sh};
  tide_tensor *ro[1] = {&r};
  CHECK(tide_op_run(TIDE_OP_RESHAPE, &a, 2, rin, 1, ro) == TIDE_OK);
  CHECK(r.ndim == TIDE_UNKNOWN_RANK);
  a.ints[0] = 0, a.ints[1] = 0, a.ints[2] = 1, a.nints = 3, a.n = 1; /* x[0] */
  tide_tensor *rowo[1] = {&row};
  CHECK(tide_op_run(TIDE_OP_SLICE, &a, 1, xin, 1, rowo) == TIDE_OK);
  memset(&a, 0, sizeof a);
  a.dtype = I64;
  tide_tensor rowsh = blank();
  const tide_tensor *rin1[1] = {&row};
  tide_tensor *rso[1] = {&rowsh};
  CHECK(tide_op_run(TIDE_OP_SHAPE, &a, 1, rin1, 1, rso) == TIDE_OK); /* a vector of unknown length */
  memset(&a, 0, sizeof a);
  const tide_tensor *bin[2] = {&x, &rowsh}; /* x summed back to x[0]'s shape: over dim 0 */
  tide_tensor *bo[1] = {&back};
  CHECK(tide_op_run(TIDE_OP_SUM_TO, &a, 2, bin, 1, bo) == TIDE_OK);
  CHECK(back.ndim == TIDE_UNKNOWN_RANK);
  const tide_tensor *outs[3] = {&r, &row, &back};
  CHECK(tide_graph_set_outputs(g, 3, outs) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  int64_t d23[2] = {2, 3}, d6 = 6, d3 = 3;
  tide_tensor in = blank(), vin = blank(), o1 = blank(), o2 = blank(), o3 = blank();
  f32_iota(&in, 2, d23);
  f32_iota(&vin, 1, &d6);
  const tide_tensor *ins[2] = {&in, &vin};
  tide_tensor *routs[3] = {&o1, &o2, &o3};
  CHECK(tide_graph_run(g, 2, ins, 3, routs) == TIDE_OK);
  CHECK(o1.ndim == 2 && o1.dims[0] == 2 && o1.dims[1] == 3 && ((float *)o1.data)[5] == 5);
  CHECK(o2.ndim == 1 && o2.dims[0] == 3 && ((float *)o2.data)[2] == 2);
  CHECK(o3.ndim == 1 && o3.dims[0] == 3);
  if (o3.ndim == 1) CHECK(((float *)o3.data)[0] == 3 && ((float *)o3.data)[2] == 7);
  tide_tensor_release(&o1), tide_tensor_release(&o2), tide_tensor_release(&o3), tide_tensor_release(&in);
  /* a 0-d x at run: x[0] names a dim it lacks */
  tide_tensor s0 = blank(), v1 = blank();
  f32_iota(&s0, 0, NULL);
  int64_t d1 = 1;
  f32_iota(&v1, 1, &d1); /* reshapes to x's shape [] */
  (void)d3;
  const tide_tensor *ins0[2] = {&s0, &v1};
  CHECK(tide_graph_run(g, 2, ins0, 3, routs) != TIDE_OK);
  CHECK(contains(tide_last_error(), "slice: the spec names 1 dim(s) but the tensor has rank 0"));
  tide_tensor_release(&s0), tide_tensor_release(&v1), tide_tensor_release(&vin);
  tide_graph_free(g);
}

/* A cond whose branches give different ranks, and a while whose loop variable has an unknown rank. */
static void test_control(void) {
  tide_graph *g = tide_graph_new("c");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor p = blank(), x = blank();
  int64_t d23[2] = {2, 3};
  CHECK(tide_graph_input(g, BOOL, 0, NULL, &p) == TIDE_OK);
  CHECK(tide_graph_input(g, F32, 2, d23, &x) == TIDE_OK);
  tide_graph *tg = tide_graph_new("then"), *fg = tide_graph_new("else");
  CHECK(tide_graph_begin(tg) == TIDE_OK);
  const tide_tensor *to[1] = {&x};
  CHECK(tide_graph_set_outputs(tg, 1, to) == TIDE_OK);
  CHECK(tide_graph_end(tg) == TIDE_OK);
  CHECK(tide_graph_begin(fg) == TIDE_OK);
  tide_tensor total = blank();
  CHECK(tide_op_unary(TIDE_OP_SUM, &total, &x) == TIDE_OK);
  const tide_tensor *fo[1] = {&total};
  CHECK(tide_graph_set_outputs(fg, 1, fo) == TIDE_OK);
  CHECK(tide_graph_end(fg) == TIDE_OK);
  tide_tensor y = blank();
  tide_tensor *yo[1] = {&y};
  CHECK(tide_graph_cond(g, &p, tg, fg, 1, yo) == TIDE_OK);
  CHECK(y.ndim == TIDE_UNKNOWN_RANK); /* [2, 3] or []: TF's cond says <unknown> */

  /* while i < 2: v = v * 2, over v = y (unknown rank) */
  tide_graph *cg = tide_graph_new("cond"), *bg = tide_graph_new("body");
  tide_tensor ci = blank(), cv = blank(), bi = blank(), bv = blank(), flag = blank(), i1 = blank(), v2 = blank();
  tide_tensor one = blank(), two = blank(), twof = blank();
  tide_tensor_init(&one, I32, 0, NULL), *(int32_t *)one.data = 1;
  tide_tensor_init(&two, I32, 0, NULL), *(int32_t *)two.data = 2;
  tide_tensor_init(&twof, F32, 0, NULL), *(float *)twof.data = 2;
  CHECK(tide_graph_begin(cg) == TIDE_OK);
  tide_graph_input(cg, I32, 0, NULL, &ci);
  CHECK(tide_graph_input(cg, F32, TIDE_UNKNOWN_RANK, NULL, &cv) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_LESS, &flag, &ci, &two) == TIDE_OK);
  const tide_tensor *co[1] = {&flag};
  tide_graph_set_outputs(cg, 1, co);
  tide_graph_end(cg);
  CHECK(tide_graph_begin(bg) == TIDE_OK);
  tide_graph_input(bg, I32, 0, NULL, &bi);
  tide_graph_input(bg, F32, TIDE_UNKNOWN_RANK, NULL, &bv);
  CHECK(tide_op_binary(TIDE_OP_ADD, &i1, &bi, &one) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_MUL, &v2, &bv, &twof) == TIDE_OK);
  const tide_tensor *bo[2] = {&i1, &v2};
  tide_graph_set_outputs(bg, 2, bo);
  tide_graph_end(bg);
  tide_tensor zero = blank(), li = blank(), lv = blank();
  tide_tensor_init(&zero, I32, 0, NULL), *(int32_t *)zero.data = 0;
  const tide_tensor *init[2] = {&zero, &y};
  tide_tensor *lo[2] = {&li, &lv};
  CHECK(tide_graph_while(g, 2, init, cg, bg, -1, lo) == TIDE_OK);
  CHECK(lv.ndim == TIDE_UNKNOWN_RANK);
  const tide_tensor *go[1] = {&lv};
  CHECK(tide_graph_set_outputs(g, 1, go) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  for (int branch = 0; branch < 2; branch++) {
    tide_tensor pv = blank(), xv = blank(), out = blank();
    tide_tensor_init(&pv, BOOL, 0, NULL);
    *(unsigned char *)pv.data = (unsigned char)(branch == 0);
    f32_iota(&xv, 2, d23);
    const tide_tensor *ins[2] = {&pv, &xv};
    tide_tensor *outs[1] = {&out};
    tide_status st = tide_graph_run(g, 2, ins, 1, outs);
    if (st) fprintf(stderr, "control: %s\n", tide_last_error());
    CHECK(st == TIDE_OK);
    if (branch == 0) CHECK(out.ndim == 2 && ((float *)out.data)[5] == 20); /* x * 4 */
    else CHECK(out.ndim == 0 && *(float *)out.data == 60);                  /* sum(x) * 4 */
    tide_tensor_release(&pv), tide_tensor_release(&xv), tide_tensor_release(&out);
  }
  tide_tensor_release(&one), tide_tensor_release(&two), tide_tensor_release(&twof), tide_tensor_release(&zero);
  tide_graph_free(g);
}

/* SUM_TO eagerly: a view when nothing is summed (strides kept), else the sums. */
static void sum_to_ints(tide_tensor *o, const tide_tensor *x, int nd, const int64_t *target) {
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.nints = nd;
  for (int i = 0; i < nd; i++) a.ints[i] = target[i];
  const tide_tensor *in[1] = {x};
  tide_tensor *out[1] = {o};
  CHECK(tide_op_run(TIDE_OP_SUM_TO, &a, 1, in, 1, out) == TIDE_OK);
}

static void test_sum_to(void) {
  int64_t d23[2] = {2, 3}, d13[3] = {1, 2, 3}, d21[2] = {2, 1}, d3 = 3;
  tide_tensor x = blank(), t = blank(), o = blank();
  iota_f32(&x, 2, d23, true);
  tide_tensor xt = blank();
  int64_t d32[2] = {3, 2}, st[2] = {1, 3};
  CHECK(tide_tensor_view(&xt, &x, 2, d32, st, 0) == TIDE_OK); /* x transposed: strided */
  sum_to_ints(&o, &xt, 2, d32);
  CHECK(o.storage != NULL && tide_tensor_storage_refs(&x) == 3 && o.strides[0] == 1 && o.strides[1] == 3);
  tide_tensor_release(&o);
  sum_to_ints(&o, &x, 2, d21); /* sum over dim 1 */
  CHECK(o.ndim == 2 && o.dims[1] == 1 && ((float *)o.data)[0] == 3 && ((float *)o.data)[1] == 12);
  tide_tensor_release(&o);
  iota_f32(&t, 3, d13, true); /* a leading 1 dropped */
  sum_to_ints(&o, &t, 1, &d3);
  CHECK(o.ndim == 1 && ((float *)o.data)[0] == 3 && ((float *)o.data)[2] == 7);
  tide_tensor_release(&o), tide_tensor_release(&t);
  tide_tensor_release(&xt), tide_tensor_release(&x);
}

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  test_all_elementwise();
  for (int op = 0; op < TIDE_NUM_OPS; op++) { /* every op with inputs has an unknown-rank row */
    bool has_inputs = tide_op_num_inputs(op) != 0 || (tide_op_flags(op) & TIDE_OPF_SHAPE_INPUT);
    if (has_inputs && !covered[op]) fprintf(stderr, "op %s has no unknown-rank case\n", tide_op_name(op));
    CHECK(!has_inputs || covered[op]);
  }
  test_messages();
  test_graph_any_rank();
  test_graph_shapes_at_run();
  test_control();
  test_sum_to();
  return CHECK_SUMMARY("infer_rank");
}
