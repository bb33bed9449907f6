#!/usr/bin/env python3
"""Hand-checkable expectations for tests/unit/test_sampler.cpp: logit bias, repetition penalty
(llama.cpp / vLLM: positive logits divided, negative multiplied, over prompt + output tokens),
OpenAI presence/frequency penalties (over output tokens) and a float64 log-softmax, with numpy.

Run: python3 tools/sampling_reference.py   (prints the values the test hard-codes)"""
import numpy as np

logits = np.array([2.0, -1.0, 0.5, 3.0, -0.5, 1.0], dtype=np.float32)
prompt, output = [0, 4], [3, 3, 2]
rep, presence, frequency = 1.5, 0.5, 0.25
bias = {1: 2.0, 5: -1.0}

x = logits.astype(np.float64)
for t, b in bias.items():
    x[t] += b
for t in set(prompt) | set(output):
    x[t] = x[t] / rep if x[t] > 0 else x[t] * rep
for t in set(output):
    n = output.count(t)
    x[t] -= n * frequency + presence
print("processed logits:", ", ".join(f"{v:.9g}" for v in x))

logp = x - (x.max() + np.log(np.exp(x - x.max()).sum()))
print("log-softmax:", ", ".join(f"{v:.9g}" for v in logp))
order = sorted(range(len(x)), key=lambda i: (-x[i], i))
print("top-3 ids:", order[:3])
print("softmax (temperature 1):", ", ".join(f"{v:.9g}" for v in np.exp(logp)))
