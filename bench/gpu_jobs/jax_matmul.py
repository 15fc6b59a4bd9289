# XLA's launch path: a jitted matmul + tanh called 300 times (the program of the phantom jobs).
import sys

import jax
import jax.numpy as jnp

calls = int(sys.argv[1]) if len(sys.argv) > 1 else 300
f = jax.jit(lambda a, b: jnp.tanh(a @ b))
key = jax.random.PRNGKey(0)
a = jax.random.normal(key, (1024, 1024), dtype=jnp.float32)
b = jax.random.normal(key, (1024, 1024), dtype=jnp.float32)
out = None
for _ in range(calls):
    out = f(a, b)
    out.block_until_ready()
print(f"calls={calls} sum={float(out.sum()):.3f} devices={jax.devices()}")
