"""Synthetic but varied personal facts and questions, for benchmarks (deterministic by seed)."""

from __future__ import annotations

import random

NAMES = ("Anna Tom Lena Priya Rui Mara Daniel Ines Tomas Helena Leo Sofia Omar Yuki Kofi Maya Lars Chen Aisha "
         "Pedro Noor Ivan Elif Jonas Fatima Mateo Sara Kenji Olga Ravi Zoe Amir Lucia Finn Hana Diego Nadia").split()
RELATIONS = "brother sister mother father cousin friend neighbour colleague manager dentist doctor teacher coach".split()
PLACES = ("Lisbon Berlin Utrecht Porto Osaka Lagos Oslo Lima Quito Accra Delhi Tunis Riga Cork Bergen Turin "
          "Ghent Leeds Kyoto Malmo").split()
THINGS = ("tea coffee jazz chess cycling sushi hiking opera tennis pottery sailing baking poetry yoga climbing "
          "gardening photography knitting").split()
MONTHS = "January February March April May June July August September October November December".split()
TEMPLATES = [
    "{a}'s {rel} is {b}.",
    "{a} lives in {place} and works as a {rel}.",
    "{a} loves {thing} and hates {thing2}.",
    "{a}'s birthday is on {day} {month}.",
    "{a} moved to {place} in {year}.",
    "{a} met {b} at a {thing} class in {place}.",
    "The owner's {rel} {a} prefers {thing} on {month} weekends.",
    "{a} borrowed the owner's {thing} book in {month} {year}.",
    "When {a} visits, make {thing} and book a table in {place}.",
    "{year}-{mm:02d}-{day:02d}: sent {a} a note about {thing} in {place}.",
]


def facts(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        template = rng.choice(TEMPLATES)
        text = template.format(
            a=rng.choice(NAMES), b=rng.choice(NAMES), rel=rng.choice(RELATIONS), place=rng.choice(PLACES),
            thing=rng.choice(THINGS), thing2=rng.choice(THINGS), month=rng.choice(MONTHS),
            day=rng.randint(1, 28), mm=rng.randint(1, 12), year=rng.randint(1990, 2026),
        )
        if text not in seen:
            seen.add(text)
            kind = "log" if text[0].isdigit() else ("skill" if text.startswith("When") else "fact")
            out.append({"text": text, "type": kind, "source": rng.choice(["chat", "email", "calendar", "agent"])})
    return out


def questions(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    shapes = ["Who is {a}'s {rel}?", "Where does {a} live?", "What does {a} love?", "When is {a}'s birthday?",
              "Who did {a} meet in {place}?", "{a}", "what about {thing} in {place}", "Tell me about my {rel}."]
    return [rng.choice(shapes).format(a=rng.choice(NAMES), rel=rng.choice(RELATIONS), place=rng.choice(PLACES),
                                      thing=rng.choice(THINGS)) for _ in range(n)]
