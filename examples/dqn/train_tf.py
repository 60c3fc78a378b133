"""examples/dqn/train_tf.py — the same DQN as examples/dqn/train.lua in TensorFlow 2 /
Keras 3, for comparison: the same environment (CartPole-v1's physics, MINSTD start states),
the same hyperparameters, network, double DQN target, Huber loss and Adam, a tf.function step.

    /work/venv-tf/bin/python examples/dqn/train_tf.py [--seed N] [--max-steps N]
Prints what train.lua prints in its full run (the episode at which the average return of
100 consecutive episodes reaches 195), with wall and process CPU time. The networks'
initial weights and the batches differ from tide's (another generator), so the episode
counts are comparable only as a distribution over seeds.
"""
import argparse
import math
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

MODULUS = 2147483647


class Rng:  # MINSTD, as examples/dqn/cartpole.lua
    def __init__(self, seed):
        s = seed % MODULUS
        self.state = s if s else 1

    def next(self):
        self.state = (self.state * 48271) % MODULUS
        return self.state / MODULUS

    def int(self, n):
        return min(n - 1, int(self.next() * n))


class CartPole:  # Gymnasium's CartPole-v1, as examples/dqn/cartpole.lua
    def __init__(self, seed):
        self.rng = Rng(seed)

    def reset(self):
        self.s = [-0.05 + 0.1 * self.rng.next() for _ in range(4)]
        self.steps = 0
        return list(self.s)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.s
        force = 10.0 if action == 1 else -10.0
        c, s = math.cos(theta), math.sin(theta)
        temp = (force + 0.05 * theta_dot * theta_dot * s) / 1.1
        thetaacc = (9.8 * s - c * temp) / (0.5 * (4.0 / 3.0 - 0.1 * c * c / 1.1))
        xacc = temp - 0.05 * thetaacc * c / 1.1
        self.s = [x + 0.02 * x_dot, x_dot + 0.02 * xacc, theta + 0.02 * theta_dot, theta_dot + 0.02 * thetaacc]
        self.steps += 1
        limit = 12 * 2 * math.pi / 360
        terminated = abs(self.s[0]) > 2.4 or abs(self.s[2]) > limit
        return list(self.s), 1.0, terminated, self.steps >= 500


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-episodes", type=int, default=1000)
    a = p.parse_args()
    H = dict(memory=50000, batch=64, warmup=1000, lr=5e-4, gamma=0.99, eps=(1.0, 0.01, 10000), sync=500)
    keras.utils.set_random_seed(a.seed)

    def q_network():
        return keras.Sequential([keras.Input((4,)), keras.layers.Dense(24, activation="relu"),
                                 keras.layers.Dense(24, activation="relu"), keras.layers.Dense(2)])

    online, target = q_network(), q_network()
    target.set_weights(online.get_weights())
    optimizer = keras.optimizers.Adam(learning_rate=H["lr"])
    loss_fn = keras.losses.Huber()
    variables = online.trainable_weights

    @tf.function
    def train_step(obs, action, reward, next_obs, done):
        best = tf.argmax(online(next_obs), axis=1, output_type=tf.int32)
        q_next = tf.reduce_sum(target(next_obs) * tf.one_hot(best, 2), axis=1)
        y = reward + H["gamma"] * (1 - done) * q_next
        with tf.GradientTape() as tape:
            q = tf.reduce_sum(online(obs, training=True) * tf.one_hot(action, 2), axis=1)
            loss = loss_fn(y, q)
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    @tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32)])
    def greedy(obs):
        return tf.argmax(online(obs), axis=1, output_type=tf.int32)

    cap = H["memory"]
    m_obs, m_next = np.zeros((cap, 4), np.float32), np.zeros((cap, 4), np.float32)
    m_act, m_rew, m_done = np.zeros(cap, np.int32), np.zeros(cap, np.float32), np.zeros(cap, np.float32)
    size = nxt = 0
    env, rng = CartPole(a.seed), Rng(a.seed + 1000)
    returns, steps = [], 0
    t0, c0 = time.perf_counter(), time.process_time()
    for episode in range(1, a.max_episodes + 1):
        obs, ret = env.reset(), 0
        while True:
            e0, e1, n = H["eps"]
            eps = e0 + min(1, steps / n) * (e1 - e0)
            steps += 1
            if rng.next() < eps:
                action = rng.int(2)
            else:
                action = int(greedy(np.array([obs], np.float32))[0])
            next_obs, r, term, trunc = env.step(action)
            m_obs[nxt], m_act[nxt], m_rew[nxt], m_next[nxt], m_done[nxt] = obs, action, r, next_obs, float(term)
            nxt, size = (nxt + 1) % cap, min(size + 1, cap)
            ret, obs = ret + r, next_obs
            if size >= H["warmup"]:
                idx = np.array([rng.int(size) for _ in range(H["batch"])])
                train_step(m_obs[idx], m_act[idx], m_rew[idx], m_next[idx], m_done[idx])
            if steps % H["sync"] == 0:
                target.set_weights(online.get_weights())
            if term or trunc:
                break
        returns.append(ret)
        avg = sum(returns[-100:]) / len(returns[-100:])
        if episode % 10 == 0:
            print(f"episode {episode}: return {ret:.0f}, average of the last {min(episode, 100)}: {avg:.1f}, "
                  f"steps {steps} ({time.perf_counter() - t0:.1f} s)", flush=True)
        if episode >= 100 and avg >= 195:
            print(f"solved at episode {episode}: average return of episodes {episode - 99}-{episode} is {avg:.1f}; "
                  f"{steps} steps, {time.perf_counter() - t0:.1f} s (CPU {time.process_time() - c0:.1f} s)")
            return
    print(f"not solved in {a.max_episodes} episodes; {steps} steps, {time.perf_counter() - t0:.1f} s "
          f"(CPU {time.process_time() - c0:.1f} s)")


if __name__ == "__main__":
    main()
