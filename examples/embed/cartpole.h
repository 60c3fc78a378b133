/* examples/embed/cartpole.h — CartPole-v1's physics and start states in C, for the
 * example games (cartpole_game.c, cartpole_script.c); a header of static inline functions.
 * It repeats examples/dqn/cartpole.lua (Gymnasium's CartPole-v1: Euler steps of
 * 0.02 s, the pole falls past 12 degrees, the cart leaves at 2.4, 500 steps at
 * most; MINSTD draws the start state uniform in (-0.05, 0.05)), so one seed
 * starts the same episodes in Lua and in C. */
#ifndef TIDE_EXAMPLE_CARTPOLE_H
#define TIDE_EXAMPLE_CARTPOLE_H
#include <math.h>

/* Gymnasium's CartPole-v1 constants, as examples/dqn/cartpole.lua. */
#define GRAVITY 9.8
#define MASSCART 1.0
#define MASSPOLE 0.1
#define TOTAL_MASS (MASSPOLE + MASSCART)
#define LENGTH 0.5 /* half the pole's length */
#define POLEMASS_LENGTH (MASSPOLE * LENGTH)
#define FORCE_MAG 10.0
#define TAU 0.02
#define X_THRESHOLD 2.4
#define MAX_STEPS 500
#define MINSTD_MODULUS 2147483647.0
#define PI 3.14159265358979323846 /* math.pi, M_PI */

typedef struct {
  double s[4]; /* x, x_dot, theta, theta_dot */
  int steps;
  double rng; /* MINSTD state, a whole number in [1, 2^31 - 2] */
} cartpole;

/* The next MINSTD number in (0, 1); exact in doubles, as the Lua version. */
static inline double cartpole_next(cartpole *c) {
  c->rng = fmod(c->rng * 48271.0, MINSTD_MODULUS);
  return c->rng / MINSTD_MODULUS;
}

static inline void cartpole_seed(cartpole *c, long long seed) {
  double s = fmod((double)seed, MINSTD_MODULUS);
  if (s < 0) s += MINSTD_MODULUS;
  c->rng = s == 0 ? 1 : s;
}

static inline void cartpole_reset(cartpole *c) {
  for (int k = 0; k < 4; k++) c->s[k] = -0.05 + 0.1 * cartpole_next(c);
  c->steps = 0;
}

/* One 0.02 s step pushing left (0) or right (1); returns 1 when the episode ends. */
static inline int cartpole_step(cartpole *c, int action) {
  double x = c->s[0], x_dot = c->s[1], theta = c->s[2], theta_dot = c->s[3];
  double force = action == 1 ? FORCE_MAG : -FORCE_MAG;
  double costheta = cos(theta), sintheta = sin(theta);
  double temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS;
  double thetaacc = (GRAVITY * sintheta - costheta * temp) /
                    (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS));
  double xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
  c->s[0] = x + TAU * x_dot;
  c->s[1] = x_dot + TAU * xacc;
  c->s[2] = theta + TAU * theta_dot;
  c->s[3] = theta_dot + TAU * thetaacc;
  c->steps++;
  double theta_threshold = 12 * 2 * PI / 360;
  int terminated = c->s[0] < -X_THRESHOLD || c->s[0] > X_THRESHOLD || c->s[2] < -theta_threshold ||
                   c->s[2] > theta_threshold;
  return terminated || c->steps >= MAX_STEPS;
}

#endif
