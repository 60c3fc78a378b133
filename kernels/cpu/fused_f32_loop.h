/* cpu/fused_f32_loop.h — the float32 engine's loop over strips of KVEC
 * vectors, named RUN_NAME: cpu/fused_f32.c includes it once per strip width
 * (its ON_ACC, WITH_Q, WITH_QR, EACH and ACC_DECL name the accumulators). */

static void RUN_NAME(const f32_prog *p, const void *base, float **ptr, const int64_t *adv, int64_t nstrips, bool stream) {
  static const void *const label[F32_NUM_OPS] = {
    [F32_END] = &&l_end, [F32_LOAD] = &&l_load, [F32_SAVE] = &&l_save, [F32_OUT] = &&l_out,
    [F32_CALL] = &&l_call, [F32_NEG] = &&l_neg, [F32_ABS] = &&l_abs, [F32_SIGN] = &&l_sign,
    [F32_SQUARE] = &&l_square, [F32_RELU] = &&l_relu, [F32_RINT] = &&l_rint, [F32_FLOOR] = &&l_floor,
    [F32_CEIL] = &&l_ceil, [F32_SQRT] = &&l_sqrt, [F32_RSQRT] = &&l_rsqrt, [F32_RECIP] = &&l_recip,
    [F32_EXP] = &&l_exp, [F32_TANH] = &&l_tanh, [F32_SIGMOID] = &&l_sigmoid, [F32_LEAKY] = &&l_leaky,
    [F32_ISNAN] = &&l_isnan, [F32_ISFINITE] = &&l_isfinite, [F32_NOT] = &&l_not,
    [F32_TO_MASK] = &&l_to_mask, [F32_FROM_MASK] = &&l_from_mask, [F32_ADD] = &&l_add, [F32_SUB] = &&l_sub,
    [F32_RSUB] = &&l_rsub, [F32_MUL] = &&l_mul, [F32_DIV] = &&l_div, [F32_RDIV] = &&l_rdiv,
    [F32_MAX] = &&l_max, [F32_RMAX] = &&l_rmax, [F32_MIN] = &&l_min, [F32_RMIN] = &&l_rmin,
    [F32_FLOORDIV] = &&l_floordiv, [F32_RFLOORDIV] = &&l_rfloordiv, [F32_EQ] = &&l_eq, [F32_NE] = &&l_ne,
    [F32_LT] = &&l_lt, [F32_LE] = &&l_le, [F32_GT] = &&l_gt, [F32_GE] = &&l_ge, [F32_AND] = &&l_and,
    [F32_OR] = &&l_or, [F32_XOR] = &&l_xor, [F32_EQ_MASK] = &&l_eq_mask, [F32_NE_MASK] = &&l_xor,
    [F32_WHERE_C] = &&l_where_c, [F32_WHERE_X] = &&l_where_x, [F32_WHERE_Y] = &&l_where_y,
    [F32_CLIP] = &&l_clip,
  };
  ACC_DECL
  const f32_ins *ip;
  const float *q, *r;
#define NEXT goto *label[(++ip)->op]
#define UN(F) ON_ACC(F) NEXT;
#define BIN(F) q = ptr[ip->a]; WITH_Q(F) NEXT;
#define TRI(F) q = ptr[ip->a]; r = ptr[ip->b]; WITH_QR(F, r) NEXT;
  for (int64_t s = 0; s < nstrips; s++) {
    ip = p->ins;
    goto *label[ip->op];
  l_load: q = ptr[ip->a]; EACH(LOAD_K) NEXT;
  l_save: { float *o = ptr[ip->a]; EACH(STORE_K) } NEXT;
  l_out: {
      float *o = ptr[ip->a];
      if (stream) { EACH(STREAM_K) } else { EACH(STORE_K) }
    }
    NEXT;
  l_call: {
      /* The registry's loop for this op, on tiles: the accumulator goes out
       * to one tile and the result comes back from another. */
      float *in = ptr[p->call_in], *out = ptr[p->call_out], *o = in;
      EACH(STORE_K)
      char *pp[1 + TIDE_FUSED_MAX_ARGS];
      int64_t ss[1 + TIDE_FUSED_MAX_ARGS];
      pp[0] = (char *)out, ss[0] = sizeof(float);
      for (int j = 0; j < ip->nargs; j++) {
        pp[1 + j] = (char *)(ip->args[j] == F32_ACC ? in : ptr[ip->args[j]]);
        ss[1 + j] = sizeof(float);
      }
      tide_binary_ctx unused = {0}; /* float loops report nothing */
      void *ctx = ip->ctx ? (void *)((const char *)base + ip->ctx) : (void *)&unused;
      ip->fn(KVEC * L, pp, ss, ctx);
      q = out;
      EACH(LOAD_K)
    }
    NEXT;
  l_neg: UN(v_neg)
  l_abs: UN(v_abs)
  l_sign: UN(v_sign)
  l_square: UN(v_square)
  l_relu: UN(v_relu)
  l_rint: UN(tide_vrint)
  l_floor: UN(tide_vfloor)
  l_ceil: UN(tide_vceil)
  l_sqrt: UN(tide_vsqrt)
  l_rsqrt: UN(v_rsqrt)
  l_recip: UN(v_recip)
  l_exp: UN(tide_vexp)
  l_tanh: UN(tide_vtanh)
  l_sigmoid: UN(tide_vsigmoid)
  l_leaky: {
      const tide_vf alpha = tide_vsplat(ip->k);
#define V_LEAKY(x) tide_vselect((x) > ZERO, (x), alpha * (x))
      ON_ACC(V_LEAKY)
#undef V_LEAKY
    }
    NEXT;
  l_isnan: UN(v_isnan)
  l_isfinite: UN(v_isfinite)
  l_not: UN(v_not)
  l_to_mask: UN(v_to_mask)
  l_from_mask: UN(v_from_mask)
  l_add: BIN(v_add)
  l_sub: BIN(v_sub)
  l_rsub: BIN(v_rsub)
  l_mul: BIN(v_mul)
  l_div: BIN(v_div)
  l_rdiv: BIN(v_rdiv)
  l_max: BIN(v_max)
  l_rmax: BIN(v_rmax)
  l_min: BIN(v_min)
  l_rmin: BIN(v_rmin)
  l_floordiv: BIN(v_floordiv)
  l_rfloordiv: BIN(v_rfloordiv)
  l_eq: BIN(v_eq)
  l_ne: BIN(v_ne)
  l_lt: BIN(v_lt)
  l_le: BIN(v_le)
  l_gt: BIN(v_gt)
  l_ge: BIN(v_ge)
  l_and: BIN(v_and)
  l_or: BIN(v_or)
  l_xor: BIN(v_xor)
  l_eq_mask: BIN(v_eq_mask)
  l_where_c: TRI(v_where_c)
  l_where_x: TRI(v_where_x)
  l_where_y: TRI(v_where_y)
  l_clip: TRI(v_clip)
  l_end:
    for (int i = 0; i < p->n_adv; i++) ptr[i] += adv[i];
  }
#undef NEXT
#undef UN
#undef BIN
#undef TRI
}

