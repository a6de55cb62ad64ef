"""Generate the templated look-alike set: hundreds of "X's brother is Y" facts.

    python -m dashboard.evalsets.lookalikes > dashboard/evalsets/lookalikes.json

Every question "Who is X's R?" has look-alikes that share its words: X's other relations,
other people's R, and facts where X is the answer ("Z's R is X").
"""

from __future__ import annotations

import json
import random

NAMES = ("Anna Tom Lena Max Felix Sara Jonas Mia Paul Eva Ben Lea Noah Ida Emil Nora Jan Ella Karl Rosa "
         "Otto Vera Hugo Lina Finn Alma Leon Greta Theo Frida").split()
RELATIONS = "brother sister mother father husband wife cousin neighbour manager dentist".split()


def generate(seed: int = 2026, facts: int = 300, questions: int = 100) -> dict:
    rng = random.Random(seed)
    pairs: dict[tuple[str, str], str] = {}
    while len(pairs) < facts:
        a, rel, b = rng.choice(NAMES), rng.choice(RELATIONS), rng.choice(NAMES)
        if a != b and (a, rel) not in pairs:
            pairs[(a, rel)] = b
    rows = [{"text": f"{a}'s {rel} is {b}.", "type": "fact", "source": "lookalikes"} for (a, rel), b in pairs.items()]
    asked = rng.sample(sorted(pairs), questions)
    cases = [{"question": f"Who is {a}'s {rel}?", "expected": [f"{a}'s {rel} is {pairs[(a, rel)]}."]} for a, rel in asked]
    return {
        "name": "lookalikes",
        "description": f"{facts} templated facts \"X's R is Y\" over {len(NAMES)} names and {len(RELATIONS)} relations; "
        f"{questions} questions \"Who is X's R?\" (seed {seed}).",
        "facts": rows,
        "cases": cases,
    }


if __name__ == "__main__":
    print(json.dumps(generate(), indent=1))
