"""How long the tool gate takes to find tools a user names, on a 100 KB message.

The message is full of identifiers that nearly name tools (the costly case for fuzzy matching);
prints the first (uncached) and the memoised time per model call. Run:
`python benchmarks/name_matching.py --tools 1000 --kb 100`.
"""

from __future__ import annotations

import argparse
import random
import time

from attention_scoping.gating.gate import NameMatcher


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(0)
    verbs = ["get", "set", "list", "send"]
    names = [f"{rng.choice(verbs)}_item_{i}_record" for i in range(args.tools)]
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < args.kb * 1024:
        name = rng.choice(names)
        cut = rng.randrange(len(name))
        words.append(name[:cut] + "x" + name[cut + 1 :])  # a near miss
        words.append(rng.choice(["please", "the", "and", "records", "update"]))
    message = " ".join(words)
    build = time.perf_counter()
    matcher = NameMatcher(names)
    built = time.perf_counter() - build
    firsts, cached = [], []
    for _ in range(args.repeat):
        fresh = NameMatcher(names)
        start = time.perf_counter()
        found = fresh(message)
        firsts.append(time.perf_counter() - start)
    matcher(message)
    for _ in range(args.repeat):
        start = time.perf_counter()
        matcher(message)
        cached.append(time.perf_counter() - start)
    firsts.sort()
    cached.sort()
    print(f"{args.tools} tools, message {len(message) / 1024:.0f} KB, {len(found)} names found")
    print(f"index build: {built * 1000:.1f} ms (once per candidate list)")
    print(f"first call of a turn: p50 {firsts[len(firsts) // 2] * 1000:.2f} ms")
    print(f"later calls (memoised): p50 {cached[len(cached) // 2] * 1000:.3f} ms")


if __name__ == "__main__":
    main()
